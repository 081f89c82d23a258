"""How much of a shell corpus tree-sitter-bash reads cleanly, and which lock commands it loses.

    python bench/parse_coverage.py --corpus DIR [--top N] [--limit N]

For every shell file (extension or shebang, as lockcheck decides) this parses the bytes with
tree-sitter-bash directly and reports:

* the share of files whose tree has no ERROR or MISSING node;
* lock commands found by a textual scan (flock, mkdir used as a test, lockfile and its
  kin, ln used as a test, noclobber) and how many of them sit inside an ERROR region, where
  a frontend sees no command structure;
* per top-level corpus directory (one project each) the same counts, and the files with
  errors (first error line) in ``bench/results/parse-errors.txt``.

The textual scan is a heuristic (it skips comment lines, not here-doc bodies or strings);
its purpose is to estimate what parse failures cost, not to find locks.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import RESULTS, collect  # noqa: E402

# a command word: not preceded by a name character, '.', '$', '-' (fcntl.flock, $flock, my-flock)
_CMD = r"(?<![\w.$\-])(?:/[\w./-]*/)?"
_TEST_CTX = r"(?:\b(?:if|while|until|elif)\s+(?:!\s*)?|!\s+|(?:\|\||&&)\s*)"
LOCK_PATTERNS = {
    "flock": re.compile(_CMD + r"flock(?![\w.\-])"),
    "mkdir-test": re.compile(
        _TEST_CTX + _CMD + r"mkdir\b(?![^\n;|&]*\s-\w*p)"
        r"|" + _CMD + r"mkdir\b(?![^\n;|&]*\s-\w*p)[^\n;|&]*(?:\|\||&&)"
    ),
    "lockfile": re.compile(_CMD + r"(?:lockfile-create|lockfile|dotlockfile|shlock)(?![\w.\-])"),
    "ln-test": re.compile(
        _TEST_CTX + _CMD + r"ln\s+-" + r"|" + _CMD + r"ln\s+-[sf]+\s[^\n;|&]*(?:\|\||&&)"
    ),
    "noclobber": re.compile(r"\bset\s+(?:-o\s+noclobber|-[a-zA-Z]*C)\b"),
}


def parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def error_ranges(root) -> list[tuple[int, int, int]]:
    """(start byte, end byte, line) of every ERROR node and of the parent of a MISSING node."""
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.type == "ERROR":
            out.append((node.start_byte, node.end_byte, node.start_point[0] + 1))
            continue  # everything under it is inside the region already
        if node.is_missing:
            parent = node.parent or node
            out.append((parent.start_byte, parent.end_byte, node.start_point[0] + 1))
            continue
        stack.extend(node.children)
    return out


def lock_commands(data: bytes) -> list[tuple[str, int]]:
    """(kind, byte offset) of textual lock commands outside comment lines."""
    text = data.decode("utf-8", "surrogateescape")
    found = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            for kind, pat in LOCK_PATTERNS.items():
                for m in pat.finditer(line):
                    byte = len(text[: offset + m.start()].encode("utf-8", "surrogateescape"))
                    found.append((kind, byte))
        offset += len(line)
    return found


def project_of(path: str, corpus: Path) -> str:
    rel = Path(path).relative_to(corpus)
    return rel.parts[0] if len(rel.parts) > 1 else "."


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/parse_coverage.py", description=__doc__)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--top", type=int, default=15, help="projects listed (15)")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus).resolve()
    files = collect(corpus, "shell", args.limit)
    p = parser()
    t0 = time.perf_counter()
    per = collections.defaultdict(collections.Counter)
    kinds = collections.Counter()
    kinds_lost = collections.Counter()
    error_lines = []
    lost_examples = []
    for path in files:
        data = Path(path).read_bytes()
        tree = p.parse(data)
        proj = project_of(path, corpus)
        c = per[proj]
        c["files"] += 1
        ranges = error_ranges(tree.root_node) if tree.root_node.has_error else []
        if ranges:
            c["with_errors"] += 1
            error_lines.append(f"{path}:{min(r[2] for r in ranges)}")
        for kind, byte in lock_commands(data):
            c["lock_cmds"] += 1
            kinds[kind] += 1
            if any(s <= byte < e for s, e, _ in ranges):
                c["lock_cmds_in_error"] += 1
                kinds_lost[kind] += 1
                line = data[:byte].count(b"\n") + 1
                lost_examples.append(f"{path}:{line}: {kind}")
    elapsed = time.perf_counter() - t0
    total = collections.Counter()
    for c in per.values():
        total.update(c)
    clean = total["files"] - total["with_errors"]
    print(f"{total['files']} shell files parsed in {elapsed:.1f} s")
    print(f"  without ERROR/MISSING nodes: {clean} ({100 * clean / max(total['files'], 1):.1f}%)")
    print(
        f"  lock commands (textual): {total['lock_cmds']}, inside ERROR regions: "
        f"{total['lock_cmds_in_error']}"
    )
    for kind in LOCK_PATTERNS:
        print(f"    {kind:11} {kinds[kind]:6d}  in error: {kinds_lost[kind]}")
    print(f"  {'project':40} {'files':>6} {'errors':>7} {'clean %':>8} {'locks':>6} {'lost':>5}")
    ranked = sorted(per.items(), key=lambda kv: -kv[1]["files"])
    for proj, c in ranked[: args.top]:
        pct = 100 * (c["files"] - c["with_errors"]) / c["files"]
        print(
            f"  {proj[:40]:40} {c['files']:6d} {c['with_errors']:7d} {pct:8.1f} "
            f"{c['lock_cmds']:6d} {c['lock_cmds_in_error']:5d}"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "parse-errors.txt").write_text("\n".join(error_lines) + "\n")
    (RESULTS / "parse-lost-locks.txt").write_text("\n".join(lost_examples) + "\n")
    result = {
        "mode": "parse_coverage",
        "corpus": str(corpus),
        "files": total["files"],
        "clean": clean,
        "clean_share": clean / max(total["files"], 1),
        "lock_commands": dict(kinds),
        "lock_commands_in_error": dict(kinds_lost),
        "per_project": {k: dict(v) for k, v in per.items()},
        "seconds": elapsed,
    }
    out = RESULTS / f"parse-coverage-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print("  written bench/results/parse-errors.txt, parse-lost-locks.txt and", out.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
