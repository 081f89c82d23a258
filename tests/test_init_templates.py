"""``lockcheck init`` templates: they lint clean, and they really exclude under concurrency."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import installed_tool

from lockcheck.engine import analyze_text
from lockcheck.fix.templates import render_init
from lockcheck.settings import Settings

FLOCK = shutil.which("flock")
needs_flock = pytest.mark.skipif(FLOCK is None, reason="util-linux flock not installed")

# The wrapped command: detects a second copy inside with an atomic mkdir of a guard dir.
WORK = """#!/bin/sh
if mkdir "$GUARD_DIR/guard" 2>/dev/null; then
    sleep "${WORK_SECONDS:-0.03}"
    rmdir "$GUARD_DIR/guard"
else
    echo OVERLAP >>"$GUARD_DIR/overlap.log"
fi
exit "${WORK_STATUS:-0}"
"""


@pytest.fixture
def setup(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    guard = tmp_path / "g"
    guard.mkdir()
    work = tmp_path / "work.sh"
    work.write_text(WORK)
    work.chmod(0o755)
    env = dict(os.environ)
    _root(tmp_path).mkdir(mode=0o700)
    env.pop("XDG_RUNTIME_DIR", None)
    env.update(
        XDG_STATE_HOME=str(run),
        LOCKCHECK_LEDGER=str(tmp_path / "state" / "ledger.log"),
        GUARD_DIR=str(guard),
        HOME=str(tmp_path / "home"),
    )
    env.pop("WORK_STATUS", None)
    return tmp_path, env, work


def _root(tmp_path: Path) -> Path:
    """The first lock root the wrappers try: a private subdirectory of the state home."""
    return tmp_path / "run" / f"lockcheck-{os.getuid()}"


def _write(tmp_path: Path, language: str, slot: str = "nightly-report") -> Path:
    name = "wrap.sh" if language == "shell" else "wrap.py"
    path = tmp_path / name
    path.write_text(render_init(language, slot))
    path.chmod(0o755)
    return path


def _ledger(tmp_path: Path) -> list[list[str]]:
    p = tmp_path / "state" / "ledger.log"
    if not p.exists():
        return []
    return [line.split("\t") for line in p.read_text().splitlines()]


# --------------------------------------------------------------------------- lint clean


@pytest.mark.parametrize("language", ["shell", "python"])
def test_lockcheck_reports_nothing_on_its_own_template(language):
    text = render_init(language, "nightly-report")
    path = "wrap.sh" if language == "shell" else "wrap.py"
    facts, findings = analyze_text(path, text, language, Settings(strict=True))
    assert not facts.parse_errors
    assert findings == [], [(f.code, f.span.line, f.message) for f in findings]
    # the template is recognised as a lock (it is not silent because it is not understood)
    assert facts.acquires, "the frontend should see the flock in the template"
    assert all(a.kind.value == "flock" for a in facts.acquires)


def test_shell_template_passes_shellcheck(tmp_path):
    shellcheck = installed_tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed")
    path = _write(tmp_path, "shell")
    proc = subprocess.run([shellcheck, "-s", "bash", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_python_template_compiles():
    compile(render_init("python", "a.b_c-1"), "wrap.py", "exec")


@pytest.mark.parametrize("slot", ["", "../x", "a b", "-rf", "x'y", "a" * 101, "$(id)"])
def test_bad_slot_names_are_refused(slot):
    with pytest.raises(ValueError):
        render_init("shell", slot)


def test_unknown_language_is_refused():
    with pytest.raises(ValueError):
        render_init("perl", "job")


# --------------------------------------------------------------------------- behaviour


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_wrapper_runs_command_and_keeps_its_status(setup, language):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, language)
    env["WORK_STATUS"] = "7"
    proc = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert proc.returncode == 7, proc.stderr
    lock = _root(tmp_path) / "nightly-report.lock"
    assert lock.is_file(), "the lock file lives in the first usable root and is kept"
    events = [row[3] for row in _ledger(tmp_path)]
    assert events == ["acquired", "released status=7"]
    assert not list(_root(tmp_path).glob(".lockcheck-probe.*")), "probe left behind"


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_busy_run_exits_75_and_records_the_skip(setup, language):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, language)
    lock = _root(tmp_path) / "nightly-report.lock"
    lock.touch()
    # another process holds the flock on the same file
    holder = subprocess.Popen([FLOCK, str(lock), "sleep", "5"])
    try:
        for _ in range(100):
            probe = subprocess.run([FLOCK, "-n", str(lock), "true"])
            if probe.returncode != 0:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the holder never took the lock")
        proc = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 75, proc.stderr
    assert [row[3] for row in _ledger(tmp_path)] == ["skipped"]
    assert not (tmp_path / "g" / "overlap.log").exists()
    assert not (tmp_path / "g" / "guard").exists(), "the command must not run when busy"


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_no_args_is_a_usage_error(setup, language):
    tmp_path, env, _work = setup
    wrap = _write(tmp_path, language)
    proc = subprocess.run([str(wrap)], env=env, capture_output=True, text=True)
    assert proc.returncode == 64
    assert "usage" in proc.stderr


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_marked_root_is_skipped_and_next_candidate_used(setup, language):
    """A directory marked as refusing deletion is not used; the wrapper moves on to a private
    subdirectory of the next candidate."""
    tmp_path, env, work = setup
    wrap = _write(tmp_path, language)
    (_root(tmp_path) / ".lockcheck-undeletable").touch()
    home_cache = tmp_path / "home" / ".cache"
    home_cache.mkdir(parents=True)
    proc = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert not (_root(tmp_path) / "nightly-report.lock").exists()
    sub = home_cache / f"lockcheck-{os.getuid()}"
    assert (sub / "nightly-report.lock").is_file()
    assert sub.stat().st_mode & 0o077 == 0, "the private subdirectory is mode 0700"


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_no_usable_root_exits_3(setup, language):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, language)
    (_root(tmp_path) / ".lockcheck-undeletable").touch()
    tmpdir = tmp_path / "tmpdir"
    sub = tmpdir / f"lockcheck-{os.getuid()}"
    sub.mkdir(parents=True, mode=0o700)
    (sub / ".lockcheck-undeletable").touch()
    env["TMPDIR"] = str(tmpdir)  # HOME has no .cache: that candidate is absent
    proc = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert [row[3].split(":")[0] for row in _ledger(tmp_path)] == ["failed"]
    assert not (tmp_path / "g" / "guard").exists()


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_foreign_directory_under_shared_tmp_is_refused(setup, language):
    """A pre-planted symlink where the private subdirectory should be is not followed."""
    tmp_path, env, work = setup
    wrap = _write(tmp_path, language)
    (_root(tmp_path) / ".lockcheck-undeletable").touch()
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmpdir / f"lockcheck-{os.getuid()}").symlink_to(elsewhere)
    env["TMPDIR"] = str(tmpdir)
    proc = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    assert list(elsewhere.iterdir()) == []


# --------------------------------------------------------------------------- concurrency


def _race(cmds: list[list[str]], env: dict) -> list[int]:
    procs = [subprocess.Popen(c, env=env) for c in cmds]
    return [p.wait() for p in procs]


def test_guard_detects_overlap_without_a_lock(setup):
    """Control: the overlap detector works, so zero overlaps below means something."""
    tmp_path, env, work = setup
    env["WORK_SECONDS"] = "0.2"
    for _ in range(3):
        _race([[str(work)], [str(work)]], env)
    assert (tmp_path / "g" / "overlap.log").exists()


@needs_flock
def test_shell_template_excludes_concurrent_copies(setup):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "shell")
    env["WORK_SECONDS"] = "0.02"
    started = time.monotonic()
    statuses: list[int] = []
    for _ in range(100):
        statuses += _race([[str(wrap), str(work)]] * 2, env)
    for _ in range(15):
        statuses += _race([[str(wrap), str(work)]] * 4, env)
    elapsed = time.monotonic() - started
    overlap = tmp_path / "g" / "overlap.log"
    assert not overlap.exists(), overlap.read_text()
    assert set(statuses) <= {0, 75}, statuses
    skipped = [r for r in _ledger(tmp_path) if r[3] == "skipped"]
    acquired = [r for r in _ledger(tmp_path) if r[3] == "acquired"]
    assert statuses.count(75) == len(skipped), "each busy copy exits 75 and records it"
    assert statuses.count(0) == len(acquired)
    assert statuses.count(75) > 0, "copies started together should have collided"
    # probes are per process: none is left behind, and no marker was made by a collision
    names = {p.name for p in _root(tmp_path).iterdir()}
    assert names == {"nightly-report.lock"}, names
    assert elapsed < 60


@needs_flock
def test_python_template_excludes_concurrent_copies(setup):
    tmp_path, env, work = setup
    wrap = _write(tmp_path, "python")
    env["WORK_SECONDS"] = "0.05"
    statuses: list[int] = []
    cmd = [sys.executable, str(wrap), str(work)]
    for _ in range(20):
        statuses += _race([cmd, cmd], env)
    for _ in range(5):
        statuses += _race([cmd] * 4, env)
    assert not (tmp_path / "g" / "overlap.log").exists()
    assert set(statuses) <= {0, 75}, statuses
    skipped = [r for r in _ledger(tmp_path) if r[3] == "skipped"]
    assert statuses.count(75) == len(skipped)
    assert statuses.count(75) > 0
    names = {p.name for p in _root(tmp_path).iterdir()}
    assert names == {"nightly-report.lock"}, names


HOLD = """#!/bin/sh
echo ran >>"$0.log"
: >"$0.started"
n=0
while [ ! -e "$0.release" ] && [ $n -lt 4000 ]; do sleep 0.005; n=$((n+1)); done
"""


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_wrapper_locks_under_env_i_and_excludes_a_second_copy(tmp_path, language):
    """Under cron there is no XDG_RUNTIME_DIR and no /run/user/UID: the wrapper still finds
    a private root (~/.local/state/lockcheck-UID), holds the lock while its command runs, and
    a second copy exits 75 without running the command; once released, a third runs."""
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    work = tmp_path / "hold.sh"
    work.write_text(HOLD)
    work.chmod(0o755)
    wrap = _write(tmp_path, language)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    holder = subprocess.Popen([str(wrap), str(work)], env=env)
    try:
        end = time.monotonic() + 20
        while not Path(f"{work}.started").exists() and holder.poll() is None:
            assert time.monotonic() < end, "the first copy never ran its command"
            time.sleep(0.005)
        assert Path(f"{work}.started").exists(), f"first copy exited {holder.returncode}"
        second = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
        assert second.returncode == 75, second.stderr
        assert Path(f"{work}.log").read_text().count("ran") == 1
    finally:
        Path(f"{work}.release").touch()
        assert holder.wait(timeout=20) == 0
    third = subprocess.run([str(wrap), str(work)], env=env, capture_output=True, text=True)
    assert third.returncode == 0, third.stderr
    assert Path(f"{work}.log").read_text().count("ran") == 2
    assert (home / ".local" / "state" / f"lockcheck-{os.getuid()}").is_dir()


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_manual_run_and_cron_run_lock_the_same_file(tmp_path, language):
    """A run from a login session (XDG_RUNTIME_DIR set) and a cron run (no runtime directory)
    must choose the same lock root, or they never exclude each other."""
    home = tmp_path / "home"
    home.mkdir()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    work = tmp_path / "hold.sh"
    work.write_text(HOLD)
    work.chmod(0o755)
    wrap = _write(tmp_path, language)
    cron = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    manual = dict(cron, XDG_RUNTIME_DIR=str(runtime))
    holder = subprocess.Popen([str(wrap), str(work)], env=manual)
    try:
        end = time.monotonic() + 20
        while not Path(f"{work}.started").exists() and holder.poll() is None:
            assert time.monotonic() < end, "the manual run never ran its command"
            time.sleep(0.005)
        second = subprocess.run([str(wrap), str(work)], env=cron, capture_output=True, text=True)
        assert second.returncode == 75, "the cron run must see the manual run's lock"
    finally:
        Path(f"{work}.release").touch()
        assert holder.wait(timeout=20) == 0
    assert list(runtime.iterdir()) == []
