"""--write-baseline / --baseline round trips, and --diff-base in a real git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import concise_rows as found
from helpers import write

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

ROTATE = """\
#!/usr/bin/env bash
flock -n /run/user/1000/rotate.lock logrotate /etc/logrotate.conf
"""


def test_baseline_round_trip(cli, tmp_path):
    write(tmp_path, "jobs/backup.sh", BACKUP)
    write(tmp_path, "jobs/sync.sh", SYNC)
    write(tmp_path, "jobs/rotate.sh", ROTATE)
    status, out, err = cli("scan", "--write-baseline", "lockcheck-baseline.json")
    assert status == 0 and out == ""
    assert err == "lockcheck: wrote 3 baseline entries to lockcheck-baseline.json\n"
    doc = json.loads((tmp_path / "lockcheck-baseline.json").read_text())
    assert {e["path"] for e in doc["entries"]} == {
        "jobs/backup.sh",
        "jobs/sync.sh",
        "jobs/rotate.sh",
    }
    assert all("row" not in e and "line" in e for e in doc["entries"])

    status, out, err = cli("scan", "--baseline", "lockcheck-baseline.json")
    assert (status, out, err) == (0, "All checks passed!\n", "")

    # insert lines above the findings: still known
    write(tmp_path, "jobs/backup.sh", BACKUP.replace("set -euo", "# nightly\n\n# v2\nset -euo"))
    write(tmp_path, "jobs/sync.sh", SYNC.replace("#!/bin/sh\n", "#!/bin/sh\n# sync jobs\n"))
    # fix one finding, add a new one in the same file as an old one
    write(tmp_path, "jobs/rotate.sh", ROTATE.replace("flock -n", "flock -E 75 -n"))
    write(
        tmp_path,
        "jobs/backup.sh",
        (tmp_path / "jobs/backup.sh").read_text()
        + 'exec 8>"$XDG_RUNTIME_DIR/upload.lock"\nflock -n 8 || exit 0\nrclone copy /backup remote:\n',
    )
    status, out, err = cli(
        "scan", "--baseline", "lockcheck-baseline.json", "--output-format", "concise"
    )
    assert status == 1
    assert found(out) == [("jobs/backup.sh", 10, "LCK401")]
    assert err == (
        "lockcheck: 1 baseline entry no longer matches (fixed or changed); "
        "rewrite the baseline with --write-baseline\n"
    )
    # machine formats keep stdout clean
    status, out, err = cli(
        "scan", "--baseline", "lockcheck-baseline.json", "--output-format", "json"
    )
    assert [d["location"]["row"] for d in json.loads(out)] == [10]
    assert "no longer matches" in err


def test_identical_lines_are_told_apart_by_occurrence(cli, tmp_path):
    twice = BACKUP + 'exec 9>"$XDG_RUNTIME_DIR/backup.lock"\nflock -n 9 || exit 0\n'
    write(tmp_path, "backup.sh", BACKUP)
    cli("scan", "--write-baseline", "base.json")
    write(tmp_path, "backup.sh", twice)
    status, out, _ = cli("scan", "--baseline", "base.json", "--output-format", "concise")
    assert status == 1
    assert found(out) == [("backup.sh", 7, "LCK401")]


def test_baseline_errors(cli, tmp_path):
    write(tmp_path, "backup.sh", BACKUP)
    status, _, err = cli("scan", "--baseline", "missing.json")
    assert (status, err) == (2, "lockcheck: error: missing.json: No such file or directory\n")
    write(tmp_path, "bad.json", '{"entries": []}')
    status, _, err = cli("scan", "--baseline", "bad.json")
    assert status == 2 and "not a lockcheck baseline" in err


def test_baseline_from_another_directory(cli, tmp_path, monkeypatch):
    write(tmp_path, "repo/jobs/backup.sh", BACKUP)
    monkeypatch.chdir(tmp_path / "repo")
    cli("scan", "--write-baseline", "lockcheck-baseline.json")
    monkeypatch.chdir(tmp_path)
    status, out, _ = cli("scan", "repo", "--baseline", "repo/lockcheck-baseline.json")
    assert status == 0, out


# --------------------------------------------------------------------------- --diff-base

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "HOME": str(cwd),
            "PATH": "/usr/bin:/bin:/usr/local/bin",
        },
    ).stdout


@needs_git
def test_diff_base_checks_changed_files_only(cli, tmp_path):
    write(tmp_path, "old.sh", BACKUP)
    write(tmp_path, "sync.sh", SYNC)
    write(tmp_path, ".gitignore", "scratch/\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    base = git(tmp_path, "rev-parse", "HEAD").strip()
    git(tmp_path, "checkout", "-q", "-b", "topic")
    write(tmp_path, "committed.sh", BACKUP)
    git(tmp_path, "add", "committed.sh")
    git(tmp_path, "commit", "-q", "-m", "add")
    write(tmp_path, "sync.sh", SYNC.replace("rclone", "echo start; rclone"))  # uncommitted
    write(tmp_path, "untracked.sh", ROTATE)
    write(tmp_path, "scratch/ignored.sh", BACKUP)
    write(tmp_path, "notes.txt", "changed but not a script\n")
    status, out, _ = cli("scan", "--diff-base", "main", "--output-format", "concise")
    assert status == 1
    assert sorted({f[0] for f in found(out)}) == ["committed.sh", "sync.sh", "untracked.sh"]
    _, out, _ = cli("scan", "--diff-base", base, "--show-files", "--extend-exclude", "sync.sh")
    assert out.splitlines() == ["committed.sh", "untracked.sh"]
    status, out, err = cli("scan", "--diff-base", "no-such-ref")
    assert status == 2 and err == "lockcheck: error: --diff-base: unknown git ref 'no-such-ref'\n"
    # nothing changed since HEAD but the working tree: committed.sh is not checked
    _, out, _ = cli("scan", "--diff-base", "HEAD", "--show-files")
    assert out.splitlines() == ["sync.sh", "untracked.sh"]


@needs_git
def test_diff_base_outside_a_repository(cli, tmp_path):
    write(tmp_path, "backup.sh", BACKUP)
    status, out, err = cli("scan", "--diff-base", "main")
    assert status == 2 and out == ""
    assert err.startswith("lockcheck: error: --diff-base: ") and "not in a git repository" in err
    assert err.count("\n") == 1
