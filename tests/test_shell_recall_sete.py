"""Shell recall on the dev half of blind set E (issue #12/#14, session 10): each construct in a
realistic script and in several spellings, beside the correct spelling that must stay quiet."""

from __future__ import annotations

import json
import textwrap

import pytest


def findings(cli, tmp_path, src: str, name: str = "job.sh") -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


def codes(found: set[tuple[str, int]], code: str) -> set[int]:
    return {line for c, line in found if c == code}


# ------------------------------- s6-overlay's `with-contenv` runs the shell named after it

CONTAINER_JOB = """
    {SHEBANG}
    (
      flock -n 200 || exit 1
      rclone sync /data "$SYNC_DESTINATION:/backup"
    ) 200>{LOCK}
    """

CHAIN_LOADED = [
    "#!/usr/bin/with-contenv sh",
    "#!/usr/bin/with-contenv bash",
    "#!/command/with-contenv bash",
    "#!/usr/bin/with-contenv /bin/sh",
]


@pytest.mark.parametrize("shebang", CHAIN_LOADED)
def test_a_with_contenv_shell_script_is_read_as_shell(cli, tmp_path, shebang):
    src = CONTAINER_JOB.replace("{SHEBANG}", shebang).replace("{LOCK}", "/var/lock/rclone.lock")
    assert codes(findings(cli, tmp_path, src), "LCK502") == {5}


@pytest.mark.parametrize("shebang", CHAIN_LOADED)
def test_a_with_contenv_shell_script_with_a_private_lock_stays_quiet(cli, tmp_path, shebang):
    src = CONTAINER_JOB.replace("{SHEBANG}", shebang).replace("{LOCK}", "/config/rclone.lock")
    assert findings(cli, tmp_path, src) == set()


@pytest.mark.parametrize("shebang", ["#!/usr/bin/with-contenv perl", "#!/usr/bin/with-contenv"])
def test_with_contenv_running_another_interpreter_is_not_read(cli, tmp_path, shebang):
    src = CONTAINER_JOB.replace("{SHEBANG}", shebang).replace("{LOCK}", "/var/lock/rclone.lock")
    assert findings(cli, tmp_path, src) == set()


# ------------------- the acquire's status tested by the script's last statement (LCK401)

SAVED_STATUS = """
    #!/bin/bash
    LOCK="$HOME/.cache/owl-settings"
    trap 'lockfile-remove "$LOCK"; rmdir "$LOCK.d" 2>/dev/null' EXIT
    {ACQUIRE}
    {TEST}
    then
      write_settings
    else
      {BUSY}
    fi
    """

STATUS_TESTS = [
    ('lockfile-create "$LOCK" -r 0', "LOCKED=$?\nif [[ $LOCKED -eq 0 ]]"),
    ('lockfile-create "$LOCK" -r 0', "if [ $? -eq 0 ]"),
    ('mkdir "$LOCK.d"', 'rc=$?\necho "mkdir: $rc"\nif [ "$rc" = 0 ]'),
    ('mkdir "$LOCK.d" 2>/dev/null', "status=$?\nif (( status == 0 ))"),
]


def _saved(acquire: str, test: str, busy: str) -> tuple[str, int]:
    lines = "\n    ".join(test.split("\n"))
    src = SAVED_STATUS.replace("{ACQUIRE}", acquire).replace("{TEST}", lines)
    src = src.replace("{BUSY}", busy)
    row = textwrap.dedent(src).lstrip("\n").splitlines().index("  " + busy) + 1
    return src, row


@pytest.mark.parametrize(("acquire", "test"), STATUS_TESTS)
def test_a_busy_else_that_ends_the_script_after_an_echo_is_a_silent_skip(
    cli, tmp_path, acquire, test
):
    src, row = _saved(acquire, test, 'echo "Locked, not writing"')
    assert codes(findings(cli, tmp_path, src), "LCK401") == {row}


@pytest.mark.parametrize(("acquire", "test"), STATUS_TESTS)
@pytest.mark.parametrize("busy", ['echo "busy" >> "$HOME/owl.log"', "exit 75"])
def test_a_busy_else_that_records_or_exits_75_stays_quiet(cli, tmp_path, acquire, test, busy):
    src, _row = _saved(acquire, test, busy)
    assert codes(findings(cli, tmp_path, src), "LCK401") == set()


@pytest.mark.parametrize(("acquire", "test"), STATUS_TESTS)
def test_a_busy_else_followed_by_more_work_is_no_silent_skip_yet(cli, tmp_path, acquire, test):
    src, _row = _saved(acquire, test, 'echo "Locked, not writing"')
    src += "    exit 3\n"
    assert codes(findings(cli, tmp_path, src), "LCK401") == set()


# ------------- a process listing searched for the stored PID, its output counted (LCK105/106)

PID_LOCK = """
    #!/bin/bash
    lockfile="$HOME/.cache/autodl.pid"
    if [ -e "$lockfile" ]; then
        old_pid=$(cat "$lockfile")
        {LOOKUP}
        if {DEAD}; then
            echo "stale lock"
            rm -f "$lockfile"
        else
            echo "still running" >> "$HOME/autodl.log"
            exit 75
        fi
    fi
    echo -n "$$" > "$lockfile"
    trap 'rm -f "$lockfile"' EXIT
    download_all
    """

LOOKUPS = [
    ("is_running=$(ps -Ao pid | grep -w $old_pid | wc -l)", '[ "$is_running" -eq 0 ]'),
    ('n=$(ps -e -o pid= | grep -c "^ *${old_pid}$")', "[[ $n == 0 ]]"),
    ('RUNNING=$(ps aux | grep -w "$old_pid" | grep -v grep | wc -l)', "! [ $RUNNING -ge 1 ]"),
    ('ACTIVE=$(ps -ef | grep -w "$old_pid" | grep -v grep)', '[ -z "$ACTIVE" ]'),
]


def _pid_lock(lookup: str, dead: str) -> str:
    return PID_LOCK.replace("{LOOKUP}", lookup).replace("{DEAD}", dead)


@pytest.mark.parametrize(("lookup", "dead"), LOOKUPS)
def test_a_listing_searched_for_the_stored_pid_decides_the_takeover(cli, tmp_path, lookup, dead):
    found = findings(cli, tmp_path, _pid_lock(lookup, dead))
    assert codes(found, "LCK105") == {5}
    assert codes(found, "LCK106") == {8}


@pytest.mark.parametrize(("lookup", "dead"), LOOKUPS)
def test_a_listing_searched_for_this_run_s_own_pid_is_no_liveness_test(cli, tmp_path, lookup, dead):
    src = _pid_lock(lookup.replace("old_pid", "$"), dead)
    found = findings(cli, tmp_path, src)
    assert codes(found, "LCK105") == codes(found, "LCK106") == set()


@pytest.mark.parametrize(("lookup", "dead"), LOOKUPS)
def test_a_count_that_only_reports_is_not_flagged(cli, tmp_path, lookup, dead):
    src = f"""
    #!/bin/bash
    old_pid=$(cat /run/autodl.pid)
    {lookup}
    if {dead}; then
        echo "autodl is not running"
    else
        echo "autodl is running"
    fi
    """
    assert codes(findings(cli, tmp_path, src), "LCK105") == set()


# ------------- a lock helper whose lock run ends holding the lock: `-u` is another run (LCK202)

HELPER_CASE = """
    #!/bin/bash
    lockfile="$2"
    case "$1" in
    -l)
        if [ -e "$lockfile" ]; then
            echo "lock file already exists" >&2
            exit 1
        fi
        {CREATE}
        {AFTER}
        ;;
    -u)
        rm -f "$lockfile"
        ;;
    esac
    """

HELPER_IF = """
    #!/bin/sh
    action=lock
    [ "$1" = "-u" ] && action=unlock
    lockfile="$HOME/.cache/jobs/$2.lock"
    if [ "$action" = "lock" ]; then
        [ -f "$lockfile" ] && exit 1
        {CREATE}
        {AFTER}
    else
        if ! rm -f "$lockfile"; then
            exit 1
        fi
        exit 0
    fi
    """

CREATES = ['echo -n "$pid" > "$lockfile"', 'touch "$lockfile"', 'echo $PPID >"$lockfile"']
AFTERS = [
    'if [ -e "$lockfile" ]; then\n    echo "Done."\n    exit 0\nelse\n    exit 1\nfi',
    'echo "locked"',
    "exit 0",
    '[ -e "$lockfile" ] && echo "Done." >&2',
]


def _helper(template: str, create: str, after: str) -> tuple[str, int]:
    indent = "        "
    src = template.replace("{CREATE}", create)
    src = src.replace("{AFTER}", ("\n" + indent).join(after.split("\n")))
    row = textwrap.dedent(src).lstrip("\n").splitlines().index(indent[4:] + create) + 1
    return src, row


@pytest.mark.parametrize("template", [HELPER_CASE, HELPER_IF], ids=["case", "if"])
@pytest.mark.parametrize("create", CREATES)
@pytest.mark.parametrize("after", AFTERS)
def test_a_lock_run_that_ends_holding_the_lock_hands_it_on(cli, tmp_path, template, create, after):
    src, row = _helper(template, create, after)
    found = findings(cli, tmp_path, src)
    assert codes(found, "LCK103") == {row}
    assert codes(found, "LCK202") == set()


@pytest.mark.parametrize("template", [HELPER_CASE, HELPER_IF], ids=["case", "if"])
@pytest.mark.parametrize("create", CREATES)
@pytest.mark.parametrize("work", ["rsync -a src/ dst/", 'run_job "$lockfile"'])
def test_work_after_the_create_is_judged_in_that_run(cli, tmp_path, template, create, work):
    src, row = _helper(template, create, work + '\nrm -f "$lockfile"')
    found = findings(cli, tmp_path, src)
    assert codes(found, "LCK103") == {row}
    assert codes(found, "LCK202") == {row}


# ------- a flock file tested first and removed after the run: an existence lock too (LCK103/401)

TESTED_FLOCK = {
    "subshell": """
        #!/usr/bin/env bash
        DIR="$HOME/deploy"
        LOCKPATH=$DIR/deploy.lock
        if [ -f $LOCKPATH ]; then
            echo 'Deployment is locked. Remove file '$LOCKPATH' to release the lock.'
        else
            (
                flock -x -n 200
                git pull
            ) 200>$LOCKPATH
            {REMOVE}
        fi
        """,
    "exec": """
        #!/bin/bash
        LOCKPATH="$HOME/.cache/deploy.lock"
        [ -e "$LOCKPATH" ] && { echo "busy"; exit 0; }
        exec 9>"$LOCKPATH"
        flock -n 9 || exit 1
        git pull
        {REMOVE}
        """,
    "group": """
        #!/bin/sh
        LOCKPATH=$HOME/.cache/deploy.lock
        if test -f $LOCKPATH; then
            echo "locked"
            exit
        fi
        {
            flock 9
            git pull
        } 9>>$LOCKPATH
        {REMOVE}
        """,
}
# (the busy line, the creating line) of each
TESTED_FLOCK_ROWS = {"subshell": (5, 10), "exec": (3, 4), "group": (5, 10)}


@pytest.mark.parametrize("form", sorted(TESTED_FLOCK))
@pytest.mark.parametrize("remove", ["rm -f $LOCKPATH", 'rm "$LOCKPATH"', "unlink $LOCKPATH"])
def test_a_tested_flock_file_removed_after_the_run_is_an_existence_lock(
    cli, tmp_path, form, remove
):
    found = findings(cli, tmp_path, TESTED_FLOCK[form].replace("{REMOVE}", remove))
    busy, made = TESTED_FLOCK_ROWS[form]
    assert codes(found, "LCK401") == {busy}
    assert codes(found, "LCK103") == {made}
    assert codes(found, "LCK201")  # the flock file removed, as before


@pytest.mark.parametrize("form", sorted(TESTED_FLOCK))
def test_a_tested_flock_file_that_is_kept_is_a_pre_created_flock_file(cli, tmp_path, form):
    found = findings(cli, tmp_path, TESTED_FLOCK[form].replace("{REMOVE}", "echo done"))
    assert codes(found, "LCK103") == codes(found, "LCK401") == codes(found, "LCK202") == set()


def test_a_flock_file_removed_only_as_stale_before_it_is_made_is_no_existence_lock(cli, tmp_path):
    src = """
    #!/bin/bash
    LOCKFILE="$HOME/.cache/weather.lock"
    if [[ -f "$LOCKFILE" ]]; then
        if ! flock -n "$LOCKFILE" true; then
            echo "Script already running! Exiting."
            exit 1
        else
            rm -f "$LOCKFILE"
        fi
    fi
    (
        flock -n 9 || exit 1
        fetch_weather
    ) 9>"$LOCKFILE"
    """
    found = findings(cli, tmp_path, src)
    assert codes(found, "LCK103") == codes(found, "LCK202") == set()
    assert codes(found, "LCK201") == {8}
