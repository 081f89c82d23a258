"""Fixes of the job-definition rules through the CLI: each is applied (`--fix
--unsafe-fixes`, or a suggestion taken from `--diff` and applied with `patch`), the tree is
scanned again (the finding is gone, the file still parses) and every other byte of the file is
as it was.  Beside each, a case where no fix is offered or none is applied."""

from __future__ import annotations

import subprocess

from helpers import write
from test_jobs import (
    CRONJOB_ALLOW,
    CRONTAB,
    DAG,
    GITLAB,
    HELM,
    WORKFLOW,
    d,
    rows,
    scripts,
    task_xml,
)


def fix(cli, *args):
    return cli("scan", "--output-format", "concise", "--fix", "--unsafe-fixes", *args)


def only_change(before: str, after: str, removed: list[str], added: list[str]) -> None:
    """``after`` is ``before`` with exactly these lines removed and added (in order)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    import difflib

    minus, plus = [], []
    for line in difflib.ndiff(a, b):
        if line.startswith("- "):
            minus.append(line[2:].rstrip("\n"))
        elif line.startswith("+ "):
            plus.append(line[2:].rstrip("\n"))
    assert (minus, plus) == (removed, added), after


def clean_of(cli, code: str) -> None:
    _, got, out, _ = rows(cli, "--select", f"{code},LCK000")
    assert got == [], out


# --------------------------------------------------------------------------- LCK601 (unsafe)


def test_cronjob_policy_added_under_spec(cli, tmp_path):
    scripts(tmp_path)
    p = write(tmp_path, "deploy/cronjob.yaml", CRONJOB_ALLOW)
    status, out, err = fix(cli, "--select", "LCK601")
    only_change(CRONJOB_ALLOW, p.read_text(), [], ["  concurrencyPolicy: Forbid"])
    assert p.read_text().index("concurrencyPolicy") < p.read_text().index("schedule")
    clean_of(cli, "LCK601")


def test_cronjob_policy_needs_unsafe_fixes(cli, tmp_path):
    p = write(tmp_path, "deploy/cronjob.yaml", CRONJOB_ALLOW)
    status, out, err = cli("scan", "--fix", "--select", "LCK601")
    assert p.read_text() == CRONJOB_ALLOW and status == 1
    assert "--unsafe-fixes" in out + err


def test_cronjob_allow_replaced_in_its_quotes_with_four_space_indent(cli, tmp_path):
    text = CRONJOB_ALLOW.replace("\n  ", "\n    ").replace(
        '    schedule: "0 2 * * *"\n', '    schedule: "0 2 * * *"\n    concurrencyPolicy: "Allow"\n'
    )
    p = write(tmp_path, "cronjob.yaml", text)
    fix(cli, "--select", "LCK601")
    only_change(
        text, p.read_text(), ['    concurrencyPolicy: "Allow"'], ['    concurrencyPolicy: "Forbid"']
    )
    clean_of(cli, "LCK601")


def test_helm_cronjob_policy_goes_after_spec_outside_a_conditional(cli, tmp_path):
    text = HELM.replace("  concurrencyPolicy: {{ .Values.backup.concurrencyPolicy }}\n", "")
    assert "concurrencyPolicy" not in text
    p = write(tmp_path, "chart/templates/cronjob.yaml", text)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert [c for _p, _l, c in got] == ["LCK601"], out
    fix(cli, "--select", "LCK601")
    new = p.read_text()
    only_change(text, new, [], ["  concurrencyPolicy: Forbid"])
    lines = new.splitlines()
    assert lines[lines.index("  concurrencyPolicy: Forbid") - 1] == "spec:"
    clean_of(cli, "LCK601")


def test_cronjob_with_flow_spec_gets_no_fix(cli, tmp_path):
    text = d("""
        apiVersion: batch/v1
        kind: CronJob
        metadata: {name: tiny}
        spec: {schedule: "*/5 * * * *", jobTemplate: {spec: {template: {spec: {containers: []}}}}}
    """)
    p = write(tmp_path, "tiny.yaml", text)
    status, out, err = fix(cli, "--select", "LCK601")
    assert p.read_text() == text and status == 1, out


def test_nomad_prohibit_overlap_added_in_periodic(cli, tmp_path):
    text = d("""
        job "backup" {
            type = "batch"
            periodic {
                cron = "0 2 * * *"
            }
        }
    """)
    p = write(tmp_path, "backup.nomad", text)
    fix(cli, "--select", "LCK601")
    only_change(text, p.read_text(), [], ["        prohibit_overlap = true"])
    clean_of(cli, "LCK601")
    false = text.replace(
        'cron = "0 2 * * *"', 'cron = "0 2 * * *"\n        prohibit_overlap = false'
    )
    p.write_text(false)
    fix(cli, "--select", "LCK601")
    only_change(
        false,
        p.read_text(),
        ["        prohibit_overlap = false"],
        ["        prohibit_overlap = true"],
    )


def test_airflow_max_active_runs_added_one_argument_a_line(cli, tmp_path):
    p = write(tmp_path, "dags/backup.py", DAG)
    fix(cli, "--select", "LCK601")
    only_change(DAG, p.read_text(), [], ["    max_active_runs=1,"])
    compile(p.read_text(), "backup.py", "exec")
    clean_of(cli, "LCK601")


def test_airflow_max_active_runs_on_one_line_and_replaced(cli, tmp_path):
    one = 'from airflow import DAG\n\ndag = DAG("sync", schedule="@hourly")\n'
    p = write(tmp_path, "dags/sync.py", one)
    fix(cli, "--select", "LCK601")
    assert p.read_text() == one.replace('"@hourly")', '"@hourly", max_active_runs=1)')
    three = DAG.replace("catchup=False,", "catchup=False,\n    max_active_runs=3,")
    p.write_text(three)
    fix(cli, "--select", "LCK601")
    only_change(three, p.read_text(), ["    max_active_runs=3,"], ["    max_active_runs=1,"])
    clean_of(cli, "LCK601")


def test_airflow_dag_with_kwargs_gets_no_fix(cli, tmp_path):
    text = 'from airflow import DAG\n\ndag = DAG("sync", schedule="@hourly", **common)\n'
    p = write(tmp_path, "dags/sync.py", text)
    fix(cli, "--select", "LCK601")
    assert p.read_text() == text


def test_windows_task_policy_utf16_bom_kept(cli, tmp_path):
    xml = task_xml("Parallel")
    p = write(tmp_path, "tasks/Nightly Backup", xml.encode("utf-16"))
    before = p.read_bytes()
    fix(cli, "--select", "LCK601")
    after = p.read_bytes()
    assert after[:2] == before[:2] == b"\xff\xfe"
    assert after.decode("utf-16") == xml.replace(">Parallel<", ">IgnoreNew<")
    clean_of(cli, "LCK601")


# --------------------------------------------------------------------------- suggestions


def apply_suggestions(cli, tmp_path, code: str) -> str:
    """`--diff` output for ``code`` (its suggestions), applied with patch(1)."""
    status, out, err = cli("scan", "--diff", "--select", code)
    assert "suggestion, not applied by --fix" in out, out + err
    diff = "".join(line + "\n" for line in out.splitlines() if not line.startswith("# "))
    proc = subprocess.run(
        ["patch", "-p1", "--forward", "--quiet"], input=diff, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, diff
    return diff


def test_workflow_group_suggested_before_jobs_and_never_applied(cli, tmp_path):
    scripts(tmp_path)
    p = write(tmp_path, ".github/workflows/nightly.yml", WORKFLOW)
    fix(cli, "--select", "LCK602")
    assert p.read_text() == WORKFLOW  # a suggestion: --fix leaves it
    apply_suggestions(cli, tmp_path, "LCK602")
    only_change(
        WORKFLOW,
        p.read_text(),
        [],
        ["concurrency:", "  group: ${{ github.workflow }}", "  cancel-in-progress: false"],
    )
    assert p.read_text().index("concurrency:") < p.read_text().index("jobs:")
    clean_of(cli, "LCK602")


def test_gitlab_resource_group_suggested_in_the_job(cli, tmp_path):
    p = write(tmp_path, ".gitlab-ci.yml", GITLAB)
    apply_suggestions(cli, tmp_path, "LCK602")
    only_change(GITLAB, p.read_text(), [], ["  resource_group: deploy-prod"])
    clean_of(cli, "LCK602")


def test_crontab_wrap_suggested_with_the_configured_code(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "lockcheck.toml", "skip-exit-code = 99\n")
    p = write(tmp_path, "deploy/app.crontab", CRONTAB)
    apply_suggestions(cli, tmp_path, "LCK603")
    line = "15 2 * * * /opt/app/scripts/backup.sh >>/var/log/backup.log 2>&1"
    wrapped = line.replace("/opt/", "flock -n -E 99 /var/lock/backup.lock /opt/", 1)
    only_change(CRONTAB, p.read_text(), [line], [wrapped])
    _, got, out, _ = rows(cli, "--select", "LCK6,LCK4,LCK000")
    assert got == [], out


def test_cronjob_step_gets_no_wrap_suggestion(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/cronjob.yaml", CRONJOB_ALLOW)
    status, out, err = cli("scan", "--diff", "--select", "LCK603")
    assert "LCK603" not in out, out


def test_cronjob_deadline_suggested_in_the_job_template(cli, tmp_path):
    text = CRONJOB_ALLOW.replace(
        '  schedule: "0 2 * * *"\n', '  schedule: "0 2 * * *"\n  concurrencyPolicy: Forbid\n'
    )
    p = write(tmp_path, "cronjob.yaml", text)
    apply_suggestions(cli, tmp_path, "LCK604")
    only_change(text, p.read_text(), [], ["      activeDeadlineSeconds: 3600"])
    clean_of(cli, "LCK604")


TIMER = "[Unit]\nDescription=sync\n\n[Timer]\nOnCalendar=hourly\n"


def test_oneshot_timeout_suggested_and_infinity_replaced(cli, tmp_path):
    write(tmp_path, "sync.timer", TIMER)
    unit = "[Unit]\nDescription=sync\n\n[Service]\nType=oneshot\nExecStart=/usr/local/bin/sync\n"
    p = write(tmp_path, "sync.service", unit)
    apply_suggestions(cli, tmp_path, "LCK604")
    only_change(unit, p.read_text(), [], ["TimeoutStartSec=1h"])
    clean_of(cli, "LCK604")
    p.write_text(unit + "TimeoutStartSec=infinity\n")
    apply_suggestions(cli, tmp_path, "LCK604")
    assert p.read_text() == unit + "TimeoutStartSec=1h\n"


def test_remain_after_exit_removal_suggested(cli, tmp_path):
    write(tmp_path, "sync.timer", TIMER)
    unit = (
        "[Unit]\nDescription=sync\n\n[Service]\nType=simple\nRemainAfterExit=yes\n"
        "ExecStart=/usr/local/bin/sync\n"
    )
    p = write(tmp_path, "sync.service", unit)
    status, out, err = fix(cli, "--select", "LCK605")
    assert p.read_text() == unit  # a suggestion: never applied
    apply_suggestions(cli, tmp_path, "LCK605")
    only_change(unit, p.read_text(), ["RemainAfterExit=yes"], [])
    clean_of(cli, "LCK605")


# --------------------------------------------------------------------------- embedded shell

WF_FLOCK = """\
name: nightly
on:
  schedule:
    - cron: "0 1 * * *"
concurrency:
  group: nightly
jobs:
  sync:
    runs-on: [self-hosted]
    steps:
      - name: sync
        run: |
          echo "start"
          flock -n /var/lock/sync.lock ./sync.sh
"""


def test_embedded_shell_fix_in_a_crontab_line(cli, tmp_path):
    text = "MAILTO=ops@example.com\n*/5 * * * * flock -n /var/lock/sync.lock /usr/local/bin/sync\n"
    p = write(tmp_path, "sync.cron", text)
    fix(cli, "--select", "LCK403")
    only_change(
        text,
        p.read_text(),
        ["*/5 * * * * flock -n /var/lock/sync.lock /usr/local/bin/sync"],
        ["*/5 * * * * flock -E 75 -n /var/lock/sync.lock /usr/local/bin/sync"],
    )
    clean_of(cli, "LCK403")


def test_embedded_shell_fix_in_a_run_block(cli, tmp_path):
    p = write(tmp_path, ".github/workflows/nightly.yml", WF_FLOCK)
    fix(cli, "--select", "LCK403")
    old = "          flock -n /var/lock/sync.lock ./sync.sh"
    only_change(WF_FLOCK, p.read_text(), [old], [old.replace("flock -n", "flock -E 75 -n")])
    clean_of(cli, "LCK403")


def test_embedded_fix_on_a_line_with_an_expression_is_not_offered(cli, tmp_path):
    """`${{ }}` is masked in the analysed text: an edit on its line would not land right."""
    text = WF_FLOCK.replace("./sync.sh", "./sync.sh ${{ inputs.mode }}")
    p = write(tmp_path, ".github/workflows/nightly.yml", text)
    status, out, err = fix(cli, "--select", "LCK403")
    assert p.read_text() == text and "LCK403" in out, out


def test_cronjob_fixes_are_built_without_parsing_the_yaml_again(cli, tmp_path, monkeypatch):
    """Where a CronJob's keys go (under ``spec``, under ``jobTemplate.spec``) is read with the
    file in its worker (issue #15: a second parse of every CronJob template in the main
    process cost bitnami/charts ~0.02 s): the scan's own process parses no YAML, and the
    fixes land where they did."""
    from lockcheck.definitions import yamltree

    parsed = []
    real = yamltree.parse_yaml
    monkeypatch.setattr(yamltree, "parse_yaml", lambda *a, **k: parsed.append(1) or real(*a, **k))
    text = CRONJOB_ALLOW.replace(
        '  schedule: "0 2 * * *"\n', '  schedule: "0 2 * * *"\n  concurrencyPolicy: Forbid\n'
    )
    write(tmp_path, "forbid.yaml", text)
    write(tmp_path, "allow.yaml", CRONJOB_ALLOW)
    status, out, err = cli("scan", "--output-format", "json", "--select", "LCK601,LCK604")
    assert parsed == [], "the main process parsed a definition again"
    import json

    edits = {
        (f["code"], (f["fix"] or f["suggestion"])["edits"][0]["content"]) for f in json.loads(out)
    }
    assert edits == {
        ("LCK601", "  concurrencyPolicy: Forbid\n"),
        ("LCK604", "      activeDeadlineSeconds: 3600\n"),
    }, out
