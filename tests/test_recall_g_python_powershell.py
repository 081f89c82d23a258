"""Python and PowerShell shapes behind set G's misses (bench/recall/SET-G.md, a dev set from
session 12 on), each positive beside a negative, through the CLI: a PID file tested, then
written with the run's PID and handed to the caller; PowerShell written with typographic
quotes and dashes; a Test-Path lock whose exists branch rewrites the file before the other
branch creates it."""

from __future__ import annotations

from helpers import scan_files


def codes(found: set[tuple[str, int]], code: str) -> set[int]:
    return {line for c, line in found if c == code}


HANDED = """
    import logging
    import os
    import sys


    def prevent_multiple_instances():
        PID_FILE = "/var/lib/scraper/scraper.state"

        if os.path.exists(PID_FILE):
            logging.critical("Instance Already Exists")
            sys.exit(1)

        with open(PID_FILE, "w") as f:
            f.write({content})

        return PID_FILE
"""


def test_a_tested_name_written_with_the_runs_pid_is_a_lock_though_kept(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "pid.py": HANDED.format(content="str(os.getpid())"),
            "marker.py": HANDED.format(content='"done"'),
        },
    )
    assert codes(got["pid.py"], "LCK103") == {13}, got
    assert not codes(got["marker.py"], "LCK103"), got  # a run-once marker


CHECKLOCK = """
    $lockfile = {q1}D:\\jobs\\lock.lck{q2}
    $lockstatus = 0
    While ($lockstatus -ne 1)
    {{
        If (Test-Path $lockfile)
        {{
            $pidlist = Get-Content $lockfile
            If (!$pidlist)
            {{
                $PID | Out-File $lockfile
                $lockstatus = 1
            }}
            Else
            {{
                Start-Sleep -Milliseconds 500
            }}
        }}
        Else
        {{
            $PID | Out-File $lockfile
            $lockstatus = 1
        }}
    }}
    Write-Output {q1}working{q2}
    Remove-Item $lockfile {dash}Force
"""


def test_a_test_path_lock_whose_exists_branch_rewrites_the_file(tmp_path):
    ascii_ = CHECKLOCK.format(q1='"', q2='"', dash="-")
    typographic = CHECKLOCK.format(q1="\u201c", q2="\u201d", dash="\u2013")
    got = scan_files(tmp_path, {"ascii.ps1": ascii_, "typo.ps1": typographic})
    for name in got:
        assert codes(got[name], "LCK103") == {20}, (name, got[name])
        assert codes(got[name], "LCK202") == {20}, (name, got[name])


def test_typographic_quotes_and_dashes_read_as_powershell_reads_them(tmp_path):
    src = """
        $lock = \u201cC:\\ProgramData\\job\\job.lock\u201d
        if ($env:COMPUTERNAME \u2013iin @('a', 'b')) {{ exit 3 }}
        try {{
            New-Item \u2013ItemType File \u2013Path $lock {ea} | Out-Null
        }} catch {{
            Write-Output \u2018busy\u2019
            exit 75
        }}
        try {{ & C:\\jobs\\run.exe }} finally {{ Remove-Item $lock \u2013Force }}
    """
    got = scan_files(
        tmp_path,
        {
            "stop.ps1": src.format(ea="\u2013ErrorAction Stop"),
            "silent.ps1": src.format(ea=""),
        },
    )
    assert codes(got["stop.ps1"], "LCK101") == {4}, got  # the path is read from “...”
    assert not codes(got["stop.ps1"], "LCK109"), got  # –ErrorAction Stop is read
    assert codes(got["silent.ps1"], "LCK109") == {4}, got
