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
