"""LCK001: suppression comments that silence nothing.  Which findings a comment silenced is
known only after every other rule has run, so the engine (``lockcheck.engine``) reports it;
the registration here gives the code its name, severity, fix and page."""

from __future__ import annotations

from . import Context, rule


@rule(
    "LCK001",
    "unused-suppression",
    "info",
    "A suppression comment that silences no finding, or names an unknown code.",
    "safe",
    help="Remove the unused codes, or the whole comment (--fix does)",
)
def unused_suppression(ctx: Context):
    return iter(())  # reported by the engine, after the other rules
