"""``json``: a list in the shape of ruff's ``--output-format json`` (plus ``name`` and
``severity``)."""

from __future__ import annotations

from ..model import Finding, Fix
from . import ReportContext, json_text, rule_url


def _loc(row: int, col: int) -> dict:
    return {"column": col, "row": row}


def fix_json(f: Finding, fix: Fix | None, ctx: ReportContext) -> dict | None:
    if fix is None:
        return None
    edits = []
    for e in sorted(fix.edits, key=lambda e: (e.start, e.end)):
        (r1, c1), (r2, c2) = ctx.edit_range(f.path, e)
        edits.append({"content": e.content, "end_location": _loc(r2, c2), "location": _loc(r1, c1)})
    return {"applicability": fix.applicability.value, "edits": edits, "message": fix.message}


def finding_json(f: Finding, ctx: ReportContext) -> dict:
    return {
        "cell": None,
        "code": f.code,
        "end_location": _loc(f.span.end_line, f.span.end_col),
        "filename": ctx.abspath(f.path),
        "fix": fix_json(f, f.fix, ctx),
        "location": _loc(f.span.line, f.span.col),
        "message": f.message,
        "name": f.name,
        "noqa_row": f.noqa_row if f.noqa_row is not None else f.span.line,
        "severity": f.severity.value,
        "suggestion": fix_json(f, f.suggestion, ctx),
        "url": rule_url(f.code),
    }


def render(findings: list[Finding], ctx: ReportContext) -> str:
    return json_text([finding_json(f, ctx) for f in findings], indent=2) + "\n"
