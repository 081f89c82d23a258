"""Release bookkeeping: the version is written once, and every place a user copies a version
from (the README's pre-commit `rev:` and Action `@` refs, the CHANGELOG's newest release, the
pre-commit hook file's usage comment) names that same version."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import lockcheck

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _newest_release() -> str:
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", CHANGELOG, re.M)
    assert versions, "CHANGELOG.md has no released version"
    return versions[0]


def test_version_is_written_once():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    project = text[text.index("[project]") : text.index("\n[", text.index("[project]"))]
    assert not re.search(r"^version\s*=", project, re.M)  # dynamic, from lockcheck/__init__.py
    assert 'version = { attr = "lockcheck.__version__" }' in text
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "--version"], capture_output=True, text=True
    )
    assert proc.stdout.strip() == f"lockcheck {lockcheck.__version__}"


def test_readme_refs_package_version_and_changelog_agree():
    version = lockcheck.__version__
    revs = re.findall(r"^\s*rev:\s*(\S+)", README, re.M)
    uses = re.findall(r"uses:\s*lockcheck/lockcheck@(\S+)", README)
    assert revs and uses
    assert set(revs) == set(uses) == {f"v{version}"}
    assert _newest_release() == version
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert re.findall(r"rev:\s*(\S+)", hooks) == [f"v{version}"]


def test_changelog_keeps_an_unreleased_section_on_top():
    headings = re.findall(r"^## \[([^\]]+)\]", CHANGELOG, re.M)
    assert headings[0] == "Unreleased"
    assert f"[{_newest_release()}]:" in CHANGELOG  # the compare/release link


def test_contributing_release_steps_name_the_tag():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Releasing") :]
    assert "lockcheck/__init__.py" in section
    assert "CHANGELOG.md" in section
    assert "git tag" in section


def test_readme_console_example_is_the_real_output():
    import os

    block = re.search(r"^```console\n\$ (lockcheck [^\n]+)\n(.*?)^```", README, re.M | re.S)
    cmd, expected = block.group(1).split(), block.group(2)
    proc = subprocess.run(
        [sys.executable, "-m", *cmd],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ, NO_COLOR="1"),
    )
    assert proc.stdout == expected
