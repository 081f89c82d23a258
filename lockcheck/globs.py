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
backtracking.

``**`` is a second source of backtracking: pathspec writes a leading ``**/`` as ``(?:.+/)?``
and each inner ``/**/`` as ``(?:/.+)?/``, and with k of them in one pattern the regex engine
tries every way to place the k pieces between them: O(n^k) on a deep path that almost
matches.  A pattern with two or more is matched by :class:`DeepGlob` instead, which follows
every placement at once (an NFA over the path's segment boundaries): each piece is tried
once at each segment start, O(path length x pattern length).  It matches what pathspec's
regex matches, except that, as in git, a ``[!...]`` bracket never matches a ``/``, and a
``**`` also spans a line break in a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .hints import TYPE_CHECKING

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


_LEAD = "(?:.+/)?"
_MID = "(?:/.+)?"
_TAILS = ("(?:(?P<ps_d>/)|$)", "(?P<ps_d>/)", "/")


class _Match:
    """What pathspec and :func:`lockcheck.discover.own_match` read of a match."""

    def __init__(self, end: int, dir_mark: str | None) -> None:
        self._end = end
        self._groups = {"ps_d": dir_mark}

    def start(self) -> int:
        return 0

    def end(self) -> int:
        return self._end

    def groupdict(self) -> dict[str, str | None]:
        return dict(self._groups)


class DeepGlob:
    """A pathspec pattern regex with several ``**`` (``^`` [lead] piece (mid piece)... tail),
    matched by following every placement of the pieces at once.  Stands in for the compiled
    regex: ``search`` and ``match`` (both anchored, as pathspec's regexes are) return an
    object with ``end()`` and ``groupdict()``, or None.  ``work`` counts piece attempts."""

    def __init__(self, pattern: str, lead: bool, pieces: list[str], tail: str) -> None:
        self.pattern = pattern
        self.lead = lead
        # a piece is segments; its end must be a segment end (the mid, the tail start there)
        self.pieces = [re.compile(linear_regex(_no_slash_classes(p)) + r"(?=/|\Z)") for p in pieces]
        self.tail = tail
        self.work = 0

    def search(self, text: str) -> _Match | None:
        n = len(text)
        slashes = [i for i, ch in enumerate(text) if ch == "/"]
        starts = [0]
        if self.lead:  # (?:.+/)?: also after any slash but a leading one
            starts += [i + 1 for i in slashes if i >= 1]
        ends: list[int] = []
        for k, piece in enumerate(self.pieces):
            if k:  # (?:/.+)?: the piece (which starts with "/") at an end, or at a later
                # slash at least two characters past an end that is a slash
                first = next((e for e in ends if e < n), None)
                starts = sorted(
                    set(ends) | {q for q in slashes if first is not None and q >= first + 2}
                )
            ends = []
            for s in starts:
                self.work += 1
                m = piece.match(text, s)
                if m is not None:
                    ends.append(m.end())
            ends.sort()
            if not ends:
                return None
        if self.tail == _TAILS[0] and ends[-1] == n:
            return _Match(n, None)  # the whole path: a file match, as the regex prefers
        inner = [e for e in ends if e < n]  # text[e] is "/": a piece ends at one
        if not inner:
            return None
        e = inner[-1]  # the last, as the regex's greedy stars find it
        return _Match(e + 1, "/" if "ps_d" in self.tail else None)

    match = search


def _no_slash_classes(piece: str) -> str:
    """``[^...]`` (pathspec's ``[!...]``) never matching ``/``, as in git."""
    return re.sub(r"\[\^(?!/\])", "[^/", piece)


def deep_glob(regex: str) -> DeepGlob | None:
    """A :class:`DeepGlob` for a pathspec regex with two or more ``**`` parts, else None (one
    such part backtracks linearly; an unfamiliar shape is left to the regex)."""
    if not regex.startswith("^"):
        return None
    body = regex[1:]
    lead = body.startswith(_LEAD)
    if lead:
        body = body[len(_LEAD) :]
    tail = next((t for t in _TAILS if body.endswith(t)), None)
    if tail is None:
        return None
    pieces = body[: len(body) - len(tail)].split(_MID)
    if lead + len(pieces) - 1 < 2:
        return None
    for i, p in enumerate(pieces):
        if "(" in p.replace("\\(", "") or ".+" in p or (i and not p.startswith("/")):
            return None  # not a plain piece: leave the pattern alone
    return DeepGlob(regex, lead, pieces, tail)


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
            deep = deep_glob(regex.pattern)
            if deep is not None:
                p.regex = deep
                continue
            new = linear_regex(regex.pattern)
            if new != regex.pattern:
                p.regex = re.compile(new)
    try:  # pathspec >= 1: the plain backend, which matches through each pattern's regex
        return pathspec.GitIgnoreSpec(patterns, backend="simple")
    except TypeError:  # pragma: no cover - pathspec 0.12
        return pathspec.GitIgnoreSpec(patterns)
