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


# ------------------------------------------------- a path printed by a helper, a filtered $0

NAME_HELPER_LOCK = """
    #!/bin/sh
    scriptname=$0
    calc_lock() {
      procname=`echo ${scriptname} | sed -r 's/[^a-z0-9]/_/Ig'`
      lock="__DIR__/${procname}.lock"
      echo ${lock}
    }
    lock=`calc_lock`
    exec 9>"$lock"
    flock -n 9 || { echo "already running" >&2; exit 75; }
    do_work
    """


def test_lock_path_printed_by_a_helper_from_the_script_name_is_predictable(cli, tmp_path):
    # `lock=$(calc_lock)`: the helper's last `echo` is the value; `echo $0 | sed ...` is still
    # a name derived only from the script name
    src = NAME_HELPER_LOCK.replace("__DIR__", "/var/tmp")
    assert ("LCK502", 9) in findings(cli, tmp_path, src)


def test_lock_path_printed_by_a_helper_in_a_private_directory_stays_quiet(cli, tmp_path):
    src = NAME_HELPER_LOCK.replace("__DIR__", "${XDG_RUNTIME_DIR:-/tmp}")
    assert findings(cli, tmp_path, src) == set()


# ------------------------------------------------ a trap string made of quoted pieces side by side

CONCAT_TRAP_LOCK = """
    #!/bin/sh
    Check_lockfile ()
    {
    \tFILE="${1}"
    \tif [ -z "${FILE}" ]; then
    \t\tFILE="__LOCK__"
    \tfi
    \tif [ -f "${FILE}" ]; then
    \t\techo "${PROGRAM} locked" >&2
    \t\texit 1
    \tfi
    }
    Create_lockfile ()
    {
    \tFILE="${1}"
    \tif [ -z "${FILE}" ]; then
    \t\tFILE="__LOCK__"
    \tfi
    \tmkdir -p "$(dirname ${FILE})"
    \ttrap 'ret=${?}; '"rm -f \\"${FILE}\\";"' exit ${ret}' EXIT HUP INT QUIT TERM
    \ttouch "${FILE}"
    }
    """


def test_trap_made_of_quoted_pieces_releases_a_relative_lock(cli, tmp_path):
    # `'ret=${?}; '"rm -f \"${FILE}\";"' exit ${ret}'` is one trap string that removes the
    # lock: the -f test and the touch are a lock on a name relative to the working directory
    got = findings(cli, tmp_path, CONCAT_TRAP_LOCK.replace("__LOCK__", ".build/lock"))
    assert {("LCK501", 21), ("LCK103", 21)} <= got


def test_trap_made_of_quoted_pieces_with_flock_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/sh
        LOCK="${XDG_RUNTIME_DIR:-/tmp}/build.lock"
        trap 'ret=${?}; '"rm -f \\"${LOCK}.partial\\";"' exit ${ret}' EXIT
        exec 9>>"$LOCK"
        flock -n 9 || { echo "already running" >&2; exit 75; }
        do_build > "${LOCK}.partial"
        """
    assert findings(cli, tmp_path, src) == set()


# -------------------------------------------- a process listing searched for the stored PID

PS_GREP_TESTS = [
    'if [ -e "$PIDFILE" ] && (ps -u $(whoami) -opid= | grep -P "^\\s*$(cat ${PIDFILE})$" &> /dev/null); then',
    'if ps -ef | grep -v grep | grep -q "$(cat "$PIDFILE")"; then',
    'PID=$(cat "$PIDFILE" 2>/dev/null)\nif ps aux | grep -v grep | grep -qw "$PID"; then',
]


def _ps_grep_job(test: str) -> str:
    return (
        "#!/bin/bash\n"
        'PIDFILE="$HOME/.local/state/sync.pid"\n'
        f"{test}\n"
        '  echo "sync already running" >&2\n'
        "  exit 0\n"
        "fi\n"
        'echo $$ > "$PIDFILE"\n'
        "rsync -a /srv/data/ backup:/srv/data/\n"
    )


def test_ps_grep_of_the_stored_pid_is_a_liveness_check(cli, tmp_path):
    for test in PS_GREP_TESTS:
        src = _ps_grep_job(test)
        line = src.splitlines().index(test.splitlines()[-1]) + 1
        assert ("LCK105", line) in findings(cli, tmp_path, src), test


def test_ps_grep_of_the_job_name_stays_quiet(cli, tmp_path):
    # searching the listing for the job's own name reads no stored PID
    src = _ps_grep_job('if ps -ef | grep -v grep | grep -q "[r]sync -a /srv/data"; then')
    assert not {c for c, _ in findings(cli, tmp_path, src)} & {"LCK105", "LCK106"}


def test_ps_grep_of_the_stored_pid_that_only_reports_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/bash
        PIDFILE="$HOME/.local/state/sync.pid"
        if ps -ef | grep -v grep | grep -q "$(cat "$PIDFILE")"; then
          echo "sync is running"
        else
          echo "sync is not running"
        fi
        """
    assert findings(cli, tmp_path, src) == set()


# ------------------------------------ a PID read with an empty default: `$(cat F || echo "")`

PID_DEFAULT_LOCK = """
    #!/bin/bash
    LOCK_DIR="/srv/backup/locks/db_${DB_NAME}"
    if ! mkdir "$LOCK_DIR" 2>/dev/null; then
        PID=$(cat "$LOCK_DIR/pid" 2>/dev/null __DEFAULT__)
        if [[ -z "$PID" ]] || ! kill -0 "$PID" 2>/dev/null; then
            echo "Removing stale lock (PID $PID)" >&2
            rm -rf "$LOCK_DIR"
            exec "$0" "$@"
        fi
        echo "already running, exiting" >&2
        exit 1
    else
        echo $$ > "$LOCK_DIR/pid"
    fi
    trap 'rm -rf "$LOCK_DIR"' EXIT
    pg_dump "$DB_NAME" > "/srv/backup/$DB_NAME.sql"
    """


def test_pid_read_with_an_empty_default_decides_a_stale_removal(cli, tmp_path):
    for default in ('|| echo ""', "|| true", "|| :"):
        got = findings(cli, tmp_path, PID_DEFAULT_LOCK.replace("__DEFAULT__", default))
        assert {("LCK105", 5), ("LCK106", 7)} <= got, default


def test_pid_read_with_an_empty_default_that_only_reports_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/bash
        LOCK="/srv/backup/locks/db.lock"
        exec 9>>"$LOCK"
        if ! flock -n 9; then
            PID=$(cat "$LOCK.pid" 2>/dev/null || echo "")
            kill -0 "$PID" 2>/dev/null && echo "held by $PID" >&2
            exit 75
        fi
        echo $$ > "$LOCK.pid"
        pg_dump db > /srv/backup/db.sql
        """
    got = {c for c, _ in findings(cli, tmp_path, src)}
    assert not got & {"LCK105", "LCK106"}, got
