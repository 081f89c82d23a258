"""PowerShell retry loops that can run out (issue #14): the path taken when the wait gives
up is the busy branch (RULES.md, "Busy branch"; LCK401/LCK402).  A lock-acquire function
whose loop returns on success and then `return $false` (or `exit 0`, or falls off its end)
after the deadline; a script-level loop whose flag an `if` tests afterwards.  Through the
CLI, each beside a negative: a distinct exit code, a logged skip, a `throw`, and a loop that
only success ends."""

from __future__ import annotations

from helpers import scan_files


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


ACQUIRE_FUNCTION = r"""
    function Get-JobLock {
        param([string]$Path, [int]$TimeoutSec = 30)
        $deadline = (Get-Date).AddSeconds($TimeoutSec)
        while ((Get-Date) -lt $deadline) {
            try {
                New-Item -ItemType File -Path $Path -ErrorAction Stop | Out-Null
                return $true
            } catch {
                Start-Sleep -Seconds 2
            }
        }
        TIMEOUT
    }

    $lock = Join-Path $env:ProgramData 'Export\export.lock'
    if (-not (Get-JobLock -Path $lock)) {
        BUSY
    }
    try { Invoke-Export } finally { Remove-Item $lock }
"""


def acquire_function(timeout: str, busy: str) -> str:
    return ACQUIRE_FUNCTION.replace("TIMEOUT", timeout).replace("BUSY", busy)


EXIT_IN_FUNCTION = r"""
    function Wait-JobLock {
        param([string]$Path)
        for ($i = 0; $i -lt 10; $i++) {
            try {
                New-Item -ItemType File -Path $Path -ErrorAction Stop | Out-Null
                return
            } catch {
                Start-Sleep -Seconds 5
            }
        }
        Write-Host "timed out waiting for $Path"
        exit 0
    }

    $lock = 'C:\ProgramData\Export\export.lock'
    Wait-JobLock -Path $lock
    try { Invoke-Export } finally { Remove-Item $lock }
"""

FALLS_OFF = r"""
    function Wait-JobLock([string]$Path) {
        foreach ($attempt in 1..10) {
            try {
                New-Item -ItemType File -Path $Path -ErrorAction Stop | Out-Null
                return $true
            } catch {
                Start-Sleep -Seconds 5
            }
        }
    }

    $lock = 'C:\ProgramData\Export\export.lock'
    if (-not (Wait-JobLock $lock)) { Write-Host 'gave up'; exit }
    try { Invoke-Export } finally { Remove-Item $lock }
"""

FLAG_LOOP = r"""
    $lock = 'C:\ProgramData\Export\export.lock'
    $got = $false
    $tries = 0
    while (-not $got -and $tries -lt 10) {
        try {
            New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
            $got = $true
        } catch {
            $tries++
            Start-Sleep -Seconds 3
        }
    }
    if (-not $got) {
        Write-Host 'gave up waiting for the export lock'
        exit
    }
    try { Invoke-Export } finally { Remove-Item $lock }
"""

DO_UNTIL = r"""
    $lock = 'C:\ProgramData\Export\export.lock'
    $tries = 0
    $held = $false
    do {
        try {
            New-Item -ItemType Directory -Path $lock -ErrorAction Stop | Out-Null
            $held = $true
        } catch {
            $tries++
            Start-Sleep -Seconds 10
        }
    } until ($held -or $tries -ge 6)
    if ($held) {
        try { Invoke-Export } finally { Remove-Item $lock }
    } else {
        Write-Output 'export lock still held after a minute'
    }
"""

ENDLESS = r"""
    $lock = 'C:\ProgramData\Export\export.lock'
    while ($true) {
        try {
            New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
            break
        } catch {
            Start-Sleep -Seconds 3
        }
    }
    try { Invoke-Export } finally { Remove-Item $lock }
    Write-Host 'export done'
    exit 0
"""


def test_timeout_path_of_a_retry_loop_is_the_busy_branch(tmp_path):
    files = {
        # return $false after the deadline; the caller exits 0: the caller's exit
        "return_false.ps1": acquire_function(
            "return $false", "Write-Host 'another export is running'\n        exit 0"
        ),
        # the result kept in a variable that an `if` tests
        "kept_in_variable.ps1": acquire_function(
            "return $false", "Write-Host 'another export is running'\n        exit 0"
        ).replace(
            "if (-not (Get-JobLock -Path $lock)) {",
            "$ok = Get-JobLock -Path $lock\n    if (-not $ok) {",
        ),
        # the same function exits 0 itself when it gives up
        "exit_in_function.ps1": EXIT_IN_FUNCTION,
        # the loop falls off the function's end ($null); the caller's bare exit is 0
        "falls_off.ps1": FALLS_OFF,
        # script level: the flag success sets, tested after the loop
        "flag_loop.ps1": FLAG_LOOP,
        # do/until on a flag and a count; the else falls off the end of the script (exit 0)
        "do_until.ps1": DO_UNTIL,
        # negatives: a distinct code, a logged skip (LCK402), a throw, a loop only success ends
        "exit_75.ps1": acquire_function(
            "return $false", "Write-Host 'another export is running'\n        exit 75"
        ),
        "logged.ps1": acquire_function(
            "Add-Content -Path 'C:\\ProgramData\\Export\\runs.log' -Value 'timed out'\n"
            "        return $false",
            "exit 0",
        ),
        "throws.ps1": acquire_function("throw 'timed out waiting for the export lock'", "exit 0"),
        "endless.ps1": ENDLESS,
    }
    got = scan(tmp_path, files)
    assert got == {
        "return_false.ps1": {("LCK101", 6), ("LCK401", 18)},
        "kept_in_variable.ps1": {("LCK101", 6), ("LCK401", 19)},
        "exit_in_function.ps1": {("LCK101", 5), ("LCK401", 12)},
        "falls_off.ps1": {("LCK101", 4), ("LCK401", 13)},
        "flag_loop.ps1": {("LCK101", 6), ("LCK401", 15)},
        "do_until.ps1": {("LCK101", 6), ("LCK401", 16)},
        "exit_75.ps1": {("LCK101", 6)},
        "logged.ps1": {("LCK101", 6), ("LCK402", 18)},
        "throws.ps1": {("LCK101", 6)},
        "endless.ps1": {("LCK101", 4)},
    }
