"""``--statistics``: counts per code, like ruff (``count code [*] name``)."""

from __future__ import annotations

import json
from collections import Counter

from ..model import Finding
from . import ReportContext


def rows(findings: list[Finding], ctx: ReportContext) -> list[dict]:
    counts: Counter = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    fixable = {f.code for f in findings if ctx.applicable(f)}
    order = sorted(counts, key=lambda c: (-counts[c], c))
    return [
        {"code": c, "name": names[c], "count": counts[c], "fixable": c in fixable} for c in order
    ]


def render(findings: list[Finding], ctx: ReportContext, fmt: str = "full") -> str:
    data = rows(findings, ctx)
    if fmt in ("json", "json-lines"):
        return json.dumps(data, indent=2) + "\n"
    if not data:
        return ""
    width = max(len(str(r["count"])) for r in data)
    any_fix = any(r["fixable"] for r in data)
    out = []
    for r in data:
        mark = ("[*] " if r["fixable"] else "[ ] ") if any_fix else ""
        out.append(f"{r['count']:>{width}}\t{r['code']}\t{mark}{r['name']}\n")
    return "".join(out)
