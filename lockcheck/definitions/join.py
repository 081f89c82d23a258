"""The pass over the whole tree after the per-file analysis: take the job definitions the
bounded workers parsed (:mod:`lockcheck.definitions.load`), join each command to the script
of the tree it names, run the LCK6xx rules.

``analyze_tree`` is called once by the scan command with the per-file results; it fills the
results of definition files (findings) and adds a DAG file's findings to its result.  What it
reads or analyses again (a pipeline's included files, a script that a job starts) runs in
bounded workers too; what stays in this process reads only the parsed model."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from functools import lru_cache

from ..checks import RULES
from ..checks.jobs import JobContext, Script, Start, scheduled_commands
from ..model import FileFacts, Finding, ParseError, Span
from ..records import replace
from . import Command, Definition
from .commands import script_paths
from .embedded import shell_findings
from .load import parse_text


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
        if not self.by_rel:  # no script in the tree (a chart repository): nothing to name
            return None
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


def _findings(
    t, ctx: JobContext, codes: set[str], embedded: list[Finding] | None = None
) -> tuple[FileFacts, list[Finding]]:
    """The definition's findings (LCK000, LCK6xx, its embedded shell: ``embedded`` when the
    worker found them), suppressions applied; its facts carry its parse errors."""
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
    found.extend(shell_findings(d, t.settings, codes) if embedded is None else embedded)
    disabled = file_disabled(facts)
    return facts, [f for f in found if not suppressed(facts, f, disabled)]


Reanalyse = Callable[[str], tuple[FileFacts, list[Finding]]]


def analyze_tree(
    targets, results, paths: list[str], jobs: int | None = None
) -> dict[str, Reanalyse]:
    """Join the definitions the workers parsed (:mod:`lockcheck.definitions.load`) and fill
    their results; returns, per displayed path of a definition, how to analyse a new text
    of it in the same tree (what ``--fix`` verifies with).  What reads or analyses a file
    again here (a pipeline's included files, a script started by a job) runs in bounded
    workers too (``jobs`` of them)."""
    from ..runner import codes_for

    roots = [os.path.abspath(p) for p in paths if os.path.isdir(p)]
    defs: list[tuple[object, object, Definition]] = [
        (t, r, r.definition)
        for t, r in zip(targets, results, strict=True)
        if r.definition is not None
    ]
    if not defs:
        return {}
    _gitlab_pipelines(targets, results, defs)
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

    from .accounts import LANGUAGES, service_account_scripts, system_account_targets

    win = Tree(results, roots, LANGUAGES)
    again_calls = system_account_targets(targets, results, win, service_account_scripts(defs, win))
    starts: dict[str, list[Start]] = {}
    contexts = []
    for t, r, d in defs:
        ctx = context(t, d)
        contexts.append((t, r, ctx))
        _add_starts(ctx, starts)

    again_calls += _started_by_job(targets, results, tree, starts)
    analyse_again_bounded(targets, results, again_calls, jobs)
    again: dict[str, Reanalyse] = {}
    for t, r, ctx in contexts:
        codes = codes_for(t.settings, t.path)
        _facts, kept = _findings(t, ctx, codes, r.embedded)
        r.definition = r.embedded = None  # the join is done: nothing else reads them
        if kept:
            r.findings = sorted(r.findings + kept, key=lambda f: f.sort_key)
        r.skipped = False
        again[t.display] = _reanalyse(t, ctx.definition.kind, context, codes)
    return again


def _gitlab_pipelines(targets, results, defs: list) -> None:
    """The files each ``.gitlab-ci.yml`` includes, as its worker read them with it
    (:mod:`lockcheck.definitions.pipeline`): an included file's Definition is the pipeline's;
    one that discovery did not pick becomes a target of the run."""
    from ..runner import FileResult

    index = {os.path.realpath(t.path): i for i, (t, _r, _d) in enumerate(defs)}
    for _t, r, _d in list(defs):
        for real, it, text, data, source, fd, embedded in r.pipeline or ():
            if real in index:
                _it, ir, _ = defs[index[real]]
            else:
                ir = FileResult(it.path, it.display, None, text=text, data=data, source=source)
                targets.append(it)
                results.append(ir)
                defs.append((it, ir, fd))
                index[real] = len(defs) - 1
            ir.definition, ir.embedded, ir.skipped = fd, embedded, False
            defs[index[real]] = (defs[index[real]][0], ir, fd)
        r.pipeline = None


def analyse_again_bounded(targets, results, calls: list[tuple[int, dict]], jobs) -> None:
    """Analyse again the scripts ``targets[i]`` with ``flags`` (``calls``: (i, flags)), each
    in a bounded worker; a script whose analysis is stopped keeps its findings and gets the
    LCK000 of a stopped analysis."""
    from ..runner import WORK_WEIGHT, Call, preload, run_calls, stopped_finding
    from .again import analyse_again

    if calls:  # the scan's first worker imported the frontends, not this process
        preload([targets[i] for i, _flags in calls])

    def again(call: Call):
        t, r = targets[call.index], results[call.index]
        analyse_again(t, r, **dict(calls_at[call.index]))
        return r.findings, r.error, r.text, r.data, r.source

    calls_at = dict(calls)
    tasks = [Call(i, targets[i].path, targets[i].settings, "again-") for i, _flags in calls]
    work = sum(WORK_WEIGHT.get(targets[i].language or "", 1.0) for i, _flags in calls)
    outcomes = run_calls(tasks, again, lambda _c, why: why, jobs, work)
    for call, got in zip(tasks, outcomes, strict=True):
        t, r = targets[call.index], results[call.index]
        if isinstance(got, str):
            reason = f"{got}, while analysing it again as a scheduled job"
            r.findings = sorted(
                [*r.findings, stopped_finding(t.display, reason)], key=lambda f: f.sort_key
            )
            continue
        r.findings, r.error, r.text, r.data, r.source = got


def _started_by_job(targets, results, tree: Tree, starts: dict[str, list[Start]]) -> list:
    """The shell scripts that a definition starts, to analyse again as ``started_by_job``
    (the script rules that depend on it: LCK404): (index, flags).  One that takes a lock was
    analysed as such already; one that could not be analysed stays as it is."""
    out = []
    for i, (_t, r) in enumerate(zip(targets, results, strict=True)):
        if r.language != "shell" or r.error or r.skipped or r.takes_lock:
            continue
        if tree.rel(r.path) in starts:
            out.append((i, {"started_by_job": True}))
    return out


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
        ctx = context(t, parse_text(kind, t.display, text))
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
