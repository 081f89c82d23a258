"""The cost of the job-definition layer (issue 15): a scan of one repository with the layer
and one with ``definitions = false``, interleaved, medians of wall and CPU time.

    python bench/definitions_speed.py --repo DIR [--runs 11]

The repository is scanned in place (run it on an extracted copy outside this worktree).  The
lockcheck package is byte-compiled first, as an installed package is, so that both sides pay
the same import cost as a user does.  Target: the median with the layer <= 1.2 x without.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import RESULTS, run_one  # noqa: E402

TARGET = 1.2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args(argv)
    import lockcheck

    compileall.compile_dir(os.path.dirname(lockcheck.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        configs = {}
        for name, value in (("with", "true"), ("without", "false")):
            cfg = Path(tmp) / f"{name}.toml"
            cfg.write_text(f"definitions = {value}\n")
            configs[name] = cfg
        base = [sys.executable, "-m", "lockcheck", "scan", "--output-format", "concise"]
        times: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
        env_cwd = os.getcwd()
        os.chdir(args.repo)
        try:
            for _ in range(args.runs):
                for name, cfg in configs.items():
                    wall, cpu, _rss, code, err = run_one([*base, "--config", str(cfg), "."])
                    if code not in (0, 1) or "Traceback" in err:
                        print(err, file=sys.stderr)
                        return 2
                    times[name].append((wall, cpu))
        finally:
            os.chdir(env_cwd)
    result = {"repo": str(args.repo), "runs": args.runs}
    for name, ts in times.items():
        result[name] = {
            "wall_median": statistics.median(t[0] for t in ts),
            "cpu_median": statistics.median(t[1] for t in ts),
        }
    wall = result["with"]["wall_median"] / result["without"]["wall_median"]
    cpu = result["with"]["cpu_median"] / result["without"]["cpu_median"]
    result.update(wall_ratio=wall, cpu_ratio=cpu, target=TARGET)
    for name in ("with", "without"):
        r = result[name]
        print(f"{name:8} layer: wall {r['wall_median']:.3f} s  cpu {r['cpu_median']:.3f} s")
    print(f"ratio: wall {wall:.2f}x  cpu {cpu:.2f}x  (target <= {TARGET}x)")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "definitions-speed.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if wall <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
