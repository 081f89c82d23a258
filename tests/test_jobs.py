"""LCK601-LCK606: job definitions joined to the scripts they start (through the CLI, on a
tree of realistic files).  Every positive stands beside its negative."""

from __future__ import annotations

import textwrap

from helpers import concise_rows, write

NO_LOCK = """\
#!/bin/bash
set -euo pipefail
rsync -a /srv/data/ /backup/
"""

LOCKED = """\
#!/bin/bash
set -euo pipefail
exec 9>"$XDG_RUNTIME_DIR/report.lock"
if ! flock -n 9; then
  exit 75
fi
gzip -k /srv/reports/today
"""


def d(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def rows(cli, *args):
    status, out, err = cli("scan", "--output-format", "concise", *args)
    return status, concise_rows(out), out, err


def scripts(tmp_path):
    write(tmp_path, "scripts/backup.sh", NO_LOCK)
    write(tmp_path, "scripts/report.sh", LOCKED)


# --------------------------------------------------------------------------- LCK601


CRONJOB_ALLOW = d("""
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: backup
    spec:
      schedule: "0 2 * * *"
      jobTemplate:
        spec:
          template:
            spec:
              containers:
                - name: backup
                  image: registry.example.com/backup:1.4
                  command: ["/bin/sh", "-c", "/app/scripts/backup.sh"]
              restartPolicy: OnFailure
""")

CRONJOB_FORBID = d("""
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: backup
    spec:
      schedule: "0 2 * * *"
      concurrencyPolicy: Forbid
      jobTemplate:
        spec:
          activeDeadlineSeconds: 3600
          template:
            spec:
              containers:
                - name: backup
                  image: registry.example.com/backup:1.4
                  command: ["/app/scripts/backup.sh"]
              restartPolicy: OnFailure
""")


def test_cronjob_without_policy_is_lck601_at_kind_line(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/cronjob.yaml", "---\n" + CRONJOB_ALLOW)
    status, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("deploy/cronjob.yaml", 3, "LCK601")], out
    assert "default Allow" in out and status == 1


def test_cronjob_allow_is_reported_on_its_own_line(cli, tmp_path):
    text = CRONJOB_ALLOW.replace(
        '  schedule: "0 2 * * *"\n', '  schedule: "0 2 * * *"\n  concurrencyPolicy: Allow\n'
    )
    write(tmp_path, "cronjob.yaml", text)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("cronjob.yaml", 7, "LCK601")], out


def test_cronjob_forbid_with_deadline_is_clean(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/cronjob.yaml", CRONJOB_FORBID)
    status, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [] and status == 0, out


def test_lock_in_script_does_not_exempt_a_cronjob(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "cronjob.yaml", CRONJOB_ALLOW.replace("backup.sh", "report.sh"))
    _, got, out, _ = rows(cli, "--select", "LCK601,LCK603")
    assert got == [("cronjob.yaml", 2, "LCK601")], out


def test_multi_document_file_reports_each_cronjob(cli, tmp_path):
    other = CRONJOB_ALLOW.replace("name: backup\n", "name: prune\n", 1)
    svc = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
    write(tmp_path, "all.yaml", CRONJOB_FORBID + "---\n" + svc + "---\n" + other)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    first = len(CRONJOB_FORBID.splitlines()) + len(svc.splitlines()) + 2
    assert got == [("all.yaml", first + 2, "LCK601")], out


HELM = d("""
    {{- if .Values.backup.enabled }}
    apiVersion: {{ include "common.capabilities.cronjob.apiVersion" . }}
    kind: CronJob
    metadata:
      name: {{ include "app.fullname" . }}-backup
      labels: {{- include "app.labels" . | nindent 4 }}
    spec:
      schedule: {{ .Values.backup.schedule | quote }}
      {{- with .Values.backup.suspend }}
      suspend: {{ . }}
      {{- end }}
      concurrencyPolicy: {{ .Values.backup.concurrencyPolicy }}
      jobTemplate:
        spec:
          template:
            spec:
              containers:
                - name: backup
                  image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
                  command:
                    - /bin/sh
                    - -c
                    - |
                      {{- if .Values.backup.verbose }}
                      set -x
                      {{- end }}
                      /app/scripts/backup.sh
    {{- end }}
""")


def test_helm_template_is_read_with_actions_masked(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "chart/templates/cronjob.yaml", HELM)
    _, got, out, _ = rows(cli)
    # the policy is a template value: unknown, never guessed; template syntax is no LCK000
    assert got == [], out
    write(
        tmp_path,
        "chart/templates/cronjob.yaml",
        HELM.replace("{{ .Values.backup.concurrencyPolicy }}", "Allow"),
    )
    _, got, out, _ = rows(cli)
    assert ("chart/templates/cronjob.yaml", 12, "LCK601") in got, out
    assert ("chart/templates/cronjob.yaml", 27, "LCK603") in got, out


def test_helm_spec_filled_by_an_include_is_unknown(cli, tmp_path):
    text = d("""
        apiVersion: batch/v1
        kind: CronJob
        metadata:
          name: {{ .Release.Name }}
        spec:
          {{- include "app.cronjobSpec" . | nindent 2 }}
          jobTemplate:
            spec:
              template:
                spec:
                  containers:
                    - name: x
                      image: busybox
    """)
    write(tmp_path, "chart/templates/cron.yaml", text)
    _, got, out, _ = rows(cli)
    assert got == [], out


def test_nomad_periodic_without_prohibit_overlap(cli, tmp_path):
    scripts(tmp_path)
    job = d("""
        job "backup" {
          datacenters = ["dc1"]
          type = "batch"

          periodic {
            cron             = "0 2 * * *"
            time_zone        = "UTC"
          }

          group "backup" {
            task "run" {
              driver = "raw_exec"
              config {
                command = "/opt/app/scripts/backup.sh"
              }
            }
          }
        }
    """)
    write(tmp_path, "nomad/backup.nomad", job)
    _, got, out, _ = rows(cli, "--select", "LCK601,LCK603")
    assert got == [("nomad/backup.nomad", 5, "LCK601"), ("nomad/backup.nomad", 14, "LCK603")], out
    fixed = job.replace(
        'time_zone        = "UTC"\n', 'time_zone        = "UTC"\n    prohibit_overlap = true\n'
    )
    write(tmp_path, "nomad/backup.nomad", fixed)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


DAG = d("""
    from datetime import datetime

    from airflow import DAG
    from airflow.operators.bash import BashOperator

    with DAG(
        dag_id="nightly_backup",
        schedule="0 2 * * *",
        start_date=datetime(2024, 1, 1),
        catchup=False,
    ) as dag:
        BashOperator(task_id="backup", bash_command="/opt/app/scripts/backup.sh ")
""")


def test_airflow_dag_without_max_active_runs(cli, tmp_path):
    write(tmp_path, "dags/backup.py", DAG)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("dags/backup.py", 6, "LCK601")], out
    write(
        tmp_path,
        "dags/backup.py",
        DAG.replace("catchup=False,", "catchup=False,\n    max_active_runs=1,"),
    )
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [], out


def test_airflow_dag_with_max_active_runs_above_one_on_its_line(cli, tmp_path):
    write(
        tmp_path,
        "dags/backup.py",
        DAG.replace("catchup=False,", "catchup=False,\n    max_active_runs=3,"),
    )
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("dags/backup.py", 11, "LCK601")], out


def test_unscheduled_dag_is_not_flagged(cli, tmp_path):
    write(tmp_path, "dags/manual.py", DAG.replace('schedule="0 2 * * *"', "schedule=None"))
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [], out


def task_xml(
    policy: str, limit: str = "PT2H", command: str = "C:\\jobs\\scripts\\backup.sh"
) -> str:
    return d(f"""
        <?xml version="1.0" encoding="UTF-16"?>
        <Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
          <Triggers>
            <CalendarTrigger>
              <StartBoundary>2024-01-01T02:00:00</StartBoundary>
              <ScheduleByDay><DaysInterval>1</DaysInterval></ScheduleByDay>
            </CalendarTrigger>
          </Triggers>
          <Settings>
            <MultipleInstancesPolicy>{policy}</MultipleInstancesPolicy>
            <ExecutionTimeLimit>{limit}</ExecutionTimeLimit>
          </Settings>
          <Actions Context="Author">
            <Exec>
              <Command>C:\\Program Files\\Git\\bin\\bash.exe</Command>
              <Arguments>{command}</Arguments>
            </Exec>
          </Actions>
        </Task>
    """)


def test_windows_task_parallel_utf16_with_bom(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "tasks/Nightly Backup", task_xml("Parallel").encode("utf-16"))
    _, got, out, err = rows(cli, "--select", "LCK6")
    assert got == [("tasks/Nightly Backup", 10, "LCK601")], out + err


def test_windows_task_parallel_is_exempt_when_its_script_locks(cli, tmp_path):
    scripts(tmp_path)
    xml = task_xml("Parallel", command="C:\\jobs\\scripts\\report.sh")
    write(tmp_path, "tasks/report.xml", xml.encode("utf-16"))
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_windows_task_limits(cli, tmp_path):
    write(
        tmp_path,
        "tasks/a.xml",
        task_xml("IgnoreNew", "PT0S").replace('encoding="UTF-16"', 'encoding="UTF-8"'),
    )
    write(tmp_path, "tasks/b.xml", task_xml("Queue", "P3D").encode("utf-16"))
    write(tmp_path, "tasks/c.xml", task_xml("Queue", "PT4H").encode("utf-16"))
    _, got, out, _ = rows(cli, "--select", "LCK604")
    assert got == [("tasks/a.xml", 11, "LCK604"), ("tasks/b.xml", 11, "LCK604")], out


# --------------------------------------------------------------------------- LCK602

WORKFLOW = d("""
    name: nightly
    on:
      schedule:
        - cron: "17 3 * * *"
      workflow_dispatch:
    jobs:
      sync:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - name: sync
            run: |
              echo "syncing"
              ./scripts/backup.sh
""")


def test_scheduled_workflow_without_group_at_on(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, ".github/workflows/nightly.yml", WORKFLOW)
    _, got, out, _ = rows(cli, "--select", "LCK602,LCK603")
    assert got == [
        (".github/workflows/nightly.yml", 2, "LCK602"),
        (".github/workflows/nightly.yml", 14, "LCK603"),
    ], out


def test_workflow_level_group_is_clean(cli, tmp_path):
    scripts(tmp_path)
    text = WORKFLOW.replace(
        "jobs:\n",
        "concurrency:\n  group: ${{ github.workflow }}\n  cancel-in-progress: false\njobs:\n",
    )
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_group_with_run_id_holds_nothing(cli, tmp_path):
    text = WORKFLOW.replace("jobs:\n", "concurrency: nightly-${{ github.run_id }}\njobs:\n")
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [(".github/workflows/nightly.yml", 6, "LCK602")], out
    assert "run_id" in out


def test_run_attempt_alone_does_not_break_a_group(cli, tmp_path):
    text = WORKFLOW.replace("jobs:\n", "concurrency: nightly-${{ github.run_attempt }}\njobs:\n")
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [], out


def test_one_job_without_group_is_reported_at_its_key(cli, tmp_path):
    docs = "  docs:\n    runs-on: ubuntu-latest\n    concurrency: docs\n    steps:\n      - run: make docs\n"
    text = WORKFLOW + docs
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [(".github/workflows/nightly.yml", 7, "LCK602")], out


def test_cancel_in_progress_on_a_publishing_workflow(cli, tmp_path):
    text = WORKFLOW.replace(
        "jobs:\n", "concurrency:\n  group: nightly\n  cancel-in-progress: true\njobs:\n"
    )
    text = text.replace('echo "syncing"', "git push origin gh-pages")
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [(".github/workflows/nightly.yml", 8, "LCK602")], out
    write(
        tmp_path,
        ".github/workflows/nightly.yml",
        text.replace("git push origin gh-pages", "make test"),
    )
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [], out


def test_unscheduled_workflow_is_not_flagged(cli, tmp_path):
    scripts(tmp_path)
    text = WORKFLOW.replace('  schedule:\n    - cron: "17 3 * * *"\n', "  push:\n")
    write(tmp_path, ".github/workflows/ci.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


GITLAB = d("""
    stages: [deploy]

    deploy-prod:
      stage: deploy
      environment: production
      rules:
        - if: $CI_PIPELINE_SOURCE == "schedule"
      script:
        - ./scripts/backup.sh

    lint:
      stage: deploy
      script:
        - make lint
""")


def test_gitlab_scheduled_deploy_without_resource_group(cli, tmp_path):
    write(tmp_path, ".gitlab-ci.yml", GITLAB)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [(".gitlab-ci.yml", 3, "LCK602")], out
    write(
        tmp_path,
        ".gitlab-ci.yml",
        GITLAB.replace(
            "  environment: production\n",
            "  environment: production\n  resource_group: production\n",
        ),
    )
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [], out


# --------------------------------------------------------------------------- LCK603 crontab

CRONTAB = d("""
    MAILTO=ops@example.com
    # m h dom mon dow command
    15 2 * * * /opt/app/scripts/backup.sh >>/var/log/backup.log 2>&1
    30 2 * * * /opt/app/scripts/report.sh
""")


def test_crontab_line_running_a_lockless_script(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [("deploy/app.crontab", 3, "LCK603")], out


def test_crontab_line_wrapped_in_flock_is_clean(cli, tmp_path):
    scripts(tmp_path)
    text = CRONTAB.replace(
        "/opt/app/scripts/backup.sh",
        "flock -n -E 75 /run/lock/backup.lock /opt/app/scripts/backup.sh",
    )
    write(tmp_path, "deploy/app.crontab", text)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_script_not_in_tree_is_unknown(cli, tmp_path):
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_cron_d_file_has_a_user_field(cli, tmp_path):
    scripts(tmp_path)
    write(
        tmp_path, "etc/cron.d/backup", "SHELL=/bin/sh\n15 2 * * * root /opt/app/scripts/backup.sh\n"
    )
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [("etc/cron.d/backup", 2, "LCK603")], out


# --------------------------------------------------------------------------- systemd

TIMER = "[Unit]\nDescription=Nightly backup\n\n[Timer]\nOnCalendar=*-*-* 02:00\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n"
SERVICE = d("""
    [Unit]
    Description=Nightly backup

    [Service]
    Type=oneshot
    ExecStart=/opt/app/scripts/backup.sh
""")


def test_oneshot_without_timeout_is_lck604_at_service(cli, tmp_path):
    write(tmp_path, "systemd/backup.timer", TIMER)
    write(tmp_path, "systemd/backup.service", SERVICE)
    _, got, out, _ = rows(cli, "--select", "LCK604")
    assert got == [("systemd/backup.service", 4, "LCK604")], out
    write(tmp_path, "systemd/backup.service", SERVICE + "TimeoutStartSec=2h\n")
    _, got, out, _ = rows(cli, "--select", "LCK604")
    assert got == [], out


def test_service_without_timer_is_not_flagged(cli, tmp_path):
    write(tmp_path, "systemd/backup.service", SERVICE + "RemainAfterExit=yes\n")
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_remain_after_exit_and_hand_off(cli, tmp_path):
    write(tmp_path, "systemd/backup.timer", TIMER.replace("Persistent=true", "Unit=job.service"))
    svc = SERVICE.replace(
        "ExecStart=/opt/app/scripts/backup.sh",
        "TimeoutStartSec=1h\nRemainAfterExit=yes\nExecStart=/usr/bin/docker run -d --rm backup:1",
    )
    write(tmp_path, "systemd/job.service", svc)
    _, got, out, _ = rows(cli, "--select", "LCK605")
    assert got == [("systemd/job.service", 7, "LCK605"), ("systemd/job.service", 8, "LCK605")], out


# --------------------------------------------------------------------------- LCK606


def test_script_started_by_cron_and_a_timer(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    write(tmp_path, "systemd/backup.timer", TIMER)
    write(tmp_path, "systemd/backup.service", SERVICE + "TimeoutStartSec=2h\n")
    _, got, out, _ = rows(cli, "--select", "LCK606")
    assert got == [("deploy/app.crontab", 3, "LCK606"), ("systemd/backup.service", 6, "LCK606")], (
        out
    )
    assert "systemd/backup.service:6" in out and "deploy/app.crontab:3" in out


def test_script_with_a_lock_started_twice_is_clean(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB.replace("backup.sh", "report.sh"))
    write(tmp_path, "systemd/backup.timer", TIMER)
    write(
        tmp_path,
        "systemd/backup.service",
        SERVICE.replace("backup.sh", "report.sh") + "TimeoutStartSec=2h\n",
    )
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out


def test_every_entry_wrapped_on_the_same_lock_is_clean(cli, tmp_path):
    scripts(tmp_path)
    line = "0 * * * * flock -n -E 75 /run/lock/backup.lock /opt/app/scripts/backup.sh\n"
    write(tmp_path, "a.crontab", line)
    write(tmp_path, "b.crontab", line.replace("0 *", "30 *"))
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out
    write(tmp_path, "b.crontab", line.replace("backup.lock", "other.lock"))
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert [c for *_, c in got] == ["LCK606", "LCK606"], out


# --------------------------------------------------------------------------- LCK000, config, suppressions


def test_unparsable_definition_is_lck000_at_first_bad_line(cli, tmp_path):
    write(tmp_path, ".github/workflows/bad.yml", "on:\n  schedule:\n    - cron: [1, 2\njobs: {}\n")
    write(tmp_path, "bad.crontab", "MAILTO=x\n* * * *\n")
    _, got, out, _ = rows(cli)
    assert (".github/workflows/bad.yml", 3, "LCK000") in got or (
        ".github/workflows/bad.yml",
        4,
        "LCK000",
    ) in got, out
    assert ("bad.crontab", 2, "LCK000") in got, out


def test_definitions_false_switches_the_layer_off(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    write(tmp_path, "pyproject.toml", "[tool.lockcheck]\ndefinitions = false\n")
    _, got, out, _ = rows(cli)
    assert all(c[2][:4] != "LCK6" for c in got) and got == [], out
    status, out, _ = cli("scan", "--show-files")
    assert "deploy/app.crontab" not in out and "scripts/backup.sh" in out


def test_scan_reads_scripts_and_definitions_in_one_run(cli, tmp_path):
    scripts(tmp_path)
    write(
        tmp_path,
        "scripts/rotate.sh",
        "#!/bin/sh\nflock -n /tmp/rotate.lock logrotate /etc/lr.conf\n",
    )
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    _, got, out, _ = rows(cli)
    assert ("deploy/app.crontab", 3, "LCK603") in got, out
    assert any(p == "scripts/rotate.sh" for p, *_ in got), out


def test_suppressions_in_definition_comment_syntax(cli, tmp_path):
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB.replace("2>&1\n", "2>&1  # noqa: LCK603\n"))
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert got == [], out
    text = CRONJOB_ALLOW.replace("kind: CronJob", "# lockcheck: disable=LCK601\nkind: CronJob")
    write(tmp_path, "cronjob.yaml", text)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [], out
    xml = task_xml("Parallel").replace(
        "    <MultipleInstancesPolicy>",
        "    <!-- lockcheck: disable=LCK601 -->\n    <MultipleInstancesPolicy>",
    )
    write(tmp_path, "tasks/t.xml", xml.encode("utf-16"))
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [], out


def test_precommit_definitions_hook_selects_definition_files_by_name():
    import re
    from pathlib import Path

    import yaml

    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "lockcheck-definitions")
    assert "types" not in hook and "types_or" not in hook  # pre-commit ANDs them with files
    pattern = re.compile(hook["files"])
    for path in (
        "deploy/app.crontab",
        "etc/cron.d/backup",
        "systemd/backup.timer",
        ".github/workflows/nightly.yml",
        ".gitlab-ci.yml",
        "chart/templates/cronjob.yaml",
        "nomad/report.nomad.hcl",
        "dags/sync_orders.py",
        "tasks/Nightly Backup",
    ):
        assert pattern.search(path), path
    for path in ("scripts/backup.sh", "src/app/models.py", "README.md"):
        assert not pattern.search(path), path


# --------------------------------------------------------------------------- embedded shell


def test_crontab_flock_without_conflict_code_is_lck403_on_its_line(cli, tmp_path):
    line = "*/5 * * * * flock -n /srv/app/locks/sync.lock /usr/local/bin/sync-feeds\n"
    write(tmp_path, "deploy/app.crontab", "MAILTO=ops@example.com\n" + line)
    _, got, out, _ = rows(cli, "--select", "LCK403")
    assert got == [("deploy/app.crontab", 2, "LCK403")], out
    assert ":2:13:" in out  # the column of flock in the crontab line
    fixed = line.replace("flock -n", "flock -n -E 75")
    write(tmp_path, "deploy/app.crontab", "MAILTO=ops@example.com\n" + fixed)
    _, got, out, _ = rows(cli, "--select", "LCK403")
    assert got == [], out


def test_crontab_embedded_finding_suppressed_by_noqa(cli, tmp_path):
    line = (
        "*/5 * * * * flock -n /srv/app/locks/sync.lock /usr/local/bin/sync-feeds  # noqa: LCK403\n"
    )
    write(tmp_path, "deploy/app.crontab", line)
    _, got, out, _ = rows(cli, "--select", "LCK403")
    assert got == [], out


def test_workflow_run_step_is_read_as_bash_e_with_lines_mapped(cli, tmp_path):
    text = d("""
        name: refresh
        on:
          schedule:
            - cron: "0 * * * *"
        concurrency: refresh
        jobs:
          refresh:
            runs-on: self-hosted
            steps:
              - run: |
                  echo "ref ${{ github.ref }}"
                  flock -n /srv/ci/locks/refresh.lock ./refresh-cache
    """)
    write(tmp_path, ".github/workflows/refresh.yml", text)
    _, got, out, _ = rows(cli)
    # under bash -e a failed flock's status leaves the step: LCK403, on the flock line
    assert got == [(".github/workflows/refresh.yml", 12, "LCK403")], out
    assert ":12:11:" in out


def test_gitlab_script_line_is_shell(cli, tmp_path):
    text = GITLAB.replace(
        "    - ./scripts/backup.sh\n", "    - flock -n /srv/ci/deploy.lock make deploy\n"
    )
    write(tmp_path, ".gitlab-ci.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK403")
    assert got == [(".gitlab-ci.yml", 9, "LCK403")], out


def test_dockerfile_run_gets_the_script_rules_not_lck6(cli, tmp_path):
    scripts(tmp_path)
    text = d("""
        FROM debian:12
        COPY scripts/ /opt/app/scripts/
        RUN apt-get update \\
         && apt-get install -y util-linux \\
         && flock -n /var/cache/build/apt.lock apt-get install -y curl
        RUN ["/opt/app/scripts/backup.sh"]
        CMD ["/opt/app/scripts/backup.sh"]
    """)
    write(tmp_path, "Dockerfile", text)
    _, got, out, _ = rows(cli)
    assert ("Dockerfile", 5, "LCK403") in got, out
    assert all(p == "Dockerfile" and c[:4] != "LCK6" for p, _, c in got), out


def test_quoted_message_is_no_script_and_one_job_is_one_entry(cli, tmp_path):
    # found on a real workflow: `git commit -m "Runs update.sh"` named the script a second time
    write(tmp_path, "update.sh", NO_LOCK)
    text = WORKFLOW.replace("./scripts/backup.sh", "./update.sh") + (
        "      - run: |\n"
        '          git commit -m "Runs update.sh" || echo "Nothing to update"\n'
        "      - run: ./update.sh --verify\n"
    )
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK603,LCK606")
    assert got == [
        (".github/workflows/nightly.yml", 14, "LCK603"),
        (".github/workflows/nightly.yml", 17, "LCK603"),
    ], out


def test_windows_task_declared_utf16_but_saved_as_utf8_is_read(cli, tmp_path):
    """An export edited and saved as UTF-8 (no BOM) keeps its `encoding="UTF-16"`
    declaration: Task Scheduler reads it; so does lockcheck (expat alone refuses it)."""
    scripts(tmp_path)
    write(tmp_path, "tasks/utf8.xml", task_xml("Parallel").encode("utf-8"))
    write(tmp_path, "tasks/bom.xml", task_xml("Parallel").encode("utf-16"))
    bad = task_xml("Parallel").replace("</Settings>", "</Setings>")  # the negative: broken
    write(tmp_path, "tasks/broken.xml", bad.encode("utf-8"))
    _, got, out, err = rows(cli, "--select", "LCK000,LCK601")
    assert got == [
        ("tasks/bom.xml", 10, "LCK601"),
        ("tasks/broken.xml", 12, "LCK000"),
        ("tasks/utf8.xml", 10, "LCK601"),
    ], out + err
