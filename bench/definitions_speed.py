"""The cost of the job-definition layer (issue 15): a scan of one repository with the layer
and one with ``definitions = false``, interleaved, medians of wall and CPU time (all of it, and
the lockcheck process's own: its workers apart).

    python bench/definitions_speed.py --repo DIR [--runs 11] [--baseline SRC]

The repository is scanned in place (run it on an extracted copy outside this worktree).  The
lockcheck package is byte-compiled first, as an installed package is, so that both sides pay
the same import cost as a user does.  Target: the median with the layer <= 1.2 x without.

``--baseline SRC``: also the lockcheck package under ``SRC`` (an earlier commit, e.g.
``git archive REF lockcheck | tar -x -C SRC``), interleaved in the same runs, so that a
change's before and after ratios are measured side by side under the same load.
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
# `python -m lockcheck`, then its own CPU time (its workers' apart) on stderr: the walk, the
# join and the report run in this process, the analysis in the workers beside it, so with a
# core to spare the wall time follows this process's CPU time
MAIN = """
import os, resource, runpy, sys
sys.argv[0] = "lockcheck"
try:
    runpy.run_module("lockcheck", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
u = resource.getrusage(resource.RUSAGE_SELF)
os.write(2, f"\\nMAIN-CPU {u.ru_utime + u.ru_stime:.4f}\\n".encode())
sys.exit(code)
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--baseline", type=Path, help="a directory holding an earlier lockcheck")
    args = ap.parse_args(argv)
    import lockcheck

    compileall.compile_dir(os.path.dirname(lockcheck.__file__), quiet=1)
    trees = {"": None}  # "": the lockcheck this interpreter imports
    if args.baseline:
        compileall.compile_dir(str(args.baseline / "lockcheck"), quiet=1)
        trees["baseline "] = str(args.baseline.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        configs = {}
        for name, value in (("with", "true"), ("without", "false")):
            cfg = Path(tmp) / f"{name}.toml"
            cfg.write_text(f"definitions = {value}\n")
            configs[name] = cfg
        base = [sys.executable, "-c", MAIN, "scan", "--output-format", "concise"]
        times: dict[str, list[tuple[float, float, float]]] = {}
        env_cwd = os.getcwd()
        old_path = os.environ.get("PYTHONPATH")
        os.chdir(args.repo)
        try:
            for _ in range(args.runs):
                for tree, src in trees.items():
                    if src is None:
                        os.environ.pop("PYTHONPATH", None)
                    else:
                        os.environ["PYTHONPATH"] = src
                    for name, cfg in configs.items():
                        wall, cpu, _rss, code, err = run_one([*base, "--config", str(cfg), "."])
                        if code not in (0, 1) or "Traceback" in err:
                            print(err, file=sys.stderr)
                            return 2
                        main_cpu = float(err.rsplit("MAIN-CPU ", 1)[1].split()[0])
                        times.setdefault(tree + name, []).append((wall, cpu, main_cpu))
        finally:
            os.chdir(env_cwd)
            if old_path is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old_path
    result: dict = {"repo": str(args.repo), "runs": args.runs, "target": TARGET}
    for tree in trees:
        for name in ("with", "without"):
            ts = times[tree + name]
            result[tree + name] = {
                "wall_median": statistics.median(t[0] for t in ts),
                "cpu_median": statistics.median(t[1] for t in ts),
                "main_cpu_median": statistics.median(t[2] for t in ts),
            }
        w, wo = result[tree + "with"], result[tree + "without"]
        ratios = {k: w[k + "_median"] / wo[k + "_median"] for k in ("wall", "cpu", "main_cpu")}
        for k, v in ratios.items():
            result[f"{tree}{k}_ratio"] = v
        for name in ("with", "without"):
            r = result[tree + name]
            print(
                f"{tree}{name:8} layer: wall {r['wall_median']:.3f} s  cpu {r['cpu_median']:.3f} s"
                f"  main process cpu {r['main_cpu_median']:.3f} s"
            )
        print(
            f"{tree}ratio: wall {ratios['wall']:.2f}x  cpu {ratios['cpu']:.2f}x  main process cpu"
            f" {ratios['main_cpu']:.2f}x  (target <= {TARGET}x)"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "definitions-speed.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["wall_ratio"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
