"""Check that the Python slicer changes no finding: every file that reaches libcst is
analysed twice, with the unrelated functions dropped (as lockcheck runs) and whole, and the
findings are compared.  Facts may differ (names a dropped function creates are not needed
when nothing removes a lock-like name); findings may not.

    python bench/slice_check.py --corpus DIR [--limit N]

Exit status 0 when every file agrees.  Not a unit test: it needs a corpus.
"""

from __future__ import annotations

import argparse
import ast
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import collect  # noqa: E402

from lockcheck.engine import analyze_text  # noqa: E402
from lockcheck.frontends import python as pyfront  # noqa: E402
from lockcheck.frontends.python_gate import Gate, may_hold_lock  # noqa: E402


def findings(path: str, text: str) -> list[tuple]:
    _facts, found = analyze_text(path, text, "python")
    return sorted((f.code, f.span.line, f.span.col, f.message) for f in found)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--limit", type=int)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    sliced_fn = pyfront.slice_text
    checked = differ = 0
    for path in collect(Path(args.corpus), "python", args.limit):
        try:
            text = Path(path).read_bytes().decode("utf-8", "surrogateescape")
            if not may_hold_lock(text) or Gate(ast.parse(text)).anchor is None:
                continue
        except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
            continue
        checked += 1
        sliced = findings(path, text)
        pyfront.slice_text = lambda *a, **k: None  # the whole file
        try:
            whole = findings(path, text)
        finally:
            pyfront.slice_text = sliced_fn
        if sliced != whole:
            differ += 1
            print(f"DIFFER {path}")
            for f in sorted(set(whole) - set(sliced)):
                print(f"  only whole:  {f}")
            for f in sorted(set(sliced) - set(whole)):
                print(f"  only sliced: {f}")
    print(f"{checked} files reach libcst; findings differ in {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
