"""LCK601-LCK606: the job definitions that start scripts (RULES.md, "Job definitions").

Written once over :mod:`lockcheck.definitions` (a Definition's entries, their settings and
commands) and the join to the scanned tree's scripts (:class:`JobContext.script_of`), made by
:mod:`lockcheck.definitions.join`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .. import lazyre
from ..hints import TYPE_CHECKING
from ..model import Finding, Fix, Span
from ..records import field, record
from . import RULES, rule

if TYPE_CHECKING:  # the rules run in the join only: a scan of scripts never imports these
    from ..definitions import Command, Definition, Entry, Setting


@record
class Script:
    """A script of the tree that a command names."""

    rel: str  # tree-relative path
    takes_lock: bool | None  # None: its analysis failed (unknown)
    backgrounds: bool | None = None  # it leaves a child in the background (None: unknown)
    offset: int = 0  # the line of the command (from its first) that names the script
    word: str = ""  # the word that names it


@record
class Start:
    """One scheduler entry that starts a script (for LCK606)."""

    path: str
    line: int
    wrapped: str | None
    entry: int = 0  # the line of the scheduler entry (two steps of one job are one entry)


@record
class JobContext:
    definition: Definition
    script_of: Callable[[Command], Script | None]
    # services started by a timer: service file name -> the timer's display path
    timers: dict[str, str] = field(default_factory=dict)
    starts: dict[str, list[Start]] = field(default_factory=dict)  # script rel -> entries
    skip_exit_code: int = 75  # the status a wrapping `flock -n -E` returns (settings)
    # every script a command names, line by line (None: the first one, ``script_of``)
    scripts_of: Callable[[Command], list[Script]] | None = None

    def at(self, c: Command, sc: Script) -> tuple[int, int]:
        """Where a command names its script: the line (and column) of the word."""
        if not sc.offset:
            return c.line, c.col
        line = c.line + sc.offset
        lines = self.definition.text.split("\n")
        text = lines[line - 1] if line <= len(lines) else ""
        return line, max(text.find(sc.word), 0) + 1

    def finding(
        self, code: str, line: int, message: str, col: int = 1, fix: Fix | None = None
    ) -> Finding:
        r = RULES[code]
        suggestion = fix if fix is not None and fix.applicability.value == "suggestion" else None
        return Finding(
            code=code,
            name=r.name,
            severity=r.severity,
            message=message,
            path=self.definition.path,
            span=Span(line, col, line, col),
            fix=None if suggestion is not None else fix,
            suggestion=suggestion,
        )


# --------------------------------------------------------------------------- verdicts


def _short(text: str, n: int) -> str:
    """``text`` cut from the left to ``n`` characters (messages stay under 100)."""
    return text if len(text) <= n else "..." + text[-(n - 3) :]


def _bad(s: Setting, ok: Callable[[str], bool]) -> bool:
    """The key is known and not acceptable (missing counts as the default)."""
    if s.templated:
        return False
    return s.value is None or not ok(s.value)


def overlap(e: Entry) -> Setting | None:
    """LCK601: the setting (or missing key) that lets the object start overlapping runs."""
    if e.kind == "cronjob":
        s = e.get("concurrencyPolicy")
        return s if _bad(s, lambda v: v in ("Forbid", "Replace")) else None
    if e.kind == "nomad-job":
        s = e.get("prohibit_overlap")
        return s if _bad(s, lambda v: v == "true") else None
    if e.kind == "airflow-dag":
        if not e.scheduled or e.get("max_active_tis_per_dag").value == "1":
            return None
        s = e.get("max_active_runs")
        return s if _bad(s, lambda v: v == "1") else None
    if e.kind == "windows-task":
        s = e.get("MultipleInstancesPolicy")
        return s if s.value == "Parallel" else None
    return None


_UNIQUE = lazyre.compile(r"github\.(run_id|run_number|sha)\b")


def group_holds(group: Setting) -> bool:
    return group.present and not (group.value and _UNIQUE.search(group.value))


def unheld_jobs(wf: Entry) -> list[Entry]:
    """The jobs of a scheduled workflow that no concurrency group holds across runs."""
    if not wf.scheduled or group_holds(wf.get("group")):
        return []
    return [j for j in wf.jobs if not group_holds(j.get("group"))]


def _escapes(ctx: JobContext, e: Entry) -> bool:
    """A service whose work escapes the unit (LCK605's hand-off and background cases)."""
    return bool(_handoff(e) or _backgrounds(ctx, e))


_HANDOFF = lazyre.compile(
    r"\bdocker\s+run\b[^|;&]*\s(-d|--detach)\b|\bsystemd-run\b|(^|[\s;&|])at\s"
)


def _handoff(e: Entry) -> Command | None:
    return next((c for c in e.commands if _HANDOFF.search(c.text)), None)


def _backgrounds(ctx: JobContext, e: Entry) -> tuple[Command, Script | None] | None:
    """Under ``KillMode=process``/``none``: the command that leaves work in the background,
    in its own ``sh -c`` text or in the script of the tree it runs (that script's facts)."""
    km = e.get("KillMode").value
    if km not in ("process", "none"):
        return None
    for c in e.commands:
        if re.search(r"[^&]&\s*['\"]?\s*$|\bnohup\b|\bsetsid\b", c.text):
            return c, None
        sc = ctx.script_of(c)
        if sc is not None and sc.backgrounds:
            return c, sc
    return None


def overlapping_commands(ctx: JobContext, e: Entry) -> Iterator[Command]:
    """LCK603's entries that can overlap: their commands."""
    if e.kind in ("crontab",) or e.kind in ("cronjob", "nomad-job") and overlap(e):
        yield from e.commands
    elif e.kind == "workflow":
        for j in unheld_jobs(e):
            yield from j.commands
    elif e.kind == "gitlab-job" and gitlab_unguarded(e):
        yield from e.commands
    elif e.kind == "service" and e.name in ctx.timers and _escapes(ctx, e):
        yield from e.commands


def gitlab_unguarded(e: Entry) -> bool:
    return e.scheduled and e.get("environment").present and not e.get("resource_group").present


def scheduled_commands(ctx: JobContext, e: Entry) -> Iterator[Command]:
    """Every command a scheduler entry starts (for LCK606)."""
    if e.kind == "workflow":
        if e.scheduled:
            for j in e.jobs:
                yield from j.commands
    elif e.kind == "service":
        if e.name in ctx.timers:
            yield from e.commands
    elif e.scheduled:
        yield from e.commands


# --------------------------------------------------------------------------- rules

LAYER = "definitions"


@rule(
    "LCK601",
    "scheduler-allows-overlap",
    "warning",
    "The scheduler starts a new run while the last one still runs.",
    fix="unsafe",
    help="use `concurrencyPolicy: Forbid`, `prohibit_overlap = true`, `max_active_runs=1` or"
    " `IgnoreNew`",
    layer=LAYER,
)
def scheduler_allows_overlap(ctx: JobContext) -> Iterator[Finding]:
    from . import job_fixes as fixes  # the join's fixes: not on a scan of scripts

    for e in ctx.definition.entries:
        s = overlap(e)
        if s is None:
            continue
        if e.kind == "windows-task":
            scripts = [ctx.script_of(c) for c in e.commands]
            if any(c.wrapped is not None for c in e.commands) or any(
                sc is not None and sc.takes_lock for sc in scripts
            ):
                continue  # its runs share one host: the script's own lock holds
        what = {
            "cronjob": ("concurrencyPolicy", "Allow", "concurrencyPolicy: Forbid"),
            "nomad-job": ("prohibit_overlap", "false", "prohibit_overlap = true"),
            "airflow-dag": ("max_active_runs", "16", "max_active_runs=1"),
            "windows-task": ("MultipleInstancesPolicy", "Parallel", "IgnoreNew"),
        }[e.kind]
        found = f"is {s.value}" if s.value is not None else f"is not set (default {what[1]})"
        yield ctx.finding(
            "LCK601",
            s.line,
            f"`{what[0]}` {found}: a new run starts beside a running one",
            s.col if s.value is not None else e.col,
            fixes.overlap_fix(ctx.definition, e, s),
        )


@rule(
    "LCK602",
    "scheduled-ci-without-concurrency",
    "warning",
    "A scheduled CI workflow or job has no concurrency group that holds across runs.",
    fix="suggestion",
    help="add `concurrency: {group: ${{ github.workflow }}, cancel-in-progress: false}`;"
    " GitLab: `resource_group:`",
    layer=LAYER,
)
def scheduled_ci_without_concurrency(ctx: JobContext) -> Iterator[Finding]:
    from . import job_fixes as fixes  # the join's fixes: not on a scan of scripts

    for e in ctx.definition.entries:
        if e.kind == "gitlab-job":
            if gitlab_unguarded(e):
                yield ctx.finding(
                    "LCK602",
                    e.line,
                    f"job `{_short(e.name, 30)}` runs for schedules and deploys without"
                    " `resource_group`",
                    e.col,
                    fixes.resource_group_fix(ctx.definition, e),
                )
            continue
        if e.kind != "workflow" or not e.scheduled:
            continue
        for holder in [e, *e.jobs]:
            g = holder.get("group")
            if g.value and _UNIQUE.search(g.value):
                m = _UNIQUE.search(g.value)
                yield ctx.finding(
                    "LCK602",
                    g.line,
                    f"concurrency group contains `{m.group(0)}`, unique per "
                    f"{'commit' if m.group(1) == 'sha' else 'run'}: it holds nothing across runs",
                    g.col,
                )
        unheld = unheld_jobs(e)
        wg = e.get("group")
        if unheld and not wg.present:
            if len(unheld) == 1 and len(e.jobs) > 1:
                j = unheld[0]
                yield ctx.finding(
                    "LCK602",
                    j.line,
                    f"job `{_short(j.name, 30)}` of a scheduled workflow has no concurrency"
                    " group: runs can overlap",
                    j.col,
                    fixes.workflow_group_fix(ctx.definition),
                )
            else:
                yield ctx.finding(
                    "LCK602",
                    e.line,
                    "scheduled workflow without a concurrency group: a run can start while the"
                    " last one still runs",
                    e.col,
                    fixes.workflow_group_fix(ctx.definition),
                )
        for holder in [e, *e.jobs]:
            c = holder.get("cancel")
            writes = any(j.get("writes").value for j in (e.jobs if holder is e else [holder]))
            if c.value == "true" and writes:
                yield ctx.finding(
                    "LCK602",
                    c.line,
                    "`cancel-in-progress: true` on a workflow that pushes, publishes or deploys:"
                    " a run is killed mid-write",
                    c.col,
                )


@rule(
    "LCK603",
    "scheduled-script-without-lock",
    "warning",
    "An entry that can overlap runs a script of the tree that takes no lock.",
    fix="suggestion",
    help="wrap the command: `flock -n -E 75 <lock> <command>`, or take a lock in the script",
    layer=LAYER,
)
def scheduled_script_without_lock(ctx: JobContext) -> Iterator[Finding]:
    for e in ctx.definition.entries:
        for c in overlapping_commands(ctx, e):
            if c.wrapped is not None:
                continue
            found = ctx.scripts_of(c) if ctx.scripts_of else [ctx.script_of(c)]
            for sc in found:
                if sc is None or sc.takes_lock is not False:
                    continue
                yield _unlocked(ctx, c, sc)


def _unlocked(ctx: JobContext, c: Command, sc: Script) -> Finding:
    """LCK603 where the command names the script."""
    from . import job_fixes as fixes  # the join's fixes: not on a scan of scripts

    line, col = ctx.at(c, sc)
    return ctx.finding(
        "LCK603",
        line,
        f"`{_short(sc.rel, 40)}` takes no lock and this entry can start it beside a running copy",
        col,
        fixes.wrap_fix(ctx.definition, c, sc.rel, ctx.skip_exit_code) if not sc.offset else None,
    )


@rule(
    "LCK604",
    "hung-run-blocks-schedule",
    "warning",
    "Overlap is prevented but nothing bounds a run: one hang stops every later run.",
    fix="suggestion",
    help="bound a run: `activeDeadlineSeconds`, `TimeoutStartSec=`, an `ExecutionTimeLimit`"
    " under a day",
    layer=LAYER,
)
def hung_run_blocks_schedule(ctx: JobContext) -> Iterator[Finding]:
    from . import job_fixes as fixes  # the join's fixes: not on a scan of scripts

    for e in ctx.definition.entries:
        if e.kind == "cronjob" and e.get("concurrencyPolicy").value == "Forbid":
            s = e.get("activeDeadlineSeconds")
            if not s.present:
                yield ctx.finding(
                    "LCK604",
                    s.line,
                    "`concurrencyPolicy: Forbid` without `activeDeadlineSeconds`: one hung run"
                    " blocks every later run",
                    e.col,
                    fixes.bound_fix(ctx.definition, e),
                )
        elif e.kind == "service" and e.name in ctx.timers and e.get("Type").value == "oneshot":
            t = e.get("TimeoutStartSec")
            if not t.present:
                t = e.get("TimeoutSec")
            if not t.present or t.value in ("infinity", "0"):
                where = "is infinity" if t.present else "is off"
                yield ctx.finding(
                    "LCK604",
                    t.line,
                    f"oneshot service started by a timer: its start timeout {where}, so one hang"
                    " blocks every run",
                    fix=fixes.bound_fix(ctx.definition, e),
                )
        elif e.kind == "windows-task":
            limit = e.get("ExecutionTimeLimit")
            policy = e.get("MultipleInstancesPolicy").value or "IgnoreNew"
            if limit.value == "PT0S":
                yield ctx.finding(
                    "LCK604", limit.line, "`ExecutionTimeLimit` PT0S: a hung run is never stopped"
                )
            elif policy == "Queue" and not _under_a_day(limit.value or "PT72H"):
                yield ctx.finding(
                    "LCK604",
                    limit.line,
                    "`Queue` policy with no execution limit under a day: one hung run holds the"
                    " queue",
                )


def _under_a_day(iso: str) -> bool:
    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?", iso.strip())
    if not m:
        return True  # unknown: not flagged
    d, h, mi, s = (int(x or 0) for x in m.groups())
    total = ((d * 24 + h) * 60 + mi) * 60 + s
    return 0 < total < 86400


@rule(
    "LCK605",
    "timer-service-defeats-schedule",
    "error",
    "A timer's service stops the schedule or lets the work escape the unit.",
    fix="suggestion",
    help="drop `RemainAfterExit=yes` and the hand-off (`-d`, `systemd-run`, `&`): keep the work"
    " in the unit",
    layer=LAYER,
)
def timer_service_defeats_schedule(ctx: JobContext) -> Iterator[Finding]:
    from . import job_fixes as fixes  # the join's fixes: not on a scan of scripts

    for e in ctx.definition.entries:
        if e.kind != "service" or e.name not in ctx.timers:
            continue
        r = e.get("RemainAfterExit")
        if r.value and r.value.lower() in ("yes", "true", "1", "on"):
            yield ctx.finding(
                "LCK605",
                r.line,
                "`RemainAfterExit=yes` on a timer's service: the timer starts it once and never"
                " again",
                fix=fixes.remain_fix(ctx.definition, r),
            )
        bg = _backgrounds(ctx, e)
        if bg is not None:
            c, sc = bg
            where = f" in `{_short(sc.rel, 30)}`" if sc is not None else ""
            line, col = ctx.at(c, sc) if sc is not None else (c.line, c.col)
            yield ctx.finding(
                "LCK605",
                line,
                f"`KillMode={e.get('KillMode').value}` and background work{where}: it outlives"
                " the unit and runs overlap",
                col,
            )
        c = _handoff(e)
        if c is not None:
            yield ctx.finding(
                "LCK605",
                c.line,
                "`ExecStart=` hands the work to another manager: the unit ends at once and runs"
                " overlap",
                c.col,
            )


@rule(
    "LCK606",
    "same-script-several-schedulers",
    "info",
    "One script that takes no lock is started by several scheduler entries.",
    help="take the lock in the script, so that every entry point is covered",
    layer=LAYER,
)
def same_script_several_schedulers(ctx: JobContext) -> Iterator[Finding]:
    for e in ctx.definition.entries:
        for c in scheduled_commands(ctx, e):
            sc = ctx.script_of(c)
            if sc is None or sc.takes_lock is not False:
                continue
            starts = ctx.starts.get(sc.rel, [])
            if len({(s.path, s.entry) for s in starts}) < 2:
                continue
            locks = {s.wrapped for s in starts}
            if len(locks) == 1 and None not in locks:
                continue  # every entry wraps it in a lock on the same file
            line, col = ctx.at(c, sc)
            others = [
                f"{s.path}:{s.line}"
                for s in starts
                if (s.path, s.line) != (ctx.definition.path, line)
            ]
            yield ctx.finding(
                "LCK606",
                line,
                f"`{_short(sc.rel, 32)}` takes no lock and is also started by"
                f" {_short(others[0], 32) if others else 'another entry'}"
                + (f" and {len(others) - 1} more" if len(others) > 1 else ""),
                col,
            )
