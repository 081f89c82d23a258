"""Python recall on the whole recall set (issue #12, second pass): each construct in several
ordinary spellings through the CLI, each beside the spelling that must stay quiet."""

from __future__ import annotations

import textwrap

import pytest
from helpers import concise_rows, write
from test_python_recall_helpers import lint

# --------------------------------------------------------------------------- a busy branch
# carried by a flag the function returns (`except FileExistsError: locked = False` ...
# `return locked`): LCK101 and the path rules of the lock it decides

FLAG_LINK = """
    import os
    import sys
    import tempfile


    class Lock:
        def __init__(self, lock_file="worker.lock"):
            self.lock_file = lock_file

        def _create(self):
            tmp = tempfile.NamedTemporaryFile(dir=os.path.dirname(self.lock_file), delete=False)
            tmp.write(b"%d\\n" % os.getpid())
            tmp.close()
            locked = True
            try:
                os.link(tmp.name, self.lock_file)
            except FileExistsError:
                locked = False
            os.remove(tmp.name)
            return locked

        def acquire(self):
            if not self._create():
                sys.exit("worker already running")


    Lock().acquire()
"""

FLAG_OPEN_X = """
    import os
    import time

    LOCK = "/var/lib/sync/sync.lock"


    def take():
        try:
            with open(LOCK, "x") as f:
                f.write(str(os.getpid()))
            got = True
        except FileExistsError:
            got = None
        return got


    while not take():
        time.sleep(5)
    try:
        print("sync")
    finally:
        os.remove(LOCK)
"""

FLAG_MKDIR = """
    import os
    import sys


    def lock_dir(path):
        ok = True
        try:
            os.mkdir(path)
        except OSError:
            print("cannot create", path)
            ok = False
        return ok


    def main():
        if not lock_dir("/var/lib/mirror/run.lock"):
            return 75
        print("mirror")
        return 0


    sys.exit(main())
"""


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        # constructor default `worker.lock`: relative, so LCK501 comes with the lock
        (FLAG_LINK, {("LCK101", 16), ("LCK501", 16)}),
        (FLAG_OPEN_X, {("LCK101", 9)}),
        (FLAG_MKDIR, {("LCK101", 8)}),
    ],
    ids=["link-in-method", "open-x-none", "mkdir-oserror"],
)
def test_flag_returned_after_the_try_is_the_busy_branch(cli, tmp_path, src, expected):
    assert expected <= lint(cli, tmp_path, src)


def test_flag_the_function_does_not_return_is_quiet(cli, tmp_path):
    # the flag only says whether the directory was new; the path is returned either way
    found = lint(
        cli,
        tmp_path,
        """
        import os


        def ensure_dir(path):
            created = True
            try:
                os.mkdir(path)
            except FileExistsError:
                created = False
            print("created" if created else "exists", path)
            return path


        out = ensure_dir("/var/lib/report/out")
        with open(os.path.join(out, "report.txt"), "w") as f:
            f.write("ok\\n")
        """,
    )
    assert not {c for c, _l in found} & {"LCK101", "LCK109", "LCK401"}


# --------------------------------------------------------------------------- one lock call
# reached from several call sites with different paths is one finding (LCK101, LCK103)

TWO_CALLERS = """
    import os
    import time


    class LockFile:
        def __init__(self, path):
            self.path = path

        def __enter__(self):
            while True:
                try:
                    with open(self.path, "x"):
                        return self
                except FileExistsError:
                    time.sleep(0.1)

        def __exit__(self, *exc):
            os.remove(self.path)


    def append_log(message, log_path):
        with LockFile(f"{log_path}.lock"):
            with open(log_path, "a") as f:
                f.write(message + "\\n")


    def write_state(state, state_path):
        with LockFile(f"{state_path}.lock"):
            with open(state_path, "w") as f:
                f.write(state)
"""


def rows(cli, tmp_path, src: str) -> list[tuple[str, int]]:
    """(code, line) of each finding, repeats kept."""
    write(tmp_path, "job.py", textwrap.dedent(src).lstrip("\n"))
    _status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "concise")
    assert "Traceback" not in err
    return [(code, line) for _p, line, code in concise_rows(out)]


def test_one_lock_call_from_two_call_sites_is_one_finding(cli, tmp_path):
    found = rows(cli, tmp_path, TWO_CALLERS)
    assert found.count(("LCK101", 12)) == 1


def test_two_lock_calls_are_two_findings(cli, tmp_path):
    # the same helper written twice: two calls, two findings
    src = TWO_CALLERS.replace(
        '    def append_log(message, log_path):\n        with LockFile(f"{log_path}.lock"):\n',
        "    def append_log(message, log_path):\n"
        "        try:\n"
        '            open(f"{log_path}.lock", "x").close()\n'
        "        except FileExistsError:\n"
        "            return\n"
        "        if True:\n",
    )
    found = rows(cli, tmp_path, src)
    assert found.count(("LCK101", 12)) == 1
    assert ("LCK101", 23) in found


# --------------------------------------------------------------------------- a clash handler
# that only waits, in a `while` loop around the try: the loop retries (LCK101)

SLEEP_RETRY = {
    "open-x-while-true": (
        """
        import os
        import time

        LOCK = "/var/lib/feed/feed.lock"

        while True:
            try:
                with open(LOCK, "x") as f:
                    f.write(str(os.getpid()))
                break
            except FileExistsError:
                time.sleep(2)
        try:
            print("feed")
        finally:
            os.remove(LOCK)
        """,
        8,
    ),
    "mkdir-while-flag": (
        """
        import os
        from time import sleep


        def main(lock="/var/lib/feed/feed.d"):
            acquired = False
            while not acquired:
                try:
                    os.mkdir(lock)
                    acquired = True
                except FileExistsError:
                    sleep(1)
            try:
                print("feed")
            finally:
                os.rmdir(lock)


        main()
        """,
        9,
    ),
    "path-touch-async": (
        """
        import asyncio
        from pathlib import Path

        LOCK = Path("/var/lib/feed/feed.lock")


        async def main():
            while True:
                try:
                    LOCK.touch(exist_ok=False)
                    break
                except FileExistsError:
                    await asyncio.sleep(5)
            try:
                print("feed")
            finally:
                LOCK.unlink()


        asyncio.run(main())
        """,
        10,
    ),
}


@pytest.mark.parametrize(("src", "line"), SLEEP_RETRY.values(), ids=SLEEP_RETRY.keys())
def test_clash_handler_that_sleeps_in_a_while_loop_retries(cli, tmp_path, src, line):
    assert ("LCK101", line) in lint(cli, tmp_path, src)


def test_clash_handler_that_skips_an_existing_output_is_quiet(cli, tmp_path):
    # a queue worker: an existing output directory means "done already", no wait, no lock
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import queue

        jobs = queue.Queue()
        for n in ("a", "b"):
            jobs.put(n)

        while not jobs.empty():
            name = jobs.get()
            try:
                os.mkdir(os.path.join("/var/lib/render", name))
            except FileExistsError:
                print("already rendered", name)
        """,
    )
    assert not {c for c, _l in found} & {"LCK101", "LCK202", "LCK109"}


# --------------------------------------------------------------------------- platform
# branches: a removal in the Windows branch is not paired with the flock of the POSIX one
# (LCK201)

PLATFORM_FLAG = """
    import os
    import sys

    try:
        import fcntl
    except ImportError:
        fcntl = None

    LOCK_PATH = "/var/lib/agent/agent.lock"
    OS_WIN = False
    if "win32" in sys.platform.lower():
        OS_WIN = True


    class SingleInstance:
        def __init__(self):
            self.fh = None
            if OS_WIN:
                if os.path.exists(LOCK_PATH):
                    os.unlink(LOCK_PATH)
                self.fh = os.open(LOCK_PATH, os.O_CREAT | os.O_EXCL | os.O_RDWR)
            else:
                self.fh = open(LOCK_PATH, "a")
                try:
                    fcntl.lockf(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    sys.exit("agent already running")

        def clean_up(self):
            if OS_WIN:
                os.close(self.fh)
                os.unlink(LOCK_PATH)
            else:
                fcntl.lockf(self.fh, fcntl.LOCK_UN)
                self.fh.close()
{POSIX_REMOVAL}

    si = SingleInstance()
    try:
        print("agent")
    finally:
        si.clean_up()
"""

PLATFORM_OS_NAME = """
    import os
    import sys

    if os.name == "nt":
        import msvcrt
    else:
        import fcntl

    LOCK = "/var/lib/agent/agent.lock"


    def acquire():
        f = open(LOCK, "a")
        try:
            if os.name == "nt":
                msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit("agent already running")
        return f


    def release(f):
        f.close()
        if {WINDOWS_TEST}:
            os.remove(LOCK)


    f = acquire()
    try:
        print("agent")
    finally:
        release(f)
"""


@pytest.mark.parametrize(
    "windows_test",
    [
        'os.name == "nt"',
        'sys.platform.startswith("win")',
        'not sys.platform.startswith("linux")',
        'sys.platform in ("win32", "cygwin") or os.name == "nt"',
    ],
    ids=["os-name", "startswith-win", "not-linux", "or-of-tests"],
)
def test_removal_in_the_windows_branch_is_not_lck201(cli, tmp_path, windows_test):
    found = lint(cli, tmp_path, PLATFORM_OS_NAME.replace("{WINDOWS_TEST}", windows_test))
    assert not any(c == "LCK201" for c, _l in found)


def test_removal_under_a_condition_that_is_no_platform_test_stays(cli, tmp_path):
    found = lint(cli, tmp_path, PLATFORM_OS_NAME.replace("{WINDOWS_TEST}", "os.path.exists(LOCK)"))
    assert ("LCK201", 27) in found


def test_removal_under_a_module_platform_flag(cli, tmp_path):
    found = lint(cli, tmp_path, PLATFORM_FLAG.replace("{POSIX_REMOVAL}\n", ""))
    assert not any(c == "LCK201" for c, _l in found)
    # the POSIX branch removing its own flocked file is still reported
    posix = PLATFORM_FLAG.replace("{POSIX_REMOVAL}", "                os.unlink(LOCK_PATH)")
    found = lint(cli, tmp_path, posix)
    assert {line for c, line in found if c == "LCK201"} == {36}


# --------------------------------------------------------------------------- one way of
# taking the lock releases it as a plain later statement, beside a context manager whose
# __exit__ releases (LCK202, reported at the call of that way)

DIR_LOCK = """
    import functools
    import os
    import sys


    class DirLock:
        def __init__(self, path="/var/lib/cron/backup.lock"):
            self.path = path

        def acquire(self):
            try:
                os.mkdir(self.path)
            except FileExistsError:
                sys.exit("backup already running")

        def release(self):
            os.rmdir(self.path)

        def __enter__(self):
            self.acquire()
            return self

        def __exit__(self, *exc):
            self.release()

    {ROUTE}
"""

ROUTES = {
    "decorator": (
        """
        def __call__(self, func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                self.acquire()
                result = func(*args, **kwargs)
                self.release()
                return result

            return wrapper
        """,
        "def wrapper",
    ),
    "run-method": (
        """
        def run(self, job, *args):
            self.acquire()
            print("running", job.__name__)
            job(*args)
            self.release()
        """,
        "def run",
    ),
}


def _route(route: str) -> str:
    body = textwrap.indent(textwrap.dedent(route).strip("\n"), "    ")
    return textwrap.dedent(DIR_LOCK).lstrip("\n").replace("{ROUTE}", body.lstrip())


def _take_line(src: str, marker: str) -> int:
    """The line of the first ``self.acquire()`` after ``marker``."""
    return src[: src.index("self.acquire()", src.index(marker))].count("\n") + 1


@pytest.mark.parametrize(("route", "marker"), ROUTES.values(), ids=ROUTES.keys())
def test_plain_release_route_beside_exit_method_is_lck202(cli, tmp_path, route, marker):
    src = _route(route)
    found = lint(cli, tmp_path, src)
    assert ("LCK202", _take_line(src, marker)) in found


@pytest.mark.parametrize("route", ROUTES.values(), ids=ROUTES.keys())
def test_route_releasing_in_finally_is_quiet(cli, tmp_path, route):
    body, _marker = route
    lines = textwrap.dedent(body).strip("\n").splitlines()
    take = next(i for i, ln in enumerate(lines) if "self.acquire()" in ln)
    rel = next(i for i, ln in enumerate(lines) if "self.release()" in ln)
    pad = lines[take][: len(lines[take]) - len(lines[take].lstrip())]
    fixed = (
        lines[: take + 1]
        + [pad + "try:"]
        + ["    " + ln for ln in lines[take + 1 : rel]]
        + [pad + "finally:", "    " + lines[rel]]
        + lines[rel + 1 :]
    )
    found = lint(cli, tmp_path, _route("\n".join(fixed)))
    assert ("LCK101", 12) in found  # the lock is read, and no syntax error hides it
    assert not any(c in ("LCK202", "LCK000") for c, _l in found)


# --------------------------------------------------------------------------- a test of the
# pid file whose branch kills the PID read from it, then the create: a takeover (LCK103)

KILL_TAKEOVER = {
    "kill-in-try": (
        """
        import os
        import signal
        import sys

        PID = os.path.join("/var/run/fetch", os.path.basename(sys.argv[0]) + ".pid")

        if os.path.exists(PID):
            try:
                old = int(open(PID).read())
                os.kill(old, signal.SIGTERM)
            except (OSError, ValueError):
                print("nothing to kill")
        f = open(PID, "w")
        f.write(str(os.getpid()))
        f.close()
        print("fetch")
        os.remove(PID)
        """,
        13,
    ),
    "pathlib-sigkill": (
        """
        import os
        import signal
        import time
        from pathlib import Path

        PID = Path("/var/run/fetch/fetch.pid")


        def main():
            if PID.exists():
                os.kill(int(PID.read_text()), signal.SIGKILL)
                time.sleep(1)
            PID.write_text(str(os.getpid()))
            try:
                print("fetch")
            finally:
                PID.unlink()


        main()
        """,
        13,
    ),
    "killpg-with-open": (
        """
        import os
        import signal

        PID = "/var/run/fetch/fetch.pid"

        if os.path.isfile(PID):
            with open(PID) as f:
                os.killpg(int(f.read()), signal.SIGTERM)
        with open(PID, "w") as f:
            f.write(str(os.getpid()))
        try:
            print("fetch")
        finally:
            os.unlink(PID)
        """,
        9,
    ),
}


@pytest.mark.parametrize(("src", "line"), KILL_TAKEOVER.values(), ids=KILL_TAKEOVER.keys())
def test_kill_of_the_stored_pid_then_create_is_a_takeover(cli, tmp_path, src, line):
    found = lint(cli, tmp_path, src)
    assert ("LCK103", line) in found


def test_kill_of_another_files_pid_then_create_is_quiet(cli, tmp_path):
    # reloads the web server (its own pid file), then records the config version
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import signal

        STAMP = "/var/lib/deploy/config.stamp"
        NGINX = "/run/nginx.pid"

        if os.path.exists(STAMP):
            with open(NGINX) as f:
                os.kill(int(f.read()), signal.SIGHUP)
        with open(STAMP, "w") as f:
            f.write("42\\n")
        os.remove(STAMP)
        """,
    )
    assert not {c for c, _l in found} & {"LCK103", "LCK202"}


# --------------------------------------------------------------------------- the script's
# name with `.py` cut off by a slice, and a class attribute as the default of `self.path`
# when the constructor's parameter says "not given" (False/None): LCK502

CLASS_DEFAULT_DIR = """
    import os
    import sys


    class Lock:
        path = "/var/tmp"

        def __init__(self, name=False, path=False):
            if name is False:
                name = os.path.basename(sys.argv[0])
            if path is not False:
                self.path = path
            if name.endswith(".py"):
                name = {CUT}
            self.lockfile = os.path.join(self.path, name + ".lock")

        def __enter__(self):
            try:
                self.fd = os.open(self.lockfile, os.O_CREAT | os.O_EXCL | os.O_RDWR)
            except OSError:
                sys.exit("already running")
            return self

        def __exit__(self, *exc):
            os.close(self.fd)
            os.unlink(self.lockfile)


    with Lock():
        print("report")
"""


@pytest.mark.parametrize("cut", ["name[:-3]", "name[: len(name) - 3]"])
def test_class_attribute_directory_and_sliced_script_name(cli, tmp_path, cut):
    found = lint(cli, tmp_path, CLASS_DEFAULT_DIR.replace("{CUT}", cut))
    assert ("LCK502", 19) in found


def test_none_parameter_falls_back_to_the_class_attribute(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import fcntl
        import sys


        class Guard:
            lock_file = "/tmp/nightly.lock"

            def __init__(self, lock_file=None):
                if lock_file:
                    self.lock_file = lock_file
                self.fh = open(self.lock_file, "w")
                try:
                    fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    sys.exit(75)


        Guard()
        print("nightly")
        """,
    )
    assert ("LCK502", 11) in found


def test_unique_slice_and_private_directory_are_quiet(cli, tmp_path):
    # the slice is of a unique token, and the constructor always replaces the class default
    # with a private directory
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import sys
        import uuid


        class Lock:
            path = "/var/tmp"

            def __init__(self):
                self.path = os.path.expanduser("~/.local/state/report")
                token = uuid.uuid4().hex
                self.lockfile = os.path.join(self.path, "report-" + token[:8] + ".lock")

            def __enter__(self):
                try:
                    self.fd = os.open(self.lockfile, os.O_CREAT | os.O_EXCL | os.O_RDWR)
                except OSError:
                    sys.exit("already running")
                return self

            def __exit__(self, *exc):
                os.close(self.fd)
                os.unlink(self.lockfile)


        with Lock():
            print("report")
        """,
    )
    assert ("LCK101", 16) in found
    assert not {c for c, _l in found} & {"LCK502", "LCK501"}


# --------------------------------------------------------------------------- a context
# manager whose __enter__ creates the name (a clash re-raises: the run aborts) and whose
# __exit__ removes it: a scope lock (LCK101)

ENTER_EXIT = {
    "path-mkdir-reraise": (
        """
        from pathlib import Path


        class LockDir:
            def __init__(self, directory):
                self.directory = Path(directory)

            def __enter__(self):
                try:
                    self.directory.mkdir()
                except OSError:
                    print(f"directory exists: {self.directory}")
                    raise

            def __exit__(self, exc_type, exc_val, exc_tb):
                self.directory.rmdir()
        """,
        10,
    ),
    "os-mkdir-raise-new": (
        """
        import os


        class Guard:
            def __init__(self, d):
                self.d = d

            def __enter__(self):
                try:
                    os.mkdir(self.d)
                except OSError as err:
                    raise RuntimeError("another run holds " + self.d) from err
                return self

            def __exit__(self, *exc):
                os.rmdir(self.d)
        """,
        10,
    ),
    "open-x-custom-error": (
        """
        import os


        class Busy(Exception):
            pass


        class Marker:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                try:
                    self.f = open(self.name, "x")
                except FileExistsError:
                    raise Busy(self.name)
                return self

            def __exit__(self, *exc):
                self.f.close()
                os.unlink(self.name)
        """,
        14,
    ),
}


@pytest.mark.parametrize(("src", "line"), ENTER_EXIT.values(), ids=ENTER_EXIT.keys())
def test_create_in_enter_removed_in_exit_is_a_scope_lock(cli, tmp_path, src, line):
    assert ("LCK101", line) in lint(cli, tmp_path, src)


def test_create_in_enter_kept_after_exit_is_quiet(cli, tmp_path):
    # a run directory made fresh for the with block and kept as its output: no lock
    src = ENTER_EXIT["os-mkdir-raise-new"][0].replace(
        "os.rmdir(self.d)", 'print("results in", self.d)'
    )
    found = lint(cli, tmp_path, src)
    assert not {c for c, _l in found} & {"LCK101", "LCK202"}


# --------------------------------------------------------------------------- a release
# method that unlocks the flock, then removes a file whose name ends like the lock file's
# (the name built in another method or a @property): LCK201

UNLOCK_THEN_REMOVE = {
    "property-path": (
        """
        import fcntl
        import os


        class LockFile:
            def __init__(self):
                self._target = None
                self._handle = None

            @property
            def lock_path(self):
                if self._target:
                    return "%s%s" % (self._target, ".lock")
                return None

            def lock(self, target):
                target = os.path.abspath(target).rstrip("/")
                handle = open("%s%s" % (target, ".lock"), "a")
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._target = target
                self._handle = handle

            def release(self):
                fcntl.flock(self._handle, fcntl.LOCK_UN)
                self._handle.close()
                os.remove(self.lock_path)
                self._handle = None
        """,
        26,
    ),
    "lockf-helper": (
        """
        import fcntl
        import os
        import sys


        def take(name):
            f = open(name + ".lck", "w")
            try:
                fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                sys.exit(75)
            return f


        def drop(f, base):
            fcntl.lockf(f, fcntl.LOCK_UN)
            f.close()
            os.unlink(base + ".lck")


        def main(job):
            f = take(os.path.join("/var/lib/jobs", job))
            try:
                print("job", job)
            finally:
                drop(f, os.path.join(sys.argv[2], job))


        main(sys.argv[1])
        """,
        18,
    ),
}


@pytest.mark.parametrize(
    ("src", "line"), UNLOCK_THEN_REMOVE.values(), ids=UNLOCK_THEN_REMOVE.keys()
)
def test_removal_after_unlock_ending_like_the_lock_file(cli, tmp_path, src, line):
    assert ("LCK201", line) in lint(cli, tmp_path, src)


def test_removal_after_unlock_of_another_file_is_quiet(cli, tmp_path):
    # the release removes the scratch file the locked run wrote, not the lock file
    src = UNLOCK_THEN_REMOVE["property-path"][0].replace(
        '"%s%s" % (self._target, ".lock")', '"%s%s" % (self._target, ".partial")'
    )
    assert not any(c == "LCK201" for c, _l in lint(cli, tmp_path, src))


# --------------------------------------------------------------------------- precision on
# the Python installation: an ensure-directory helper whose FileExistsError is caught with
# the other errors of an unusable path (LCK109), and a refusal to overwrite an output
# (`if exists(out): raise Error(...)`, then write): neither is a lock

ENSURE_DIR = """
    import os
    import sys


    def try_makedirs(cache_dir):
        try:
            os.makedirs(cache_dir, exist_ok=True)
        except {CAUGHT}:
            return False
        return True


    if not try_makedirs("/var/cache/report"):
        sys.exit(1)
"""


@pytest.mark.parametrize(
    "caught",
    [
        "(FileNotFoundError, NotADirectoryError, FileExistsError)",
        "(FileExistsError, NotADirectoryError)",
    ],
)
def test_makedirs_exist_ok_under_path_error_handler_is_quiet(cli, tmp_path, caught):
    found = lint(cli, tmp_path, ENSURE_DIR.replace("{CAUGHT}", caught))
    assert not any(c == "LCK109" for c, _l in found)


def test_makedirs_exist_ok_as_the_busy_test_is_still_lck109(cli, tmp_path):
    found = lint(cli, tmp_path, ENSURE_DIR.replace("{CAUGHT}", "FileExistsError"))
    assert ("LCK109", 7) in found


OUTPUT_GUARD = """
    import os


    class BuildError(Exception):
        pass


    def write_stub(stub_file, body, compile=False):
        if compile and os.path.exists(stub_file):
            raise BuildError(stub_file + " already exists! Please delete.")
        f = open(stub_file, "w")
        f.write({WRITTEN})
        f.close()
        if compile:
            os.remove(stub_file)
"""


@pytest.mark.parametrize("written", ['"\\\\n".join(body)', "body.render()"])
def test_refusal_to_overwrite_an_output_is_quiet(cli, tmp_path, written):
    found = lint(cli, tmp_path, OUTPUT_GUARD.replace("{WRITTEN}", written))
    assert not {c for c, _l in found} & {"LCK103", "LCK202"}


@pytest.mark.parametrize("written", ["str(os.getpid())", 'f"{pid}"'])
def test_raise_on_an_existing_pid_file_is_still_lck103(cli, tmp_path, written):
    src = OUTPUT_GUARD.replace("{WRITTEN}", written).replace(
        "def write_stub(stub_file, body, compile=False):",
        "def write_stub(stub_file, body, compile=False, pid=0):",
    )
    assert ("LCK103", 11) in lint(cli, tmp_path, src)


# --------------------------------------------------------------------------- a PID bound
# by unpacking (`ok, pid = take(path)`, `name, pid = f.read().split()`) is still read from
# the pid file; a liveness test whose other outcome kills the holder decides (LCK105, LCK108)

UNPACKED_PID = {
    "tuple-from-helper": (
        """
        import fcntl
        import os
        import signal
        import sys


        def take(path):
            fd = os.open(path, os.O_CREAT | os.O_RDWR)
            pid = int(os.read(fd, 20) or 0)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None, pid
            return fd, pid


        ok, pid = take("/var/run/crawl/crawl.pid")
        if not ok:
            try:
                os.kill(pid, 0)
            except OSError:
                sys.exit("stale pid file")
            else:
                os.kill(pid, signal.SIGTERM)
                sys.exit(75)
        """,
        {("LCK105", 21), ("LCK108", 25)},
    ),
    "split-of-read": (
        """
        import os
        import signal
        import sys

        LOCK = "/var/run/crawl/crawl.lock"

        if os.path.exists(LOCK):
            with open(LOCK) as f:
                prog, pid = f.read().strip().split()
            os.killpg(int(pid), signal.SIGKILL)
        with open(LOCK, "w") as f:
            print(sys.argv[0], os.getpid(), file=f)
        try:
            print("crawl")
        finally:
            os.remove(LOCK)
        """,
        {("LCK108", 10), ("LCK103", 11)},
    ),
}


@pytest.mark.parametrize(("src", "expected"), UNPACKED_PID.values(), ids=UNPACKED_PID.keys())
def test_pid_bound_by_unpacking_is_read_from_the_file(cli, tmp_path, src, expected):
    assert expected <= lint(cli, tmp_path, src)


def test_unpacked_pid_of_a_started_child_and_a_poll_after_the_kill_are_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import signal
        import subprocess
        import time


        def spawn():
            proc = subprocess.Popen(["sleep", "60"])
            return True, proc.pid


        ok, pid = spawn()
        os.kill(pid, signal.SIGTERM)
        try:
            with open("/var/run/crawl/crawl.pid") as f:
                old = int(f.read())
            os.kill(old, signal.SIGTERM)
            for _ in range(10):
                os.kill(old, 0)
                time.sleep(1)
        except OSError:
            pass
        """,
    )
    assert ("LCK108", 17) in found  # the stored PID, killed
    assert not any(c == "LCK108" and line == 12 for c, line in found)
    assert not any(c == "LCK105" for c, _l in found)  # the poll waits for the kill


# --------------------------------------------------------------------------- a busy flag
# kept on the instance (`self.is_running = True` in the clash handler) and tested by the
# caller (`if si.is_running: sys.exit(...)`): the busy branch ends there (LCK203, LCK401)

INSTANCE_FLAG = """
    import fcntl
    import os
    import sys

    LOCK_PATH = "/var/lib/agent/agent.lock"


    class SingleInstance:
        def __init__(self):
            self.fh = None
            self.{ATTR} = {INITIAL}
            try:
                self.fh = open(LOCK_PATH, "a")
                fcntl.lockf(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.{ATTR} = {BUSY}

        def clean_up(self):
            fcntl.lockf(self.fh, fcntl.LOCK_UN)
            self.fh.close()
            os.unlink(LOCK_PATH)


    si = SingleInstance()
    try:
        if {TEST}:
            {BUSY_BRANCH}
        print("agent")
    finally:
        si.clean_up()
"""


def _flag(attr, initial, busy, test, branch):
    return (
        INSTANCE_FLAG.replace("{ATTR}", attr)
        .replace("{INITIAL}", initial)
        .replace("{BUSY}", busy)
        .replace("{TEST}", test)
        .replace("{BUSY_BRANCH}", branch)
    )


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (
            _flag("is_running", "False", "True", "si.is_running", 'sys.exit("already running")'),
            {("LCK203", 25)},
        ),
        (
            _flag("locked", "True", "False", "not si.locked", "sys.exit(0)"),
            {("LCK203", 25), ("LCK401", 27)},
        ),
    ],
    ids=["is-running-true", "not-locked"],
)
def test_busy_flag_on_the_instance_tested_by_the_caller(cli, tmp_path, src, expected):
    assert expected <= lint(cli, tmp_path, src)


def test_instance_flag_tested_without_leaving_is_quiet(cli, tmp_path):
    src = _flag("is_running", "False", "True", "si.is_running", 'print("shared run")')
    found = lint(cli, tmp_path, src)
    assert not {c for c, _l in found} & {"LCK203", "LCK401"}


# --------------------------------------------------------------------------- the private
# directory tried first in if/else form (`if xdg is not None: d = xdg else: d = "/tmp"`):
# like os.environ.get("XDG_RUNTIME_DIR", "/tmp"), no LCK502

RUNTIME_DIR = """
    import fcntl
    import os
    import sys
    from pathlib import Path


    def runtime_dir():
    {CHOICE}
        return Path(d)


    PID = (runtime_dir() / "focus.pid").open("a")
    try:
        fcntl.lockf(PID, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit("focus already running")
"""

CHOICES = {
    "is-not-none": """
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        if xdg is not None:
            d = xdg
        else:
            d = "/tmp"
    """,
    "in-environ": """
        if "XDG_RUNTIME_DIR" in os.environ:
            d = os.environ["XDG_RUNTIME_DIR"]
        else:
            d = "/tmp"
    """,
    "literal-first": """
        xdg = os.getenv("XDG_RUNTIME_DIR")
        if not xdg:
            d = "/tmp"
        else:
            d = xdg
    """,
}


def _choice(text: str) -> str:
    body = textwrap.indent(textwrap.dedent(text).strip("\n"), "    ")
    return RUNTIME_DIR.replace("    {CHOICE}", textwrap.indent(body, "    "))


@pytest.mark.parametrize("choice", CHOICES.values(), ids=CHOICES.keys())
def test_private_dir_first_in_if_else_form_is_quiet(cli, tmp_path, choice):
    found = lint(cli, tmp_path, _choice(choice))
    assert not any(c == "LCK502" for c, _l in found)
    assert not any(c == "LCK000" for c, _l in found)


def test_if_else_between_two_shared_dirs_is_lck502(cli, tmp_path):
    choice = """
        if sys.argv[1:] == ["--debug"]:
            d = "/var/tmp"
        else:
            d = "/tmp"
    """
    assert ("LCK502", 15) in lint(cli, tmp_path, _choice(choice))


# --------------------------------------------------------------------------- the stored
# PID looked up in a process listing (pgrep, pidof, ps): a liveness test, and the removal
# on its "not listed" side a stale-lock breaker (LCK105, LCK106)

LISTED = {
    "pgrep-getoutput": (
        """
        import os
        import subprocess
        import sys

        LOCK = "/var/lib/backup/backup.lock"

        if os.path.exists(LOCK):
            with open(LOCK) as f:
                prog, pid = f.read().strip().split()
            running = subprocess.getoutput("pgrep {0}".format(prog)).split("\\n")
            if pid in running:
                sys.exit("backup already running")
            else:
                os.remove(LOCK)
        with open(LOCK, "w") as f:
            print(sys.argv[0], os.getpid(), file=f)
        try:
            print("backup")
        finally:
            os.remove(LOCK)
        """,
        {("LCK105", 11), ("LCK106", 14)},
    ),
    "pidof-list": (
        """
        import os
        import subprocess
        import sys

        PID = "/var/run/rsync-job.pid"


        def main():
            if os.path.isfile(PID):
                old = open(PID).read().strip()
                pids = subprocess.check_output(["pidof", "rsync"], text=True).split()
                if old not in pids:
                    os.unlink(PID)
                else:
                    return 75
            with open(PID, "w") as f:
                f.write(str(os.getpid()))
            try:
                print("sync")
            finally:
                os.unlink(PID)
            return 0


        sys.exit(main())
        """,
        {("LCK105", 12), ("LCK106", 13)},
    ),
}


@pytest.mark.parametrize(("src", "expected"), LISTED.values(), ids=LISTED.keys())
def test_stored_pid_looked_up_in_a_process_listing(cli, tmp_path, src, expected):
    assert expected <= lint(cli, tmp_path, src)


def test_process_listing_of_a_name_not_read_from_a_file_is_quiet(cli, tmp_path):
    found = lint(
        cli,
        tmp_path,
        """
        import os
        import subprocess
        import sys

        for name in sys.argv[1:]:
            if name in subprocess.getoutput("pgrep -l rsync"):
                print(name, "is syncing")
            else:
                os.remove(os.path.join("/var/lib/sync/queue", name))
        """,
    )
    assert not {c for c, _l in found} & {"LCK105", "LCK106"}


def test_numeric_signal_is_named_in_the_message(cli, tmp_path):
    write(
        tmp_path,
        "job.py",
        textwrap.dedent(
            """
            import os

            with open("/var/run/crawl/crawl.pid") as f:
                os.kill(int(f.read()), 9)
            """
        ).lstrip("\n"),
    )
    _status, out, _err = cli(
        "scan", "--isolated", "--select", "LCK108", "--output-format", "concise"
    )
    assert "sends SIGKILL to a PID read from a file" in out


# --------------------------------------------------------------------------- a clash
# returned to a caller that only reports it (`if ensure(d): print("created")`) decides
# nothing; one that makes it the condition of the work is a lock (LCK101)

REPORTED = """
    import os


    def ensure(d):
    {BODY}


    if ensure("/srv/report/out"):
        {THEN}
    print("writing the report")
"""

ENSURE_BODIES = {
    "flag": """
        made = True
        try:
            os.mkdir(d)
        except FileExistsError:
            made = False
        return made
    """,
    "return": """
        try:
            os.mkdir(d)
        except FileExistsError:
            return False
        return True
    """,
}


def _reported(body: str, then: str) -> str:
    inner = textwrap.indent(textwrap.dedent(body).strip("\n"), "        ")
    return REPORTED.replace("    {BODY}", inner).replace("{THEN}", then)


@pytest.mark.parametrize("body", ENSURE_BODIES.values(), ids=ENSURE_BODIES.keys())
def test_clash_only_reported_by_the_caller_is_quiet(cli, tmp_path, body):
    found = lint(cli, tmp_path, _reported(body, 'print("created the output directory")'))
    assert not any(c in ("LCK101", "LCK000") for c, _l in found)


@pytest.mark.parametrize("body", ENSURE_BODIES.values(), ids=ENSURE_BODIES.keys())
def test_clash_as_the_condition_of_the_work_is_lck101(cli, tmp_path, body):
    found = lint(cli, tmp_path, _reported(body, 'os.system("make-report /srv/report/out")'))
    assert any(c == "LCK101" for c, _l in found)
