"""Existence locks, check-then-create, flock on network paths, release coverage."""

from __future__ import annotations

from ..model import Applicability, Fix, LockKind
from ..paths import same_path, synced_reason
from . import Context, rule, shown


def _where(path) -> str:
    return f" on `{path.render()}`" if path is not None else ""


@rule("LCK000", "parse-error", "warning", "The file could not be read as shell or Python.")
def parse_error(ctx: Context):
    for err in ctx.facts.parse_errors:
        yield ctx.finding("LCK000", err.span, err.message)


def _existence_locks(ctx: Context):
    for acq in ctx.facts.acquires:
        if acq.kind is LockKind.EXISTENCE and not acq.service_record:
            yield acq


@rule(
    "LCK101",
    "existence-lock",
    "warning",
    "A single-instance guard whose lock is the existence of a name.",
    "suggestion",
)
def existence_lock(ctx: Context):
    for acq in _existence_locks(ctx):
        if acq.check_then_create:
            continue
        if synced_reason(acq.path, ctx.settings.synced_paths):
            continue  # LCK102
        yield ctx.finding(
            "LCK101",
            acq.span,
            f"`{acq.mechanism}` lock{_where(acq.path)} is held only while the name exists: "
            "a crash or a refused delete locks out every later run; hold a flock on an open "
            "descriptor instead",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK102",
    "existence-lock-in-synced-path",
    "error",
    "An existence lock in a cloud-synced or network folder.",
    "suggestion",
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
            f"`{acq.mechanism}` lock{_where(acq.path)} sits in a synced or network folder "
            f"({why}) where delete may be refused: the first run seals the slot for every "
            "later run; use flock on a lock file on local run-private storage",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK103",
    "check-then-create-lock",
    "error",
    "A non-atomic test-then-create used as a lock.",
    "suggestion",
)
def check_then_create(ctx: Context):
    for acq in _existence_locks(ctx):
        if not acq.check_then_create:
            continue
        yield ctx.finding(
            "LCK103",
            acq.span,
            f"test-then-create lock{_where(acq.path)} is not atomic: two runs can both see "
            "the name absent and both go on; take a flock on an open descriptor instead",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK104",
    "flock-on-network-path",
    "warning",
    "A flock/fcntl lock file in a synced or network location.",
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
            f"{acq.mechanism} lock file{_where(acq.path)} is in a synced or network location "
            f"({why}): flock there may be local-only or unsupported, and sync clients can "
            "replace the file; keep lock files on the host's own local filesystem",
        )


@rule(
    "LCK202",
    "lock-not-released-on-failure",
    "warning",
    "An existence lock whose release does not run on every exit path.",
    "suggestion",
)
def not_released_on_failure(ctx: Context):
    for acq in _existence_locks(ctx):
        if not acq.released or acq.release_on_every_exit:
            continue
        hint = (
            "put the release in `trap ... EXIT`"
            if ctx.facts.language == "shell"
            else "release it in `finally`, a `with` block or `atexit`"
        )
        yield ctx.finding(
            "LCK202",
            acq.span,
            f"`{acq.mechanism}` lock{_where(acq.path)} is released only on the normal path: an "
            f"error or signal leaves it behind and every later run skips; {hint}, or use flock",
            suggestion=shown(acq.suggestion),
        )


@rule(
    "LCK203",
    "release-before-acquire",
    "error",
    "A release hook that is already active when the busy branch runs.",
    "unsafe",
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
                f"this {hook.mechanism} removes `{hook.path.render()}` even in a run that did "
                "not get the lock: the losing run deletes the winner's lock; install the "
                "release only after the lock is acquired",
                fix=fix,
            )
            break
