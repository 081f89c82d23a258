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
)
def pid_liveness_check(ctx: Context):
    for chk in ctx.facts.liveness:
        if not chk.consequential:
            continue
        yield ctx.finding(
            "LCK105",
            chk.span,
            "judges the lock holder alive from a stored PID: a PID means nothing in another "
            "sandbox, container or host and is reused, so the job skips forever or runs twice; "
            "use flock, which needs no PID",
            suggestion=shown(chk.suggestion),
        )


@rule(
    "LCK108",
    "kill-stored-pid",
    "error",
    "Signalling a PID read from a lock or pid file.",
    "suggestion",
)
def kill_stored_pid(ctx: Context):
    for kill in ctx.facts.kills:
        if kill.signal in ("0", "SIG0"):
            continue
        yield ctx.finding(
            "LCK108",
            kill.span,
            f"sends signal {kill.signal} to a PID read from a file: the PID may now belong to an "
            "unrelated process; use flock so that no holder has to be killed",
            suggestion=shown(kill.suggestion),
        )


@rule(
    "LCK405",
    "background-work-in-lock-scope",
    "warning",
    "A background child started while a lock is held.",
)
def background_in_lock_scope(ctx: Context):
    acquires = ctx.facts.acquires
    for bg in ctx.facts.backgrounds:
        acq = acquires[bg.lock] if 0 <= bg.lock < len(acquires) else None
        if acq is not None and acq.kind is LockKind.EXISTENCE:
            why = "the lock is released while the child still works unlocked"
            todo = "wait for the child before the release"
        elif not bg.inherits_lock:
            why = "the detached child goes on working after the lock is released"
            todo = "wait for the child before the lock scope ends"
        else:
            why = (
                "the child inherits the locked descriptor and holds the lock for its whole "
                "life, even past a killed parent"
            )
            todo = "close the descriptor in the child (`9>&-`) or wait for it"
        yield ctx.finding(
            "LCK405",
            bg.span,
            f"starts a background child ({bg.how}) while the lock is held: {why}; {todo}",
        )
