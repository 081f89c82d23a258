"""--diff / --fix through the CLI (``python -m lockcheck scan``)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

MIRROR = textwrap.dedent(
    """\
    #!/bin/bash
    exec 200>>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/mirror.lock"
    if ! flock -n 200; then
        echo "mirror already running"
        exit 0
    fi
    rsync -a /srv/ mirror:/srv/
    """
)

ROTATE = textwrap.dedent(
    """\
    #!/bin/bash
    LOCK="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/rotate.lock"
    exec 9>>"$LOCK"
    flock -n 9 || { logger -t rotate "busy"; exit 75; }
    trap 'rm -f "$LOCK"; echo "rotate finished" >&2' EXIT INT TERM
    gzip -9 /var/log/app/*.log
    """
)


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )


def test_diff_writes_nothing(tmp_path):
    (tmp_path / "mirror.sh").write_text(MIRROR)
    (tmp_path / "rotate.sh").write_text(ROTATE)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    proc = run(tmp_path, "--diff", "--unsafe-fixes", ".")
    assert "--- a/mirror.sh" in proc.stdout and "+    exit 75" in proc.stdout
    assert "--- a/rotate.sh" in proc.stdout
    assert '-trap \'rm -f "$LOCK"; echo' in proc.stdout
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before, "--diff must not write"


def test_fix_writes_safe_fixes_keeping_mode_and_crlf(tmp_path):
    p = tmp_path / "rotate.sh"
    p.write_bytes(ROTATE.replace("\n", "\r\n").encode())
    p.chmod(0o750)
    run(tmp_path, "--fix", ".")
    data = p.read_bytes()
    assert b"trap 'echo \"rotate finished\" >&2' EXIT INT TERM\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o750
    assert sorted(x.name for x in tmp_path.iterdir()) == ["rotate.sh"]


def test_fix_leaves_unsafe_fixes_without_flag(tmp_path):
    p = tmp_path / "mirror.sh"
    p.write_text(MIRROR)
    proc = run(tmp_path, "--fix", ".")
    assert p.read_text() == MIRROR
    assert "LCK401" in proc.stdout
    run(tmp_path, "--fix", "--unsafe-fixes", ".")
    assert p.read_text() == MIRROR.replace("    exit 0\n", "    exit 75\n")


def test_fix_refuses_symlink_out_of_the_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    outside = tmp_path / "outside.sh"
    outside.write_text(ROTATE)
    (tree / "rotate.sh").symlink_to(outside)
    proc = run(tree, "--fix", "rotate.sh")
    assert outside.read_text() == ROTATE
    assert (tree / "rotate.sh").is_symlink()
    assert "symlink" in proc.stderr, proc.stderr
