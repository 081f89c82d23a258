"""Shell shapes behind the misses and false findings of set G (a dev set from session 12 on,
bench/recall/SET-G.md) and set F's dev part, each as a class with a positive beside a negative,
through the CLI: a busy branch that ends a subshell the script goes on after, an unrelated
check after a create-if-missing, a trap that reads variables assigned after it, a trap that
removes the lock only once it holds the flock again, a restart that records its child's PID,
a counted `ps -p` with its header line, mailed notices, PIDs written into tested names, stop
actions, and ages kept in variables."""

from __future__ import annotations

from helpers import lines_of, scan_files

# ------------------------------------------- 1. a busy branch that only ends a subshell

SUBSHELL = """
    #!/bin/bash
    set -e
    LOCK=/var/lib/app/entrypoint.lock
    (
        flock -n 9 \\
            && make dev \\
            || echo "another container holds the lock, skipping make dev"
    ) 9>"$LOCK"
    {after}
"""


def test_a_skip_that_only_ends_a_subshell_does_not_end_the_run(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "goes-on.sh": SUBSHELL.format(after='exec "$@"'),
            "last.sh": SUBSHELL.format(after=""),
        },
    )
    assert lines_of(got["goes-on.sh"], "LCK401") == set(), got
    assert lines_of(got["last.sh"], "LCK401") == {7}, got  # the subshell ends the script


# ------------------------------- 2. an unrelated check after a create-if-missing

MISSING = """
    #!/bin/bash
    pidfile=/var/lib/datenfresser/run.pid
    if [ ! -f $pidfile ]; then
        touch $pidfile
    fi
    if [ ! -w $pidfile ]; then
        exit 1
    fi
    {body}
    /usr/sbin/datenfresser -d
"""


def test_a_check_after_create_if_missing_is_no_busy_branch_of_the_test(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "missing.sh": MISSING.format(body=""),
            # the exists branch itself leaves: a test-then-create lock
            "guard.sh": MISSING.replace(
                "        touch $pidfile\n    fi",
                "        touch $pidfile\n    else\n        exit 0\n    fi",
            ).format(body="trap 'rm -f \"$pidfile\"' EXIT"),
        },
    )
    assert not lines_of(got["missing.sh"], "LCK103"), got
    assert lines_of(got["guard.sh"], "LCK103") == {4}, got


# ------------------------------- 3. a trap that reads variables assigned after it

LATE = """
    #!/bin/bash
    trap onexit INT TERM
    prog="watering_check"
    lock="/var/lib/pi/${prog}.lock"
    onexit () {
        rm -f "${lock}"
        exit
    }
    if [ -f $lock ]; then
        exit 75
    fi
    date > $lock
    nice -19 /home/pi/watering.py
    onexit
"""


def test_a_trap_handler_reads_the_value_the_script_assigns_after_the_trap(tmp_path):
    other = LATE.replace('rm -f "${lock}"', 'rm -f "${lock}" /var/lib/pi/other.lock')
    got = scan_files(tmp_path, {"late.sh": LATE, "other.sh": other})
    assert not lines_of(got["late.sh"], "LCK107"), got  # its own lock, not another job's
    assert lines_of(got["late.sh"], "LCK203") == {2}, got  # installed before the test
    assert lines_of(got["other.sh"], "LCK107") == {6}, got


# ------------------ 4. a trap that removes the lock only once it holds the flock again

RELOCK = """
    #!/bin/bash
    LOCKFILE=/var/lib/doge/cron.lock
    LOCKFD=99
    _lock()             {{ flock -$1 $LOCKFD; }}
    _no_more_locking()  {{ _lock u; {guard}rm -f $LOCKFILE; }}
    exec 99>"$LOCKFILE"
    trap _no_more_locking EXIT
    _lock xn || exit 75
    python3 daily_task.py
"""

RELOCK_IF = """
    #!/bin/bash
    LOCK=/var/lib/job/job.lock
    cleanup() {
        if flock -n 9; then
            rm -f "$LOCK"
        fi
    }
    exec 9>>"$LOCK"
    trap cleanup EXIT
    flock -n 9 || exit 75
    run-job
"""


def test_a_trap_removal_under_a_new_flock_is_not_run_by_the_losing_run(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "relock.sh": RELOCK.format(guard="_lock xn && "),
            "plain.sh": RELOCK.format(guard=""),
            "relock-if.sh": RELOCK_IF,
            "plain-if.sh": RELOCK_IF.replace("if flock -n 9; then", "if true; then"),
        },
    )
    assert not lines_of(got["relock.sh"], "LCK203"), got
    assert not lines_of(got["relock-if.sh"], "LCK203"), got
    assert lines_of(got["plain.sh"], "LCK203") == {7}, got
    assert lines_of(got["plain-if.sh"], "LCK203") == {9}, got
    for name in got:  # the removal of a flocked file stays LCK201 either way
        assert lines_of(got[name], "LCK201"), (name, got[name])


# ------------------------------------------ 5. a restart that records its child's PID

RESTART = """
    #!/bin/bash
    cd /home/app
    app="echo-demo"
    if [ -f $app.pid ]; then
        {exists}
    fi
    nohup ./$app >/dev/null 2>&1 &
    echo $! > $app.pid
"""


def test_a_restart_that_records_its_child_is_no_test_then_create(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "restart.sh": RESTART.format(exists="kill -9 $(cat $app.pid)\n    rm -f $app.pid"),
            "guard.sh": RESTART.format(exists='echo "already running"\n    exit 1'),
        },
    )
    assert not lines_of(got["restart.sh"], "LCK103"), got
    assert not lines_of(got["restart.sh"], "LCK501"), got
    assert lines_of(got["restart.sh"], "LCK108") == {5}, got
    assert lines_of(got["guard.sh"], "LCK103") == {9}, got  # the test decides: a lock


# ------------------------------------------------ 6. `ps -p PID | wc -l` and its header

COUNT = """
    #!/bin/bash
    PIDFILE=/var/lib/saferun/job.pid
    if [ -f $PIDFILE ]; then
        c=$(ps -p $(cat $PIDFILE){opts} | wc -l)
        if [ $c -eq {n} ]; then
            echo 'already running' 1>&2
            exit 1
        fi
    fi
    echo "$$" > $PIDFILE
    "$@"
    rm -f $PIDFILE
"""


def test_a_counted_ps_lookup_is_read_with_its_header_line(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "header.sh": COUNT.format(opts="", n=2),
            "quiet.sh": COUNT.format(opts=" -o pid=", n=1),
            # two lines without a header: never one process of a PID
            "odd.sh": COUNT.format(opts=" -o pid=", n=2),
        },
    )
    assert lines_of(got["header.sh"], "LCK105") == {4}, got
    assert lines_of(got["quiet.sh"], "LCK105") == {4}, got
    assert not lines_of(got["odd.sh"], "LCK105"), got


# ---------------------------------------- 7. a notice mailed before a bare exit is 0

MAILED = """
    #!/bin/sh
    LOCK_FILE=/var/lib/rsync/penang.lock
    DAILY_LOG=/var/log/rsync/penang_daily.log
    if [ -e $LOCK_FILE ]; then
        echo "$(date): lock file detected, exiting" >> $DAILY_LOG
        {notice} < $DAILY_LOG
        exit
    fi
    touch $LOCK_FILE
    trap 'rm -f $LOCK_FILE' EXIT
    rsync -a /srv/assets/ mirror::assets
"""


def test_a_mailed_notice_before_a_bare_exit_leaves_status_0(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "mail.sh": MAILED.format(notice='mail -s "[rsync] skipped" ops@example.org'),
            "other.sh": MAILED.format(notice="/usr/local/bin/report-skip"),
        },
    )
    assert lines_of(got["mail.sh"], "LCK402") == {7}, got
    assert not lines_of(got["other.sh"], "LCK402") | lines_of(got["other.sh"], "LCK401"), got


# --------------------- 8. a PID written into a tested name is a lock, even if kept

DAEMONIZE = """
    #!/bin/bash
    PID_PATH=/var/lib/canary/canary.state
    if [[ -f "$PID_PATH" ]]
    then
        echo "$PID_PATH exists"
        exit 1
    fi
    {before}
    setsid /opt/canary/run &>/var/log/canary.log & disown
    {write} >$PID_PATH
"""


def test_a_pid_written_into_a_tested_name_is_a_lock_though_never_removed(tmp_path):
    # the name is not lock-like: only the PID written into it makes it more than a marker
    got = scan_files(
        tmp_path,
        {
            "child.sh": DAEMONIZE.format(before="", write="printf '%d\\n' \"$!\""),
            "own.sh": DAEMONIZE.format(before="", write="echo $$"),
            # a run-once marker holds no PID
            "marker.sh": DAEMONIZE.format(before="", write="date"),
            # the PID recorded under a flock held by then: no race on the name
            "flocked.sh": DAEMONIZE.format(
                before="exec 9>/var/lib/canary/lock\nflock -n 9 || exit 75", write="echo $$"
            ),
        },
    )
    assert lines_of(got["child.sh"], "LCK103") == {10}, got
    assert lines_of(got["own.sh"], "LCK103") == {10}, got
    assert not lines_of(got["marker.sh"], "LCK103"), got
    assert not lines_of(got["flocked.sh"], "LCK103"), got  # (its lock is the flock)


# --------------------------- 9. a stop action removes the record of what it killed

STOP = """
    #!/bin/bash
    set -e
    PID_FILE=/var/run/pid/canary.pid
    if [[ ! -f "$PID_FILE" ]]; then
        echo "No PID file found at $PID_FILE"
        exit 0
    fi
    PID=$(<${{PID_FILE}})
    {kill}
    rm $PID_FILE
"""


def test_removing_the_pid_file_of_a_process_it_killed_is_no_foreign_lock_removal(tmp_path):
    got = scan_files(
        tmp_path,
        {"stop.sh": STOP.format(kill="kill -- $PID"), "rm.sh": STOP.format(kill="echo $PID")},
    )
    assert not lines_of(got["stop.sh"], "LCK107"), got
    assert lines_of(got["stop.sh"], "LCK108") == {9}, got
    assert lines_of(got["rm.sh"], "LCK107") == {10}, got


# ---------------------------------------- 10. an age kept in a variable, then tested

AGED = """
    #!/bin/bash
    LOCK_FILE="/var/lib/backfill/backfill.lock"
    TIMEOUT=7200
    if [ -f "$LOCK_FILE" ]; then
        AGE=$(( $(date +%s) - {age} ))
        if [ "$AGE" -gt "$TIMEOUT" ]; then
            rm -f "$LOCK_FILE"
        fi
    fi
"""


def test_an_age_computed_into_a_variable_guards_a_breaker(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "aged.sh": AGED.format(age='$(stat -c %Y "$LOCK_FILE")'),
            "sized.sh": AGED.format(age='$(stat -c %s "$LOCK_FILE")'),
        },
    )
    assert lines_of(got["aged.sh"], "LCK106") == {7}, got
    assert not lines_of(got["sized.sh"], "LCK106"), got
