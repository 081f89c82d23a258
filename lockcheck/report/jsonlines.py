"""``json-lines``: one ``json`` object per line."""

from __future__ import annotations

from ..model import Finding
from . import ReportContext, json_text
from .jsonfmt import finding_json


def render(findings: list[Finding], ctx: ReportContext) -> str:
    return "".join(json_text(finding_json(f, ctx), sort_keys=True) + "\n" for f in findings)
