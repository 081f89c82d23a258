"""`lockcheck scan`: discovery, reading, exit status, output options (through the CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from helpers import concise_rows as codes
from helpers import write

SILENT_SKIP = """\
#!/bin/bash
set -euo pipefail
exec 9>"$XDG_RUNTIME_DIR/backup.lock"
flock -n 9 || exit 0
rsync -a /srv/data/ /backup/
"""

CLEAN = """\
#!/bin/bash
set -euo pipefail
exec 9>"$XDG_RUNTIME_DIR/report.lock"
if ! flock -n 9; then
  logger -t report "previous run still active"
  exit 75
fi
case "${1:-}" in
  --full) files=(/srv/reports/*) ;;
  *) files=(/srv/reports/today) ;;
esac
for f in "${files[@]}"; do
  [[ -f $f ]] && gzip -k "$f"
done
"""

SYNCED_MKDIR = """\
#!/bin/sh
LOCKDIR="$HOME/Dropbox/jobs/sync.lock"
if ! mkdir "$LOCKDIR" 2>/dev/null; then
  echo "already running"
  exit 1
fi
trap 'rmdir "$LOCKDIR"' EXIT
cat <<MSG
syncing
MSG
"""

FLOCK_COMMAND = """\
#!/usr/bin/env bash
flock -n /run/user/1000/rotate.lock logrotate /etc/logrotate.conf
"""


def test_directory_scan_reports_each_finding_and_fails(cli, tmp_path):
    write(tmp_path, "jobs/backup.sh", SILENT_SKIP)
    write(tmp_path, "jobs/report.sh", CLEAN)
    write(tmp_path, "jobs/sync.sh", SYNCED_MKDIR)
    write(tmp_path, "jobs/rotate", FLOCK_COMMAND)  # no extension: found by its shebang
    write(tmp_path, "README.md", "# jobs\nmkdir /tmp/x.lock || exit 0\n")
    status, out, err = cli("scan", "--output-format", "concise")
    assert status == 1, err
    assert codes(out) == [
        ("jobs/backup.sh", 4, "LCK401"),
        ("jobs/rotate", 2, "LCK403"),
        ("jobs/sync.sh", 3, "LCK102"),
    ]
    assert out.rstrip().splitlines()[-3:-1] == [
        "Found 3 findings (2 errors, 1 warning).",
        "They fail the run (fail-on = warning).",
    ]


def test_clean_tree_passes(cli, tmp_path):
    write(tmp_path, "report.sh", CLEAN)
    status, out, err = cli("scan")
    assert (status, out, err) == (0, "All checks passed!\n", "")


def test_full_format_shows_source_caret_and_help(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, _ = cli("scan", "backup.sh", "--unsafe-fixes")
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("backup.sh:4:15: LCK401 (error) [*] ")
    # two lines of context around the flagged line, a caret under the span, the fix hint
    assert lines[1:9] == [
        "  |",
        "2 | set -euo pipefail",
        '3 | exec 9>"$XDG_RUNTIME_DIR/backup.lock"',
        "4 | flock -n 9 || exit 0",
        "  |               ^^^^^^ LCK401",
        "5 | rsync -a /srv/data/ /backup/",
        "  |",
        "  = help: Exit with 75 when the lock is busy",
    ]
    assert "Found 1 finding (1 error)." in lines
    assert "[*] 1 fixable with the --fix option." in lines
    assert "\x1b[" not in out  # not a terminal: no colors


def test_colors_forced_and_disabled(cli, tmp_path, monkeypatch):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = cli("scan", "backup.sh")
    assert "\x1b[" in out
    _, out, _ = cli("scan", "backup.sh", "--no-color")
    assert "\x1b[" not in out
    _, out, _ = cli("scan", "backup.sh", "--output-format", "json")
    assert "\x1b[" not in out


def test_hidden_unsafe_fix_hint(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "backup.sh")
    assert "LCK401 (error) [*]" not in out
    assert "No fixes available (1 hidden fix can be enabled with the --unsafe-fixes option)." in out


def test_gitignore_nested_and_default_excludes(cli, tmp_path):
    write(tmp_path, ".gitignore", "generated/\n*.bak.sh\n")
    write(tmp_path, "jobs/.gitignore", "local-*.sh\n!local-keep.sh\n")
    write(tmp_path, "generated/a.sh", SILENT_SKIP)
    write(tmp_path, "jobs/old.bak.sh", SILENT_SKIP)
    write(tmp_path, "jobs/local-test.sh", SILENT_SKIP)
    write(tmp_path, "jobs/local-keep.sh", SILENT_SKIP)
    write(tmp_path, "node_modules/pkg/install.sh", SILENT_SKIP)
    write(tmp_path, "build/x.sh", SILENT_SKIP)
    write(tmp_path, "env/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "env/bin/activate.sh", SILENT_SKIP)
    write(tmp_path, ".git/hooks/pre-commit.sh", SILENT_SKIP)
    write(tmp_path, "jobs/backup.sh", SILENT_SKIP)
    status, out, _ = cli("scan", "--show-files")
    assert status == 0
    assert out.splitlines() == ["jobs/backup.sh", "jobs/local-keep.sh"]


def test_explicit_files_are_checked_even_if_ignored(cli, tmp_path):
    write(tmp_path, ".gitignore", "generated/\n")
    write(tmp_path, "generated/a.sh", SILENT_SKIP)
    status, out, _ = cli("scan", "generated/a.sh", "--output-format", "concise")
    assert status == 1
    assert codes(out) == [("generated/a.sh", 4, "LCK401")]


def test_exclude_and_force_exclude(cli, tmp_path):
    write(tmp_path, "legacy/old.sh", SILENT_SKIP)
    write(tmp_path, "jobs/backup.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "--show-files", "--extend-exclude", "legacy")
    assert out.splitlines() == ["jobs/backup.sh"]
    # named explicitly: checked, unless --force-exclude (pre-commit passes every file)
    _, out, _ = cli("scan", "--show-files", "--extend-exclude", "legacy", "legacy/old.sh")
    assert out.splitlines() == ["legacy/old.sh"]
    status, out, _ = cli("scan", "--extend-exclude", "legacy", "--force-exclude", "legacy/old.sh")
    assert status == 0
    # --exclude replaces the defaults: build/ is walked again
    write(tmp_path, "build/gen.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "--show-files", "--exclude", "legacy,jobs")
    assert out.splitlines() == ["build/gen.sh"]


def test_missing_path_is_an_error_but_the_rest_is_reported(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("scan", "nope.sh", "backup.sh", "--output-format", "concise")
    assert status == 2
    assert err == "lockcheck: error: nope.sh: No such file or directory\n"
    assert codes(out) == [("backup.sh", 4, "LCK401")]


def test_unreadable_file_is_an_error(cli, tmp_path, monkeypatch):
    import builtins

    import lockcheck.source as source

    def guarded_open(file, *args, **kwargs):
        if str(file).endswith("secret.sh"):  # chmod 0 does not stop root: simulate it
            raise PermissionError(13, "Permission denied", str(file))
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(source, "open", guarded_open, raising=False)  # where files are read
    write(tmp_path, "secret.sh", SILENT_SKIP)
    write(tmp_path, "backup.sh", SILENT_SKIP)
    os.mkfifo(tmp_path / "pipe.sh")  # named explicitly: must not block the run
    status, out, err = cli("scan", ".", "pipe.sh", "--output-format", "concise")
    assert status == 2
    assert err.splitlines() == [
        "lockcheck: error: secret.sh: Permission denied",
        "lockcheck: error: pipe.sh: not a regular file",
    ]
    assert codes(out) == [("backup.sh", 4, "LCK401")]


def test_binary_files_skipped_and_bad_bytes_decoded(cli, tmp_path):
    write(tmp_path, "blob.sh", b"#!/bin/sh\n\0\x01\x02mkdir /tmp/x.lock || exit 0\n")
    latin1 = SILENT_SKIP.replace("rsync", "echo 'caf\xe9'; rsync").encode("latin-1")
    write(tmp_path, "latin1.sh", latin1)
    status, out, err = cli("scan", "--output-format", "concise")
    assert status == 1 and err == ""
    assert codes(out) == [("latin1.sh", 4, "LCK401")]
    status, out, err = cli("scan", "blob.sh")
    assert status == 0
    assert err == "lockcheck: warning: blob.sh: binary file, not checked\n"


def test_internal_frontend_error_is_one_line_and_run_goes_on(cli, tmp_path, monkeypatch):
    import lockcheck.frontends as frontends

    real = frontends.parse

    def flaky(language, path, text):
        if "boom" in path:
            raise RuntimeError("unexpected node")
        return real(language, path, text)

    monkeypatch.setattr(frontends, "parse", flaky)
    write(tmp_path, "boom.sh", SILENT_SKIP)
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("scan", "--output-format", "concise")
    assert status == 2
    assert err == (
        "lockcheck: error: boom.sh: internal error in the shell frontend: "
        "RuntimeError: unexpected node\n"
    )
    assert codes(out) == [("backup.sh", 4, "LCK401")]


def test_fail_on_and_exit_zero(cli, tmp_path):
    write(tmp_path, "sync.sh", SYNCED_MKDIR)  # LCK102: error
    write(tmp_path, "rotate.sh", FLOCK_COMMAND)  # LCK403: warning
    assert cli("scan", "rotate.sh")[0] == 1
    assert cli("scan", "rotate.sh", "--fail-on", "error")[0] == 0
    assert cli("scan", "sync.sh", "--fail-on", "error")[0] == 1
    assert cli("scan", "--exit-zero")[0] == 0
    # --exit-zero does not hide errors
    assert cli("scan", "--exit-zero", "missing.sh", "sync.sh")[0] == 2


def test_info_fails_only_with_fail_on_info_or_strict(cli, tmp_path):
    script = write(
        tmp_path,
        "durable.sh",
        """\
#!/bin/bash
exec >>/var/log/durable.log 2>&1
exec 9>"$XDG_RUNTIME_DIR/durable.lock" || exit 3
if ! flock -n 9; then
  echo "$(date) busy, skipped"
  exit 0
fi
make -C /srv/app nightly
""",
    )
    status, out, _ = cli("scan", str(script.name), "--output-format", "concise")
    assert codes(out) == [("durable.sh", 6, "LCK402")]
    assert status == 0
    assert cli("scan", "durable.sh", "--fail-on", "info")[0] == 1
    write(tmp_path, "lockcheck.toml", "strict = true\n")
    assert cli("scan", "durable.sh")[0] == 1
    assert cli("scan", "durable.sh", "--fail-on", "warning")[0] == 0


def test_skip_exit_code_option_reaches_messages_and_fixes(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "backup.sh", "--skip-exit-code", "99", "--output-format", "json")
    (item,) = json.loads(out)
    assert "exit 99" in item["message"]
    assert item["fix"]["edits"][0]["content"] == "99"
    status, _, err = cli("scan", "--skip-exit-code", "0")
    assert status == 2 and err.count("\n") == 1 and "skip-exit-code" in err


def test_select_ignore_and_unknown_selector(cli, tmp_path):
    write(tmp_path, "sync.sh", SYNCED_MKDIR)
    write(tmp_path, "backup.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "--select", "LCK4", "--output-format", "concise")
    assert [c for _, _, c in codes(out)] == ["LCK401"]
    _, out, _ = cli("scan", "--ignore", "LCK401", "--output-format", "concise")
    assert [c for _, _, c in codes(out)] == ["LCK102"]
    _, out, _ = cli(
        "scan", "--select", "LCK102", "--extend-select", "LCK401", "--output-format", "concise"
    )
    assert [c for _, _, c in codes(out)] == ["LCK401", "LCK102"]
    status, out, err = cli("scan", "--select", "LCK999")
    assert status == 2
    assert err == ("lockcheck: error: argument --select: unknown rule selector 'LCK999'\n")


def test_usage_errors_are_one_line(cli):
    status, _, err = cli("scan", "--output-format", "xml")
    assert status == 2 and err.count("\n") == 1 and err.startswith("lockcheck: error: ")
    status, _, err = cli("scan", "--no-such-option")
    assert status == 2 and err.count("\n") == 1


def test_output_format_from_environment_and_output_file(cli, tmp_path, monkeypatch):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    monkeypatch.setenv("LOCKCHECK_OUTPUT_FORMAT", "pylint")
    _, out, _ = cli("scan")
    assert out.startswith("backup.sh:4: [LCK401] ")
    status, out, _ = cli("scan", "--output-format", "json", "--output-file", "out/report.json")
    assert status == 1 and out == ""
    assert json.loads((tmp_path / "out/report.json").read_text())[0]["code"] == "LCK401"
    monkeypatch.setenv("LOCKCHECK_OUTPUT_FORMAT", "yaml")
    status, _, err = cli("scan")
    assert status == 2 and "LOCKCHECK_OUTPUT_FORMAT" in err


def test_quiet_silent_statistics(cli, tmp_path):
    write(tmp_path, "a.sh", SILENT_SKIP)
    write(tmp_path, "b.sh", SILENT_SKIP)
    write(tmp_path, "sync.sh", SYNCED_MKDIR)
    status, out, _ = cli("scan", "-q", "--output-format", "concise")
    assert status == 1 and "Found" not in out and len(out.splitlines()) == 3
    status, out, err = cli("scan", "-s")
    assert (status, out, err) == (1, "", "")
    _, out, _ = cli("scan", "--statistics", "--unsafe-fixes", "-q")
    assert out.splitlines() == [
        "2\tLCK401\t[*] silent-skip",
        "1\tLCK102\t[ ] existence-lock-in-synced-path",
    ]
    _, out, _ = cli("scan", "--statistics", "--output-format", "json")
    assert json.loads(out)[0] == {
        "code": "LCK401",
        "name": "silent-skip",
        "count": 2,
        "fixable": False,
    }


def test_per_file_ignores_relative_to_config(cli, tmp_path):
    write(
        tmp_path,
        "pyproject.toml",
        textwrap.dedent(
            """\
            [project]
            name = "jobs"

            [tool.lockcheck.per-file-ignores]
            "legacy/*.sh" = ["LCK401"]
            "sync.sh" = ["LCK1"]
            """
        ),
    )
    write(tmp_path, "legacy/backup.sh", SILENT_SKIP)
    write(tmp_path, "jobs/backup.sh", SILENT_SKIP)
    write(tmp_path, "jobs/sync.sh", SYNCED_MKDIR)
    _, out, _ = cli("scan", "--output-format", "concise")
    assert codes(out) == [("jobs/backup.sh", 4, "LCK401")]
    # run from a subdirectory: globs stay relative to the configuration file
    os.chdir(tmp_path / "legacy")
    status, out, _ = cli("scan", ".")
    assert status == 0, out


def test_version(cli):
    from lockcheck import __version__

    assert cli("--version")[1] == f"lockcheck {__version__}\n"
    assert cli("scan", "--version")[1] == f"lockcheck {__version__}\n"


def test_no_files_found_warns(cli, tmp_path):
    write(tmp_path, "notes.txt", "nothing here\n")
    status, out, err = cli("scan")
    assert status == 0
    assert err == "lockcheck: warning: no shell or Python files found under the given path(s)\n"


def test_shell_only_run_does_not_import_libcst(tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    code = (
        "import sys\n"
        "from lockcheck.cli import main\n"
        "status = main(['scan', '-q', 'backup.sh'])\n"
        "heavy = ('libcst', 'pathspec', 'concurrent.futures.process')\n"
        "print(status, [m for m in heavy if m in sys.modules])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.stdout.splitlines()[-1] == "1 []", proc.stderr


def test_entry_point_runs_as_module(tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CI")}
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--output-format", "concise"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("backup.sh:4:15: LCK401 ")


def test_gitignore_above_the_scanned_directory_inside_a_repository(cli, tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)
    write(tmp_path, ".git/info/exclude", "*.local.sh\n")
    write(tmp_path, ".gitignore", "generated/\n/jobs/tmp-*.sh\n")
    write(tmp_path, "jobs/generated/a.sh", SILENT_SKIP)
    write(tmp_path, "jobs/tmp-1.sh", SILENT_SKIP)
    write(tmp_path, "jobs/mine.local.sh", SILENT_SKIP)
    write(tmp_path, "jobs/backup.sh", SILENT_SKIP)
    status, out, _ = cli("scan", "--show-files", "jobs")
    assert out.splitlines() == ["jobs/backup.sh"]
    os.chdir(tmp_path / "jobs")
    status, out, _ = cli("scan", "--show-files")
    assert out.splitlines() == ["backup.sh"]


def _stdin(monkeypatch, data: bytes) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_standard_input(cli, tmp_path, monkeypatch):
    _stdin(monkeypatch, SILENT_SKIP.encode())
    status, out, _ = cli("scan", "-", "--output-format", "concise")
    assert status == 1 and codes(out) == [("-", 4, "LCK401")]
    # the name decides the language and the configuration that applies
    write(tmp_path, "jobs/lockcheck.toml", 'ignore = ["LCK401"]\n')
    _stdin(monkeypatch, SILENT_SKIP.replace("#!/bin/bash\n", "").encode())
    status, out, _ = cli("scan", "--stdin-filename", "jobs/backup.sh")
    assert status == 0, out
    _stdin(monkeypatch, b"echo hello\n")
    status, _, err = cli("scan", "-")
    assert status == 2 and "give --stdin-filename" in err and err.count("\n") == 1
    status, _, err = cli("scan", "-", "other.sh")
    assert status == 2 and "cannot be combined" in err


def test_standard_input_fix_prints_the_fixed_text(cli, monkeypatch):
    _stdin(monkeypatch, SILENT_SKIP.encode())
    status, out, err = cli("scan", "--stdin-filename", "backup.sh", "--fix", "--unsafe-fixes", "-")
    assert status == 0
    assert out == SILENT_SKIP.replace("|| exit 0", "|| exit 75")
    assert err == "Found 1 finding (1 fixed, 0 remaining).\n"


def test_a_directory_named_explicitly_is_walked_even_if_excluded(cli, tmp_path):
    # no repository here: the .gitignore files up to the working directory apply
    write(tmp_path, ".gitignore", "generated/\n*.tmp.sh\n")
    write(tmp_path, "generated/a.sh", SILENT_SKIP)
    write(tmp_path, "generated/b.tmp.sh", SILENT_SKIP)
    write(tmp_path, "build/gen.sh", SILENT_SKIP)
    write(tmp_path, "build/node_modules/x.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "--show-files")
    assert out == ""
    _, out, _ = cli("scan", "--show-files", "generated", "build")
    assert out.splitlines() == ["build/gen.sh", "generated/a.sh"]
    # pre-commit style: --force-exclude drops files below an excluded directory
    status, out, _ = cli("scan", "--show-files", "--force-exclude", "build/gen.sh", "build")
    assert out == ""
