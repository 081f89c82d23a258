"""Checking fixes under the bounds of the analysis.

:func:`lockcheck.fix.apply.fix_text` re-analyses the text after every round of fixes; that
text is new, and may be as hostile as any scanned file.  Each file's fixes are therefore
checked in a bounded worker (:mod:`lockcheck.workers`), every analysis of them within the
file's ``file-timeout`` and the whole within its ``file-memory``: a file whose fixing
crashes, hangs or runs out of memory gets a :class:`Stopped` and is not fixed, and the other
files' fixes go on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from ..model import FileFacts, Finding
from ..settings import Settings
from .apply import FileFixResult

# (path, text, language, settings) -> (facts, findings): lockcheck.engine.analyze_text
Analyze = Callable[[str, str, str, Settings], tuple[FileFacts, list[Finding]]]


@dataclass
class FixTask:
    path: str  # absolute: the file the fixes are for (the test hook reads its name)
    display: str
    text: str
    language: str
    settings: Settings
    codes: set[str]
    unsafe: bool
    fault_prefix: str = "fix-"


@dataclass
class Stopped:
    """The fixes of a file were not checked: ``reason`` says why (a bound, a crash)."""

    reason: str


@dataclass
class Failed:
    """The fixer raised (a bug): ``message`` is the exception in one line."""

    message: str


def _fix(task: FixTask, analyze: Analyze) -> FileFixResult | Failed:
    from ..workers import heartbeat
    from .apply import fix_text

    def analyse(src: str) -> tuple[FileFacts, list[Finding]]:
        return analyze(task.display, src, task.language, task.settings)

    try:
        return fix_text(
            task.display,
            task.text,
            task.language,
            task.settings,
            task.codes,
            task.unsafe,
            on_analysis=heartbeat,
            analyse=analyse,
        )
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a fixer bug must not lose the findings
        return Failed(f"{type(exc).__name__}: {exc}")


def fix_files(
    tasks: Sequence[FixTask], jobs: int, analyze: Analyze
) -> list[FileFixResult | Stopped | Failed]:
    """The outcome of each task, in order, from at most ``jobs`` bounded workers (in this
    process, unbounded, where no worker can be forked); ``analyze`` (the signature of
    :func:`lockcheck.engine.analyze_text`, which the caller hands in: the fix layer does not
    import the engine) analyses each text."""
    if not tasks:
        return []
    fix = partial(_fix, analyze=analyze)
    from ..runner import file_bounds
    from ..workers import Unavailable, run_bounded

    try:
        return run_bounded(
            tasks, fix, lambda _task, why: Stopped(why), file_bounds, max(1, min(jobs, len(tasks)))
        )
    except Unavailable:
        return [fix(t) for t in tasks]


def fix_definition(display: str, text: str, target, codes: set[str], unsafe: bool, analyse):
    """A job definition's fixes, checked with ``analyse`` (its re-analysis in the scan's
    tree, :func:`lockcheck.definitions.join.analyze_tree`)."""
    from ..workers import heartbeat
    from .apply import fix_text

    try:
        return fix_text(
            display,
            text,
            target.language,
            target.settings,
            codes,
            unsafe,
            on_analysis=heartbeat,
            analyse=analyse,
        )
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a fixer bug must not lose the findings
        return Failed(f"{type(exc).__name__}: {exc}")


def fix_definitions(items: Sequence[tuple], unsafe: bool, jobs: int) -> list:
    """The outcome of each job definition's fixes (``items``: (target, result, codes,
    analyse)), each checked in a bounded worker like a script's: the workers are forked, so
    each re-analysis runs in the scan's tree as the parent holds it."""
    from ..runner import Call, run_calls

    def one(call: Call):
        t, r, codes, analyse = items[call.index]
        return fix_definition(r.display, r.text or "", t, codes, unsafe, analyse)

    calls = [Call(i, t.path, t.settings) for i, (t, _r, _c, _a) in enumerate(items)]
    for c in calls:
        c.fault_prefix = "fix-"  # the test hook's fix-crash/fix-hang/fix-memory
    return run_calls(calls, one, lambda _call, why: Stopped(why), jobs)
