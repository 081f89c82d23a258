"""Python frontend: lock recognition, busy branches and exit status, through analyze_text."""

from __future__ import annotations

import textwrap

import pytest

from lockcheck.engine import analyze_text


def run(src: str, path: str = "/srv/jobs/job.py"):
    return analyze_text(path, textwrap.dedent(src).lstrip("\n"), "python")


def found(src: str, path: str = "/srv/jobs/job.py") -> list[tuple[str, int]]:
    return [(f.code, f.span.line) for f in run(src, path)[1]]


def codes(src: str, path: str = "/srv/jobs/job.py") -> set[str]:
    return {c for c, _ in found(src, path)}


# --------------------------------------------------------------------------- existence locks

MKDIR_LOCK = """
    #!/usr/bin/env python3
    import os
    import sys

    LOCK = "/var/lib/backup/backup.lock"


    def main():
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            print("already running")
            sys.exit(0)
        try:
            do_backup()
        finally:
            os.rmdir(LOCK)


    if __name__ == "__main__":
        main()
"""


def test_mkdir_guarded_by_file_exists_error_is_an_existence_lock():
    got = found(MKDIR_LOCK)
    assert ("LCK101", 10) in got
    assert ("LCK401", 13) in got
    # released in finally, installed after the busy branch: neither LCK202 nor LCK203
    assert not {"LCK202", "LCK203", "LCK502"} & {c for c, _ in got}


def test_existence_lock_in_synced_folder_is_lck102():
    src = """
        import os, sys
        LOCK = os.path.expanduser("~/Dropbox/jobs/sync.lock")
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            sys.exit(75)
        try:
            sync()
        finally:
            os.remove(LOCK)
    """
    got = found(src)
    assert ("LCK102", 4) in got
    assert "LCK101" not in {c for c, _ in got}


@pytest.mark.parametrize(
    "create, mech",
    [
        ('with open(LOCK, "x") as fh:\n        fh.write(str(os.getpid()))', "open"),
        ('fh = io.open(LOCK, "xb")', "open"),
        ('Path(LOCK).open("x+").close()', "Path.open"),
        ("Path(LOCK).touch(exist_ok=False)", "touch"),
        ("os.makedirs(LOCK)", "makedirs"),
        ("Path(LOCK).mkdir()", "Path.mkdir"),
        ('os.symlink(f"pid-{os.getpid()}", LOCK)', "symlink"),
        ("os.link(__file__, LOCK)", "link"),
        ("os.open(LOCK, FLAGS)", "os.open"),
    ],
)
def test_existence_lock_shapes(create, mech):
    src = f"""
import io
import os
import sys
from pathlib import Path

FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
LOCK = "/var/lib/app/app.lock"

try:
    {create}
except OSError:
    print("busy")
    sys.exit(1)
"""
    facts, findings = analyze_text("/srv/jobs/job.py", src, "python")
    assert ("LCK101", 11) in [(f.code, f.span.line) for f in findings], mech
    assert facts.acquires[0].path.render() == "/var/lib/app/app.lock"


def test_flags_in_a_local_variable():
    src = """
        import os, sys

        def take(path):
            flags = os.O_CREAT | os.O_EXCL | os.O_RDWR
            try:
                return os.open(path, flags)
            except FileExistsError:
                sys.exit(0)

        take("/var/lib/x/x.lock")
    """
    got = found(src)
    assert ("LCK101", 6) in got
    assert ("LCK401", 8) in got


def test_exclusive_create_of_output_without_guard_is_not_a_lock():
    src = """
        import os
        import tempfile

        out = "/srv/reports/today.csv"
        os.makedirs("/srv/reports", exist_ok=True)
        with open(out, "x") as fh:
            fh.write("a,b\\n")
        fd, tmp = tempfile.mkstemp()
        with open("/srv/reports/summary.txt", "w") as fh:
            fh.write("ok")
        try:
            os.mkdir("/srv/reports/cache")
        except FileExistsError:
            pass
    """
    assert found(src) == []


def test_soft_file_lock_is_existence_based():
    src = """
        import sys
        from filelock import SoftFileLock, Timeout

        try:
            with SoftFileLock("/var/lib/app/soft.lock", timeout=0):
                work()
        except Timeout:
            sys.exit()
    """
    got = found(src)
    assert ("LCK101", 5) in got
    assert ("LCK401", 8) in got
    assert "LCK202" not in {c for c, _ in got}


# --------------------------------------------------------------------------- probes


def test_fixed_name_probe_is_lck301_not_a_lock():
    src = """
        import os

        def writable(d):
            probe = os.path.join(d, ".probe")
            try:
                os.mkdir(probe)
                os.rmdir(probe)
            except OSError:
                return False
            return True
    """
    got = found(src)
    assert got == [("LCK301", 6)]


def test_probe_with_open_and_remove_gets_a_pid_fix():
    src = """
        import os

        def usable():
            try:
                open("/srv/share/.write-test", "w").close()
                os.remove("/srv/share/.write-test")
                return True
            except OSError:
                return False
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK301", 5)]
    fix = findings[0].fix
    assert fix is not None and len(fix.edits) == 2
    assert all("os.getpid()" in e.content for e in fix.edits)


def test_probe_with_per_process_name_is_fine():
    src = """
        import os

        def usable(d):
            p = os.path.join(d, f".probe.{os.getpid()}")
            try:
                os.mkdir(p)
                os.rmdir(p)
            except OSError:
                return False
            return True
    """
    assert found(src) == []


# --------------------------------------------------------------------------- check-then-create


def test_exists_then_open_w_is_lck103_with_pid_check():
    src = """
        import os
        import sys
        import psutil

        PIDFILE = "/var/lib/app/app.pid"

        if os.path.exists(PIDFILE):
            with open(PIDFILE) as fh:
                pid = int(fh.read())
            if psutil.pid_exists(pid):
                print("already running")
                sys.exit(0)
            os.remove(PIDFILE)

        with open(PIDFILE, "w") as fh:
            fh.write(str(os.getpid()))
        try:
            work()
        finally:
            os.remove(PIDFILE)
    """
    got = found(src)
    assert ("LCK103", 15) in got
    assert ("LCK105", 10) in got
    assert ("LCK106", 13) in got
    assert ("LCK401", 12) in got


def test_negated_exists_guarding_touch_with_else_busy():
    src = """
        from pathlib import Path
        import sys

        MARK = Path("/var/lib/app") / "job.running"


        def main():
            if not MARK.exists():
                MARK.touch()
                try:
                    work()
                finally:
                    MARK.unlink()
            else:
                print("running")
                return 0
            return 0


        if __name__ == "__main__":
            sys.exit(main())
    """
    got = found(src)
    assert ("LCK103", 9) in got
    assert ("LCK401", 16) in got


def test_run_once_marker_is_not_a_lock():
    src = """
        import os, sys
        DONE = "/var/lib/app/migrated"
        if os.path.exists(DONE):
            sys.exit(0)
        migrate()
        open(DONE, "w").close()
    """
    assert found(src) == []


def test_precreating_a_flock_file_is_not_check_then_create():
    src = """
        import fcntl, os, sys
        LOCK = "/var/lib/app/app.lock"
        if not os.path.exists(LOCK):
            open(LOCK, "w").close()
        fh = open(LOCK, "r+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        work()
        os.remove(LOCK)
    """
    got = codes(src)
    assert "LCK103" not in got
    assert "LCK201" in got


# --------------------------------------------------------------------------- flock


REFERENCE = """
    import fcntl
    import logging
    import os
    import sys

    RUNTIME = os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    LOCK_PATH = os.path.join(RUNTIME, "sync.lock")
    log = logging.getLogger("sync")
    log.addHandler(logging.FileHandler("/var/log/sync.log"))


    def main():
        fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("another run holds the lock, skipping")
            sys.exit(75)
        run()


    if __name__ == "__main__":
        main()
"""


def test_reference_pattern_is_clean():
    facts, findings = run(REFERENCE)
    assert findings == []
    acq = facts.acquires[0]
    assert acq.mechanism == "fcntl.flock" and acq.nonblocking and not acq.truncating
    assert acq.busy is not None and acq.busy.status == 75
    assert acq.open_span is not None and acq.open_span.line == 13


def test_flock_on_truncating_open_in_tmp_and_deleted_in_finally():
    src = """
        import fcntl, os, sys

        LOCK = "/tmp/job.lock"

        f = open(LOCK, "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except IOError:
            print("busy")
            sys.exit()
        try:
            work()
        finally:
            os.remove(LOCK)
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert ("LCK502", 5) in got
    assert ("LCK401", 10) in got
    assert ("LCK201", 14) in got
    assert "truncates" in next(f.message for f in findings if f.code == "LCK502")
    drop = next(f for f in findings if f.code == "LCK201").fix
    assert drop is not None
    fixed = src_apply(facts.text, drop.edits)
    assert "os.remove" not in fixed and "finally:\n    pass\n" in fixed


def src_apply(text, edits):
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.content + text[e.end :]
    return text


def test_aliases_and_from_imports():
    src = """
        import fcntl as f
        from fcntl import LOCK_EX, LOCK_NB
        import subprocess


        def lock_or_quit(path):
            handle = open(path, "a+")
            try:
                f.flock(handle.fileno(), LOCK_EX | LOCK_NB)
            except OSError:
                quit()
            handle.truncate()
            subprocess.Popen(["worker"], close_fds=False)
            return handle


        lock_or_quit("/dev/shm/worker.lock")
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert ("LCK502", 7) in got  # "a+" then truncate(): truncating
    assert ("LCK401", 11) in got
    assert ("LCK405", 13) in got
    assert facts.acquires[0].path.render() == "/dev/shm/worker.lock"
    # quit() without `import sys`: no status fix
    assert next(f for f in findings if f.code == "LCK401").fix is None


def test_from_flock_import_and_lockf():
    src = """
        from fcntl import lockf, LOCK_EX, LOCK_NB
        import sys

        fh = open("/mnt/nfs/shared/app.lock", "a")
        try:
            lockf(fh, LOCK_EX | LOCK_NB)
        except BlockingIOError:
            sys.exit(3)
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK104", 4)]
    assert facts.acquires[0].kind.value == "lockf"


def test_local_shadowing_function_is_not_the_library():
    src = """
        import sys

        def flock(fd, op):
            return True

        fh = open("/tmp/a.lock", "w")
        try:
            flock(fh, 2)
        except OSError:
            sys.exit(0)
    """
    assert found(src) == []


def test_local_module_beside_script_shadows_library(tmp_path):
    (tmp_path / "fcntl.py").write_text("def flock(*a):\n    pass\nLOCK_EX = LOCK_NB = 0\n")
    script = tmp_path / "job.py"
    src = textwrap.dedent(
        """
        import fcntl, sys
        fh = open("/tmp/a.lock", "w")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit(0)
        """
    )
    script.write_text(src)
    _facts, findings = analyze_text(str(script), src, "python")
    assert findings == []
    other = str(tmp_path / "sub" / "job.py")
    _facts, findings = analyze_text(other, src, "python")
    assert {f.code for f in findings} == {"LCK401", "LCK502"}


def test_inode_recheck_protocol_may_delete():
    src = """
        import fcntl
        import os
        import sys

        path = "/srv/app/run/app.lock"
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                sys.exit(75)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
            os.close(fd)
        try:
            work()
        finally:
            os.unlink(path)
    """
    assert found(src) == []


def test_flock_kept_file_and_atexit_removal():
    src = """
        import atexit
        import fcntl
        import os
        import sys

        LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.lock")
        fh = open(LOCK, "a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        atexit.register(os.remove, LOCK)
    """
    got = found(src)
    assert ("LCK501", 7) in got
    assert ("LCK201", 12) in got
    assert "LCK203" not in {c for c, _ in got}  # registered after the busy branch


def test_filelock_alias_timeout_and_atexit_before_acquire():
    src = """
        import atexit
        import os
        import sys
        from filelock import FileLock as FL, Timeout

        lock = FL("/tmp/report.lock", timeout=0)
        atexit.register(os.remove, "/tmp/report.lock")
        try:
            with lock:
                build()
        except Timeout:
            sys.exit(0)
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert ("LCK203", 7) in got
    assert ("LCK201", 7) in got
    assert ("LCK401", 12) in got
    assert ("LCK502", 6) in got
    assert facts.acquires[0].nonblocking


def test_fasteners_and_portalocker():
    src = """
        import os
        import sys
        import fasteners
        import portalocker

        lk = fasteners.InterProcessLock("/mnt/nfs/share/jobs.lock")
        if not lk.acquire(blocking=False):
            with open("/var/log/jobs.log", "a") as log:
                log.write("busy\\n")
            sys.exit(0)

        try:
            with portalocker.Lock("/var/lib/app/x.lock", fail_when_locked=True):
                go()
        except portalocker.exceptions.AlreadyLocked:
            os._exit(0)
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert ("LCK104", 6) in got
    assert ("LCK402", 10) in got  # durable: appended to a log file
    assert ("LCK401", 16) in got
    fix = next(f for f in findings if f.code == "LCK401").fix
    assert fix is not None and fix.edits[0].content == "os._exit(75)"
    kinds = sorted(a.kind.value for a in facts.acquires)
    assert kinds == ["flock", "lockf"]


# --------------------------------------------------------------------------- exit status


@pytest.mark.parametrize(
    "ending, status, fixed",
    [
        ("sys.exit()", 0, "sys.exit(75)"),
        ("sys.exit(0)", 0, "sys.exit(75)"),
        ("exit()", 0, "sys.exit(75)"),
        ("quit()", 0, "sys.exit(75)"),
        ("os._exit(0)", 0, "os._exit(75)"),
        ("raise SystemExit", 0, "raise SystemExit(75)"),
        ("raise SystemExit(0)", 0, "raise SystemExit(75)"),
        ('sys.exit("busy")', 1, None),
        ('raise SystemExit("busy")', 1, None),
        ("sys.exit(75)", 75, None),
        ("sys.exit(os.EX_TEMPFAIL)", 75, None),
        ("raise RuntimeError('busy')", 1, None),
    ],
)
def test_busy_exit_status(ending, status, fixed):
    src = f"""import fcntl
import os
import sys

fd = os.open("/var/lib/app/a.lock", os.O_RDWR | os.O_CREAT)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    print("busy")
    {ending}
work()
"""
    facts, findings = analyze_text("job.py", src, "python")
    busy = facts.acquires[0].busy
    assert busy.status == status and busy.ends_run and busy.span.line == 10
    s401 = [f for f in findings if f.code == "LCK401"]
    if status == 0:
        assert [f.span.line for f in s401] == [10]
        if fixed:
            assert src_apply(src, s401[0].fix.edits).splitlines()[9].strip() == fixed
    else:
        assert s401 == []


@pytest.mark.parametrize(
    "call, ret, expect",
    [
        ("main()", "return", True),
        ("main()", "return 1", True),  # value ignored: exit 0
        ("sys.exit(main())", "return", True),
        ("sys.exit(main())", "return 0", True),
        ("sys.exit(main())", "return 1", False),
        ("raise SystemExit(main())", "return 75", False),
    ],
)
def test_return_from_entry_point(call, ret, expect):
    src = f"""import os
import sys


def main():
    try:
        os.mkdir("/var/lib/app/lockdir")
    except FileExistsError:
        print("busy")
        {ret}
    try:
        work()
    finally:
        os.rmdir("/var/lib/app/lockdir")


if __name__ == "__main__":
    {call}
"""
    _facts, findings = analyze_text("job.py", src, "python")
    got = [(f.code, f.span.line) for f in findings]
    assert (("LCK401", 10) in got) is expect
    assert ("LCK101", 7) in got
    if expect and call.startswith("sys.exit") and ret == "return":
        fix = next(f for f in findings if f.code == "LCK401").fix
        assert src_apply(src, fix.edits).splitlines()[9].strip() == "return 75"


def test_return_from_helper_follows_to_the_caller():
    src = """
        import fcntl
        import sys


        def try_lock(path):
            fh = open(path, "a")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            return fh


        def main():
            lock = try_lock("/var/lib/app/a.lock")
            if lock is None:
                print("busy")
                return
            work()


        main()
    """
    assert found(src) == [("LCK401", 18)]


def test_helper_return_whose_caller_goes_on_is_not_a_skip():
    src = """
        import fcntl
        import sys


        def try_lock(fh):
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            note("locked")


        def main():
            fh = open("/var/lib/app/a.lock", "a")
            try_lock(fh)
            work()


        main()
    """
    assert found(src) == []


HELPER_EXIT = """
    import fcntl
    import logging
    import sys

    {setup}


    class Job:
        def fail(self, msg):
            print(msg, file=sys.stderr)
            sys.exit(2)

        def take(self, fh):
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                {call}
            return fh


    def die(msg):
        logging.info(msg)
        {ending}


    def main():
        Job().take(open("/var/lib/app/a.lock", "a"))


    main()
"""


@pytest.mark.parametrize(
    ("call", "ending", "setup", "expected"),
    [
        # a helper that always exits: its status is the branch's, the finding is the call
        ('die("busy")', "sys.exit(0)", "", [("LCK401", 17)]),
        ('die("busy")', "raise SystemExit", "", [("LCK401", 17)]),
        ('die("busy")', "sys.exit(75)", "", []),
        # it logs to a file configured in the script: recorded, still status 0
        (
            'die("busy")',
            "sys.exit(0)",
            'logging.basicConfig(filename="/var/log/a.log")',
            [("LCK402", 17)],
        ),
        ('self.fail("busy")', "sys.exit(0)", "", []),  # the method exits 2
        # a helper that exits only on one path decides nothing by itself
        ('die("busy")', "if msg:\n            sys.exit(0)", "", []),
    ],
)
def test_busy_branch_ending_in_the_scripts_own_exit_helper(call, ending, setup, expected):
    src = HELPER_EXIT.format(call=call, ending=ending, setup=setup)
    assert found(src) == expected


def test_busy_branch_falling_off_the_end():
    src = """
        import fcntl
        fh = open("/var/lib/app/a.lock", "a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            work()
        except BlockingIOError:
            print("busy")
    """
    assert found(src) == [("LCK401", 7)]


def test_retry_loop_is_not_a_skip():
    src = """
        import fcntl, time
        fh = open("/var/lib/app/a.lock", "a")
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(5)
                continue
        work()
    """
    assert found(src) == []


def test_durable_logging_basicconfig_makes_lck402():
    src = """
        import logging, os, sys
        logging.basicConfig(filename="/var/log/job.log", level=logging.INFO)
        try:
            os.mkdir("/var/lib/app/lockdir")
        except FileExistsError:
            logging.info("busy, skipping")
            sys.exit(0)
        try:
            work()
        finally:
            os.rmdir("/var/lib/app/lockdir")
    """
    got = found(src)
    assert ("LCK402", 7) in got
    assert "LCK401" not in {c for c, _ in got}


def test_print_alone_is_not_durable():
    src = """
        import logging, os, sys
        logging.basicConfig(level=logging.INFO)
        try:
            os.mkdir("/var/lib/app/lockdir")
        except FileExistsError:
            logging.info("busy")
            print("busy")
            sys.exit(0)
        try:
            work()
        finally:
            os.rmdir("/var/lib/app/lockdir")
    """
    assert ("LCK401", 8) in found(src)


def test_if_not_acquire_blocking_false():
    src = """
        import sys
        from filelock import FileLock

        lock = FileLock("/var/lib/app/x.lock")
        if not lock.acquire(blocking=False):
            print("busy")
            sys.exit(0)
        try:
            work()
        finally:
            lock.release()
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK401", 7)]
    assert facts.acquires[0].span.line == 5


# --------------------------------------------------------------------------- release coverage


def test_class_wrapping_lock_released_without_finally():
    src = """
        import os
        import sys


        class PidLock:
            def __init__(self, path):
                self.path = path

            def acquire(self):
                try:
                    self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR)
                except FileExistsError:
                    return False
                return True

            def release(self):
                os.close(self.fd)
                os.unlink(self.path)


        def main():
            lock = PidLock("/var/lib/app/rep.lock")
            if not lock.acquire():
                print("busy")
                return
            do_work()
            lock.release()


        if __name__ == "__main__":
            main()
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert ("LCK101", 11) in got
    assert ("LCK202", 11) in got
    assert ("LCK401", 25) in got
    assert facts.acquires[0].path.render() == "/var/lib/app/rep.lock"


def test_class_used_as_context_manager_releases_on_every_exit():
    src = """
        import os
        import sys


        class DirLock:
            def __init__(self, path="/var/lib/app/run.lock"):
                self.path = path

            def __enter__(self):
                try:
                    os.mkdir(self.path)
                except FileExistsError:
                    sys.exit(75)
                return self

            def __exit__(self, *exc):
                os.rmdir(self.path)


        with DirLock():
            work()
    """
    got = found(src)
    assert ("LCK101", 11) in got
    assert "LCK202" not in {c for c, _ in got}


def test_release_in_finally_but_acquire_inside_try_is_lck203():
    src = """
        import os, sys
        LOCK = "/var/lib/app/x.lock"
        try:
            with open(LOCK, "x") as fh:
                fh.write(str(os.getpid()))
            work()
        except FileExistsError:
            print("busy")
            sys.exit(1)
        finally:
            os.remove(LOCK)
    """
    got = found(src)
    assert ("LCK203", 3) in got
    assert ("LCK101", 4) in got


def test_release_via_registered_atexit_function():
    src = """
        import atexit, os, sys
        LOCK = "/var/lib/app/x.lock"

        def cleanup():
            os.remove(LOCK)

        try:
            os.close(os.open(LOCK, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            sys.exit(75)
        atexit.register(cleanup)
        work()
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK101", 8)]
    rm = facts.removals[0]
    assert rm.via == "atexit" and rm.hook_span.line == 11


# --------------------------------------------------------------------------- pids, kills


def test_kill_stored_pid_and_liveness():
    src = """
        import os
        import signal
        import sys
        from pathlib import Path

        PIDFILE = Path("/var/lib/app/app.pid")

        def holder_alive():
            pid = int(PIDFILE.read_text())
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            return True

        if PIDFILE.exists() and holder_alive():
            sys.exit(75)
        if PIDFILE.exists():
            os.kill(int(PIDFILE.read_text()), signal.SIGTERM)
    """
    got = found(src)
    assert ("LCK105", 11) in got
    assert ("LCK108", 19) in got


def test_status_report_of_pid_is_not_flagged():
    src = """
        import os

        def status(pidfile):
            with open(pidfile) as fh:
                pid = int(fh.read())
            try:
                os.kill(pid, 0)
                print("running")
            except OSError:
                print("stopped")

        status("/var/lib/app/app.pid")
    """
    facts, findings = run(src)
    assert findings == []
    assert len(facts.liveness) == 1 and not facts.liveness[0].consequential


def test_kill_of_child_pid_is_not_a_stored_pid():
    src = """
        import os, signal, subprocess
        p = subprocess.Popen(["sleep", "10"])
        os.kill(p.pid, signal.SIGTERM)
        p.wait()
    """
    assert found(src) == []


def test_age_guarded_removal_is_stale_breaker():
    src = """
        import os, sys, time
        LOCK = "/var/lib/app/x.lock"
        if os.path.exists(LOCK) and time.time() - os.path.getmtime(LOCK) > 3600:
            os.remove(LOCK)
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            sys.exit(75)
        try:
            work()
        finally:
            os.remove(LOCK)
    """
    got = found(src)
    assert ("LCK106", 4) in got
    assert ("LCK101", 6) in got


# --------------------------------------------------------------------------- removals


def test_glob_removal_of_foreign_locks():
    src = """
        import glob
        import os
        from pathlib import Path

        for f in glob.glob("/tmp/*.lock"):
            os.remove(f)
        for p in Path("/var/tmp").glob("*.pid"):
            p.unlink()
        os.remove("/srv/app/package-lock.json")
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK107", 6), ("LCK107", 8)]
    assert facts.removals[0].is_glob and facts.removals[0].path.render() == "/tmp/*.lock"


def test_conditional_removal_is_not_foreign_removal():
    src = """
        import os, sys
        if "--force" in sys.argv:
            os.remove("/var/lib/other/job.lock")
    """
    assert found(src) == []


# --------------------------------------------------------------------------- background


def test_popen_in_existence_lock_scope_not_waited():
    src = """
        import os, subprocess, sys
        LOCK = "/var/lib/app/x.lock"
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            sys.exit(75)
        try:
            subprocess.Popen(["long-job"])
            waited = subprocess.Popen(["short"])
            waited.wait()
            with subprocess.Popen(["other"]) as p:
                pass
            subprocess.run(["sync"])
        finally:
            os.rmdir(LOCK)
    """
    got = found(src)
    assert [x for x in got if x[0] == "LCK405"] == [("LCK405", 8)]


def test_flock_child_with_default_close_fds_is_fine_fork_is_not():
    src = """
        import fcntl, os, subprocess, sys
        fd = os.open("/var/lib/app/a.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        subprocess.Popen(["daemon"])
        subprocess.Popen(["daemon2"], pass_fds=(fd,))
        if os.fork() == 0:
            serve()
    """
    got = [x for x in found(src) if x[0] == "LCK405"]
    assert got == [("LCK405", 8), ("LCK405", 9)]


# --------------------------------------------------------------------------- placement


@pytest.mark.parametrize(
    "expr, rendered, code",
    [
        ('os.path.join(os.path.dirname(__file__), "run.lock")', "<script_dir>/run.lock", "LCK501"),
        ('Path(__file__).parent / "run.lock"', "<script_dir>/run.lock", "LCK501"),
        ('Path(__file__).with_suffix(".lock")', "<script_dir>/<script_name>.lock", "LCK501"),
        ('os.path.join(os.getcwd(), "run.lock")', "<cwd>/run.lock", "LCK501"),
        ('"run.lock"', "run.lock", "LCK501"),
        ('os.path.join(tempfile.gettempdir(), "run.lock")', "<tmpdir>/run.lock", "LCK502"),
        ('f"/tmp/{getpass.getuser()}-job.lock"', "/tmp/<user>-job.lock", "LCK502"),
        ('"/var/tmp/%s.lock" % sys.argv[1]', "/var/tmp/<arg>.lock", "LCK502"),
        ('"/run/lock/{}.lock".format("job")', "/run/lock/job.lock", "LCK502"),
        ('os.path.expanduser("~/Dropbox/x.lock")', "~/Dropbox/x.lock", "LCK102"),
        (
            'os.environ.get("SHARED_DIR", "/srv") + "/x.lock"',
            "${SHARED_DIR:-/srv}/x.lock",
            "LCK102",
        ),
        (
            'os.path.join(os.environ["XDG_RUNTIME_DIR"], "x.lock")',
            "${XDG_RUNTIME_DIR}/x.lock",
            None,
        ),
        ('f"/tmp/job.{os.getpid()}.lock"', "/tmp/job.<unique>.lock", None),
        ("Path.home() / '.locks' / 'x.lock'", "~/.locks/x.lock", None),
        ("compute_path()", "lock_path", None),
    ],
)
def test_path_resolution(expr, rendered, code):
    src = f"""import getpass
import os
import sys
import tempfile
from pathlib import Path


def acquire(lock_path):
    try:
        os.mkdir(lock_path)
    except FileExistsError:
        sys.exit(75)


acquire({expr})
"""
    facts, findings = analyze_text("/srv/jobs/job.py", src, "python")
    assert facts.acquires[0].path.render() == rendered
    extra = {f.code for f in findings} - {"LCK101"}
    assert extra == ({code} if code else set())


def test_several_call_sites_stay_unknown_and_defaults_resolve():
    src = """
        import os, sys

        def acquire(lock_path="/tmp/default.lock"):
            try:
                os.mkdir(lock_path)
            except FileExistsError:
                sys.exit(75)

        acquire()
    """
    facts, _ = run(src)
    assert facts.acquires[0].path.render() == "/tmp/default.lock"
    src2 = src.replace("acquire()\n", "acquire()\n        acquire('/var/lib/b.lock')\n")
    facts, findings = run(src2)
    # judged for each call-site value: the default in /tmp and the private one
    assert sorted(a.path.render() for a in facts.acquires) == [
        "/tmp/default.lock",
        "/var/lib/b.lock",
    ]
    assert [(f.code, f.span.line) for f in findings if f.code == "LCK502"] == [("LCK502", 5)]


def test_each_call_site_value_is_released_by_its_own_removal():
    src = """
        import os, sys

        def locked(lock_path, job):
            try:
                os.mkdir(lock_path)
            except FileExistsError:
                sys.exit(75)
            try:
                job()
            finally:
                os.rmdir(lock_path)

        locked("/var/lib/app/a.lock", print)
        locked(os.path.expanduser("~/Dropbox/b.lock"), print)
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK101", 5), ("LCK102", 5)]
    assert all(a.released and a.release_on_every_exit for a in facts.acquires)


def test_makedirs_shared_subdirectory_and_dirs_made():
    src = """
        import fcntl, os, sys
        os.makedirs("/tmp/myjobs", exist_ok=True)
        fh = open("/tmp/myjobs/sync.lock", "a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit(75)
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK502", 3)]
    assert [p.render() for p in facts.dirs_made] == ["/tmp/myjobs"]


# --------------------------------------------------------------------------- comments


def test_noqa_comments_are_recorded_and_honoured():
    src = """
        import os, sys
        try:
            os.mkdir("/tmp/x.lock")  # noqa: LCK502
        except FileExistsError:
            sys.exit(75)
    """
    facts, findings = run(src)
    assert facts.comments[3] == "# noqa: LCK502"
    assert [(f.code, f.span.line) for f in findings] == [("LCK101", 3)]


def test_non_ascii_offsets_are_str_offsets():
    src = "# résumé ünïcode\nimport os, sys\nL = '/var/lib/é/x.lock'\ntry:\n    os.mkdir(L)\nexcept OSError:\n    sys.exit()\n"
    facts, findings = analyze_text("job.py", src, "python")
    f401 = next(f for f in findings if f.code == "LCK401")
    assert src[f401.span.start : f401.span.end] == "sys.exit()"
    acq = facts.acquires[0]
    assert src[acq.span.start : acq.span.end] == "os.mkdir(L)"
    assert acq.span.col == 5


def test_flock_guard_class_deleting_in_exit_method():
    src = """
        import fcntl
        import os
        import sys
        from django.core.files import locks


        class FlockGuard:
            def __init__(self, name):
                self.path = os.path.join("/var/lock", name + ".lock")

            def __enter__(self):
                self.fh = open(self.path, "w")
                try:
                    fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    sys.exit(0)
                return self

            def __exit__(self, *exc):
                fcntl.flock(self.fh, fcntl.LOCK_UN)
                self.fh.close()
                os.unlink(self.path)


        with FlockGuard("nightly"):
            work()

        with open("/var/lib/app/d.lock", "ab") as fh:
            locks.lock(fh, locks.LOCK_EX)
            go()
    """
    facts, findings = run(src)
    got = [(f.code, f.span.line) for f in findings]
    assert got == [("LCK502", 12), ("LCK401", 16), ("LCK201", 22)]
    assert facts.removals[0].via == "exit-method"
    assert [a.mechanism for a in facts.acquires] == ["fcntl.flock", "django.core.files.locks.lock"]
    assert facts.acquires[1].path.render() == "/var/lib/app/d.lock"


def test_child_started_after_the_release_is_fine():
    src = """
        import os, subprocess, sys
        LOCK = "/var/lib/app/x.lock"
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            sys.exit(75)
        try:
            work()
        finally:
            os.rmdir(LOCK)
        subprocess.Popen(["notify-send", "done"])
    """
    assert "LCK405" not in codes(src)


def test_pid_file_with_kill_zero_in_try_else():
    src = """
        import os
        import sys

        PIDFILE = "/var/run/myjob/myjob.pid"


        def main():
            if os.path.isfile(PIDFILE):
                pid = int(open(PIDFILE).read().strip())
                try:
                    os.kill(pid, 0)
                except OSError:
                    pass
                else:
                    print("still running")
                    return 1
            with open(PIDFILE, "w") as fh:
                fh.write(str(os.getpid()))
            work()
            os.unlink(PIDFILE)


        sys.exit(main())
    """
    facts, findings = run(src)
    # the holder judged dead (`except OSError: pass`) falls through to the overwrite: a stale
    # lock overwritten (LCK106), as the shell frontend reads `kill -0 ... && exit; echo $$ > F`
    assert [(f.code, f.span.line) for f in findings] == [
        ("LCK105", 11),
        ("LCK103", 17),
        ("LCK106", 17),
        ("LCK202", 17),
    ]
    acq = facts.acquires[0]
    assert acq.check_then_create and acq.test_span.line == 8
    assert acq.busy.status == 1 and acq.busy.span.line == 16


def test_mtime_identity_check_is_not_an_age_test():
    src = """
        import os
        from pathlib import Path

        def replace_if_unchanged(lock_file, mtime_before):
            current = os.lstat(lock_file)
            if current.st_mtime == mtime_before:
                Path(lock_file).unlink()

        replace_if_unchanged("/var/lib/app/x.lock", 0.0)
    """
    facts, _ = run(src)
    assert [r.stale_guard for r in facts.removals] == [None]


def test_age_from_a_variable_is_an_age_test():
    src = """
        import os, time
        LOCK = "/var/lib/app/x.lock"
        age = time.time() - os.stat(LOCK).st_mtime
        if age > 600:
            os.unlink(LOCK)
    """
    assert found(src) == [("LCK106", 5)]


def test_psutil_process_from_pid_file():
    src = """
        import sys
        import psutil

        PIDFILE = "/var/lib/app/app.pid"
        with open(PIDFILE) as fh:
            old = psutil.Process(int(fh.read()))
        old.terminate()
        try:
            psutil.Process(int(open(PIDFILE).read()))
            sys.exit(75)
        except psutil.NoSuchProcess:
            pass
    """
    got = found(src)
    assert ("LCK108", 7) in got
    assert ("LCK105", 9) in got


def test_release_method_in_finally_around_the_busy_exit():
    src = """
        import os
        import sys


        class PidLock:
            def __init__(self, path):
                self.path = path

            def acquire(self):
                try:
                    os.close(os.open(self.path, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    return False
                return True

            def release(self):
                os.unlink(self.path)


        lock = PidLock("/var/lib/app/job.lock")
        try:
            if not lock.acquire():
                sys.exit(75)
            work()
        finally:
            lock.release()
    """
    got = found(src)
    assert ("LCK203", 21) in got
    assert ("LCK101", 11) in got
    assert "LCK202" not in {c for c, _ in got}


def test_removal_in_a_function_is_unconditional_only_when_always_called():
    src = """
        import os

        def break_lock():
            os.remove("/var/lib/other/job.lock")

        def cleanup():
            os.remove("/var/lib/other/cron.lock")

        def main():
            cleanup()

        if __name__ == "__main__":
            main()
    """
    facts, findings = run(src)
    assert [(f.code, f.span.line) for f in findings] == [("LCK107", 7)]
    assert [r.conditional for r in facts.removals] == [True, False]
