"""Suggestions that replace a whole take-over (issue #10), and LCK106's aim, through the CLI.

A take-over is what a lock script does when it finds the lock taken: read the stored PID,
test or kill it, remove the lock, create it again.  With a flock the holder is alive by
definition, so the rewrite toward flock must leave none of it behind.  The property tests
(``tests/test_fix_properties_run.py``) run every rewrite; these pin the rewritten text.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import write


def scan(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def findings(root: Path, name: str, text: str) -> list[dict]:
    write(root, name, textwrap.dedent(text).lstrip("\n"))
    proc = scan(root, "--output-format", "json", "--exit-zero", name)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def rewritten(root: Path, name: str, finding: dict) -> str:
    """The file with ``finding``'s suggestion applied (as an editor applies the edits)."""
    text = (root / name).read_text()
    lines = text.splitlines(keepends=True)

    def off(loc):
        return sum(len(x) for x in lines[: loc["row"] - 1]) + loc["column"] - 1

    edits = sorted(
        (off(e["location"]), off(e["end_location"]), e["content"])
        for e in finding["suggestion"]["edits"]
    )
    out, pos = [], 0
    for s, e, c in edits:
        out += [text[pos:s], c]
        pos = e
    return "".join(out) + text[pos:]


# --------------------------------------------------------------------------- LCK106 aim


def test_pruning_the_jobs_own_tree_is_not_a_stale_lock_breaker(tmp_path):
    """An age-tested `find -delete` over the job's cache is its work, not a breaker of the
    lock, even with the lock file inside the tree it walks (RULES.md LCK106: the removal of
    a lock judged stale)."""
    found = findings(
        tmp_path,
        "prune-thumbs.sh",
        """
        #!/bin/bash
        # nightly: prune the thumbnail cache, one run at a time
        CACHE=/var/cache/thumbs
        exec 9<>"$CACHE/.prune.lock" || exit 3
        if ! flock -n 9; then
            logger -t thumbs "prune skipped: still running"
            exit 75
        fi
        find "$CACHE" -type f -mtime +30 -delete
        find "$CACHE/tmp" -name '*.part' -mmin +120 -exec rm -f {} +
        """,
    )
    assert [f["code"] for f in found] == []


def test_an_age_tested_find_aimed_at_the_lock_is_still_a_breaker(tmp_path):
    found = findings(
        tmp_path,
        "rebuild.sh",
        """
        #!/bin/bash
        # hourly: rebuild the report index
        LOCK_DIR=/var/lib/reports/rebuild.lock
        find "$LOCK_DIR" -maxdepth 0 -mmin +120 -exec rm -rf {} +
        find /var/lib/reports/locks -name '*.lock' -mmin +60 -delete
        mkdir "$LOCK_DIR" || exit 75
        trap 'rmdir "$LOCK_DIR"' EXIT
        /opt/reports/bin/rebuild
        """,
    )
    assert [f["location"]["row"] for f in found if f["code"] == "LCK106"] == [4, 5]


# --------------------------------------------------------------------------- LCK109


def test_mkdir_p_lock_becomes_a_flock_inside_the_kept_directory(tmp_path):
    """The directory is made, and the lock file opened, each on its own line and checked
    apart from the busy branch (LCK406); the test is the flock; the trap that removed the
    directory goes (it would be LCK107/LCK201 now)."""
    name = "import-orders.sh"
    (f,) = findings(
        tmp_path,
        name,
        """
        #!/bin/bash
        # every 10 minutes: import new orders
        SPOOL=/var/spool/orders/import.lock
        if ! mkdir -p "$SPOOL"; then
            logger -t orders "import skipped: still running"
            exit 75
        fi
        trap 'rmdir "$SPOOL"' EXIT
        /opt/orders/bin/import
        """,
    )
    assert f["code"] == "LCK109"
    new = rewritten(tmp_path, name, f)
    assert new.splitlines()[3:8] == [
        'mkdir -p "$SPOOL" || exit 3',
        'exec 9<>"$SPOOL/.lock" || exit 3',
        "if ! flock -n 9; then",
        '    logger -t orders "import skipped: still running"',
        "    exit 75",
    ]
    assert "trap" not in new
    write(tmp_path, name, new)
    assert json.loads(scan(tmp_path, "--output-format", "json", name).stdout) == []


# --------------------------------------------------------------------------- LCK406 / LCK108

OVERRUN = """
#!/bin/bash
# hourly: export the ledger; an export still running from the last hour is stopped first
PIDFILE=/var/lib/ledger/export.pid
LOCK=/var/lib/ledger/export.lock

if [ -s "$PIDFILE" ]; then
    echo "stopping the overrunning export" >&2
    kill "$(cat "$PIDFILE")" 2>/dev/null
    sleep 10
fi

exec 9<>"$LOCK"
flock -n 9 || { logger -t ledger "export skipped: still running"; exit 75; }
echo $$ > "$PIDFILE"
/opt/ledger/bin/export
"""


def test_open_check_suggestion_also_drops_the_takeover_of_the_stored_pid(tmp_path):
    """Once the open is checked the lock works, and a second copy that first kills the stored
    PID would stop the holder: the LCK406 rewrite drops that `if` too."""
    name = "export-ledger.sh"
    found = findings(tmp_path, name, OVERRUN)
    lck406 = next(f for f in found if f["code"] == "LCK406")
    new = rewritten(tmp_path, name, lck406)
    assert 'exec 9<>"$LOCK" || exit 3\n' in new
    assert "kill" not in new and "sleep" not in new and "if [" not in new
    assert "\n\n\n" not in new  # the blank lines around the dropped `if` do not pile up
    write(tmp_path, name, new)
    assert json.loads(scan(tmp_path, "--output-format", "json", name).stdout) == []


def test_kill_suggestion_drops_an_if_that_only_stops_the_old_run(tmp_path):
    name = "export-ledger.sh"
    found = findings(tmp_path, name, OVERRUN)
    lck108 = next(f for f in found if f["code"] == "LCK108")
    new = rewritten(tmp_path, name, lck108)
    assert new == textwrap.dedent(OVERRUN).lstrip("\n").replace(
        'if [ -s "$PIDFILE" ]; then\n    echo "stopping the overrunning export" >&2\n'
        '    kill "$(cat "$PIDFILE")" 2>/dev/null\n    sleep 10\nfi\n\n',
        "",
    )


def test_a_signal_to_a_service_is_not_a_takeover(tmp_path):
    """`kill -HUP` of a daemon's PID (reload) is LCK108 still, but its `if` is not a take-over:
    only the kill goes."""
    name = "rotate.sh"
    found = findings(
        tmp_path,
        name,
        """
        #!/bin/bash
        # daily: rotate the proxy's logs and make it reopen them
        PIDFILE=/run/proxy/proxy.pid
        mv /var/log/proxy/access.log /var/log/proxy/access.log.1
        if [ -s "$PIDFILE" ]; then
            kill -HUP "$(cat "$PIDFILE")"
        fi
        """,
    )
    (f,) = [f for f in found if f["code"] == "LCK108"]
    new = rewritten(tmp_path, name, f)
    assert 'if [ -s "$PIDFILE" ]; then\n    :\nfi\n' in new


# --------------------------------------------------------------------------- mkdir take-over

RETRY = """
#!/bin/bash
# nightly: compact the photo database
LOCK_DIR=/var/lib/photos/compact.lock
if ! mkdir "$LOCK_DIR" 2>/dev/null; then
    pid=$(cat "$LOCK_DIR/pid" 2>/dev/null)
    if kill -0 "$pid" 2>/dev/null; then
        echo "compaction still running" >&2
        exit 75
    fi
    echo "removing a stale lock" >&2
    rm -rf "$LOCK_DIR"
    mkdir "$LOCK_DIR" || exit 75
fi
echo $$ > "$LOCK_DIR/pid"
trap 'rm -rf "$LOCK_DIR"' EXIT
/opt/photos/bin/compact
"""

RETRY_FLOCK = """
#!/bin/bash
# nightly: compact the photo database
LOCK_DIR=/var/lib/photos/compact.lock
mkdir -p "$LOCK_DIR" || exit 3
exec 9>>"$LOCK_DIR/.lock" || exit 3
if ! flock -n 9 2>/dev/null; then
    echo "compaction still running" >&2
    logger -t "${0##*/}" "lock busy, run skipped"
    exit 75
fi
echo $$ > "$LOCK_DIR/pid"
/opt/photos/bin/compact
"""


def test_every_part_of_a_mkdir_takeover_gets_the_whole_rewrite(tmp_path):
    """The acquire, the PID test, the removal and the second mkdir each offer the one rewrite
    that replaces the whole take-over by its "holder alive" branch (dropping only a part
    would leave a take-over that stops or bypasses a live flock holder); the directory stays,
    since it holds the PID file, and the lock file goes inside it."""
    name = "compact.sh"
    found = findings(tmp_path, name, RETRY)
    parts = {("LCK101", 4), ("LCK105", 6), ("LCK106", 11), ("LCK101", 12)}
    of_parts = [f for f in found if (f["code"], f["location"]["row"]) in parts]
    assert len(of_parts) == len(parts), found
    expected = textwrap.dedent(RETRY_FLOCK).lstrip("\n")
    for f in of_parts:
        assert rewritten(tmp_path, name, f) == expected, f["code"]
    write(tmp_path, name, expected)
    assert json.loads(scan(tmp_path, "--output-format", "json", name).stdout) == []


def test_record_before_an_exit_after_or_is_grouped(tmp_path):
    """`mkdir L || exit 75` becomes `flock -n 9 || { logger ...; exit 75; }`: an ungrouped
    `|| logger ...; exit 75` would end every run, busy or not."""
    name = "sync.sh"
    (f,) = findings(
        tmp_path,
        name,
        """
        #!/bin/bash
        mkdir /srv/sync/run.lock || exit 75
        trap 'rmdir /srv/sync/run.lock' EXIT
        rsync -a /srv/src/ /srv/dst/
        """,
    )
    new = rewritten(tmp_path, name, f)
    assert 'flock -n 9 || { logger -t "${0##*/}" "lock busy"; exit 75; }\n' in new


# --------------------------------------------------------------------------- Python


def test_python_kill_takeover_becomes_a_flock_of_the_pid_file(tmp_path):
    """`if PIDFILE.exists(): os.kill(old, SIGTERM)` then the PID written (stop the old run,
    then go on): the kill's rewrite holds a flock on the PID file whose busy branch ends the
    run, keeps the PID record, drops the file's removal (and the `finally` it leaves empty)
    and the imports it leaves unused."""
    name = "rebuild_thumbs.py"
    found = findings(
        tmp_path,
        name,
        '''
        import os
        import signal
        import sys
        from pathlib import Path

        PIDFILE = Path("/var/lib/thumbs/rebuild.pid")


        def main() -> int:
            if PIDFILE.exists():
                old = int(PIDFILE.read_text())
                print(f"stopping the previous rebuild {old}", file=sys.stderr)
                os.kill(old, signal.SIGTERM)
            PIDFILE.write_text(str(os.getpid()))
            try:
                rebuild()
            finally:
                PIDFILE.unlink()
            return 0


        def rebuild() -> None:
            """The real work."""


        if __name__ == "__main__":
            sys.exit(main())
        ''',
    )
    (f,) = [f for f in found if f["code"] == "LCK108"]
    new = rewritten(tmp_path, name, f)
    assert new.splitlines()[:17] == [
        "import fcntl",
        "import os",
        "import sys",
        "from pathlib import Path",
        "",
        'PIDFILE = Path("/var/lib/thumbs/rebuild.pid")',
        "",
        "",
        "def main() -> int:",
        "    lock_fd = os.open(PIDFILE, os.O_RDWR | os.O_CREAT, 0o600)",
        "    try:",
        "        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        "    except BlockingIOError:",
        '        print("a previous run still holds the lock: run skipped", file=sys.stderr)',
        "        sys.exit(75)",
        "    PIDFILE.write_text(str(os.getpid()))",
        "    rebuild()",
    ]
    write(tmp_path, name, new)
    assert json.loads(scan(tmp_path, "--output-format", "json", name).stdout) == []
