"""What a new user meets on the command line (issue #10): help for a bare `lockcheck`, errors
without a "passed" claim, warnings for named files that are not read, severities in the text
formats and a summary that says what fails the run, and `--diff` exiting 1 only for changes
`--fix` would make."""

from __future__ import annotations

import subprocess
import sys

from helpers import write

# an info finding only (LCK402): the skip is logged, the status is 0
LOGGED_ZERO_SKIP = """\
#!/bin/bash
exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/fetch-mail.lock" || exit 3
if ! flock -n 9; then
    echo "$(date -Is) skipped" >> /var/log/tickets/skips.log
    exit 0
fi
fetchmail --silent
"""

# a warning with a suggestion only (LCK101): nothing --fix would change
MKDIR_LOCK = """\
#!/bin/bash
LOCK=/var/lib/notify/lock
if ! mkdir "$LOCK"; then
    echo "$(date -Is) busy" >> /var/log/notify.log
    exit 75
fi
trap 'rmdir "$LOCK"' EXIT
send-digest --all
"""

# an error (LCK401, unsafe fix) and the info finding above
SILENT_SKIP = """\
#!/bin/bash
exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/backup.lock" || exit 3
flock -n 9 || exit 0
rsync -a /srv/data/ /backup/
"""


def test_bare_lockcheck_prints_help_and_scans_nothing(tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: lockcheck")
    assert "scan (check)" in proc.stderr and "LCK401" not in proc.stdout + proc.stderr


def test_mistyped_subcommand_is_an_error_only(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("sacn", "backup.sh")
    assert (status, out) == (2, "")
    assert err == "lockcheck: error: unrecognized subcommand 'sacn' (did you mean 'scan'?)\n"
    # a path that happens to look like a command is still scanned
    write(tmp_path, "scna", SILENT_SKIP)
    assert cli("scna")[0] == 1


def test_missing_path_prints_the_error_only(cli, tmp_path):
    status, out, err = cli("scan", "no-such-dir")
    assert (status, out) == (2, "")
    assert err == "lockcheck: error: no-such-dir: No such file or directory\n"
    # beside a clean file: the error, and still no "passed"
    write(tmp_path, "ok.sh", "#!/bin/sh\necho hi\n")
    status, out, err = cli("scan", "ok.sh", "no-such-dir")
    assert status == 2 and "All checks passed!" not in out and "no-such-dir" in err


def test_named_file_that_is_not_checked_gets_a_warning(cli, tmp_path):
    write(tmp_path, "deploy.sh", "#!/bin/zsh\nsetopt extendedglob\n")
    write(tmp_path, "notes.txt", "mkdir /tmp/x.lock || exit 0\n")
    status, out, err = cli("scan", "deploy.sh", "notes.txt")
    assert (status, out) == (0, "")
    assert err.splitlines() == [
        "lockcheck: warning: deploy.sh: not checked: not a shell or Python script",
        "lockcheck: warning: notes.txt: not checked: not a shell or Python script",
    ]
    # found while walking a directory, such files are passed over silently
    write(tmp_path, "ok.sh", "#!/bin/sh\necho hi\n")
    assert cli("scan", ".") == (0, "All checks passed!\n", "")


def test_info_only_file_says_nothing_fails(cli, tmp_path):
    write(tmp_path, "fetch.sh", LOGGED_ZERO_SKIP)
    status, out, _ = cli("scan", "--output-format", "concise", "fetch.sh")
    assert status == 0
    assert out.splitlines() == [
        out.splitlines()[0],
        "Found 1 finding (1 info).",
        "None fails the run (fail-on = warning).",
    ]
    assert out.startswith("fetch.sh:5:5: LCK402 (info) ")
    status, out, _ = cli("scan", "--fail-on", "info", "--output-format", "concise", "fetch.sh")
    assert status == 1 and "It fails the run (fail-on = info)." in out


def test_summary_counts_by_severity_and_names_what_fails(cli, tmp_path):
    write(tmp_path, "fetch.sh", LOGGED_ZERO_SKIP)
    write(tmp_path, "backup.sh", SILENT_SKIP)
    write(tmp_path, "notify.sh", MKDIR_LOCK)
    status, out, _ = cli("scan", "--isolated", "--output-format", "concise")
    assert status == 1
    assert "Found 3 findings (1 error, 1 warning, 1 info)." in out.splitlines()
    assert "2 fail the run (fail-on = warning); 1 does not." in out.splitlines()
    status, out, _ = cli("scan", "--isolated", "--exit-zero", "--output-format", "concise")
    assert status == 0 and "None fails the run (--exit-zero)." in out.splitlines()
    status, out, _ = cli("scan", "--isolated", "--fail-on", "error")
    assert status == 1 and "1 fails the run (fail-on = error); 2 do not." in out.splitlines()


def test_diff_exits_1_only_when_fix_would_change_something(cli, tmp_path):
    p = write(tmp_path, "notify.sh", MKDIR_LOCK)
    status, out, err = cli("scan", "--diff", "notify.sh")
    # the suggestion is shown, but --fix would write nothing
    assert status == 0, out + err
    assert out.startswith("# suggestion, not applied by --fix: notify.sh:3:6: LCK101 ")
    assert err == "No fixes to apply.\n"
    assert p.read_text() == MKDIR_LOCK
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("scan", "--diff", "backup.sh")
    assert status == 0 and out == ""
    assert err == "No safe fixes to apply (1 unsafe fix is shown with --unsafe-fixes).\n"
    status, out, err = cli("scan", "--diff", "--unsafe-fixes", "backup.sh")
    assert status == 1 and "+flock -n 9 || exit 75" in out.splitlines()


def test_init_help_text(capsys):
    import pytest

    from lockcheck.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["init", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "chmod +x" in out
    for option, words in (
        ("--shell", "bash wrapper"),
        ("--python", "Python wrapper"),
        ("--slot NAME", "exclude each other"),
    ):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(option))
        assert words in line or words in out.split(option, 1)[1].split("\n  -", 1)[0], out


def test_mistyped_config_key_gets_did_you_mean(cli, tmp_path):
    write(tmp_path, "lockcheck.toml", 'extend-selct = ["LCK001"]\nskip-exit = 75\nfoo = 1\n')
    write(tmp_path, "ok.sh", "#!/bin/sh\necho hi\n")
    status, out, err = cli("scan")
    assert (status, out) == (2, "")
    assert "unknown key 'extend-selct' (did you mean 'extend-select'?)" in err
    write(tmp_path, "lockcheck.toml", "foo = 1\n")
    status, _, err = cli("scan")
    assert status == 2 and err.rstrip().endswith("unknown key 'foo'")


def test_every_finding_in_full_output_has_a_capitalised_help_line(cli, tmp_path):
    import re

    write(tmp_path, "fetch.sh", LOGGED_ZERO_SKIP)  # no fix: the rule's remedy
    write(tmp_path, "notify.sh", MKDIR_LOCK)  # a suggestion
    write(tmp_path, "backup.sh", SILENT_SKIP)  # an unsafe fix
    _, out, _ = cli("scan", "--isolated")
    headers = re.findall(r"^\S+:\d+:\d+: (LCK\d+) ", out, re.M)
    helps = re.findall(r"^\s+= help: (?:suggestion: )?(.)", out, re.M)
    assert len(helps) == len(headers) == 3, out
    assert all(c.isupper() or c == "`" for c in helps), helps
