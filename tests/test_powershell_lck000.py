"""LCK000 for PowerShell (RULES.md: a file not readable at all): an unterminated string,
here-string or block comment, or an unbalanced bracket, found by a tokenizer pass of its own,
never from tree-sitter-powershell's ERROR nodes (the grammar rejects much valid PowerShell).
Through the CLI; each broken spelling beside valid ones that must stay quiet."""

from __future__ import annotations

import json
import textwrap

import pytest


def lck000(cli, tmp_path, src: str, name: str = "job.ps1", raw: bytes | None = None):
    f = tmp_path / name
    if raw is not None:
        f.write_bytes(raw)
    else:
        f.write_text(textwrap.dedent(src).lstrip("\n"), encoding="utf-8")
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return [(f["location"]["row"], f["message"]) for f in json.loads(out) if f["code"] == "LCK000"]


LOCK_JOB = """
    $lock = Join-Path $env:ProgramData 'nightly\\job.lock'
    if (Test-Path $lock) {
        Write-Output "busy"
        exit 0
    }
    New-Item -ItemType File -Path $lock | Out-Null
    try {
        Invoke-Sync
    } finally {
        Remove-Item $lock
    }
    """


@pytest.mark.parametrize(
    ("broken", "line", "what"),
    [
        (LOCK_JOB.replace("    }\n    New-Item", "    New-Item", 1), 2, "never closed"),
        (LOCK_JOB + "    }\n", 12, "unbalanced `}`"),
        (LOCK_JOB.replace('Write-Output "busy"', 'Write-Output "busy'), 3, "string"),
        (LOCK_JOB + '    $body = @"\n    no end here\n', 12, "here-string"),
        (LOCK_JOB + '    $body = @"\n    $(if ($a) {@"\n    x\n"@ })\n', 12, "here-string"),
        (LOCK_JOB.replace("    try {", "    <# the sync\n    try {"), 7, "block comment"),
        (LOCK_JOB.replace("Invoke-Sync", "Invoke-Sync -Name 'x"), 0, "string"),
    ],
)
def test_an_unreadable_file_gets_one_lck000(cli, tmp_path, broken, line, what):
    got = lck000(cli, tmp_path, broken)
    assert len(got) == 1 and what in got[0][1], got
    if line:
        assert got[0][0] == line


VALID = [
    # what tree-sitter-powershell rejects, valid PowerShell all the same
    "class Job { [string]$Name; Job([string]$n) { $this.Name = $n } }\n$j = [Job]::new('x')\n",
    "enum Mode { Full; Delta }\n$m = [Mode]::Full\n",
    "$cfg = $PSScriptRoot\\..\\conf\\job.json\n",
    "$v = $null ?? 'default'\n",
    # brackets and quotes inside strings, comments, variables and here-strings
    'Write-Host "a { not a block $($x.Count) ) "\n',
    "Write-Host 'it''s { fine'\n",
    '$p = "${env:ProgramFiles(x86)}\\tool"\n$q = ${env:ProgramFiles(x86)}\n',
    "# a comment with { and ' and \"\n$a = 1 # trailing { comment\n",
    "<# block { comment ' \" #>\n$a = 1\n",
    "$s = @\"\n{ unbalanced ( inside \" a here-string\n\"@\n$t = @'\n' and }\n'@\n",
    'Write-Host "escaped `" quote and `$(no) sub"\n',
    "Write-Host \u2018typographic\u2019 \u201cquotes\u201d\n",
    "Write-Host a#b {\n}\n",
    "Get-Item C:\\x `\n  -Force\n",
    "$h = @{ Name = 'x'; Items = @(1, 2, [int]'3') }\n",
    'Write-Host "nested $(Get-Date -Format "yyyy") string"\n',
    # a here-string inside the `$( )` of a here-string: its `"@` does not end the outer one
    '$cs = @"\nusing System;\n$(if ($gui) {@"\nusing System.Windows.Forms;\n"@ })\n'
    'class Program { }\n"@\n',
    '$xml = @"\n<Sites>\n$(foreach ($s in $sites) {@"\n<Site>$($s.Name)</Site>\n"@\n})\n'
    '</Sites>\n"@\n',
    # a backtick escape inside a braced name: `u{2195} is one character, not the name's end
    "${fooxyzzy`u{2195}} = 42\nif (${a`}b}) { $true }\n",
    # old Mac line ends (a lone CR): a comment ends there, and a here-string's lines do too
    "if ($a) { # take the lock\r$b }\r",
    "$m = @'\rit's the lock\r'@\r$n = 1\r",
]


@pytest.mark.parametrize("src", VALID)
def test_valid_powershell_gets_no_lck000(cli, tmp_path, src):
    assert lck000(cli, tmp_path, "", raw=src.encode("utf-8")) == []


def test_the_lock_findings_of_a_readable_file_are_kept_and_lck000_is_suppressible(cli, tmp_path):
    text = textwrap.dedent(LOCK_JOB + "    }\n").lstrip("\n")
    assert lck000(cli, tmp_path, "# lockcheck: disable-file=LCK000\n" + text) == []
    f = tmp_path / "job.ps1"
    status, out, _ = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", f.name)
    got = {x["code"] for x in json.loads(out)}
    assert status == 1 and "LCK000" not in got and {"LCK103", "LCK401"} <= got, got


def test_a_file_in_a_legacy_code_page_is_not_judged(cli, tmp_path):
    # Shift-JIS: the second byte of a character can be a backtick (0x60), which would read as
    # an escape of the closing quote; the tokens of such a file are not known
    raw = b'Write-Host "' + "\u30bd".encode("shift_jis") + b'"\n$a = 1\n'
    raw = raw.replace(b"\x83\x5c", b"\x83\x60")
    assert lck000(cli, tmp_path, "", raw=raw) == []
