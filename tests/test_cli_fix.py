"""--fix, --unsafe-fixes, --diff, --show-fixes through the CLI."""

from __future__ import annotations

import sys

from helpers import write

SILENT_SKIP = """\
#!/bin/bash
set -euo pipefail
exec 9>"$XDG_RUNTIME_DIR/backup.lock" || exit 3
flock -n 9 || exit 0
rsync -a /srv/data/ /backup/
"""

REMOVES_FLOCK_FILE = """\
#!/bin/bash
LOCK="$XDG_RUNTIME_DIR/cleanup.lock"
exec 9>"$LOCK" || exit 3
if ! flock -n 9; then
  logger -t cleanup "busy"
  exit 75
fi
trap 'rm -f "$LOCK"' EXIT
tar -czf /backup/spool.tgz /var/spool/app
"""


def test_safe_fix_is_applied_by_fix(cli, tmp_path):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    status, out, _ = cli("scan", "cleanup.sh", "--output-format", "concise")
    assert status == 1
    assert "cleanup.sh:8:7: LCK201 (error) [*] " in out
    assert "[*] 1 fixable with the --fix option." in out
    status, out, err = cli("scan", "--fix", "cleanup.sh", "--output-format", "concise")
    assert status == 0, out + err
    assert "rm -f" not in p.read_text()
    assert p.read_text().count("\n") == REMOVES_FLOCK_FILE.count("\n") - 1
    assert out.splitlines()[-1] == "Found 1 finding (1 fixed, 0 remaining)."


def test_unsafe_fix_needs_unsafe_fixes(cli, tmp_path):
    p = write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, _ = cli("scan", "--fix", "--output-format", "concise")
    assert status == 1
    assert p.read_text() == SILENT_SKIP
    assert out.splitlines()[-3:] == [
        "Found 1 finding (1 error).",
        "It fails the run (fail-on = warning).",
        "No fixes available (1 hidden fix can be enabled with the --unsafe-fixes option).",
    ]
    # --unsafe-fixes alone shows them as available
    status, out, _ = cli("scan", "--unsafe-fixes", "--output-format", "concise")
    assert "LCK401 (error) [*]" in out and "[*] 1 fixable with the --fix option." in out
    assert p.read_text() == SILENT_SKIP
    status, out, _ = cli("scan", "--fix", "--unsafe-fixes", "--output-format", "concise")
    assert status == 0
    assert p.read_text() == SILENT_SKIP.replace("|| exit 0", "|| exit 75")
    assert out == "Found 1 finding (1 fixed, 0 remaining).\n"


def test_fix_uses_configured_skip_exit_code(cli, tmp_path):
    p = write(tmp_path, "backup.sh", SILENT_SKIP)
    write(tmp_path, "lockcheck.toml", "skip-exit-code = 69\n")
    cli("scan", "--fix", "--unsafe-fixes")
    assert "|| exit 69" in p.read_text()


def test_diff_prints_and_writes_nothing(cli, tmp_path):
    p = write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("scan", "--diff", "--unsafe-fixes")
    assert status == 1
    assert p.read_text() == SILENT_SKIP
    assert out.splitlines()[:2] == ["--- a/backup.sh", "+++ b/backup.sh"]
    assert "-flock -n 9 || exit 0" in out.splitlines()
    assert "+flock -n 9 || exit 75" in out.splitlines()
    assert err == "Would fix 1 finding.\n"
    assert cli("scan", "--diff", "--unsafe-fixes", "--exit-zero")[0] == 0
    # nothing to change: exit 0
    status, out, err = cli("scan", "--diff")
    assert (status, out) == (0, "")
    # ... and the only fix is unsafe: say which option shows it
    assert err == "No safe fixes to apply (1 unsafe fix is shown with --unsafe-fixes).\n"


def test_crlf_file_keeps_line_endings(cli, tmp_path):
    p = tmp_path / "backup.sh"
    p.write_bytes(SILENT_SKIP.replace("\n", "\r\n").encode())
    status, _, err = cli("scan", "--fix", "--unsafe-fixes", "backup.sh")
    assert status == 0, err
    assert p.read_bytes() == SILENT_SKIP.replace("exit 0", "exit 75").replace("\n", "\r\n").encode()


def test_show_fixes_lists_fix_per_finding_and_fixed_summary(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    _, out, _ = cli("scan", "--show-fixes", "--output-format", "concise")
    lines = out.splitlines()
    i = lines.index("Available fixes:")
    assert lines[i + 1] == "backup.sh:4:15: LCK401 [unsafe] Exit with 75 when the lock is busy"
    assert "    -flock -n 9 || exit 0" in lines
    assert any(x.startswith("cleanup.sh:8:7: LCK201 [safe] ") for x in lines)
    _, out, _ = cli("scan", "--show-fixes", "--fix", "--output-format", "concise")
    lines = out.splitlines()
    i = lines.index("Fixed 1 error:")
    assert lines[i + 1 : i + 3] == ["- cleanup.sh:", "    1 × LCK201 (flock-file-removed)"]


def test_fix_without_fix_module_is_one_clear_error(cli, tmp_path, monkeypatch):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    monkeypatch.setitem(sys.modules, "lockcheck.fix.apply", None)
    status, out, err = cli("scan", "--fix")
    assert status == 2 and out == ""
    assert err.startswith("lockcheck: error: fixes are not available in this build")
    assert err.count("\n") == 1
