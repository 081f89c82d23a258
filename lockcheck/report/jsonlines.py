"""``json-lines``: one ``json`` object per line."""

from __future__ import annotations

import json

from ..model import Finding
from . import ReportContext
from .jsonfmt import finding_json


def render(findings: list[Finding], ctx: ReportContext) -> str:
    return "".join(
        json.dumps(finding_json(f, ctx), ensure_ascii=False, sort_keys=True) + "\n"
        for f in findings
    )
