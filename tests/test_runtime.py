"""``lockcheck probe`` and ``lockcheck race``: the run-time checks, through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

FLOCK = shutil.which("flock")
needs_flock = pytest.mark.skipif(FLOCK is None, reason="util-linux flock(1) is not installed")


def lockcheck(*args: str, cwd: Path | None = None, env: dict | None = None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def probe_json(*dirs: str, env: dict | None = None) -> tuple[int, dict]:
    proc = lockcheck("probe", "--output-format", "json", *dirs, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def names_in(d: Path) -> set[str]:
    return {p.name for p in d.iterdir()}


# --------------------------------------------------------------------------- probe


def test_probe_private_directory_is_fit_for_every_lock_and_left_clean(tmp_path: Path):
    d = tmp_path / "private"
    d.mkdir(mode=0o700)
    rc, data = probe_json(str(d))
    assert rc == 0
    (rep,) = data["directories"]
    assert rep["verdict"] == "existence", rep
    assert rep["steps"] == {
        "create": "ok",
        "append": "ok",
        "read": "ok",
        "rename": "ok",
        "flock": "ok",
        "delete": "ok",
        "mkdir": "ok",
        "rmdir": "ok",
    }
    assert rep["flock_excludes"] is True
    assert rep["flock_released_on_kill"] is True
    assert rep["fs_kind"] in ("local", "tmpfs") and rep["fstype"]
    assert not rep["world_writable"] and rep["caveats"] == []
    assert names_in(d) == set(), "the probe must clean up after itself"


def test_probe_world_writable_directory_gets_a_caveat(tmp_path: Path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)
    _, data = probe_json(str(d))
    (rep,) = data["directories"]
    assert rep["world_writable"] and rep["sticky"]
    assert any("pre-create" in c for c in rep["caveats"])


def _append_only(d: Path) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None or os.geteuid() != 0:
        return False
    return subprocess.run([chattr, "+a", str(d)], capture_output=True).returncode == 0


def _undo_append_only(d: Path) -> None:
    subprocess.run([shutil.which("chattr") or "chattr", "-a", str(d)], capture_output=True)


def test_probe_directory_that_refuses_deletion(tmp_path: Path):
    """An append-only directory (chattr +a) accepts create and append but refuses delete and
    rename, as a cloud-synced folder refuses delete: fit for flock, never for existence
    locks, and repeated probes leave one entry, not one per run."""
    d = tmp_path / "appendonly"
    d.mkdir()
    if not _append_only(d):
        pytest.skip("needs root and a filesystem with the append-only attribute (chattr +a)")
    try:
        rc, data = probe_json(str(d))
        (rep,) = data["directories"]
        assert rc == 0
        assert rep["verdict"] == "flock", rep
        assert rep["steps"]["create"] == "ok"
        assert rep["steps"]["delete"].startswith("EPERM")
        assert rep["flock_excludes"] is True and rep["flock_released_on_kill"] is True
        assert any("never be released" in r for r in rep["reasons"])
        left = names_in(d)
        assert len(left) == 1
        for _ in range(3):
            rc, data = probe_json(str(d))
            assert rc == 0 and data["directories"][0]["verdict"] == "flock"
        assert names_in(d) == left, "one entry at most, never one per run"
    finally:
        _undo_append_only(d)


def test_probe_missing_session_runtime_directory(tmp_path: Path):
    """The cron case: no /run/user/UID for this user (or a path like it that is absent)."""
    uid = os.geteuid()
    missing = f"/run/user/{uid}"
    if os.path.exists(missing):
        missing = f"/run/user/{4_000_000_000 - 7}"  # a uid nobody has
    rc, data = probe_json(missing)
    assert rc == 1
    (rep,) = data["directories"]
    assert rep["verdict"] == "unusable" and not rep["exists"]
    assert any("login session" in r for r in rep["reasons"])


def test_probe_defaults_cover_the_usual_candidates(tmp_path: Path):
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp_path),
    }
    rc, data = probe_json(env=env)
    paths = [r["path"] for r in data["directories"]]
    assert paths[:1] == [f"/run/user/{os.geteuid()}"]  # no XDG_RUNTIME_DIR under cron
    assert str(tmp_path) in paths and str(home / ".cache") in paths
    assert str(home / ".local" / "state") in paths
    assert rc == 0  # at least TMPDIR and ~/.cache are fit for flock


def test_probe_text_output_and_exit_status(tmp_path: Path):
    d = tmp_path / "ok"
    d.mkdir()
    proc = lockcheck("probe", str(d), str(tmp_path / "absent"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "safe for flock and existence locks" in lines[0]
    assert any("not usable" in ln for ln in lines) and any("missing" in ln for ln in lines)
    proc = lockcheck("probe", str(tmp_path / "absent"))
    assert proc.returncode == 1
    assert lockcheck("probe", "--output-format", "xml").returncode == 2


def test_probe_never_follows_a_planted_symlink(tmp_path: Path):
    """Entries are created with O_EXCL|O_NOFOLLOW: a planted link at a predictable name is
    never followed, and the file outside stays as it was."""
    d = tmp_path / "d"
    d.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (d / ".lockcheck-undeletable").symlink_to(outside)
    rc, data = probe_json(str(d))
    assert rc == 0 and data["directories"][0]["verdict"] == "existence"
    assert outside.read_text() == "keep\n"
    assert (d / ".lockcheck-undeletable").is_symlink()


# --------------------------------------------------------------------------- race


def race_json(*args: str, cwd: Path) -> tuple[int, dict]:
    proc = lockcheck("race", "--output-format", "json", *args, cwd=cwd, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


GOOD = """#!/bin/bash
exec 9<>"$LOCKDIR/good.lock" || exit 3
flock -n 9 || { echo "busy: skipped" >&2; echo "{ not json"; exit 75; }
"$@"
"""

# Deletes its flock file on exit.  The window is forced, not left to luck: copy 1 opens the
# lock file while copy 0 holds it, then waits; copy 2 starts once copy 1 has the lock (so
# copy 0 has exited and deleted the name), creates a new file and locks that.
DELETES = """#!/bin/bash
d=$LOCKDIR
k=$( { flock 8; c=$(cat "$d/count" 2>/dev/null || echo 0); echo $((c + 1)) >"$d/count"
       echo "$((c / 3)).$((c % 3))"; } 8>"$d/count.lock" )
round=${k%.*} me=${k#*.}
wait_for() { for _ in $(seq 500); do [ -e "$1" ] && return; sleep 0.01; done; }
[ "$me" -gt 0 ] && wait_for "$d/held.$round.$((me - 1))"
exec 9>>"$d/job.lock"
flock -w 20 9 || exit 75
touch "$d/held.$round.$me"
trap 'rm -f "$d/job.lock"' EXIT
"$@"
"""

# Picks its lock root with a fixed probe name: a concurrent run finds the probe taken,
# moves on to the next root, and the two lock different files.  The sleep widens the window.
FIXED_PROBE = """#!/bin/bash
pick() {
    for root in "$LOCKDIR/a" "$LOCKDIR/b"; do
        mkdir -p "$root"
        if mkdir "$root/.probe" 2>/dev/null; then
            sleep 0.3
            rmdir "$root/.probe"
            echo "$root"
            return 0
        fi
    done
    return 1
}
root=$(pick) || exit 3
exec 9>>"$root/job.lock"
flock -n 9 || exit 75
"$@"
"""

SILENT = """#!/bin/bash
exec 9<>"$LOCKDIR/s.lock" || exit 3
flock -n 9 || exit 0
"$@"
"""

NEVER_RUNS = """#!/bin/bash
exec 9<>"/nonexistent-dir/x.lock" 2>/dev/null
flock -n 9 2>/dev/null || exit 75
"$@"
"""


@pytest.fixture
def lockdir(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "locks"
    d.mkdir()
    monkeypatch.setenv("LOCKDIR", str(d))
    return d


@needs_flock
def test_race_correct_wrapper_never_overlaps(tmp_path: Path, lockdir: Path):
    w = script(tmp_path / "good.sh", GOOD)
    rc, rep = race_json("-j", "4", "-n", "25", "--", str(w), cwd=tmp_path)
    assert rc == 0, rep
    assert rep["overlaps"] == 0 and rep["rounds_run"] == 25
    assert rep["ran_payload"] >= 25 and rep["busy"] + rep["ran_payload"] == 100
    assert rep["failed"] == rep["timeouts"] == 0
    assert set(rep["exit_codes"]) <= {"0", "75"}
    # staggered starts: still no overlap, and nothing but the result is printed off a tty
    proc = lockcheck("race", "-j", "3", "-n", "5", "--jitter", "0.05", "--", str(w), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "OK: no overlap" in proc.stdout


@needs_flock
def test_race_flags_a_wrapper_that_deletes_its_flock_file(tmp_path: Path, lockdir: Path):
    w = script(tmp_path / "deletes.sh", DELETES)
    rc, rep = race_json("-j", "3", "-n", "3", "--hold", "0.3", "--", str(w), cwd=tmp_path)
    assert rc == 1
    assert rep["overlaps"] >= 3, rep  # every round: copy 2 overlaps copy 1
    assert any("overlap" in p for p in rep["problems"])


@needs_flock
def test_race_flags_a_fixed_probe_name(tmp_path: Path, lockdir: Path):
    w = script(tmp_path / "probe.sh", FIXED_PROBE)
    rc, rep = race_json("-j", "2", "-n", "3", "--hold", "0.3", "--", str(w), cwd=tmp_path)
    assert rc == 1
    assert rep["overlaps"] >= 3, rep


@needs_flock
def test_race_reports_a_skip_that_exits_zero(tmp_path: Path, lockdir: Path):
    w = script(tmp_path / "silent.sh", SILENT)
    rc, rep = race_json("-j", "3", "-n", "5", "--hold", "0.2", "--", str(w), cwd=tmp_path)
    assert rep["overlaps"] == 0
    assert rep["skipped_exit_0"] >= 5 and rep["busy"] == 0
    proc = lockcheck("race", "-j", "3", "-n", "2", "--hold", "0.2", "--", str(w), cwd=tmp_path)
    assert "skipped, exit 0" in proc.stdout and "looks like success" in proc.stdout


@needs_flock
def test_race_fails_when_the_payload_never_runs(tmp_path: Path, lockdir: Path):
    """The cron stall: the lock cannot be opened, so every run reports busy."""
    w = script(tmp_path / "never.sh", NEVER_RUNS)
    rc, rep = race_json("-j", "2", "-n", "3", "--", str(w), cwd=tmp_path)
    assert rc == 1
    assert rep["ran_payload"] == 0 and rep["busy"] == 6
    assert any("never ran" in p for p in rep["problems"])


def test_race_payload_placeholder_and_timeout(tmp_path: Path):
    """`{}` puts the payload inside a `sh -c` string; a hung run is killed with its group."""
    rc, rep = race_json("-j", "2", "-n", "2", "--", "sh", "-c", "{}", cwd=tmp_path)
    assert rep["ran_payload"] == 4  # no lock at all: both ran...
    assert rep["overlaps"] >= 1 and rc == 1  # ...at the same time
    hang = script(tmp_path / "hang.sh", "#!/bin/sh\nsleep 60 &\nsleep 60\n")
    rc, rep = race_json("-j", "2", "-n", "1", "--timeout", "1", "--", str(hang), cwd=tmp_path)
    assert rc == 1 and rep["timeouts"] == 2
    assert rep["seconds"] < 20


def test_race_usage_errors(tmp_path: Path):
    assert lockcheck("race").returncode == 2
    assert lockcheck("race", "-j", "0", "--", "true").returncode == 2


def test_race_removes_its_scratch_directory(tmp_path: Path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = lockcheck("race", "-n", "2", "--", "sh", "-c", "{}", env=env)
    assert proc.returncode == 1  # no lock: overlaps
    assert names_in(tmp) == set()


@needs_flock
@pytest.mark.parametrize("language", ["shell", "python"])
def test_race_init_templates_exclude(tmp_path: Path, language: str):
    proc = lockcheck("init", f"--{language}", "--slot", "racejob")
    assert proc.returncode == 0, proc.stderr
    w = script(tmp_path / ("wrap.sh" if language == "shell" else "wrap.py"), proc.stdout)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}  # as cron starts it: no runtime dir
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "race", "--output-format", "json"]
        + ["-j", "3", "-n", "10", "--", str(w)],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=os.pathsep.join(sys.path)),
        timeout=300,
    )
    rep = json.loads(proc.stdout)
    assert proc.returncode == 0, rep
    assert rep["overlaps"] == 0 and rep["ran_payload"] >= 10
    assert set(rep["exit_codes"]) <= {"0", "75"}
