"""Removing lock files: flocked files, stale-lock breakers, other jobs' locks, probes."""

from __future__ import annotations

from ..model import Applicability, Fix, LockKind
from ..paths import glob_matches, is_dependency_lockfile, lockish_name, same_path
from . import Context, rule, shown


@rule(
    "LCK106",
    "stale-lock-breaker",
    "error",
    "Removing or overwriting a lock judged stale by liveness or age.",
    "suggestion",
    help="Drop the breaker and use flock, which is released when its holder dies",
)
def stale_lock_breaker(ctx: Context):
    for acq in ctx.facts.acquires:
        if acq.age_breaker is not None:
            yield ctx.finding(
                "LCK106",
                acq.age_breaker,
                f"`{acq.mechanism}` breaks locks by age: a long run loses its lock to a newcomer",
            )
    for rm in ctx.facts.removals:
        if not rm.stale_guard:
            continue
        why = (
            "its stored PID may be reused or foreign"
            if rm.stale_guard == "dead-holder"
            else "an old lock may still be held"
        )
        verb = "overwriting" if rm.overwrite else "removing"
        what = f"stale lock `{rm.path.render()}`" if rm.path is not None else "a stale lock"
        yield ctx.finding(
            "LCK106",
            rm.span,
            f"{verb} {what}: {why}",
            suggestion=shown(rm.suggestion),
        )


@rule(
    "LCK107",
    "foreign-lock-removal",
    "warning",
    "Unconditional removal of a lock the script never acquires.",
    help="Leave other jobs' locks alone; remove only what this script acquires",
)
def foreign_lock_removal(ctx: Context):
    facts = ctx.facts
    found: dict[tuple[int, int], list] = {}  # span -> the removals there (one per variant)
    for rm in facts.removals:
        if rm.conditional or rm.stale_guard or rm.overwrite or rm.path is None:
            continue
        if not lockish_name(rm.path) or is_dependency_lockfile(rm.path):
            continue
        if any(glob_matches(rm.path, a.path) for a in facts.acquires):
            continue
        if any(glob_matches(rm.path, p) for p in facts.created):
            continue
        if any(glob_matches(rm.path, p.path) for p in facts.probes):
            continue
        if any(k.pid_file is not None and same_path(k.pid_file, rm.path) for k in facts.kills):
            continue  # a stop action: the PID stored there was signalled, its record goes
        found.setdefault((rm.span.start, rm.span.end), []).append(rm)
    for rms in found.values():
        # a loop over several names (`for f in ["a.lock", "b.pid"]: os.remove(f)`): one finding
        names = ", ".join(f"`{r.path.render()}`" for r in rms)
        whose = "another job's lock"
        if len(rms) > 1:
            what, whose = "the locks", "other jobs' locks"
        else:
            what = "lock files matching" if rms[0].is_glob else "the lock"
        yield ctx.finding(
            "LCK107", rms[0].span, f"removes {what} {names}, never taken here: {whose}"
        )


@rule(
    "LCK201",
    "flock-file-removed",
    "error",
    "Deleting a file that the same script locks with flock/fcntl.",
    "safe",
    help="Keep the lock file; never delete a file that is locked with flock",
)
def flock_file_removed(ctx: Context):
    facts = ctx.facts
    flocked = [a for a in facts.acquires if a.kind in (LockKind.FLOCK, LockKind.LOCKF)]
    for rm in facts.removals:
        if rm.overwrite or rm.stale_guard:
            continue
        for acq in flocked:
            if acq.inode_recheck or not same_path(rm.path, acq.path):
                continue
            if rm.platforms and acq.platforms and not rm.platforms & acq.platforms:
                continue  # the removal's platform branch never runs where the flock does
            fix = None
            if rm.drop_fix is not None:
                fix = Fix(Applicability.SAFE, rm.drop_fix.message, rm.drop_fix.edits)
            yield ctx.finding(
                "LCK201",
                rm.span,
                f"deletes flock file `{rm.path.render()}`: two runs can then lock",
                fix=fix,
            )
            break


@rule(
    "LCK301",
    "fixed-probe-name",
    "error",
    "A create-and-remove probe with a fixed name in a shared directory.",
    "safe",
    help="Add a per-process part to the name (`$$`, `os.getpid()`)",
)
def fixed_probe_name(ctx: Context):
    for probe in ctx.facts.probes:
        if probe.path is None or probe.path.has_unique:
            continue
        fix = None
        if probe.per_process_fix is not None:
            fix = Fix(
                Applicability.SAFE, probe.per_process_fix.message, probe.per_process_fix.edits
            )
        yield ctx.finding(
            "LCK301",
            probe.span,
            f"probe `{probe.path.render()}` has a fixed name: concurrent runs collide on it",
            fix=fix,
        )
