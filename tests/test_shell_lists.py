"""`&&`/`||` lists around a lock test (issue #12): a busy branch spelled as a chain of
`&&` after a message exits; a later `cmd || exit` is a conditional exit, not the busy branch
of an earlier test. Through the CLI, positives beside negatives."""

from __future__ import annotations

import json
import textwrap

import pytest


def codes(cli, tmp_path, src: str, name: str = "job.sh") -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


JOB = """
    #!/bin/sh
    LOCK=/var/tmp/nightly.lock
    {busy}
    touch "$LOCK"
    trap 'rm -f "$LOCK"' EXIT
    rsync -a /srv/data /backup
    """


@pytest.mark.parametrize(
    "busy",
    [
        '[ -e "$LOCK" ] && echo "already running" && exit 0',
        'test -e "$LOCK" && echo running >&2 && exit 1',
        '[ -f "$LOCK" ] && logger -t nightly busy && exit 0',
        '[[ -e $LOCK ]] && printf "%s\\n" "busy" && exit 1',
    ],
)
def test_a_message_chained_before_the_exit_is_still_the_busy_branch(cli, tmp_path, busy):
    assert ("LCK103", 4) in codes(cli, tmp_path, JOB.format(busy=busy))


@pytest.mark.parametrize(
    "busy",
    [
        '[ -e "$LOCK" ] && echo "old lock found"',
        '[ -e "$LOCK" ] && echo "stale" && rm -f "$LOCK"',
    ],
)
def test_a_chain_that_only_reports_decides_nothing(cli, tmp_path, busy):
    assert not {c for c, _ in codes(cli, tmp_path, JOB.format(busy=busy))} & {"LCK103"}


TEST_DIR_SETUP = """
    #!/bin/sh
    cleanup () {
      rm -rf "$TEST_DIR"
    }
    die () { echo "$@" ; cleanup ; exit 1; }

    TEST_DIR="$PWD/prefix_tmp"
    [ ! -e "$TEST_DIR" ] && mkdir "$TEST_DIR"
    cd "$TEST_DIR" || die "cannot enter $TEST_DIR"
    run_checks
    cleanup
    """


def test_a_later_conditional_exit_is_not_the_busy_branch_of_an_earlier_test(cli, tmp_path):
    # a test fixture made if missing: when it exists the script just goes on; the exit
    # belongs to `cd ... ||`, which fails only when the directory cannot be entered
    assert codes(cli, tmp_path, TEST_DIR_SETUP) == set()


def test_an_unconditional_exit_after_the_test_still_is(cli, tmp_path):
    src = TEST_DIR_SETUP.replace(
        '[ ! -e "$TEST_DIR" ] && mkdir "$TEST_DIR"',
        '[ -e "$TEST_DIR" ] && { echo busy; exit 1; }\nmkdir "$TEST_DIR"',
    )
    assert "LCK103" in {c for c, _ in codes(cli, tmp_path, src)}


PID_FILE_JOB = """
    #!/bin/bash
    PIDFILE=/var/tmp/backup.pid
    {guard}
    echo $$ > "$PIDFILE"
    rsync -a /srv/data /backup
    """


@pytest.mark.parametrize(
    "guard",
    [
        '[ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && exit 0',
        "if [ -e $PIDFILE ] && kill -0 `cat $PIDFILE`; then exit; fi",
        'test -f "$PIDFILE" && ps -p "$(cat "$PIDFILE")" >/dev/null && exit 0',
    ],
)
def test_a_pid_file_never_removed_but_tested_for_liveness_is_a_lock(cli, tmp_path, guard):
    # not a run-once marker: the stored PID decides, so two runs can pass the test together
    got = codes(cli, tmp_path, PID_FILE_JOB.format(guard=guard))
    assert {("LCK103", 4), ("LCK105", 3)} <= got, got


def test_a_marker_never_removed_without_a_liveness_test_stays_a_run_once_marker(cli, tmp_path):
    src = PID_FILE_JOB.format(guard='[ -e "$PIDFILE" ] && exit 0').replace("echo $$ >", "date >")
    assert "LCK103" not in {c for c, _ in codes(cli, tmp_path, src)}


PID_ONLY_JOB = """
    #!/bin/bash
    PIDFILE=/var/tmp/backup.pid
    {guard}
    echo $$ > "$PIDFILE"
    rsync -a /srv/data /backup
    """


@pytest.mark.parametrize(
    ("guard", "code"),
    [
        ('if kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then exit 0; fi', "LCK401"),
        ('kill -0 "$(cat "$PIDFILE")" 2>/dev/null && exit 0', "LCK401"),
        ('kill -0 $(cat $PIDFILE) 2>/dev/null && { echo "running"; exit; }', "LCK401"),
        (
            'if kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then logger -t backup busy; exit 0; fi',
            "LCK402",
        ),
    ],
)
def test_the_alive_branch_of_a_pid_file_lock_is_its_busy_branch(cli, tmp_path, guard, code):
    got = codes(cli, tmp_path, PID_ONLY_JOB.format(guard=guard))
    assert (code, 3) in got, got


def test_a_pid_file_lock_whose_busy_run_exits_75_is_not_a_silent_skip(cli, tmp_path):
    guard = 'kill -0 "$(cat "$PIDFILE")" 2>/dev/null && { echo busy >&2; exit 75; }'
    got = {c for c, _ in codes(cli, tmp_path, PID_ONLY_JOB.format(guard=guard))}
    assert "LCK105" in got and not got & {"LCK401", "LCK402"}
