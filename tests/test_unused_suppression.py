"""LCK001 unused-suppression and unknown codes in suppression comments, through the CLI."""

from __future__ import annotations

from helpers import concise_rows, write

# LCK401 on line 4 is silenced (used); LCK201 there and the disable= for LCK403 silence nothing
JOB = """\
#!/bin/bash
# nightly: export the orders table
exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/export.lock" || exit 3
flock -n 9 || exit 0  # noqa: LCK401, LCK201
# lockcheck: disable=LCK403
pg_dump orders > /srv/export/orders.sql
echo done  # noqa
"""

PY_JOB = """\
import fcntl
import os
import sys

LOCK = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/run/user/1000"), "x.lock")  # noqa: E501
fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit(75)  # noqa
work()
"""


def test_off_by_default_and_not_turned_on_by_all(cli, tmp_path):
    write(tmp_path, "export.sh", JOB)
    assert cli("scan", "--isolated", "export.sh") == (0, "All checks passed!\n", "")
    status, out, _ = cli("scan", "--isolated", "--select", "ALL", "export.sh")
    assert status == 0 and "LCK001" not in out


def test_extend_select_reports_each_unused_suppression(cli, tmp_path):
    write(tmp_path, "export.sh", JOB)
    status, out, err = cli(
        "scan", "--isolated", "--extend-select", "LCK001", "--output-format", "concise"
    )
    assert status == 0, err  # info: shown, does not fail the run
    assert concise_rows(out) == [
        ("export.sh", 4, "LCK001"),
        ("export.sh", 5, "LCK001"),
        ("export.sh", 7, "LCK001"),
    ]
    assert "unused `noqa` for LCK201" in out and "LCK401" not in out.split("LCK201")[0]
    assert "unused `disable=` for LCK403" in out


def test_fix_drops_unused_codes_and_comments(cli, tmp_path):
    p = write(tmp_path, "export.sh", JOB)
    status, out, _ = cli("scan", "--isolated", "--extend-select", "LCK001", "--fix")
    assert status == 0
    assert p.read_text() == (
        "#!/bin/bash\n"
        "# nightly: export the orders table\n"
        'exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/export.lock" || exit 3\n'
        "flock -n 9 || exit 0  # noqa: LCK401\n"
        "pg_dump orders > /srv/export/orders.sql\n"
        "echo done\n"
    )
    # the comment that still works keeps working
    assert cli("scan", "--isolated", "export.sh")[0] == 0


def test_unknown_code_is_a_warning_on_stderr(cli, tmp_path):
    write(tmp_path, "export.sh", JOB.replace("LCK201", "LCK999"))
    status, out, err = cli("scan", "--isolated", "export.sh")
    assert (status, out) == (0, "All checks passed!\n")
    assert err == (
        "lockcheck: warning: export.sh: suppression comment names unknown rule code "
        "LCK999 (line 4)\n"
    )
    _, out, _ = cli("scan", "--isolated", "--extend-select", "LCK001", "export.sh")
    assert "`noqa` names unknown code LCK999" in out


def test_other_linters_codes_and_bare_noqa_in_python_are_left_alone(cli, tmp_path):
    write(tmp_path, "job.py", PY_JOB)
    status, out, err = cli("scan", "--isolated", "--extend-select", "LCK001", "job.py")
    assert (status, out, err) == (0, "All checks passed!\n", "")
