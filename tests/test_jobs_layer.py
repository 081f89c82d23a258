"""The definitions layer as a part of the scan: reading definitions once, safely, with YAML
anchors resolved (through the CLI, on realistic files)."""

from __future__ import annotations

import os

import pytest
from helpers import concise_rows, write
from test_jobs import CRONJOB_ALLOW, CRONJOB_FORBID, scripts


def rows(cli, *args):
    status, out, err = cli("scan", "--output-format", "concise", *args)
    return status, concise_rows(out), out, err


def test_a_fifo_named_like_a_unit_does_not_block_the_run(cli, tmp_path):
    os.mkfifo(tmp_path / "nightly.timer")  # named explicitly: never opened
    write(tmp_path, "cronjob.yaml", CRONJOB_ALLOW)
    status, got, out, err = rows(cli, "nightly.timer", "cronjob.yaml", "--select", "LCK6")
    assert status == 2, out
    assert "nightly.timer: not a regular file" in err
    assert got == [("cronjob.yaml", 2, "LCK601")], out


def test_a_binary_definition_named_explicitly_is_a_warning(cli, tmp_path):
    write(tmp_path, "backup.cron", b"\0\x01\x02 * * * * /opt/backup.sh\n")
    status, got, out, err = rows(cli, "backup.cron")
    assert got == [] and status == 0, out
    assert "backup.cron: binary file, not checked" in err


def test_policy_through_a_yaml_alias_is_read(cli, tmp_path):
    """An alias to an anchor defined earlier in the file carries its value (and an alias
    whose anchor says Allow is still the default)."""
    scripts(tmp_path)
    forbid = CRONJOB_FORBID.replace(
        "metadata:\n", "metadata:\n  annotations:\n    policy: &policy Forbid\n", 1
    ).replace("concurrencyPolicy: Forbid", "concurrencyPolicy: *policy")
    write(tmp_path, "forbid.yaml", forbid)
    allow = forbid.replace("&policy Forbid", "&policy Allow").replace("name: backup", "name: b2")
    write(tmp_path, "allow.yaml", allow)
    _, got, out, _ = rows(cli, "--select", "LCK601,LCK604")
    assert got == [("allow.yaml", 9, "LCK601")], out


def test_cronjob_deep_in_a_large_multi_document_file(cli, tmp_path):
    """A CronJob after many other documents is found (the file is sniffed for it once)."""
    svc = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg{}\ndata:\n  k: v\n"
    head = "".join(svc.format(i) for i in range(200))
    write(tmp_path, "bundle.yaml", head + "---\n" + CRONJOB_ALLOW)
    _, got, out, _ = rows(cli, "--select", "LCK601")
    assert got == [("bundle.yaml", head.count("\n") + 3, "LCK601")], out


# --------------------------------------------------------------------------- the join feeds
# the script rules: a scheduled script is `started_by_job` (LCK404), a unit's script's
# background work is LCK605

TRAP_NO_LOCK = """\
#!/bin/bash
set -euo pipefail
cleanup() {
  rm -rf "$WORK"
  exit 0
}
WORK=$(mktemp -d)
trap cleanup EXIT
rsync -a /srv/data/ "$WORK/"
tar -czf /backup/data.tgz -C "$WORK" .
"""


def test_exit_trap_of_a_script_started_by_cron_is_lck404(cli, tmp_path):
    write(tmp_path, "scripts/archive.sh", TRAP_NO_LOCK)
    _, got, out, _ = rows(cli, "--select", "LCK404")
    assert got == [], out  # an interactive tool: its status is nobody's skip signal
    write(tmp_path, "deploy/app.crontab", "15 2 * * * /opt/app/scripts/archive.sh\n")
    _, got, out, _ = rows(cli, "--select", "LCK404")
    assert got == [("scripts/archive.sh", 5, "LCK404")], out


def test_script_named_by_an_unscheduled_workflow_is_not_started_by_a_job(cli, tmp_path):
    write(tmp_path, "scripts/archive.sh", TRAP_NO_LOCK)
    wf = "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ./scripts/archive.sh\n"
    write(tmp_path, ".github/workflows/ci.yml", wf)
    _, got, out, _ = rows(cli, "--select", "LCK404")
    assert got == [], out


LOCK_AND_BACKGROUND = """\
#!/bin/bash
exec 9>/run/lock/fetch.lock
flock -n 9 || exit 75
/opt/app/bin/fetch --all &
echo "started fetch"
"""

FETCH_TIMER = "[Unit]\nDescription=fetch\n\n[Timer]\nOnCalendar=hourly\n"


def fetch_service(kill_mode: str) -> str:
    return (
        "[Unit]\nDescription=fetch\n\n[Service]\nType=simple\n"
        + (f"KillMode={kill_mode}\n" if kill_mode else "")
        + "ExecStart=/opt/app/scripts/fetch.sh\n"
    )


def test_killmode_process_and_a_script_that_backgrounds_is_lck605(cli, tmp_path):
    write(tmp_path, "scripts/fetch.sh", LOCK_AND_BACKGROUND)
    write(tmp_path, "systemd/fetch.timer", FETCH_TIMER)
    write(tmp_path, "systemd/fetch.service", fetch_service("process"))
    _, got, out, _ = rows(cli, "--select", "LCK605")
    assert got == [("systemd/fetch.service", 7, "LCK605")], out
    assert "in `scripts/fetch.sh`" in out


def test_default_killmode_or_no_background_is_not_lck605(cli, tmp_path):
    write(tmp_path, "scripts/fetch.sh", LOCK_AND_BACKGROUND)
    write(tmp_path, "systemd/fetch.timer", FETCH_TIMER)
    write(tmp_path, "systemd/fetch.service", fetch_service(""))
    _, got, out, _ = rows(cli, "--select", "LCK605")
    assert got == [], out  # control-group: the child is killed with the unit
    write(tmp_path, "systemd/fetch.service", fetch_service("process"))
    write(tmp_path, "scripts/fetch.sh", LOCK_AND_BACKGROUND.replace(" &\n", "\n"))
    _, got, out, _ = rows(cli, "--select", "LCK605")
    assert got == [], out


# --------------------------------------------------------------------------- ExecStart= shell


def unit(exec_start: str) -> str:
    return (
        "[Unit]\nDescription=sync\n\n[Service]\nType=oneshot\nTimeoutStartSec=1h\n"
        f"ExecStart={exec_start}\n"
    )


def test_exec_start_sh_c_literal_is_embedded_shell_mapped_to_its_column(cli, tmp_path):
    write(tmp_path, "systemd/sync.timer", FETCH_TIMER)
    write(
        tmp_path,
        "systemd/sync.service",
        unit("/bin/sh -c 'flock -n %h/sync.lock rsync -a /srv/ /b/'"),
    )
    _, got, out, _ = rows(cli, "--select", "LCK403")
    assert got == [("systemd/sync.service", 7, "LCK403")], out
    assert "sync.service:7:23:" in out  # the column of `flock` inside the quotes
    fixed = unit("/bin/sh -c 'flock -n -E 75 %h/sync.lock rsync -a /srv/ /b/'")
    write(tmp_path, "systemd/sync.service", fixed)
    _, got, out, _ = rows(cli, "--select", "LCK4,LCK000")
    assert got == [], out


def test_exec_start_without_a_shell_is_not_shell(cli, tmp_path):
    """`ExecStart=` is not a shell: `flock -n L cmd` there is an argv, its status systemd's."""
    write(tmp_path, "systemd/sync.timer", FETCH_TIMER)
    write(tmp_path, "systemd/sync.service", unit("/usr/bin/flock -n /run/lock/s.lock /opt/sync"))
    _, got, out, _ = rows(cli, "--select", "LCK4,LCK000")
    assert got == [], out


def test_exec_start_bash_c_names_a_script_of_the_tree(cli, tmp_path):
    write(tmp_path, "scripts/backup.sh", "#!/bin/bash\nrsync -a /srv/data/ /backup/\n")
    write(tmp_path, "deploy/app.crontab", "15 2 * * * /opt/app/scripts/backup.sh\n")
    write(tmp_path, "systemd/sync.timer", FETCH_TIMER)
    write(
        tmp_path, "systemd/sync.service", unit('/bin/bash -c "cd /opt/app && ./scripts/backup.sh"')
    )
    _, got, out, _ = rows(cli, "--select", "LCK606")
    assert ("systemd/sync.service", 7, "LCK606") in got, out


# --------------------------------------------------------------------------- GitLab include/extends

MAIN_CI = """\
stages: [deploy]

include:
  - local: /ci/templates.yml
  - local: ci/deploy.yml
  - remote: https://example.com/ci/shared.yml
"""

TEMPLATES = """\
.deploy:
  environment: production
  rules:
    - if: $CI_PIPELINE_SOURCE == "schedule"
"""

DEPLOY = """\
deploy-prod:
  extends: .deploy
  stage: deploy
  script:
    - ./scripts/publish.sh
"""


def test_gitlab_included_job_extending_a_template_is_read(cli, tmp_path):
    write(tmp_path, ".gitlab-ci.yml", MAIN_CI)
    write(tmp_path, "ci/templates.yml", TEMPLATES)
    write(tmp_path, "ci/deploy.yml", DEPLOY)
    write(tmp_path, "scripts/publish.sh", "#!/bin/sh\nrsync -a dist/ web:/srv/www/\n")
    _, got, out, _ = rows(cli, "--select", "LCK602,LCK603")
    assert got == [("ci/deploy.yml", 1, "LCK602"), ("ci/deploy.yml", 5, "LCK603")], out


def test_gitlab_resource_group_from_the_template_holds(cli, tmp_path):
    write(tmp_path, ".gitlab-ci.yml", MAIN_CI)
    write(tmp_path, "ci/templates.yml", TEMPLATES + "  resource_group: production\n")
    write(tmp_path, "ci/deploy.yml", DEPLOY)
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [], out


def test_gitlab_unknown_template_and_unfollowed_include_are_unknown(cli, tmp_path):
    """A template from a remote include is not read: the job's keys are unknown."""
    main = MAIN_CI.replace("  - local: /ci/templates.yml\n", "")
    write(tmp_path, ".gitlab-ci.yml", main)
    write(tmp_path, "ci/deploy.yml", DEPLOY.replace("  stage: deploy\n", "  environment: prod\n"))
    _, got, out, _ = rows(cli, "--select", "LCK602")
    assert got == [], out  # its rules may come from .deploy: not known to run for schedules
    write(tmp_path, "other.yml", DEPLOY)  # not included: not a pipeline file
    _, got, out, _ = rows(cli, "--select", "LCK6")
    assert [p for p, _l, _c in got if p == "other.yml"] == [], out


# --------------------------------------------------------------------------- Dockerfile RUN


def test_dockerfile_comment_lines_inside_a_run_are_dropped_as_docker_does(cli, tmp_path):
    text = (
        "FROM debian:12\n"
        "RUN curl -Lo /usr/local/bin/tool https://example.com/tool && \\\n"
        "  chmod +x /usr/local/bin/tool && \\\n"
        "  # check that we got a binary, not an error page\n"
        "\n"
        "  tool --version\n"
    )
    write(tmp_path, "Dockerfile", text)
    _, got, out, _ = rows(cli, "--select", "LCK000")
    assert got == [], out
    broken = text.replace("  tool --version\n", "  tool --version 'unterminated\n")
    write(tmp_path, "Dockerfile", broken)
    _, got, out, _ = rows(cli, "--select", "LCK000")
    assert got == [("Dockerfile", 6, "LCK000")], out


def test_dockerfile_run_under_a_powershell_shell_is_not_sh(cli, tmp_path):
    text = (
        "FROM mcr.microsoft.com/windows/servercore:ltsc2022\n"
        'SHELL ["powershell", "-Command", "$ErrorActionPreference = \'Stop\';"]\n'
        "RUN Write-Host 'setting up' -ForegroundColor Green; \\\n"
        "    New-Item -ItemType Directory -Path C:\\reports -Force | Out-Null\n"
        'SHELL ["/bin/sh", "-c"]\n'
        "RUN flock -n /run/lock/setup.lock /opt/setup.sh\n"
    )
    write(tmp_path, "Dockerfile", text)
    _, got, out, _ = rows(cli, "--select", "LCK000,LCK403")
    assert got == [("Dockerfile", 6, "LCK403")], out


# --------------------------------------------------------------------------- LCK606 entries

TWO_JOBS = """\
name: nightly images
on:
  schedule:
    - cron: "30 3 * * *"
jobs:
  base:
    runs-on: ubuntu-latest
    steps:
      - run: /bin/sh docker-images/export.sh --image base
  controller:
    runs-on: ubuntu-latest
    steps:
      - run: /bin/sh docker-images/export.sh --image controller
"""


def test_two_jobs_of_one_workflow_are_one_scheduler_entry(cli, tmp_path):
    """Found on a real repository: two jobs of one nightly workflow building two images."""
    write(tmp_path, "docker-images/export.sh", "#!/bin/sh\ndocker build -t img .\n")
    write(tmp_path, ".github/workflows/nightly.yml", TWO_JOBS)
    _, got, out, _ = rows(cli, "--select", "LCK606")
    assert got == [], out
    write(tmp_path, "deploy/app.crontab", "0 4 * * * /srv/app/docker-images/export.sh\n")
    _, got, out, _ = rows(cli, "--select", "LCK606")
    assert got == [
        (".github/workflows/nightly.yml", 9, "LCK606"),
        (".github/workflows/nightly.yml", 13, "LCK606"),
        ("deploy/app.crontab", 1, "LCK606"),
    ], out


def test_each_line_of_a_run_block_naming_a_lockless_script_is_lck603(cli, tmp_path):
    """Found by the blind labels (set D): a nightly step building two images then a project,
    each line a script of the tree without a lock."""
    write(tmp_path, "docker-images/export.sh", "#!/bin/sh\ndocker build -t img .\n")
    write(tmp_path, "templates/prebuild.sh", "#!/bin/sh\nmake prebuild\n")
    text = TWO_JOBS.replace(
        "      - run: /bin/sh docker-images/export.sh --image base\n",
        "      - run: |\n"
        "          /bin/sh docker-images/export.sh --image base\n"
        "          /bin/sh docker-images/export.sh --image controller\n"
        "          /bin/sh templates/prebuild.sh --projects blank\n",
    )
    write(tmp_path, ".github/workflows/nightly.yml", text)
    _, got, out, _ = rows(cli, "--select", "LCK603")
    assert got == [
        (".github/workflows/nightly.yml", 10, "LCK603"),
        (".github/workflows/nightly.yml", 11, "LCK603"),
        (".github/workflows/nightly.yml", 12, "LCK603"),
        (".github/workflows/nightly.yml", 16, "LCK603"),
    ], out


# --------------------------------------------------------------------------- GitLab wildcards
# GitLab's wildcard local includes: `*` stops at `/`, `**` does not, `**/` is any run of
# directories or none (its documented `configs/*.yml`, `configs/**.yml`, `configs/**/*.yml`)


@pytest.mark.parametrize(
    "include, found",
    [
        ("'ci/*.yml'", ["ci/deploy.yml"]),
        ("\n  - local: '/ci/**.yml'", ["ci/deploy.yml", "ci/nested/report.yml"]),
        ("\n  - ci/**/*.yml", ["ci/deploy.yml", "ci/nested/report.yml"]),
        ("'ci/*/deploy.yml'", []),  # the negative: no such file one level down
        ("'ci/*.yaml'", []),  # nor with that extension
    ],
)
def test_gitlab_wildcard_local_includes(cli, tmp_path, include, found):
    template = TEMPLATES.replace(".deploy:", ".sched:")
    write(tmp_path, ".gitlab-ci.yml", f"stages: [deploy]\n\ninclude: {include}\n\n{template}")
    job = DEPLOY.replace("extends: .deploy", "extends: .sched")
    write(tmp_path, "ci/deploy.yml", job)
    write(tmp_path, "ci/deploy.yml.bak", job)  # not .yml: never matched
    write(tmp_path, "ci/nested/report.yml", job.replace("deploy-prod", "report"))
    _, got, out, err = rows(cli, "--select", "LCK000,LCK602")
    assert got == [(p, 1, "LCK602") for p in found], out + err
