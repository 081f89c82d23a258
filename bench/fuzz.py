"""Long fuzzing runs of lockcheck (the short, deterministic version is tests/test_fuzz.py).

    nice python bench/fuzz.py --seconds 1800 [--seed N] [--scale 4] [--slow 20]

Feeds random, mutated, structured and edge-shaped inputs (tests/fuzz_inputs.py) to both
frontends, the checks and the fixer; every 20th input also goes through
``lockcheck scan --fix`` in-process.  Counts inputs per category; an input that raises, breaks
a check or takes more than ``--slow`` CPU seconds per 100 KB is saved under
``bench/results/fuzz-<time>/<category>-<n>.txt`` (with the traceback beside it).  Exit status
1 when anything was saved.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fuzz_inputs import CATEGORIES, check, check_cli_fix  # noqa: E402

from lockcheck.fix.apply import encode  # noqa: E402


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (``scan --fix`` forks workers).
    Not wall time: a nice'd run on a loaded machine waits, which is no slowness of lockcheck's."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600, help="time budget (600)")
    ap.add_argument("--seed", type=int, default=None, help="seed (default: from the clock)")
    ap.add_argument("--scale", type=int, default=4, help="size scale of the inputs (4)")
    ap.add_argument(
        "--slow",
        type=float,
        default=20,
        help="save inputs that take more CPU time than this per 100 KB (20 s)",
    )
    ap.add_argument("--out", type=Path, default=None, help="where to save findings")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    out = args.out or HERE / "results" / time.strftime("fuzz-%Y%m%dT%H%M%S")
    tried: Counter = Counter()
    saved: Counter = Counter()
    slowest: dict[str, float] = {}
    start = time.monotonic()
    print(f"seed {seed}, {args.seconds:.0f} s, findings go to {out}", flush=True)
    n = 0
    while time.monotonic() - start < args.seconds:
        category = list(CATEGORIES)[n % len(CATEGORIES)]
        n += 1
        text, lang = CATEGORIES[category](rng, args.scale)
        t0 = cpu_seconds()
        problem = None
        try:
            check(text, lang)
            if n % 20 == 0:
                check_cli_fix(text, lang)
        except Exception:  # noqa: BLE001 - anything is a finding here
            problem = traceback.format_exc()
        took = cpu_seconds() - t0
        tried[category] += 1
        slowest[category] = max(slowest.get(category, 0.0), took)
        if problem is None and took > args.slow * (1 + len(text) / 100_000):
            problem = f"slow: {took:.1f} s CPU for {len(text)} characters\n"
        if problem is not None:
            saved[category] += 1
            out.mkdir(parents=True, exist_ok=True)
            base = out / f"{category}-{n}"
            base.with_suffix(".txt").write_bytes(encode(text))
            base.with_suffix(".why").write_text(f"language: {lang}\n{problem}")
            print(f"  saved {base.name}: {problem.strip().splitlines()[-1]}", flush=True)
        if n % 200 == 0:
            print(f"  {time.monotonic() - start:7.0f} s  {dict(tried)}", flush=True)
    total = time.monotonic() - start
    print(f"\n{sum(tried.values())} inputs in {total:.0f} s (seed {seed}, scale {args.scale})")
    print(f"{'category':12s} {'inputs':>8s} {'saved':>6s} {'slowest CPU s':>14s}")
    for category in CATEGORIES:
        print(
            f"{category:12s} {tried[category]:8d} {saved[category]:6d} "
            f"{slowest.get(category, 0.0):14.2f}"
        )
    if saved:
        print(f"findings saved in {out}")
    return 1 if saved else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
