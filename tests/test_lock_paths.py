"""Where a lock lives: synced roots, shared temporary directories, defaults (through the
engine, in both languages)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lockcheck.engine import analyze_text
from lockcheck.settings import Settings


def codes(text: str, language: str = "shell", **settings) -> set[tuple[str, int]]:
    _, findings = analyze_text("job", text, language, Settings(**settings))
    return {(f.code, f.span.line) for f in findings}


MKDIR_LOCK = """#!/bin/bash
LOCK={path}
if ! mkdir "$LOCK" 2>/dev/null; then
  echo "busy" >&2
  exit 75
fi
trap 'rmdir "$LOCK"' EXIT
rsync -a /srv/data/ /backup/data/
"""


@pytest.mark.parametrize(
    "path",
    [
        '"$HOME/Dropbox/jobs/backup.lock"',
        "~/OneDrive/backup.lock",
        '"$HOME/OneDrive - Contoso/backup.lock"',
        "/home/alice/Dropbox/backup.lock",
        "/Users/alice/Library/CloudStorage/GoogleDrive-a@b.c/jobs/backup.lock",
        '"$HOME/Library/Mobile Documents/com~apple~CloudDocs/backup.lock"',
        "/mnt/c/Users/alice/backup.lock",
        "//fileserver/share/backup.lock",
        "/mnt/nfs-data/backup.lock",
        '"$SHARED_ROOT/backup.lock"',
        '"${NAS_MOUNT}/backup.lock"',
        '"${syncDir}/backup.lock"',
    ],
)
def test_existence_lock_in_synced_location_is_an_error(path):
    found = codes(MKDIR_LOCK.format(path=path))
    assert ("LCK102", 3) in found
    assert ("LCK101", 3) not in found


@pytest.mark.parametrize(
    "path",
    [
        '"$HOME/work/backup.lock"',
        "/home/alice/projects/backup.lock",
        '"$RSYNC_OPTS/backup.lock"',  # RSYNC is not SYNC
        '"$ASYNC/backup.lock"',
        '"$SYNCDIR/backup.lock"',  # one word: not split
        '"$HOME/Dropboxes/backup.lock"',
    ],
)
def test_not_synced(path):
    found = codes(MKDIR_LOCK.format(path=path))
    assert ("LCK101", 3) in found
    assert ("LCK102", 3) not in found


def test_a_variable_the_script_assigns_resolves_to_its_value_first():
    text = MKDIR_LOCK.format(path='"$SHARED_DIR/backup.lock"').replace(
        "LOCK=", "SHARED_DIR=/var/lib/backup\nLOCK=", 1
    )
    found = codes(text)
    assert ("LCK101", 4) in found and ("LCK102", 4) not in found


def test_declared_synced_paths():
    text = MKDIR_LOCK.format(path="/srv/team-share/jobs/backup.lock")
    assert ("LCK101", 3) in codes(text)
    assert ("LCK102", 3) in codes(text, synced_paths=["/srv/team-share"])


FLOCK_LOCK = """#!/bin/bash
exec 9>{path}
if ! flock -n 9; then
  logger -t backup "skipped: lock busy"
  exit 75
fi
tar -czf /backup/etc.tgz /etc
"""


@pytest.mark.parametrize(
    ("path", "flagged"),
    [
        ("/tmp/backup.lock", True),
        ("/var/tmp/backup.lock", True),
        ("/dev/shm/backup.lock", True),
        ("/run/lock/backup.lock", True),
        ('"${LOCKDIR:-/tmp}/backup.lock"', True),  # the default is what runs
        ('"${LOCK_FILE:-/tmp/backup.lock}"', True),
        ('"${XDG_RUNTIME_DIR:-/tmp}/backup.lock"', False),  # private directory tried first
        # TMPDIR is unset under cron: the default runs, as tempfile.gettempdir() would
        ('"${TMPDIR:-/tmp}/backup.lock"', True),
        ('"/tmp/backup-$$.lock"', False),  # not predictable
        ('"/tmp/$(mktemp -u XXXXXX).lock"', False),
        ("/tmp/jobs/backup.lock", False),  # deeper: only through a dir the script makes
        ('"/tmp/jobs-$USER/backup.lock"', False),  # deeper too, past a variable part
        ('"$XDG_RUNTIME_DIR/backup.lock"', False),
    ],
)
def test_predictable_lock_in_shared_tmp(path, flagged):
    found = codes(FLOCK_LOCK.format(path=path))
    assert (("LCK502", 2) in found) is flagged


def test_predictable_subdirectory_the_script_makes():
    text = FLOCK_LOCK.format(path="/tmp/jobs/backup.lock").replace(
        "exec 9>", "mkdir -p /tmp/jobs\nexec 9>", 1
    )
    assert ("LCK502", 3) in codes(text)


def test_synced_python_paths():
    text = """import fcntl
import os
import sys

LOCK = os.path.join("/home/alice/Dropbox", "jobs", "sync.lock")


def main():
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(75)


if __name__ == "__main__":
    main()
"""
    found = codes(text, "python")
    assert ("LCK104", 9) in found


def test_check_is_an_alias_of_scan(tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(MKDIR_LOCK.format(path="~/Dropbox/backup.lock"))
    out = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "concise", str(script)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "LCK102" in out.stdout


def test_two_unresolved_paths_are_not_the_same_lock():
    text = """#!/bin/bash
old=$(find_stale_report)
lock=$(lock_name_for "$1")
[ -f "$old" ] && rm -f "$old"
exec 9>"$lock" || exit 3
flock -n 9 || exit 75
generate_report > /srv/reports/today.txt
"""
    assert codes(text) == set()


def test_the_same_unresolved_path_is_the_same_lock():
    text = """#!/bin/bash
lock=$(lock_name_for "$1")
exec 9>"$lock" || exit 3
flock -n 9 || exit 75
trap 'rm -f "$lock"' EXIT
generate_report > /srv/reports/today.txt
"""
    assert ("LCK201", 5) in codes(text)


def test_a_lock_helper_called_twice_with_one_path_is_reported_once():
    text = """#!/bin/bash
take_lock() {
  mkdir "$1" 2>/dev/null || { echo "busy"; exit 0; }
}
take_lock /var/lock/report.lock
generate_report
take_lock /var/lock/report.lock
"""
    _, findings = analyze_text("job", text, "shell")
    keys = [(f.code, f.span.line, f.span.col) for f in findings]
    assert ("LCK401", 3) in {(c, line) for c, line, _ in keys}
    assert len(keys) == len(set(keys))


def test_one_unresolved_variable_spelled_two_ways_is_one_lock():
    text = """#!/bin/bash
LOCKFILE="$(state_dir_for "$1")/mirror.lock"
exec 9>"$LOCKFILE"
flock -n 9 || exit 75
trap 'rm -f "${LOCKFILE}"' EXIT
rsync -a mirror::pub/ /srv/mirror/
"""
    assert ("LCK201", 5) in codes(text)
