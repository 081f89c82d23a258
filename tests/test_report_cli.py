"""Machine formats produced by the CLI on real scripts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import validate_sarif

from lockcheck.cli import main

BACKUP = """\
#!/bin/bash
set -euo pipefail
exec 9>"$XDG_RUNTIME_DIR/backup.lock"
flock -n 9 || exit 0
rsync -a /srv/data/ /backup/
"""

SYNC = """\
#!/bin/sh
LOCKDIR="$HOME/Dropbox/jobs/sync.lock"
if ! mkdir "$LOCKDIR" 2>/dev/null; then
  echo "already running"
  exit 1
fi
trap 'rmdir "$LOCKDIR"' EXIT
rclone sync "$HOME/Dropbox/jobs" remote:jobs
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "cron jobs").mkdir()
    (tmp_path / "cron jobs" / "backup.sh").write_text(BACKUP)
    (tmp_path / "sync.sh").write_text(SYNC)
    return tmp_path


def test_sarif_from_cli_validates(cli, tree, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text(BACKUP)
    status, out, err = cli("scan", ".", str(outside), "--output-format", "sarif", "--unsafe-fixes")
    assert status == 1, err
    doc = json.loads(out)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {"uri": "cron%20jobs/backup.sh", "uriBaseId": "%SRCROOT%"} in locs
    assert {"uri": "sync.sh", "uriBaseId": "%SRCROOT%"} in locs
    assert {"uri": outside.resolve().as_uri()} in locs
    fixed = [r for r in run["results"] if r["ruleId"] == "LCK401"]
    assert fixed and all(r["fixes"][0]["artifactChanges"][0]["replacements"] for r in fixed)
    outside.unlink()
    validate_sarif(doc)  # last: skipped with a reason where the schema is absent


def test_json_and_json_lines_from_cli(cli, tree, tmp_path):
    _, out, _ = cli("scan", "--output-format", "json")
    data = json.loads(out)
    assert sorted((d["code"], d["location"]["row"]) for d in data) == [
        ("LCK102", 3),
        ("LCK401", 4),
    ]
    assert {d["filename"] for d in data} == {
        str(tmp_path / "cron jobs" / "backup.sh"),
        str(tmp_path / "sync.sh"),
    }
    _, out, _ = cli("scan", "--output-format", "json-lines")
    assert sorted(json.loads(x)["code"] for x in out.splitlines()) == ["LCK102", "LCK401"]
    _, out, _ = cli("scan", "--output-format", "json", "sync.sh", "--select", "LCK401")
    assert json.loads(out) == []


def test_junit_gitlab_rdjson_from_cli(cli, tree):
    _, out, _ = cli("scan", "--output-format", "junit")
    root = ET.fromstring(out)
    assert root.get("tests") == "2"
    assert sorted(s.get("name") for s in root) == ["cron jobs/backup.sh", "sync.sh"]
    _, out, _ = cli("scan", "--output-format", "gitlab")
    items = json.loads(out)
    assert sorted(i["severity"] for i in items) == ["major", "major"]
    assert len({i["fingerprint"] for i in items}) == 2
    _, out, _ = cli("scan", "--output-format", "rdjson", "--unsafe-fixes")
    doc = json.loads(out)
    assert doc["source"]["name"] == "lockcheck"
    d = next(x for x in doc["diagnostics"] if x["code"]["value"] == "LCK401")
    assert d["suggestions"][0]["text"] == "75"
    _, out, _ = cli("scan", "--output-format", "junit", "sync.sh", "--select", "LCK401")
    empty = ET.fromstring(out)
    assert (empty.get("tests"), empty.get("failures")) == ("1", "0")
    assert [c.get("name") for c in empty.iter("testcase")] == ["No errors found"]


def test_machine_formats_have_no_summary(cli, tree):
    for fmt in ("json", "json-lines", "sarif", "junit", "gitlab", "pylint", "rdjson", "github"):
        _, out, _ = cli("scan", "--output-format", fmt)
        assert "Found 2 errors" not in out, fmt


def test_undecodable_bytes_keep_machine_formats_valid(tmp_path, monkeypatch, capsysbinary):
    monkeypatch.chdir(tmp_path)
    data = b'#!/bin/bash\nexec 9>"$XDG_RUNTIME_DIR/b.lock"\nflock -n 9 || exit 0 # caf\xe9\n'
    (tmp_path / "jobs").mkdir()
    with open(bytes(tmp_path / "jobs") + b"/nightly-\xff.sh", "wb") as fh:
        fh.write(data)

    def run(fmt: str) -> bytes:
        assert main(["scan", "jobs", "--output-format", fmt]) == 1
        return capsysbinary.readouterr().out

    for fmt in ("json", "sarif", "gitlab", "rdjson"):
        assert json.loads(run(fmt).decode("utf-8")), fmt  # valid UTF-8 and valid JSON
    ET.fromstring(run("junit"))
    # human output shows the bytes as they are
    out = run("full")
    assert b"jobs/nightly-\xff.sh:3:15: LCK401" in out and b"caf\xe9" in out


def test_cli_findings_match_the_engine_api(cli, tmp_path):
    """The runner must give exactly what ``engine.analyze_text`` gives (suggestions too)."""
    from lockcheck.engine import analyze_text

    examples = Path(__file__).resolve().parents[1] / "examples"
    scripts = {p.name: p.read_text() for p in sorted(examples.rglob("*.sh"))[:12]}
    scripts["old.sh"] = (
        "#!/bin/bash\nLOCKDIR=/var/lib/report/lock\n"
        'if ! mkdir "$LOCKDIR" 2>/dev/null; then\n  logger -t report busy\n  exit 75\nfi\n'
        "trap 'rmdir \"$LOCKDIR\"' EXIT\ngenerate-report\n"
    )
    scripts["sync.sh"] = SYNC
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    _, out, _ = cli("scan", "--isolated", "--output-format", "json", *scripts)
    got = sorted(
        (
            Path(d["filename"]).name,
            d["code"],
            d["location"]["row"],
            d["location"]["column"],
            bool(d["fix"]),
            bool(d["suggestion"]),
        )
        for d in json.loads(out)
    )
    want = []
    for name, text in scripts.items():
        _, findings = analyze_text(name, text, "shell")
        want += [
            (name, f.code, f.span.line, f.span.col, f.fix is not None, f.suggestion is not None)
            for f in findings
        ]
    assert got == sorted(want)
    assert ("old.sh", "LCK101", 3, 6, False, True) in got
