"""Reading files and running the engine over many of them.

Every file is handled on its own: an unreadable file or an internal error of a frontend
becomes one error line (exit status 2 at the end) and the run goes on.  Frontends are imported
only when a file of their language is analysed, so a shell-only run never imports the Python grammar.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable
from functools import partial

from .collector import paused
from .discover import Target
from .hints import Any
from .model import Finding
from .records import field, record
from .settings import Settings
from .source import Source, decode, read_regular

# Forking one more worker (the frontends already imported) costs a few milliseconds; it
# pays from about this much work on.  Work is counted in Python-file equivalents: libcst
# takes ~10 ms for a job script, tree-sitter-bash about a tenth of that.
WORK_PER_WORKER = 10.0
# Node.js files take ~1.5 ms, PowerShell files (larger, deeper trees) ~16 ms (measured on 2
# cores over public repositories)
WORK_WEIGHT = {"python": 1.0, "shell": 0.1, "javascript": 0.15, "powershell": 1.0}
# a job definition: its YAML/XML/unit parse and embedded shell, ~2.6 ms warm in-process
# (bitnami/charts' 27, 2026-12-02), against the ~10 ms a Python script is counted for
DEFINITION_WEIGHT = 0.3


@record
class FileResult:
    path: str  # absolute
    display: str
    language: str | None
    findings: list[Finding] = field(default_factory=list)
    text: str | None = None  # kept when there are findings (source lines, fixes)
    data: bytes | None = None  # the bytes read (for atomic fix writes)
    source: Source | None = None  # how the bytes were decoded (fixes write back the same)
    error: str | None = None  # one line, printed as "lockcheck: error: ..."
    warning: str | None = None  # one line, printed as "lockcheck: warning: ..."
    skipped: bool = False  # not analysed (binary, unknown language)
    takes_lock: bool | None = None  # the script acquires a lock of any kind (job definitions)
    backgrounds: bool | None = None  # it leaves a child running in the background (LCK605)
    # a job definition (or an Airflow DAG file) as parsed in the worker, for the join
    definition: Any = None  # lockcheck.definitions.Definition
    embedded: list[Finding] | None = None  # its embedded shell's findings, unsuppressed
    pipeline: list | None = None  # a .gitlab-ci.yml's included files, as read with it


def source_lines(text: str) -> list[str]:
    """Lines as the frontends count them (LF-separated; a trailing CR dropped)."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def ignored_by_per_file(settings: Settings, path: str) -> set[str]:
    """Rule selectors that ``per-file-ignores`` switch off for ``path``.

    Globs are relative to the configuration file's directory, with gitignore semantics (a
    glob without ``/`` matches the file name at any depth); a leading ``!`` negates."""
    if not settings.per_file_ignores:
        return set()
    from .globs import compile_spec

    root = os.path.abspath(settings.project_root or os.getcwd())
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    out: set[str] = set()
    for glob, codes in settings.per_file_ignores.items():
        negate = glob.startswith("!")
        pattern = glob[1:] if negate else glob
        if rel.startswith("../"):
            hit = compile_spec([pattern]).match_file(os.path.basename(path))
        else:
            hit = compile_spec([pattern]).match_file(rel)
        if hit != negate:
            out.update(c.upper() for c in codes)
    return out


def codes_for(settings: Settings, path: str) -> set[str]:
    from .analysis import selected_codes

    return selected_codes(settings, ignored_by_per_file(settings, path))


def check_target(target: Target) -> FileResult:
    """Read and analyse one file; never raises for bad input."""
    if target.definition is not None and target.language is None:  # a job definition
        from .definitions.load import analyse as analyse_definition

        res = FileResult(target.path, target.display, None, skipped=True)
        analyse_definition(target, res, target.definition, partial(codes_for, target.settings))
        return res
    res = FileResult(target.path, target.display, target.language)
    if target.data is not None:
        return check_bytes(target, target.data, res)
    data, res.error = read_regular(target.path, target.display)
    if data is None:
        return res
    return check_bytes(target, data, res)


def check_bytes(target: Target, data: bytes, res: FileResult) -> FileResult:
    source = decode(data, target.language)
    if source is None:
        res.skipped = True
        if target.explicit:
            res.warning = f"{target.display}: binary file, not checked"
        return res
    text = source.text
    language = target.language
    if language is not None and text.startswith("#!"):
        # discovery may have decided by extension alone: the shebang has the last word
        from .frontends import language_of

        head = text[:256].encode("utf-8", "surrogateescape")
        language = res.language = language_of(target.display, head)
        if language != target.language and language is not None:
            source = decode(data, language) or source
            text = source.text
    if language is None:
        res.skipped = True
        return res
    from .engine import InternalError, analyze_text

    try:
        _facts, findings = analyze_text(
            target.display,
            text,
            language,
            target.settings,
            codes_for(target.settings, target.path),
        )
    except InternalError as exc:  # a bug must not stop the run
        res.error = f"{target.display}: {exc}"
        return res
    from .analysis import unknown_codes_warning

    res.warning = unknown_codes_warning(_facts)  # an unknown code in a suppression comment
    res.findings = findings
    res.takes_lock = bool(_facts.acquires)
    res.backgrounds = bool(_facts.backgrounds)
    if findings:
        res.text = text
        res.data = data
        res.source = source
    # is_airflow needs the word in the bytes: without it the definitions layer is not imported
    if (
        language == "python"
        and target.settings.definitions
        and target.data is None
        and b"airflow" in data
    ):
        from .definitions.discover import is_airflow

        if is_airflow(target.path, data):  # a DAG file: a definition too
            from .definitions.load import analyse as analyse_definition

            analyse_definition(target, res, "airflow", partial(codes_for, target.settings), data)
    return res


def default_jobs() -> int:
    """The machine's cores (those this process may run on)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def stopped_finding(display: str, reason: str) -> Finding:
    """One LCK000 on line 1: ``analysis stopped: REASON``."""
    from .checks import RULES
    from .model import Span

    rule = RULES["LCK000"]
    return Finding(
        code="LCK000",
        name=rule.name,
        severity=rule.severity,
        message=f"analysis stopped: {reason}",
        path=display,
        span=Span(1, 1, 1, 1),
    )


def stopped_result(target: Target, reason: str) -> FileResult:
    """The result of a file whose analysis was stopped: one LCK000 on line 1."""
    finding = stopped_finding(target.display, reason)
    return FileResult(target.path, target.display, target.language, findings=[finding])


def file_bounds(task) -> tuple[float | None, int | None]:
    """(seconds, bytes) that one analysis of a file may take (its settings)."""
    s = task.settings
    return (s.file_timeout or None), (s.file_memory or None)


def preload(targets: list[Target]) -> None:
    """Import the frontends the run needs before forking, so that every worker starts with
    them (a fork shares the imported modules; each worker importing them would not).  The
    pools forked after a scan's walk (the join's re-analyses, the checks of fixes) call it
    too: what the files found after the walk's last fork need, a worker imported, not this
    process (:func:`run_walk`).

    The imports run with the cyclic collector paused, and what this process then holds goes
    to the collector's permanent generation (``gc.freeze``, as :class:`lockcheck.workers.
    _Worker` does before each fork, and until the run's workers are done): the modules,
    classes and tables live as long as the process, and each collection, before the fork and
    after it in both processes, would only traverse them again (issue #11)."""
    import importlib

    with paused():
        for language in sorted({t.language for t in targets if t.language}):
            importlib.import_module(f"{__package__}.frontends.{language}")
        # a job definition's parser (its kind's module, the YAML grammar, the shell frontend
        # for embedded shell) is imported here only once the run has scripts too, and so
        # likely more than one worker to share it: this process never parses a definition,
        # and a tree of definitions and no script (a Helm chart repository) has one worker,
        # which imports them beside the walk (~0.02 s) instead of this process before it
        kinds = {t.definition for t in targets if t.definition and not t.language}
        if kinds and any(t.language for t in targets):
            from .definitions.load import preload

            preload(kinds)
        names = ["engine", "checks"]
        if sum(1 for t in targets if t.language) > 1:  # what analyze_text imports for a
            names.append("fix.suggest")  # script with findings: one file's worker imports
            # it if needed; embedded shell (short, rarely with findings) is left to the
            # worker that needs it
        for name in names:
            importlib.import_module(f"{__package__}.{name}")
        gc.freeze()


def _work(t: Target) -> float:
    """A file's share of the work, in Python-file equivalents."""
    if t.language:
        return WORK_WEIGHT.get(t.language, 0.0)
    return DEFINITION_WEIGHT * bool(t.definition)


def run(
    targets: list[Target],
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
) -> list[FileResult]:
    """Results in the order of ``targets``, each file analysed in a bounded worker process
    (:mod:`lockcheck.workers`): ``jobs`` of them (at most one per file); by default as many
    as the machine has cores, fewer when the run is too small to pay for more.  A job
    definition is read and parsed the same way (:mod:`lockcheck.definitions.load`), then
    joined by the pass over the whole tree (:func:`lockcheck.definitions.join.analyze_tree`)."""
    if not targets:
        return []
    if jobs is None:
        jobs = min(default_jobs(), int(sum(_work(t) for t in targets) / WORK_PER_WORKER) + 1)
    workers = max(1, min(jobs, len(targets)))
    preload(targets)
    from .workers import Unavailable, run_bounded

    try:
        return run_bounded(targets, check_target, stopped_result, file_bounds, workers, progress)
    except Unavailable:
        pass  # no fork here: analyse in this process, unbounded
    return _in_process(targets, progress)


def _in_process(targets: list[Target], progress) -> list[FileResult]:
    out: list[FileResult] = []
    for i, t in enumerate(targets, 1):
        out.append(check_target(t))
        if progress:
            progress(i, len(targets))
    return out


def run_walk(
    walk: Iterable[Target | None],
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
) -> tuple[list[Target], list[FileResult]]:
    """:func:`run` over the targets a walk of the tree yields, each analysed as soon as it is
    found while the walk goes on: the targets and their results.  One worker starts with the
    first file; another (up to ``jobs``, by default the machine's cores) each time the files
    waiting for a worker are work enough to pay for it (:data:`WORK_PER_WORKER`), and when the
    walk ends with files waiting, as many as the whole run pays for.  Before each fork this
    process imports what the files so far need (:func:`preload`), which the new worker shares;
    what a later kind of file needs, a worker imports itself."""
    seen: list[Target] = []
    walk = iter(walk)

    def feed():
        for t in walk:
            if t is not None:  # None: a tick of the walk (lockcheck.discover.walk)
                seen.append(t)
            yield t

    from .workers import Unavailable, run_bounded

    cap = jobs if jobs is not None else default_jobs()
    try:
        results = run_bounded(
            feed(),
            check_target,
            stopped_result,
            file_bounds,
            max(1, cap),
            progress,
            weight=lambda t: _work(t) / WORK_PER_WORKER,
            before_fork=preload,
        )
        return seen, results
    except Unavailable:
        pass  # no fork here: analyse in this process, unbounded
    targets = seen + [t for t in walk if t is not None]
    return targets, _in_process(targets, progress)


@record
class Call:
    """A task of :func:`run_calls`: ``index`` into the caller's state; ``path`` and
    ``settings`` those of the file it is about (its bounds, the test hook)."""

    index: int
    path: str
    settings: Settings
    fault_prefix: str = ""  # the test hook's prefix (lockcheck.workers)


def run_calls(
    calls: list[Call],
    func: Callable[[Call], Any],
    stopped: Callable[[Call, str], Any],
    jobs: int | None = None,
    work: float | None = None,
) -> list[Any]:
    """``func(call)`` for each call, each in a bounded worker like a file's analysis (the
    workers are forked, so ``func`` may read the caller's state as it is now); in this
    process where no worker can be forked.  ``jobs`` workers; by default, as for
    :func:`run`, as many as ``work`` (Python-file equivalents) pays for."""
    if not calls:
        return []
    from .workers import Unavailable, run_bounded

    if jobs is None and work is not None:
        jobs = min(default_jobs(), int(work / WORK_PER_WORKER) + 1)
    workers = max(1, min(jobs or default_jobs(), len(calls)))
    try:
        return run_bounded(calls, func, stopped, file_bounds, workers)
    except Unavailable:
        return [func(c) for c in calls]
