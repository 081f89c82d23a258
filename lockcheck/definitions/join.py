"""The pass over the whole tree after the per-file analysis: read the job definitions, join
each command to the script of the tree it names, run the LCK6xx rules.

``analyze_tree`` is called once by the scan command with the per-file results; it fills the
results of definition files (findings, text) and adds a DAG file's findings to its result."""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from ..checks import RULES
from ..checks.jobs import JobContext, Script, Start, scheduled_commands
from ..model import FileFacts, Finding, ParseError, Span
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

    def __init__(self, results, roots: list[str], languages=("shell", "python")) -> None:
        self.roots = roots
        self.by_rel: dict[str, list[Script]] = {}
        for r in results:
            if r.language not in languages or r.skipped:
                continue
            rel = self.rel(r.path)
            takes = None if r.error else r.takes_lock
            bg = None if r.error else r.backgrounds
            self.by_rel.setdefault(rel, []).append(Script(rel, takes, backgrounds=bg))

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

    def resolve_all(self, cmd: Command) -> list[Script]:
        """Every line of the command that names a script of the tree: its script."""
        out = []
        for offset, text in enumerate(cmd.text.split("\n")):
            hit = self._resolve_line(cmd, text)
            if hit is not None:
                out.append(replace(hit[0], offset=offset, word=hit[1]))
        return out

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


def _load(t, r, kind: str) -> Definition | None:
    """Read one definition file into its result (text, bytes, decoding) and parse it; None
    when it cannot be read (``r.error``) or is binary."""
    from ..source import Source, decode

    try:
        if not stat.S_ISREG(os.stat(t.path).st_mode):  # a FIFO would block the run
            r.error = f"{t.display}: not a regular file"
            return None
        with open(t.path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        r.error = f"{t.display}: {exc.strerror or exc}"
        return None
    source = decode(data, "python" if kind == "airflow" else None)
    if source is None and kind == "windows":  # UTF-16 without a BOM
        from .windows import decode as wdecode

        source = Source(wdecode(data), "utf-16")
    if source is None:
        if t.explicit:
            r.warning = f"{t.display}: binary file, not checked"
        return None
    if kind == "windows":
        r.warning = None  # UTF-16 is text here
    d = _parse(kind, t.display, source.text, data)
    if r.text is None:
        r.text, r.data, r.source = source.text, data, source
    return d


def _parse(kind: str, display: str, text: str, data: bytes | None = None) -> Definition:
    if kind == "windows":
        from .windows import parse as wparse

        return wparse(display, text, data)
    return parse(kind, display, text)


def _findings(t, ctx: JobContext, codes: set[str]) -> tuple[FileFacts, list[Finding]]:
    """The definition's findings (LCK000, LCK6xx, its embedded shell), suppressions applied;
    its facts carry its parse errors."""
    from ..analysis import file_disabled, suppressed

    d = ctx.definition
    found: list[Finding] = []
    facts = FileFacts(d.path, "definition", d.text, comments=d.comments)
    for e in d.errors:
        span = Span(e.line, e.col, e.line, e.col)
        facts.parse_errors.append(ParseError(span, e.message))
    if d.errors and "LCK000" in codes:
        e = d.errors[0]
        rule = RULES["LCK000"]
        found.append(
            Finding(
                "LCK000", rule.name, rule.severity, e.message, d.path, facts.parse_errors[0].span
            )
        )
    for code, rule in RULES.items():
        if rule.layer == "definitions" and code in codes:
            found.extend(rule.check(ctx))
    found.extend(shell_findings(d, t.settings, codes))
    disabled = file_disabled(facts)
    return facts, [f for f in found if not suppressed(facts, f, disabled)]


Reanalyse = Callable[[str], tuple[FileFacts, list[Finding]]]


def analyze_tree(targets, results, paths: list[str]) -> dict[str, Reanalyse]:
    """Fill the results of definition files; returns, per displayed path of a definition,
    how to analyse a new text of it in the same tree (what ``--fix`` verifies with)."""
    from ..runner import codes_for

    roots = [os.path.abspath(p) for p in paths if os.path.isdir(p)]
    defs: list[tuple[object, object, Definition]] = []
    for t, r in zip(targets, results, strict=True):
        kind = getattr(t, "definition", None)
        if kind is None and r.language == "python" and not r.error and t.settings.definitions:
            kind = "airflow" if is_airflow(t.path) else None
        if kind is None:
            continue
        d = _load(t, r, kind)
        if d is None:
            continue
        defs.append((t, r, d))

    if not defs:
        return {}
    _gitlab_pipelines(targets, results, defs, roots)
    tree = Tree(results, roots)
    timers: dict[str, str] = {}
    for _t, _r, d in defs:
        for e in d.entries:
            if e.kind == "timer":
                timers[e.get("Unit").value or ""] = d.path

    def context(t, d: Definition) -> JobContext:
        rel = tree.rel(os.path.abspath(d.path))
        code = t.settings.skip_exit_code
        ctx = JobContext(d, lambda cmd: tree.resolve(cmd, rel), timers, starts, code)
        ctx.scripts_of = tree.resolve_all
        return ctx

    from .accounts import LANGUAGES, reanalyze, service_account_scripts

    win = Tree(results, roots, LANGUAGES)
    reanalyze(targets, results, win, service_account_scripts(defs, win))
    starts: dict[str, list[Start]] = {}
    contexts = []
    for t, r, d in defs:
        ctx = context(t, d)
        contexts.append((t, r, ctx))
        _add_starts(ctx, starts)

    _started_by_job(targets, results, tree, starts)
    again: dict[str, Reanalyse] = {}
    for t, r, ctx in contexts:
        codes = codes_for(t.settings, t.path)
        _facts, kept = _findings(t, ctx, codes)
        if kept:
            r.findings = sorted(r.findings + kept, key=lambda f: f.sort_key)
        r.skipped = False
        again[t.display] = _reanalyse(t, ctx.definition.kind, context, codes)
    return again


def _gitlab_pipelines(targets, results, defs: list, roots: list[str]) -> None:
    """Each ``.gitlab-ci.yml`` read with the local files it includes (their jobs reported in
    them, ``extends:`` resolved over all): an included file that discovery did not pick
    becomes a target of the run.  Nothing outside the file's tree is read."""
    from ..config import display_path
    from ..discover import Target
    from ..runner import FileResult
    from . import gitlab

    index = {os.path.realpath(t.path): i for i, (t, _r, _d) in enumerate(defs)}
    for t, _r, d in list(defs):
        if d.kind != "gitlab" or os.path.basename(t.path) != ".gitlab-ci.yml" or d.errors:
            continue
        root = _tree_root(os.path.dirname(os.path.abspath(t.path)), tuple(roots))
        files, seen, todo = [], {os.path.realpath(t.path)}, [d.text]
        while todo:
            for inc in gitlab.includes(todo.pop()):
                path = os.path.normpath(os.path.join(root, inc.lstrip("/")))
                real = os.path.realpath(path)
                if real in seen or os.path.commonpath([root, real]) != root:
                    continue
                seen.add(real)
                if real in index:
                    it, ir, _ = defs[index[real]]
                elif os.path.isfile(path):
                    it = Target(path, display_path(path), None, False, t.settings, None, "gitlab")
                    ir = FileResult(it.path, it.display, None, skipped=True)
                    if _load(it, ir, "gitlab") is None:
                        continue
                    targets.append(it)
                    results.append(ir)
                    defs.append((it, ir, None))
                    index[real] = len(defs) - 1
                else:
                    continue  # GitLab fails the pipeline; not ours to report
                files.append((it, ir))
                todo.append(ir.text or "")
        if not files:
            continue
        parsed = gitlab.pipeline(
            [(t.display, d.text)] + [(it.display, ir.text) for it, ir in files]
        )
        for (ft, fr), fd in zip([(t, _r)] + files, parsed, strict=True):
            defs[index[os.path.realpath(ft.path)]] = (ft, fr, fd)


def _started_by_job(targets, results, tree: Tree, starts: dict[str, list[Start]]) -> None:
    """A shell script that a definition starts is analysed again as ``started_by_job`` (the
    script rules that depend on it: LCK404).  One that takes a lock was analysed as such
    already; one that could not be analysed stays as it is."""
    from .again import analyse_again

    for t, r in zip(targets, results, strict=True):
        if r.language != "shell" or r.error or r.skipped or r.takes_lock:
            continue
        if tree.rel(r.path) in starts:
            analyse_again(t, r, started_by_job=True)


def _add_starts(ctx: JobContext, starts: dict[str, list[Start]]) -> None:
    """The scripts the definition's entries start, for LCK606."""
    d = ctx.definition
    for e in d.entries:
        for c in scheduled_commands(ctx, e):
            sc = ctx.script_of(c)
            if sc is not None:
                line = ctx.at(c, sc)[0]
                starts.setdefault(sc.rel, []).append(
                    # one scheduler object, one entry: the jobs of a workflow run in one run
                    # under its one trigger (and its group), the steps of a job likewise
                    Start(d.path, line, c.wrapped, e.line)
                )


def _reanalyse(t, kind: str, context, codes: set[str]) -> Reanalyse:
    def analyse(text: str) -> tuple[FileFacts, list[Finding]]:
        ctx = context(t, _parse(kind, t.display, text))
        # this file's entries as they are in the new text, the others' as they were
        ctx.starts = {k: [s for s in v if s.path != t.display] for k, v in ctx.starts.items()}
        _add_starts(ctx, ctx.starts)
        facts, found = _findings(t, ctx, codes)
        if kind != "airflow":
            return facts, found
        from ..engine import analyze_text  # a DAG file is a Python script too

        py_facts, py_found = analyze_text(t.display, text, "python", t.settings, codes)
        py_facts.parse_errors.extend(facts.parse_errors)
        return py_facts, sorted(py_found + found, key=lambda f: f.sort_key)

    return analyse
