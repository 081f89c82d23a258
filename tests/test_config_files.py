"""Configuration discovery, precedence and validation (through the CLI)."""

from __future__ import annotations

import os

import pytest
from helpers import write

SILENT_SKIP = """\
#!/bin/bash
exec 9>"$XDG_RUNTIME_DIR/backup.lock" || exit 3
flock -n 9 || exit 0
tar -czf /backup/home.tgz /home
"""

SYNCED = """\
#!/bin/bash
STATE=/srv/team-share/state
if ! mkdir "$STATE/import.lock"; then
  echo "import already running" >&2
  exit 75
fi
trap 'rmdir "$STATE/import.lock"' EXIT
./import-batch.sh
"""


def found(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if line.count(":") >= 3]


def test_unknown_key_in_pyproject(cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.lockcheck]\nselekt = ["LCK401"]\n')
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, out, err = cli("scan")
    assert status == 2 and out == ""
    assert err == (
        "lockcheck: error: pyproject.toml: [tool.lockcheck] unknown key 'selekt' "
        "(did you mean 'select'?)\n"
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ("select = 'LCK401'", "key 'select': expected a list of strings"),
        ("ignore = ['LCK9']", "key 'ignore': unknown rule selector 'LCK9'"),
        ("skip-exit-code = 0", "key 'skip-exit-code': expected an integer 1..255"),
        ("skip-exit-code = true", "key 'skip-exit-code': expected an integer 1..255"),
        ("fail-on = 'never'", "key 'fail-on': expected one of error, warning, info"),
        ("strict = 'yes'", "key 'strict': expected true or false"),
        ("[per-file-ignores]\n'*.sh' = ['LCK40X']", "unknown rule selector 'LCK40X'"),
        ("speed = 3", "unknown key 'speed'"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_values_name_file_and_key(cli, tmp_path, body, message):
    write(tmp_path, "lockcheck.toml", body + "\n")
    write(tmp_path, "backup.sh", SILENT_SKIP)
    status, _, err = cli("scan")
    assert status == 2
    assert err.startswith("lockcheck: error: lockcheck.toml: ")
    assert message in err
    assert err.count("\n") == 1


def test_precedence_in_one_directory(cli, tmp_path):
    write(tmp_path, "backup.sh", SILENT_SKIP)
    write(tmp_path, "sync.sh", SYNCED)
    write(tmp_path, "pyproject.toml", '[tool.lockcheck]\nselect = ["LCK102"]\n')
    assert found(cli("scan", "--output-format", "concise")[1]) == []  # nothing synced yet
    write(tmp_path, "pyproject.toml", "[tool.lockcheck]\nsynced-paths = ['/srv/team-share']\n")
    assert found(cli("scan", "--output-format", "concise")[1]) == ["LCK401", "LCK102"]
    write(tmp_path, "lockcheck.toml", 'select = ["LCK4"]\n')
    assert found(cli("scan", "--output-format", "concise")[1]) == ["LCK401"]
    # the winner is used alone (no merging): synced-paths from pyproject.toml is gone
    write(tmp_path, ".lockcheck.toml", 'ignore = ["LCK401"]\n')
    assert found(cli("scan", "--output-format", "concise")[1]) == ["LCK101"]


def test_pyproject_without_table_is_passed_over(cli, tmp_path):
    write(tmp_path, "lockcheck.toml", 'ignore = ["LCK401"]\n')
    write(tmp_path, "app/pyproject.toml", '[project]\nname = "app"\n')
    write(tmp_path, "app/backup.sh", SILENT_SKIP)
    os.chdir(tmp_path / "app")
    status, out, _ = cli("scan")
    assert status == 0, out


def test_nearest_configuration_applies_per_directory(cli, tmp_path):
    write(tmp_path, "lockcheck.toml", 'ignore = ["LCK401"]\n')
    write(tmp_path, "strict/lockcheck.toml", "strict = true\n")
    write(tmp_path, "top.sh", SILENT_SKIP)
    write(tmp_path, "strict/backup.sh", SILENT_SKIP)
    _, out, _ = cli("scan", "--output-format", "concise")
    assert [line.split(":")[0] for line in out.splitlines() if ":" in line] == ["strict/backup.sh"]


def test_config_option_and_isolated(cli, tmp_path):
    write(tmp_path, "lockcheck.toml", 'ignore = ["LCK401"]\n')
    write(tmp_path, "ci/lockcheck-ci.toml", 'select = ["LCK401"]\nskip-exit-code = 69\n')
    write(tmp_path, "backup.sh", SILENT_SKIP)
    assert cli("scan")[0] == 0
    status, out, _ = cli("scan", "--config", "ci/lockcheck-ci.toml", "--output-format", "concise")
    assert status == 1 and "exit 69" in out
    assert cli("scan", "--isolated")[0] == 1
    status, _, err = cli("scan", "--config", "missing.toml")
    assert (status, err) == (2, "lockcheck: error: missing.toml: No such file or directory\n")


def test_command_line_wins_over_configuration(cli, tmp_path):
    write(tmp_path, "lockcheck.toml", 'select = ["LCK102"]\nfail-on = "error"\n')
    write(tmp_path, "backup.sh", SILENT_SKIP)
    assert cli("scan")[0] == 0
    status, out, _ = cli("scan", "--select", "LCK401", "--output-format", "concise")
    assert status == 1 and found(out) == ["LCK401"]


def test_synced_path_option(cli, tmp_path):
    write(tmp_path, "sync.sh", SYNCED)
    _, out, _ = cli("scan", "--output-format", "concise")
    assert found(out) == ["LCK101"]
    _, out, _ = cli(
        "scan",
        "--synced-path",
        "/srv/team-share",
        "--synced-path",
        "/mnt/x",
        "--output-format",
        "concise",
    )
    assert found(out) == ["LCK102"]
