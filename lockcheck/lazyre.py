"""Regular expressions compiled at their first use, not when their module is imported.

A one-file scan imports some forty module-level patterns and, for a typical job script, uses
fewer than half of them (the others are for a report with findings, Windows paths, Python 2
code, the shell commands of other tools...); compiling them all took ~7 ms of its start-up
(issue #11).  :func:`compile` returns a stand-in that compiles the pattern when one of its
methods is first read (``search``, ``match``, ``sub``...), then keeps that bound method as its
own attribute, so later uses cost what a compiled pattern's do."""

from __future__ import annotations

import re

from .hints import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, once something other than ``pattern`` is read."""

    def __init__(self, pattern: Any, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what is not set yet
        if name.startswith("__"):  # copy, pickle and friends probe for these: not a pattern's
            raise AttributeError(name)
        value = getattr(re.compile(self.pattern, self._flags), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r}, {self._flags!r})"


def compile(pattern: Any, flags: int = 0) -> LazyPattern:  # noqa: A001 - re.compile's name
    return LazyPattern(pattern, flags)
