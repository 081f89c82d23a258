"""Windows temporary directories for PowerShell and Node.js locks (LCK502): ``C:\\Windows\\Temp``
always, ``$env:TEMP``/``[IO.Path]::GetTempPath()``/``process.env.TEMP`` only in a script that a
Task Scheduler definition of the scanned tree runs as SYSTEM, LocalService or NetworkService;
and TypeScript declaration files are not job scripts."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import write

TASK = """\
<?xml version="1.0" encoding="UTF-8"?>
<Task version="1.4" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <Principals>
    <Principal id="Author">
      <UserId>{user}</UserId>
      <RunLevel>HighestAvailable</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <ExecutionTimeLimit>PT1H</ExecutionTimeLimit>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>{command}</Command>
      <Arguments>{arguments}</Arguments>
    </Exec>
  </Actions>
</Task>
"""

PS_TEMP = """
    $lock = Join-Path $env:TEMP 'export.lock'
    try {
        New-Item -ItemType File -Path $lock -ErrorAction Stop | Out-Null
    } catch {
        Write-Host 'export already running'
        exit 75
    }
    try { Invoke-Export } finally { Remove-Item $lock }
"""

PS_GETTEMP = """
    $lock = [IO.Path]::Combine([IO.Path]::GetTempPath(), 'export.lock')
    try {
        $h = [IO.File]::Open($lock, 'CreateNew')
    } catch {
        exit 75
    }
    try { Invoke-Export } finally { $h.Dispose(); Remove-Item $lock }
"""

JS_TEMP = """
    const fs = require("fs");
    const path = require("path");
    const LOCK = path.join(process.env.TEMP, "export.lock");
    try { fs.openSync(LOCK, "wx"); } catch (e) { console.error("busy"); process.exit(75); }
    try { run(); } finally { fs.unlinkSync(LOCK); }
"""


def _scan(root) -> set[tuple[str, str, int]]:
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {
        (f["filename"].rsplit("/", 1)[-1], f["code"], f["location"]["row"])
        for f in json.loads(proc.stdout)
    }


@pytest.mark.parametrize(
    "name, src, line, command",
    [
        ("export.ps1", PS_TEMP, 3, "powershell.exe"),
        ("export.ps1", PS_GETTEMP, 3, "pwsh.exe"),
        ("export.js", JS_TEMP, 4, "node.exe"),
    ],
)
@pytest.mark.parametrize(
    "user, flagged",
    [
        ("S-1-5-18", True),
        ("NT AUTHORITY\\SYSTEM", True),
        ("S-1-5-19", True),
        ("NETWORK SERVICE", True),
        ("CONTOSO\\svc-export", False),
    ],
)
def test_temp_is_shared_only_under_a_service_account_task(
    tmp_path, name, src, line, command, user, flagged
):
    write(tmp_path, f"scripts/{name}", textwrap.dedent(src).lstrip("\n"))
    write(
        tmp_path,
        "tasks/export.xml",
        TASK.format(user=user, command=command, arguments=f"-File C:\\Jobs\\scripts\\{name}"),
    )
    got = _scan(tmp_path)
    assert ((name, "LCK502", line) in got) is flagged, got
    assert (name, "LCK101", line) in got  # the rest of the analysis is unchanged


def test_temp_without_any_task_is_private(tmp_path):
    write(tmp_path, "scripts/export.ps1", textwrap.dedent(PS_TEMP).lstrip("\n"))
    got = _scan(tmp_path)
    assert not any(code == "LCK502" for _n, code, _l in got)
    assert ("export.ps1", "LCK101", 3) in got


def test_windows_temp_literal_is_shared(tmp_path):
    write(
        tmp_path,
        "jobs/a.ps1",
        textwrap.dedent(
            PS_TEMP.replace("Join-Path $env:TEMP 'export.lock'", "'C:\\Windows\\Temp\\export.lock'")
        ).lstrip("\n"),
    )
    write(
        tmp_path,
        "jobs/b.ps1",
        textwrap.dedent(PS_TEMP.replace("$env:TEMP", "'C:\\ProgramData\\Export'")).lstrip("\n"),
    )
    got = _scan(tmp_path)
    assert ("a.ps1", "LCK502", 3) in got
    assert not any(n == "b.ps1" and code == "LCK502" for n, code, _l in got)


def test_declaration_files_are_not_job_scripts(tmp_path):
    body = textwrap.dedent(JS_TEMP.replace("process.env.TEMP", '"/tmp"')).lstrip("\n")
    write(tmp_path, "src/job.ts", body)
    for name in ("types/job.d.ts", "types/job.d.mts", "types/job.D.CTS"):
        write(tmp_path, name, body)
    names = {n for n, _c, _l in _scan(tmp_path)}
    assert names == {"job.ts"}, names
