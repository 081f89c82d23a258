"""Job definitions under the bounds of a script (issue 9): a definition is read, parsed and its
embedded shell analysed in the same bounded workers as the scripts, so one whose parsing
crashes, hangs or eats memory is one LCK000 on line 1 and every other file's findings are kept,
in every format and for any ``--jobs``.  Through the CLI, on real hostile inputs (and the
documented worker test hook for hangs and memory)."""

from __future__ import annotations

import json
import os

import pytest
from helpers import concise_rows, write
from test_hardening_io import FOREIGN
from test_jobs import CRONJOB_ALLOW, CRONJOB_FORBID, CRONTAB, GITLAB, scripts

from lockcheck.report import FORMATS

# A block mapping nested 300 levels deep: tree-sitter-yaml itself dies on it (SIGSEGV) at about
# 254 open block collections; lockcheck counts the nesting first and never hands it over.
DEEP = "".join("  " * i + f"level{i}:\n" for i in range(300)) + "  " * 300 + "leaf: 1\n"
HOSTILE_CRONJOB = CRONJOB_ALLOW + DEEP
CRASHED = "analysis stopped: the analysis crashed (SIGSEGV)"
TOO_DEEP = "YAML nested too deeply to read (more than 200 collections deep)"


def tree(tmp_path, monkeypatch):
    """Scripts and CronJobs, one of which (``k8s/hostile.yaml``) kills the worker that reads it
    (the documented test hook: no YAML input is known to crash the parser any more)."""
    scripts(tmp_path)
    write(tmp_path, "k8s/hostile.yaml", CRONJOB_ALLOW.replace("name: backup", "name: hostile"))
    write(tmp_path, "k8s/cronjob.yaml", CRONJOB_ALLOW)
    write(tmp_path, "jobs/report.sh", FOREIGN)
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", "crash:hostile.yaml")


def rows(cli, *args):
    status, out, err = cli("scan", "--output-format", "concise", *args)
    return status, concise_rows(out), out, err


def test_a_definition_that_crashes_its_worker_is_one_lck000_the_rest_kept(
    cli, tmp_path, monkeypatch
):
    tree(tmp_path, monkeypatch)
    status, got, out, err = rows(cli, "--select", "LCK000,LCK107,LCK601")
    assert status == 1 and "internal error" not in err, out + err
    assert got == [
        ("jobs/report.sh", 2, "LCK107"),
        ("k8s/cronjob.yaml", 2, "LCK601"),
        ("k8s/hostile.yaml", 1, "LCK000"),
    ], out
    assert f"k8s/hostile.yaml:1:1: LCK000 (warning) {CRASHED}" in out


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_format_keeps_the_other_files_and_jobs_1_and_4_agree(cli, tmp_path, monkeypatch, fmt):
    tree(tmp_path, monkeypatch)
    one = cli("scan", "--jobs", "1", "--output-format", fmt, ".")
    four = cli("scan", "--jobs", "4", "--output-format", fmt, ".")
    assert one == four, fmt
    status, out, err = one
    assert status == 1 and "internal error" not in err, err
    assert CRASHED in out, out
    for name in ("cronjob.yaml", "report.sh"):
        assert name in out, (fmt, out)
    if fmt == "json":
        got = {
            (os.path.relpath(r["filename"], tmp_path), r["code"], r["location"]["row"])
            for r in json.loads(out)
        }
        assert ("k8s/hostile.yaml", "LCK000", 1) in got
        assert ("k8s/cronjob.yaml", "LCK601", 2) in got
        assert ("jobs/report.sh", "LCK107", 2) in got


REASONS = {
    "hang": "analysis stopped: timed out after 1 s",
    "memory": "analysis stopped: memory bound exceeded (1 GiB)",
    "crash": CRASHED,
}


@pytest.mark.parametrize("fault", list(REASONS))
def test_a_definition_over_its_bounds_is_stopped(cli, tmp_path, monkeypatch, fault):
    scripts(tmp_path)
    write(tmp_path, "k8s/cronjob.yaml", CRONJOB_ALLOW)
    write(tmp_path, "k8s/forbid.yaml", CRONJOB_FORBID.replace("concurrencyPolicy", "x"))
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", f"{fault}:cronjob.yaml")
    _, got, out, err = rows(cli, "--file-timeout", "1", "--select", "LCK000,LCK601")
    assert got == [("k8s/cronjob.yaml", 1, "LCK000"), ("k8s/forbid.yaml", 2, "LCK601")], out
    assert f"k8s/cronjob.yaml:1:1: LCK000 (warning) {REASONS[fault]}" in out
    assert "internal error" not in err


def test_a_pipeline_whose_worker_crashes_is_one_lck000_on_its_root(cli, tmp_path, monkeypatch):
    """The files a ``.gitlab-ci.yml`` includes are read in its bounded worker: a crash there
    stops that pipeline (LCK000 on its ``.gitlab-ci.yml``), not the run."""
    write(tmp_path, ".gitlab-ci.yml", "include:\n  - local: ci/vars.yml\n" + GITLAB)
    write(tmp_path, "ci/vars.yml", "variables:\n  TARGET: prod\n")
    write(tmp_path, "k8s/cronjob.yaml", CRONJOB_ALLOW)
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", "crash:.gitlab-ci.yml")
    status, got, out, err = rows(cli, "--select", "LCK000,LCK6")
    assert got == [(".gitlab-ci.yml", 1, "LCK000"), ("k8s/cronjob.yaml", 2, "LCK601")], out
    assert f".gitlab-ci.yml:1:1: LCK000 (warning) {CRASHED}" in out
    assert status == 1 and "internal error" not in err


def test_an_included_pipeline_file_nested_too_deeply_is_its_own_lck000(cli, tmp_path):
    """A hostile include (deep enough to kill the YAML parser) is one LCK000 on the line where
    it gets too deep, in the included file; the pipeline's own jobs are still read."""
    write(tmp_path, ".gitlab-ci.yml", "include:\n  - local: ci/deep.yml\n" + GITLAB)
    write(tmp_path, "ci/deep.yml", DEEP)
    write(tmp_path, "k8s/cronjob.yaml", CRONJOB_ALLOW)
    status, got, out, err = rows(cli, "--select", "LCK000,LCK6")
    assert got == [
        (".gitlab-ci.yml", 5, "LCK602"),
        ("ci/deep.yml", 201, "LCK000"),
        ("k8s/cronjob.yaml", 2, "LCK601"),
    ], out
    assert f"ci/deep.yml:201:401: LCK000 (warning) {TOO_DEEP}" in out
    assert "crashed" not in out and status == 1 and "internal error" not in err


def test_a_pipeline_whose_includes_are_fine_is_still_joined(cli, tmp_path):
    """The negative: the same pipeline with a readable include is read whole."""
    write(tmp_path, ".gitlab-ci.yml", "include:\n  - local: ci/vars.yml\n" + GITLAB)
    write(tmp_path, "ci/vars.yml", "variables:\n  TARGET: prod\n")
    _, got_with, out, _ = rows(cli, "--select", "LCK000,LCK602")
    write(tmp_path, ".gitlab-ci.yml", GITLAB)
    _, got_without, _, _ = rows(cli, "--select", "LCK000,LCK602")
    shift = 2  # the two include lines
    assert got_with and [(p, n - shift, c) for p, n, c in got_with] == got_without, out


@pytest.mark.parametrize("fault", ["hang", "crash"])
def test_a_definitions_fixes_are_checked_within_the_bounds(cli, tmp_path, monkeypatch, fault):
    """``--fix`` re-analyses a definition's fixed text in its tree: in a bounded worker, so
    one whose re-analysis hangs or crashes is not fixed and the others are."""
    hostile = write(tmp_path, "k8s/hostile.yaml", CRONJOB_ALLOW)
    other = write(tmp_path, "k8s/other.yaml", CRONJOB_ALLOW.replace("name: backup", "name: b2"))
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", f"fix-{fault}:hostile.yaml")
    args = ("--fix", "--unsafe-fixes", "--file-timeout", "1", "--select", "LCK601")
    status, got, out, err = rows(cli, *args)
    why = "timed out after 1 s" if fault == "hang" else "the analysis crashed (SIGSEGV)"
    assert f"k8s/hostile.yaml:1:1: LCK000 (warning) analysis stopped: {why}" in out, out
    assert "while checking its fixes (not fixed)" in out
    assert ("k8s/hostile.yaml", 2, "LCK601") in got, out  # its finding is kept
    assert hostile.read_text() == CRONJOB_ALLOW
    assert "concurrencyPolicy: Forbid" in other.read_text()
    assert "k8s/other.yaml" not in out and "internal error" not in err


def test_a_script_analysed_again_for_the_join_is_bounded(cli, tmp_path, monkeypatch):
    """A lockless script that a crontab starts is analysed again as started by a job: in a
    bounded worker, so a crash there keeps its first findings, adds one LCK000 and the
    definition's findings stand."""
    scripts(tmp_path)
    write(tmp_path, "deploy/app.crontab", CRONTAB)
    write(tmp_path, "jobs/report.sh", FOREIGN)
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", "again-crash:backup.sh")
    _, got, out, err = rows(cli, "--select", "LCK000,LCK107,LCK603")
    assert got == [
        ("deploy/app.crontab", 3, "LCK603"),
        ("jobs/report.sh", 2, "LCK107"),
        ("scripts/backup.sh", 1, "LCK000"),
    ], out
    assert f"{CRASHED}" in out and "while analysing it again as a scheduled job" in out
    assert "internal error" not in err


def test_a_dying_worker_writes_nothing_through_the_callers_fault_handler(
    cli, tmp_path, monkeypatch
):
    """A process that embeds lockcheck (pytest does) may have ``faulthandler`` on its own
    copy of stderr; a worker killed by the parser must not print its stack through it."""
    import faulthandler
    import sys

    tree(tmp_path, monkeypatch)
    was = faulthandler.is_enabled()
    with open(tmp_path / "faults.txt", "w+") as log:
        faulthandler.enable(file=log)
        try:
            _, got, out, _ = rows(cli, "--select", "LCK000")
        finally:
            faulthandler.disable()
            if was:
                faulthandler.enable(file=sys.__stderr__)
        log.seek(0)
        assert log.read() == ""
    assert ("k8s/hostile.yaml", 1, "LCK000") in got, out
