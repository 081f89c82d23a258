"""Python recall on the whole recall set (issue #12, second pass): each construct in several
ordinary spellings through the CLI, each beside the spelling that must stay quiet."""

from __future__ import annotations

import pytest
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
