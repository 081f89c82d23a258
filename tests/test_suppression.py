"""Suppression comments, in both languages, through the engine."""

from __future__ import annotations

from lockcheck.engine import analyze_text

JOB = """#!/bin/bash
# nightly export of the orders table
{header}
mkdir /var/lib/export/run.lock || {{ echo "busy"; exit 0; }}{eol}
trap 'rmdir /var/lib/export/run.lock' EXIT
pg_dump orders > /srv/export/orders.sql
"""


def found(text: str, language: str = "shell") -> set[tuple[str, int]]:
    _, findings = analyze_text("job", text, language)
    return {(f.code, f.span.line) for f in findings}


def test_without_comments_both_findings_are_reported():
    assert found(JOB.format(header="", eol="")) == {("LCK101", 4), ("LCK401", 4)}


def test_noqa_with_a_code_suppresses_only_that_code():
    assert found(JOB.format(header="", eol="  # noqa: LCK401")) == {("LCK101", 4)}


def test_noqa_with_several_codes():
    assert found(JOB.format(header="", eol="  # noqa: LCK101, LCK401")) == set()


def test_bare_noqa_suppresses_everything_on_the_line():
    assert found(JOB.format(header="", eol="  # noqa")) == set()


def test_disable_on_the_line_before():
    assert found(JOB.format(header="# lockcheck: disable=LCK101", eol="")) == {("LCK401", 4)}


def test_disable_file_in_the_first_comment_block():
    assert found(JOB.format(header="# lockcheck: disable-file=LCK401", eol="")) == {("LCK101", 4)}


def test_disable_file_after_code_does_not_count():
    text = JOB.format(header="", eol="") + "# lockcheck: disable-file=LCK401\n"
    assert ("LCK401", 4) in found(text)


def test_noqa_inside_a_string_is_not_a_comment():
    text = """#!/bin/bash
mkdir /var/lib/export/run.lock || { echo "skipped # noqa"; exit 0; }
trap 'rmdir /var/lib/export/run.lock' EXIT
pg_dump orders > /srv/export/orders.sql
"""
    assert ("LCK401", 2) in found(text)


def test_python_noqa():
    text = """import os
import sys

LOCK = "/var/lib/export/run.lock"

try:
    os.mkdir(LOCK)
except FileExistsError:
    sys.exit(0)  # noqa: LCK401
try:
    export_orders()
finally:
    os.rmdir(LOCK)
"""
    assert found(text, "python") == {("LCK101", 7)}


def test_directives_in_any_case_and_with_the_characters_re_i_folds():
    # the ASCII comments without "noqa" or "lockcheck" skip the patterns; these must not
    assert found(JOB.format(header="", eol="  # NOQA: lck401")) == {("LCK101", 4)}
    header = "# LockCheck: Disable=LCK101"
    assert found(JOB.format(header=header, eol="")) == {("LCK401", 4)}
    # KELVIN SIGN for k and a dotless i: re.I matches them as "lockcheck: disable"
    header = "# loc\u212acheck: d\u0131sable=LCK101"
    assert found(JOB.format(header=header, eol="")) == {("LCK401", 4)}
