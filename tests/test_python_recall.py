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
