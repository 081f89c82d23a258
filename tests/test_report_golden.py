"""Every output format against a golden file, built from fixed findings on fixed sources.

Regenerate after an intended change with ``LOCKCHECK_UPDATE_GOLDEN=1 pytest
tests/test_report_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import validate_sarif

from lockcheck.checks import RULES
from lockcheck.model import Applicability, Edit, Finding, Fix, Span
from lockcheck.report import FORMATS, ReportContext, render
from lockcheck.report import statistics as stats

GOLDEN = Path(__file__).parent / "golden"

BACKUP = """\
#!/bin/bash
# 夜間バックアップ
exec 9>"$XDG_RUNTIME_DIR/backup.lock"
\tflock -n 9 || exit 0
rsync -a /srv/data/ /backup/
"""

SYNC = """\
#!/bin/sh
LOCKDIR="$HOME/Dropbox/jobs/sync.lock"
if ! mkdir "$LOCKDIR"; then echo "busy: 100%, retry"; exit 0; fi
"""


def _offset(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1


def _span(text: str, line: int, col: int, end_col: int) -> Span:
    return Span(line, col, line, end_col, _offset(text, line, col), _offset(text, line, end_col))


def _finding(code: str, path: str, span: Span, message: str, **kw) -> Finding:
    r = RULES[code]
    return Finding(code, r.name, r.severity, message, path, span, **kw)


def sample() -> tuple[list[Finding], dict[str, str]]:
    b, s = "jobs/backup.sh", "jobs/sync.sh"
    exit_at = _span(BACKUP, 4, 16, 22)
    zero = _offset(BACKUP, 4, 21)
    mk = _span(SYNC, 3, 6, 22)
    findings = [
        _finding(
            "LCK401",
            b,
            exit_at,
            "the busy run ends with status 0 and records nothing",
            fix=Fix(
                Applicability.UNSAFE,
                "Exit with 75 when the lock is busy",
                (Edit(zero, zero + 1, "75"),),
            ),
        ),
        _finding(
            "LCK102",
            s,
            mk,
            "`mkdir` lock on `~/Dropbox/jobs/sync.lock` sits in a synced folder",
            suggestion=Fix(
                Applicability.SUGGESTION,
                "Hold a flock instead",
                (Edit(mk.start, mk.end, 'exec 9>"$LOCKDIR"; ! flock -n 9'),),
            ),
        ),
        _finding("LCK402", s, _span(SYNC, 3, 55, 61), "busy: exits 0, a, b: 100%\nsecond line"),
        _finding("LCK501", b, _span(BACKUP, 2, 3, 10), "lock beside the script"),
    ]
    return findings, {b: BACKUP, s: SYNC}


def context(**kw) -> ReportContext:
    findings, sources = sample()
    return ReportContext(
        root="/project", sources=sources, version="0.0.0-golden", rule_docs=False, **kw
    )


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("LOCKCHECK_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with LOCKCHECK_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_format_matches_golden(fmt):
    findings, _ = sample()
    check_golden(f"{fmt}.txt", render(fmt, findings, context()))


def test_statistics_golden():
    findings, _ = sample()
    ctx = context(unsafe_fixes=True)
    check_golden("statistics.txt", stats.render(findings, ctx))


def test_full_marks_applicable_fixes_only_with_unsafe_fixes():
    findings, _ = sample()
    assert "LCK401 (error) [*]" not in render("concise", findings, context())
    assert "LCK401 (error) [*]" in render("concise", findings, context(unsafe_fixes=True))


def test_full_caret_and_severity_take_the_severity_colour():
    findings, _ = sample()
    ctx = context()
    ctx.color = True
    text = render("full", findings, ctx)
    red, yellow, cyan = "\x1b[1;31m", "\x1b[1;33m", "\x1b[36m"
    assert f"{red}(error)\x1b[0m" in text and f"{yellow}(warning)\x1b[0m" in text
    assert f"{cyan}(info)\x1b[0m" in text
    carets = [ln for ln in text.splitlines() if "^" in ln]
    assert any(f"{yellow}^" in ln and ln.endswith("LCK501\x1b[0m") for ln in carets), carets
    assert any(f"{red}^" in ln and ln.endswith("LCK401\x1b[0m") for ln in carets), carets


def test_full_caret_accounts_for_tabs_and_wide_characters():
    findings, _ = sample()
    lines = render("full", findings, context()).splitlines()
    pairs = list(zip(lines, lines[1:], strict=False))
    assert ("4 |     flock -n 9 || exit 0", "  |                   ^^^^^^ LCK401") in pairs
    assert ("2 | # 夜間バックアップ", "  |   ^^^^^^^^^^^^^^ LCK501") in pairs


def test_json_shape_is_ruffs():
    findings, _ = sample()
    data = json.loads(render("json", findings, context()))
    first = data[0]
    assert set(first) >= {
        "cell",
        "code",
        "end_location",
        "filename",
        "fix",
        "location",
        "message",
        "noqa_row",
        "url",
        "name",
        "severity",
    }
    fix = next(d for d in data if d["code"] == "LCK401")["fix"]
    assert fix == {
        "applicability": "unsafe",
        "edits": [
            {
                "content": "75",
                "end_location": {"column": 22, "row": 4},
                "location": {"column": 21, "row": 4},
            }
        ],
        "message": "Exit with 75 when the lock is busy",
    }
    assert first["filename"] == "/project/jobs/backup.sh"
    lines = render("json-lines", findings, context()).splitlines()
    assert [json.loads(x) for x in lines] == data


def test_github_escaping():
    findings, _ = sample()
    out = render("github", findings, context())
    line = next(x for x in out.splitlines() if "LCK402" in x)
    assert line == (
        "::notice title=lockcheck (LCK402),file=jobs/sync.sh,line=3,col=55,endLine=3,"
        "endColumn=61::jobs/sync.sh:3:55: LCK402 busy: exits 0, a, b: 100%25%0Asecond line"
    )


def test_sarif_is_valid_and_fingerprints_ignore_line_moves():
    findings, sources = sample()
    doc = json.loads(render("sarif", findings, context()))
    run = doc["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == sorted(RULES)
    for res in run["results"]:
        assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
    # move every line of backup.sh down by two: fingerprints stay
    moved_text = "#!/bin/bash\n\n\n" + BACKUP.split("\n", 1)[1]
    moved = []
    for f in findings:
        if f.path == "jobs/backup.sh":
            sp = f.span
            f = Finding(
                f.code,
                f.name,
                f.severity,
                f.message,
                f.path,
                Span(sp.line + 2, sp.col, sp.end_line + 2, sp.end_col, sp.start + 2, sp.end + 2),
                fix=None,
            )
        moved.append(f)
    ctx = ReportContext(
        root="/project",
        sources={**sources, "jobs/backup.sh": moved_text},
        version="x",
        rule_docs=False,
    )
    doc2 = json.loads(render("sarif", moved, ctx))

    def prints(d):
        return sorted(
            (r["ruleId"], r["partialFingerprints"]["lockcheckFingerprint/v1"])
            for r in d["runs"][0]["results"]
        )

    assert prints(doc) == prints(doc2)
    lines = {
        r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in doc2["runs"][0]["results"]
    }
    assert lines["LCK401"] == 6
    validate_sarif(doc)  # last: skipped with a reason where the schema is absent


def test_sarif_uses_rule_page_descriptions_when_available():
    findings, _ = sample()
    ctx = ReportContext(root="/project", sources=sample()[1], version="x", rule_docs=True)
    doc = json.loads(render("sarif", findings, ctx))
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    from lockcheck.docs import rule_page

    page = rule_page("LCK101")
    full = rules["LCK101"]["fullDescription"]["text"]
    assert full != RULES["LCK101"].summary
    assert full in " ".join(page.split()) and not full.startswith("#")
    # a rule without a page falls back to the summary
    missing = [c for c in RULES if not _has_page(c)]
    for code in missing:
        assert rules[code]["fullDescription"]["text"] == RULES[code].summary


def _has_page(code: str) -> bool:
    from lockcheck.docs import rule_page

    try:
        rule_page(code)
    except KeyError:
        return False
    return True
