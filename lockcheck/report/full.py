"""``full``: each finding with its source line, a caret under the span and the fix hint."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext, fix_of, one_line, printable

TAB = 4


class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _w(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def bold(self, t: str) -> str:
        return self._w("1", t)

    def red(self, t: str) -> str:
        return self._w("1;31", t)

    def yellow(self, t: str) -> str:
        return self._w("1;33", t)

    def blue(self, t: str) -> str:
        return self._w("1;34", t)

    def cyan(self, t: str) -> str:
        return self._w("36", t)

    def green(self, t: str) -> str:
        return self._w("32", t)

    def dim(self, t: str) -> str:
        return self._w("2", t)


def _width(ch: str) -> int:
    if ch == "\t":
        return TAB
    if ch != printable(ch):
        return len(printable(ch))
    if ch.isascii():  # printable ASCII: one column (unicodedata is imported for the others)
        return 1
    import unicodedata

    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _display(line: str) -> str:
    return printable(line.replace("\t", " " * TAB))


def _cols(line: str, col: int) -> int:
    """Display width of the first ``col - 1`` characters."""
    return sum(_width(ch) for ch in line[: max(col - 1, 0)])


def severity_style(f: Finding, s: Style):
    """The colour of a finding's severity: error red, warning yellow, info cyan."""
    return {"error": s.red, "warning": s.yellow}.get(f.severity.value, s.cyan)


def header(f: Finding, s: Style, ctx: ReportContext) -> str:
    """``path:line:col: CODE (severity) [*] message``."""
    mark = " [*]" if ctx.applicable(f) else ""
    paint = severity_style(f, s)
    return (
        f"{s.bold(printable(f.path))}{s.cyan(':')}{f.span.line}{s.cyan(':')}{f.span.col}"
        f"{s.cyan(':')} {paint(f.code)} {paint(f'({f.severity.value})')}"
        f"{s.red(mark) if mark else ''} {printable(one_line(f.message))}"
    )


CONTEXT = 2  # lines shown before and after the flagged lines, as ruff does


def snippet(f: Finding, s: Style, ctx: ReportContext) -> list[str]:
    lines = ctx.lines(f.path)
    if lines and lines[-1] == "":
        lines = lines[:-1]  # the empty "line" after the final newline
    row = f.span.line
    if not 1 <= row <= len(lines):
        return []
    last_flagged = min(max(f.span.end_line, row), row + 9, len(lines))
    first = max(1, row - CONTEXT)
    last = min(len(lines), last_flagged + CONTEXT)
    width = len(str(last))
    pad = " " * width
    bar = s.blue("|")
    out = [f"{pad} {bar}"]
    for n in range(first, last + 1):
        text = lines[n - 1]
        out.append(f"{s.blue(str(n).rjust(width))} {bar} {_display(text)}".rstrip())
        if n == row:
            start = _cols(text, f.span.col)
            if f.span.end_line == row and f.span.end_col > f.span.col:
                end = _cols(text, f.span.end_col)
            else:
                end = _cols(text, len(text) + 1)
            paint = severity_style(f, s)
            carets = " " * start + paint("^" * max(end - start, 1) + " " + f.code)
            out.append(f"{pad} {bar} {carets}")
    out.append(f"{pad} {bar}")
    fix = fix_of(f)
    if fix is not None and fix.message:
        kind = "" if f.fix is not None else "suggestion: "
        out.append(f"{pad} = {s.cyan('help')}: {kind}{printable(_sentence(one_line(fix.message)))}")
    elif _rule_help(f.code):  # no fix of its own: the rule's remedy (the page has the why)
        out.append(f"{pad} = {s.cyan('help')}: {printable(_rule_help(f.code))}")
    return out


def _sentence(text: str) -> str:
    """Help lines start with a capital, as ruff's do, whoever wrote the fix's message."""
    return text[:1].upper() + text[1:]


def _rule_help(code: str) -> str:
    from ..checks import RULES

    rule = RULES.get(code)
    return rule.help if rule is not None else ""


def render(findings: list[Finding], ctx: ReportContext) -> str:
    s = Style(ctx.color)
    blocks = []
    for f in findings:
        lines = [header(f, s, ctx)] + snippet(f, s, ctx)
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)
