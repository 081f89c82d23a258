"""``concise``: ``path:line:col: CODE [*] message``, one finding per line."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext
from .full import Style, header


def render(findings: list[Finding], ctx: ReportContext) -> str:
    s = Style(ctx.color)
    return "".join(header(f, s, ctx) + "\n" for f in findings)
