"""The pass over the whole tree after the per-file analysis: read the job definitions, join
each command to the script of the tree it names, run the LCK6xx rules.

``analyze_tree`` is called once by the scan command with the per-file results; it fills the
results of definition files (findings, text) and adds a DAG file's findings to its result."""

from __future__ import annotations

import os
import posixpath
from dataclasses import replace
from functools import lru_cache

from ..checks import RULES
from ..checks.jobs import JobContext, Script, Start, scheduled_commands
from ..model import FileFacts, Finding, Span
from . import Command, Definition, parse
from .commands import script_paths
from .discover import is_airflow
from .embedded import shell_findings


@lru_cache(maxsize=4096)
def _tree_root(d: str, roots: tuple[str, ...]) -> str:
    """The tree a file of directory ``d`` belongs to: its git work tree, else the innermost
    scanned directory that holds it."""
    from ..discover import _git_root

    git = _git_root(d)
    if git is not None:
        return git
    inside = [r for r in roots if os.path.commonpath([r, d]) == r]
    return max(inside, key=len) if inside else d


class Tree:
    """The scripts of the scanned tree, by tree-relative path."""

    def __init__(self, results, roots: list[str]) -> None:
        self.roots = roots
        self.by_rel: dict[str, list[Script]] = {}
        for r in results:
            if r.language not in ("shell", "python") or r.skipped:
                continue
            rel = self.rel(r.path)
            takes = None if r.error else r.takes_lock
            self.by_rel.setdefault(rel, []).append(Script(rel, takes))

    def rel(self, path: str) -> str:
        root = _tree_root(os.path.dirname(path), tuple(self.roots))
        return os.path.relpath(path, root).replace(os.sep, "/")

    def resolve(self, cmd: Command, def_rel: str) -> Script | None:
        """The one script of the tree whose path the command names (RULES.md: trailing
        components, at least directory and name; relative paths against the root and the
        working directory)."""
        for offset, text in enumerate(cmd.text.split("\n")):
            hit = self._resolve_line(cmd, text)
            if hit is not None:
                script, word = hit
                return replace(script, offset=offset, word=word)
        return None

    def _resolve_line(self, cmd: Command, text: str) -> tuple[Script, str] | None:
        for word in script_paths(text):
            w = word.replace("\\", "/")
            tries = []
            if not w.startswith("/") and ":" not in w:
                if cmd.cwd:
                    tries.append(posixpath.normpath(posixpath.join(cmd.cwd, w)))
                tries.append(posixpath.normpath(w))
            comps = [c for c in w.split("/") if c and c != "."]
            tries += ["/".join(comps[-k:]) for k in range(len(comps), 1, -1)]
            for t in tries:
                hits = self.by_rel.get(t)
                if hits and len(hits) == 1:
                    return hits[0], word
        return None


def _entry_line(e, c: Command) -> int:
    """The line of the scheduler entry that runs ``c`` (a workflow's job, else the entry)."""
    for j in e.jobs:
        if any(x is c for x in j.commands):
            return j.line
    return e.line


def analyze_tree(targets, results, paths: list[str]) -> None:
    from ..analysis import file_disabled, suppressed
    from ..runner import codes_for
    from ..source import Source, decode

    roots = [os.path.abspath(p) for p in paths if os.path.isdir(p)]
    defs: list[tuple[object, object, Definition]] = []
    for t, r in zip(targets, results, strict=True):
        kind = getattr(t, "definition", None)
        if kind is None and r.language == "python" and not r.error and t.settings.definitions:
            kind = "airflow" if is_airflow(t.path) else None
        if kind is None:
            continue
        try:
            with open(t.path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            r.error = f"{t.display}: {exc.strerror or exc}"
            continue
        source = decode(data, "python" if kind == "airflow" else None)
        if source is None and kind == "windows":  # UTF-16 without a BOM
            from .windows import decode as wdecode

            source = Source(wdecode(data), "utf-16")
        if source is None:
            continue  # a binary file
        if kind == "windows":
            from .windows import parse as wparse

            d = wparse(t.display, source.text, data)
            r.warning = None  # UTF-16 is text here
        else:
            d = parse(kind, t.display, source.text)
        defs.append((t, r, d))
        if r.text is None:
            r.text, r.data, r.source = source.text, data, source

    if not defs:
        return
    tree = Tree(results, roots)
    timers: dict[str, str] = {}
    for _t, _r, d in defs:
        for e in d.entries:
            if e.kind == "timer":
                timers[e.get("Unit").value or ""] = d.path

    def script_of(d: Definition):
        rel = tree.rel(os.path.abspath(d.path))
        return lambda cmd: tree.resolve(cmd, rel)

    starts: dict[str, list[Start]] = {}
    contexts = []
    for t, r, d in defs:
        ctx = JobContext(d, script_of(d), timers, starts)
        contexts.append((t, r, ctx))
        for e in d.entries:
            for c in scheduled_commands(ctx, e):
                sc = ctx.script_of(c)
                if sc is not None:
                    line = ctx.at(c, sc)[0]
                    entry = _entry_line(e, c)
                    starts.setdefault(sc.rel, []).append(Start(d.path, line, c.wrapped, entry))

    for t, r, ctx in contexts:
        d = ctx.definition
        codes = codes_for(t.settings, t.path)
        found: list[Finding] = []
        if d.errors and "LCK000" in codes:
            e = d.errors[0]
            rule = RULES["LCK000"]
            found.append(
                Finding(
                    "LCK000",
                    rule.name,
                    rule.severity,
                    e.message,
                    d.path,
                    Span(e.line, e.col, e.line, e.col),
                )
            )
        for code, rule in RULES.items():
            if rule.layer == "definitions" and code in codes:
                found.extend(rule.check(ctx))
        found.extend(shell_findings(d, t.settings, codes))
        facts = FileFacts(d.path, "definition", d.text, comments=d.comments)
        disabled = file_disabled(facts)
        kept = [f for f in found if not suppressed(facts, f, disabled)]
        if kept:
            r.findings = sorted(r.findings + kept, key=lambda f: f.sort_key)
        r.skipped = False
