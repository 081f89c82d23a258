"""Shell recall on the whole recall set (issue #12, session 10): each construct in a realistic
script and in several spellings, beside the correct spelling that must stay quiet."""

from __future__ import annotations

import json
import textwrap

import pytest


def findings(cli, tmp_path, src: str, name: str = "job.sh") -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


# ------------------------------------------- `wait "$PID"` waits for that child only (LCK405)

WATCHDOG = """
    #!/bin/bash
    exec 9>>"$HOME/.cache/restart.lock"
    if ! flock -n 9; then
        echo "busy" >> "$HOME/restart.log"
        exit 75
    fi
    restart_service &  WORKER="$!"
    {WATCHER} &  {KEEP}
    wait {WAITED}
    echo done
    """

WATCHERS = [
    "{ sleep 50; kill -KILL $WORKER 2>/dev/null; }",
    "( sleep 50; kill -KILL $WORKER )",
    "while sleep 5; do kill -0 $WORKER || break; done",
    "sleep 50",
]


def _watchdog(watcher: str, keep: str, waited: str) -> str:
    return (
        WATCHDOG.replace("{WATCHER}", watcher).replace("{KEEP}", keep).replace("{WAITED}", waited)
    )


@pytest.mark.parametrize("watcher", WATCHERS)
@pytest.mark.parametrize("waited", ['"$WORKER"', "$WORKER", "${WORKER}"])
def test_a_child_not_among_the_waited_pids_holds_the_lock(cli, tmp_path, watcher, waited):
    src = _watchdog(watcher, 'KID="$!"', waited)
    assert ("LCK405", 8) in findings(cli, tmp_path, src)


@pytest.mark.parametrize("watcher", WATCHERS)
@pytest.mark.parametrize("waited", ['"$WORKER" "$KID"', "", "$KID $WORKER"])
def test_every_child_waited_for_stays_quiet(cli, tmp_path, watcher, waited):
    src = _watchdog(watcher, 'KID="$!"', waited)
    assert not {f for f in findings(cli, tmp_path, src) if f[0] == "LCK405"}


def test_wait_for_pids_kept_elsewhere_counts_as_waiting_for_all(cli, tmp_path):
    # `wait $pids` (a list built in a loop): which children it names is unknown, so stay quiet
    src = _watchdog("sleep 50", 'pids="$pids $!"', "$pids")
    assert not {f for f in findings(cli, tmp_path, src) if f[0] == "LCK405"}
