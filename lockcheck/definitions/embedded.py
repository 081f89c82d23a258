"""Shell embedded in definitions (crontab command fields, workflow ``run:``, GitLab
``script:``, ``sh -c`` literals of a CronJob) through the shell frontend and the script rules,
with lines and columns mapped back to the definition.  ``${{ }}`` expressions become unknown
variables of the same length.  A finding's fix is moved into the definition where the
embedded lines are the ends of the definition's lines (otherwise it is dropped)."""

from __future__ import annotations

import re

from ..model import Edit, Finding, Fix, Span
from ..records import replace
from . import Command, Definition

_GHA = re.compile(r"\$\{\{.*?\}\}")


def _commands(d: Definition):
    for e in d.entries:
        yield from e.commands
        for j in e.jobs:
            yield from j.commands


def _unknown(m: re.Match) -> str:
    n = len(m.group(0))
    return "${" + "X" * (n - 3) + "}"


def shell_findings(d: Definition, settings, codes: set[str]) -> list[Finding]:
    from ..engine import analyze_text

    codes = {c for c in codes if not c.startswith("LCK6")}
    if not codes:
        return []
    lines: list[str] = []
    starts: list[int] = []  # of the definition's lines, read once there are findings to map
    out: list[Finding] = []
    for c in _commands(d):
        if c.shell is None or not c.text.strip():
            continue
        text = _GHA.sub(_unknown, c.text)
        prefix = 0
        if c.shell.endswith("-e"):  # `bash -e`: set -e is in effect
            text, prefix = "set -e\n" + text, 1
        _facts, found = analyze_text(d.path, text, "shell", settings, codes)
        if not found:
            continue
        if not lines:
            lines = d.text.split("\n")
            starts.append(0)
            for ln in lines:
                starts.append(starts[-1] + len(ln) + 1)
        sub = text.split("\n")
        where = _Offsets(starts, c, sub, lines, prefix)
        for f in found:
            out.append(_mapped(f, c, sub, lines, prefix, where))
    return out


class _Offsets:
    """Offsets of the embedded text -> offsets of the definition, line by line, where the
    embedded line is the end of its definition line (a crontab command, a ``run: |`` block
    less its indentation, a ``RUN`` line); None where a line does not map so."""

    def __init__(
        self, starts: list[int], c: Command, sub: list[str], lines: list[str], prefix: int
    ):
        self.sub_starts = [0]
        for ln in sub:
            self.sub_starts.append(self.sub_starts[-1] + len(ln) + 1)
        self.shift: dict[int, int] = {}  # embedded line index -> definition offset of col 0
        for k, sl in enumerate(sub):
            if k < prefix:
                continue
            no = c.line + k - prefix  # 1-based definition line
            if no > len(lines):
                break
            dl = lines[no - 1].rstrip("\r")
            if sl and _gha_free(sl) and dl.endswith(sl):
                self.shift[k] = starts[no - 1] + len(dl) - len(sl)
            elif not sl:
                self.shift[k] = starts[no - 1] + len(dl)

    def map(self, offset: int) -> int | None:
        import bisect

        k = bisect.bisect_right(self.sub_starts, offset) - 1
        base = self.shift.get(k)
        return None if base is None else base + offset - self.sub_starts[k]


def _gha_free(line: str) -> bool:
    return "${" + "X" not in line  # a `${{ }}` masked as `${XXX}`: the text differs there


def _fix(fix: Fix | None, where: _Offsets) -> Fix | None:
    """The fix with its edits moved into the definition; None when an edit falls where the
    embedded text is not the definition's text."""
    if fix is None:
        return None
    edits = []
    for e in fix.edits:
        start, end = where.map(e.start), where.map(e.end)
        if start is None or end is None or "\n" in e.content:
            return None
        edits.append(Edit(start, end, e.content))
    return Fix(fix.applicability, fix.message, tuple(edits))


def _col(c: Command, sub_line: str, def_line: str, col: int, first: bool) -> int:
    body = sub_line.lstrip()
    at = def_line.find(body) if body else -1
    if at < 0:
        return c.col + col - 1 if first else col
    return at - (len(sub_line) - len(body)) + col


def _mapped(
    f: Finding, c: Command, sub: list[str], lines: list[str], prefix: int, at: _Offsets
) -> Finding:
    def where(line: int, col: int) -> tuple[int, int]:
        k = max(line - prefix, 1)
        def_no = c.line + k - 1
        def_line = lines[def_no - 1] if def_no <= len(lines) else ""
        sub_line = sub[line - 1] if line - 1 < len(sub) else ""
        return def_no, _col(c, sub_line, def_line, col, k == 1)

    line, col = where(f.span.line, f.span.col)
    end_line, end_col = where(f.span.end_line, f.span.end_col)
    start, end = at.map(f.span.start), at.map(f.span.end)
    span = Span(line, col, end_line, end_col, -1 if start is None else start, end or -1)
    return replace(f, span=span, fix=_fix(f.fix, at), suggestion=_fix(f.suggestion, at))
