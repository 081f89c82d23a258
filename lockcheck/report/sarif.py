"""``sarif``: SARIF 2.1.0, one run, every rule in the driver."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from urllib.parse import quote

from ..baseline import fingerprint, stable_keys
from ..model import Finding, Fix
from . import ReportContext, json_text, rule_url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/lockcheck/lockcheck"


@cache
def page_description(code: str) -> str | None:
    """The first paragraph of the rule page (under "What it does" when there is one)."""
    try:
        from ..docs import rule_page

        page = rule_page(code)
    except Exception:  # no page or no docs module: the summary is used
        return None
    paragraphs = re.split(r"\n\s*\n", page)
    after_heading = False
    for i, para in enumerate(paragraphs):
        p = para.strip()
        if re.match(r"^#+\s*what it does", p, re.I):
            after_heading = True
            rest = p.split("\n", 1)
            if len(rest) == 2 and rest[1].strip():
                return " ".join(rest[1].split())
            continue
        if after_heading and p and not p.startswith("#"):
            return " ".join(p.split())
        if i == len(paragraphs) - 1 and not after_heading:
            break
    for para in paragraphs:
        p = para.strip()
        if p and not p.startswith(("#", "Severity:", "```")):
            return " ".join(p.split())
    return None


def _rules(ctx: ReportContext) -> list[dict]:
    from ..checks import RULES

    out = []
    for code in sorted(RULES):
        r = RULES[code]
        full = (page_description(code) if ctx.rule_docs else None) or r.summary
        out.append(
            {
                "id": code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": full},
                "helpUri": rule_url(code),
                "defaultConfiguration": {"level": LEVEL[r.severity.value]},
                "properties": {
                    "severity": r.severity.value,
                    "fix": r.fix.value if r.fix is not None else None,
                },
            }
        )
    return out


def _region(r1: int, c1: int, r2: int, c2: int) -> dict:
    return {"startLine": r1, "startColumn": c1, "endLine": r2, "endColumn": c2}


def artifact(path: str, ctx: ReportContext) -> dict:
    """Relative to %SRCROOT% (the scan root); a file outside it gets an absolute file URI."""
    rel = ctx.relpath(path)
    if rel.startswith("/") or os.path.isabs(rel):
        return {"uri": Path(ctx.abspath(path)).as_uri()}
    return {"uri": quote(rel.encode("utf-8", "surrogateescape")), "uriBaseId": "%SRCROOT%"}


def _fix(f: Finding, fix: Fix, loc: dict, ctx: ReportContext) -> dict:
    replacements = []
    for e in sorted(fix.edits, key=lambda e: (e.start, e.end)):
        (r1, c1), (r2, c2) = ctx.edit_range(f.path, e)
        replacements.append(
            {"deletedRegion": _region(r1, c1, r2, c2), "insertedContent": {"text": e.content}}
        )
    return {
        "description": {"text": f"{fix.message} ({fix.applicability.value})"},
        "artifactChanges": [
            {
                "artifactLocation": loc,
                "replacements": replacements,
            }
        ],
    }


def _root_uri(root: str) -> str:
    return Path(root).resolve().as_uri().rstrip("/") + "/"


def render(findings: list[Finding], ctx: ReportContext) -> str:
    rules = _rules(ctx)
    index = {r["id"]: i for i, r in enumerate(rules)}
    keys = stable_keys(
        findings, lambda f: ctx.line(f.path, f.span.line), lambda f: ctx.relpath(f.path)
    )
    results = []
    for f, key in zip(findings, keys, strict=True):
        loc = artifact(f.path, ctx)
        sp = f.span
        res: dict = {
            "ruleId": f.code,
            "ruleIndex": index.get(f.code, -1),
            "level": LEVEL[f.severity.value],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": loc,
                        "region": _region(sp.line, sp.col, sp.end_line, sp.end_col),
                    }
                }
            ],
            "partialFingerprints": {"lockcheckFingerprint/v1": fingerprint(key)},
        }
        fixes = [_fix(f, fx, loc, ctx) for fx in (f.fix, f.suggestion) if fx is not None]
        if fixes:
            res["fixes"] = fixes
        results.append(res)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "lockcheck",
                        "version": ctx.version,
                        "informationUri": INFO_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _root_uri(ctx.root)}},
                "results": results,
            }
        ],
    }
    return json_text(doc, indent=2) + "\n"
