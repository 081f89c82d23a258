"""Advice without edits for the lock facts a language's rewrites leave alone: a create that
cannot fail as a lock, a PID liveness check, a signal to a stored PID, a stale-lock breaker.
Each language words the remedy (``advice``); the facts that get it are the same for all."""

from __future__ import annotations

from collections.abc import Callable

from ..model import FileFacts, FixTemplate


def advise_the_rest(
    facts: FileFacts,
    advice: Callable[[str], FixTemplate],
    stop_pid: str = "Do not signal a PID read from a file",
) -> None:
    """Fill the suggestions still empty with ``advice(what is wrong)``."""
    for nx in facts.non_exclusive:
        if nx.suggestion is None:
            nx.suggestion = advice(f"{nx.mechanism} cannot fail as a lock")
    for chk in facts.liveness:
        if chk.suggestion is None:
            chk.suggestion = advice("Drop the PID liveness check")
    for k in facts.kills:
        if k.suggestion is None:
            k.suggestion = advice(stop_pid)
    for rm in facts.removals:
        if rm.stale_guard and rm.suggestion is None:
            rm.suggestion = advice("Drop the stale-lock breaker")
