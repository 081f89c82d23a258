"""Stored PIDs and child processes."""

from __future__ import annotations

from ..model import LockKind
from . import Context, rule, shown


@rule(
    "LCK105",
    "pid-liveness-check",
    "warning",
    "Deciding whether a lock holder lives from a stored PID.",
    "suggestion",
    help="Use flock, which needs no PID: the lock dies with its holder",
)
def pid_liveness_check(ctx: Context):
    for chk in ctx.facts.liveness:
        if not chk.consequential:
            continue
        yield ctx.finding(
            "LCK105",
            chk.span,
            "judges the lock holder alive from a stored PID, which may be reused or foreign",
            suggestion=shown(chk.suggestion),
        )


@rule(
    "LCK108",
    "kill-stored-pid",
    "error",
    "Signalling a PID read from a lock or pid file.",
    "suggestion",
    help="Use flock, so that no holder ever has to be killed",
)
def kill_stored_pid(ctx: Context):
    for kill in ctx.facts.kills:
        if kill.signal in ("0", "SIG0"):
            continue
        yield ctx.finding(
            "LCK108",
            kill.span,
            f"sends {kill.signal} to a PID read from a file, which may now be another process",
            suggestion=shown(kill.suggestion),
        )


@rule(
    "LCK405",
    "background-work-in-lock-scope",
    "warning",
    "A background child started while a lock is held.",
    help="Close the lock descriptor in the child (`9>&-`, `close_fds`) or wait for it",
)
def background_in_lock_scope(ctx: Context):
    acquires = ctx.facts.acquires
    for bg in ctx.facts.backgrounds:
        acq = acquires[bg.lock] if 0 <= bg.lock < len(acquires) else None
        if acq is not None and acq.kind is LockKind.EXISTENCE:
            why = "the lock is released while it still works"
        elif not bg.inherits_lock:
            why = "the detached child outlives the lock"
        else:
            why = "the child inherits the locked descriptor"
        how = bg.how if "(" in bg.how else f"background child ({bg.how})"
        yield ctx.finding(
            "LCK405",
            bg.span,
            f"{how} in the lock scope: {why}",
        )
