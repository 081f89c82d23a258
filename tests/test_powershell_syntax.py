"""PowerShell syntax that tree-sitter-powershell 0.26 lacks or misreads, near a lock (issue
#14): ``class`` and ``enum`` definitions (a class method's ``return`` goes back to its
caller), the ternary, ``??`` and ``??=``, number suffixes, generic type names, here-strings,
``${braced}`` names.  Realistic scheduled-task scripts through the CLI, each finding (or its
absence) checked, and no LCK000 on any of them: every one is valid PowerShell 7."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from helpers import scan_files, write


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


CLASS_LOCK = r"""
    class JobLock {
        [string]$Path
        JobLock([string]$path) { $this.Path = $path }
        [bool] TryAcquire() {
            try {
                New-Item -ItemType File -Path $this.Path -ErrorAction Stop | Out-Null
                return $true
            } catch {
                return $false
            }
        }
        [void] Release() { Remove-Item -LiteralPath $this.Path -ErrorAction SilentlyContinue }
    }

    $lock = [JobLock]::new('C:\ProgramData\Export\export.lock')
    if (-not $lock.TryAcquire()) {
        Write-Host 'export already running'
        exit 0
    }
    try { Invoke-Export } finally { $lock.Release() }
"""

CLASS_OK = r"""
    [Flags()] enum Channels { None = 0; Mail = 1; Teams = 2 }
    enum ExitCode : byte { Ok = 0; Failed = 1; Busy = 75 }

    class Notifier {
        [Channels]$Channels
        Notifier([Channels]$c) { $this.Channels = $c }
        [string] Subject([bool]$ok) {
            if ($ok) { return 'export done' }
            return 'export failed'
        }
    }
    class MailNotifier : Notifier {
        MailNotifier() : base([Channels]::Mail) { }
    }

    $mutex = [System.Threading.Mutex]::new($false, 'Global\NightlyExport')
    if (-not $mutex.WaitOne(0)) {
        Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'skipped: busy'
        exit [int][ExitCode]::Busy
    }
    try {
        $n = [MailNotifier]::new()
        Invoke-Export
        Send-Report $n.Subject($true)
    } finally {
        $mutex.ReleaseMutex()
    }
"""

COALESCE_SYNCED = r"""
    $root = $env:OneDrive ?? "$env:USERPROFILE\OneDrive"
    $lock = Join-Path $root 'jobs\photo-sync.lock'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\PhotoSync\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-PhotoSync } finally { Remove-Item $lock }
"""

COALESCE_LOCAL = r"""
    $root = $env:PHOTOSYNC_STATE ?? 'C:\ProgramData\PhotoSync'
    $lock = Join-Path $root 'photo-sync.lock'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\PhotoSync\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-PhotoSync } finally { Remove-Item $lock }
"""

COALESCE_ASSIGN = r"""
    param([string]$LockName)
    $LockName ??= 'report.lock'
    $lock = Join-Path $PSScriptRoot $LockName
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path 'C:\ProgramData\Report\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-Report } finally { Remove-Item $lock }
"""

TERNARY_ZERO = r"""
    param([switch]$Strict)
    $lock = 'C:\ProgramData\Export\export.lock'
    $mode = $Strict ? 'strict' : 'lenient'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host "export already running ($mode)"
        exit 0
    }
    try { Invoke-Export -Mode $mode } finally { Remove-Item $lock }
"""

TERNARY_EXIT = r"""
    param([switch]$Strict)
    $lock = 'C:\ProgramData\Export\export.lock'
    $mode = $Strict ? 'strict' : 'lenient'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host "export already running ($mode)"
        exit ($Strict ? 75 : 0)
    }
    try { Invoke-Export -Mode $mode } finally { Remove-Item $lock }
"""

NUMBERS = r"""
    $lock = 'C:\ProgramData\Logs\rotate.lock'
    $limit = 0x1F
    $wait = 1e3
    $max = 5L
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        if ((Get-Item 'C:\ProgramData\Logs\app.log').Length -gt 512MB) { Write-Host 'log is big' }
        Write-Host 'rotation already running'
        exit
    }
    try {
        Get-ChildItem 'C:\ProgramData\Logs' -Filter *.log |
            Where-Object { $_.Length -gt 10MB } |
            ForEach-Object { Compress-Archive $_.FullName "$($_.FullName).zip"; Start-Sleep -Milliseconds $wait }
    } finally {
        Remove-Item $lock
    }
"""

GENERICS = r"""
    using namespace System.Collections.Generic
    $lock = 'C:\ProgramData\Inventory\inventory.lock'
    $hosts = [System.Collections.Generic.List[string]]::new()
    $seen = [Dictionary[string, List[int]]]::new()
    [List[string]]$names = @()
    try {
        $fs = [System.IO.File]::Open($lock, 'CreateNew')
    } catch {
        Write-Host 'inventory already running'
        exit 0
    }
    try { $hosts.Add($env:COMPUTERNAME) } finally { $fs.Dispose(); Remove-Item $lock }
"""

HERESTRING = r"""
    $lock = 'C:\ProgramData\Mail\digest.lock'
    $body = @"
    Digest for $(Get-Date -Format d)
      try { exit 0 } catch { }
    "@
    $query = @'
    SELECT name FROM jobs WHERE state = 'busy' -- ' } {
    '@
    if (Test-Path $lock) {
        Write-Host 'digest already running'
        exit 0
    }
    Set-Content -Path $lock -Value $PID
    try { Send-Digest -Body $body -Query $query } finally { Remove-Item $lock }
"""

BRACED = r"""
    ${lock file} = "${env:ProgramData}\Backup\backup.lock"
    ${log-file} = 'C:\ProgramData\Backup\backup.log'
    try {
        New-Item -ItemType File -Path ${lock file} -ErrorAction Stop | Out-Null
    } catch {
        Add-Content -Path ${log-file} -Value "skipped: ${lock file} is held"
        exit 0
    }
    try { Invoke-Backup } finally { Remove-Item ${lock file} }
"""


EXPECTED = {
    # a class method's `return $false` goes back to `if (-not $lock.TryAcquire())`, whose
    # branch exits 0; `$this.Path` is the constructor's argument
    "class_lock.ps1": (CLASS_LOCK, {("LCK101", 6), ("LCK401", 18)}),
    # [Flags()] enum, `enum E : byte`, `: base(...)`, method returns: a correct mutex job
    "class_ok.ps1": (CLASS_OK, set()),
    # `$env:OneDrive ?? ...` is the OneDrive root (with a default): a synced folder
    "coalesce_synced.ps1": (COALESCE_SYNCED, {("LCK102", 4)}),
    "coalesce_local.ps1": (COALESCE_LOCAL, {("LCK101", 4)}),
    # `$LockName ??= 'report.lock'` beside the script
    "coalesce_assign.ps1": (COALESCE_ASSIGN, {("LCK101", 5), ("LCK501", 5)}),
    # a ternary near the lock: the busy branch's `exit 0` is still read
    "ternary_zero.ps1": (TERNARY_ZERO, {("LCK101", 5), ("LCK401", 8)}),
    # `exit ($Strict ? 75 : 0)`: a status not known statically is no LCK401
    "ternary_exit.ps1": (TERNARY_EXIT, {("LCK101", 5)}),
    # `512MB` in the catch, `10MB` in the pipeline: the finally still releases (no LCK202)
    "numbers.ps1": (NUMBERS, {("LCK101", 6), ("LCK401", 10)}),
    "generics.ps1": (GENERICS, {("LCK101", 7), ("LCK401", 10)}),
    # `exit 0` and braces inside here-strings are text, not code
    "herestring.ps1": (HERESTRING, {("LCK401", 11), ("LCK103", 13)}),
    # `${lock file}` is one variable; the skip is logged with Add-Content: LCK402, not LCK401
    "braced.ps1": (BRACED, {("LCK101", 4), ("LCK402", 7)}),
}


def test_scripts_with_newer_syntax_near_a_lock(tmp_path):
    got = scan(tmp_path, {name: src for name, (src, _want) in EXPECTED.items()})
    assert {name: rows for name, rows in got.items()} == {
        name: want for name, (_src, want) in EXPECTED.items()
    }


def test_coalesced_root_renders_with_its_default(tmp_path):
    write(tmp_path, "job.ps1", textwrap.dedent(COALESCE_LOCAL).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--output-format"]
        + ["concise", str(tmp_path / "job.ps1")],
        capture_output=True,
        text=True,
    )
    assert "`${PHOTOSYNC_STATE:-C:/ProgramData/PhotoSync}/photo-sync.lock`" in proc.stdout


CLASS_BESIDE_SCRIPT = r"""
    class JobLock {
        [string]$Path
        JobLock([string]$path) { $this.Path = $path }
        [bool] TryAcquire() {
            try {
                New-Item -ItemType File -Path $this.Path -ErrorAction Stop | Out-Null
                return $true
            } catch {
                return $false
            }
        }
        [void] Release() { Remove-Item -LiteralPath $this.Path }
    }

    $lock = [JobLock]::new((Join-Path $PSScriptRoot 'export.lock'))
    if (-not $lock.TryAcquire()) {
        Add-Content -Path 'C:\ProgramData\Export\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-Export } finally { $lock.Release() }
"""

CLASS_DEFAULT_SYNCED = r"""
    class SyncLock {
        [string]$Path = "$env:OneDrive\jobs\photo-sync.lock"
        [bool] TryAcquire() {
            try {
                New-Item -ItemType File -Path $this.Path -ErrorAction Stop | Out-Null
                return $true
            } catch {
                return $false
            }
        }
    }

    $lock = [SyncLock]::new()
    if (-not $lock.TryAcquire()) {
        Add-Content -Path 'C:\ProgramData\PhotoSync\runs.log' -Value 'busy'
        exit 75
    }
    try { Invoke-PhotoSync } finally { Remove-Item "$env:OneDrive\jobs\photo-sync.lock" }
"""

CLASS_TWO_PATHS = CLASS_BESIDE_SCRIPT.replace(
    "    if (-not $lock.TryAcquire()) {",
    "    $other = [JobLock]::new('C:\\ProgramData\\Export\\other.lock')\n"
    "    if (-not $lock.TryAcquire()) {",
)


def test_a_class_property_resolves_through_the_constructor(tmp_path):
    got = scan(
        tmp_path,
        {
            "beside.ps1": CLASS_BESIDE_SCRIPT,
            "synced.ps1": CLASS_DEFAULT_SYNCED,
            "two_paths.ps1": CLASS_TWO_PATHS,
        },
    )
    assert got == {
        # `[JobLock]::new((Join-Path $PSScriptRoot ...))` -> `$this.Path`: beside the script
        "beside.ps1": {("LCK101", 6), ("LCK501", 6)},
        # the property's declared default, in OneDrive
        "synced.ps1": {("LCK102", 5)},
        # two objects with different paths: the property is not one path (never guessed)
        "two_paths.ps1": {("LCK101", 6)},
    }
