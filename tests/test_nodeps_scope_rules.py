"""LCK301 (fixed probe name), LCK405 (background child in the lock scope) and LCK406 (open
failure read as busy) in Node.js and PowerShell scripts: each in several shapes beside a
negative, through one CLI run over a tree of realistic job scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import write

JS_FLOCK = """
    const fs = require("fs");
    const { flockSync } = require("fs-ext");
"""

# (file, source, the (code, line) findings of LCK301/405/406 expected there)
CASES: dict[str, tuple[str, set[tuple[str, int]]]] = {
    # ---------------------------------------------------------------- LCK406, JavaScript
    "js406_open_in_try.js": (
        JS_FLOCK
        + """
    let fd;
    try {
      fd = fs.openSync("/var/lib/sync/sync.lock", "a");
      flockSync(fd, "exnb");
    } catch (e) {
      console.error("another sync is running");
      process.exit(75);
    }
    """,
        {("LCK406", 6)},
    ),
    "js406_const_in_try.mjs": (
        """
    import { openSync } from "node:fs";
    import fsExt from "fs-ext";
    try {
      const fd = openSync("/var/lib/sync/sync.lock", "a");
      fsExt.flockSync(fd, "exnb");
    } catch {
      process.exit(75);
    }
    """,
        {("LCK406", 4)},
    ),
    "js406_neg_code_tested.js": (
        JS_FLOCK
        + """
    let fd;
    try {
      fd = fs.openSync("/var/lib/sync/sync.lock", "a");
      flockSync(fd, "exnb");
    } catch (e) {
      if (e.code === "EAGAIN") { console.error("busy"); process.exit(75); }
      throw e;
    }
    """,
        set(),
    ),
    "js406_neg_open_before.js": (
        JS_FLOCK
        + """
    const fd = fs.openSync("/var/lib/sync/sync.lock", "a");
    try {
      flockSync(fd, "exnb");
    } catch (e) {
      process.exit(75);
    }
    """,
        set(),
    ),
    # ---------------------------------------------------------------- LCK406, PowerShell
    "ps406_handle_catch_all.ps1": (
        """
    try {
        $h = [IO.File]::Open('C:\\ProgramData\\Sync\\sync.lock', 'OpenOrCreate', 'ReadWrite', 'None')
    } catch {
        Write-Host 'sync already running'
        exit 75
    }
    try { Invoke-Sync } finally { $h.Dispose() }
    """,
        {("LCK406", 2)},
    ),
    "ps406_handle_ioexception.ps1": (
        """
    try {
        $h = [System.IO.File]::Open("$env:ProgramData\\Sync\\sync.lock", [IO.FileMode]::OpenOrCreate, [IO.FileAccess]::ReadWrite, [IO.FileShare]::None)
    } catch [System.IO.IOException] {
        exit 75
    }
    """,
        {("LCK406", 2)},
    ),
    "ps406_mutex_ctor_in_try.ps1": (
        """
    try {
        $m = [System.Threading.Mutex]::new($false, 'Global\\NightlySync')
        if (-not $m.WaitOne(0)) { Write-Host 'busy'; exit 75 }
    } catch {
        Write-Host 'sync already running'
        exit 0
    }
    try { Invoke-Sync } finally { $m.ReleaseMutex() }
    """,
        {("LCK406", 2)},
    ),
    "ps406_neg_hresult.ps1": (
        """
    try {
        $h = [IO.File]::Open('C:\\ProgramData\\Sync\\sync.lock', 'OpenOrCreate', 'ReadWrite', 'None')
    } catch [System.IO.IOException] {
        if (($_.Exception.HResult -band 0xFFFF) -in 32, 33) { Write-Host 'busy'; exit 75 }
        throw
    }
    """,
        set(),
    ),
    "ps406_neg_mutex_outside_try.ps1": (
        """
    $m = [System.Threading.Mutex]::new($false, 'Global\\NightlySync')
    try {
        if (-not $m.WaitOne(0)) { Write-Host 'busy'; exit 75 }
    } catch [System.Threading.AbandonedMutexException] {
        Write-Host 'previous run died holding the mutex; continuing'
    }
    try { Invoke-Sync } finally { $m.ReleaseMutex() }
    """,
        set(),
    ),
    # ---------------------------------------------------------------- LCK405, JavaScript
    "js405_detached.js": (
        JS_FLOCK
        + """
    const { spawn } = require("child_process");
    const fd = fs.openSync("/var/lib/sync/sync.lock", "a");
    try { flockSync(fd, "exnb"); } catch (e) { if (e.code === "EAGAIN") process.exit(75); throw e; }
    const child = spawn("rsync", ["-a", "/srv/src/", "/srv/dst/"], { detached: true, stdio: "ignore" });
    child.unref();
    """,
        {("LCK405", 7)},
    ),
    "js405_unref.mjs": (
        """
    import fs from "node:fs";
    import { execFile } from "node:child_process";
    const LOCK = "/var/lib/sync/sync.lock";
    try { fs.mkdirSync(LOCK); } catch (e) { if (e.code === "EEXIST") process.exit(75); throw e; }
    process.on("exit", () => fs.rmdirSync(LOCK));
    const p = execFile("/usr/local/bin/reindex");
    p.unref();
    """,
        {("LCK405", 6)},
    ),
    "js405_finally.js": (
        """
    const fs = require("fs");
    const cp = require("child_process");
    const LOCK = "/var/lib/sync/sync.lock";
    try { fs.openSync(LOCK, "wx"); } catch (e) { console.error("busy"); process.exit(75); }
    try {
      cp.spawn("rsync", ["-a", "/srv/src/", "/srv/dst/"], { stdio: "inherit" });
    } finally {
      fs.unlinkSync(LOCK);
    }
    """,
        {("LCK405", 6)},
    ),
    "js405_neg_waited.js": (
        """
    const fs = require("fs");
    const cp = require("child_process");
    const LOCK = "/var/lib/sync/sync.lock";
    async function main() {
      try { fs.openSync(LOCK, "wx"); } catch (e) { console.error("busy"); process.exit(75); }
      try {
        const child = cp.spawn("rsync", ["-a", "/srv/src/", "/srv/dst/"]);
        await new Promise((resolve) => child.on("close", resolve));
      } finally {
        fs.unlinkSync(LOCK);
      }
    }
    main();
    """,
        set(),
    ),
    "js405_neg_before_lock.js": (
        """
    const fs = require("fs");
    const { spawn } = require("child_process");
    spawn("logger", ["sync starting"], { detached: true }).unref();
    try { fs.openSync("/var/lib/sync/sync.lock", "wx"); } catch (e) { process.exit(75); }
    """,
        set(),
    ),
    # ---------------------------------------------------------------- LCK405, PowerShell
    "ps405_start_process.ps1": (
        """
    $m = [System.Threading.Mutex]::new($false, 'Global\\NightlySync')
    if (-not $m.WaitOne(0)) { Write-Host 'busy'; exit 75 }
    try {
        Start-Process -FilePath robocopy.exe -ArgumentList 'C:\\src', 'D:\\dst', '/MIR'
    } finally { $m.ReleaseMutex() }
    """,
        {("LCK405", 4)},
    ),
    "ps405_process_start.ps1": (
        """
    $lock = 'C:\\ProgramData\\Sync\\sync.lock'
    try { New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null } catch { exit 75 }
    try {
        [System.Diagnostics.Process]::Start('robocopy.exe', 'C:\\src D:\\dst /MIR') | Out-Null
    } finally { Remove-Item $lock }
    """,
        {("LCK405", 4)},
    ),
    "ps405_neg_wait.ps1": (
        """
    $m = [System.Threading.Mutex]::new($false, 'Global\\NightlySync')
    if (-not $m.WaitOne(0)) { Write-Host 'busy'; exit 75 }
    try {
        Start-Process -FilePath robocopy.exe -ArgumentList 'C:\\src', 'D:\\dst' -Wait -NoNewWindow
        $p = Start-Process -FilePath reindex.exe -PassThru
        $p.WaitForExit()
    } finally { $m.ReleaseMutex() }
    """,
        set(),
    ),
    # ---------------------------------------------------------------- LCK301, JavaScript
    "js301_mkdir_probe.js": (
        """
    const fs = require("fs");
    function writable() {
      try {
        fs.mkdirSync("/mnt/backup/.probe");
        fs.rmdirSync("/mnt/backup/.probe");
        return true;
      } catch (e) {
        return false;
      }
    }
    if (!writable()) process.exit(2);
    """,
        {("LCK301", 4)},
    ),
    "js301_file_probe.ts": (
        """
    import { writeFileSync, unlinkSync } from "node:fs";
    import * as path from "node:path";
    const PROBE: string = path.join("/srv/share", "write-test");
    writeFileSync(PROBE, "");
    unlinkSync(PROBE);
    """,
        {("LCK301", 4)},
    ),
    "js301_neg_pid.js": (
        """
    const fs = require("fs");
    const probe = `/mnt/backup/.probe.${process.pid}`;
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    """,
        set(),
    ),
    "js301_neg_work_between.js": (
        """
    const fs = require("fs");
    fs.writeFileSync("/srv/share/report.csv", render());
    upload("/srv/share/report.csv");
    fs.unlinkSync("/srv/share/report.csv");
    """,
        set(),
    ),
    # ---------------------------------------------------------------- LCK301, PowerShell
    "ps301_dir_probe.ps1": (
        """
    New-Item -ItemType Directory -Path '\\\\nas01\\backup\\.probe' -ErrorAction Stop | Out-Null
    Remove-Item '\\\\nas01\\backup\\.probe'
    """,
        {("LCK301", 1)},
    ),
    "ps301_file_probe.ps1": (
        """
    $probe = Join-Path $env:ProgramData 'Sync\\write-test.tmp'
    Set-Content -Path $probe -Value ''
    Remove-Item -Path $probe -Force
    """,
        {("LCK301", 2)},
    ),
    "ps301_neg_pid.ps1": (
        """
    $probe = "C:\\ProgramData\\Sync\\write-test.$PID"
    Set-Content -Path $probe -Value ''
    Remove-Item -Path $probe -Force
    """,
        set(),
    ),
    "ps301_neg_marker.ps1": (
        """
    Set-Content -Path 'C:\\ProgramData\\Sync\\initialized' -Value (Get-Date)
    Invoke-Sync
    """,
        set(),
    ),
    # ---------------------------------------------------------------- from the corpus review
    "ps301_neg_removal_in_scriptblock.ps1": (
        """
    New-Item -ItemType SymbolicLink -Path $link -Value 'C:\\Data\\beta' > $null
    { Remove-Item -Path $link -ErrorAction Stop } | Should -Throw
    """,
        set(),
    ),
    "ps406_neg_output_stream_rethrown.ps1": (
        """
    try {
        $out = New-Object -TypeName System.IO.FileStream -ArgumentList $OutFile, ([IO.FileMode]::Create), ([IO.FileAccess]::Write), ([IO.FileShare]::None)
        $out.Write($buffer, 0, $n)
    } catch {
        throw $_
    }
    """,
        set(),
    ),
    "ps405_neg_other_function.ps1": (
        """
    function Lock-Work {
        try { New-Item -ItemType File -Path 'C:\\Work\\LOCK' -ErrorAction Stop | Out-Null } catch { exit 75 }
    }
    function Start-Server {
        Start-Process -FilePath 'C:\\srv\\server.exe' -PassThru
    }
    Start-Server
    """,
        set(),
    ),
}
SCOPE = {"LCK301", "LCK405", "LCK406"}


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    root = tmp_path_factory.mktemp("jobs")
    for name, (src, _want) in CASES.items():
        write(root, name, textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    got: dict[str, set[tuple[str, int]]] = {name: set() for name in CASES}
    for f in json.loads(proc.stdout):
        name = f["filename"].rsplit("/", 1)[-1]
        got[name].add((f["code"], f["location"]["row"]))
    return got


@pytest.mark.parametrize("name", sorted(CASES))
def test_scope_rules(scan, name):
    want = CASES[name][1]
    assert {x for x in scan[name] if x[0] in SCOPE} == want


def test_probe_fix_adds_pid(tmp_path):
    """The LCK301 fix (safe) adds the process id at the create and at the removal."""
    js = write(
        tmp_path,
        "probe.js",
        'const fs = require("fs");\n'
        'fs.mkdirSync("/mnt/backup/.probe");\nfs.rmdirSync("/mnt/backup/.probe");\n',
    )
    ps = write(
        tmp_path,
        "probe.ps1",
        "New-Item -ItemType File -Path 'C:\\Share\\t.tmp' | Out-Null\n"
        "Remove-Item 'C:\\Share\\t.tmp'\n",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--fix", "--select", "LCK301", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert js.read_text().count("`/mnt/backup/.probe.${process.pid}`") == 2
    assert ps.read_text().count('"C:\\Share\\t.tmp.$PID"') == 2
