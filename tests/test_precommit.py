"""The pre-commit hook (.pre-commit-hooks.yaml), run by the real pre-commit in throw-away git
repositories: `pre-commit try-repo` on this checkout, and a `.pre-commit-config.yaml` pointing
at it with `pre-commit run --all-files` over many scripts (passed to the hook in batches).

pre-commit builds the hook's virtualenv from this repository (dependencies from the package
index); PRE_COMMIT_HOME is one temporary directory for the whole session, so that happens once
per repository state.  `try-repo` on a checkout with uncommitted changes commits them into a
temporary shadow repository first (pre-commit's documented behaviour), so the test exercises
the working tree; in CI the clone is clean and both tests share one hook environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BAD = """\
#!/bin/bash
# cron: */10 * * * *  jobs/{name}
exec 9<>"${{XDG_RUNTIME_DIR:-/run/user/$(id -u)}}/{name}.lock" || exit 3
flock -n 9 || exit 0
/opt/jobs/bin/{name}
"""

GOOD = """\
#!/bin/bash
# cron: 0 * * * *  jobs/{name}
exec 9<>"${{XDG_RUNTIME_DIR:-/run/user/$(id -u)}}/{name}.lock" || exit 3
if ! flock -n 9; then
    echo "$(date -Is) {name} skipped" >> "$HOME/.local/state/jobs.log"
    exit 75
fi
/opt/jobs/bin/{name}
"""


@pytest.fixture(scope="session")
def pc_env(tmp_path_factory):
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(tmp_path_factory.mktemp("pre-commit-home"))
    env["NO_COLOR"] = "1"
    env.pop("LOCKCHECK_OUTPUT_FORMAT", None)
    env.setdefault("GIT_AUTHOR_NAME", "lockcheck tests")
    env.setdefault("GIT_AUTHOR_EMAIL", "tests@example.invalid")
    env.setdefault("GIT_COMMITTER_NAME", "lockcheck tests")
    env.setdefault("GIT_COMMITTER_EMAIL", "tests@example.invalid")
    return env


def _git(cwd: Path, *args: str, env: dict) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def _repo(path: Path, files: dict[str, str], env: dict) -> Path:
    path.mkdir()
    _git(path, "init", "-q", env=env)
    for rel, text in files.items():
        p = path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        if text.startswith("#!"):
            p.chmod(0o755)
    _git(path, "add", "-A", env=env)
    _git(path, "commit", "-q", "-m", "jobs", env=env)
    return path


def _pre_commit(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_try_repo_fails_on_the_bad_script_only(tmp_path, pc_env):
    repo = _repo(
        tmp_path / "project",
        {
            "jobs/fetch-mail.sh": BAD.format(name="fetch-mail"),
            "jobs/mirror.sh": GOOD.format(name="mirror"),
        },
        pc_env,
    )
    proc = _pre_commit(
        repo,
        pc_env,
        "try-repo",
        str(ROOT),
        "lockcheck",
        "--files",
        "jobs/fetch-mail.sh",
        "jobs/mirror.sh",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"^lockcheck\.+Failed$", proc.stdout, re.M), out
    assert "- exit code: 1" in proc.stdout
    # readable: ruff-style location, code and message, no traceback
    assert re.search(r"^jobs/fetch-mail\.sh:4:\d+: LCK401 ", proc.stdout, re.M), out
    assert "jobs/mirror.sh:" not in proc.stdout
    assert "Traceback" not in out

    proc = _pre_commit(
        repo, pc_env, "try-repo", str(ROOT), "lockcheck", "--files", "jobs/mirror.sh"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^lockcheck\.+Passed$", proc.stdout, re.M), proc.stdout


def test_config_run_all_files_in_batches(tmp_path, pc_env):
    head = _git(ROOT, "rev-parse", "HEAD", env=pc_env).strip()
    files: dict[str, str] = {}
    bad, good = [], []
    for i in range(60):
        name = f"job-{i:02d}"
        if i % 3 == 0:
            files[f"jobs/{name}.sh"] = BAD.format(name=name)
            bad.append(f"jobs/{name}.sh")
        else:
            files[f"jobs/{name}.sh"] = GOOD.format(name=name)
            good.append(f"jobs/{name}.sh")
    # an executable without extension is a shell script by its shebang
    files["bin/nightly-sync"] = BAD.format(name="nightly-sync")
    bad.append("bin/nightly-sync")
    # files the hook must not be given
    files["README.md"] = "# jobs\n\n`flock -n 9 || exit 0` is what we used to do.\n"
    files["data/orders.csv"] = "id,total\n1,9.99\n"
    files[".pre-commit-config.yaml"] = (
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: lockcheck\n"
    )
    repo = _repo(tmp_path / "many", files, pc_env)

    proc = _pre_commit(repo, pc_env, "run", "--all-files")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"^lockcheck\.+Failed$", proc.stdout, re.M), out
    assert "Traceback" not in out
    flagged = set(re.findall(r"^(\S+):\d+:\d+: LCK401 ", proc.stdout, re.M))
    assert flagged == set(bad), out
    assert not any(g + ":" in proc.stdout for g in good)
    assert "README.md" not in proc.stdout and "orders.csv" not in proc.stdout
    # pre-commit split the file list over several lockcheck processes (one summary each);
    # every bad file is reported exactly once across them
    summaries = re.findall(r"^Found \d+ findings? \(", proc.stdout, re.M)
    if (os.cpu_count() or 1) > 1:
        assert len(summaries) >= 2, out
    for b in bad:
        assert len(re.findall(rf"^{re.escape(b)}:\d+:\d+: ", proc.stdout, re.M)) == 1
