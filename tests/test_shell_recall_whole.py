"""Shell recall on the whole recall set (issue #12, session 10): each construct in a realistic
script and in several spellings, beside the correct spelling that must stay quiet."""

from __future__ import annotations

import json
import textwrap

import pytest


def findings(cli, tmp_path, src: str, name: str = "job.sh") -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


# ------------------------------------------- `wait "$PID"` waits for that child only (LCK405)

WATCHDOG = """
    #!/bin/bash
    exec 9>>"$HOME/.cache/restart.lock"
    if ! flock -n 9; then
        echo "busy" >> "$HOME/restart.log"
        exit 75
    fi
    restart_service &  WORKER="$!"
    {WATCHER} &  {KEEP}
    wait {WAITED}
    echo done
    """

WATCHERS = [
    "{ sleep 50; kill -KILL $WORKER 2>/dev/null; }",
    "( sleep 50; kill -KILL $WORKER )",
    "while sleep 5; do kill -0 $WORKER || break; done",
    "sleep 50",
]


def _watchdog(watcher: str, keep: str, waited: str) -> str:
    return (
        WATCHDOG.replace("{WATCHER}", watcher).replace("{KEEP}", keep).replace("{WAITED}", waited)
    )


@pytest.mark.parametrize("watcher", WATCHERS)
@pytest.mark.parametrize("waited", ['"$WORKER"', "$WORKER", "${WORKER}"])
def test_a_child_not_among_the_waited_pids_holds_the_lock(cli, tmp_path, watcher, waited):
    src = _watchdog(watcher, 'KID="$!"', waited)
    assert ("LCK405", 8) in findings(cli, tmp_path, src)


@pytest.mark.parametrize("watcher", WATCHERS)
@pytest.mark.parametrize("waited", ['"$WORKER" "$KID"', "", "$KID $WORKER"])
def test_every_child_waited_for_stays_quiet(cli, tmp_path, watcher, waited):
    src = _watchdog(watcher, 'KID="$!"', waited)
    assert not {f for f in findings(cli, tmp_path, src) if f[0] == "LCK405"}


def test_wait_for_pids_kept_elsewhere_counts_as_waiting_for_all(cli, tmp_path):
    # `wait $pids` (a list built in a loop): which children it names is unknown, so stay quiet
    src = _watchdog("sleep 50", 'pids="$pids $!"', "$pids")
    assert not {f for f in findings(cli, tmp_path, src) if f[0] == "LCK405"}


# ---------------------------------------- a PID-file lock: liveness test, then `echo $$ > F`

PID_GUARDS = {
    "and-list": 'kill -0 "$(cat "$PIDFILE")" 2>/dev/null && { echo running >&2; exit 1; }',
    "if": "if kill -0 `tail -1 $PIDFILE 2>/dev/null` 2>/dev/null; then\n    exit 1\nfi",
    "wait-loop": "while kill -0 $(cat $PIDFILE 2>/dev/null) 2>/dev/null; do\n    sleep 1\ndone",
}
PID_WRITES = [
    'echo $$ > "$PIDFILE"',
    'printf "%s\\n" "$$" >$PIDFILE',
    "echo ${BASHPID} >| $PIDFILE",
]


def _pid_job(where: str, guard: str, write: str) -> str:
    body = "\n".join(
        [
            "#!/bin/bash",
            f'PIDFILE="{where}/$(basename "$0" .sh).pid"',
            guard,
            write,
            "trap 'rm -f \"$PIDFILE\"' EXIT",
            "rsync -a /srv/data/ /backup/data/",
        ]
    )
    return body + "\n"


@pytest.mark.parametrize("guard", sorted(PID_GUARDS))
@pytest.mark.parametrize("write", PID_WRITES)
def test_pid_file_written_after_a_liveness_test_is_a_lock_in_shared_tmp(
    cli, tmp_path, guard, write
):
    src = _pid_job("/var/tmp", PID_GUARDS[guard], write)
    line = 3 + PID_GUARDS[guard].count("\n") + 1
    got = findings(cli, tmp_path, src)
    assert ("LCK502", line) in got
    assert not {f for f in got if f[0] in ("LCK107", "LCK201", "LCK101", "LCK103")}


@pytest.mark.parametrize("guard", sorted(PID_GUARDS))
def test_pid_file_lock_in_a_private_directory_stays_quiet(cli, tmp_path, guard):
    src = _pid_job("$HOME/.local/state", PID_GUARDS[guard], 'echo $$ > "$PIDFILE"')
    assert not {f for f in findings(cli, tmp_path, src) if f[0].startswith("LCK5")}


def test_pid_written_without_a_liveness_test_stays_quiet(cli, tmp_path):
    # a PID recorded for a monitor, never read back to decide the run: not a lock
    src = _pid_job("/var/tmp", 'echo "starting $(date)" >&2', 'echo $$ > "$PIDFILE"')
    assert findings(cli, tmp_path, src) == set()


def test_pid_kept_inside_a_lock_directory_is_part_of_that_lock(cli, tmp_path):
    src = """
        #!/bin/bash
        LOCKDIR="$HOME/.local/state/backup.lock"
        if ! mkdir "$LOCKDIR" 2>/dev/null; then
            kill -0 "$(cat "$LOCKDIR/pid")" 2>/dev/null && exit 75
            rm -rf "$LOCKDIR"; mkdir "$LOCKDIR" || exit 75
        fi
        echo $$ > "$LOCKDIR/pid"
        trap 'rm -rf "$LOCKDIR"' EXIT
        rsync -a /srv/data/ /backup/data/
        """
    assert not {f for f in findings(cli, tmp_path, src) if f[0].startswith("LCK5")}


def test_pid_file_tested_then_written_in_both_branches_is_one_lock(cli, tmp_path):
    src = """
        #!/bin/bash
        PIDFILE=/var/tmp/sync.pid
        if [ -f "$PIDFILE" ]; then
            if ps -p "$(head -n 1 "$PIDFILE")" > /dev/null; then
                echo "running" >> /var/log/sync.log
                exit 75
            fi
            echo $$ > "$PIDFILE"
        else
            echo $$ > "$PIDFILE"
        fi
        trap 'rm -f "$PIDFILE"' EXIT
        rsync -a /srv/data/ /backup/data/
        """
    got = findings(cli, tmp_path, src)
    assert len({f for f in got if f[0] == "LCK502"}) == 1
    assert not {f for f in got if f[0] == "LCK107"}


# ------------------------- `trap "rm -f -- '$pidfile'" EXIT`: the value is put in when it is set

DQ_TRAPS = [
    "trap \"rm -f -- '$pidfile'\" EXIT",
    "trap \"rm -f '${pidfile}'; exit\" EXIT",
    "trap \"echo bye; rm -f '$pidfile'\" INT TERM EXIT",
]


@pytest.mark.parametrize("trap", DQ_TRAPS)
def test_single_quotes_inside_a_double_quoted_trap_still_release_the_lock(cli, tmp_path, trap):
    src = f"""
        #!/bin/bash
        pidfile="/var/run/jobs/${{0##*/}}.pid"
        if [ -f $pidfile ]; then
          echo "${{0##*/}} is already running" >> /var/log/jobs.log
          exit 1
        fi
        {trap}
        echo $$ > "$pidfile"
        rsync -a /srv/data/ /backup/data/
        """
    got = findings(cli, tmp_path, src)
    assert ("LCK103", 8) in got
    assert not {f for f in got if f[0] == "LCK107"}


@pytest.mark.parametrize("trap", DQ_TRAPS)
def test_single_quotes_inside_a_double_quoted_trap_with_flock_stay_quiet(cli, tmp_path, trap):
    src = f"""
        #!/bin/bash
        pidfile="$HOME/.cache/${{0##*/}}.tmp"
        exec 9>>"$HOME/.cache/jobs.lock" || exit 1
        flock -n 9 || {{ echo busy >> "$HOME/jobs.log"; exit 75; }}
        {trap}
        rsync -a /srv/data/ /backup/data/ > "$pidfile"
        """
    assert findings(cli, tmp_path, src) == set()


# ------------- a lock header or include: test, exit through `die`, create; released elsewhere

INCLUDE_LOCK = """
    #!/bin/bash
    # sourced by the backup jobs; cleanup.bash removes the lock file on exit
    write_lockfile() {{
        check_path_prefix "${{LOCKFILE}}"
        if [ -e "${{LOCKFILE}}" ]; then
            {busy}
        fi
        {create}
    }}
    """

BUSY_HELPERS = ['die 1 "\\`${LOCKFILE}\' exists"', 'fatal "already running"', "abort", "exit 3"]
CREATES = ['touch "${LOCKFILE}"', 'echo $$ > "${LOCKFILE}"', 'mv "${LOCKFILE}.new" "${LOCKFILE}"']


@pytest.mark.parametrize("busy", BUSY_HELPERS)
@pytest.mark.parametrize("create", CREATES)
def test_lock_header_tested_then_created_is_check_then_create(cli, tmp_path, busy, create):
    src = INCLUDE_LOCK.format(busy=busy, create=create)
    assert ("LCK103", 8) in findings(cli, tmp_path, src, "write_lockfile.bash")


@pytest.mark.parametrize("create", CREATES)
def test_a_warning_that_goes_on_is_no_busy_branch(cli, tmp_path, create):
    src = INCLUDE_LOCK.format(busy='warn "stale ${LOCKFILE}?"', create=create)
    assert findings(cli, tmp_path, src, "write_lockfile.bash") == set()


def test_run_once_marker_never_removed_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/bash
        STAMP="$HOME/.local/state/provisioned"
        if [ -e "$STAMP" ]; then
            die "already provisioned"
        fi
        apt-get install -y rsync
        touch "$STAMP"
        """
    assert findings(cli, tmp_path, src) == set()


def test_rename_state_files_tested_then_moved_is_check_then_create(cli, tmp_path):
    src = """
        #!/bin/bash
        LOCKSDIR="${LOCKSDIR:-/var/lib/jobs}"
        NAME="${0##*/}"
        if [ -e "${LOCKSDIR}/${NAME}.running" ]; then
            echo "already running" >> /var/log/jobs.log
            exit 221
        fi
        touch "${LOCKSDIR}/${NAME}.ok"
        mv "${LOCKSDIR}/${NAME}.ok" "${LOCKSDIR}/${NAME}.running"
        echo "PID:$$" > "${LOCKSDIR}/${NAME}.running"
        """
    assert ("LCK103", 9) in findings(cli, tmp_path, src)


def test_output_moved_into_place_after_a_test_of_another_file_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/bash
        OUT=/srv/www/report.html
        [ -e /srv/www/maintenance ] && exit 1
        tmp=$(mktemp)
        generate_report > "$tmp"
        mv "$tmp" "$OUT"
        """
    assert findings(cli, tmp_path, src) == set()


# ------------- the else of a branch that exits runs whenever the script goes on (LCK107)

UNLOCKERS = {
    "if-else": 'if [ -z "$1" ] ; then\n\techo "Usage: $0 name"\n\texit 1\nelse\n\trm "$1-lock"\n\texit 0\nfi',
    "if-not-else": 'if ! [ -n "$1" ]; then\n  exit 2\nelse\n  rm -f "/var/lock/$1.lock"\nfi',
}


@pytest.mark.parametrize("form", sorted(UNLOCKERS))
def test_removal_in_the_else_of_an_exiting_guard_is_unconditional(cli, tmp_path, form):
    src = "#!/bin/bash\n" + UNLOCKERS[form] + "\n"
    line = (
        1
        + UNLOCKERS[form]
        .split("\n")
        .index(next(x for x in UNLOCKERS[form].split("\n") if "rm " in x))
        + 1
    )
    assert ("LCK107", line) in findings(cli, tmp_path, src)


def test_removal_in_an_else_whose_then_goes_on_stays_quiet(cli, tmp_path):
    src = """
        #!/bin/bash
        if [ -z "$1" ] ; then
            echo "nothing to unlock"
        else
            rm "$1-lock"
        fi
        """
    assert findings(cli, tmp_path, src) == set()


# ------------------ one lock taken at several places is one LCK502 (at the truncating open)

PROBES = [
    'flock -n "$LOCKFILE" true',
    'flock -xn "$LOCKFILE" -c true',
    "flock --nonblock $LOCKFILE true",
]


@pytest.mark.parametrize("probe", PROBES)
def test_a_probe_and_the_lock_of_one_path_make_one_finding(cli, tmp_path, probe):
    src = f"""
        LOCKFILE="/tmp/weather.lock"
        if [[ -f "$LOCKFILE" ]]; then
            if ! {probe}; then
                echo "already running" >> "$HOME/weather.log"
                exit 1
            fi
        fi
        (
            flock -n 9 || exit 1
            curl -s 'wttr.in/?format=%t' > "$HOME/.cache/weather"
        ) 9>"$LOCKFILE"
        """
    got = {f for f in findings(cli, tmp_path, src) if f[0] == "LCK502"}
    assert got == {("LCK502", 11)}


def test_two_predictable_locks_are_two_findings(cli, tmp_path):
    src = """
        #!/bin/bash
        exec 8>/tmp/fetch.lock
        flock -n 8 || exit 75
        exec 9>/tmp/publish.lock
        flock -n 9 || exit 75
        """
    got = {f for f in findings(cli, tmp_path, src) if f[0] == "LCK502"}
    assert got == {("LCK502", 2), ("LCK502", 4)}


# ------------------------- an LSB `start` that finds the service running exits 0 (LCK402)

INIT = """
    #!/bin/sh
    ### BEGIN INIT INFO
    # Provides: clash
    # Default-Start: 2 3 4 5
    ### END INIT INFO
    PIDFILE=/var/run/clash.pid
    case "$1" in
    start)
        {check}
        /usr/local/bin/clash -d /etc/clash >> /var/log/clash.log 2>&1 &
        echo $! > "$PIDFILE"
        ;;
    stop)
        kill "$(cat "$PIDFILE")"
        rm -f "$PIDFILE"
        ;;
    status)
        kill -0 "$(cat "$PIDFILE" 2>/dev/null)" 2>/dev/null && {{ echo running; exit 0; }}
        echo "not running"
        exit 1
        ;;
    esac
    """

RUNNING_CHECKS = [
    "$0 status >/dev/null 2>&1 && exit 0",
    '"$0" status > /dev/null && exit 0',
    'kill -0 "$(cat "$PIDFILE")" 2>/dev/null && exit 0',
    '[ -f "$PIDFILE" ] && { echo "already running"; exit 0; }',
]


@pytest.mark.parametrize("check", RUNNING_CHECKS)
def test_lsb_start_on_a_running_service_is_lck402(cli, tmp_path, check):
    got = findings(cli, tmp_path, INIT.format(check=check), "clash")
    assert ("LCK402", 9) in got
    assert not {f for f in got if f[0] in ("LCK401", "LCK501", "LCK502", "LCK103", "LCK202")}


@pytest.mark.parametrize("check", [c.replace("exit 0", "exit 1") for c in RUNNING_CHECKS])
def test_lsb_start_that_fails_on_a_running_service_has_no_lck40x(cli, tmp_path, check):
    got = findings(cli, tmp_path, INIT.format(check=check), "clash")
    assert not {f for f in got if f[0] in ("LCK401", "LCK402")}


def test_status_self_call_outside_an_init_script_is_no_busy_branch(cli, tmp_path):
    src = """
        #!/bin/sh
        if [ "$1" = "report" ]; then
            $0 status >/dev/null && exit 0
            echo "service down" | mail -s alert root
        fi
        """
    assert findings(cli, tmp_path, src) == set()


# ---------- `eval "exec $LOCKFD>\"$LOCKFILE\""`: the well-known fd-99 header opens its lock

EVAL_HEADER = """
    #!/bin/bash
    LOCKFILE="{where}/`basename $0`"
    LOCKFD=99
    _lock()             {{ flock -$1 $LOCKFD; }}
    _no_more_locking()  {{ _lock u; {release} }}
    _prepare_locking()  {{ {open} || exit 1; trap _no_more_locking EXIT; }}
    exlock_now()        {{ _lock xn; }}
    _prepare_locking
    exlock_now || {{ echo "busy" >> "$HOME/update.log"; exit 75; }}
    rsync -a /srv/data/ /backup/data/
    """

EVAL_OPENS = [
    'eval "exec $LOCKFD>\\"$LOCKFILE\\""',
    'eval "exec ${LOCKFD}>>\\"${LOCKFILE}\\""',
    'eval "exec $LOCKFD<>$LOCKFILE"',
]


@pytest.mark.parametrize("open_", EVAL_OPENS)
def test_lock_opened_through_eval_exec_is_a_flock_file(cli, tmp_path, open_):
    src = EVAL_HEADER.format(
        where="$HOME/.cache", release="_lock xn && rm -f $LOCKFILE;", open=open_
    )
    assert ("LCK201", 5) in findings(cli, tmp_path, src)


@pytest.mark.parametrize("open_", EVAL_OPENS)
def test_lock_opened_through_eval_exec_kept_stays_quiet(cli, tmp_path, open_):
    src = EVAL_HEADER.format(where="$HOME/.cache", release=":;", open=open_)
    assert findings(cli, tmp_path, src) == set()


def test_eval_of_other_code_stays_unread(cli, tmp_path):
    src = EVAL_HEADER.format(
        where="$HOME/.cache", release=":;", open='eval "exec $LOCKFD>$LOCKFILE; rm -f $LOCKFILE"'
    )
    assert not {f for f in findings(cli, tmp_path, src) if f[0] == "LCK201"}


def test_binary_moved_into_place_after_its_own_test_stays_quiet(cli, tmp_path):
    # an installer: an installed binary is offered for removal (then exit), else the download
    # is moved into place
    src = """
        #!/bin/bash
        INSTALL_PATH="/usr/local/bin/filebrowser"
        if [[ -f "$INSTALL_PATH" ]]; then
            read -r -p "Uninstall? (y/N): " answer
            if [[ "$answer" == y ]]; then
                rm -f "$INSTALL_PATH"
                exit 0
            fi
            echo "already installed"
            exit 0
        fi
        curl -fsSL -o /usr/local/bin/filebrowser-new "$URL"
        mv -f /usr/local/bin/filebrowser-new "$INSTALL_PATH"
        """
    assert findings(cli, tmp_path, src) == set()


# ------- a lock predicate (`is_lock`: file test, then the stored PID's liveness), then a write

BORG = """
    #!/bin/sh
    RUN_PID_DIR="/var/run/borg"
    PIDFILE="$RUN_PID_DIR/BORG_$BACKUP_NAME.pid"
    is_lock() {{
        if [ ! -f "$PIDFILE" ]; then
            return 1
        fi
        if ! {alive}; then
            return 1
        fi
        return 0
    }}
    do_lock() {{
        echo $$ > "$PIDFILE" || exit 2
    }}
    rm_lock() {{
        rm "$PIDFILE"
    }}
    trap 'rm_lock; exit 2' INT
    trap 'rm_lock; exit 2' TERM
    {exit_trap}
    if is_lock; then
        echo "locked" >> /var/log/borg.log
        exit 1
    fi
    do_lock
    borg create ::archive /home
    rm_lock
    """

ALIVE = [
    'pgrep -F "$PIDFILE" > /dev/null',
    'kill -0 "$(cat "$PIDFILE")" 2>/dev/null',
    'ps -p "$(cat "$PIDFILE")" > /dev/null',
]


@pytest.mark.parametrize("alive", ALIVE)
def test_lock_predicate_then_pid_write_is_check_then_create(cli, tmp_path, alive):
    got = findings(cli, tmp_path, BORG.format(alive=alive, exit_trap=""))
    assert ("LCK103", 14) in got and ("LCK202", 14) in got


@pytest.mark.parametrize("alive", ALIVE)
def test_lock_predicate_released_by_an_exit_trap_is_not_lck202(cli, tmp_path, alive):
    got = findings(cli, tmp_path, BORG.format(alive=alive, exit_trap="trap rm_lock EXIT"))
    assert ("LCK103", 14) in got
    assert not {f for f in got if f[0] in ("LCK202", "LCK107", "LCK101")}
