"""``lockcheck init --powershell``: the single-instance wrapper as a PowerShell script.

A named mutex with the ``Global\\`` prefix (a scheduled task runs in another logon session
than an interactive run: a session-local name would not exclude it), taken with
``WaitOne(0)``; an ``AbandonedMutexException`` (the previous holder died holding it) means
the mutex is ours now; released in ``finally``.  The mutex leaves no file behind, so there
is nothing to clean up and nothing a synced folder can seal.  Exit 75 when busy, 3 when the
mutex cannot be opened, 64 on a usage error, else the command's own status; every run
appends a line to a ledger."""

TEMPLATE = r"""#Requires -Version 5.1
<#
Single-instance wrapper for the slot "@SLOT@" (made by `lockcheck init --powershell`).

  usage: pwsh -NoProfile -File @NAME@ COMMAND [ARG...]
         (Windows PowerShell: powershell.exe -NoProfile -ExecutionPolicy Bypass -File ...)

Runs COMMAND while holding the named mutex Global\lockcheck-@SLOT@, which every logon
session sees (a scheduled task and an interactive run exclude each other).  The mutex dies
with the process that holds it: no lock file, nothing to clean up.
Exit status: COMMAND's own status when it ran; 75 (EX_TEMPFAIL) when another run holds the
mutex, so a skip is never mistaken for success; 3 when the mutex cannot be opened (another
user's run created it with an ACL that refuses us); 64 on a usage error.
Every run appends one line per event (acquired, skipped, released, failed) to the ledger
$env:LOCKCHECK_LEDGER (default: <LocalApplicationData>\lockcheck\@SLOT@.log).
#>
param(
    [Parameter(Position = 0)] [string] $Command,
    [Parameter(Position = 1, ValueFromRemainingArguments = $true)] [string[]] $Arguments = @()
)
Set-StrictMode -Version 3.0

$Slot = '@SLOT@'
$Ledger = $env:LOCKCHECK_LEDGER
if (-not $Ledger) {
    $Ledger = Join-Path ([Environment]::GetFolderPath('LocalApplicationData')) "lockcheck/$Slot.log"
}

function Write-Record([string] $Message) {
    $stamp = [DateTime]::UtcNow.ToString('yyyy-MM-ddTHH:mm:ssZ')
    try {
        $dir = Split-Path -Parent $Ledger
        if ($dir) { [void][IO.Directory]::CreateDirectory($dir) }
        Add-Content -LiteralPath $Ledger -Value "$stamp`t$Slot`t$PID`t$Message" -ErrorAction Stop
    } catch {
        [Console]::Error.WriteLine("${Slot}: $Message (ledger $Ledger is not writable: $($_.Exception.Message))")
    }
}

if (-not $Command) {
    [Console]::Error.WriteLine('usage: @NAME@ COMMAND [ARG...]')
    exit 64
}

try {
    $mutex = [System.Threading.Mutex]::new($false, "Global\lockcheck-$Slot")
} catch {
    Write-Record "failed: cannot open the mutex Global\lockcheck-${Slot}: $($_.Exception.Message)"
    exit 3
}

$owned = $false
$status = 0
try {
    try {
        $owned = $mutex.WaitOne(0)
    } catch [System.Threading.AbandonedMutexException] {
        # the previous holder ended without releasing it: the mutex is ours now
        $owned = $true
        Write-Record 'note: the previous run ended without releasing the mutex'
    }
    if (-not $owned) {
        Write-Record 'skipped'
        exit 75
    }
    Write-Record 'acquired'
    try {
        $global:LASTEXITCODE = 0
        & $Command @Arguments
        $status = if ($?) { [int]$LASTEXITCODE } elseif ($LASTEXITCODE) { [int]$LASTEXITCODE } else { 1 }
    } catch {
        [Console]::Error.WriteLine("${Slot}: cannot run ${Command}: $($_.Exception.Message)")
        $status = 127
    }
    Write-Record "released status=$status"
} finally {
    if ($owned) { $mutex.ReleaseMutex() }
    $mutex.Dispose()
}
exit $status
"""
