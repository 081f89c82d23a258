"""PowerShell frontend (tree-sitter-powershell): each rule in several shapes, each beside a
negative, through analyze_text; the CLI on .ps1/.psm1 files and shebangs; the field report's
wrapper rewritten; the LCK109/LCK401 fixes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import write

from lockcheck.engine import analyze_text
from lockcheck.frontends import language_of


def found(src: str, path: str = "C:/jobs/job.ps1") -> list[tuple[str, int]]:
    _facts, findings = analyze_text(path, textwrap.dedent(src).lstrip("\n"), "powershell")
    return [(f.code, f.span.line) for f in findings]


def codes(src: str, path: str = "C:/jobs/job.ps1") -> set[str]:
    return {c for c, _ in found(src, path)}


NEW_ITEM_STOP = """
    $lock = 'C:\\ProgramData\\Export\\export.lock'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host 'export already running'
        exit
    }
    try { Invoke-Export } finally { Remove-Item $lock }
"""

MUTEX_GOOD = """
    $mutex = [System.Threading.Mutex]::new($false, 'Global\\NightlyExport')
    if (-not $mutex.WaitOne(0)) {
        Add-Content -Path 'C:\\ProgramData\\Export\\runs.log' -Value 'skipped: busy'
        exit 75
    }
    try { Invoke-Export } finally { $mutex.ReleaseMutex() }
"""


# --------------------------------------------------------------------------- LCK101 / LCK102


@pytest.mark.parametrize(
    "src, line",
    [
        (NEW_ITEM_STOP, 3),
        (
            """
            $ErrorActionPreference = 'Stop'
            try { New-Item -Path 'C:\\ProgramData\\job\\job.lock' -ItemType File | Out-Null }
            catch { exit 75 }
            """,
            2,
        ),
        (
            """
            $args = @{ Path = 'C:\\ProgramData\\job\\job.lock'; ItemType = 'File'; ErrorAction = 'Stop' }
            try { New-Item @args | Out-Null } catch { exit 75 }
            """,
            2,
        ),
        (
            """
            try {
                $fs = [IO.File]::Open('C:\\ProgramData\\job\\job.lock', 'CreateNew')
            } catch {
                exit 75
            }
            """,
            2,
        ),
        (
            """
            try {
                $fs = [System.IO.File]::Open("C:\\ProgramData\\job\\job.lock", [IO.FileMode]::CreateNew, 'Write', 'None')
            } catch [System.IO.IOException] {
                exit 75
            }
            """,
            2,
        ),
    ],
)
def test_lck101_shapes(src, line):
    assert ("LCK101", line) in found(src)


@pytest.mark.parametrize(
    "src",
    [
        MUTEX_GOOD,
        # a New-Item that is not the test of a busy branch
        "New-Item -ItemType Directory -Path 'C:\\ProgramData\\job\\out' -Force | Out-Null\n",
        # CreateNew of an output file with no busy branch
        "$fs = [IO.File]::Open('C:\\out\\report.csv', 'CreateNew')\n$fs.Close()\n",
    ],
)
def test_lck101_negatives(src):
    assert "LCK101" not in codes(src)


def test_lck102_onedrive():
    src = """
        $lock = Join-Path $env:OneDrive 'jobs\\sync.lock'
        try { New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null } catch { exit 75 }
    """
    assert ("LCK102", 2) in found(src)
    assert "LCK102" not in codes(src.replace("$env:OneDrive", "'C:\\ProgramData'"))
    commercial = src.replace("$env:OneDrive", "$env:OneDriveCommercial")
    assert "LCK102" in codes(commercial)
    home = src.replace(
        "Join-Path $env:OneDrive", 'Join-Path "$env:USERPROFILE\\OneDrive - Contoso"'
    )
    assert "LCK102" in codes(home)


# --------------------------------------------------------------------------- LCK103


def test_lck103_test_path_then_create():
    src = """
        $pidFile = "C:\\ProgramData\\job\\job.pid"
        if (Test-Path $pidFile) {
            Write-Host 'running'
            exit 1
        }
        $PID | Out-File -FilePath $pidFile
        try { Invoke-Job } finally { Remove-Item $pidFile }
    """
    assert ("LCK103", 6) in found(src)


def test_lck103_negated_and_set_content():
    src = """
        $lock = 'C:\\ProgramData\\job\\job.lock'
        if (-not (Test-Path $lock)) {
            Set-Content -Path $lock -Value $PID
            Invoke-Job
            Remove-Item $lock
        }
    """
    assert ("LCK103", 3) in found(src)


def test_lck103_not_for_run_once_marker():
    src = """
        $marker = 'C:\\ProgramData\\job\\initialised'
        if (-not (Test-Path $marker)) {
            Initialize-Job
            Set-Content -Path $marker -Value 'done'
        }
    """
    assert "LCK103" not in codes(src)


# --------------------------------------------------------------------------- LCK105 / 106 / 108


def test_lck105_and_lck106():
    src = """
        $pidFile = 'C:\\ProgramData\\job\\job.pid'
        if (Test-Path $pidFile) {
            $holder = Get-Process -Id (Get-Content $pidFile) -ErrorAction SilentlyContinue
            if ($holder) { exit 1 }
            Remove-Item $pidFile
        }
    """
    got = found(src)
    assert ("LCK105", 3) in got and ("LCK106", 5) in got


def test_lck105_status_report_only():
    src = """
        $p = Get-Process -Id (Get-Content 'C:\\ProgramData\\job\\job.pid')
        Write-Host "holder: $($p.Name)"
    """
    assert "LCK105" not in codes(src)


def test_lck108_stop_process_stored_pid():
    src = """
        $old = Get-Content 'C:\\ProgramData\\job\\job.pid'
        Stop-Process -Id $old -Force
    """
    assert ("LCK108", 2) in found(src)
    assert "LCK108" not in codes("Stop-Process -Id $child.Id\n")


# --------------------------------------------------------------------------- LCK109


@pytest.mark.parametrize(
    "cmd",
    [
        "New-Item -ItemType File -Path $lock -Force",
        "New-Item -ItemType File -Path $lock -ErrorAction SilentlyContinue",
        "New-Item -ItemType File -Path $lock",
        "New-Item -ItemType File -Path $lock -EA Ignore",
    ],
)
def test_lck109_new_item_that_cannot_fail(cmd):
    src = f"""
        $lock = 'C:\\ProgramData\\job\\job.lock'
        try {{
            {cmd} | Out-Null
        }} catch {{
            exit 75
        }}
    """
    assert ("LCK109", 3) in found(src)
    assert "LCK101" not in codes(src)


def test_lck109_not_with_stop_or_preference():
    assert "LCK109" not in codes(NEW_ITEM_STOP)
    pref = """
        $ErrorActionPreference = 'Stop'
        try { New-Item -ItemType File -Path 'C:\\ProgramData\\job\\job.lock' | Out-Null }
        catch { exit 75 }
    """
    assert "LCK109" not in codes(pref) and "LCK101" in codes(pref)
    splat = """
        $p = @{ Path = 'C:\\ProgramData\\job\\job.lock'; ItemType = 'File'; ErrorAction = 'Stop' }
        try { New-Item @p | Out-Null } catch { exit 75 }
    """
    assert "LCK109" not in codes(splat)
    assert "LCK109" in codes(splat.replace("'Stop'", "'SilentlyContinue'"))


def test_lck109_fix_drops_force_and_adds_stop(tmp_path):
    src = "$lock = 'C:\\ProgramData\\job\\job.lock'\ntry { New-Item -ItemType File -Path $lock -Force | Out-Null } catch { exit 75 }\n"
    p = write(tmp_path, "job.ps1", src)
    cmd = [sys.executable, "-m", "lockcheck", "check", "--select", "LCK109", "--fix", str(p)]
    subprocess.run(cmd, capture_output=True, text=True)
    assert p.read_text() == src, "an unsafe fix must not be applied without --unsafe-fixes"
    subprocess.run(cmd + ["--unsafe-fixes"], capture_output=True, text=True)
    fixed = p.read_text()
    assert "-Force" not in fixed and "-ErrorAction Stop" in fixed, fixed
    _f, findings = analyze_text(str(p), fixed, "powershell")
    assert "LCK109" not in {f.code for f in findings} and "LCK101" in {f.code for f in findings}


# --------------------------------------------------------------------------- LCK201


def test_lck201_fileshare_none_handle_removed():
    src = """
        $path = 'C:\\ProgramData\\job\\job.lock'
        $h = [IO.File]::Open($path, 'OpenOrCreate', 'ReadWrite', 'None')
        try { Invoke-Job } finally { $h.Dispose(); Remove-Item $path }
    """
    assert ("LCK201", 3) in found(src)
    assert "LCK201" not in codes(src.replace("; Remove-Item $path", ""))


# --------------------------------------------------------------------------- LCK202 / LCK203


def test_lck202_trap_is_not_every_path():
    src = """
        $lock = 'C:\\ProgramData\\job\\job.lock'
        try { New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null } catch { exit 75 }
        trap { Remove-Item $lock; break }
        Invoke-Job
        Remove-Item $lock
    """
    assert ("LCK202", 2) in found(src)
    assert "LCK202" not in codes(NEW_ITEM_STOP)


def test_lck203_finally_around_busy():
    src = """
        $lock = 'C:\\ProgramData\\job\\job.lock'
        try {
            try { New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null } catch { exit 75 }
            Invoke-Job
        } finally {
            Remove-Item $lock
        }
    """
    assert ("LCK203", 2) in found(src)
    assert "LCK203" not in codes(NEW_ITEM_STOP)


def test_no_lck203_from_a_trap():
    src = """
        $lock = 'C:\\ProgramData\\job\\job.lock'
        trap { Remove-Item $lock }
        try { New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null } catch { exit 75 }
        try { Invoke-Job } finally { Remove-Item $lock }
    """
    assert "LCK203" not in codes(src)


# --------------------------------------------------------------------------- LCK401 / LCK402 / LCK407


@pytest.mark.parametrize(
    "busy, zero",
    [
        ("exit", True),
        ("exit 0", True),
        ("return", True),
        ("exit 75", False),
        ("throw 'busy'", False),
    ],
)
def test_lck401_busy_exit_status(busy, zero):
    src = NEW_ITEM_STOP.replace("        exit\n", f"        {busy}\n")
    assert ("LCK401" in codes(src)) is zero


def test_lck401_function_returns_to_caller():
    src = """
        function Get-JobLock {
            param([string]$Path)
            try { New-Item -ItemType File -Path $Path -ErrorAction Stop | Out-Null; return $true }
            catch { return $false }
        }
        if (-not (Get-JobLock -Path 'C:\\ProgramData\\job\\job.lock')) {
            Write-Host 'busy'
            exit
        }
    """
    assert ("LCK401", 8) in found(src)


def test_lck402_durable_records():
    for record in (
        "Add-Content -Path $log -Value 'busy'",
        "'busy' | Out-File $log -Append",
        "'busy' >> $log",
        "Write-EventLog -LogName Application -Source Job -EventId 1 -Message busy",
    ):
        src = NEW_ITEM_STOP.replace("Write-Host 'export already running'", record)
        got = codes(src)
        assert "LCK402" in got and "LCK401" not in got, record


MUTEX_BARE = """
    $mutex = {ctor}
    if (-not $mutex.WaitOne(0)) {{
        Write-Host 'busy'
        exit
    }}
    try {{ Invoke-Export }} finally {{ $mutex.ReleaseMutex() }}
"""


def test_lck401_mutex_busy_and_fix(tmp_path):
    src = MUTEX_BARE.format(ctor="[System.Threading.Mutex]::new($false, 'Global\\NightlyExport')")
    assert ("LCK401", 4) in found(src) and "LCK407" not in codes(src)
    p = write(tmp_path, "job.ps1", textwrap.dedent(src).lstrip("\n"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lockcheck",
            "check",
            "--select",
            "LCK401",
            "--fix",
            "--unsafe-fixes",
            str(p),
        ],
        capture_output=True,
        text=True,
    )
    assert "exit 75" in p.read_text()


@pytest.mark.parametrize(
    "ctor",
    [
        "[System.Threading.Mutex]::new($false, 'NightlyExport')",
        "New-Object System.Threading.Mutex($false, 'Local\\NightlyExport')",
        "New-Object -TypeName System.Threading.Mutex -ArgumentList $false, 'NightlyExport'",
        "[Threading.Mutex]::new($false, 'Global\u00a5NightlyExport')",
    ],
)
def test_lck407_session_local_mutex(ctor):
    assert ("LCK407", 1) in found(MUTEX_BARE.format(ctor=ctor))


def test_lck407_negative():
    assert "LCK407" not in codes(MUTEX_GOOD)
    assert codes(MUTEX_GOOD) == set()
    unnamed = MUTEX_BARE.format(ctor="[System.Threading.Mutex]::new($false)")
    assert "LCK407" not in codes(unnamed)


# --------------------------------------------------------------------------- LCK501 / LCK502


@pytest.mark.parametrize(
    "expr",
    [
        "Join-Path $PSScriptRoot 'job.lock'",
        '"$PSScriptRoot\\job.lock"',
        "Join-Path (Split-Path -Parent $MyInvocation.MyCommand.Path) 'job.lock'",
        "'.\\job.lock'",
        "'job.lock'",
    ],
)
def test_lck501_beside_script(expr):
    src = f"""
        $lock = {expr}
        try {{ New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null }} catch {{ exit 75 }}
    """
    assert ("LCK501", 2) in found(src)


def test_lck501_negative_and_env_temp_not_flagged_by_default():
    assert "LCK501" not in codes(NEW_ITEM_STOP)
    temp = NEW_ITEM_STOP.replace(
        "'C:\\\\ProgramData\\\\Export\\\\export.lock'", "Join-Path $env:TEMP 'export.lock'"
    )
    assert "LCK502" not in codes(temp) and "LCK501" not in codes(temp)


# --------------------------------------------------------------------------- suppressions, parse errors


def test_suppression_comments():
    base = textwrap.dedent(NEW_ITEM_STOP).lstrip("\n")
    noqa = base.replace("| Out-Null", "| Out-Null  # noqa: LCK101")
    _f, fs = analyze_text("j.ps1", noqa, "powershell")
    assert "LCK101" not in {f.code for f in fs} and "LCK401" in {f.code for f in fs}
    block = base.replace("| Out-Null", "| Out-Null  <# noqa: LCK101 #>")
    _f, fs = analyze_text("j.ps1", block, "powershell")
    assert "LCK101" in {f.code for f in fs}
    disable = "# lockcheck: disable-file=LCK401\n" + base
    _f, fs = analyze_text("j.ps1", disable, "powershell")
    assert "LCK401" not in {f.code for f in fs}


def test_no_lck000_for_valid_powershell_7_the_grammar_rejects():
    # tree-sitter-powershell cannot read `??`; the file is valid: no LCK000, and the lock
    # after the unreadable line is still analysed
    src = "$name = $env:JOB ?? 'export'\n" + NEW_ITEM_STOP
    got = codes(src)
    assert "LCK000" not in got and "LCK401" in got


# --------------------------------------------------------------------------- the field report


SEED_WRAPPER = """
    $ErrorActionPreference = 'Stop'
    $here = Split-Path -Parent $MyInvocation.MyCommand.Path
    $log = Join-Path $here 'export.log'
    "$(Get-Date -Format s) start" | Out-File -FilePath $log -Append -Encoding utf8
    try {
        & node (Join-Path $here 'export.js') 2>&1 | Out-File -FilePath $log -Append -Encoding utf8
        $code = $LASTEXITCODE
    } catch {
        "$(Get-Date -Format s) wrapper error: $($_.Exception.Message)" | Out-File -FilePath $log -Append
        $code = 1
    }
    "$(Get-Date -Format s) end ($code)" | Out-File -FilePath $log -Append -Encoding utf8
    exit $code
"""


def test_field_report_wrapper_is_clean():
    # the wrapper takes no lock itself; it passes the Node exit status on, so nothing to flag
    assert codes(SEED_WRAPPER) == set()


def test_field_report_powershell_variant():
    """The report's closing remark: New-Item -ErrorAction Stop as the 'wx' of PowerShell, the
    lock beside the script, exit 0 when busy, PID check and overwrite."""
    src = """
        $lock = Join-Path $PSScriptRoot 'export.lock'
        try {
            New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
        } catch {
            $holder = Get-Process -Id (Get-Content $lock) -ErrorAction SilentlyContinue
            if ($holder) { Write-Host 'still running'; exit 0 }
            Set-Content -Path $lock -Value $PID
        }
        try { & node (Join-Path $PSScriptRoot 'export.js') } finally { Remove-Item $lock }
    """
    got = codes(src)
    assert {"LCK101", "LCK501", "LCK105", "LCK106", "LCK401"} <= got, got


# --------------------------------------------------------------------------- CLI and discovery


def test_language_of():
    assert language_of("a.ps1", b"") == "powershell" and language_of("a.psm1", b"") == "powershell"
    assert language_of("job", b"#!/usr/bin/env pwsh\n") == "powershell"
    assert language_of("a.psd1", b"") is None


def test_cli(tmp_path):
    write(tmp_path, "tasks/export.ps1", textwrap.dedent(NEW_ITEM_STOP).lstrip("\n"))
    write(tmp_path, "tasks/good.ps1", textwrap.dedent(MUTEX_GOOD).lstrip("\n"))
    write(
        tmp_path, "tasks/run", "#!/usr/bin/env pwsh\n" + textwrap.dedent(NEW_ITEM_STOP).lstrip("\n")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    rows = {(r["filename"].rsplit("/", 1)[-1], r["code"]) for r in json.loads(proc.stdout)}
    assert ("export.ps1", "LCK401") in rows and ("run", "LCK401") in rows
    assert not any(name == "good.ps1" for name, _ in rows)


def test_output_folder_idioms_are_not_locks():
    """Seen in public admin scripts: "create it if missing" and a catch that reports a failed
    creation are not locks (no LCK101/103/109/202)."""
    ensure = """
        $out = Join-Path $env:ProgramData 'Reports'
        if (-not (Test-Path $out)) { New-Item -Path $out -ItemType Directory | Out-Null }
        Export-Report -Path $out
        Remove-Item $out -Recurse
    """
    handler = """
        try {
            New-Item -Path $ReportFolder -ItemType Directory -ErrorAction Stop | Out-Null
        } catch {
            Write-Error "cannot create $ReportFolder"
            exit 1
        }
    """
    assert codes(ensure) == set() and codes(handler) == set()
    skip = handler.replace("exit 1", "exit 0")
    assert "LCK401" in codes(skip)


def test_output_guard_that_throws_is_not_a_lock():
    """PowerShell's packaging module: refuse to overwrite an output file (throw), else write."""
    src = """
        function Export-Perms {
            param([string]$FilePath)
            if (Test-Path $FilePath) {
                throw "File '$FilePath' already exists."
            }
            @{} | ConvertTo-Json | Out-File -FilePath $FilePath
            Remove-Item $FilePath
        }
    """
    assert codes(src) == set()


def test_item_assigned_from_new_item_is_the_scripts_own():
    src = """
        $flag = New-Item 'C:\\ProgramData\\job\\child.lock' -ItemType File
        Start-Process pwsh -ArgumentList '-File', 'child.ps1'
        Remove-Item $flag
    """
    assert "LCK107" not in codes(src)
    assert "LCK107" in codes("Remove-Item 'C:\\ProgramData\\job\\child.lock'\n")
