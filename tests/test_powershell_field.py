"""PowerShell shapes from a hand review of lock-taking scheduled-task scripts (issue #14):
a busy branch that records the skip through the script's own log helper (a `Log`/`Write-Log`
function that appends to a file) is durable (LCK402, not LCK401); a `.locks` folder made if
missing and kept is no lock (no LCK103).  Through the CLI, each beside a negative."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import scan_files, write


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


HELPER_JOB = r"""
    $LogFile = 'C:\ProgramData\Sync\sync.log'
    HELPERS
    $lock = 'C:\ProgramData\Sync\sync.lock'
    if (Test-Path $lock) {
        Write-JobLog 'previous sync still running, skipping'
        exit 0
    }
    New-Item -ItemType File -Path $lock | Out-Null
    try { Invoke-Sync } finally { Remove-Item $lock }
"""


def helper_job(helpers: str) -> str:
    return HELPER_JOB.replace("HELPERS", helpers)


def test_a_skip_logged_through_a_local_helper_is_recorded(tmp_path):
    appends = (
        'function Write-JobLog([string]$m) { "$(Get-Date -Format o) $m" | Add-Content $LogFile }'
    )
    nested = (
        "function Out-Line([string]$l) { $l | Out-File -FilePath $LogFile -Append }\n"
        '    function Write-JobLog([string]$m) { Out-Line "$(Get-Date -Format o) $m" }'
    )
    redirected = 'function Write-JobLog([string]$m) { "$(Get-Date -Format o) $m" >> $LogFile }'
    console = 'function Write-JobLog([string]$m) { Write-Host "$(Get-Date -Format o) $m" }'
    got = scan(
        tmp_path,
        {
            "appends.ps1": helper_job(appends),
            "nested.ps1": helper_job(nested),
            "redirected.ps1": helper_job(redirected),
            "console.ps1": helper_job(console),
        },
    )
    assert got == {
        "appends.ps1": {("LCK402", 6), ("LCK103", 8)},
        "nested.ps1": {("LCK402", 7), ("LCK103", 9)},
        "redirected.ps1": {("LCK402", 6), ("LCK103", 8)},
        # the helper only prints: nothing durable
        "console.ps1": {("LCK401", 6), ("LCK103", 8)},
    }


LOCK_FOLDER = r"""
    $lockRoot = 'C:\ProgramData\Jobs\.locks'
    if (-not (Test-Path $lockRoot)) { New-Item -ItemType Directory -Path $lockRoot -Force | Out-Null }
    $mutex = [System.Threading.Mutex]::new($false, 'Global\NightlyReport')
    if (-not $mutex.WaitOne(0)) {
        Add-Content -Path (Join-Path $lockRoot 'skipped.log') -Value "busy $(Get-Date -Format o)"
        exit 75
    }
    try { Invoke-Report } finally { $mutex.ReleaseMutex() }
"""

GUARDED_WORK = r"""
    $lock = 'C:\ProgramData\Jobs\report.lock'
    if (-not (Test-Path $lock)) {
        New-Item -ItemType File -Path $lock | Out-Null
        Invoke-Report
        Remove-Item $lock
    }
"""


def test_a_lock_folder_made_if_missing_is_no_lock(tmp_path):
    guarded_dir = (
        GUARDED_WORK.replace("report.lock'", "report.lock.d'")
        .replace("-ItemType File", "-ItemType Directory")
        .replace("Remove-Item $lock", "[System.IO.Directory]::Delete($lock, $true)")
    )
    got = scan(
        tmp_path,
        {"folder.ps1": LOCK_FOLDER, "guarded.ps1": GUARDED_WORK, "guarded_dir.ps1": guarded_dir},
    )
    assert got == {
        "folder.ps1": set(),
        # the creation is the condition of the work and removed after it: a lock
        "guarded.ps1": {("LCK103", 3), ("LCK202", 3)},
        "guarded_dir.ps1": {("LCK103", 3), ("LCK202", 3)},
    }


PID_UNDER_MUTEX = r"""
    $LogFile = 'C:\ProgramData\Watch\watch.log'
    $PidFile = 'C:\ProgramData\Watch\watch.pid'
    function Write-WatchLog([string]$m) { Add-Content -Path $LogFile -Value $m }
    function Enter-Watch {
        $script:Mutex = New-Object System.Threading.Mutex($false, 'Global\CredentialWatch')
        $owned = $script:Mutex.WaitOne(0)
        if (-not $owned) {
            Write-WatchLog 'another watcher holds the mutex'
            exit 75
        }
        if (Test-Path -LiteralPath $PidFile) {
            Write-WatchLog "replacing the record of $(Get-Content $PidFile)"
        }
        Set-Content -LiteralPath $PidFile -Value $PID
    }
    Enter-Watch
    try { Invoke-Watch } finally { Remove-Item -LiteralPath $PidFile; $script:Mutex.ReleaseMutex() }
"""


NO_MUTEX = r"""
    $LogFile = 'C:\ProgramData\Watch\watch.log'
    $PidFile = 'C:\ProgramData\Watch\watch.pid'
    function Write-WatchLog([string]$m) { Add-Content -Path $LogFile -Value $m }
    function Enter-Watch {
        if (Test-Path -LiteralPath $PidFile) {
            Write-WatchLog "another watcher: $(Get-Content $PidFile)"
            exit 75
        }
        Set-Content -LiteralPath $PidFile -Value $PID
    }
    Enter-Watch
    try { Invoke-Watch } finally { Remove-Item -LiteralPath $PidFile }
"""


def test_a_pid_record_written_under_a_held_mutex_is_no_test_then_create(tmp_path):
    got = scan(tmp_path, {"under_mutex.ps1": PID_UNDER_MUTEX, "no_mutex.ps1": NO_MUTEX})
    # the mutex excludes; the PID file only records who holds it
    assert got["under_mutex.ps1"] == set()
    # the same test then create with no lock before it races
    assert got["no_mutex.ps1"] == {("LCK103", 9)}


def test_a_member_of_an_expression_is_shown_as_written(tmp_path):
    src = r"""
        param([string]$RepoPath = 'D:\repos\game')
        $lock = Join-Path (Resolve-Path $RepoPath).Path 'daemon.lock'
        if (Test-Path $lock) { Write-Output 'daemon already running'; exit 0 }
        Set-Content -Path $lock -Value $PID
        try { Invoke-Daemon } finally { Remove-Item $lock }
    """
    p = write(tmp_path, "daemon.ps1", textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--output-format", "concise"]
        + [str(p)],
        capture_output=True,
        text=True,
    )
    assert "`(Resolve-Path $RepoPath).Path/daemon.lock`" in proc.stdout, proc.stdout


MOVED_INTO_PLACE = r"""
    param([string]$Resource = 'browser')
    $lockFile = Join-Path 'C:\ProgramData\Agents\locks' "$Resource.lock"
    if (Test-Path $lockFile) {
        Write-Output "BUSY $Resource"
        exit 1
    }
    $tmp = "$lockFile.tmp.$PID"
    Set-Content -Path $tmp -Value $PID
    Move-Item -Path $tmp -Destination $lockFile -Force
    Write-Output "ACQUIRED $Resource"
"""

MOVED_REPORT = r"""
    $report = 'C:\ProgramData\Agents\out\daily.csv'
    if (Test-Path 'C:\ProgramData\Agents\out') {
        $tmp = "$report.tmp.$PID"
        Export-Data | Set-Content -Path $tmp
        Move-Item -Path $tmp -Destination $report -Force
    }
"""


def test_a_lock_written_aside_and_moved_onto_its_name_is_test_then_create(tmp_path):
    got = scan(tmp_path, {"moved.ps1": MOVED_INTO_PLACE, "report.ps1": MOVED_REPORT})
    assert got == {
        # two runs can both find no lock and both move theirs into place
        "moved.ps1": {("LCK103", 9)},
        # an output published by a rename: nothing tests its own name
        "report.ps1": set(),
    }


FALLS_OFF_END = r"""
    $mutex = [System.Threading.Mutex]::new($false, 'Global\NightlyExport')
    if (-not $mutex.WaitOne(0)) {
        Write-Host 'export already running'
    } else {
        try { Invoke-Export } finally { $mutex.ReleaseMutex() }
    }
"""

WAITS_THEN_WORKS = r"""
    $mutex = [System.Threading.Mutex]::new($false, 'Global\NightlyExport')
    if (-not $mutex.WaitOne(0)) {
        Write-Host 'export already running, waiting for it'
        [void]$mutex.WaitOne()
    }
    try { Invoke-Export } finally { $mutex.ReleaseMutex() }
"""

RECOVERY = r"""
    $LogFile = 'C:\ProgramData\Bot\heartbeat.log'
    $LockFile = 'C:\ProgramData\Bot\recovery.lock'
    function Write-Log([string]$m) { Add-Content -Path $LogFile -Value $m }
    function Enter-Recovery {
        try {
            $fs = [System.IO.File]::Open($LockFile, 'CreateNew', 'Write', 'None')
            $fs.Close()
            return $true
        } catch [System.IO.IOException] {
            return $false
        }
    }
    function Invoke-Recovery {
        if (-not (Enter-Recovery)) {
            NOTE
            return
        }
        try { Restart-Bot } finally { Remove-Item $LockFile }
    }
    if ((Get-Failures) -ge 5) {
        Invoke-Recovery
    }
    Write-Output 'heartbeat done'
    exit 0
"""


def test_a_busy_branch_that_runs_on_to_the_end_of_the_script(tmp_path):
    got = scan(
        tmp_path,
        {
            # falls off the end of the script: exit 0, nothing recorded
            "falls_off_end.ps1": FALLS_OFF_END,
            # waits for the holder, then does the work: no skip at all
            "waits_then_works.ps1": WAITS_THEN_WORKS,
            # `return` from a function called as a statement: the run goes on to `exit 0`
            "recovery_logged.ps1": RECOVERY.replace("NOTE", "Write-Log 'recovery skipped: busy'"),
            "recovery_silent.ps1": RECOVERY.replace("NOTE", "Write-Host 'recovery skipped'"),
            "recovery_then_work.ps1": RECOVERY.replace("NOTE", "Write-Host 'skipped'").replace(
                "Write-Output 'heartbeat done'", "Send-Heartbeat"
            ),
        },
    )
    assert got == {
        "falls_off_end.ps1": {("LCK401", 3)},
        "waits_then_works.ps1": set(),
        "recovery_logged.ps1": {("LCK101", 6), ("LCK402", 24)},
        "recovery_silent.ps1": {("LCK101", 6), ("LCK401", 24)},
        # other work follows the skipped recovery: not the end of the run
        "recovery_then_work.ps1": {("LCK101", 6)},
    }


def test_a_dependency_lockfile_replaced_after_a_test_is_no_lock(tmp_path):
    src = r"""
        Push-Location $ProjectDirectory
        try {
            if (Test-Path 'package-lock.json') {
                Write-Host 'Removing the old package-lock.json'
                Remove-Item -Path 'package-lock.json' -Force
            }
            Copy-Item -Path (Join-Path $PSScriptRoot 'pinned-lock.json') -Destination 'package-lock.json' -Force
            npm ci
        } finally {
            Pop-Location
        }
    """
    assert scan(tmp_path, {"generate.ps1": src}) == {"generate.ps1": set()}
