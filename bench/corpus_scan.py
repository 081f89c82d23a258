"""Scan a whole corpus and collect what a reviewer needs: crashes, findings per rule, samples.

    python bench/corpus_scan.py --corpus DIR [--language shell|python|all] [--cli]
                                [--sample N] [--seed S] [--timeout SEC]
                                [--json OUT] [--baseline PYTHON|FINDINGS.json]

Default (in-process): every file goes through ``lockcheck.engine.analyze_text`` inside its own
``try``, so a crash is caught with its traceback and the file it happened on, and every file is
timed (the slowest are listed).  ``--cli`` instead runs ``python -m lockcheck scan --isolated
--output-format json`` over the files in batches, as a user would, and collects any traceback or
"internal error" line from stderr.

Writes to ``bench/results/``:

* ``scan-findings.jsonl``  one finding per line (path, language, code, line, col, message)
* ``scan-crashes.txt``     each crash: file, exception, traceback (in-process mode) or stderr
* ``scan-summary.json``    counts per rule and language, files with findings, slowest files
* ``review-sample-<language>.md``  with ``--sample N``: N findings per language drawn at random
  (seeded), each with the code around it and blank "verdict/reason" lines to fill in by hand.

Before and after (issue #12): ``--json OUT`` also writes this run's findings as one JSON
document (the lockcheck it imported, the files, and per finding path relative to the corpus,
language, code, line, column, message).  ``--baseline`` names the other side: a document an
earlier ``--json`` wrote, or the interpreter of another lockcheck version (a venv in a
``git worktree`` of the old commit), which is then run on the same file list in a child
process (in-process mode, it imports *its* lockcheck).  The findings are compared on (path,
code, line, column); the new and the lost ones are printed with their messages and written to
``results/scan-diff.json``, and the findings kept whose message changed are counted.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("lockcheck") is None:  # an installed lockcheck (a venv's) wins
    sys.path.insert(0, str(HERE.parent))

from run import RESULTS, batches, collect  # noqa: E402

import lockcheck  # noqa: E402  (before collect(), which would put HERE.parent first)

LANGUAGES = ("shell", "python", "javascript", "powershell")


class FileTimeout(BaseException):
    """Not an ``Exception``: lockcheck's own internal-error guard must not turn it into LCK000."""


def _alarm(signum, frame):
    raise FileTimeout()


def read_text(path: str) -> str:
    """The text as the CLI reads it (a UTF-16/UTF-32 byte-order mark, as PowerShell files often
    have, decides the encoding), else UTF-8, else Latin-1."""
    data = Path(path).read_bytes()
    try:
        from lockcheck.source import decode
    except ImportError:  # an older lockcheck as the baseline
        decode = None
    src = decode(data) if decode is not None else None
    if src is not None:
        return src.text
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def scan_in_process(files: list[tuple[str, str]], timeout: int):
    from lockcheck.engine import analyze_text
    from lockcheck.settings import Settings

    settings = Settings()
    findings, crashes, timings = [], [], []
    signal.signal(signal.SIGALRM, _alarm)
    for n, (path, language) in enumerate(files, 1):
        text = read_text(path)
        t0 = time.perf_counter()
        signal.alarm(timeout)
        try:
            _, found = analyze_text(path, text, language, settings)
        except FileTimeout:
            crashes.append({"path": path, "language": language, "error": f"timeout {timeout}s"})
            continue
        except Exception as exc:  # noqa: BLE001 - the point is to catch everything
            crashes.append(
                {
                    "path": path,
                    "language": language,
                    "error": f"{type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(),
                }
            )
            continue
        finally:
            signal.alarm(0)
        timings.append((time.perf_counter() - t0, path))
        for f in found:
            findings.append(
                {
                    "path": path,
                    "language": language,
                    "code": f.code,
                    "severity": f.severity.value,
                    "line": f.span.line,
                    "col": f.span.col,
                    "message": f.message,
                }
            )
        if n % 1000 == 0:
            print(
                f"  {n}/{len(files)} files, {len(findings)} findings, {len(crashes)} crashes",
                file=sys.stderr,
            )
    return findings, crashes, timings


def scan_cli(files: list[tuple[str, str]]):
    findings, crashes = [], []
    langs = dict(files)
    for batch in batches([p for p, _ in files], max_files=500):
        cmd = [
            sys.executable,
            "-m",
            "lockcheck",
            "scan",
            "--isolated",
            "--exit-zero",
            "--output-format",
            "json",
            *batch,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        bad = [ln for ln in proc.stderr.splitlines() if "internal error" in ln or "Traceback" in ln]
        if bad or proc.returncode not in (0, 1):
            crashes.append(
                {
                    "batch_first": batch[0],
                    "returncode": proc.returncode,
                    "stderr": proc.stderr[-4000:],
                }
            )
        try:
            items = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError as exc:
            crashes.append(
                {"batch_first": batch[0], "error": f"bad JSON: {exc}", "stdout": proc.stdout[:2000]}
            )
            continue
        for it in items:
            path = it.get("filename", "")
            loc = it.get("location") or {}
            findings.append(
                {
                    "path": path,
                    "language": langs.get(path) or langs.get(os.path.abspath(path), "?"),
                    "code": it.get("code"),
                    "severity": it.get("severity"),
                    "line": loc.get("row"),
                    "col": loc.get("column"),
                    "message": it.get("message"),
                }
            )
    return findings, crashes, []


def context_lines(path: str, line: int, before: int = 12, after: int = 8) -> str:
    lines = read_text(path).splitlines()
    lo, hi = max(1, line - before), min(len(lines), line + after)
    width = len(str(hi))
    out = []
    for i in range(lo, hi + 1):
        mark = ">>" if i == line else "  "
        out.append(f"{mark}{i:>{width}} | {lines[i - 1]}")
    return "\n".join(out)


def write_sample(findings: list[dict], language: str, n: int, seed: int, corpus: Path) -> Path:
    pool = [f for f in findings if f["language"] == language]
    rng = random.Random(seed)
    # spread over rules first, so a rare rule is not drowned by a frequent one
    by_code = collections.defaultdict(list)
    for f in pool:
        by_code[f["code"]].append(f)
    for v in by_code.values():
        rng.shuffle(v)
    picked = []
    while len(picked) < n and any(by_code.values()):
        for code in sorted(by_code):
            if by_code[code] and len(picked) < n:
                picked.append(by_code[code].pop())
    out = RESULTS / f"review-sample-{language}.md"
    parts = [f"# Review sample: {language} ({len(picked)} of {len(pool)} findings, seed {seed})\n"]
    for i, f in enumerate(picked, 1):
        rel = os.path.relpath(f["path"], corpus)
        parts.append(
            f"## {i}. {f['code']} {rel}:{f['line']}\n\n{f['message']}\n\n```\n"
            f"{context_lines(f['path'], f['line'] or 1)}\n```\n\nverdict: \nreason: \n"
        )
    out.write_text("\n".join(parts))
    return out


# ----------------------------------------------------------------------- before and after


def _key(f: dict) -> tuple:
    return (f["path"], f["code"], f["line"], f["col"])


def write_json(out: Path, corpus: Path, files, findings: list[dict], crashes: list[dict]) -> None:
    """This run's findings as one document, paths relative to the corpus root."""

    def rel(path: str) -> str:
        return os.path.relpath(path, corpus)

    doc = {
        "lockcheck": os.path.dirname(lockcheck.__file__),
        "corpus": str(corpus),
        "files": [[rel(p), lang] for p, lang in files],
        "findings": sorted(
            (
                {
                    "path": rel(f["path"]),
                    "language": f["language"],
                    "code": f["code"],
                    "line": f["line"],
                    "col": f["col"],
                    "message": f["message"],
                }
                for f in findings
            ),
            key=_key,
        ),
        "crashes": [
            {"path": rel(c["path"]), "error": c.get("error", "")} for c in crashes if "path" in c
        ],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")


def run_baseline(baseline: str, corpus: Path, files, timeout: int) -> dict:
    """The baseline's document: read from a file, or made by another interpreter's lockcheck."""
    if baseline.endswith(".json"):
        return json.loads(Path(baseline).read_text())
    RESULTS.mkdir(exist_ok=True)
    listing, out = RESULTS / "baseline-files.json", RESULTS / "baseline-findings.json"
    listing.write_text(json.dumps([[os.path.relpath(p, corpus), lang] for p, lang in files]))
    cmd = [baseline, str(Path(__file__).resolve()), "--corpus", str(corpus)]
    cmd += ["--files-from", str(listing), "--json", str(out), "--timeout", str(timeout)]
    print(f"baseline: {' '.join(cmd)}", file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    return json.loads(out.read_text())


def print_diff(before: dict, after: dict) -> dict:
    """New and lost findings on (path, code, line, column); printed and returned."""
    a = {_key(f): f for f in before["findings"]}
    b = {_key(f): f for f in after["findings"]}
    files_a = {p for p, _ in before["files"]}
    files_b = {p for p, _ in after["files"]}
    lost = [a[k] for k in sorted(a.keys() - b.keys())]
    new = [b[k] for k in sorted(b.keys() - a.keys())]
    reworded = sum(1 for k in a.keys() & b.keys() if a[k]["message"] != b[k]["message"])
    print(f"before {before['lockcheck']}: {len(a)} findings on {len(files_a)} files")
    print(f"after  {after['lockcheck']}: {len(b)} findings on {len(files_b)} files")
    print(f"kept {len(a.keys() & b.keys())} ({reworded} with a changed message)")
    if files_a != files_b:
        print(f"files only before: {len(files_a - files_b)}, only after: {len(files_b - files_a)}")
    for label, items in (("lost", lost), ("new", new)):
        per_code = collections.Counter(f["code"] for f in items)
        print(
            f"{label}: {len(items)}  " + ", ".join(f"{c} {n}" for c, n in sorted(per_code.items()))
        )
        for f in items:
            print(f"  {f['path']}:{f['line']}:{f['col']} {f['code']} {f['message']}")
    crashes = {"before": before.get("crashes", []), "after": after.get("crashes", [])}
    diff = {"lost": lost, "new": new, "reworded": reworded, "crashes": crashes}
    (RESULTS / "scan-diff.json").write_text(json.dumps(diff, indent=1) + "\n")
    return diff


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/corpus_scan.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--language", choices=[*LANGUAGES, "all"], default="all")
    ap.add_argument("--cli", action="store_true", help="run the CLI (JSON) instead of in-process")
    ap.add_argument("--limit", type=int, help="an even sample of at most N files per language")
    ap.add_argument("--sample", type=int, default=0, help="findings per language to sample")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=20, help="seconds per file (in-process)")
    ap.add_argument("--json", type=Path, help="also write the findings as one JSON document")
    ap.add_argument(
        "--baseline",
        help="compare with: a document written by --json, or another version's interpreter",
    )
    ap.add_argument("--files-from", type=Path, help=argparse.SUPPRESS)  # the baseline's child
    args = ap.parse_args(argv)
    corpus = Path(args.corpus).resolve()
    langs = list(LANGUAGES) if args.language == "all" else [args.language]
    if args.files_from:
        listed = json.loads(args.files_from.read_text())
        files = [(str(corpus / p), lang) for p, lang in listed if lang in langs]
    else:
        files = [(p, lang) for lang in langs for p in collect(corpus, lang, args.limit)]
    print(f"{len(files)} files ({', '.join(langs)})")
    # the baseline first: its child writes bench/results/ too, and this run's files come last
    before = run_baseline(args.baseline, corpus, files, args.timeout) if args.baseline else None
    t0 = time.perf_counter()
    if args.cli:
        findings, crashes, timings = scan_cli(files)
    else:
        findings, crashes, timings = scan_in_process(files, args.timeout)
    elapsed = time.perf_counter() - t0
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "scan-findings.jsonl", "w") as fh:
        for f in findings:
            fh.write(json.dumps(f) + "\n")
    with open(RESULTS / "scan-crashes.txt", "w") as fh:
        for c in crashes:
            fh.write(json.dumps({k: v for k, v in c.items() if k != "traceback"}) + "\n")
            if "traceback" in c:
                fh.write(c["traceback"] + "\n")
    per_rule = collections.Counter((f["language"], f["code"]) for f in findings)
    crash_kinds = collections.Counter(c.get("error", "").split(":")[0] for c in crashes)
    files_with = len({f["path"] for f in findings})
    timings.sort(reverse=True)
    summary = {
        "corpus": str(corpus),
        "files": len(files),
        "seconds": elapsed,
        "findings": len(findings),
        "files_with_findings": files_with,
        "per_rule": {f"{lang} {code}": n for (lang, code), n in sorted(per_rule.items())},
        "crashes": len(crashes),
        "crash_kinds": dict(crash_kinds),
        "slowest": [{"seconds": round(t, 3), "path": p} for t, p in timings[:10]],
    }
    (RESULTS / "scan-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"scanned in {elapsed:.1f} s: {len(findings)} findings in {files_with} files, "
        f"{len(crashes)} crashes"
    )
    for (lang, code), n in sorted(per_rule.items()):
        print(f"  {lang:6} {code}  {n}")
    for kind, n in crash_kinds.most_common():
        print(f"  crash {n:5d}  {kind}")
    for t, p in timings[:5]:
        print(f"  slow {t:6.2f} s  {os.path.relpath(p, corpus)}")
    if args.sample:
        for lang in langs:
            out = write_sample(findings, lang, args.sample, args.seed, corpus)
            print(f"  sample written to {out.relative_to(HERE.parent)}")
    if args.json or args.baseline:
        out = args.json or RESULTS / "scan-findings.json"
        write_json(out, corpus, files, findings, crashes)
    if before is not None:
        print_diff(before, json.loads(out.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
