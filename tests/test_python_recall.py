"""Python frontend recall (issue #12): constructs the recall set showed missed, each class
in several spellings beside a negative that must stay quiet."""

from __future__ import annotations

import textwrap

import pytest

from lockcheck.engine import analyze_text


def found(src: str, path: str = "/srv/jobs/job.py") -> list[tuple[str, int]]:
    _facts, findings = analyze_text(path, textwrap.dedent(src).lstrip("\n"), "python")
    return [(f.code, f.span.line) for f in findings]


def codes(src: str, path: str = "/srv/jobs/job.py") -> set[str]:
    return {c for c, _ in found(src, path)}


# --------------------------------------------------------------------------- LCK406

# the open (line 6) and the non-blocking acquire share the try whose handler is the busy branch
OPEN_IN_TRY = {
    "os.open, except OSError": """
        import fcntl
        import os
        import sys

        try:
            fd = os.open("/run/user/1000/job.lock", os.O_CREAT | os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print("already running")
            sys.exit(1)
        print("work")
    """,
    "open(), bare except": """
        import fcntl
        import sys


        class Lock:
            def __init__(self, path):
                try:
                    self.f = open(path, "a")
                    fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except:
                    print("Could not lock, stopping.")
                    sys.exit(1)


        Lock("/var/lock/job.lock")
    """,
    "lockf, except IOError, plus-joined flags": """
        import fcntl
        import os
        import sys

        if True:
            try:
                f = open("/var/lock/job.lock", "a")
                fcntl.lockf(f, fcntl.LOCK_EX + fcntl.LOCK_NB)
            except IOError:
                print("Process already is running.")
                os._exit(1)
        print("work")
    """,
    "except Exception as e": """
        import fcntl
        import sys

        try:
            lockf = open("/var/lock/job.lock", "a+")
            fcntl.flock(lockf.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except Exception as e:
            sys.exit("busy: %s" % e)
        print("work")
    """,
}


@pytest.mark.parametrize("name", sorted(OPEN_IN_TRY))
def test_lck406_open_inside_the_busy_try(name):
    src = OPEN_IN_TRY[name]
    got = found(src)
    open_line = next(
        i for i, ln in enumerate(textwrap.dedent(src).lstrip("\n").splitlines(), 1) if "open(" in ln
    )
    assert ("LCK406", open_line) in got, got


TELLS_APART = {
    "open before the try": """
        import fcntl
        import sys

        f = open("/var/lock/job.lock", "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print("already running")
            sys.exit(1)
        print("work")
    """,
    "except BlockingIOError": """
        import fcntl
        import sys

        try:
            f = open("/var/lock/job.lock", "a")
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("already running")
            sys.exit(1)
        print("work")
    """,
    "errno test": """
        import errno
        import fcntl
        import sys

        try:
            f = open("/var/lock/job.lock", "a")
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                print("already running")
                sys.exit(1)
            raise
        print("work")
    """,
    "open checked by an inner try": """
        import fcntl
        import sys

        try:
            try:
                f = open("/var/lock/job.lock", "a")
            except OSError as e:
                sys.exit("cannot open the lock file: %s" % e)
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print("already running")
            sys.exit(1)
        print("work")
    """,
}


@pytest.mark.parametrize("name", sorted(TELLS_APART))
def test_lck406_quiet_when_the_open_failure_is_told_apart(name):
    assert "LCK406" not in codes(TELLS_APART[name])


# --------------------------------------------------------------------------- LCK109

# the create (line 6) cannot fail on an existing name, so `except FileExistsError` never runs
NEVER_FAILS = {
    "os.makedirs exist_ok": """
        import os
        import sys

        LOCK = "/var/lock/job.d"
        try:
            os.makedirs(LOCK, exist_ok=True)
        except FileExistsError:
            print("already running")
            sys.exit(1)
        print("work")
        os.rmdir(LOCK)
    """,
    "Path.mkdir exist_ok, in a function": """
        from pathlib import Path

        def take(lock):
            try:
                lock.mkdir(parents=True, exist_ok=True)
                return True
            except FileExistsError:
                return False

        if not take(Path("/var/lock/job.d")):
            raise SystemExit(0)
    """,
    # no lock API and no removal: only the gate's FileExistsError anchor lets it through
    'open "w"': """
        import sys

        try:
            fh = open("/var/lock/job.lock", "w")
            fh.write("busy")
        except FileExistsError:
            sys.exit("already running")
        print("work")
    """,
}


@pytest.mark.parametrize("name", sorted(NEVER_FAILS))
def test_lck109_non_exclusive_create_under_file_exists_error(name):
    src = NEVER_FAILS[name]
    lines = textwrap.dedent(src).lstrip("\n").splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if "exist_ok" in ln or "open(" in ln)
    got = found(src)
    assert ("LCK109", line) in got, got
    assert "LCK107" not in codes(src)  # the removal is of the name made here


EXCLUSIVE = {
    "os.makedirs without exist_ok": """
        import os
        import sys

        try:
            os.makedirs("/var/lock/job.d")
        except FileExistsError:
            sys.exit("already running")
        print("work")
        os.rmdir("/var/lock/job.d")
    """,
    'open "x"': """
        import sys

        try:
            fh = open("/var/lock/job.lock", "x")
        except FileExistsError:
            sys.exit("already running")
        print("work")
    """,
    "exist_ok under an OSError handler (error handling, not a busy branch)": """
        import os
        import sys

        try:
            os.makedirs("/srv/out/reports", exist_ok=True)
        except OSError as e:
            sys.exit("cannot make the output directory: %s" % e)
    """,
}


@pytest.mark.parametrize("name", sorted(EXCLUSIVE))
def test_lck109_quiet_on_a_create_that_fails_on_an_existing_name(name):
    assert "LCK109" not in codes(EXCLUSIVE[name])


# --------------------------------------------------------------------------- LCK103

# pid-file helpers: an existence test whose true branch skips, exits or raises, then a
# truncating create of the same name, removed at exit
CHECK_THEN_CREATE = {
    "test joined with and, global name": """
        import atexit
        import os
        import sys

        pidfile = None

        def write(reset=False):
            global pidfile
            pidfile = os.path.join("/var/run/jobs", "sync.pid")
            if reset == False and os.path.exists(pidfile):
                sys.exit("pid file exists")
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()))
            atexit.register(cleanup)

        def cleanup():
            global pidfile
            if pidfile is not None:
                os.unlink(pidfile)
                pidfile = None

        write()
    """,
    "create in the else branch": """
        import atexit
        import os
        import sys

        def _create_pidfile(pid_file):
            if os.path.isfile(pid_file):
                return False
            else:
                open(pid_file, "w").write(str(os.getpid()))
            return True

        if not _create_pidfile("/var/run/jobs/sync.pid"):
            sys.exit(1)
        atexit.register(os.unlink, "/var/run/jobs/sync.pid")
    """,
    "Python 2 file() after a liveness check": """
        import atexit
        import os
        import sys

        pidfile = "/var/run/jobs/pir.pid"

        def is_running(pid):
            try:
                os.kill(pid, 0)
                return True
            except OSError:
                return False

        if os.path.exists(pidfile):
            if is_running(int(open(pidfile).read())):
                sys.exit(0)
        else:
            file(pidfile, "w").write(str(os.getpid()))

        def goodbye():
            os.remove(pidfile)

        atexit.register(goodbye)
    """,
}


@pytest.mark.parametrize("name", sorted(CHECK_THEN_CREATE))
def test_lck103_check_then_create_pid_helpers(name):
    src = CHECK_THEN_CREATE[name]
    lines = textwrap.dedent(src).lstrip("\n").splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if '"w")' in ln)
    assert ("LCK103", line) in found(src)


def test_lck103_quiet_on_a_default_config_written_once():
    # `if exists(cfg): return / else: write the defaults`: made when missing, never removed
    src = """
        import os

        def ensure_config(cfg):
            if os.path.isfile(cfg):
                return False
            else:
                open(cfg, "w").write("[main]\\n")
            return True

        ensure_config("/etc/sync/sync.ini")
        os.remove("/tmp/sync.tmp")
    """
    assert "LCK103" not in codes(src)


def test_file_is_open_only_when_unbound():
    # a local `file` helper is not Python 2's file(): nothing is created
    src = """
        import os
        import sys

        def file(path, mode):
            return path

        if os.path.exists("/var/run/jobs/sync.pid"):
            sys.exit(0)
        file("/var/run/jobs/sync.pid", "w")
        os.remove("/var/run/jobs/sync.pid")
    """
    assert "LCK103" not in codes(src)


# --------------------------------------------------------------------------- LCK105/LCK106

# the PID read from the pid file decides whether the file is removed (line of the test)
LIVENESS = {
    "psutil.pid_exists of a helper's return": """
        import os
        import sys

        import psutil

        PID_PATH = "/var/run/jobs/sync.pid"

        def get_pid(pid_path):
            with open(pid_path) as f:
                pid = int(f.read().strip())
            return pid

        def single():
            if os.path.isfile(PID_PATH):
                pid = get_pid(PID_PATH)
                if not psutil.pid_exists(pid):
                    os.remove(PID_PATH)
                    return True
                return False
            return True

        if not single():
            sys.exit(0)
    """,
    "/proc/%d exists": """
        import os
        import sys

        PID_PATH = "/var/run/jobs/sync.pid"

        if os.path.isfile(PID_PATH):
            with open(PID_PATH) as f:
                stale = int(f.read())
            if not os.path.exists("/proc/%d" % stale):
                os.remove(PID_PATH)
            else:
                sys.exit(0)
    """,
    "f-string /proc/{pid}": """
        import os
        import sys

        PID_PATH = "/var/run/jobs/sync.pid"

        if os.path.isfile(PID_PATH):
            pid = open(PID_PATH).read().strip()
            if not os.path.isdir(f"/proc/{pid}"):
                os.unlink(PID_PATH)
            else:
                sys.exit(0)
    """,
    "os.access /proc/<pid>/stat, pid from os.read, file truncated": """
        import fcntl
        import os

        def try_lock(path, pid):
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
            old_pid = int(os.read(fd, 20))
            if not os.access("/proc/%d/stat" % old_pid, os.F_OK):
                os.ftruncate(fd, 0)
                os.write(fd, str(pid).encode())
                return pid
            return old_pid
    """,
}


@pytest.mark.parametrize("name", sorted(LIVENESS))
def test_lck105_liveness_spellings(name):
    src = LIVENESS[name]
    lines = textwrap.dedent(src).lstrip("\n").splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if "pid_exists(" in ln or "/proc" in ln)
    got = found(src)
    assert ("LCK105", line) in got, got
    removal = [i for i, ln in enumerate(lines, 1) if "os.remove(" in ln or "os.unlink(" in ln]
    for r in removal:  # the removal in the dead branch trusts the test
        assert ("LCK106", r) in got, got


def test_lck105_quiet_on_a_proc_test_of_our_own_pid():
    # /proc/self and os.getpid(): nothing read from a pid file
    src = """
        import os
        import sys

        if not os.path.exists("/proc/%d/status" % os.getpid()):
            sys.exit("no procfs")
        os.remove("/var/run/jobs/sync.pid")
    """
    assert "LCK105" not in codes(src)


def test_lck105_pid_read_by_a_static_method_helper():
    src = """
        import os
        import sys


        class PidFile:
            def __init__(self, filename):
                self.filename = filename

            @staticmethod
            def _read(name):
                with open(name) as f:
                    return f.read().strip()

            def check_and_wait(self):
                while os.path.exists(self.filename):
                    stale_pid = PidFile._read(self.filename)
                    if not os.path.exists(os.path.join("/proc", stale_pid)):
                        os.remove(self.filename)
                        break
                    sys.exit(0)
    """
    lines = textwrap.dedent(src).lstrip("\n").splitlines()
    test_line = next(i for i, ln in enumerate(lines, 1) if '"/proc"' in ln)
    got = found(src)
    assert ("LCK105", test_line) in got and ("LCK106", test_line + 1) in got, got
