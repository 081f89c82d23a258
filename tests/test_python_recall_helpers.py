"""Python recall through the CLI (issue #12): lock tests, creates, removals and PIDs that go
through a small helper of the same file, each beside the correct or harmless spelling that
must stay quiet."""

from __future__ import annotations

import textwrap

import pytest
from helpers import concise_rows, write


def lint(cli, tmp_path, src: str, name: str = "job.py") -> set[tuple[str, int]]:
    """(code, line) of every finding of ``lockcheck scan`` on one script."""
    write(tmp_path, name, textwrap.dedent(src).lstrip("\n"))
    _status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "concise")
    assert "Traceback" not in err
    return {(code, line) for _p, line, code in concise_rows(out)}


# --------------------------------------------------------------------------- pid through a
# staticmethod parameter into a /proc test (LCK105)

PROC_VIA_STATICMETHOD = """
    import os
    import sys


    class PidLock:
        def __init__(self, path="/var/run/backup/backup.pid"):
            self.path = path
            if os.path.exists(self.path):
                old = PidLock._read_pid(self.path)
                if PidLock.alive(old):
                    sys.exit("backup already running as %s" % old)
            with open(self.path, "w") as f:
                f.write(str(os.getpid()))

        @staticmethod
        def _read_pid(name):
            with open(name) as f:
                return f.read().strip()

        @staticmethod
        def alive(pid):
            return os.path.isdir("/proc/%s" % pid)


    PidLock()
"""


def test_pid_reaches_proc_test_through_a_staticmethod_parameter(cli, tmp_path):
    found = lint(cli, tmp_path, PROC_VIA_STATICMETHOD)
    assert ("LCK105", 22) in found
    # never removed, but its PID is tested for a live holder: a pid lock, not a marker
    assert ("LCK103", 12) in found


def test_proc_test_of_pids_not_read_from_a_file_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import sys


        class Status:
            @staticmethod
            def alive(pid):
                return os.path.isdir("/proc/%s" % pid)


        def main():
            for pid in sys.argv[1:]:
                if Status.alive(pid):
                    print(pid, "running")
            if not Status.alive(os.getppid()):
                sys.exit(1)


        main()
        """,
    )
    assert not {c for c, _l in found} & {"LCK105", "LCK106", "LCK103"}


# --------------------------------------------------------------------------- the existence
# test, the create and the stale removal in small helpers (LCK103, LCK106)

HELPER_PIDFILE = """
    import os
    import sys
    import time


    class Pidfile:
        def __init__(self, filename="/var/lib/poller/poller.pid"):
            self.filename = filename

        def exists(self):
            return os.path.exists(self.filename)

        def read(self):
            with open(self.filename) as f:
                return f.read().strip()

        def remove(self):
            if self.exists():
                os.remove(self.filename)

        def write(self):
            if self.exists():
                raise RuntimeError("pid file %s exists" % self.filename)
            with open(self.filename, "w") as f:
                f.write(str(os.getpid()))

        def wait_and_create(self):
            while self.exists():
                if not os.path.exists(os.path.join("/proc", self.read())):
                    self.remove()
                    break
                time.sleep(5)
            self.write()


    pidfile = Pidfile()
    pidfile.wait_and_create()
    try:
        print("polling")
    finally:
        pidfile.remove()
"""


def test_exists_test_and_stale_removal_in_helper_methods(cli, tmp_path):
    found = lint(cli, tmp_path, HELPER_PIDFILE)
    assert ("LCK103", 24) in found  # the open after `if self.exists(): raise`
    assert ("LCK105", 29) in found
    assert ("LCK106", 30) in found  # self.remove() after the failed /proc test
    assert not any(c == "LCK106" and line == 19 for c, line in found)


def test_helper_that_makes_a_missing_file_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os


        class Config:
            def __init__(self, path="/var/lib/poller/settings.ini"):
                self.path = path

            def exists(self):
                return os.path.exists(self.path)

            def reset(self):
                if os.path.exists(self.path):
                    os.remove(self.path)

            def ensure(self):
                if not self.exists():
                    with open(self.path, "w") as f:
                        f.write("[poller]\\n")


        cfg = Config()
        cfg.ensure()
        """,
    )
    assert not {c for c, _l in found} & {"LCK103", "LCK106", "LCK202"}


HELPER_CREATE = """
    import atexit
    import os
    import sys

    PID_PATH = "/var/lib/report/report.pid"


    def write_pid(path):
        with open(path, "w") as f:
            f.write(str(os.getpid()))


    def main():
        if os.path.isfile(PID_PATH):
            print("report already running")
            return 1
        write_pid(PID_PATH)
        atexit.register(os.remove, PID_PATH)
        print("report")
        return 0


    sys.exit(main())
"""


def test_create_inside_a_helper_after_the_test(cli, tmp_path):
    found = lint(cli, tmp_path, HELPER_CREATE)
    assert ("LCK103", 9) in found  # the helper's open: the creation


def test_helper_create_of_another_file_is_quiet(cli, tmp_path):
    src = HELPER_CREATE.replace("write_pid(PID_PATH)", 'write_pid("/var/lib/report/last.txt")')
    found = lint(cli, tmp_path, src)
    assert "LCK103" not in {c for c, _l in found}


def test_lock_class_with_no_caller_in_the_file_is_not_judged_for_release(cli, tmp_path):
    """The class takes the lock in one method and releases it in another; whoever uses it
    is in another file: its release cannot be judged here (LCK202 quiet), the check-then-
    create itself is still reported."""
    found = lint(
        cli,
        tmp_path,
        """
        import os


        class RunLock:
            def __init__(self, path="/var/lib/sync/sync.pid"):
                self.path = path
                if os.path.exists(self.path):
                    raise RuntimeError("sync already running")
                with open(self.path, "w") as f:
                    f.write(str(os.getpid()))

            def unlock(self):
                os.remove(self.path)
        """,
    )
    assert ("LCK103", 9) in found
    assert "LCK202" not in {c for c, _l in found}


def test_lock_class_used_in_the_file_without_finally_is_judged(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os


        class RunLock:
            def __init__(self, path="/var/lib/sync/sync.pid"):
                self.path = path
                if os.path.exists(self.path):
                    raise RuntimeError("sync already running")
                with open(self.path, "w") as f:
                    f.write(str(os.getpid()))

            def unlock(self):
                os.remove(self.path)


        lock = RunLock()
        print("sync")
        lock.unlock()
        """,
    )
    assert ("LCK202", 9) in found


# --------------------------------------------------------------------------- the pid file
# truncated in place once its holder is judged dead: an overwrite (LCK106)

TRUNCATE_TAKEOVER = {
    "os.ftruncate after os.read": (
        """
        import errno
        import fcntl
        import os


        def try_lock(path, pid):
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as e:
                    if e.errno == errno.EWOULDBLOCK:
                        return -1
                    raise
                old = os.read(fd, 20)
                if old and not os.access("/proc/%d/stat" % int(old), os.F_OK):
                    os.lseek(fd, 0, os.SEEK_SET)
                    os.ftruncate(fd, 0)
                    os.write(fd, str(pid).encode())
                    return pid
                return int(old) if old else pid
            finally:
                os.close(fd)


        try_lock("/var/lib/pkg/pkg.pid", os.getpid())
        """,
        18,
    ),
    "file.truncate after os.kill(pid, 0)": (
        """
        import os
        import sys

        PIDFILE = "/var/lib/mirror/mirror.pid"

        f = open(PIDFILE, "a+")
        f.seek(0)
        old = f.read().strip()
        if old:
            try:
                os.kill(int(old), 0)
                sys.exit("mirror already running")
            except ProcessLookupError:
                f.seek(0)
                f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        """,
        15,
    ),
}


@pytest.mark.parametrize("name", sorted(TRUNCATE_TAKEOVER))
def test_truncating_the_pid_file_of_a_dead_holder_is_a_stale_overwrite(cli, tmp_path, name):
    src, line = TRUNCATE_TAKEOVER[name]
    assert ("LCK106", line) in lint(cli, tmp_path, src)


def test_truncating_the_pid_file_after_taking_the_flock_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import fcntl
        import os
        import sys

        fd = os.open("/var/lib/pkg/pkg.pid", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        print("work")
        """,
    )
    assert "LCK106" not in {c for c, _l in found}


# --------------------------------------------------------------------------- `ps -p PID` and
# `kill -0 PID` run as commands on the stored PID (LCK105)

PIDFILE_READ = """
    import os
    import subprocess
    import sys

    PIDFILE = "/var/lib/backup/backup.pid"


    def main():
        if os.path.exists(PIDFILE):
            with open(PIDFILE) as f:
                pid = int(f.read())
            {test}
        with open(PIDFILE, "w") as f:
            f.write(str(os.getpid()))
        try:
            print("backup")
        finally:
            os.remove(PIDFILE)


    main()
"""

PS_SPELLINGS = {
    "run, list": 'if subprocess.run(["ps", "-p", str(pid)]).returncode == 0: sys.exit(1)',
    "call, kill -0 string": 'if subprocess.call("kill -0 %d" % pid, shell=True) == 0: sys.exit(1)',
    "os.system, f-string": 'if os.system(f"ps -p {pid} > /dev/null") == 0: sys.exit(1)',
    "check_output, ps -o": (
        'out = subprocess.check_output(["/bin/ps", "-o", "comm=", "-p", str(pid)])\n'
        "            if out.strip(): sys.exit(1)"
    ),
    "popen, readlines": (
        'lines = os.popen("/bin/ps -p %d" % pid).readlines()\n'
        "            if len(lines) > 1: sys.exit(1)"
    ),
}


@pytest.mark.parametrize("name", sorted(PS_SPELLINGS))
def test_ps_or_kill_0_command_on_the_stored_pid_is_a_liveness_check(cli, tmp_path, name):
    src = PIDFILE_READ.replace("{test}", PS_SPELLINGS[name])
    assert ("LCK105", 12) in lint(cli, tmp_path, src)


def test_ps_of_a_pid_not_read_from_a_file_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import subprocess
        import sys

        parent = os.getppid()
        if subprocess.run(["ps", "-p", str(parent)]).returncode != 0:
            sys.exit("parent gone")
        for pid in sys.argv[1:]:
            out = subprocess.check_output("ps -o comm= -p %s" % pid, shell=True)
            if out.strip():
                print(pid, out.decode().strip())
        """,
    )
    assert "LCK105" not in {c for c, _l in found}


# --------------------------------------------------------------------------- one-line
# compound statements: `except OSError: sys.exit(0)` reads like the indented handler

ONE_LINE = {
    "flock, except on one line": (
        """
        import fcntl
        import os
        import sys

        try:
            fd = os.open("/var/lib/job/job.lock", os.O_CREAT | os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError: sys.exit(0)
        print("work")
        """,
        {("LCK401", 8), ("LCK406", 6)},
    ),
    "mkdir, try and except on one line each": (
        """
        import os
        import sys

        try: os.mkdir("/var/lib/job/lock")
        except FileExistsError: sys.exit(0)
        try:
            print("work")
        finally:
            os.rmdir("/var/lib/job/lock")
        """,
        {("LCK101", 4), ("LCK401", 5)},
    ),
    "if not acquire on one line": (
        """
        import sys

        from filelock import SoftFileLock

        lock = SoftFileLock("/var/lib/job/job.lock")
        if not lock.acquire(timeout=0): sys.exit()
        print("work")
        """,
        {("LCK401", 6)},
    ),
}


@pytest.mark.parametrize("name", sorted(ONE_LINE))
def test_one_line_busy_branch_reads_like_an_indented_one(cli, tmp_path, name):
    src, expected = ONE_LINE[name]
    found = lint(cli, tmp_path, src)
    assert expected <= found
    assert "LCK107" not in {c for c, _l in found}


def test_one_line_busy_branch_with_a_distinct_code_is_quiet(cli, tmp_path):
    src = ONE_LINE["mkdir, try and except on one line each"][0].replace("exit(0)", "exit(75)")
    found = lint(cli, tmp_path, src)
    assert ("LCK101", 4) in found
    assert not {c for c, _l in found} & {"LCK401", "LCK402", "LCK107"}


# --------------------------------------------------------------------------- lock objects
# whose acquire opens the file, under a wide handler that is the busy branch (LCK406)

OBJECT_LOCK_WIDE_HANDLER = {
    "FileLock.acquire, except Exception": (
        """
        import sys

        from filelock import FileLock

        lock = FileLock("/run/user/1000/sync.lock")
        try:
            lock.acquire(timeout=0)
        except Exception:
            print("sync already running")
            sys.exit(75)
        print("sync")
        """,
        7,
    ),
    "with FileLock, bare except": (
        """
        import sys

        import filelock

        try:
            with filelock.FileLock("/run/user/1000/sync.lock", timeout=0):
                print("sync")
        except:
            sys.exit(75)
        """,
        6,
    ),
    "portalocker.Lock, except Exception": (
        """
        import sys

        import portalocker

        try:
            with portalocker.Lock("/var/lib/sync/sync.lock", fail_when_locked=True, timeout=0):
                print("sync")
        except Exception as e:
            print("busy:", e)
            sys.exit(75)
        """,
        6,
    ),
}


@pytest.mark.parametrize("name", sorted(OBJECT_LOCK_WIDE_HANDLER))
def test_lock_object_under_a_wide_busy_handler_reads_open_failure_as_busy(cli, tmp_path, name):
    src, line = OBJECT_LOCK_WIDE_HANDLER[name]
    assert ("LCK406", line) in lint(cli, tmp_path, src)


@pytest.mark.parametrize(
    "name, contention",
    [
        ("FileLock.acquire, except Exception", "Timeout"),
        ("with FileLock, bare except", "filelock.Timeout"),
        ("portalocker.Lock, except Exception", "portalocker.exceptions.AlreadyLocked"),
    ],
)
def test_lock_object_whose_handler_catches_only_contention_is_quiet(
    cli, tmp_path, name, contention
):
    src, _line = OBJECT_LOCK_WIDE_HANDLER[name]
    src = src.replace("except Exception", f"except {contention}").replace(
        "except:", f"except {contention}:"
    )
    if contention == "Timeout":
        src = src.replace("import FileLock", "import FileLock, Timeout")
    assert "LCK406" not in {c for c, _l in lint(cli, tmp_path, src)}


# --------------------------------------------------------------------------- lock paths built
# by a helper of the same file, or from the script's name (LCK501, LCK502)

HELPER_PATHS = {
    "tempfile dir and a name argument": (
        """
        import fcntl
        import os
        import sys
        import tempfile


        def lock_path(name):
            return os.path.join(tempfile.gettempdir(), name + ".lock")


        f = open(lock_path("nightly-report"), "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        print("report")
        """,
        ("LCK502", 11),
    ),
    "beside the script, pathlib": (
        """
        import fcntl
        import sys
        from pathlib import Path


        class Job:
            def lock_file(self):
                return Path(__file__).resolve().parent / "job.lock"

            def run(self):
                with open(self.lock_file(), "a") as f:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        sys.exit(75)
                    print("work")


        Job().run()
        """,
        ("LCK501", 11),
    ),
    "/tmp and the script's name without its extension": (
        """
        import atexit
        import os
        import sys

        name = os.path.splitext(os.path.split(sys.argv[0])[-1])[0]
        pidfile = os.path.join("/tmp/", name + ".pid")
        if os.path.exists(pidfile):
            sys.exit("already running")
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
        atexit.register(os.remove, pidfile)
        """,
        ("LCK502", 9),
    ),
}


@pytest.mark.parametrize("name", sorted(HELPER_PATHS))
def test_lock_path_built_by_a_helper_or_from_the_script_name(cli, tmp_path, name):
    src, expected = HELPER_PATHS[name]
    assert expected in lint(cli, tmp_path, src)


@pytest.mark.parametrize(
    "name, private",
    [
        ("tempfile dir and a name argument", 'os.environ["XDG_RUNTIME_DIR"]'),
        ("beside the script, pathlib", 'Path("/var/lib/job")'),
        ("/tmp and the script's name without its extension", '"/var/lib/job/"'),
    ],
)
def test_helper_built_private_lock_path_is_quiet(cli, tmp_path, name, private):
    src, (code, _line) = HELPER_PATHS[name]
    src = (
        src.replace("tempfile.gettempdir()", private)
        .replace('Path(__file__).resolve().parent / "job.lock"', f'{private} / "job.lock"')
        .replace('"/tmp/"', private)
    )
    assert code not in {c for c, _l in lint(cli, tmp_path, src)}


# --------------------------------------------------------------------------- the open that
# gave `self.fh` is the one before the use in the same method

PLATFORM_BRANCHES = """
    import os
    import sys

    import fcntl

    LOCK_PATH = os.path.join(os.path.abspath(os.path.dirname(sys.argv[0])), "lock")


    class SingleInstance:
        def __init__(self):
            self.fh = None
            self.running = False
            if sys.platform == "win32":
                self.fh = os.open("C:/ProgramData/job/job.lock", os.O_CREAT | os.O_RDWR)
            else:
                try:
                    self.fh = open(LOCK_PATH, "w")
                    fcntl.lockf(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    {handler}


    if SingleInstance().running:
        sys.exit("already running")
"""


def test_lockf_path_comes_from_the_open_in_its_own_branch(cli, tmp_path):
    src = PLATFORM_BRANCHES.replace("{handler}", "self.running = True")
    found = lint(cli, tmp_path, src)
    assert ("LCK501", 17) in found  # beside the script, not the Windows path
    assert ("LCK406", 17) in found  # the same handler catches the open's errors


def test_handler_that_asks_whether_the_open_succeeded_is_not_lck406(cli, tmp_path):
    handler = "if self.fh is None:\n                        raise\n"
    handler += "                    self.running = True"
    found = lint(cli, tmp_path, PLATFORM_BRANCHES.replace("{handler}", handler))
    assert ("LCK501", 17) in found
    assert "LCK406" not in {c for c, _l in found}


# --------------------------------------------------------------------------- fasteners'
# decorators hold a lockf lock around each call (LCK502 where it lies)

FASTENERS_DECORATED = {
    "module attribute": """
        import fasteners


        @fasteners.interprocess_locked("/tmp/report.lock")
        def build_report():
            print("report")


        build_report()
    """,
    "imported name, write lock": """
        from fasteners import interprocess_write_locked


        @interprocess_write_locked("/tmp/report.lock")
        def build_report():
            print("report")


        build_report()
    """,
}


@pytest.mark.parametrize("name", sorted(FASTENERS_DECORATED))
def test_fasteners_decorator_is_a_lock(cli, tmp_path, name):
    assert ("LCK502", 4) in lint(cli, tmp_path, FASTENERS_DECORATED[name])


@pytest.mark.parametrize("name", sorted(FASTENERS_DECORATED))
def test_fasteners_decorator_in_a_private_directory_is_quiet(cli, tmp_path, name):
    src = FASTENERS_DECORATED[name].replace("/tmp/report.lock", "/var/lib/report/report.lock")
    assert lint(cli, tmp_path, src) == set()


# --------------------------------------------------------------------------- a helper raises
# its own error on the busy path and the caller's handler goes on (LCK401); a release that
# checks the PID is its own removes nothing in the losing run (no LCK203)

RAISED_TO_CALLER = """
    import errno
    import logging
    import os


    class LockExists(Exception):
        pass


    def take(path):
        try:
            with open(path, "x") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            if e.errno == errno.EEXIST:
                raise LockExists(path) from e
            raise


    def release(path):
        with open(path) as f:
            if int(f.read()) == os.getpid():
                os.unlink(path)


    def main():
        path = "/var/lib/bot/bot.pid"
        try:
            take(path)
        except LockExists:
            logging.error("bot already running")
        else:
            print("bot")
        finally:
            release(path)


    if __name__ == "__main__":
        main()
"""


def test_custom_error_raised_on_the_busy_path_and_logged_by_the_caller(cli, tmp_path):
    found = lint(cli, tmp_path, RAISED_TO_CALLER)
    assert ("LCK101", 12) in found
    assert ("LCK401", 31) in found  # logging.error, nothing configured: exits 0
    assert "LCK203" not in {c for c, _l in found}  # release checks the PID is its own


def test_custom_error_that_the_caller_turns_into_a_skip_code_is_quiet(cli, tmp_path):
    src = RAISED_TO_CALLER.replace(
        'logging.error("bot already running")', 'raise SystemExit("bot already running")'
    )
    found = lint(cli, tmp_path, src)
    assert ("LCK101", 12) in found
    assert not {c for c, _l in found} & {"LCK401", "LCK402"}


def test_release_without_the_pid_check_in_the_caller_finally_is_lck203(cli, tmp_path):
    src = RAISED_TO_CALLER.replace(
        "            if int(f.read()) == os.getpid():\n                os.unlink(path)",
        "            f.read()\n        os.unlink(path)",
    )
    assert "LCK203" in {c for c, _l in lint(cli, tmp_path, src)}


# --------------------------------------------------------------------------- `if e.errno !=
# EEXIST: raise`, then the clash itself retries, times out or exits (LCK101)

EEXIST_GUARD = """
    import errno
    import os
    import sys
    import time

    LOCK = "/var/lib/export/export.lock"


    def acquire(timeout=60):
        start = time.time()
        while True:
            try:
                return os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_RDWR)
            except OSError as e:
                if e.errno != errno.EEXIST:
                    raise
                {clash}


    fd = acquire()
    try:
        print("export")
    finally:
        os.close(fd)
        os.unlink(LOCK)
"""


@pytest.mark.parametrize(
    "clash",
    [
        'if time.time() - start > timeout:\n                    raise RuntimeError("timeout")\n'
        "                time.sleep(1)",
        'sys.exit("export already running")',
    ],
)
def test_clash_after_an_eexist_guard_is_an_existence_lock(cli, tmp_path, clash):
    found = lint(cli, tmp_path, EEXIST_GUARD.replace("{clash}", clash))
    assert ("LCK101", 13) in found


def test_eexist_guard_with_nothing_after_accepts_the_directory(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import errno
        import os


        def ensure_dir(path):
            try:
                os.makedirs(path)
            except OSError as e:
                if e.errno != errno.EEXIST:
                    raise


        ensure_dir("/var/lib/export/out")
        with open("/var/lib/export/out/data.csv", "w") as f:
            f.write("a,b\\n")
        """,
    )
    assert "LCK101" not in {c for c, _l in found}
