"""Existence locks, check-then-create, flock on network paths, release coverage."""

from __future__ import annotations

from ..model import Applicability, Fix, LockKind
from ..paths import same_path, synced_reason
from . import Context, rule, shown


def _where(path) -> str:
    return f" on `{path.render()}`" if path is not None else ""


def _root(why: str) -> str:
    """``~/Dropbox is a cloud-synced folder`` -> ``~/Dropbox``: the message names the root."""
    return why.split(" is ", 1)[0]


@rule(
    "LCK000",
    "parse-error",
    "warning",
    "The file could not be read as shell or Python.",
    help="Fix the syntax error; findings outside the broken region are still reported",
)
def parse_error(ctx: Context):
    for err in ctx.facts.parse_errors:
        yield ctx.finding("LCK000", err.span, err.message)


def _existence_locks(ctx: Context):
    for acq in ctx.facts.acquires:
        if acq.kind is LockKind.EXISTENCE and not acq.service_record:
            yield acq


def _per_call(acqs):
    """One lock call reached from several call sites with different paths: the first acquire
    and the text naming every path (`` on `a` (or `b`)``), so the call is reported once."""
    groups: dict[tuple[int, int], list] = {}
    for acq in acqs:
        groups.setdefault((acq.span.start, acq.span.end), []).append(acq)
    for group in groups.values():
        names = list(dict.fromkeys(a.path.render() for a in group if a.path is not None))
        where = _where(group[0].path)
        if len(names) > 1:
            where = f" on `{names[0]}`" + "".join(f" (or `{n}`)" for n in names[1:])
        yield group[0], where


@rule(
    "LCK101",
    "existence-lock",
    "warning",
    "A single-instance guard whose lock is the existence of a name.",
    "suggestion",
    help="Hold a flock on an open descriptor instead: it dies with the process",
)
def existence_lock(ctx: Context):
    plain = (
        a
        for a in _existence_locks(ctx)
        if not a.check_then_create and not synced_reason(a.path, ctx.settings.synced_paths)
    )  # synced: LCK102
    for acq, where in _per_call(plain):
        yield ctx.finding(
            "LCK101",
            acq.span,
            f"`{acq.mechanism}` lock{where} blocks all runs after a crash",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK102",
    "existence-lock-in-synced-path",
    "error",
    "An existence lock in a cloud-synced or network folder.",
    "suggestion",
    help="Use flock on a lock file on the host's own local, run-private storage",
)
def existence_lock_synced(ctx: Context):
    for acq in _existence_locks(ctx):
        if acq.check_then_create:
            continue
        why = synced_reason(acq.path, ctx.settings.synced_paths)
        if not why:
            continue
        yield ctx.finding(
            "LCK102",
            acq.span,
            f"existence lock{_where(acq.path)} in a synced folder: deletes may fail",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK103",
    "check-then-create-lock",
    "error",
    "A non-atomic test-then-create used as a lock.",
    "suggestion",
    help="Take a flock on an open descriptor instead of testing for the name",
)
def check_then_create(ctx: Context):
    for acq, where in _per_call(a for a in _existence_locks(ctx) if a.check_then_create):
        yield ctx.finding(
            "LCK103",
            acq.span,
            f"test-then-create lock{where} is not atomic: two runs can both go on",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK109",
    "acquire-never-fails",
    "error",
    "A creation used as a lock that does not fail when the name exists: every run goes ahead.",
    "unsafe",  # PowerShell: drop -Force, set -ErrorAction Stop; elsewhere a suggestion
    help="Make it fail on an existing name (no `-p`, `exist_ok`, `-Force`), or hold a flock",
)
def acquire_never_fails(ctx: Context):
    for nx in ctx.facts.non_exclusive:
        why = "" if nx.why in nx.mechanism else f" ({nx.why})"
        fix = None
        if nx.exclusive_fix is not None:
            fix = Fix(Applicability.UNSAFE, nx.exclusive_fix.message, nx.exclusive_fix.edits)
        yield ctx.finding(
            "LCK109",
            nx.span,
            f"`{nx.mechanism}` succeeds on an existing name{why}: no run is ever busy",
            fix=fix,
            suggestion=shown(nx.suggestion),
        )


@rule(
    "LCK104",
    "flock-on-network-path",
    "warning",
    "A flock/fcntl lock file in a synced or network location.",
    help="Keep lock files on the host's own local filesystem",
)
def flock_on_network_path(ctx: Context):
    for acq in ctx.facts.acquires:
        if acq.kind is LockKind.EXISTENCE:
            continue
        why = synced_reason(acq.path, ctx.settings.synced_paths)
        if not why:
            continue
        yield ctx.finding(
            "LCK104",
            acq.open_span or acq.span,
            f"{acq.mechanism.lower()} lock file{_where(acq.path)} is on a network or synced path "
            f"({_root(why)})",
        )


@rule(
    "LCK202",
    "lock-not-released-on-failure",
    "warning",
    "An existence lock whose release does not run on every exit path.",
    "suggestion",
    help="Release in `trap ... EXIT` (shell) or `finally`/`with`/`atexit` (Python), or use flock",
)
def not_released_on_failure(ctx: Context):
    unreleased = (a for a in _existence_locks(ctx) if a.released and not a.release_on_every_exit)
    for acq, where in _per_call(unreleased):
        yield ctx.finding(
            "LCK202",
            acq.unreleased_route or acq.span,
            f"`{acq.mechanism}` lock{where} is not released on every exit path",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK203",
    "release-before-acquire",
    "error",
    "A release hook that is already active when the busy branch runs.",
    "unsafe",
    help="Install the release only after the lock is acquired",
)
def release_before_acquire(ctx: Context):
    acquires = ctx.facts.acquires
    for hook in ctx.facts.hooks:
        for idx in hook.active_in_busy_of:
            if idx >= len(acquires) or not same_path(hook.path, acquires[idx].path):
                continue
            fix = None
            if hook.move_fix is not None:
                fix = Fix(Applicability.UNSAFE, hook.move_fix.message, hook.move_fix.edits)
            yield ctx.finding(
                "LCK203",
                hook.span,
                f"this {hook.mechanism} removes `{hook.path.render()}` in a run that did not "
                "get the lock too",
                fix=fix,
            )
            break
