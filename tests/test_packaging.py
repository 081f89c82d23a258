"""Packaging: the wheel built from pyproject.toml ships the code, the rule pages (as
``lockcheck.rule_pages``) and the console script; installed into a fresh virtualenv it works
away from the checkout.  Also the README's promises: the two Quickstart commands, the rule
table, the hook and workflow snippets."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

import lockcheck
from lockcheck import docs
from lockcheck.checks import RULES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIST = PYPROJECT["project"]["name"]  # the distribution; the import package is `lockcheck`


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            "build",
            "dist",
            "*.egg-info",
            "__pycache__",
            ".*_cache",
            ".hypothesis",
            "bench",
        ),
    )
    out = base / "dist"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob(f"{DIST.replace('-', '_')}-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in (
        "lockcheck/__init__.py",
        "lockcheck/__main__.py",
        "lockcheck/cli.py",
        "lockcheck/docs.py",
        "lockcheck/engine.py",
        "lockcheck/model.py",
        "lockcheck/paths.py",
        "lockcheck/checks/__init__.py",
        "lockcheck/frontends/__init__.py",
        "lockcheck/report/__init__.py",
        "lockcheck/fix/__init__.py",
        "lockcheck/rule_pages/__init__.py",
    ):
        assert module in names, module
    pages = {
        n.rsplit("/", 1)[1][:-3] for n in names if re.match(r"lockcheck/rule_pages/LCK\d+\.md$", n)
    }
    assert pages == set(RULES)
    # every module of the source tree is shipped (a new subpackage must be listed in
    # pyproject's [tool.setuptools] packages)
    for src in (ROOT / "lockcheck").rglob("*.py"):
        if "__pycache__" not in src.parts:
            assert src.relative_to(ROOT).as_posix() in names, src
    # nothing from the repository's other directories leaks into the wheel
    assert not [n for n in names if n.startswith(("tests/", "examples/", "rules/", "bench/"))]


def test_wheel_metadata(wheel):
    zf = zipfile.ZipFile(wheel)
    meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(zf.read(meta_name))
    assert meta["Name"] == DIST == "joblock-lint"  # `lockcheck` on PyPI is another project
    assert meta["Version"] == lockcheck.__version__  # the one place the version is written
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert meta["Requires-Python"] == ">=3.10"
    requires = " ".join(meta.get_all("Requires-Dist"))
    for dep in ("tree-sitter", "tree-sitter-bash", "libcst", "pathspec"):
        assert dep in requires
    assert "## Quickstart" in meta.get_payload()  # the README is the long description
    ep_name = next(n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt"))
    entry_points = zf.read(ep_name).decode()
    assert re.search(r"^lockcheck = lockcheck\.cli:main$", entry_points, re.M)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel in a fresh virtualenv.  Its dependencies come from the environment running
    the tests (a user's venv, or CI's Python): a path file lists that environment's
    site-packages after the new venv's own, so the wheel's `lockcheck` is the one imported
    (an editable install's import hook there is never run: only a site directory's own path
    files are executed)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(system_site_packages=False, with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site_dir = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(site_dir) / "zz_test_dependencies.pth").write_text("\n".join(deps) + "\n")
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return env_dir


def _run(env_dir: Path, *cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    return subprocess.run(list(cmd), capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_installed_package_reads_its_own_rule_pages(installed, tmp_path):
    py = str(installed / "bin" / "python")
    code = (
        "import importlib.resources as r, lockcheck, lockcheck.docs as d\n"
        "print(lockcheck.__file__)\n"
        "print(r.files('lockcheck.rule_pages'))\n"
        "print(d.summary('LCK201'))\n"
    )
    proc = _run(installed, py, "-c", code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    module_file, pages_dir, summary = proc.stdout.splitlines()
    assert module_file.startswith(str(installed)), module_file
    assert pages_dir.startswith(str(installed)), pages_dir
    assert summary == docs.summary("LCK201")


def test_installed_console_script(installed, tmp_path):
    exe = str(installed / "bin" / "lockcheck")
    proc = _run(installed, exe, "rule", "LCK401", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# LCK401: silent-skip")
    assert "## Use instead" in proc.stdout
    job = tmp_path / "fetch.sh"
    job.write_text(
        "#!/bin/bash\n"
        'exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/fetch.lock"\n'
        "flock -n 9 || exit 0\n"
        "fetchmail --silent\n"
    )
    proc = _run(
        installed, exe, "scan", "--isolated", "--output-format", "concise", ".", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"fetch\.sh:3:\d+: LCK401 ", proc.stdout), proc.stdout
    proc = _run(installed, exe, "--version", cwd=tmp_path)
    assert proc.stdout.strip().endswith(lockcheck.__version__)


# --------------------------------------------------------------------------- pyproject, README


def test_pyproject_ships_rules_as_package():
    tool = PYPROJECT["tool"]["setuptools"]
    assert "lockcheck.rule_pages" in tool["packages"]
    assert tool["package-dir"]["lockcheck.rule_pages"] == "rules"
    assert "*.md" in tool["package-data"]["lockcheck.rule_pages"]
    assert "examples" in PYPROJECT["tool"]["ruff"]["extend-exclude"]
    test_extras = " ".join(PYPROJECT["project"]["optional-dependencies"]["test"])
    for dep in ("pytest", "pre-commit", "check-jsonschema", "jsonschema", "ruff", "pyyaml"):
        assert dep in test_extras.lower()


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert m, title
    return m.group(1)


def test_readme_quickstart_has_exactly_two_one_line_commands():
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", _section("Quickstart"), re.M | re.S)
    commands = [body.strip() for _lang, body in blocks]
    assert len(commands) == 2, commands
    assert all("\n" not in c for c in commands)
    install_scan, install_test = commands
    # each sets up a venv of its own: PEP 668 systems refuse pip into the system Python
    assert install_scan == (
        "python3 -m venv .venv && . .venv/bin/activate && pip install . && "
        "lockcheck scan examples/bad"
    )
    assert install_test == (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"
    )
    assert "PEP 668" in _section("Quickstart")
    # CI runs the same suite: by hand .ci/run makes that venv, in CI it reuses CI's Python
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^    python3 -m venv \.venv$", ci, re.M)
    assert re.search(r'^    export PATH="\$PWD/\.venv/bin:\$PATH"$', ci, re.M)
    assert re.search(r"^python -m pip install -e '\.\[test\]'$", ci, re.M)
    assert re.search(r"^python -m pytest\b", ci, re.M)


def test_readme_quickstart_scan_shows_real_findings():
    """The first Quickstart command's scan, run on this checkout: findings, exit 1."""
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "examples/bad"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, NO_COLOR="1"),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^Found \d+ findings", proc.stdout, re.M), proc.stdout[-500:]


def test_ci_script_is_strict_bash_and_executable():
    path = ROOT / ".ci" / "run"
    text = path.read_text()
    assert os.access(path, os.X_OK)
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    for cmd in ("ruff check .", "ruff format --check ."):
        assert re.search(rf"^{re.escape(cmd)}$", text, re.M)
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0


def test_readme_rule_table_matches_registry():
    rows = re.findall(
        r"^\| \[(LCK\d{3})\]\(rules/(LCK\d{3})\.md\) \| ([\w-]+) \| (\w+) \| ([\w-]+) \|$",
        README,
        re.M,
    )
    assert [r[0] for r in rows] == sorted(RULES)
    for code, link, name, severity, fix in rows:
        rule = RULES[code]
        assert link == code and (ROOT / "rules" / f"{code}.md").is_file()
        assert (name, severity) == (rule.name, rule.severity.value)
        assert fix == (rule.fix.value if rule.fix else "-")


def test_readme_snippets_are_valid(tmp_path):
    yamls = re.findall(r"^```yaml\n(.*?)^```", README, re.M | re.S)
    hook_cfg = next(yaml.safe_load(y) for y in yamls if "repos:" in y)
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook_cfg["repos"][0]["hooks"][0]["id"] == hooks[0]["id"] == "lockcheck"
    assert hook_cfg["repos"][0]["rev"] == f"v{lockcheck.__version__}"
    workflow_text = next(y for y in yamls if "jobs:" in y)
    workflow = yaml.safe_load(workflow_text)
    step = next(
        s
        for s in workflow["jobs"]["lockcheck"]["steps"]
        if "lockcheck/lockcheck" in s.get("uses", "")
    )
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert set(step["with"]) <= set(action["inputs"])
    upload = next(
        s for s in workflow["jobs"]["lockcheck"]["steps"] if "upload-sarif" in s.get("uses", "")
    )
    assert upload["with"]["sarif_file"] == step["with"]["sarif-file"]
    tmp = tmp_path / "lockcheck.yml"
    tmp.write_text(workflow_text)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(tmp),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the suppression comments the README documents are the ones the engine honours
    for comment in (
        "# noqa: LCK401",
        "# lockcheck: disable=LCK401",
        "# lockcheck: disable-file=LCK401",
    ):
        assert comment in README


def test_readme_configuration_example_is_accepted(tmp_path):
    toml = re.findall(r"^```toml\n(.*?)^```", _section("Configuration"), re.M | re.S)
    assert len(toml) == 1
    (tmp_path / "pyproject.toml").write_text(toml[0])
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "fetch.sh").write_text(
        "#!/bin/bash\n"
        'exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/fetch.lock"\n'
        "flock -n 9 || exit 0\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--output-format", "concise", "jobs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, NO_COLOR="1"),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # read without error, finding kept
    assert "LCK401" in proc.stdout


def test_readme_suppression_example_suppresses():
    from lockcheck.engine import analyze_text

    block = re.findall(r"^```bash\n(.*?)^```", _section("Suppressing findings"), re.M | re.S)[0]
    head = '#!/bin/bash\nexec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/x.lock"\n'
    _facts, findings = analyze_text("jobs/x.sh", head + block, "shell")
    assert not [f for f in findings if f.code == "LCK401"]
    # and without the comments both lines are flagged
    plain = "\n".join(
        line.split("#")[0].rstrip() for line in block.splitlines() if not line.startswith("#")
    )
    _facts, findings = analyze_text("jobs/x.sh", head + plain + "\n", "shell")
    assert len([f for f in findings if f.code == "LCK401"]) == 2
