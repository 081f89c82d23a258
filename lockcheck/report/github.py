"""``github``: GitHub Actions workflow commands (annotations)."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext, printable

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return printable(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(findings: list[Finding], ctx: ReportContext) -> str:
    out = []
    for f in findings:
        sp = f.span
        props = ",".join(
            f"{k}={escape_property(str(v))}"
            for k, v in (
                ("title", f"lockcheck ({f.code})"),
                ("file", f.path),
                ("line", sp.line),
                ("col", sp.col),
                ("endLine", sp.end_line),
                ("endColumn", sp.end_col),
            )
        )
        text = escape_data(f"{f.path}:{sp.line}:{sp.col}: {f.code} {f.message}")
        out.append(f"::{LEVEL[f.severity.value]} {props}::{text}\n")
    return "".join(out)
