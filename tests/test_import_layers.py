"""The imports run one way: discover -> frontends -> model -> checks -> analysis -> report/fix.

The analysis (``lockcheck.analysis``, the checks, the frontends, the model) never imports the
fix layer, and the package's import graph has no cycle.  The graph is read from the source
with ``ast``: every ``import``/``from ... import`` at any depth (a lazy import inside a
function is an edge too: the circle these tests guard against was made of lazy imports).
A module's import of a name from its own package (``from . import rule`` in a rule module,
which the package's ``__init__`` imports at its end) is not an edge: Python has initialised
the package before any of its modules runs.  Imports by a computed name (the frontends by
language) are not in the graph; the subprocess test imports those modules for real.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import lockcheck

PACKAGE = Path(lockcheck.__file__).resolve().parent
ANALYSIS = (
    "lockcheck.analysis",
    "lockcheck.checks",
    "lockcheck.frontends",
    "lockcheck.model",
    "lockcheck.paths",
    "lockcheck.settings",
    "lockcheck.source",
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _target(mods: dict[str, Path], name: str) -> str | None:
    """The package module that importing ``name`` runs last (``a.b.c`` -> ``a.b`` when ``c``
    is a name defined in ``a.b``)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names] + [base]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names = [node.args[0].value]
            for name in names:
                target = _target(mods, name)
                if target and target != mod and not mod.startswith(target + "."):
                    graph[mod].add(target)
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (as a path that ends where it starts), or None."""
    colour: dict[str, int] = {}
    for root in sorted(graph):
        if root in colour:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        colour[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                stack.pop()
            elif colour.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif nxt not in colour:
                colour[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_graph_is_read_from_the_source():
    graph = import_graph()
    # the scan sees the lazy imports and the relative ones (else the next tests prove nothing)
    assert "lockcheck.fix.suggest" in graph["lockcheck.engine"]  # inside analyze_text
    assert "lockcheck.analysis" in graph["lockcheck.engine"]
    assert "lockcheck.checks" in graph["lockcheck.analysis"]  # from . import checks
    assert "lockcheck.fix.apply" in graph["lockcheck.fix.suggest"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_import_graph_has_no_cycle():
    assert _cycle(import_graph()) is None


def test_the_analysis_never_reaches_the_fix_layer_nor_the_engine():
    graph = import_graph()
    for start in sorted(m for m in graph if m.startswith(ANALYSIS)):
        reached = _reachable(graph, start)
        assert not {m for m in reached if m.startswith("lockcheck.fix")}, start
        assert "lockcheck.engine" not in reached, start
    # the fix machinery is handed the analysis (fix.bounded, which drives it in bounded
    # workers, sits above the runner and may reach the engine through it)
    for start in ("lockcheck.fix.apply", "lockcheck.fix.suggest"):
        assert "lockcheck.engine" not in _reachable(graph, start), start


def test_importing_and_running_the_analysis_imports_no_fix_module(tmp_path):
    job = tmp_path / "job.py"
    job.write_text(
        textwrap.dedent(
            """\
            import fcntl, os, sys
            LOCK = "/tmp/nightly.lock"
            fh = open(LOCK, "w")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                sys.exit(0)
            os.remove(LOCK)
            """
        )
    )
    code = textwrap.dedent(
        f"""\
        import sys
        import lockcheck.analysis, lockcheck.checks, lockcheck.engine, lockcheck.model
        import lockcheck.frontends.shell, lockcheck.frontends.python
        import lockcheck.frontends.javascript, lockcheck.frontends.powershell
        from lockcheck.analysis import analyze_facts, selected_codes
        from lockcheck.frontends import parse
        from lockcheck.settings import Settings

        path = {str(job)!r}
        facts = parse("python", path, open(path).read())
        settings = Settings()
        findings = analyze_facts(facts, settings, selected_codes(settings))
        print(sorted({{f.code for f in findings}}))
        print(sorted(m for m in sys.modules if m.startswith("lockcheck.fix")))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    codes, fix_modules = proc.stdout.splitlines()
    assert codes != "[]"  # the analysis ran on a file with findings
    assert fix_modules == "[]"


def test_a_scan_of_one_clean_file_imports_no_fix_module():
    # the suggestions are for files with findings: a one-file run (pre-commit on one job)
    # does not preload them
    job = Path(__file__).resolve().parent.parent / "bench" / "samples" / "nightly-report.py"
    code = textwrap.dedent(
        f"""\
        import sys
        from lockcheck.cli import main
        status = main(["scan", "--isolated", {str(job)!r}])
        print(status, sorted(m for m in sys.modules if m.startswith("lockcheck.fix")))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 []"
