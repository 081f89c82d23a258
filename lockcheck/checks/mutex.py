"""Named OS mutexes (PowerShell/.NET ``System.Threading.Mutex``)."""

from __future__ import annotations

from . import Context, rule

GLOBAL_PREFIX = "Global\\"


@rule(
    "LCK407",
    "session-local-mutex",
    "warning",
    "A named mutex without the Global\\ prefix: other logon sessions do not see it.",
    help="Name the mutex `Global\\...`",
)
def session_local_mutex(ctx: Context):
    for acq in ctx.facts.acquires:
        name = acq.mutex_name
        if name is None or name.startswith(GLOBAL_PREFIX):
            continue
        yield ctx.finding(
            "LCK407",
            acq.span,
            f"named mutex `{name}` is local to one logon session: other sessions' runs are "
            "not excluded",
        )
