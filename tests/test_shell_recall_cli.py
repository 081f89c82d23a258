"""Shell recall through the CLI (issue #12, dev misses of the recall set): each construct in a
realistic script, beside the correct spelling that must stay quiet."""

from __future__ import annotations

import json
import textwrap


def findings(cli, tmp_path, src: str, name: str = "job.sh") -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


# ------------------------------------------------------------- trap signals held in a variable

SIGNAL_VAR_LOCK = """
    #!/bin/sh
    set -e
    LOCKFILE="/srv/jobs/$(basename $0).lock"
    SIGNALS='EXIT'
    while getopts "it" OPTION; do
      case $OPTION in
        i) SIGNALS="$SIGNALS INT" ;;
        t) SIGNALS="$SIGNALS TERM" ;;
      esac
    done
    if [ -f "$LOCKFILE" ]; then
      echo "already running"
      exit 1
    else
      trap "rm -f ${LOCKFILE}; exit" ${SIGNALS}
      echo $$ > ${LOCKFILE}
    fi
    """


def test_trap_signals_from_a_variable_release_the_tested_lock(cli, tmp_path):
    # the EXIT trap is named through $SIGNALS: the file is removed on exit, so the -f test
    # and the `echo $$ >` are a test-then-create lock (line 16), not a run-once marker
    assert ("LCK103", 16) in findings(cli, tmp_path, SIGNAL_VAR_LOCK)


def test_trap_signals_from_a_variable_flock_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/sh
        set -e
        LOCKFILE="/srv/jobs/$(basename $0).lock"
        SIGNALS='EXIT'
        trap "rm -f ${LOCKFILE}.tmp" ${SIGNALS}
        exec 9>>"$LOCKFILE"
        flock -n 9 || { echo "already running"; exit 75; }
        do_work > "${LOCKFILE}.tmp"
        """
    assert findings(cli, tmp_path, src) == set()
