"""Where the Python frontend's time goes, and whether its two tests in front still pay.

    python bench/python_stages.py --corpus DIR [--limit N] [--repeat 3]

Runs :func:`lockcheck.engine.analyze_text` in this process on every Python file of the corpus
(picked as ``bench/run.py`` picks them) in three set-ups, interleaved ``--repeat`` times:

* ``shipped``: the text prefilter, then CPython's parser and the AST test for a lock anchor
  (``frontends/python/gate.py``), then tree-sitter-python and the analysis;
* ``no-ast-test``: the anchor test always answers yes: every file the text test lets through
  goes on to tree-sitter and the analysis (CPython still parses it: its verdict decides
  LCK000);
* ``no-text-test``: the text prefilter always answers yes (the AST test sees every file).

For each it prints the median CPU seconds (``time.process_time`` around each call only, the
reading of the files left out), how many files reached each stage, and whether the findings
(path, code, line, column) are the same as the shipped set-up's: a test in front may only
turn away files that have none.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import collect  # noqa: E402

import lockcheck.frontends.python as py  # noqa: E402
from lockcheck.engine import analyze_text  # noqa: E402
from lockcheck.settings import Settings  # noqa: E402

SETUPS = ("shipped", "no-ast-test", "no-text-test")


class _Yes:
    """An AST test that finds an anchor in every file."""

    anchor = "(test off)"

    def __init__(self, tree) -> None:
        pass

    def lock_like_removal(self) -> bool:
        return True


def _counting(setup: str, counts: dict[str, int]):
    """The stage functions of ``frontends.python`` for ``setup``, counting their calls."""
    text_test, gate, lower = py.may_hold_lock, py.Gate, py.lower

    def may_hold_lock(text: str) -> bool:
        ok = True if setup == "no-text-test" else text_test(text)
        counts["past text test"] += ok
        return ok

    def gate_(tree):
        counts["AST test"] += 1
        return _Yes(tree) if setup == "no-ast-test" else gate(tree)

    def lower_(*a, **k):
        counts["tree-sitter + analysis"] += 1
        return lower(*a, **k)

    return {"may_hold_lock": may_hold_lock, "Gate": gate_, "lower": lower_}


def read(path: str) -> str:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def one_pass(files: list[str], setup: str) -> tuple[float, dict[str, int], set[tuple]]:
    counts = {"files": len(files), "past text test": 0, "AST test": 0}
    counts["tree-sitter + analysis"] = 0
    saved = {name: getattr(py, name) for name in ("may_hold_lock", "Gate", "lower")}
    for name, fn in _counting(setup, counts).items():
        setattr(py, name, fn)
    settings = Settings()
    cpu = 0.0
    found: set[tuple] = set()
    try:
        for path in files:
            text = read(path)
            t0 = time.process_time()
            _facts, findings = analyze_text(path, text, "python", settings)
            cpu += time.process_time() - t0
            found.update((path, f.code, f.span.line, f.span.col) for f in findings)
    finally:
        for name, fn in saved.items():
            setattr(py, name, fn)
    return cpu, counts, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/python_stages.py")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--limit", type=int, help="an even sample of at most N files")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved passes of each (3)")
    args = ap.parse_args(argv)
    files = collect(Path(args.corpus), "python", args.limit)
    if not files:
        sys.exit("bench: no Python files found")
    print(f"{len(files)} Python files under {args.corpus}")
    times: dict[str, list[float]] = {s: [] for s in SETUPS}
    counts: dict[str, dict[str, int]] = {}
    found: dict[str, set[tuple]] = {}
    for _ in range(args.repeat):
        for setup in SETUPS:
            cpu, counts[setup], found[setup] = one_pass(files, setup)
            times[setup].append(cpu)
    base = statistics.median(times["shipped"])
    for setup in SETUPS:
        med = statistics.median(times[setup])
        c = counts[setup]
        same = found[setup] == found["shipped"]
        print(
            f"  {setup:13} {med:8.2f} s CPU (x{med / base:.2f}; runs "
            + ", ".join(f"{t:.2f}" for t in times[setup])
            + f")  past text test {c['past text test']}, AST test {c['AST test']}, "
            f"tree-sitter + analysis {c['tree-sitter + analysis']}; "
            f"findings {len(found[setup])} {'same' if same else 'DIFFERENT'}"
        )
        if not same:
            for item in sorted(found[setup] ^ found["shipped"])[:20]:
                where = "only here" if item in found[setup] else "only shipped"
                print(f"    {where}: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
