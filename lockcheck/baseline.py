"""Baselines: record today's findings, report only new ones later.

A finding is keyed by its path, its code, the normalised text of the flagged line and its
occurrence index among findings sharing those three, never by its line number: moving code
up or down a file keeps the key.  SARIF and GitLab fingerprints use the same key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable

from .model import Finding
from .outfile import write_new

VERSION = 1
Key = tuple[str, str, str, int]


def normalise_line(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def stable_keys(
    findings: Iterable[Finding],
    line_of: Callable[[Finding], str | None],
    path_of: Callable[[Finding], str] = lambda f: f.path,
) -> list[Key]:
    """One key per finding, in order; occurrences are counted in (line, column) order."""
    items = list(findings)
    order = sorted(range(len(items)), key=lambda i: items[i].sort_key)
    seen: Counter = Counter()
    keys: list[Key | None] = [None] * len(items)
    for i in order:
        f = items[i]
        base = (path_of(f).replace(os.sep, "/"), f.code, normalise_line(line_of(f)))
        keys[i] = base + (seen[base],)
        seen[base] += 1
    return keys  # type: ignore[return-value]


def fingerprint(key: Key) -> str:
    raw = "\0".join(str(k) for k in key)
    return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class BaselineError(Exception):
    pass


def _rel(path: str, base_dir: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), base_dir)
    return rel.replace(os.sep, "/")


def write(
    file: str,
    findings: list[Finding],
    line_of: Callable[[Finding], str | None],
    abspath: Callable[[str], str],
) -> int:
    """Write the baseline of ``findings``; paths are stored relative to the baseline's
    directory so the file can live in the repository.  Returns the entry count."""
    base_dir = os.path.dirname(os.path.abspath(file))
    keys = stable_keys(findings, line_of, lambda f: _rel(abspath(f.path), base_dir))
    entries = []
    for f, k in sorted(zip(findings, keys, strict=True), key=lambda t: t[1]):
        entries.append(
            {"path": k[0], "code": k[1], "line": k[2], "occurrence": k[3], "message": f.message}
        )
    doc = {"lockcheck-baseline": VERSION, "entries": entries}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    write_new(file, text.encode("utf-8", "surrogateescape"))  # never through a symlink
    return len(entries)


def load(file: str) -> set[Key]:
    try:
        with open(file, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError as exc:
        raise BaselineError(f"{file}: No such file or directory") from exc
    except (OSError, ValueError) as exc:
        raise BaselineError(f"{file}: not a lockcheck baseline: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("lockcheck-baseline") != VERSION:
        raise BaselineError(f"{file}: not a lockcheck baseline (version {VERSION})")
    out: set[Key] = set()
    try:
        for e in doc["entries"]:
            out.add((str(e["path"]), str(e["code"]), str(e["line"]), int(e["occurrence"])))
    except (KeyError, TypeError, ValueError) as exc:
        raise BaselineError(f"{file}: malformed entry: {exc}") from exc
    return out


def filter_new(
    file: str,
    findings: list[Finding],
    line_of: Callable[[Finding], str | None],
    abspath: Callable[[str], str],
) -> tuple[list[Finding], int]:
    """Findings not in the baseline, and how many baseline entries matched nothing."""
    known = load(file)
    base_dir = os.path.dirname(os.path.abspath(file))
    keys = stable_keys(findings, line_of, lambda f: _rel(abspath(f.path), base_dir))
    new = [f for f, k in zip(findings, keys, strict=True) if k not in known]
    stale = len(known - set(keys))
    return new, stale
