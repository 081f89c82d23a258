"""Speed of the Node.js and PowerShell frontends against the shell frontend's, and how much
PowerShell tree-sitter-powershell reads (see bench/README.md).

    python bench/frontends.py speed  --corpus DIR [--runs 3] [--limit N]
    python bench/frontends.py single [--runs 21]
    python bench/frontends.py parse  --corpus DIR

``speed``: for each of shell, JavaScript/TypeScript and PowerShell, the corpus' files of that
language scanned by one ``lockcheck scan --isolated`` process, ``--runs`` times, interleaved;
the median wall time gives files per second and MB per second, and the ratio to the shell
frontend's files per second on the same machine in the same run.
``single``: one file as a process (median of ``--runs`` interleaved runs) for the samples in
``bench/samples/`` (``nightly-sync.sh``, ``.js``, ``.ps1``).
``parse``: the share of PowerShell and JavaScript files whose tree has an ERROR or MISSING
node, the share of their bytes inside such nodes, and of lock-relevant commands (a textual
scan) that fall inside one, where the frontend sees no structure.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import collect, lockcheck_cmd, run_batched, run_one, save  # noqa: E402

LANGUAGES = ("shell", "javascript", "powershell")
SAMPLES = {
    "shell": HERE / "samples" / "nightly-sync.sh",
    "javascript": HERE / "samples" / "nightly-sync.js",
    "powershell": HERE / "samples" / "nightly-sync.ps1",
}
LOCKISH = {
    "powershell": re.compile(
        rb"(?i)\bnew-item\b|threading\.mutex|\]::open\(|createnew|fileshare\]?::none|"
        rb"\bremove-item\b[^\n]*lock|\bstop-process\b|\bget-process\s+-id"
    ),
    "javascript": re.compile(
        rb"openSync\(|mkdirSync\(|\bflock|process\.kill\(|unlinkSync\(|proper-lockfile|"
        rb"[\"']wx[\"']|O_EXCL"
    ),
}


def mode_speed(args) -> dict:
    files = {lang: collect(Path(args.corpus), lang, args.limit) for lang in LANGUAGES}
    sizes = {lang: sum(os.path.getsize(f) for f in fs) for lang, fs in files.items()}
    walls: dict[str, list[float]] = {lang: [] for lang in LANGUAGES if files[lang]}
    rss: dict[str, float] = {lang: 0.0 for lang in walls}
    base = lockcheck_cmd(args) + ["scan", "--isolated", "--output-format", "concise"]
    for _ in range(args.runs):  # interleaved: load changes hit every language alike
        for lang in walls:
            r = run_batched(base, files[lang])
            if any(c not in (0, 1) for c in r.exit_codes) or r.internal_errors:
                sys.exit(f"bench: lockcheck failed on the {lang} files: {r.stderr_tail[-800:]}")
            walls[lang].append(r.wall)
            rss[lang] = max(rss[lang], r.max_rss_mb)
    out = {}
    print(f"median of {args.runs} runs, one lockcheck process per language")
    print(
        f"  {'language':12} {'files':>6} {'MB':>6} {'wall s':>7} {'files/s':>8} {'MB/s':>6} {'RSS MB':>7}"
    )
    for lang, ws in walls.items():
        med = statistics.median(ws)
        out[lang] = {
            "files": len(files[lang]),
            "bytes": sizes[lang],
            "wall_s": ws,
            "median_s": med,
            "files_per_s": len(files[lang]) / med,
            "mb_per_s": sizes[lang] / 1e6 / med,
            "peak_rss_mb": rss[lang],
        }
        print(
            f"  {lang:12} {len(files[lang]):6d} {sizes[lang] / 1e6:6.1f} {med:7.2f} "
            f"{out[lang]['files_per_s']:8.1f} {out[lang]['mb_per_s']:6.2f} {rss[lang]:7.0f}"
        )
    if "shell" in out:
        for lang in out:
            if lang != "shell":
                ratio = out[lang]["files_per_s"] / out["shell"]["files_per_s"]
                out[lang]["files_per_s_vs_shell"] = ratio
                print(f"  {lang} files/s = {ratio:.2f} x shell's")
    result = {"mode": "frontends-speed", "corpus": os.path.abspath(args.corpus), "runs": args.runs}
    result.update(out)
    save(result)
    return result


def mode_single(args) -> dict:
    import compileall

    compileall.compile_dir(str(HERE.parent / "lockcheck"), quiet=1)
    cmds = {
        lang: lockcheck_cmd(args) + ["scan", "--isolated", str(p)] for lang, p in SAMPLES.items()
    }
    cmds["python -c pass"] = [sys.executable, "-c", "pass"]
    for c in cmds.values():
        run_one(c)
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(args.runs):
        for name, c in cmds.items():
            wall, _cpu, _rss, _rc, _err = run_one(c)
            samples[name].append(wall * 1000)
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"one file as a process, median of {args.runs} interleaved runs")
    for name, m in med.items():
        print(
            f"  {name:16} {m:7.1f} ms  (min {min(samples[name]):.1f}, max {max(samples[name]):.1f})"
        )
    result = {
        "mode": "frontends-single",
        "runs": args.runs,
        "median_ms": med,
        "samples_ms": samples,
    }
    save(result)
    return result


def _error_ranges(root) -> list[tuple[int, int]]:
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            out.append((n.start_byte, n.end_byte))
        elif n.has_error:
            stack.extend(n.children)
    return sorted(out)


def mode_parse(args) -> dict:
    from lockcheck.frontends import treesitter
    from lockcheck.frontends.javascript.syntax import TYPESCRIPT_EXTENSIONS

    result: dict = {"mode": "frontends-parse", "corpus": os.path.abspath(args.corpus)}
    for lang in ("powershell", "javascript"):
        files = collect(Path(args.corpus), lang, args.limit)
        bad = err_bytes = all_bytes = cmds = lost = 0
        for f in files:
            text = Path(f).read_bytes().decode("utf-8-sig", errors="replace")
            src = treesitter.source_bytes(text)
            grammar = lang
            if lang == "javascript" and f.lower().endswith(TYPESCRIPT_EXTENSIONS):
                grammar = "typescript"
            errs = _error_ranges(treesitter.parser(grammar).parse(src).root_node)
            all_bytes += len(src)
            last = 0
            for s, e in errs:
                s = max(s, last)
                if e > s:
                    err_bytes += e - s
                    last = e
            bad += bool(errs)
            for m in LOCKISH[lang].finditer(src):
                cmds += 1
                lost += any(s <= m.start() < e for s, e in errs)
        n = max(len(files), 1)
        result[lang] = {
            "files": len(files),
            "files_with_error": bad,
            "bytes_in_error_share": err_bytes / max(all_bytes, 1),
            "lock_commands": cmds,
            "lock_commands_in_error": lost,
        }
        print(
            f"{lang}: {bad} of {len(files)} files ({100 * bad / n:.1f}%) have an ERROR/MISSING "
            f"node; {100 * err_bytes / max(all_bytes, 1):.1f}% of the bytes lie in one; "
            f"{lost} of {cmds} lock-relevant commands ({100 * lost / max(cmds, 1):.1f}%) do"
        )
    save(result)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/frontends.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    for name in ("speed", "parse"):
        p = sub.add_parser(name)
        p.add_argument("--corpus", required=True, help="directory to collect files from")
        p.add_argument(
            "--limit", type=int, help="use an even sample of at most N files per language"
        )
    sub.choices["speed"].add_argument("--runs", type=int, default=3, help="runs of each (3)")
    s = sub.add_parser("single")
    s.add_argument("--runs", type=int, default=21, help="runs of each command (21)")
    for p in sub.choices.values():
        p.add_argument("--lockcheck", help="command that runs lockcheck (python -m lockcheck)")
    args = ap.parse_args(argv)
    {"speed": mode_speed, "single": mode_single, "parse": mode_parse}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
