"""``pylint``: ``path:line: [CODE] message``."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext, one_line, printable


def render(findings: list[Finding], ctx: ReportContext) -> str:
    return "".join(
        f"{printable(f.path)}:{f.span.line}: [{f.code}] {printable(one_line(f.message))}\n"
        for f in findings
    )
