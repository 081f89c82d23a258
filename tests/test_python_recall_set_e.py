"""Python recall on set-E's dev half (issue #12/#14): each construct in several ordinary
spellings through the CLI, each beside the spelling that must stay quiet."""

from __future__ import annotations

import pytest
from test_python_recall_helpers import lint

# --------------------------------------------------------------------------- a clash that
# raises an exception named like a lock is the busy branch (LCK101)

RAISE_LOCKED_MKDIR = """
    import os


    class PIDLockedException(Exception):
        pass


    def lock(piddir):
        try:
            os.mkdir(piddir)
        except FileExistsError:
            raise PIDLockedException(piddir)
"""

RAISE_ALREADY_LOCKED_OPEN_X = """
    import os


    class AlreadyLocked(RuntimeError):
        pass


    def take(name):
        path = os.path.join(os.path.expanduser("~/.cache/jobs"), name)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError as e:
            raise AlreadyLocked(name) from e
        os.write(fd, str(os.getpid()).encode())
        return fd
"""

RAISE_LOCK_ERROR_LINK = """
    import os


    class LockError(Exception):
        pass


    def grab(tmp, target):
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise LockError
"""


@pytest.mark.parametrize(
    ("src", "line"),
    [(RAISE_LOCKED_MKDIR, 10), (RAISE_ALREADY_LOCKED_OPEN_X, 11), (RAISE_LOCK_ERROR_LINK, 10)],
    ids=["mkdir-pidlocked", "o-excl-alreadylocked", "link-lockerror"],
)
def test_clash_raising_a_lock_named_error_is_a_lock(cli, tmp_path, src, line):
    assert ("LCK101", line) in lint(cli, tmp_path, src)


def test_clash_raising_an_ordinary_error_is_an_exclusive_output_create(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os


        def export(out):
            try:
                os.mkdir(out)
            except FileExistsError:
                raise ValueError(f"{out} exists already")
        """,
    )
    assert not {c for c, _l in found if c.startswith("LCK1")}


# --------------------------------------------------------------------------- a writing open
# after an exclusive create in the same try: FileExistsError is the create's (no LCK109)

MKDIR_THEN_PIDFILE = """
    import os
    import sys


    def lock(piddir):
        try:
            os.mkdir(piddir)
            with open(os.path.join(piddir, "lock.pid"), "wt") as fh:
                fh.write(str(os.getpid()))
        except FileExistsError:
            sys.exit(1)
"""

PATH_MKDIR_THEN_OPEN = """
    import os
    import sys
    from pathlib import Path


    def lock(d: Path):
        try:
            d.mkdir()
            f = open(d / "owner", "w")
            f.write(str(os.getpid()))
            f.close()
        except FileExistsError:
            sys.exit(1)
"""

O_EXCL_THEN_OPEN = """
    import os
    import sys


    def lock(path):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            with open(path + ".info", "a") as fh:
                fh.write(str(os.getpid()))
        except FileExistsError:
            sys.exit(1)
"""


@pytest.mark.parametrize(
    ("src", "line"),
    [(MKDIR_THEN_PIDFILE, 7), (PATH_MKDIR_THEN_OPEN, 8), (O_EXCL_THEN_OPEN, 7)],
    ids=["os-mkdir", "path-mkdir", "o-excl"],
)
def test_write_after_exclusive_create_is_no_lck109(cli, tmp_path, src, line):
    found = lint(cli, tmp_path, src)
    assert ("LCK101", line) in found
    assert not {c for c, _l in found if c == "LCK109"}


def test_writing_open_alone_under_file_exists_error_stays_lck109(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import sys


        def lock(path):
            try:
                with open(path, "w") as fh:
                    fh.write(str(os.getpid()))
            except FileExistsError:
                sys.exit(1)
        """,
    )
    assert ("LCK109", 7) in found


# --------------------------------------------------------------------------- the stored PID
# looked up in psutil's process table (LCK105, then LCK106 for the removal it leads to)

PIDS_INLINE = """
    import os
    import sys
    import psutil

    LOCK = os.path.expanduser("~/.job.pid")

    if os.path.exists(LOCK):
        with open(LOCK) as f:
            pid = int(f.read())
        if pid not in psutil.pids():
            os.remove(LOCK)
        else:
            sys.exit(1)
"""

PIDS_VARIABLE = """
    import os
    import shutil
    import sys
    import psutil


    def lock(piddir):
        with open(os.path.join(piddir, "lock.pid")) as fh:
            lock_pid, host = fh.readline().split("\\t")
        lock_pid = int(lock_pid)
        pids = psutil.pids()
        if lock_pid not in pids:
            shutil.rmtree(piddir, ignore_errors=True)
        else:
            sys.exit(1)
"""

PROCESS_ITER = """
    import os
    import sys
    import psutil

    LOCK = os.path.expanduser("~/.job.pid")

    with open(LOCK) as f:
        pid = int(f.read())
    if pid in [p.pid for p in psutil.process_iter()]:
        sys.exit(1)
    os.unlink(LOCK)
"""


@pytest.mark.parametrize(
    ("src", "test_line", "removal_line"),
    [(PIDS_INLINE, 10, 11), (PIDS_VARIABLE, 12, 13), (PROCESS_ITER, 9, 11)],
    ids=["pids-inline", "pids-variable", "process-iter"],
)
def test_stored_pid_in_psutil_table_is_a_liveness_test(cli, tmp_path, src, test_line, removal_line):
    found = lint(cli, tmp_path, src)
    assert ("LCK105", test_line) in found
    assert ("LCK106", removal_line) in found


def test_own_pid_in_psutil_table_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import psutil

        pid = os.getpid()
        if pid not in psutil.pids():
            print("odd: not listed")
        """,
    )
    assert not {c for c, _l in found if c in ("LCK105", "LCK106")}


# --------------------------------------------------------------------------- the outcome in
# an attribute the caller tests (`self.locked = True` after the try; bare `return` on the
# clash): LCK101 though every call of the helper drops its result

FLAG_ATTR_LINK = """
    import errno
    import os


    class LockFailed(Exception):
        pass


    class LinkLock:
        def __init__(self, path):
            self.locked = False
            self.lockpath = path + ".lock"

        def lock(self, tmp):
            self.attempt(tmp)
            if not self.locked:
                raise LockFailed(self.lockpath)

        def attempt(self, tmp):
            try:
                os.link(tmp, self.lockpath)
            except OSError as e:
                if e.errno == errno.EEXIST:
                    return
                raise
            self.locked = True
"""

FLAG_ATTR_MKDIR_WHILE = """
    import os
    import time


    class DirLock:
        def __init__(self, path):
            self.path = path
            self.held = False

        def acquire(self):
            while not self.held:
                self._try()
                time.sleep(1)

        def _try(self):
            try:
                os.mkdir(self.path)
            except FileExistsError:
                return
            self.held = True
"""

FLAG_ATTR_OPEN_X_EXIT = """
    import os
    import sys


    class PidFile:
        def __init__(self, path):
            self.path = path
            self.owned = False

        def create(self):
            try:
                with open(self.path, "x") as f:
                    f.write(str(os.getpid()))
            except FileExistsError:
                return
            self.owned = True


    p = PidFile("/var/lib/job/job.pid")
    p.create()
    if not p.owned:
        sys.exit(1)
"""


@pytest.mark.parametrize(
    ("src", "line"),
    [(FLAG_ATTR_LINK, 21), (FLAG_ATTR_MKDIR_WHILE, 17), (FLAG_ATTR_OPEN_X_EXIT, 12)],
    ids=["link-raise", "mkdir-while", "open-x-exit"],
)
def test_flag_attribute_the_caller_tests_is_the_busy_branch(cli, tmp_path, src, line):
    assert ("LCK101", line) in lint(cli, tmp_path, src)


def test_flag_attribute_only_released_on_is_quiet(cli, tmp_path):
    # the flag is read only to release: the caller never decides on the clash
    found = lint(
        cli,
        tmp_path,
        """
        import os


        class Cache:
            def __init__(self, path):
                self.path = path
                self.made = False

            def ensure(self):
                try:
                    os.mkdir(self.path)
                except FileExistsError:
                    return
                self.made = True

            def cleanup(self):
                if self.made:
                    os.rmdir(self.path)


        c = Cache("/var/cache/app/tiles")
        c.ensure()
        """,
    )
    assert not {c for c, _l in found if c.startswith("LCK1")}


# --------------------------------------------------------------------------- a parameter
# filled in when None (`if not path: path = X`): the callers' values, X for the calls that
# pass none (LCK502 on the flock file)

FILL_TEMPLATE = """
    import fcntl
    import os
    import sys
    import tempfile


    class RunLock(object):
        def __init__(self, path=None):
            {fill}
            self.path = path

        def take(self):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd


    {call}
"""

_DEFAULT = 'path = os.path.expanduser("~/.local/state/job.lock")'
_SCRIPT_TMP = (
    "path = \"%s/%s.lock\" % (tempfile.gettempdir().rstrip('/'),"
    " os.path.basename(sys.argv[0]).split('.')[0])"
)


def _fill(test: str, assign: str, call: str) -> str:
    return FILL_TEMPLATE.format(fill=f"{test}\n                {assign}", call=call)


@pytest.mark.parametrize(
    "src",
    [
        _fill("if not path:", _DEFAULT, 'RunLock(path="/tmp/test_lockfile.lock").take()'),
        _fill("if path is None:", _DEFAULT, 'RunLock("/var/tmp/sync.lock").take()'),
        _fill("if path == None:", _DEFAULT, 'lk = RunLock(path="/dev/shm/x.lock")\n    lk.take()'),
        _fill("if not path:", _SCRIPT_TMP, "RunLock().take()"),
        _fill("if path is None:", 'path = "/tmp/job.lock"', "RunLock(None).take()"),
    ],
    ids=["not-kw", "is-none-pos", "eq-none", "script-name-default", "none-passed"],
)
def test_filled_parameter_keeps_the_callers_values(cli, tmp_path, src):
    assert ("LCK502", 14) in lint(cli, tmp_path, src)


@pytest.mark.parametrize(
    "src",
    [
        # the fill is a shared default, but the only caller passes a private path
        _fill(
            "if not path:", 'path = "/tmp/job.lock"', 'RunLock(os.path.expanduser("~/.job.lock"))'
        ),
        # the fill is private and no caller passes a path
        _fill("if path is None:", _DEFAULT, "RunLock().take()"),
    ],
    ids=["caller-private", "fill-private"],
)
def test_filled_parameter_with_private_values_is_quiet(cli, tmp_path, src):
    assert not {c for c, _l in lint(cli, tmp_path, src) if c == "LCK502"}


@pytest.mark.parametrize(
    "name",
    [
        "os.path.basename(sys.argv[0]).split('.')[0]",
        "os.path.basename(sys.argv[0]).rsplit('.', 1)[0]",
        "os.path.splitext(os.path.split(sys.argv[0])[-1])[0]",
        "os.path.split(sys.argv[0])[1].partition('.')[0]",
    ],
    ids=["split", "rsplit", "splitext-of-split", "partition"],
)
def test_script_name_without_extension_in_tmp(cli, tmp_path, name):
    src = f"""
        import os
        import sys

        pidfile = os.path.join("/tmp", {name} + ".pid")
        if os.path.exists(pidfile):
            sys.exit(1)
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
        try:
            print("work")
        finally:
            os.remove(pidfile)
    """
    assert ("LCK502", 7) in lint(cli, tmp_path, src)


def test_lock_named_error_beside_an_accepting_return_is_quiet(cli, tmp_path):
    # an ensure-dir helper: an existing real directory is accepted, anything else is an error
    found = lint(
        cli,
        tmp_path,
        """
        import stat
        from pathlib import Path


        class LockProtocolError(OSError):
            pass


        def ensure_dir(directory: Path) -> None:
            try:
                directory.mkdir()
            except FileExistsError:
                try:
                    mode = directory.lstat().st_mode
                except OSError as error:
                    raise LockProtocolError(f"cannot inspect {directory}") from error
                if stat.S_ISDIR(mode) and not stat.S_ISLNK(mode):
                    return
                raise LockProtocolError(f"{directory} is not a real directory") from None


        ensure_dir(Path("/var/lib/app/claims"))
        """,
    )
    assert not {c for c, _l in found if c.startswith("LCK1")}


# --------------------------------------------------------------------------- a lock name
# hashed from the arguments alone is as predictable as they are (LCK502)

HASH_TEMPLATE = """
    import hashlib
    import json
    import os
    import sys
    import time
    import uuid


    def lock(*args, **kwargs):
        {digest}
        path = os.path.join("/tmp", name + ".lock")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            sys.exit(1)
        return fd, path


    fd, path = lock("nightly", mode="full")
    try:
        print("work")
    finally:
        os.remove(path)
"""


@pytest.mark.parametrize(
    "digest",
    [
        "name = hashlib.md5(json.dumps(kwargs).encode()).hexdigest()",
        "h = hashlib.sha1()\n        h.update(repr(args).encode())\n        name = h.hexdigest()",
        "name = hashlib.sha256(sys.argv[0].encode()).hexdigest()",
    ],
    ids=["md5-kwargs", "sha1-update-args", "sha256-script"],
)
def test_digest_of_arguments_is_predictable(cli, tmp_path, digest):
    line = 13 + digest.count("\n")  # the os.open call
    assert ("LCK502", line) in lint(cli, tmp_path, HASH_TEMPLATE.format(digest=digest))


@pytest.mark.parametrize(
    "digest",
    [
        "name = hashlib.md5(str(uuid.uuid4()).encode()).hexdigest()",
        "h = hashlib.sha1(repr(args).encode())\n        h.update(str(time.time()).encode())"
        "\n        name = h.hexdigest()",
    ],
    ids=["uuid", "time-mixed-in"],
)
def test_digest_with_a_unique_input_is_quiet(cli, tmp_path, digest):
    found = lint(cli, tmp_path, HASH_TEMPLATE.format(digest=digest))
    assert ("LCK101", 13 + digest.count("\n")) in found
    assert not {c for c, _l in found if c == "LCK502"}
