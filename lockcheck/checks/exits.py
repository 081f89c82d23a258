"""How a run that did not get the lock ends, and what status the run reports."""

from __future__ import annotations

from ..model import Applicability, Fix, LockKind
from . import Context, rule, shown


def _busy_zero(ctx: Context):
    for acq in ctx.facts.acquires:
        b = acq.busy
        # a service record's only busy branch: an LSB `start` that finds the service running
        if b is None or (acq.service_record and not b.lsb_start):
            continue
        if b.ends_run and b.status == 0:
            yield acq, b


@rule(
    "LCK401",
    "silent-skip",
    "error",
    "A busy branch that exits 0 and records the skip nowhere durable.",
    "unsafe",
    help="Exit with `skip-exit-code` (75, EX_TEMPFAIL) or record the skip durably",
)
def silent_skip(ctx: Context):
    code = ctx.settings.skip_exit_code
    for _acq, b in _busy_zero(ctx):
        if b.durable or b.lsb_start:
            continue
        fix = None
        if b.status_fix is not None:
            fix = Fix(
                Applicability.UNSAFE,
                f"Exit with {code} when the lock is busy",
                b.status_fix.render(code=code),
            )
        yield ctx.finding(
            "LCK401",
            b.span,
            f"busy branch exits 0 and records nothing: a stuck lock looks healthy (exit {code})",
            fix=fix,
        )


@rule(
    "LCK402",
    "zero-exit-skip",
    "info",
    "A busy branch that exits 0 but records the skip durably.",
    help="Exit with `skip-exit-code` (75) so monitors that read the status see the skip",
)
def zero_exit_skip(ctx: Context):
    for _acq, b in _busy_zero(ctx):
        if not (b.durable or b.lsb_start):
            continue
        why = (
            "`start` on a running service exits 0 (LSB)"
            if b.lsb_start and not b.durable
            else "monitors see success despite the logged skip"
        )
        yield ctx.finding(
            "LCK402",
            b.span,
            f"busy branch exits 0: {why}",
        )


@rule(
    "LCK403",
    "flock-default-conflict-code",
    "warning",
    "flock in command form without -E: a conflict looks like a failure.",
    "unsafe",
    help="Add `-E 75` so that a conflict has a status of its own",
)
def flock_default_conflict_code(ctx: Context):
    code = ctx.settings.skip_exit_code
    for acq in ctx.facts.acquires:
        if not (acq.command_form and acq.nonblocking):
            continue
        if acq.conflict_code is not None or acq.status_handled:
            continue
        fix = None
        if acq.conflict_code_fix is not None:
            fix = Fix(
                Applicability.UNSAFE,
                f"Add `-E {code}` to flock",
                acq.conflict_code_fix.render(code=code),
            )
        yield ctx.finding(
            "LCK403",
            acq.span,
            "`flock` exits 1 on conflict, like the command's own failures: a skip looks like "
            "an error",
            fix=fix,
        )


@rule(
    "LCK404",
    "exit-trap-overrides-status",
    "warning",
    "An EXIT trap that ends with a fixed status.",
    "suggestion",
    help='Save `rc=$?` first and `exit "$rc"`, or end the trap with a bare `exit`',
)
def exit_trap_overrides_status(ctx: Context):
    facts = ctx.facts
    if not facts.started_by_job and not any(not a.service_record for a in facts.acquires):
        return  # an interactive tool with no lock: its exit status is nobody's skip signal
    for ov in facts.overrides:
        sugg = None
        if ov.keep_status_fix is not None:
            sugg = Fix(
                Applicability.SUGGESTION, ov.keep_status_fix.message, ov.keep_status_fix.edits
            )
        yield ctx.finding(
            "LCK404",
            ov.span,
            f"the EXIT trap ends with `{ov.detail}`: every run reports that status, failed or not",
            suggestion=sugg,
        )


@rule(
    "LCK406",
    "lock-open-failure-read-as-busy",
    "warning",
    "The busy branch of a descriptor lock also runs when the lock file cannot be opened.",
    "suggestion",
    help='Check the open on its own: `exec 9<>"$LOCK" || exit 3`, or open before the `try`',
)
def lock_open_failure_read_as_busy(ctx: Context):
    shell = ctx.facts.language == "shell"
    for acq in ctx.facts.acquires:
        if not acq.open_failure_is_busy or acq.busy is None or acq.kind is LockKind.EXISTENCE:
            continue
        if shell:
            what = "unchecked `exec` of the lock file"
        else:
            what = "busy handler also catches open errors"
        thing = "a mutex" if acq.mechanism == "named mutex" else "a lock file"
        yield ctx.finding(
            "LCK406",
            acq.open_failure_span or acq.open_span or acq.span,
            f"{what}: {thing} that cannot be opened reads as busy on every run",
            suggestion=shown(acq.open_check_fix),
        )


# an empty busy branch status is computed by the frontend; ``flock -E 0`` arrives as a busy
# branch whose span is the flock command and whose status is 0.
