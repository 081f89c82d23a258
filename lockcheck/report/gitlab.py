"""``gitlab``: a GitLab Code Quality report."""

from __future__ import annotations

from ..baseline import fingerprint, stable_keys
from ..model import Finding
from . import ReportContext, json_text

SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render(findings: list[Finding], ctx: ReportContext) -> str:
    keys = stable_keys(
        findings, lambda f: ctx.line(f.path, f.span.line), lambda f: ctx.relpath(f.path)
    )
    out = []
    for f, key in zip(findings, keys, strict=True):
        out.append(
            {
                "check_name": f.code,
                "description": f"({f.code}) {f.message}",
                "fingerprint": fingerprint(key),
                "location": {
                    "lines": {"begin": f.span.line, "end": f.span.end_line},
                    "path": ctx.relpath(f.path),
                },
                "severity": SEVERITY[f.severity.value],
            }
        )
    return json_text(out, indent=2) + "\n"
