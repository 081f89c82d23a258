"""action.yml, the composite GitHub Action: valid against GitHub's schema, and its shell steps
run locally the way the runner runs them (expressions substituted, `bash --noprofile --norc
-eo pipefail`), installing lockcheck from a copy of this checkout into a throw-away
virtualenv."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml
from helpers import validate_sarif

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
EXPR = re.compile(r"\$\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")

BAD_SCRIPT = """\
#!/bin/bash
# cron: */10 * * * *  scripts/fetch-mail.sh
exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/fetch-mail.lock" || exit 3
flock -n 9 || exit 0
fetchmail --silent
"""

GOOD_SCRIPT = """\
#!/bin/bash
# cron: 0 * * * *  scripts/mirror.sh
exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/mirror.lock" || exit 3
if ! flock -n 9; then
    echo "$(date -Is) mirror skipped" >> /var/log/mirror.log
    exit 75
fi
rsync -a rsync://mirror.example.org/pub/ /srv/mirror/pub/
"""


def _action() -> dict:
    return yaml.safe_load(ACTION.read_text(encoding="utf-8"))


def test_action_validates_against_github_schema():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-actions",
            str(ACTION),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_shape():
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert set(inputs) == {"version", "paths", "args", "sarif", "sarif-file"}
    assert inputs["version"]["default"] == ""
    assert inputs["paths"]["default"] == "."
    assert inputs["sarif"]["default"] == ""
    assert inputs["sarif-file"]["default"]
    cache = [s for s in action["runs"]["steps"] if "uses" in s]
    assert [s["uses"] for s in cache] == ["actions/cache@v4"]  # pip's downloads
    assert cache[0]["with"]["path"] == "~/.cache/pip"
    for step in action["runs"]["steps"]:
        if "uses" in step:
            continue
        assert step["shell"] == "bash"
        # inputs reach the scripts through the environment, never spliced into the script
        # text (where a crafted input would be code)
        assert "${{" not in step["run"], step["name"]


def _substitute(text: str, inputs: dict[str, str], action_path: Path) -> str:
    def value(m: re.Match) -> str:
        expr = m.group(1)
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs.") :]]
        if expr == "github.action_path":
            return str(action_path)
        raise AssertionError(f"unexpected expression {expr} in action.yml")

    return EXPR.sub(value, text)


def _inputs(**overrides: str) -> dict[str, str]:
    values = {name: spec.get("default", "") for name, spec in _action()["inputs"].items()}
    values.update({k.replace("_", "-"): v for k, v in overrides.items()})
    return values


def _run_step(name: str, inputs: dict, env: dict, cwd: Path, action_path: Path):
    step = next(s for s in _action()["runs"]["steps"] if s["name"] == name)
    step_env = {k: _substitute(str(v), inputs, action_path) for k, v in step.get("env", {}).items()}
    script = cwd.parent / f"step-{name.replace(' ', '-')}.sh"
    script.write_text(_substitute(step["run"], inputs, action_path), encoding="utf-8")
    output = cwd.parent / "github_output"
    output.write_text("")
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env={**env, **step_env, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc, outputs


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    """A copy of the action's checkout, a virtualenv standing in for the runner's Python, and
    the install step run once."""
    base = tmp_path_factory.mktemp("action")
    action_path = base / "action-checkout"
    shutil.copytree(
        ROOT,
        action_path,
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
    env_dir = base / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=True).create(env_dir)
    # the runner's Python has lockcheck's dependencies: those of the environment running the
    # tests, listed after the venv's own site-packages (see tests/test_packaging.py)
    site_dir = subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    (Path(site_dir) / "zz_test_dependencies.pth").write_text("\n".join(deps) + "\n")
    env = dict(os.environ)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env.pop("PYTHONPATH", None)
    env.pop("LOCKCHECK_OUTPUT_FORMAT", None)
    env["NO_COLOR"] = "1"
    workspace = base / "workspace"
    workspace.mkdir()
    proc, _ = _run_step("Install lockcheck", _inputs(), env, workspace, action_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lockcheck" in proc.stdout  # the step prints the installed version
    where = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import lockcheck; print(lockcheck.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=base,
    )
    assert str(env_dir) in where.stdout, "lockcheck was not installed into the runner's Python"
    return {"env": env, "action_path": action_path, "base": base}


def _workspace(runner, name: str, files: dict[str, str]) -> Path:
    ws = runner["base"] / name
    for rel, text in files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        p.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def test_scan_step_annotates_fails_and_writes_sarif(runner):
    ws = _workspace(
        runner, "ws-bad", {"scripts/fetch-mail.sh": BAD_SCRIPT, "scripts/mirror.sh": GOOD_SCRIPT}
    )
    inputs = _inputs(sarif="true", sarif_file="results/lockcheck.sarif")
    (ws / "results").mkdir()
    proc, outputs = _run_step("Run lockcheck", inputs, runner["env"], ws, runner["action_path"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert annotations, proc.stdout
    assert any(
        line.startswith("::error title=lockcheck (LCK401),file=scripts/fetch-mail.sh,line=4,")
        for line in annotations
    ), annotations
    assert not any("mirror.sh" in line for line in annotations), annotations
    assert outputs["exit-code"] == "1"
    assert outputs["sarif-file"] == "results/lockcheck.sarif"
    sarif = json.loads((ws / "results" / "lockcheck.sarif").read_text(encoding="utf-8"))
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["LCK401"]
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("scripts/fetch-mail.sh")
    validate_sarif(sarif)  # last: skipped with a reason where the schema is absent


def test_scan_step_passes_on_clean_paths_and_honours_args(runner):
    ws = _workspace(
        runner, "ws-args", {"jobs/fetch-mail.sh": BAD_SCRIPT, "jobs/mirror.sh": GOOD_SCRIPT}
    )
    # only the good script: clean, exit 0, SARIF off by default
    proc, outputs = _run_step(
        "Run lockcheck", _inputs(paths="jobs/mirror.sh"), runner["env"], ws, runner["action_path"]
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert outputs["sarif-file"] == ""
    assert not list(ws.glob("*.sarif"))
    # extra args reach lockcheck: ignoring the only finding makes the bad script pass
    proc, _ = _run_step(
        "Run lockcheck", _inputs(args="--ignore LCK401"), runner["env"], ws, runner["action_path"]
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # several paths separated by spaces
    proc, outputs = _run_step(
        "Run lockcheck",
        _inputs(paths="jobs/mirror.sh jobs/fetch-mail.sh", args="--fail-on error"),
        runner["env"],
        ws,
        runner["action_path"],
    )
    assert proc.returncode == 1
    assert "file=jobs/fetch-mail.sh" in proc.stdout
    assert outputs["exit-code"] == "1"


def test_version_input_installs_that_release_from_the_index(runner, tmp_path):
    """With `version`, the install step asks pip for exactly that release (checked with a fake
    pip that records its arguments, not against PyPI)."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    log = tmp_path / "pip-args"
    fake = fake_bin / "python3"
    fake.write_text(
        "#!/bin/bash\n"
        f'if [ "$1 $2 $3" = "-I -m pip" ]; then printf "%s\\n" "$@" > {log}; exit 0; fi\n'
        'echo "lockcheck 9.9.9"\n'
    )
    fake.chmod(0o755)
    env = dict(runner["env"], PATH=f"{fake_bin}{os.pathsep}{runner['env']['PATH']}")
    ws = tmp_path / "ws"
    ws.mkdir()
    proc, _ = _run_step("Install lockcheck", _inputs(version="v0.2.0"), env, ws, ROOT)
    assert proc.returncode == 0, proc.stderr
    args = log.read_text().split("\n")
    assert "joblock-lint==0.2.0" in args  # the distribution's name: `lockcheck` is another's
    assert str(ROOT) not in args


def test_one_scan_writes_annotations_and_sarif_with_the_same_findings(runner):
    ws = _workspace(runner, "ws-one", {"jobs/fetch-mail.sh": BAD_SCRIPT})
    proc, outputs = _run_step(
        "Run lockcheck", _inputs(sarif="true"), runner["env"], ws, runner["action_path"]
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    annotated = re.findall(
        r"^::\w+ title=lockcheck \((LCK\d+)\),file=([^,]+),line=(\d+)", proc.stdout, re.M
    )
    sarif = json.loads((ws / "lockcheck.sarif").read_text(encoding="utf-8"))
    results = [
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            str(r["locations"][0]["physicalLocation"]["region"]["startLine"]),
        )
        for r in sarif["runs"][0]["results"]
    ]
    assert annotated == results == [("LCK401", "jobs/fetch-mail.sh", "4")]
    assert outputs["sarif-file"] == "lockcheck.sarif"
    # a usage error writes no SARIF, and the output says so (the upload step is skipped)
    (ws / "lockcheck.sarif").unlink()
    proc, outputs = _run_step(
        "Run lockcheck",
        _inputs(sarif="true", args="--select NOPE"),
        runner["env"],
        ws,
        runner["action_path"],
    )
    assert proc.returncode == 2 and outputs["sarif-file"] == "", proc.stderr
    assert not (ws / "lockcheck.sarif").exists()


def test_inputs_with_quoted_arguments_are_split_like_a_shell_never_evaluated(runner, tmp_path):
    marker = tmp_path / "evaluated"
    ws = _workspace(
        runner,
        "ws-quoted",
        {"cron jobs/fetch-mail.sh": BAD_SCRIPT, "legacy jobs/old.sh": BAD_SCRIPT},
    )
    proc, _ = _run_step(
        "Run lockcheck",
        _inputs(
            paths="'cron jobs' \"legacy jobs\" $(touch " + str(marker) + ")",
            args="--exclude 'legacy jobs/**' --force-exclude",
        ),
        runner["env"],
        ws,
        runner["action_path"],
    )
    # the `$(...)` words reach lockcheck as (missing) paths: nothing was run
    assert not marker.exists()
    assert "file=cron jobs/fetch-mail.sh" in proc.stdout, proc.stdout + proc.stderr
    assert "legacy jobs" not in proc.stdout
    assert proc.returncode == 2 and "$(touch: No such file or directory" in proc.stderr
    proc, _ = _run_step(
        "Run lockcheck", _inputs(args="--select 'LCK4"), runner["env"], ws, runner["action_path"]
    )
    assert proc.returncode == 2
    assert "lockcheck action: input `args`: No closing quotation" in proc.stderr


def test_a_scanned_repositorys_own_modules_are_never_imported(runner, tmp_path):
    """Issue #9: the scan runs with the repository as working directory; a `pathspec.py` (or
    `pip.py`) there must not be imported, neither by the install step nor by the scan."""
    marker = tmp_path / "imported"
    planted = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    ws = _workspace(
        runner,
        "ws-planted",
        {
            "pathspec.py": planted,
            "pip.py": planted,
            "tree_sitter.py": planted,
            "jobs/fetch-mail.sh": BAD_SCRIPT,
        },
    )
    # the same file is imported by a plain `python -c`/`-m` here: the test can fail
    probe = subprocess.run(
        [str(runner["base"] / "venv" / "bin" / "python"), "-c", "import pathspec"],
        cwd=ws,
        env=runner["env"],
    )
    assert probe.returncode == 0 and marker.exists()
    marker.unlink()
    proc, _ = _run_step("Install lockcheck", _inputs(), runner["env"], ws, runner["action_path"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc, _ = _run_step(
        "Run lockcheck", _inputs(sarif="true"), runner["env"], ws, runner["action_path"]
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "file=jobs/fetch-mail.sh" in proc.stdout
    assert not marker.exists(), marker.read_text()
