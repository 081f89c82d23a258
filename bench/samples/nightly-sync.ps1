<#
Nightly sync job (benchmark sample): mirrors a source tree to a backup share under a
New-Item lock file, with a PID check for a leftover lock.
#>
param(
    [string] $Source = 'D:\Data',
    [string] $Target = '\\backup01\data'
)

$lock = Join-Path $PSScriptRoot 'nightly-sync.lock'
$log = Join-Path $env:ProgramData 'NightlySync\sync.log'

function Write-Log([string] $Message) {
    Add-Content -Path $log -Value "$(Get-Date -Format o) $Message"
}

if (Test-Path $lock) {
    $holder = Get-Content $lock
    if (Get-Process -Id $holder -ErrorAction SilentlyContinue) {
        Write-Host 'sync already running'
        exit
    }
    Remove-Item $lock -Force
}

try {
    New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    Set-Content -Path $lock -Value $PID
} catch {
    Write-Host 'could not take the lock'
    exit 0
}

try {
    robocopy $Source $Target /MIR /R:2 /W:5 | Out-Null
    Write-Log "robocopy exited $LASTEXITCODE"
    if ($LASTEXITCODE -ge 8) { exit 1 }
} finally {
    Remove-Item $lock -ErrorAction SilentlyContinue
}
