"""``rdjson``: reviewdog's diagnostic format (a DiagnosticResult)."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext, json_text, rule_url

SEVERITY = {"error": "ERROR", "warning": "WARNING", "info": "INFO"}


def _pos(row: int, col: int) -> dict:
    return {"column": col, "line": row}


def diagnostic(f: Finding, ctx: ReportContext) -> dict:
    d: dict = {
        "code": {"url": rule_url(f.code), "value": f.code},
        "location": {
            "path": f.path,
            "range": {
                "end": _pos(f.span.end_line, f.span.end_col),
                "start": _pos(f.span.line, f.span.col),
            },
        },
        "message": f.message,
        "severity": SEVERITY[f.severity.value],
    }
    suggestions = []
    for fix in (f.fix, f.suggestion):
        if fix is None:
            continue
        for e in sorted(fix.edits, key=lambda e: (e.start, e.end)):
            (r1, c1), (r2, c2) = ctx.edit_range(f.path, e)
            suggestions.append(
                {"range": {"end": _pos(r2, c2), "start": _pos(r1, c1)}, "text": e.content}
            )
    if suggestions:
        d["suggestions"] = suggestions
    return d


def render(findings: list[Finding], ctx: ReportContext) -> str:
    doc = {
        "diagnostics": [diagnostic(f, ctx) for f in findings],
        "severity": "WARNING",
        "source": {"name": "lockcheck", "url": "https://github.com/lockcheck/lockcheck"},
    }
    return json_text(doc, indent=2) + "\n"
