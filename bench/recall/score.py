"""Score lockcheck against the blind-labelled recall set.

Reads every ``bench/recall/set-*.jsonl`` (or the files given with ``--set``), rebuilds each
labelled file from its fetched snapshot under ``--mirror`` (``git show COMMIT:PATH``), checks
its sha256, writes it into a temporary tree that keeps its relative path, runs lockcheck once
over the whole tree through its public CLI and matches findings to labels: same file, same
code, a line equal to ``line`` or one of ``alt_lines``.

It never fetches anything: a snapshot that is absent is reported (with the ``fetch`` source
to ask for) and its files are skipped. The rebuilt files live only in a temporary directory.

    python bench/recall/score.py --mirror /work/.mirror [--split dev|holdout|all]
        [--set FILE ...] [--include-uncertain] [--misses]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Codes the recall set does not label: parse errors and unused suppressions (by the
# labelling brief) and, in the script sets, job-definition rules. A job-definition record
# (set-D: its language is a definition kind) is scored on LCK6xx too.
IGNORED_PREFIXES = ("LCK000", "LCK001", "LCK6")
DEFINITION_IGNORED = ("LCK000", "LCK001")
DEFINITION_KINDS = {
    "crontab",
    "systemd",
    "kubernetes",
    "github-actions",
    "gitlab-ci",
    "nomad",
    "airflow",
    "windows-task",
}
REQUIRED = ("id", "repo", "commit", "path", "sha256", "language", "split", "labels")


@dataclass
class Label:
    code: str
    line: int
    alt_lines: list[int]
    reason: str
    uncertain: bool
    matched: dict | None = None

    def lines(self) -> list[int]:
        return [self.line, *self.alt_lines]


@dataclass
class Record:
    set_name: str
    data: dict
    labels: list[Label] = field(default_factory=list)

    @property
    def rid(self) -> str:
        return f"{self.set_name}:{self.data['id']}"

    @property
    def is_definition(self) -> bool:
        return self.data["language"] in DEFINITION_KINDS

    @property
    def ignored(self) -> tuple[str, ...]:
        return DEFINITION_IGNORED if self.is_definition else IGNORED_PREFIXES

    @property
    def relpath(self) -> str:
        # One directory per record keeps two records of the same path apart; the
        # file keeps its own relative path (name and extension decide the language).
        return f"{self.set_name}/{self.data['id']}/{self.data['path']}"


def _labels(data: dict) -> list[Label]:
    return [
        Label(
            code=lab["code"],
            line=int(lab["line"]),
            alt_lines=[int(x) for x in lab.get("alt_lines", [])],
            reason=lab.get("reason", ""),
            uncertain=bool(lab.get("uncertain", False)),
        )
        for lab in data["labels"]
    ]


def reconciled_labels() -> dict[str, list[Label]]:
    """Final labels of the files the second reading disputed, by id (``reconciled.jsonl``):
    they replace the first reader's labels of those files."""
    path = HERE / "reconciled.jsonl"
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            out[data["id"]] = _labels(data)
    return out


def load_sets(paths: list[Path]) -> list[Record]:
    final = reconciled_labels()
    records = []
    seen = set()
    for path in paths:
        set_name = path.stem
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            data = json.loads(line)
            missing = [k for k in REQUIRED if k not in data]
            if missing:
                sys.exit(f"{path}:{n}: missing fields {missing}")
            rec = Record(set_name, data)
            if rec.rid in seen:
                sys.exit(f"{path}:{n}: duplicate id {data['id']}")
            seen.add(rec.rid)
            rec.labels = final[data["id"]] if data["id"] in final else _labels(data)
            records.append(rec)
    return records


def git_dir(mirror: Path, repo: str) -> Path | None:
    """The git directory that fetch left for owner/name, or None."""
    root = mirror / repo.replace("/", "+")
    for cand in (root / "repo" / ".git", root / "repo", root / ".git", root):
        if not cand.is_dir():
            continue
        ok = subprocess.run(
            ["git", "--git-dir", str(cand), "rev-parse", "--git-dir"],
            capture_output=True,
        )
        if ok.returncode == 0:
            return cand
    return None


def rebuild(records: list[Record], mirror: Path, tree: Path) -> tuple[list[Record], list[str]]:
    """Write each record's file into tree; return the records written and the problems."""
    written, problems = [], []
    dirs: dict[str, Path | None] = {}
    for rec in records:
        repo = rec.data["repo"]
        if repo not in dirs:
            dirs[repo] = git_dir(mirror, repo)
        gd = dirs[repo]
        if gd is None:
            problems.append(
                f"{rec.rid}: no snapshot of {repo} under {mirror} (fetch github:{repo})"
            )
            continue
        spec = f"{rec.data['commit']}:{rec.data['path']}"
        blob = subprocess.run(["git", "--git-dir", str(gd), "show", spec], capture_output=True)
        if blob.returncode != 0:
            problems.append(
                f"{rec.rid}: {spec} not in the snapshot of {repo} "
                f"({blob.stderr.decode(errors='replace').strip()}; fetch github:{repo} again)"
            )
            continue
        digest = hashlib.sha256(blob.stdout).hexdigest()
        if digest != rec.data["sha256"]:
            problems.append(
                f"{rec.rid}: sha256 of {spec} is {digest}, label says {rec.data['sha256']}"
            )
            continue
        dest = tree / rec.relpath
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob.stdout)
        # A definition's context (the timer of a service, the scripts a step runs) is
        # written beside it so the join sees it; only the labelled file is scored.
        missing = write_context(rec, gd, tree)
        if missing:
            problems.append(f"{rec.rid}: context {missing} not in the snapshot of {repo}")
            continue
        written.append(rec)
    return written, problems


def write_context(rec: Record, gd: Path, tree: Path) -> list[str]:
    """Write the record's context files into its directory; return those missing."""
    missing = []
    root = tree / rec.set_name / rec.data["id"]
    for path in rec.data.get("context", []):
        spec = f"{rec.data['commit']}:{path}"
        blob = subprocess.run(["git", "--git-dir", str(gd), "show", spec], capture_output=True)
        if blob.returncode != 0:
            missing.append(path)
            continue
        dest = root / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob.stdout)
    return missing


def scan_all(tree: Path, written: list[Record]) -> tuple[list[dict], set[str]]:
    """Findings and scanned paths: a set of scripts in one run over its directory; a set
    with job definitions record by record, each record's directory being the repository
    root that its steps and commands resolve against."""
    findings, scanned = [], set()
    sets: dict[str, list[Record]] = defaultdict(list)
    for rec in written:
        sets[rec.set_name].append(rec)
    targets = []
    for set_name, recs in sets.items():
        if any(r.is_definition for r in recs):
            targets += [tree / set_name / r.data["id"] for r in recs]
        else:
            targets.append(tree / set_name)
    for target in targets:
        more, seen = run_lockcheck(tree, target)
        findings += more
        scanned |= seen
    return findings, scanned


def run_lockcheck(tree: Path, target: Path) -> tuple[list[dict], set[str]]:
    """Findings over target (one run) and the tree-relative paths lockcheck scanned."""
    base = [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--select", "ALL"]
    shown = subprocess.run([*base, "--show-files", str(target)], capture_output=True, text=True)
    if shown.returncode not in (0, 1):
        sys.exit(f"lockcheck --show-files failed ({shown.returncode}): {shown.stderr.strip()}")
    scanned = {_rel(tree, line) for line in shown.stdout.splitlines() if line.strip()}
    out = tree.parent / "findings.json"
    run = subprocess.run(
        [*base, "--output-format", "json", "--exit-zero", "-o", str(out), str(target)],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0 or not out.exists():
        print(f"warning: lockcheck exited {run.returncode}: {run.stderr.strip()}", file=sys.stderr)
    findings = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    for f in findings:
        f["relpath"] = _rel(tree, f["filename"])
    return findings, scanned


def _rel(tree: Path, name: str) -> str:
    p = Path(name)
    if not p.is_absolute():
        p = (Path.cwd() / p).resolve()
    try:
        return p.resolve().relative_to(tree.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def match(rec: Record, findings: list[dict]) -> list[dict]:
    """Pair labels with findings of the same code; return the findings left over."""
    left = [f for f in findings if not f["code"].startswith(rec.ignored)]
    # Exact lines first, then accepted alternatives, so an alternative never steals
    # the finding another label points at exactly.
    for use_alt in (False, True):
        for lab in rec.labels:
            if lab.matched is not None:
                continue
            lines = lab.lines() if use_alt else [lab.line]
            for f in left:
                if f["code"] == lab.code and f["location"]["row"] in lines:
                    lab.matched = f
                    left.remove(f)
                    break
    return left


def ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def f1(tp: int, fp: int, fn: int) -> str:
    return f"{2 * tp / (2 * tp + fp + fn):.2f}" if tp else ("-" if not (fp or fn) else "0.00")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, required=True, help="where fetch put the snapshots")
    ap.add_argument("--split", choices=("dev", "holdout", "all"), default="dev")
    ap.add_argument(
        "--set", dest="sets", type=Path, nargs="+", help="label files (default: set-*.jsonl)"
    )
    ap.add_argument("--include-uncertain", action="store_true", help="score uncertain labels too")
    ap.add_argument(
        "--misses", action="store_true", help="list every false negative and false positive"
    )
    args = ap.parse_args(argv)

    paths = args.sets or sorted(HERE.glob("set-*.jsonl"))
    if not paths:
        sys.exit(f"no label files in {HERE}")
    records = [r for r in load_sets(paths) if args.split == "all" or r.data["split"] == args.split]

    with tempfile.TemporaryDirectory(prefix="lockcheck-recall-") as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        written, problems = rebuild(records, args.mirror, tree)
        findings, scanned = scan_all(tree, written) if written else ([], set())

    by_file = defaultdict(list)
    for f in findings:
        by_file[f["relpath"]].append(f)

    stats = defaultdict(Counter)
    uncertain = Counter()
    misses = []
    not_scanned = []
    for rec in written:
        if rec.relpath not in scanned:
            not_scanned.append(rec.rid)
        left = match(rec, by_file.get(rec.relpath, []))
        for lab in rec.labels:
            if lab.uncertain and not args.include_uncertain:
                uncertain["matched" if lab.matched else "unmatched"] += 1
                continue
            row = stats[lab.code]
            row["labels"] += 1
            if lab.matched:
                row["tp"] += 1
            else:
                row["fn"] += 1
                why = lab.reason + ("" if rec.relpath in scanned else " [file not scanned]")
                misses.append(("FN", rec, lab.code, lab.line, why))
        for f in left:
            stats[f["code"]]["fp"] += 1
            misses.append(("FP", rec, f["code"], f["location"]["row"], f["message"]))

    print(
        f"split {args.split}: {len(records)} files in {len(paths)} set(s), {len(written)} scored, "
        f"{len(records) - len(written)} skipped"
    )
    for p in problems:
        print(f"  skipped {p}")
    for rid in not_scanned:
        print(f"  not scanned by lockcheck (excluded or language not detected): {rid}")
    header = f"{'code':<8}{'labels':>7}{'TP':>5}{'FP':>5}{'FN':>5}{'prec':>7}{'recall':>8}{'F1':>6}"
    print(header)
    print("-" * len(header))
    tot = Counter()
    for code in sorted(stats):
        row = stats[code]
        tot.update(row)
        tp, fp, fn = row["tp"], row["fp"], row["fn"]
        print(
            f"{code:<8}{row['labels']:>7}{tp:>5}{fp:>5}{fn:>5}"
            f"{ratio(tp, tp + fp):>7}{ratio(tp, tp + fn):>8}{f1(tp, fp, fn):>6}"
        )
    print("-" * len(header))
    tp, fp, fn = tot["tp"], tot["fp"], tot["fn"]
    print(
        f"{'total':<8}{tot['labels']:>7}{tp:>5}{fp:>5}{fn:>5}"
        f"{ratio(tp, tp + fp):>7}{ratio(tp, tp + fn):>8}{f1(tp, fp, fn):>6}"
    )
    if not args.include_uncertain:
        print(
            f"uncertain labels (not scored): {sum(uncertain.values())}, "
            f"{uncertain['matched']} with a matching finding, {uncertain['unmatched']} without"
        )
    print(
        f"ignored codes: {', '.join(IGNORED_PREFIXES)}xx in scripts, "
        f"{', '.join(DEFINITION_IGNORED)} in job definitions"
    )
    if args.misses:
        for kind, rec, code, line, why in sorted(misses, key=lambda m: (m[1].rid, m[3], m[0])):
            print(
                f"{kind} {rec.rid} {rec.data['repo']}:{rec.data['path']} {code} line {line}: {why}"
            )
    return 0 if written else 2


if __name__ == "__main__":
    sys.exit(main())
