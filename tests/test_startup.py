"""What a one-file scan pays for before it analyses anything (issue #11: a pre-commit run on
one job script is a process start per file).  Timings live in ``bench/``; these tests pin
the structure: the worker is forked without ``multiprocessing``, the grammar is loaded
without its package's ``importlib.resources``, a clean script's scan imports neither the
job-definition nor the fix layer (nor the stdlib modules only they need), and the bounds
still hold for a single file."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import textwrap
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "bench" / "samples" / "nightly-report.py"
HEAVY = ("multiprocessing", "importlib.resources")
REPO = Path(__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    # The child runs with ``-S``: a ``.pth`` file of the machine's site-packages may import
    # anything at start-up (seen in CI: a certificate hook imports certifi, and with it
    # importlib.resources), and what is measured here is what lockcheck itself imports.
    # Without site processing the package and its dependencies come from PYTHONPATH.
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKCHECK_")}
    paths = [str(REPO), *site.getsitepackages()]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra)
    return env


def _python(code: str) -> list[str]:
    return [sys.executable, "-S", "-c", code]


def test_the_child_interpreter_starts_without_the_heavy_modules():
    # the premise of the tests below: a bare start imports none of HEAVY, so their absence
    # after a scan is lockcheck's doing
    code = f"import sys; print(sorted(m for m in sys.modules if m in {HEAVY!r}))"
    proc = subprocess.run(
        _python(code), capture_output=True, text=True, timeout=60, check=False, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def _scan_in_child(path: Path, env: dict[str, str]) -> tuple[str, str]:
    code = textwrap.dedent(
        f"""\
        import sys
        from lockcheck.cli import main
        status = main(["scan", "--isolated", "--output-format", "concise", {str(path)!r}])
        print("STATUS", status, sorted(m for m in sys.modules if m in {HEAVY!r}))
        """
    )
    proc = subprocess.run(
        _python(code),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    *report, last = proc.stdout.splitlines()
    return "\n".join(report), last


def test_a_one_file_scan_imports_neither_multiprocessing_nor_importlib_resources():
    report, last = _scan_in_child(SAMPLE, _env())
    assert last == "STATUS 0 []", (report, last)


SHELL_SAMPLE = SAMPLE.parent / "nightly-sync.sh"
# what a scan of one clean job script never needs: the job-definition layer (read only when
# a definition is among the inputs), the fix layer (fixes and suggestions: --fix, --diff,
# --show-fixes, or a file with findings), and the stdlib modules that only those or the
# other subcommands use
NOT_ON_A_SCAN = (
    "lockcheck.definitions",
    "lockcheck.fix",
    "lockcheck.runtime.probe",
    "lockcheck.runtime.race",
    "libcst",
    "dataclasses",
    "inspect",
    "typing",
    "shutil",
    "pickle",
    "tokenize",
    "json",
)


def _imported_by_scan(path: Path, in_process: bool) -> tuple[str, list[str]]:
    """The report and the modules of NOT_ON_A_SCAN a one-file scan imports; ``in_process``:
    with no fork available, so that the worker's imports (frontend, grammar) are counted."""
    code = textwrap.dedent(
        f"""\
        import os, sys
        if {in_process!r}:
            del os.fork  # the runner then analyses in this process
        from lockcheck.cli import main
        status = main(["scan", "--isolated", "--output-format", "concise", {str(path)!r}])
        heavy = {NOT_ON_A_SCAN!r}
        found = [m for m in sorted(sys.modules) if m in heavy or m.startswith(tuple(h + "." for h in heavy))]
        print("STATUS", status, "python" in str(sys.modules.get("lockcheck.frontends.python")))
        print("MODULES", " ".join(found))
        """
    )
    proc = subprocess.run(
        _python(code), capture_output=True, text=True, timeout=120, check=False, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    *report, status, modules = proc.stdout.splitlines()
    return status, modules.split()[1:]


def test_a_one_file_scan_imports_neither_the_definitions_nor_the_fix_layer():
    # issue 11: a pre-commit run pays a process start per file; what a clean script's scan
    # imports, in the parent (which forks the worker) and with the worker's imports too
    for path in (SAMPLE, SHELL_SAMPLE):
        for in_process in (False, True):
            status, modules = _imported_by_scan(path, in_process)
            assert status.startswith("STATUS 0 "), (path, status)
            assert modules == [], (path.name, in_process, modules)


def test_the_structural_check_sees_what_the_worker_imports(tmp_path):
    # the premise of the test above: in process the worker's imports are seen (the Python
    # frontend; for a file with findings, the fix layer's suggestions)
    status, _modules = _imported_by_scan(SAMPLE, True)
    assert status == "STATUS 0 True", status
    job = tmp_path / "job.py"
    job.write_text(
        "import os, sys\n"
        'LOCK = "/tmp/nightly.lock"\n'
        "try:\n"
        "    os.mkdir(LOCK)\n"
        "except FileExistsError:\n"
        "    sys.exit(0)\n"
    )
    status, modules = _imported_by_scan(job, True)
    assert status == "STATUS 1 True", status
    assert "lockcheck.fix.suggest" in modules, modules


def test_analysing_a_python_file_does_not_import_importlib_resources():
    # the grammar's package imports it for its query files, which lockcheck never reads
    code = textwrap.dedent(
        f"""\
        import sys
        from lockcheck.engine import analyze_text
        _facts, findings = analyze_text("job.py", open({str(SAMPLE)!r}).read(), "python")
        print(len(_facts.acquires), "importlib.resources" in sys.modules)
        """
    )
    proc = subprocess.run(
        _python(code), capture_output=True, text=True, timeout=120, check=False, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "False"]


def test_a_one_file_scan_finds_the_same_as_before(tmp_path):
    job = tmp_path / "job.py"
    job.write_text(
        "import fcntl, os, sys\n"
        'LOCK = "/tmp/nightly.lock"\n'
        'fh = open(LOCK, "w")\n'
        "try:\n"
        "    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except OSError:\n"
        "    sys.exit(0)\n"
        "os.remove(LOCK)\n"
    )
    report, last = _scan_in_child(job, _env())
    assert last == "STATUS 1 []", (report, last)
    assert f"{job}:8:1: LCK201" in report or "job.py:8:1: LCK201" in report, report


def test_a_single_file_that_crashes_its_worker_is_one_lck000(tmp_path):
    # the one file of the run is still analysed in a forked child: its crash is reported
    job = tmp_path / "crash.py"
    job.write_text("import fcntl\nfcntl.flock(open('/tmp/x.lock', 'w'), fcntl.LOCK_EX)\n")
    report, last = _scan_in_child(job, _env(LOCKCHECK_TEST_WORKER_FAULT="crash:crash.py"))
    assert last.startswith("STATUS 1 "), (report, last)
    assert "crash.py:1:1: LCK000 (warning) analysis stopped: the analysis crashed (SIGSEGV)" in (
        report
    )


def test_importing_the_scan_path_compiles_no_pattern_of_lockcheck():
    # the module-level patterns of a Python file's scan are lockcheck.lazyre stand-ins: it
    # compiles only those its file needs (the report's, Windows paths', Python 2's... wait)
    code = textwrap.dedent(
        """\
        import re, sys
        import re._compiler as c
        compiled = []
        real = c.compile
        def spy(p, flags=0):
            f = sys._getframe(1)
            while f.f_code.co_filename.endswith(("__init__.py", "_compiler.py")) and (
                f.f_globals.get("__name__", "").startswith("re")
            ):
                f = f.f_back  # re.compile's own frames: the caller is the next one
            if f.f_globals.get("__name__", "").startswith("lockcheck"):
                compiled.append((f.f_code.co_filename, p))
            return real(p, flags)
        c.compile = spy
        import lockcheck.cli, lockcheck.engine, lockcheck.checks, lockcheck.frontends.python
        import lockcheck.report.full, lockcheck.report.concise
        print(compiled)
        """
    )
    proc = subprocess.run(
        _python(code), capture_output=True, text=True, timeout=120, check=False, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_lazy_pattern_behaves_as_the_compiled_one():
    import re

    from lockcheck import lazyre

    lazy = lazyre.compile(r"(?P<w>no)qa", re.I)
    assert lazy.pattern == r"(?P<w>no)qa"
    assert "search" not in vars(lazy)  # not compiled yet
    assert lazy.search("# NOQA").group("w") == "NO"
    assert lazy.flags == re.compile(r"(?P<w>no)qa", re.I).flags
    assert lazy.sub("x", "noqa noqa") == "x x"
    assert "search" in vars(lazy)  # the compiled pattern's method, kept
    import copy

    assert copy.copy(lazy).search("noqa")


def test_a_scan_gives_the_collector_back_as_it_found_it():
    # the runner pauses the collector for the imports before a fork and freezes what the
    # process holds (lockcheck.runner.preload, lockcheck.workers); after the run nothing
    # stays frozen or paused, with a worker and without one
    for in_process in (False, True):
        code = textwrap.dedent(
            f"""\
            import gc, os
            if {in_process!r}:
                del os.fork
            from lockcheck.cli import main
            status = main(["scan", "--isolated", "--output-format", "concise", {str(SAMPLE)!r}])
            print("STATUS", status, gc.isenabled(), gc.get_freeze_count())
            """
        )
        proc = subprocess.run(
            _python(code), capture_output=True, text=True, timeout=120, check=False, env=_env()
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "STATUS 0 True 0", (in_process, proc.stdout)
