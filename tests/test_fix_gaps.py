"""Gaps of the fixes issue: LCK105/106/108 suggestions as real rewrites of the script's own
text, LCK203 for a Python ``try``/``finally`` installed before the acquire.

Each test runs the real frontend and checks through ``analyze_text`` (``Finding.suggestion``
/ ``Finding.fix``) or the CLI, applies the offered edits and compares with the expected text.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import tree_sitter_bash
from tree_sitter import Language, Parser

from lockcheck.engine import analyze_text, fix_text
from lockcheck.fix.apply import apply_edits
from lockcheck.model import Applicability
from lockcheck.settings import Settings

BASH = Parser(Language(tree_sitter_bash.language()))


def src(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def findings(name: str, text: str, code: str):
    lang = "python" if name.endswith(".py") else "shell"
    _facts, found = analyze_text(name, text, lang, Settings())
    return [f for f in found if f.code == code]


def suggested(name: str, text: str, code: str, index: int = 0) -> str:
    """The script with the ``index``-th ``code`` finding's suggestion applied (it must have
    edits, be a suggestion, and the result must still parse)."""
    got = findings(name, text, code)
    assert len(got) > index, got
    sug = got[index].suggestion
    assert sug is not None and sug.applicability is Applicability.SUGGESTION
    assert sug.edits, sug.message
    out = apply_edits(text, sug.edits)
    if name.endswith(".py"):
        ast.parse(out)
    else:
        assert not BASH.parse(out.encode()).root_node.has_error, out
        assert subprocess.run(["bash", "-n"], input=out, text=True).returncode == 0, out
    return out


# --------------------------------------------------------------------------- LCK108

STOP_SH = src(
    """
    #!/bin/bash
    PIDFILE=/var/run/mirror-sync.pid
    case "$1" in
      stop)
        kill -TERM "$(cat "$PIDFILE")"
        ;;
      restart)
        kill "$(cat "$PIDFILE")" && sleep 1
        exec "$0" start
        ;;
    esac
    """
)


def test_lck108_shell_drops_the_whole_kill_command():
    out = suggested("ctl.sh", STOP_SH, "LCK108", 0)
    assert 'kill -TERM "$(cat "$PIDFILE")"' not in out
    assert out == STOP_SH.replace('    kill -TERM "$(cat "$PIDFILE")"\n', "")


def test_lck108_shell_drops_the_kill_part_of_a_list():
    out = suggested("ctl.sh", STOP_SH, "LCK108", 1)
    assert out == STOP_SH.replace('kill "$(cat "$PIDFILE")" && sleep 1', "sleep 1")


def test_lck108_shell_kill_as_a_condition_keeps_advice_only():
    text = src(
        """
        #!/bin/bash
        PIDFILE=/var/run/backup.pid
        if kill -TERM "$(cat "$PIDFILE")"; then
            echo "stopped"
        fi
        """
    )
    got = findings("ctl.sh", text, "LCK108")
    assert got and got[0].suggestion is not None
    assert got[0].suggestion.edits == ()  # the kill's status decides: no blind drop


def test_lck108_shell_kill_or_true_goes_whole():
    text = src(
        """
        #!/bin/bash
        PIDFILE=/var/run/indexer.pid
        if [[ -s $PIDFILE ]]; then
            kill -HUP "$(<"$PIDFILE")" 2>/dev/null || true
            rm -f "$PIDFILE"
        fi
        """
    )
    out = suggested("reindex.sh", text, "LCK108")
    assert out == text.replace('    kill -HUP "$(<"$PIDFILE")" 2>/dev/null || true\n', "")


STOP_PY = src(
    """
    import os
    import signal

    PIDFILE = "/var/run/report.pid"


    def stop():
        with open(PIDFILE) as f:
            pid = int(f.read())
        os.kill(pid, signal.SIGTERM)  # ask the old run to go
        print("stopped")


    def hard_stop():
        with open(PIDFILE) as f:
            pid = int(f.read())
        if pid > 1:
            os.kill(pid, signal.SIGKILL)
    """
)


def test_lck108_python_drops_the_statement():
    out = suggested("ctl.py", STOP_PY, "LCK108", 0)
    assert out == STOP_PY.replace("    os.kill(pid, signal.SIGTERM)  # ask the old run to go\n", "")


def test_lck108_python_leaves_pass_in_an_emptied_block():
    out = suggested("ctl.py", STOP_PY, "LCK108", 1)
    assert out == STOP_PY.replace("        os.kill(pid, signal.SIGKILL)\n", "        pass\n")


# --------------------------------------------------------------------------- LCK106 / LCK105

PID_LOCK_SH = src(
    """
    #!/bin/bash
    LOCK=/var/lock/rotate.pid
    if [[ -f "$LOCK" ]]; then
        pid=$(cat "$LOCK")
        if kill -0 "$pid" 2>/dev/null; then
            echo "running" >&2
            exit 0
        fi
        rm -f "$LOCK"
    fi
    echo $$ > "$LOCK"
    trap 'rm -f "$LOCK"' EXIT
    rotate_logs
    """
)


def test_lck106_shell_drops_the_breaker():
    out = suggested("rotate.sh", PID_LOCK_SH, "LCK106")
    assert out == PID_LOCK_SH.replace('    rm -f "$LOCK"\nfi', "fi")


def test_lck105_shell_offers_the_flock_rewrite_of_the_same_lock():
    got = findings("rotate.sh", PID_LOCK_SH, "LCK105")
    acq = findings("rotate.sh", PID_LOCK_SH, "LCK103")
    assert got and acq and acq[0].suggestion and acq[0].suggestion.edits
    assert got[0].suggestion.edits == acq[0].suggestion.edits
    out = suggested("rotate.sh", PID_LOCK_SH, "LCK105")
    assert 'exec 9>>"$LOCK" || exit 3' in out and "flock -n 9" in out
    assert "echo $$ >" not in out


def test_lck105_shell_drops_a_simple_liveness_if():
    text = src(
        """
        #!/bin/bash
        PIDFILE="$HOME/.cache/fetch.pid"
        old=$(cat "$PIDFILE" 2>/dev/null)
        if kill -0 "$old" 2>/dev/null; then
            echo "fetch already running" >&2
            exit 0
        fi
        echo $$ > "$PIDFILE"
        fetch_all
        """
    )
    out = suggested("fetch.sh", text, "LCK105")
    assert out == text.replace(
        'if kill -0 "$old" 2>/dev/null; then\n'
        '    echo "fetch already running" >&2\n'
        "    exit 0\n"
        "fi\n",
        "",
    )


PID_LOCK_PY = src(
    """
    import os
    import sys

    LOCK = "/var/lock/report.pid"

    if os.path.exists(LOCK):
        with open(LOCK) as f:
            pid = int(f.read())
        try:
            os.kill(pid, 0)
            sys.exit(0)
        except ProcessLookupError:
            os.remove(LOCK)  # stale
    with open(LOCK, "w") as f:
        f.write(str(os.getpid()))
    try:
        build_report()
    finally:
        os.remove(LOCK)
    """
)


def test_lck106_python_drops_the_breaker_leaving_pass():
    out = suggested("report.py", PID_LOCK_PY, "LCK106")
    assert out == PID_LOCK_PY.replace("        os.remove(LOCK)  # stale\n", "        pass\n")


def test_lck105_python_offers_the_flock_rewrite_of_the_same_lock():
    out = suggested("report.py", PID_LOCK_PY, "LCK105")
    assert "fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)" in out
    assert "except BlockingIOError:" in out


def test_lck105_python_drops_a_simple_liveness_if():
    text = src(
        """
        import os
        import sys

        import psutil

        PIDFILE = os.path.expanduser("~/.cache/sync.pid")
        with open(PIDFILE) as f:
            old = int(f.read() or 0)
        if psutil.pid_exists(old):
            print("sync already running", file=sys.stderr)
            sys.exit(0)
        sync()
        """
    )
    out = suggested("sync.py", text, "LCK105")
    assert out == text.replace(
        "if psutil.pid_exists(old):\n"
        '    print("sync already running", file=sys.stderr)\n'
        "    sys.exit(0)\n",
        "",
    ).replace("import sys\n", "").replace("\nimport psutil\n", "")  # left unused (F401)


def test_lck105_python_liveness_in_a_try_keeps_advice_only():
    text = src(
        """
        import os
        import sys

        PIDFILE = "/tmp/job.pid"
        with open(PIDFILE) as f:
            pid = int(f.read())
        try:
            os.kill(pid, 0)
        except OSError:
            pass
        else:
            sys.exit(0)
        """
    )
    got = findings("job.py", text, "LCK105")
    assert got and got[0].suggestion is not None
    assert got[0].suggestion.edits == ()  # not the simple `if` shape: advice only


def test_show_fixes_and_diff_show_the_rewrites_and_write_nothing(tmp_path):
    script = tmp_path / "ctl.sh"
    script.write_text(STOP_SH)
    for flag in ("--show-fixes", "--diff"):
        res = subprocess.run(
            [sys.executable, "-m", "lockcheck", "scan", flag, str(script)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        out = res.stdout
        assert '-    kill -TERM "$(cat "$PIDFILE")"' in out, out + res.stderr
        assert '-    kill "$(cat "$PIDFILE")" && sleep 1' in out and "+    sleep 1" in out
        assert script.read_text() == STOP_SH
    res = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--fix", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert script.read_text() == STOP_SH  # suggestions are never applied by --fix


# --------------------------------------------------------------------------- LCK203 (Python)


def lck203(text: str):
    got = findings("nightly.py", text, "LCK203")
    assert len(got) == 1, got
    return got[0]


def unsafe_fixed(text: str, unsafe: bool = True) -> str:
    res = fix_text("nightly.py", text, "python", Settings(), {"LCK203"}, unsafe)
    ast.parse(res.fixed)
    return res.fixed


SAME_TRY = src(
    """
    import os
    import sys

    LOCK = "/var/lock/nightly.lock"

    try:
        os.mkdir(LOCK)
        run_nightly()  # the real work
        publish()
    except FileExistsError:
        print("nightly already running", file=sys.stderr)
        sys.exit(75)
    finally:
        os.rmdir(LOCK)
    """
)


def test_lck203_python_busy_except_of_the_same_try_moves_before_it():
    f = lck203(SAME_TRY)
    assert f.fix is not None and f.fix.applicability is Applicability.UNSAFE
    after = apply_edits(SAME_TRY, f.fix.edits)
    assert after == SAME_TRY.replace(
        "try:\n"
        "    os.mkdir(LOCK)\n"
        "    run_nightly()  # the real work\n"
        "    publish()\n"
        "except FileExistsError:\n"
        '    print("nightly already running", file=sys.stderr)\n'
        "    sys.exit(75)\n"
        "finally:\n",
        "try:\n"
        "    os.mkdir(LOCK)\n"
        "except FileExistsError:\n"
        '    print("nightly already running", file=sys.stderr)\n'
        "    sys.exit(75)\n"
        "try:\n"
        "    run_nightly()  # the real work\n"
        "    publish()\n"
        "finally:\n",
    )
    assert findings("nightly.py", after, "LCK203") == []


NESTED_TRY = src(
    """
    import os
    import sys

    LOCK = os.path.join("/var/lock", "nightly.lock")


    def main():
        try:
            try:
                fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                sys.exit(75)
            os.write(fd, str(os.getpid()).encode())
            run_nightly()
        finally:
            os.unlink(LOCK)


    main()
    """
)


def test_lck203_python_nested_busy_try_moves_out_dedented():
    f = lck203(NESTED_TRY)
    assert f.fix is not None and f.fix.applicability is Applicability.UNSAFE
    after = unsafe_fixed(NESTED_TRY)
    assert after == NESTED_TRY.replace(
        "    try:\n"
        "        try:\n"
        "            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n"
        "        except FileExistsError:\n"
        "            sys.exit(75)\n",
        "    try:\n"
        "        fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n"
        "    except FileExistsError:\n"
        "        sys.exit(75)\n"
        "    try:\n",
    )
    assert unsafe_fixed(NESTED_TRY, unsafe=False) == NESTED_TRY  # unsafe: not by --fix


def test_lck203_python_try_with_else_gets_no_move():
    text = src(
        """
        import os
        import sys

        LOCK = "/var/lock/nightly.lock"

        try:
            os.mkdir(LOCK)
            run_nightly()
        except FileExistsError:
            sys.exit(75)
        else:
            publish()
        finally:
            os.rmdir(LOCK)
        """
    )
    assert lck203(text).fix is None


def test_lck203_python_busy_exit_after_the_work_gets_no_move():
    text = src(
        """
        import os
        import sys

        LOCK = "/var/lock/nightly.lock"

        try:
            os.mkdir(LOCK)
        except FileExistsError:
            print("busy", file=sys.stderr)
            sys.exit(75)
        finally:
            os.rmdir(LOCK)
        """
    )
    got = findings("nightly.py", text, "LCK203")
    assert got and got[0].fix is None  # nothing after the acquire to protect: not simple


# --------------------------------------------------------------------------- assigned acquires

ASSIGNED_OS_OPEN = src(
    """
    import os
    import sys

    LOCK = "/var/lock/export.lock"

    try:
        fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        sys.exit(75)
    try:
        os.write(fd, str(os.getpid()).encode())
        export()
    finally:
        os.close(fd)
        os.remove(LOCK)
    """
)


def test_assigned_os_open_excl_gets_the_reference_pattern_with_its_own_name():
    out = suggested("export.py", ASSIGNED_OS_OPEN, "LCK101")
    assert "fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)\ntry:\n" in out
    assert "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n" in out
    assert "os.O_EXCL" not in out and "os.remove(LOCK)" not in out
    assert "    os.write(fd, str(os.getpid()).encode())\n" in out  # the rest kept as written
    _facts, found = analyze_text("export.py", out, "python", Settings())
    assert not {"LCK101", "LCK201", "LCK203"} & {f.code for f in found}


WITH_OPEN_X = src(
    """
    import os
    import sys

    LOCK = "/var/lock/export.lock"

    try:
        with open(LOCK, "x") as f:
            f.write(str(os.getpid()))
            export()
        os.remove(LOCK)
    except FileExistsError:
        print("export already running", file=sys.stderr)
        sys.exit(75)
    """
)


def test_with_open_x_gets_the_reference_pattern():
    out = suggested("export.py", WITH_OPEN_X, "LCK101")
    assert "lock_fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)\ntry:\n" in out
    assert (
        "    fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        '    with os.fdopen(lock_fd, "r+") as f:\n'
        "        f.write(str(os.getpid()))\n"
    ) in out
    assert "except BlockingIOError:\n" in out and "os.remove(LOCK)" not in out
    _facts, found = analyze_text("export.py", out, "python", Settings())
    assert not {"LCK101", "LCK202", "LCK201"} & {f.code for f in found}


def test_assigned_acquire_used_otherwise_gets_no_rewrite():
    text = src(
        """
        import os
        import sys

        LOCK = "/var/lock/export.lock"

        try:
            fds = [os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)]
        except FileExistsError:
            sys.exit(75)
        export()
        os.remove(LOCK)
        """
    )
    got = findings("export.py", text, "LCK101")
    assert got and got[0].suggestion is None


def test_lck108_shell_emptied_then_body_keeps_a_colon():
    text = src(
        """
        #!/bin/sh
        NGINX_PID=/run/nginx.pid
        if [ -n "$ROTATED" ]; then
        \tkill -USR1 "$(cat "$NGINX_PID")"
        fi
        """
    )
    out = suggested("cut-log.sh", text, "LCK108")
    assert out == text.replace('\tkill -USR1 "$(cat "$NGINX_PID")"\n', "\t:\n")
    assert subprocess.run(["bash", "-n"], input=out, text=True).returncode == 0


def test_lck105_shell_liveness_and_of_a_pid_lock_goes_with_the_rewrite():
    text = src(
        """
        #!/bin/bash
        LOCKFILE=/var/lock/mirror.pid
        if [ -e "$LOCKFILE" ] && kill -0 "$(cat "$LOCKFILE")" 2>/dev/null; then
            echo "mirror already running" >&2
            exit 1
        fi
        trap 'rm -f "$LOCKFILE"' EXIT
        echo $$ > "$LOCKFILE"
        rsync -a /srv/src/ /srv/mirror/
        """
    )
    out = suggested("mirror.sh", text, "LCK105")
    assert "kill -0" not in out
    assert 'exec 9>>"$LOCKFILE" || exit 3\nif ! flock -n 9; then\n' in out
    assert 'echo $$ > "$LOCKFILE"' not in out


def test_lck108_shell_kill_whose_status_is_read_next_keeps_advice_only():
    text = src(
        """
        #!/bin/sh
        reload_dns() {
          pidpath="$1"
          kill -s HUP -- "$(cat "$pidpath")"
          if [ $? -ne 0 ]; then
            echo "reload failed" >&2
            return 1
          fi
        }
        reload_dns /run/maradns.pid
        """
    )
    got = findings("reload.sh", text, "LCK108")
    assert got and got[0].suggestion is not None and got[0].suggestion.edits == ()


def test_lck203_shell_trap_moves_after_a_status_tested_busy_branch():
    from lockcheck.engine import fix_text
    from lockcheck.settings import Settings

    before = """#!/bin/bash
LOCK_FILE=/var/lib/mon/mon.lock
cleanup() {
  rm -f "$LOCK_FILE"
}
trap cleanup EXIT
(set -C; : > "$LOCK_FILE") 2>/dev/null
if [ $? -ne 0 ]; then
  echo "monitor already running" >&2
  exit 75
fi
collect_metrics
"""
    after = """#!/bin/bash
LOCK_FILE=/var/lib/mon/mon.lock
cleanup() {
  rm -f "$LOCK_FILE"
}
(set -C; : > "$LOCK_FILE") 2>/dev/null
if [ $? -ne 0 ]; then
  echo "monitor already running" >&2
  exit 75
fi
trap cleanup EXIT
collect_metrics
"""
    res = fix_text("mon.sh", before, "shell", Settings(), {"LCK203"}, unsafe=True)
    assert res.fixed == after
    assert fix_text("mon.sh", before, "shell", Settings(), {"LCK203"}, unsafe=False).fixed == before
