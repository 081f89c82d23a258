"""Benchmarks for lockcheck against the tools it sits beside (see bench/README.md).

    python bench/run.py shell  --corpus DIR   lockcheck vs shellcheck on the corpus' shell files
    python bench/run.py single [--file F]...  one file, median process time, vs shellcheck
    python bench/run.py python --corpus DIR   lockcheck vs ruff --select ALL on the Python files

Every measurement is a separate child process; wall time is taken around it, CPU time and
peak RSS come from ``os.wait4`` for that child alone.  Results are printed and written as
JSON to ``bench/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DEFAULT_SAMPLE = HERE / "samples" / "nightly-sync.sh"
# a shell and a Python lock script of ordinary size and shape
DEFAULT_SINGLE = [str(DEFAULT_SAMPLE), str(HERE / "samples" / "nightly-sync.py")]

# Targets from the performance issue.
TARGET_SHELL_RATIO = 0.1  # lockcheck time / shellcheck time on the shell corpus
TARGET_RSS_MB = 200.0  # lockcheck peak RSS on the shell corpus
TARGET_SINGLE_MS = 100.0  # one file, process time
TARGET_PYTHON_RATIO = 0.5  # lockcheck time / ruff time on the Python corpus (#11)
TARGET_PYTHON_RSS_MB = 100.0  # lockcheck peak RSS on the Python corpus (#11)

# Keep each command line well under ARG_MAX (2 MiB on Linux, environment included).
ARG_BYTES = 1_000_000


# --------------------------------------------------------------------------- file collection


def collect(
    corpus: Path, language: str, limit: int | None = None, prune: tuple[str, ...] = ()
) -> list[str]:
    """Files of ``language`` under ``corpus`` by extension, then shebang (as lockcheck does);
    directories named in ``prune`` are not entered."""
    sys.path.insert(0, str(HERE.parent))
    from lockcheck.frontends import language_of

    out: list[str] = []
    skip = {".git", ".hg", ".svn", *prune}
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as fh:
                    head = fh.read(256)
            except OSError:
                continue
            if language_of(path, head) == language:
                out.append(path)
    if limit is not None and len(out) > limit:
        step = len(out) / limit  # an even spread over the corpus, the same on every run
        out = [out[int(i * step)] for i in range(limit)]
    return out


def collect_corpora(args, language: str) -> list[str]:
    """``collect`` over every ``--corpus`` (their files in order), then ``--limit``."""
    files = [f for c in args.corpus for f in collect(Path(c), language, None, tuple(args.prune))]
    if args.limit is not None and len(files) > args.limit:
        step = len(files) / args.limit
        files = [files[int(i * step)] for i in range(args.limit)]
    return files


def batches(files: list[str], max_files: int | None = None, max_bytes: int = ARG_BYTES):
    batch: list[str] = []
    size = 0
    for f in files:
        n = len(os.fsencode(f)) + 1
        if batch and (size + n > max_bytes or (max_files and len(batch) >= max_files)):
            yield batch
            batch, size = [], 0
        batch.append(f)
        size += n
    if batch:
        yield batch


# --------------------------------------------------------------------------- measuring


@dataclass
class Run:
    wall: float = 0.0  # seconds, around the whole measurement
    cpu: float = 0.0  # user + sys seconds of the child(ren)
    max_rss_mb: float = 0.0  # largest peak RSS of any one child
    processes: int = 0
    exit_codes: list[int] = field(default_factory=list)
    stderr_tail: str = ""
    internal_errors: int = 0  # lines reporting an internal error or a traceback
    walls: list[float] = field(default_factory=list)  # each run's wall time (--repeat)


def run_one(
    cmd: list[str], stdout=subprocess.DEVNULL, env: dict[str, str] | None = None
) -> tuple[float, float, float, int, str]:
    """(wall, cpu, max_rss_mb, exit code, stderr) of one child process."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, proc.returncode, text


def run_batched(
    base: list[str],
    files: list[str],
    *,
    jobs: int = 1,
    max_files: int | None = None,
    extra_for=None,
    stdout_path: Path | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run ``base + batch`` for each batch of files, ``jobs`` at a time."""
    groups: list[list[str]] = []
    if extra_for is None:
        groups = [base + b for b in batches(files, max_files)]
    else:  # per-file extra options (e.g. shellcheck -s bash for files without a shebang)
        by_extra: dict[tuple[str, ...], list[str]] = {}
        for f in files:
            by_extra.setdefault(tuple(extra_for(f)), []).append(f)
        for extra, fs in by_extra.items():
            groups += [base + list(extra) + b for b in batches(fs, max_files)]
    run = Run(processes=len(groups))
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(lambda c: run_one(c, out, env), groups))
        run.wall = time.perf_counter() - t0
    finally:
        if stdout_path:
            out.close()
    for _, cpu, rss, rc, err in results:
        run.cpu += cpu
        run.max_rss_mb = max(run.max_rss_mb, rss)
        run.exit_codes.append(rc)
        run.internal_errors += sum(
            1 for line in err.splitlines() if "internal error" in line or "Traceback" in line
        )
        if err.strip():
            run.stderr_tail = err.strip()[-2000:]
    return run


def median_run(runs: list[Run]) -> Run:
    """The medians of wall and CPU time over repeated runs, the largest peak RSS, every exit
    code and error line."""
    out = Run(
        wall=statistics.median(r.wall for r in runs),
        cpu=statistics.median(r.cpu for r in runs),
        max_rss_mb=max(r.max_rss_mb for r in runs),
        processes=runs[0].processes,
        internal_errors=sum(r.internal_errors for r in runs),
        stderr_tail=next((r.stderr_tail for r in reversed(runs) if r.stderr_tail), ""),
    )
    for r in runs:
        out.exit_codes.extend(r.exit_codes)
    out.walls = [r.wall for r in runs]
    return out


def repeated(args, *commands):
    """Each of ``commands`` (callables returning a Run) ``args.repeat`` times, interleaved,
    as one median Run each."""
    runs: list[list[Run]] = [[] for _ in commands]
    for _ in range(args.repeat):
        for i, command in enumerate(commands):
            runs[i].append(command())
    return [median_run(r) for r in runs]


def tool(name: str) -> str:
    """The real binary (next to this Python first: pyenv shims would add a bash process)."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if not found:
        sys.exit(f"bench: {name} not found (pip install -e '.[bench]')")
    return found


def lockcheck_cmd(args) -> list[str]:
    if args.lockcheck:
        return shlex.split(args.lockcheck)
    return [sys.executable, "-m", "lockcheck"]


def has_shebang(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"#!"


# --------------------------------------------------------------------------- modes


def mode_shell(args) -> dict:
    files = collect_corpora(args, "shell")
    if not files:
        sys.exit("bench: no shell files found")
    total_bytes = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} shell files, {total_bytes / 1e6:.1f} MB")
    RESULTS.mkdir(exist_ok=True)

    lc, sc = repeated(
        args,
        lambda: run_batched(
            lockcheck_cmd(args) + ["scan", "--isolated", "--output-format", "concise"],
            files,
            stdout_path=RESULTS / "shell-lockcheck.txt",
        ),
        # shellcheck: gcc format, batches of files, --jobs batches at once (xargs -P style).
        # A file without a shebang gets -s bash: shellcheck would otherwise stop at SC2148.
        lambda: run_batched(
            [tool("shellcheck"), "-f", "gcc"],
            files,
            jobs=args.jobs,
            max_files=args.batch,
            extra_for=lambda f: [] if has_shebang(f) else ["-s", "bash"],
            stdout_path=RESULTS / "shell-shellcheck.txt",
        ),
    )
    return report(
        "shell",
        files,
        total_bytes,
        lc,
        sc,
        "shellcheck",
        [
            ("time ratio (wall)", lc.wall / sc.wall, TARGET_SHELL_RATIO, "<="),
            ("lockcheck peak RSS MB", lc.max_rss_mb, TARGET_RSS_MB, "<="),
        ],
        args,
    )


def mode_python(args) -> dict:
    files = collect_corpora(args, "python")
    if not files:
        sys.exit("bench: no Python files found")
    total_bytes = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} Python files, {total_bytes / 1e6:.1f} MB")
    RESULTS.mkdir(exist_ok=True)
    ruff = [tool("ruff"), "check", "--select", "ALL", "--no-cache", "--isolated"]
    lc_jobs, ruff_env = [], None
    if args.single_process:  # one core each: lockcheck one worker, ruff one rayon thread
        lc_jobs = ["--jobs", "1"]
        ruff_env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    lc, rf = repeated(
        args,
        lambda: run_batched(
            lockcheck_cmd(args) + ["scan", "--isolated", "--output-format", "concise", *lc_jobs],
            files,
            stdout_path=RESULTS / "python-lockcheck.txt",
        ),
        lambda: run_batched(
            ruff + ["--output-format", "concise", "--exit-zero"],
            files,
            stdout_path=RESULTS / "python-ruff.txt",
            env=ruff_env,
        ),
    )
    return report(
        "python",
        files,
        total_bytes,
        lc,
        rf,
        "ruff",
        [
            ("time ratio (wall)", lc.wall / rf.wall, TARGET_PYTHON_RATIO, "<="),
            ("lockcheck peak RSS MB", lc.max_rss_mb, TARGET_PYTHON_RSS_MB, "<="),
        ],
        args,
    )


def _single_cmds(path: str, args) -> dict[str, list[str]]:
    cmds = {
        "lockcheck": lockcheck_cmd(args) + ["scan", "--isolated", path],
        # on a Python file shellcheck stops at SC1071: the floor of a native linter process
        "shellcheck": [tool("shellcheck"), path],
    }
    if path.endswith(".py"):  # the like-for-like native linter of a Python file
        cmds["ruff"] = [tool("ruff"), "check", "--isolated", "--no-cache", "--quiet", path]
    cmds["python -c pass"] = [sys.executable, "-c", "pass"]  # the interpreter's own floor
    cmds["python -I -S -c pass"] = [sys.executable, "-I", "-S", "-c", "pass"]
    return cmds


def mode_single(args) -> dict:
    paths = [os.path.abspath(f) for f in (args.file or DEFAULT_SINGLE)]
    n = args.runs
    # an installed lockcheck has its .pyc files; this environment may set
    # PYTHONDONTWRITEBYTECODE, which would recompile every edited module on each run
    import compileall

    compileall.compile_dir(str(HERE.parent / "lockcheck"), quiet=1)
    per_file = {}
    for path in paths:
        cmds = _single_cmds(path, args)
        for c in cmds.values():  # warm the page cache
            run_one(c)
        samples: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}
        rss: dict[str, float] = {k: 0.0 for k in cmds}
        errors: dict[str, str] = {}
        for _ in range(n):  # interleaved, so load changes hit every tool alike
            for name, c in cmds.items():
                wall, used, r, rc, err = run_one(c)
                samples[name].append(wall * 1000)
                cpu[name].append(used * 1000)
                rss[name] = max(rss[name], r)
                if rc not in (0, 1) and err:
                    errors[name] = err.strip()[-500:]
        med = {k: statistics.median(v) for k, v in samples.items()}
        med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
        print(f"file: {path} ({os.path.getsize(path)} bytes), {n} runs each, medians")
        for name in cmds:
            lo, hi = min(samples[name]), max(samples[name])
            print(
                f"  {name:22} {med[name]:7.1f} ms wall (min {lo:.1f}, max {hi:.1f}), "
                f"{med_cpu[name]:6.1f} ms CPU; peak RSS {rss[name]:.0f} MB"
            )
        lc = med["lockcheck"]
        ratios = {k: lc / med[k] for k in cmds if k != "lockcheck"}
        cpu_ratios = {k: med_cpu["lockcheck"] / max(med_cpu[k], 0.1) for k in ratios}
        print("  wall: lockcheck / " + ", ".join(f"{k} = {v:.2f}x" for k, v in ratios.items()))
        print("  CPU:  lockcheck / " + ", ".join(f"{k} = {v:.2f}x" for k, v in cpu_ratios.items()))
        verdict = "PASS" if lc <= TARGET_SINGLE_MS else "FAIL"
        print(f"  target: lockcheck <= {TARGET_SINGLE_MS:.0f} ms  -> {verdict}")
        for name, err in errors.items():
            print(f"  {name} stderr: {err}")
        per_file[path] = {
            "median_ms": med,
            "median_cpu_ms": med_cpu,
            "ratios": ratios,
            "cpu_ratios": cpu_ratios,
            "samples_ms": samples,
            "peak_rss_mb": rss,
            "pass": lc <= TARGET_SINGLE_MS,
            "errors": errors,
        }
    result = {
        "mode": "single",
        "runs": n,
        "files": per_file,
        "target_ms": TARGET_SINGLE_MS,
        "pass": all(r["pass"] for r in per_file.values()),
    }
    save(result)
    return result


def report(mode, files, total_bytes, lc: Run, other: Run, other_name, checks, args) -> dict:
    print(f"  {'':12} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12} {'procs':>6}  (medians)")
    for name, r in (("lockcheck", lc), (other_name, other)):
        walls = ", ".join(f"{w:.2f}" for w in r.walls)
        print(
            f"  {name:12} {r.wall:8.2f} {r.cpu:8.2f} {r.max_rss_mb:12.1f} {r.processes:6d}"
            f"  walls: {walls}"
        )
    ruff_threads = "one thread" if getattr(args, "single_process", False) else "its own threads"
    print(
        f"  {other_name} ran {args.jobs if other_name == 'shellcheck' else ruff_threads} "
        "worker(s); lockcheck ran one process per batch, one at a time"
    )
    print(f"  cpu ratio lockcheck/{other_name}: {lc.cpu / other.cpu:.3f}")
    verdicts = []
    for label, value, target, op in checks:
        if target is None:
            print(f"  {label}: {value:.3f}")
            continue
        ok = value <= target
        verdicts.append(ok)
        print(f"  {label}: {value:.3f} (target {op} {target}) -> {'PASS' if ok else 'FAIL'}")
    bad = [c for c in lc.exit_codes if c not in (0, 1)]
    if bad or lc.internal_errors:
        print(
            f"  lockcheck exit codes {sorted(set(lc.exit_codes))}, "
            f"{lc.internal_errors} internal-error/traceback lines"
        )
        print("  last stderr:\n    " + lc.stderr_tail[-1500:].replace("\n", "\n    "))
    if bad or lc.internal_errors:
        print("  INVALID: lockcheck did not analyse every file; the timing does not count")
        verdicts.append(False)
    result = {
        "mode": mode,
        "corpus": [os.path.abspath(c) for c in args.corpus],
        "single_process": getattr(args, "single_process", False),
        "files": len(files),
        "bytes": total_bytes,
        "lockcheck": asdict(lc),
        other_name: asdict(other),
        "ratio_wall": lc.wall / other.wall,
        "ratio_cpu": lc.cpu / other.cpu,
        "pass": all(verdicts),
    }
    save(result)
    return result


def save(result: dict) -> None:
    load = os.getloadavg()
    result["loadavg_at_end"] = load
    print(
        f"  load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on "
        f"{os.cpu_count()} CPUs (other work on the machine skews every number)"
    )
    RESULTS.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    out = RESULTS / f"{result['mode']}-{stamp}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"  written {out.relative_to(HERE.parent)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    for name in ("shell", "python"):
        p = sub.add_parser(name)
        p.add_argument(
            "--corpus",
            required=True,
            action="append",
            help="directory to collect files from (repeatable)",
        )
        p.add_argument(
            "--prune",
            action="append",
            default=[],
            metavar="NAME",
            help="directories of this name are not entered (repeatable), e.g. site-packages",
        )
        p.add_argument("--limit", type=int, help="use an even sample of at most N files")
        p.add_argument("--jobs", type=int, default=2, help="shellcheck batches at once (2)")
        p.add_argument("--batch", type=int, default=50, help="files per shellcheck process")
        p.add_argument("--repeat", type=int, default=1, help="interleaved runs, medians (1)")
        p.add_argument(
            "--single-process",
            action="store_true",
            help="python: lockcheck --jobs 1 and ruff with RAYON_NUM_THREADS=1 (one core each)",
        )
    s = sub.add_parser("single")
    s.add_argument(
        "--file",
        action="append",
        help="a file to time (repeatable; default bench/samples/nightly-sync.sh and .py)",
    )
    s.add_argument("--runs", type=int, default=11, help="runs of each command (11)")
    for p in sub.choices.values():
        p.add_argument("--lockcheck", help="command that runs lockcheck (python -m lockcheck)")
    args = ap.parse_args(argv)
    result = {"shell": mode_shell, "python": mode_python, "single": mode_single}[args.mode](args)
    return 0 if result.get("pass") else 1


if __name__ == "__main__":
    sys.exit(main())
