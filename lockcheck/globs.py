"""gitignore-style globs (pathspec) matched without backtracking blow-ups.

pathspec turns each ``*`` of a path segment into ``[^/]*``; Python's backtracking regex
engine then tries every way to split a name between the stars, which for a segment such as
``a*a*a*a*a*a*b`` and a long name of ``a``'s is exponential: one hostile exclude pattern in a
scanned repository's configuration hangs the walk.  Matching ``p0*p1*...*pk`` needs no
backtracking: taking the leftmost place for every middle piece ``p1..p(k-1)`` is always
right.  :func:`linear_regex` rewrites each star that another star follows in the same
segment, with the fixed-width piece after it, as an atomic leftmost search
(``(?=(?P<g>[^/]*?piece))(?P=g)``, an atomic group in the regex dialect of every supported
Python), and collapses runs of stars; the segment's last star keeps its normal, linear
backtracking.  The patterns match the same paths as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

STAR = "[^/]*"


def _tokens(regex: str) -> list[tuple[str, str]]:
    """(kind, text): kind ``star`` ([^/]*), ``one`` (an atom of width one: a literal, an
    escape, a bracket class) or ``other`` (anything else: a segment or group boundary)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(regex)
    while i < n:
        if regex.startswith(STAR, i):
            out.append(("star", STAR))
            i += len(STAR)
            continue
        ch = regex[i]
        if ch == "\\" and i + 1 < n:
            out.append(("one", regex[i : i + 2]))
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < n and regex[j] == "^":
                j += 1
            if j < n and regex[j] == "]":
                j += 1
            while j < n and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            if (
                j < n
                and regex[j : j + 1] == "]"
                and regex[j + 1 : j + 2] not in ("*", "+", "?", "{")
            ):
                out.append(("one", regex[i : j + 1]))
                i = j + 1
                continue
            out.append(("other", regex[i:]))  # not understood: left alone from here on
            break
        if ch.isalnum() or ch in "_-%@~!#&=,;:'\"<> " or ord(ch) > 127:
            nxt = regex[i + 1 : i + 2]
            kind = "one" if nxt not in ("*", "+", "?", "{") else "other"
            out.append((kind, ch))
            i += 1
            continue
        out.append(("other", ch))
        i += 1
    return out


def linear_regex(regex: str) -> str:
    """``regex`` (as pathspec compiles a gitignore pattern) with no star that backtracks over
    another star of its segment."""
    if regex.count(STAR) < 2:
        return regex
    toks = _tokens(regex)
    out: list[str] = []
    group = 0
    i = 0
    while i < len(toks):
        kind, text = toks[i]
        if kind != "star":
            out.append(text)
            i += 1
            continue
        j = i + 1
        while j < len(toks) and toks[j][0] == "one":
            j += 1
        if j < len(toks) and toks[j][0] == "star":  # another star follows in this segment
            if j == i + 1:  # "**" inside a segment: one star says the same
                i += 1
                continue
            piece = "".join(t for _k, t in toks[i + 1 : j])
            name = f"lc{group}"
            group += 1
            out.append(f"(?=(?P<{name}>[^/]*?{piece}))(?P={name})")
            i = j
            continue
        out.append(text)
        i += 1
    return "".join(out)


def compile_spec(lines: Iterable[str], invalid: list[str] | None = None) -> pathspec.GitIgnoreSpec:
    """A :class:`pathspec.GitIgnoreSpec` of ``lines`` whose patterns match in linear time.

    A line that is no valid pattern (``[z-a]``) matches nothing, as in git, and is added to
    ``invalid`` when given: one bad line in a repository's ignore file must not stop a run."""
    import pathspec

    patterns = []
    for line in lines:
        try:
            patterns.extend(pathspec.GitIgnoreSpec.from_lines([line]).patterns)
        except (ValueError, re.error):
            if invalid is not None:
                invalid.append(line)
    for p in patterns:
        regex = getattr(p, "regex", None)
        if regex is not None:
            new = linear_regex(regex.pattern)
            if new != regex.pattern:
                p.regex = re.compile(new)
    try:  # pathspec >= 1: the plain backend, which matches through each pattern's regex
        return pathspec.GitIgnoreSpec(patterns, backend="simple")
    except TypeError:  # pragma: no cover - pathspec 0.12
        return pathspec.GitIgnoreSpec(patterns)
