"""Fixes and suggestions for Node.js and PowerShell scripts: LCK201's removal dropped (safe,
through ``--fix``), the existence lock rewritten toward each ecosystem's correct pattern (a
held fs-ext flock; a ``Global\\`` mutex with ``WaitOne(0)``) and the rewrite lints clean,
advice where no rewrite is sure."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from helpers import write

from lockcheck.engine import analyze_text
from lockcheck.fix.apply import apply_edits


def _src(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def _suggestion(path: str, text: str, language: str, code: str):
    _facts, findings = analyze_text(path, text, language)
    hits = [f for f in findings if f.code == code]
    assert hits, [(f.code, f.span.line) for f in findings]
    return hits[0].suggestion


JS_WX = _src(
    """
    const fs = require("fs");
    const LOCK = "/var/lib/report/report.lock";
    try {
      fs.openSync(LOCK, "wx");
    } catch (e) {
      console.log("report already running");
      process.exit(0);
    }
    process.on("SIGTERM", () => process.exit(143));
    try {
      buildReport();
    } finally {
      fs.unlinkSync(LOCK);
    }
    """
)

PS_NEW_ITEM = _src(
    """
    $lock = 'C:\\ProgramData\\Export\\export.lock'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host 'export already running'
        exit
    }
    try {
        Invoke-Export
    } finally {
        Remove-Item $lock
    }
    """
)


def test_js_existence_lock_suggestion_is_a_held_flock_that_lints_clean():
    sugg = _suggestion("/srv/jobs/report.js", JS_WX, "javascript", "LCK101")
    assert sugg is not None and sugg.edits, sugg
    out = apply_edits(JS_WX, sugg.edits)
    assert 'flockSync(lockFd, "exnb")' in out and "unlinkSync" not in out
    facts, findings = analyze_text("/srv/jobs/report.js", out, "javascript")
    assert findings == [], [(f.code, f.span.line, f.message) for f in findings]
    (acq,) = facts.acquires
    assert acq.kind.value == "flock" and acq.busy.status == 75


def test_js_esm_or_mkdir_lock_gets_advice_without_edits():
    esm = JS_WX.replace('const fs = require("fs");', 'import fs from "node:fs";')
    mkdir = _src(
        """
        const fs = require("fs");
        try { fs.mkdirSync("/var/lib/report/report.lock"); }
        catch (e) { if (e.code === "EEXIST") process.exit(0); throw e; }
        """
    )
    for path, text in (("/srv/jobs/report.mjs", esm), ("/srv/jobs/report.js", mkdir)):
        sugg = _suggestion(path, text, "javascript", "LCK101")
        assert sugg is not None and not sugg.edits
        assert "fs-ext" in sugg.message and "flock -n -E 75" in sugg.message


def test_ps_existence_lock_suggestion_is_a_global_mutex_that_lints_clean():
    sugg = _suggestion("C:/jobs/export.ps1", PS_NEW_ITEM, "powershell", "LCK101")
    assert sugg is not None and sugg.edits, sugg
    out = apply_edits(PS_NEW_ITEM, sugg.edits)
    assert "'Global\\export'" in out and "WaitOne(0)" in out and "Remove-Item" not in out
    assert "finally {\n    $lockMutex.ReleaseMutex()\n}" in out
    facts, findings = analyze_text("C:/jobs/export.ps1", out, "powershell")
    assert findings == [], [(f.code, f.span.line, f.message) for f in findings]
    (acq,) = facts.acquires
    assert acq.mechanism == "named mutex" and acq.busy.status == 75


def test_ps_test_path_lock_gets_mutex_advice():
    src = _src(
        """
        $lock = Join-Path $env:ProgramData 'Export\\export.lock'
        if (Test-Path $lock) { Write-Host 'busy'; exit }
        Set-Content -Path $lock -Value $PID
        try { Invoke-Export } finally { Remove-Item $lock }
        """
    )
    sugg = _suggestion("C:/jobs/export.ps1", src, "powershell", "LCK103")
    assert sugg is not None and not sugg.edits
    assert "Global\\export" in sugg.message and "WaitOne(0)" in sugg.message


def test_pid_checks_get_ecosystem_advice():
    js = _src(
        """
        const fs = require("fs");
        const pid = Number(fs.readFileSync("/var/run/report.pid", "utf8"));
        try { process.kill(pid, 0); console.log("running"); process.exit(0); } catch (e) {}
        fs.writeFileSync("/var/run/report.pid", String(process.pid));
        """
    )
    sugg = _suggestion("/srv/jobs/report.js", js, "javascript", "LCK105")
    assert sugg is not None and "fs-ext" in sugg.message
    ps = _src(
        """
        $pidFile = 'C:\\ProgramData\\Export\\export.pid'
        if (Get-Process -Id (Get-Content $pidFile) -ErrorAction SilentlyContinue) { exit }
        Set-Content $pidFile $PID
        """
    )
    sugg = _suggestion("C:/jobs/export.ps1", ps, "powershell", "LCK105")
    assert sugg is not None and "Global\\export" in sugg.message


def test_ps_open_failure_advice_names_the_hresult_test():
    src = _src(
        """
        try {
            $h = [IO.File]::Open('C:\\ProgramData\\Sync\\sync.lock', 'OpenOrCreate', 'ReadWrite', 'None')
        } catch {
            exit 75
        }
        """
    )
    sugg = _suggestion("C:/jobs/sync.ps1", src, "powershell", "LCK406")
    assert sugg is not None and "HResult" in sugg.message


@pytest.mark.parametrize(
    "name, text, removal",
    [
        (
            "report.js",
            _src(
                """
                const fs = require("fs");
                const { flockSync } = require("fs-ext");
                const LOCK = "/var/lib/report/report.lock";
                const fd = fs.openSync(LOCK, "a");
                try { flockSync(fd, "exnb"); }
                catch (e) { if (e.code === "EAGAIN") process.exit(75); throw e; }
                try {
                  buildReport();
                } finally {
                  fs.unlinkSync(LOCK);
                }
                """
            ),
            "fs.unlinkSync(LOCK);",
        ),
        (
            "export.ps1",
            _src(
                """
                $lock = 'C:\\ProgramData\\Export\\export.lock'
                try {
                    $h = [IO.File]::Open($lock, 'OpenOrCreate', 'ReadWrite', 'None')
                } catch [System.IO.IOException] {
                    if (($_.Exception.HResult -band 0xFFFF) -in 32, 33) { exit 75 }
                    throw
                }
                try {
                    Invoke-Export
                } finally {
                    $h.Dispose()
                    Remove-Item $lock
                }
                """
            ),
            "Remove-Item $lock",
        ),
    ],
)
def test_lck201_fix_drops_the_removal(tmp_path, name, text, removal):
    p = write(tmp_path, name, text)
    cmd = [sys.executable, "-m", "lockcheck", "check", "--select", "LCK201"]
    before = subprocess.run([*cmd, str(p)], capture_output=True, text=True)
    assert before.returncode == 1 and "LCK201" in before.stdout
    fixed = subprocess.run([*cmd, "--fix", str(p)], capture_output=True, text=True)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    out = p.read_text()
    assert removal not in out
    # only the removal's line goes; every other line is kept as it was
    assert out.splitlines() == [ln for ln in text.splitlines() if ln.strip() != removal]
    after = subprocess.run([*cmd, str(p)], capture_output=True, text=True)
    assert after.returncode == 0, after.stdout
