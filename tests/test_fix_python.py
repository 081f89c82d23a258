"""Before/after fixtures for the Python fixes and suggestions (real frontend, real checks).

Python edits must keep comments and formatting: everything outside the fix stays as written.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from lockcheck.engine import analyze_text, fix_text
from lockcheck.fix.apply import apply_edits
from lockcheck.model import Applicability
from lockcheck.settings import Settings


def py(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def fixed(text: str, unsafe: bool = False, settings: Settings | None = None):
    res = fix_text("job.py", text, "python", settings or Settings(), None, unsafe)
    ast.parse(res.fixed)  # still Python
    return res


def removed_lines(before: str, after: str) -> list[str]:
    """The lines of ``before`` missing from ``after`` (others must survive untouched)."""
    rest = after.splitlines()
    gone = []
    for line in before.splitlines():
        if line in rest:
            rest.remove(line)
        else:
            gone.append(line)
    return gone


HEAD = py(
    """
    #!/usr/bin/env python3
    \"\"\"Sync the archive, one run at a time.\"\"\"
    import atexit
    import fcntl
    import os
    import sys

    LOCK = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/run/user/1000"), "sync.lock")
    """
)

# --------------------------------------------------------------------------- LCK201

FINALLY = HEAD + py(
    """

    def main() -> int:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("sync already running", file=sys.stderr)
            return 75
        try:
            sync_archive()  # the real work
        finally:
            os.close(fd)
            os.remove(LOCK)  # tidy up
        return 0


    if __name__ == "__main__":
        sys.exit(main())
    """
)


def test_lck201_removal_in_finally_is_dropped():
    assert "LCK201" in codes(analyze_text("job.py", FINALLY, "python")[1])
    res = fixed(FINALLY)
    gone = removed_lines(FINALLY, res.fixed)
    assert [g.strip() for g in gone] == ["os.remove(LOCK)  # tidy up"]
    assert "        os.close(fd)\n" in res.fixed
    assert "sync_archive()  # the real work" in res.fixed
    assert "LCK201" not in codes(res.remaining)
    assert [f.code for f in res.applied] == ["LCK201"]


ATEXIT = HEAD + py(
    """

    def main() -> int:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("sync already running", file=sys.stderr)
            return 75
        atexit.register(os.remove, LOCK)
        sync_archive()
        return 0


    if __name__ == "__main__":
        sys.exit(main())
    """
)


def test_lck201_atexit_remove_is_dropped():
    res = fixed(ATEXIT)
    assert [g.strip() for g in removed_lines(ATEXIT, res.fixed)] == [
        "import atexit",  # left unused (ruff F401)
        "atexit.register(os.remove, LOCK)",
    ]
    assert "LCK201" not in codes(res.remaining)


def test_lck201_drop_keeps_an_import_a_decorator_still_uses():
    # the rewrite's unused-import check reads the statements it does not reach from the
    # original's tree: a decorator is part of its function's statement
    text = ATEXIT.replace(
        "\ndef main() -> int:",
        "\n@atexit.register\ndef _bye() -> None:\n    print('bye')\n\n\ndef main() -> int:",
    )
    assert "@atexit.register" in text
    res = fixed(text)
    assert [g.strip() for g in removed_lines(text, res.fixed)] == [
        "atexit.register(os.remove, LOCK)"
    ]
    assert "import atexit" in res.fixed


# --------------------------------------------------------------------------- LCK301

PROBE = py(
    """
    import os


    def usable(directory):
        # a location is usable when create and delete both work there
        try:
            os.mkdir(os.path.join(directory, ".probe"))
            os.rmdir(os.path.join(directory, ".probe"))
        except OSError:
            return False
        return True
    """
)


def test_lck301_getpid_at_create_and_remove():
    assert "LCK301" in codes(analyze_text("job.py", PROBE, "python")[1])
    res = fixed(PROBE)
    lines = res.fixed.splitlines()
    mk = next(ln for ln in lines if "os.mkdir(" in ln)
    rm = next(ln for ln in lines if "os.rmdir(" in ln)
    assert "os.getpid()" in mk and "os.getpid()" in rm
    assert len(removed_lines(PROBE, res.fixed)) == 2, "only the two probe lines change"
    assert "# a location is usable" in res.fixed
    assert res.remaining == []


# --------------------------------------------------------------------------- LCK401


def _busy(exit_stmt: str) -> str:
    return py(
        f"""
        import fcntl
        import os
        import sys

        LOCK = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/run/user/1000"), "rep.lock")
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("report already running")  # seen by nobody
            {exit_stmt}
        build_report()
        """
    )


@pytest.mark.parametrize(
    "before, after",
    [
        ("sys.exit(0)", "sys.exit(75)"),
        ("sys.exit()", "sys.exit(75)"),
        ("raise SystemExit", "raise SystemExit(75)"),
        ("raise SystemExit(0)", "raise SystemExit(75)"),
    ],
)
def test_lck401_python_exits(before, after):
    text = _busy(before)
    assert fixed(text).fixed == text, "unsafe: not applied by default"
    res = fixed(text, unsafe=True)
    assert res.fixed == _busy(after)
    assert "LCK401" not in codes(res.remaining)


def test_lck401_python_configured_code():
    res = fixed(_busy("sys.exit(0)"), unsafe=True, settings=Settings(skip_exit_code=3))
    assert res.fixed == _busy("sys.exit(3)")


# --------------------------------------------------------------------------- suggestion

MKDIR = py(
    """
    #!/usr/bin/env python3
    \"\"\"Nightly export.\"\"\"
    import os
    import sys

    LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "export.lock")


    def main():
        try:
            os.mkdir(LOCK)  # take the lock
        except FileExistsError:
            print("export already running")
            sys.exit(0)
        try:
            export()
        finally:
            os.rmdir(LOCK)


    if __name__ == "__main__":
        main()
    """
)


def test_existence_lock_suggestion_is_the_flock_pattern():
    _facts, findings = analyze_text("job.py", MKDIR, "python")
    (f,) = [f for f in findings if f.code in ("LCK101", "LCK202") and f.suggestion][:1]
    assert f.suggestion.applicability is Applicability.SUGGESTION
    after = apply_edits(MKDIR, f.suggestion.edits)
    ast.parse(after)
    assert "fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # take the lock" in after
    assert "except BlockingIOError:" in after
    assert "sys.exit(75)" in after
    assert 'os.environ.get("XDG_STATE_HOME")' in after, "moved out of the script's folder"
    assert "os.rmdir(LOCK)" not in after
    assert "import fcntl\n" in after
    # never applied
    assert "os.mkdir(LOCK)" in fixed(MKDIR, unsafe=True).fixed


PIDFILE = py(
    """
    import os
    import sys

    PIDFILE = "/var/lib/job/job.pid"
    if os.path.exists(PIDFILE):
        print("running")  # seen by nobody
        sys.exit(0)
    with open(PIDFILE, "w") as fh:
        fh.write(str(os.getpid()))
    try:
        work()
    finally:
        os.remove(PIDFILE)
    """
)


def test_check_then_create_suggestion():
    _facts, findings = analyze_text("job.py", PIDFILE, "python")
    (f,) = [f for f in findings if f.code == "LCK103"]
    after = apply_edits(PIDFILE, f.suggestion.edits)
    assert after == py(
        """
        import fcntl
        import os
        import sys

        PIDFILE = "/var/lib/job/job.pid"
        lock_fd = os.open(PIDFILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("running")  # seen by nobody
            sys.exit(75)
        work()
        """
    )
    assert not {"LCK103", "LCK201", "LCK401"} & set(codes(analyze_text("j.py", after, "python")[1]))


ATEXIT_FIRST = py(
    """
    #!/usr/bin/env python3
    import atexit
    import os
    import sys

    LOCK = "/srv/locks/job.d"


    def main():
        atexit.register(os.rmdir, LOCK)
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            print("busy", file=sys.stderr)
            sys.exit(75)
        work()


    if __name__ == "__main__":
        main()
    """
)


def test_lck203_atexit_moves_after_the_acquire():
    res = fixed(ATEXIT_FIRST, unsafe=True)
    line = "    atexit.register(os.rmdir, LOCK)\n"
    expected = ATEXIT_FIRST.replace(line, "").replace(
        "        sys.exit(75)\n", "        sys.exit(75)\n" + line
    )
    assert res.fixed == expected
    assert "LCK203" in [f.code for f in res.applied]
    assert fixed(ATEXIT_FIRST).fixed == ATEXIT_FIRST, "LCK203's fix is unsafe"
