"""PowerShell lock removals (issue #14): `[IO.Directory]::Delete(...)`,
`[System.IO.File]::Delete(...)` and `Remove-Item -LiteralPath` (and its alias `-LP`) remove a
lock wherever RULES.md reads removal: the release of an existence lock (LCK202), a handle
lock's file deleted (LCK201), a lock the script never takes (LCK107), a stale breaker after
an age test (LCK106).  Through the CLI, each beside a negative."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import scan_files, write


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


DIR_LOCK = r"""
    $lockDir = 'C:\ProgramData\Export\export.lock.d'
    try {
        New-Item -ItemType Directory -Path $lockDir -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'busy'
        exit 75
    }
    RELEASE
"""

FILE_LOCK = r"""
    $lock = 'C:\ProgramData\Export\export[1].lock'
    try {
        New-Item -ItemType File -LiteralPath $lock -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'busy'
        exit 75
    }
    RELEASE
"""

HANDLE_LOCK = r"""
    $lockPath = 'C:\ProgramData\Export\export.lock'
    try {
        $handle = [System.IO.File]::Open($lockPath, 'OpenOrCreate', 'ReadWrite', 'None')
    } catch [System.IO.IOException] {
        if (($_.Exception.HResult -band 0xFFFF) -in 32, 33) {
            Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'busy'
            exit 75
        }
        throw
    }
    try {
        Invoke-Export
    } finally {
        $handle.Dispose()
        REMOVE
    }
"""

STALE = r"""
    $lockDir = 'C:\ProgramData\Export\export.lock.d'
    if ((Test-Path $lockDir) -and ((Get-Item $lockDir).LastWriteTime -lt (Get-Date).AddHours(-2))) {
        REMOVE
    }
    try {
        New-Item -ItemType Directory -Path $lockDir -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-Export } finally { Remove-Item $lockDir -Recurse }
"""

FINALLY = "try { Invoke-Export } finally { RM }"
PLAIN = "Invoke-Export\nRM"


def release(template: str, shape: str, rm: str) -> str:
    return template.replace("RELEASE", shape.replace("RM", rm))


def test_dotnet_and_literal_path_removals_release_and_break_locks(tmp_path):
    d_del = "[IO.Directory]::Delete($lockDir, $true)"
    sys_del = "[System.IO.Directory]::Delete($lockDir, $true)"
    files = {
        # a release in `finally` covers every exit; the same removal as a plain statement does not
        "dir_finally.ps1": release(DIR_LOCK, FINALLY, d_del),
        "dir_plain.ps1": release(DIR_LOCK, PLAIN, d_del),
        "sysdir_plain.ps1": release(DIR_LOCK, PLAIN, sys_del),
        "literal_finally.ps1": release(FILE_LOCK, FINALLY, "Remove-Item -LiteralPath $lock"),
        "literal_plain.ps1": release(FILE_LOCK, PLAIN, "Remove-Item -LiteralPath $lock"),
        "lp_finally.ps1": release(FILE_LOCK, FINALLY, "Remove-Item -LP $lock -Force"),
        "lp_plain.ps1": release(FILE_LOCK, PLAIN, "Remove-Item -LP $lock -Force"),
        # a FileShare.None handle's file deleted (LCK201); disposing the handle alone is fine
        "handle_deleted.ps1": HANDLE_LOCK.replace("REMOVE", "[System.IO.File]::Delete($lockPath)"),
        "handle_kept.ps1": HANDLE_LOCK.replace("REMOVE", "Write-Verbose 'released'"),
        # an old lock directory deleted by age (LCK106); a fresh one is left alone
        "stale.ps1": STALE.replace("REMOVE", "[System.IO.Directory]::Delete($lockDir, $true)"),
        "not_stale.ps1": STALE.replace("REMOVE", "Write-Warning 'old export lock'"),
        # another job's lock directory removed unconditionally (LCK107)
        "foreign.ps1": """
            [IO.Directory]::Delete('C:\\ProgramData\\Backup\\backup.lock.d', $true)
            Remove-Item -LiteralPath 'C:\\ProgramData\\Backup\\backup.lock'
            Invoke-Cleanup
        """,
        "not_foreign.ps1": """
            [IO.Directory]::Delete('C:\\ProgramData\\Backup\\staging', $true)
            Invoke-Cleanup
        """,
    }
    got = scan(tmp_path, files)
    assert got == {
        "dir_finally.ps1": {("LCK101", 3)},
        "dir_plain.ps1": {("LCK101", 3), ("LCK202", 3)},
        "sysdir_plain.ps1": {("LCK101", 3), ("LCK202", 3)},
        "literal_finally.ps1": {("LCK101", 3)},
        "literal_plain.ps1": {("LCK101", 3), ("LCK202", 3)},
        "lp_finally.ps1": {("LCK101", 3)},
        "lp_plain.ps1": {("LCK101", 3), ("LCK202", 3)},
        "handle_deleted.ps1": {("LCK201", 15)},
        "handle_kept.ps1": set(),
        "stale.ps1": {("LCK101", 6), ("LCK106", 3)},
        "not_stale.ps1": {("LCK101", 6)},
        "foreign.ps1": {("LCK107", 1), ("LCK107", 2)},
        "not_foreign.ps1": set(),
    }


def test_lck201_fix_drops_a_dotnet_delete(tmp_path):
    src = HANDLE_LOCK.replace("REMOVE", "[System.IO.File]::Delete($lockPath)")
    p = write(tmp_path, "job.ps1", textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--fix", str(p)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = p.read_text()
    assert "Delete" not in fixed and "$handle.Dispose()" in fixed
