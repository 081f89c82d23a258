"""Shell embedded in definitions (crontab command fields, workflow ``run:``, GitLab
``script:``, ``sh -c`` literals of a CronJob) through the shell frontend and the script rules,
with lines and columns mapped back to the definition.  ``${{ }}`` expressions become unknown
variables of the same length.  Findings carry no fix yet: their edits would be offsets into
the embedded text, not the definition."""

from __future__ import annotations

import re
from dataclasses import replace

from ..model import Finding, Span
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
    lines = d.text.split("\n")
    out: list[Finding] = []
    for c in _commands(d):
        if c.shell is None or not c.text.strip():
            continue
        text = _GHA.sub(_unknown, c.text)
        prefix = 0
        if c.shell.endswith("-e"):  # `bash -e`: set -e is in effect
            text, prefix = "set -e\n" + text, 1
        _facts, found = analyze_text(d.path, text, "shell", settings, codes)
        sub = text.split("\n")
        for f in found:
            out.append(_mapped(f, c, sub, lines, prefix))
    return out


def _col(c: Command, sub_line: str, def_line: str, col: int, first: bool) -> int:
    body = sub_line.lstrip()
    at = def_line.find(body) if body else -1
    if at < 0:
        return c.col + col - 1 if first else col
    return at - (len(sub_line) - len(body)) + col


def _mapped(f: Finding, c: Command, sub: list[str], lines: list[str], prefix: int) -> Finding:
    def where(line: int, col: int) -> tuple[int, int]:
        k = max(line - prefix, 1)
        def_no = c.line + k - 1
        def_line = lines[def_no - 1] if def_no <= len(lines) else ""
        sub_line = sub[line - 1] if line - 1 < len(sub) else ""
        return def_no, _col(c, sub_line, def_line, col, k == 1)

    line, col = where(f.span.line, f.span.col)
    end_line, end_col = where(f.span.end_line, f.span.end_col)
    span = Span(line, col, end_line, end_col)
    return replace(f, span=span, fix=None, suggestion=None)
