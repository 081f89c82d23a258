"""``junit``: JUnit XML, one testsuite per file and one testcase per finding (ruff's shape)."""

from __future__ import annotations

import os
from itertools import groupby
from xml.sax.saxutils import escape, quoteattr

from ..model import Finding
from . import ReportContext, printable, valid_utf8


def render(findings: list[Finding], ctx: ReportContext) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    n = len(findings)
    tests = n or 1  # an empty report holds one passing "No errors found" test case
    out.append(f'<testsuites name="lockcheck" tests="{tests}" failures="{n}" errors="0">')
    if not findings:
        out.append(
            '    <testsuite name="lockcheck" tests="1" disabled="0" errors="0" failures="0" package="org.lockcheck">'
        )
        out.append('        <testcase name="No errors found" classname="lockcheck"/>')
        out.append("    </testsuite>")
    for raw_path, group in groupby(findings, key=lambda f: f.path):
        items = list(group)
        path = printable(raw_path)  # XML 1.0 cannot hold control characters at all
        k = len(items)
        out.append(
            f'    <testsuite name={quoteattr(path)} tests="{k}" disabled="0" errors="0" '
            f'failures="{k}" package="org.lockcheck">'
        )
        classname = os.path.splitext(path)[0].replace("/", ".").replace(os.sep, ".")
        for f in items:
            sp = f.span
            out.append(
                f'        <testcase name="org.lockcheck.{f.code}" classname={quoteattr(classname)} '
                f'line="{sp.line}" column="{sp.col}">'
            )
            message = printable(f.message, keep_newlines=True)
            out.append(
                f"            <failure message={quoteattr(message)}>"
                f"line {sp.line}, col {sp.col}, {escape(message)}</failure>"
            )
            out.append("        </testcase>")
        out.append("    </testsuite>")
    out.append("</testsuites>")
    return valid_utf8("\n".join(out) + "\n")
