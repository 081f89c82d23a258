"""Python shapes behind the misses of set H (blind-labelled in session 12, a dev set from
session 13 on, bench/recall/SET-H.md), each as a class with a positive beside a negative,
through the CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import lines_of, scan_files, write

# -------------------- 1. a busy branch that falls off the end of the script, `== True`

LAST_IF = """
    #!/usr/bin/python3
    import os, sys
    import pipeline

    {name} = '/data1/processing/{file}'
    if os.path.isfile({name}){cmp}:
        print({name}, 'exists, returning')
        sys.stdout.flush()
    else:
        f = open({name}, 'w')
        f.write('in progress')
        f.close()
        pipeline.run()
        {remove}
"""


def test_a_busy_branch_that_falls_off_the_script_end_is_a_test_then_create(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "lock.py": LAST_IF.format(
                name="lockfile", file="udb.lock", cmp="", remove="os.remove(lockfile)"
            ),
            "eq-true.py": LAST_IF.format(
                name="lockfile", file="udb.lock", cmp=" == True", remove="os.remove(lockfile)"
            ),
            "removed.py": LAST_IF.format(
                name="flag", file="udb.flag", cmp="", remove="os.remove(flag)"
            ),
            # an output written once and kept: skipping when it exists excludes nothing
            "output.py": LAST_IF.format(name="out", file="udb.csv", cmp="", remove="pass"),
        },
    )
    for name in ("lock.py", "eq-true.py", "removed.py"):
        assert lines_of(got[name], "LCK103") == {10}, (name, got)
        assert lines_of(got[name], "LCK401") == {7}, (name, got)  # print(), then the end
        assert lines_of(got[name], "LCK202") == {10}, (name, got)
    assert got["output.py"] == set(), got


def test_a_negated_comparison_with_false_reads_as_an_absence_test(tmp_path):
    src = """
        import os, sys
        LOCK = '/var/lib/job/job.lock'
        if os.path.exists(LOCK) is False:
            open(LOCK, 'w').close()
        else:
            sys.exit(0)
        try:
            work()
        finally:
            os.remove(LOCK)
    """
    got = scan_files(tmp_path, {"job.py": src})
    assert lines_of(got["job.py"], "LCK103") == {4}, got
    assert lines_of(got["job.py"], "LCK401") == {6}, got


# --------------------------------- 2. an internal error is reported, never swallowed

SPAWNER = """
    import os, subprocess, sys

    LOCK = "/var/lib/job/job.lock"


    def spawn(*args, **kwargs):
        return subprocess.Popen(*args, **kwargs)


    try:
        os.mkdir(LOCK)
    except FileExistsError:
        sys.exit(0)
    spawn(["rsync", "-a", "src/", "dst/"]).wait()
    os.rmdir(LOCK)
"""


def test_a_call_without_positional_arguments_does_not_lose_the_files_findings(tmp_path):
    # `subprocess.Popen(*args, **kwargs)` has no first argument to read as a command; the
    # frontend used to fail on it and a blanket `except` turned the failure into "no
    # findings" for the whole file
    write(tmp_path, "job.py", textwrap.dedent(SPAWNER).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--isolated"]
        + ["--output-format", "concise", str(tmp_path / "job.py")],
        capture_output=True,
        text=True,
    )
    assert "internal error" not in proc.stderr, proc.stderr
    assert ":11:5: LCK101" in proc.stdout, proc.stdout
    assert ":13:5: LCK401" in proc.stdout, proc.stdout


# ------------------------- 3. stale-lock breakers reached through a try and a raise

TAKEOVER = """
    import os, signal, time

    PID_FILE = "/var/run/bot/bot.pid"


    def acquire_pid_lock():
        my_pid = os.getpid()
        if os.path.exists(PID_FILE):
            try:
                with open(PID_FILE) as f:
                    old_pid = int(f.read().strip())
                os.kill(old_pid, 0)
                {alive}
            except (ProcessLookupError, ValueError, OSError):
                pass
        with open(PID_FILE, "w") as f:
            f.write(str(my_pid))
        return my_pid


    if __name__ == "__main__":
        acquire_pid_lock()
"""


def test_a_probe_then_kill_in_one_try_takes_the_pid_file_over_either_way(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "kills.py": TAKEOVER.format(alive="os.kill(old_pid, signal.SIGKILL); time.sleep(1)"),
            "reports.py": TAKEOVER.format(alive='print("an older bot runs", old_pid)'),
        },
    )
    assert lines_of(got["kills.py"], "LCK105") == {12}, got
    assert lines_of(got["kills.py"], "LCK108") == {13}, got
    assert lines_of(got["kills.py"], "LCK106") == {16}, got  # the overwrite after the try
    # a live holder only reported: the probe decides nothing, the write is no breaker
    assert lines_of(got["reports.py"], "LCK105") == set(), got
    assert lines_of(got["reports.py"], "LCK106") == set(), got


RAISED = """
    import os, sys


    def alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


    def acquire(path):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            return fd
        except FileExistsError:
            try:
                with open(path) as f:
                    pid = int(f.read().strip() or "0")
                if not alive(pid):
                    raise {exc}("stale lock")
            except (ProcessLookupError, ValueError):
                os.remove(path)
                return acquire(path)
            return None
"""


def test_a_dead_holder_raised_into_the_handler_that_removes_the_lock(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "caught.py": RAISED.format(exc="ProcessLookupError"),
            "escapes.py": RAISED.format(exc="RuntimeError"),
        },
    )
    assert lines_of(got["caught.py"], "LCK105") == {6}, got
    assert lines_of(got["caught.py"], "LCK106") == {24}, got
    assert lines_of(got["caught.py"], "LCK202") == set(), got  # a breaker, not a release
    # the raise leaves the function: the removal runs on an unparsable PID only
    assert lines_of(got["escapes.py"], "LCK106") == set(), got
