"""PowerShell recall and precision classes (issue #14, set-C): retry loops and ``if (New-Item)``
as guards, test-then-create of an unresolved parameter and wait loops, per-process side files,
library lock pairs without a caller, and one lock per create.  Each class through the CLI on
realistic scripts in several spellings, each beside a negative."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from helpers import scan_files, write


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


def codes(rows: set[tuple[str, int]]) -> set[str]:
    return {c for c, _ in rows}


# --------------------------------------------------------------------------- retry loops

RETRY_WHILE_BREAK = """
    $ErrorActionPreference = 'Stop'
    $lockDir = 'C:\\ProgramData\\Nightly\\nightly.d'
    $count = 0
    while ($count -lt 60) {
        try {
            New-Item -ItemType Directory $lockDir | Out-Null
            break
        } catch [Exception] {
            Start-Sleep 1
            $count += 1
        }
    }
    Invoke-Nightly
    Remove-Item $lockDir
"""

RETRY_DO_FLAG = """
    $lock = Join-Path $env:ProgramData 'Export\\export.lock'
    $held = $false
    do {
        try {
            New-Item -Path $lock -ItemType File -ErrorAction Stop | Out-Null
            $held = $true
        } catch {
            Write-Host 'export busy, waiting'
            Start-Sleep -Seconds 5
        }
    } until ($held)
    try { Invoke-Export } finally { Remove-Item $lock }
"""

RETRY_CREATENEW_CONTINUE = """
    $lock = 'D:\\jobs\\sync\\sync.marker'
    while ($true) {
        try {
            [System.IO.File]::Open($lock, 'CreateNew').Close()
            break
        } catch [System.IO.IOException] {
            Write-Host 'waiting for the other sync'
            Start-Sleep -Seconds 10
            continue
        }
    }
    try { Invoke-Sync } finally { [System.IO.File]::Delete($lock) }
"""

RETRY_FORCE = """
    $lock = 'C:\\ProgramData\\Backup\\backup.lock'
    for (;;) {
        try {
            New-Item -ItemType File -Path $lock -Force | Out-Null
            break
        } catch {
            Start-Sleep 30
        }
    }
    try { Invoke-Backup } finally { Remove-Item $lock }
"""

TRAP_EXIT = """
    $lock = 'C:\\ProgramData\\Backup\\backup.lock'
    trap { Write-Host 'backup already running'; exit 0 }
    New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    Invoke-Backup
    Remove-Item $lock
"""


def test_catch_or_trap_that_retries_is_a_busy_branch(tmp_path):
    rows = scan(
        tmp_path,
        {
            "while_break.ps1": RETRY_WHILE_BREAK,
            "do_flag.ps1": RETRY_DO_FLAG,
            "createnew_continue.ps1": RETRY_CREATENEW_CONTINUE,
            "force.ps1": RETRY_FORCE,
            "trap.ps1": TRAP_EXIT,
        },
    )
    assert ("LCK101", 6) in rows["while_break.ps1"]
    assert ("LCK202", 6) in rows["while_break.ps1"]  # removed at the end, not in finally
    assert ("LCK101", 5) in rows["do_flag.ps1"]
    assert ("LCK101", 4) in rows["createnew_continue.ps1"]
    # -Force never fails: the retry never waits (LCK109), and it is no LCK101
    assert ("LCK109", 4) in rows["force.ps1"] and "LCK101" not in codes(rows["force.ps1"])
    assert ("LCK101", 3) in rows["trap.ps1"] and ("LCK401", 2) in rows["trap.ps1"]
    # a retry loop waits: no silent skip is claimed for it
    for name in ("while_break.ps1", "do_flag.ps1", "createnew_continue.ps1"):
        assert "LCK401" not in codes(rows[name]), name


def test_loops_that_do_not_wait_for_one_name_are_not_locks(tmp_path):
    rows = scan(
        tmp_path,
        {
            # candidates tried in turn: a fresh name per pass
            "candidates.ps1": """
                foreach ($n in 1..5) {
                    try {
                        New-Item -ItemType Directory "C:\\Reports\\run$n" -ErrorAction Stop | Out-Null
                        break
                    } catch { }
                }
            """,
            "counter_name.ps1": """
                $i = 0
                while ($true) {
                    $dir = "C:\\Reports\\out-$i"
                    try { New-Item -ItemType Directory $dir -ErrorAction Stop | Out-Null; break }
                    catch { $i++ }
                }
            """,
            # the catch gives up: nothing is retried
            "gives_up.ps1": """
                $ErrorActionPreference = 'Stop'
                while ($true) {
                    try { New-Item -ItemType Directory 'C:\\Reports\\today' | Out-Null; break }
                    catch { Write-Warning "cannot create: $_"; break }
                }
            """,
            # a random name per attempt until one is free: a temporary file, not a lock
            "random.ps1": """
                function New-ScratchFile([string]$Dir) {
                    $tries = 0
                    do {
                        $tries += 1
                        $name = [System.IO.Path]::GetRandomFileName()
                        $candidate = Join-Path -Path $Dir -ChildPath "scratch-$name"
                        try { $made = New-Item -Path $candidate -ItemType File } catch { $made = $null }
                    } until (($null -ne $made) -or ($tries -ge 5))
                    return $made
                }
            """,
            # a share folder made with retries for transient errors and kept: not a lock
            "share_retry.ps1": """
                $target = '\\\\fs01\\exports\\daily'
                for ($i = 0; $i -lt 5; $i++) {
                    try { New-Item -ItemType Directory -Path $target -ErrorAction Stop | Out-Null; break }
                    catch { Start-Sleep -Seconds 2 }
                }
                Copy-Item C:\\exports\\*.csv $target
            """,
            # one item per input, errors logged: no loop waits for a name
            "per_item.ps1": """
                foreach ($user in Get-Content users.txt) {
                    try { New-Item -ItemType Directory "\\\\fs\\home\\$user" -ErrorAction Stop }
                    catch { Write-Warning $_ }
                }
            """,
        },
    )
    for name, found in rows.items():
        assert not codes(found) & {"LCK101", "LCK109", "LCK202"}, (name, found)


IF_HARDLINK_LOOP = """
    function Lock-Workdir {
        Set-Location $WORKDIR
        "$PID" | Set-Content "LOCK.$PID"
        while ($true) {
            if (New-Item -ItemType HardLink -Name LOCK -Value "LOCK.$PID" -ErrorAction SilentlyContinue) {
                break
            }
            Write-Host 'directory is locked, waiting...'
            Start-Sleep -Seconds 15
        }
    }
    function Unlock-Workdir {
        Set-Location $WORKDIR
        If (Test-Path -PathType Leaf "LOCK.$PID") {
            Remove-Item LOCK
            Remove-Item "LOCK.$PID"
        }
    }
"""

IF_NULL_EQ = """
    $lock = 'C:\\ProgramData\\Reports\\report.lock'
    if ($null -eq (New-Item -ItemType File -Path $lock -ErrorAction SilentlyContinue)) {
        Write-Host 'report already running'
        exit 0
    }
    try { Invoke-Report } finally { Remove-Item $lock }
"""

IF_NOT_IGNORE = """
    $lock = 'C:\\ProgramData\\Reports\\report.d'
    if (-not (New-Item $lock -ItemType Directory -ErrorAction Ignore)) { exit 75 }
    try { Invoke-Report } finally { Remove-Item $lock }
"""

ASSIGNED_THEN_TESTED = """
    $lock = 'C:\\ProgramData\\Reports\\report.lock'
    $item = New-Item -Path $lock -ItemType File -ErrorAction SilentlyContinue
    if (!$item) {
        Write-Output 'busy'
        exit
    }
    try { Invoke-Report } finally { Remove-Item $lock }
"""

IF_FORCE = """
    $lock = 'C:\\ProgramData\\Reports\\report.lock'
    if (New-Item -ItemType File -Path $lock -Force) {
        try { Invoke-Report } finally { Remove-Item $lock }
    } else {
        exit 0
    }
"""


def test_new_item_as_the_if_condition_is_an_acquire(tmp_path):
    rows = scan(
        tmp_path,
        {
            "hardlink.psm1": IF_HARDLINK_LOOP,
            "null_eq.ps1": IF_NULL_EQ,
            "not_ignore.ps1": IF_NOT_IGNORE,
            "assigned.ps1": ASSIGNED_THEN_TESTED,
            "force.ps1": IF_FORCE,
        },
    )
    hard = rows["hardlink.psm1"]
    assert ("LCK101", 5) in hard
    # its output is tested: -ErrorAction SilentlyContinue can fail here (no LCK109); the
    # removal in the unlock function is of the lock this file takes (no LCK107); the pair has
    # no caller in this file (no LCK202); "LOCK.$PID" is a per-process side file (no LCK103)
    assert not codes(hard) & {"LCK109", "LCK107", "LCK202", "LCK103"}, hard
    assert ("LCK101", 2) in rows["null_eq.ps1"] and ("LCK401", 4) in rows["null_eq.ps1"]
    assert ("LCK101", 2) in rows["not_ignore.ps1"]
    assert "LCK401" not in codes(rows["not_ignore.ps1"])  # exit 75
    assert ("LCK101", 2) in rows["assigned.ps1"] and ("LCK401", 5) in rows["assigned.ps1"]
    assert ("LCK109", 2) in rows["force.ps1"] and "LCK101" not in codes(rows["force.ps1"])


def test_new_item_output_that_decides_nothing_is_no_lock(tmp_path):
    rows = scan(
        tmp_path,
        {
            "report.ps1": """
                if (New-Item -ItemType Directory $OutDir -ErrorAction SilentlyContinue) {
                    Write-Host "created $OutDir"
                }
                Export-Data -Path $OutDir
            """,
            "ensure.ps1": """
                $log = 'C:\\Logs\\app'
                $made = New-Item -ItemType Directory -Path $log -Force
                Write-Verbose "log folder: $made"
            """,
            # a link made for the work, not tested
            "link.ps1": """
                New-Item -ItemType SymbolicLink -Path 'C:\\app\\current' -Target 'C:\\app\\v2' -Force
            """,
        },
    )
    for name, found in rows.items():
        assert not codes(found) & {"LCK101", "LCK109", "LCK202"}, (name, found)


# --------------------------------------------------------------------------- LCK103

PARAM_TEST_THEN_CREATE = """
    Function Confirm-JobLock {
        Param (
            [String]$Path
        )
        If (-Not (Test-Path $Path)) {
            New-Item $Path -Force
        }
        Else {
            Write-Output 'another instance is running; waiting'
            Do {
                Start-Sleep 10
            }
            Until (-Not (Test-Path $Path))
            New-Item $Path -Force
        }
    }
"""

PARAM_WAIT_THEN_SET = """
    param([string]$LockFile)
    while (Test-Path -Path $LockFile) {
        Start-Sleep -Seconds 30
    }
    Set-Content -Path $LockFile -Value $PID
    Invoke-Job
    Remove-Item $LockFile
"""

FUNCTION_ARG_WAIT = """
    function Wait-Turn($Marker) {
        do { Start-Sleep 5 } while (Test-Path $Marker)
        New-Item -Path $Marker -ItemType File | Out-Null
    }
"""


def test_lck103_same_unresolved_parameter_and_wait_loops(tmp_path):
    rows = scan(
        tmp_path,
        {
            "confirm.ps1": PARAM_TEST_THEN_CREATE,
            "wait_set.ps1": PARAM_WAIT_THEN_SET,
            "wait_turn.ps1": FUNCTION_ARG_WAIT,
        },
    )
    assert {("LCK103", 6), ("LCK103", 14)} <= rows["confirm.ps1"]
    # created with -Force but not as the test of a try: not LCK109
    assert "LCK109" not in codes(rows["confirm.ps1"])
    assert ("LCK103", 5) in rows["wait_set.ps1"]
    assert ("LCK103", 3) in rows["wait_turn.ps1"]


def test_lck103_not_for_create_if_missing_or_other_paths(tmp_path):
    rows = scan(
        tmp_path,
        {
            "ensure.ps1": """
                param([string]$OutDir)
                if (-not (Test-Path $OutDir)) { New-Item -ItemType Directory $OutDir | Out-Null }
                Export-Data -Path $OutDir
            """,
            # waits until the file appears, then writes: a hand-off, not a lock
            "ready.ps1": """
                param([string]$Ready)
                while (-not (Test-Path $Ready)) { Start-Sleep 5 }
                Set-Content -Path $Ready -Value 'seen'
            """,
            "other.ps1": """
                param([string]$Source, [string]$Target)
                while (Test-Path $Source) { Start-Sleep 5 }
                New-Item -Path $Target -ItemType File | Out-Null
                Remove-Item $Target
            """,
            # written where it exists: an update of the file, not a create
            "update.ps1": """
                $state = 'C:\\ProgramData\\job\\job.lock'
                if (Test-Path $state) { Set-Content $state (Get-Date) }
            """,
        },
    )
    for name, found in rows.items():
        assert "LCK103" not in codes(found), (name, found)


# --------------------------------------------------------------------------- precision

SIDE_FILE = """
    Set-Location $WORKDIR
    If (-Not (Test-Path -PathType Leaf LOCK.$pid)) {
        $pid | Add-Content LOCK.$pid
    }
    Invoke-Work
    Remove-Item LOCK.$pid
"""


def test_per_process_side_files_are_not_locks(tmp_path):
    rows = scan(
        tmp_path,
        {
            "bare.ps1": SIDE_FILE,
            "quoted.ps1": SIDE_FILE.replace("LOCK.$pid", '"LOCK.$PID"'),
            "temp.ps1": """
                $mine = Join-Path $env:TEMP "job.$PID.lock"
                try { New-Item -ItemType File -Path $mine -ErrorAction Stop | Out-Null }
                catch { exit 0 }
                Invoke-Work
                Remove-Item $mine
            """,
            # the same without the PID is a lock
            "shared.ps1": SIDE_FILE.replace("LOCK.$pid", "LOCK"),
        },
    )
    for name in ("bare.ps1", "quoted.ps1", "temp.ps1"):
        assert not codes(rows[name]) & {"LCK101", "LCK103", "LCK202", "LCK501", "LCK107"}, (
            name,
            rows[name],
        )
    assert {("LCK103", 3), ("LCK501", 3)} <= rows["shared.ps1"]


LIBRARY_PAIR = """
    function New-JobLock {
        $lockFile = Join-Path $env:ProgramData 'jobs\\job.lock'
        while ($true) {
            if (Test-Path -Path $lockFile) {
                Write-Host 'job is running; sleeping 15 seconds'
                Start-Sleep -Seconds 15
            }
            else {
                New-Item -ItemType File -Path $lockFile | Out-Null
                break
            }
        }
    }

    function Remove-JobLock {
        $lockFile = Join-Path $env:ProgramData 'jobs\\job.lock'
        Remove-Item -Path $lockFile
    }
"""


def test_lck202_library_pair_without_caller_is_not_judged(tmp_path):
    rows = scan(
        tmp_path,
        {
            "lib.ps1": LIBRARY_PAIR,
            "caller.ps1": LIBRARY_PAIR + "\nNew-JobLock\nInvoke-Job\nRemove-JobLock\n",
            "finally.ps1": LIBRARY_PAIR
            + "\nNew-JobLock\ntry { Invoke-Job } finally { Remove-JobLock }\n",
        },
    )
    assert ("LCK103", 9) in rows["lib.ps1"] and "LCK202" not in codes(rows["lib.ps1"])
    # with its caller in the file, the caller is judged
    assert ("LCK202", 9) in rows["caller.ps1"]
    assert "LCK202" not in codes(rows["finally.ps1"])


def test_lck107_for_a_removal_of_no_lock_taken_here(tmp_path):
    rows = scan(
        tmp_path,
        {
            "own.psm1": IF_HARDLINK_LOOP,
            "foreign.ps1": "Set-Location $WORKDIR\nRemove-Item LOCK\n",
        },
    )
    assert "LCK107" not in codes(rows["own.psm1"])
    assert ("LCK107", 2) in rows["foreign.ps1"]


def test_one_lock_per_create(tmp_path):
    rows = scan(
        tmp_path,
        {
            "pidfile.ps1": """
                $lock = 'job.lock'
                if (Test-Path $lock) { Write-Host 'busy'; exit 75 }
                New-Item -ItemType File -Path $lock | Out-Null
                Set-Content $lock $PID
                try { Invoke-Job } finally { Remove-Item $lock }
            """,
            "two_tests.ps1": """
                $lock = 'job.lock'
                if (Test-Path $lock) { Write-Host 'busy'; exit 75 }
                New-Item -ItemType File -Path $lock | Out-Null
                if (Test-Path $lock) { Set-Content $lock $PID }
                try { Invoke-Job } finally { Remove-Item $lock }
            """,
            "rechecked.ps1": """
                $lock = 'job.lock'
                if (Test-Path $lock) { exit 75 }
                New-Item -ItemType File -Path $lock | Out-Null
                if (-not (Test-Path $lock)) { Write-Warning 'lost the lock file' }
                Set-Content $lock $PID
                try { Invoke-Job } finally { Remove-Item $lock }
            """,
        },
    )
    for name, found in rows.items():
        assert [c for c, _ in found if c == "LCK103"] == ["LCK103"], (name, found)
        assert [c for c, _ in found if c == "LCK501"] == ["LCK501"], (name, found)
        assert ("LCK103", 3) in found, (name, found)


def test_create_if_missing_whose_catch_aborts_is_no_lock(tmp_path):
    src = """
        function Confirm-OutputPath {
            param([string]$Path)
            if (-not (Test-Path $Path)) {
                try {
                    Write-Output "creating $Path"
                    New-Item $Path -ItemType Directory -Force
                }
                catch {
                    Write-Output "could not create $Path, stopping"
                    exit
                }
            }
        }
    """
    rows = scan(
        tmp_path, {"confirm.ps1": src, "busy.ps1": src.replace("could not create", "busy:")}
    )
    assert not codes(rows["confirm.ps1"]) & {"LCK101", "LCK109", "LCK103"}, rows
    assert ("LCK109", 6) in rows["busy.ps1"]


# --------------------------------------------------------------------------- LCK106 by age


def test_lck106_lock_removed_after_an_age_test(tmp_path):
    rows = scan(
        tmp_path,
        {
            "sibling.ps1": """
                $LockFile = "$env:ProgramData\\Sync\\sync.lock"
                if (Test-Path $LockFile) {
                    $age = (Get-Date) - (Get-Item $LockFile).LastWriteTime
                    if ($age.TotalMinutes -lt 60) { Write-Host 'already running'; exit 75 }
                    Remove-Item $LockFile -Force
                }
                New-Item $LockFile -ItemType File | Out-Null
                try { Invoke-Sync } finally { Remove-Item $LockFile -Force }
            """,
            "condition.ps1": """
                $lock = 'C:\\ProgramData\\Sync\\sync.d'
                if ((Get-Item $lock).CreationTime -lt (Get-Date).AddHours(-2)) {
                    Remove-Item $lock -Recurse
                }
                try { New-Item -ItemType Directory $lock -ErrorAction Stop | Out-Null }
                catch { exit 75 }
                try { Invoke-Sync } finally { Remove-Item $lock -Recurse }
            """,
            "timespan.ps1": """
                $lock = 'C:\\ProgramData\\Sync\\sync.lock'
                $item = Get-Item $lock -ErrorAction SilentlyContinue
                if ($item -and (New-TimeSpan -Start $item.LastWriteTime).TotalHours -gt 6) {
                    Remove-Item $lock
                }
            """,
            # old reports are deleted by age: no lock
            "reports.ps1": """
                $report = 'C:\\Reports\\daily.csv'
                if ((Get-Item $report).LastWriteTime -lt (Get-Date).AddDays(-7)) {
                    Remove-Item $report
                }
            """,
        },
    )
    assert ("LCK106", 5) in rows["sibling.ps1"]
    assert ("LCK106", 3) in rows["condition.ps1"]
    assert ("LCK106", 4) in rows["timespan.ps1"]
    assert "LCK106" not in codes(rows["reports.ps1"])
    # the release in finally is no breaker
    assert ("LCK106", 8) not in rows["sibling.ps1"]


# --------------------------------------------------------------------------- pre-masking

BARE_PATH_LOCK = """
    Import-Module $PSScriptRoot\\..\\Common\\Common.psd1 -Force
    try {
        New-Item -ItemType File $PSScriptRoot\\run.lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host 'already running'
        exit 0
    }
    try { Invoke-Job -Property Name, Id } finally { Remove-Item $PSScriptRoot\\run.lock }
"""


def test_bare_path_arguments_the_grammar_rejects_are_read(tmp_path):
    """`$PSScriptRoot\\run.lock` as a bare argument and `-Property Name, Id` are valid
    PowerShell that tree-sitter-powershell 0.26 rejects: they are masked (same length) for
    the grammar and read as written."""
    rows = scan(
        tmp_path,
        {
            "bare.ps1": BARE_PATH_LOCK,
            "env.ps1": """
                if (Test-Path $env:ProgramData\\Report\\report.lock) {
                    Write-Host 'report already running'
                    exit
                }
                New-Item -ItemType File $env:ProgramData\\Report\\report.lock | Out-Null
                Invoke-Report
                Remove-Item $env:ProgramData\\Report\\report.lock
            """,
            # a quoted path stays as it was: beside the script all the same
            "quoted.ps1": BARE_PATH_LOCK.replace(
                "$PSScriptRoot\\run.lock", '"$PSScriptRoot\\run.lock"'
            ),
        },
    )
    assert {("LCK101", 3), ("LCK501", 3), ("LCK401", 6)} <= rows["bare.ps1"]
    assert {("LCK101", 3), ("LCK501", 3), ("LCK401", 6)} <= rows["quoted.ps1"]
    assert ("LCK103", 5) in rows["env.ps1"]
    assert "LCK000" not in codes(rows["bare.ps1"])


def test_masked_file_is_fixed_and_reported_as_written(tmp_path):
    path = write(tmp_path, "job.ps1", textwrap.dedent(BARE_PATH_LOCK).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(path)],
        capture_output=True,
        text=True,
    )
    msgs = {r["code"]: r["message"] for r in json.loads(proc.stdout)}
    assert "<script_dir>/run.lock" in msgs["LCK501"], msgs
    subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--fix", "--unsafe-fixes", str(path)],
        capture_output=True,
        text=True,
    )
    fixed = path.read_text()
    original = textwrap.dedent(BARE_PATH_LOCK).lstrip("\n")
    assert fixed == original.replace("    exit 0\n", "    exit 75\n"), fixed
