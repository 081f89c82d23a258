"""Shell recall (issue #12): ordinary spellings of constructs RULES.md already names.  Each
class is tested in several spellings, each beside a negative that must stay quiet."""

from __future__ import annotations

import textwrap

import pytest

from lockcheck.engine import analyze_text
from lockcheck.fix.apply import apply_edits


def run(src: str, path: str = "job.sh"):
    text = textwrap.dedent(src).lstrip("\n")
    return analyze_text(path, text, "shell")


def hits(src: str, path: str = "job.sh") -> set[tuple[str, int]]:
    return {(f.code, f.span.line) for f in run(src, path)[1]}


def codes(src: str, path: str = "job.sh") -> set[str]:
    return {c for c, _ in hits(src, path)}


# ----------------------------------------------------------------------------- negated tests

# every spelling of "the lock file is absent" guarding its creation; line 4 creates it
ABSENT_TESTS = [
    'if [ ! -e "$L" ]; then',
    "if [[ ! -f $L ]]; then",
    'if ! [ -e "$L" ]; then',
    'if ! test -f "$L"; then',
    'if test ! -e "$L"; then',
    'if [ ! -s "$L" ]; then',
    'if [[ ! ( -e "$L" ) ]]; then',
]


@pytest.mark.parametrize("test", ABSENT_TESTS)
def test_negated_file_test_guarding_creation_is_check_then_create(test):
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {test}
          touch "$L"
          do_work
          rm -f "$L"
        else
          echo "busy"
          exit 0
        fi
    """
    h = hits(src)
    assert ("LCK103", 4) in h
    assert ("LCK202", 4) in h  # released on the normal path only
    assert ("LCK401", 9) in h  # the busy `else` exits 0


@pytest.mark.parametrize("test", ABSENT_TESTS)
def test_negated_file_test_creating_an_output_once_is_quiet(test):
    # the same test making an output the script never removes: a run-once marker
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {test}
          touch "$L"
          do_work
        else
          echo "already done"
          exit 0
        fi
    """
    assert not codes(src) & {"LCK103", "LCK202", "LCK401"}


@pytest.mark.parametrize(
    "guard",
    [
        '[ ! -e "$L" ] || exit 0',
        '[[ ! -e "$L" ]] || { echo busy; exit 0; }',
        '[ -e "$L" ] && exit',
        '! [ -e "$L" ] || exit 0',
    ],
)
def test_negated_test_list_then_create(guard):
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {guard}
        echo $$ > "$L"
        do_work
        rm -f "$L"
    """
    h = hits(src)
    assert ("LCK103", 4) in h
    assert ("LCK401", 3) in h


@pytest.mark.parametrize("guard", ['test ! -f "$L" || exit', '! [ -f "$L" ] || exit'])
def test_bare_exit_after_a_failed_negated_test_exits_1(guard):
    # the test's own status (1) is what a bare `exit` reports: not a silent skip
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {guard}
        echo $$ > "$L"
        do_work
        rm -f "$L"
    """
    h = hits(src)
    assert ("LCK103", 4) in h
    assert "LCK401" not in codes(src)


def test_negated_test_that_only_cleans_up_is_quiet():
    # `[ ! -e L ] || rm -f L` removes an old file and goes on: no busy branch
    src = """
        #!/bin/bash
        L=/srv/jobs/job.out
        [ ! -e "$L" ] || rm -f "$L"
        echo $$ > "$L"
        do_work
        rm -f "$L"
    """
    assert not codes(src) & {"LCK103", "LCK401", "LCK202"}


@pytest.mark.parametrize(
    "guard",
    [
        'if [ -d "$D" ]; then echo running; exit 0; fi',
        '[ -d "$D" ] && { echo running; exit 0; }',
        'if ! [ ! -d "$D" ]; then exit 0; fi',
        "[[ ! -d $D ]] || exit 0",
    ],
)
def test_directory_test_then_mkdir_is_check_then_create(guard):
    src = f"""
        #!/bin/bash
        D=/srv/jobs/job.d
        {guard}
        mkdir "$D"
        do_work
        rmdir "$D"
    """
    h = hits(src)
    assert ("LCK103", 4) in h
    assert ("LCK401", 3) in h


@pytest.mark.parametrize(
    "src",
    [
        # ensure a directory exists: no busy branch at all
        """
        #!/bin/bash
        D=/srv/jobs/cache
        [ ! -d "$D" ] && mkdir "$D"
        do_work > "$D/out"
        """,
        """
        #!/bin/bash
        D=/srv/jobs/cache
        [ -d "$D" ] || mkdir "$D"
        do_work > "$D/out"
        rm -rf "$D"
        """,
        # refusing to overwrite an output directory, never removed
        """
        #!/bin/bash
        OUT=/srv/out
        if [ -d "$OUT" ]; then echo "exists, refusing"; exit 1; fi
        mkdir "$OUT"
        build > "$OUT/x"
        """,
        # a directory test does not guard a file's creation
        """
        #!/bin/bash
        D=/srv/jobs/job.d
        if [ -d "$D" ]; then exit 0; fi
        touch "$D"
        do_work
        rm -f "$D"
        """,
    ],
)
def test_directory_tests_that_are_not_locks(src):
    assert not codes(src) & {"LCK103", "LCK101", "LCK401", "LCK202"}


def test_directory_test_then_mkdir_under_set_e_is_one_lock():
    src = """
        #!/bin/bash
        set -e
        D=/srv/jobs/job.d
        [ -d "$D" ] && { echo running; exit 0; }
        mkdir "$D"
        trap 'rmdir "$D"' EXIT
        do_work
    """
    h = hits(src)
    assert ("LCK103", 5) in h
    assert ("LCK401", 4) in h
    assert "LCK101" not in codes(src)


# ----------------------------------------------------------------------------- carried status


@pytest.mark.parametrize(
    "save, test",
    [
        ("flock -n 9; rc=$?", "if (( rc == 1 )); then"),
        ("flock -n 9\nrc=$?", 'if [ "$rc" -ne 0 ]; then'),
        ("flock -n 9\nstatus=$?", 'if [ "$status" -eq 1 ]; then'),
        ("rc=0; flock -n 9 || rc=$?", "if (( rc != 0 )); then"),
        ("flock -n 9; rc=$?", "if (( rc )); then"),
        ("flock -n 9; rc=$?", "if (( rc > 0 )); then"),
        ("flock -n 9", "if (( $? )); then"),
        ('flock -n 9; rc=$?; echo "flock: $rc" >&2', "if [ $rc != 0 ]; then"),
    ],
)
def test_status_carried_in_a_variable_is_the_busy_branch(save, test):
    save = save.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        {save}
        {test}
          echo "busy"
          exit 0
        fi
        do_work
    """
    h = hits(src)
    assert any(c == "LCK401" for c, _ in h), h


@pytest.mark.parametrize(
    "test",
    ['if [ "$rc" -ne 0 ]; then', "if (( rc == 1 )); then"],
)
def test_carried_status_busy_branch_with_distinct_code_is_quiet(test):
    src = f"""
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        flock -n 9; rc=$?
        {test}
          echo "busy"
          exit 75
        fi
        do_work
    """
    assert "LCK401" not in codes(src)


def test_carried_status_reassigned_before_the_test_is_not_the_lock_status():
    # rc is overwritten by another command before it is tested: that test is not about flock
    src = """
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        flock -n 9; rc=$?
        rc=$(do_work; echo $?)
        if [ "$rc" -ne 0 ]; then
          echo "work failed"
          exit 0
        fi
    """
    assert "LCK401" not in codes(src)


def test_mkdir_status_carried_by_or_assignment():
    src = """
        #!/bin/bash
        rc=0
        mkdir /srv/jobs/job.lock || rc=$?
        if (( rc != 0 )); then echo busy; exit 0; fi
        trap 'rmdir /srv/jobs/job.lock' EXIT
        do_work
    """
    h = hits(src)
    assert ("LCK101", 3) in h and ("LCK401", 4) in h


def test_mkdir_status_carried_but_never_tested_is_no_lock():
    src = """
        #!/bin/bash
        rc=0
        mkdir /srv/jobs/out || rc=$?
        echo "mkdir returned $rc"
        do_work > /srv/jobs/out/result
    """
    assert not codes(src)


@pytest.mark.parametrize(
    "after",
    ["exit $?", "exit", 'rc=$?\necho "done: $rc"\nexit "$rc"', "exit ${?}"],
)
def test_flock_command_status_leaving_by_exit_is_lck403(after):
    after = after.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        flock -n /srv/jobs/job.lock rsync -a /srv/src/ /srv/dst/
        {after}
    """
    assert ("LCK403", 2) in hits(src)


@pytest.mark.parametrize(
    "after",
    [
        "rc=$?\nexit 0",
        "rc=$?\nexit",  # the assignment's own status (0) is what a bare exit reports
        "echo done\nexit $?",
        "rc=$?\nif [ $rc -eq 1 ]; then exit 75; fi\nexit $rc",
    ],
)
def test_flock_command_status_not_leaving_is_quiet(after):
    after = after.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        flock -n /srv/jobs/job.lock rsync -a /srv/src/ /srv/dst/
        {after}
    """
    assert "LCK403" not in codes(src)


# ----------------------------------------------------------------------------- background

BACKGROUND_COMPOUNDS = [
    'while read -r host; do\n  ping -c1 "$host"\ndone < /srv/jobs/hosts &',
    "{ sleep 10; notify_done; } &",
    "( cd /srv/build && make ) &",
    'for h in a b c; do sync_host "$h"; done &',
    "until ping -c1 gw; do sleep 5; done &",
    'tail -f /var/log/app.log | while read -r l; do echo "$l"; done &',
    'if [ -n "$NOTIFY" ]; then notify_done; fi &',
]


@pytest.mark.parametrize("bg", BACKGROUND_COMPOUNDS)
def test_background_compound_while_flock_held(bg):
    bg = bg.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        flock -n 9 || exit 75
        {bg}
        do_work
    """
    found = [f for f in run(src)[1] if f.code == "LCK405"]
    assert [f.span.line for f in found] == [4]  # one child, one finding


@pytest.mark.parametrize("bg", BACKGROUND_COMPOUNDS)
def test_background_compound_under_existence_lock(bg):
    bg = bg.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        mkdir /srv/jobs/job.lock || exit 75
        trap 'rmdir /srv/jobs/job.lock' EXIT
        {bg}
    """
    assert ("LCK405", 4) in hits(src)


@pytest.mark.parametrize("bg", BACKGROUND_COMPOUNDS)
def test_background_compound_waited_for_is_quiet(bg):
    bg = bg.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        flock -n 9 || exit 75
        {bg}
        do_work
        wait
    """
    assert "LCK405" not in codes(src)


@pytest.mark.parametrize("bg", BACKGROUND_COMPOUNDS[:4])
def test_background_compound_before_the_lock_is_quiet(bg):
    bg = bg.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        {bg}
        exec 9<>/srv/jobs/job.lock
        flock -n 9 || exit 75
        do_work
    """
    assert "LCK405" not in codes(src)


def test_background_group_closing_the_lock_descriptor_is_quiet():
    src = """
        #!/bin/bash
        exec 9<>/srv/jobs/job.lock
        flock -n 9 || exit 75
        { sleep 10; notify_done; } 9>&- &
        do_work
    """
    assert "LCK405" not in codes(src)


# ----------------------------------------------------------------------------- parameter defaults


@pytest.mark.parametrize(
    "assign",
    [
        'path="${1:-/tmp/job.lock}"',
        "path=${1:-/tmp/job.lock}",
        'path="${1-/tmp/job.lock}"',
        'readonly path="${1:-/tmp/job.lock}"',
    ],
)
def test_positional_default_at_top_level_is_resolved(assign):
    src = f"""
        #!/bin/bash
        {assign}
        exec 9>"$path"
        flock -n 9 || exit 75
        do_work
    """
    found = {f.code: f for f in run(src)[1]}
    assert "LCK502" in found and found["LCK502"].span.line == 3
    assert "/tmp/job.lock" in found["LCK502"].message


@pytest.mark.parametrize(
    "body, call",
    [
        ("local lock=${2:-/var/lock/job.lock}", "run_job nightly"),
        ('local lock="${1:-/var/lock/job.lock}"', "run_job"),
        ('local lock="${1:-/var/lock/job.lock}"', 'run_job ""'),
        ('lock="${2:-/var/lock/job.lock}"', "run_job nightly"),
    ],
)
def test_parameter_default_inside_function_is_resolved(body, call):
    src = f"""
        #!/bin/bash
        run_job() {{
          {body}
          mkdir "$lock" || exit 75
          trap 'rmdir "$lock"' EXIT
          do_work
        }}
        {call}
    """
    found = [f for f in run(src)[1] if f.code == "LCK502"]
    assert [f.span.line for f in found] == [4]
    assert "/var/lock/job.lock" in found[0].message


@pytest.mark.parametrize(
    "body, call",
    [
        ("local lock=${2:-/var/lock/job.lock}", 'run_job nightly "$HOME/.cache/job.lock"'),
        ('local lock="${1:-/var/lock/job.lock}"', 'run_job "$XDG_RUNTIME_DIR/job.lock"'),
    ],
)
def test_parameter_passed_by_every_call_overrides_the_default(body, call):
    src = f"""
        #!/bin/bash
        run_job() {{
          {body}
          mkdir "$lock" || exit 75
          trap 'rmdir "$lock"' EXIT
          do_work
        }}
        {call}
    """
    h = codes(src)
    assert "LCK101" in h
    assert "LCK502" not in h


def test_positional_default_in_a_private_directory_is_quiet():
    src = """
        #!/bin/bash
        path="${1:-$HOME/.local/state/job/job.lock}"
        exec 9<>"$path" || exit 3
        flock -n 9 || exit 75
    """
    assert not codes(src)


# ----------------------------------------------------------------------------- remove and leave


@pytest.mark.parametrize(
    "guard, line",
    [
        (
            'if ! mkdir "$L" 2>/dev/null; then\n  echo "removing it for next time"\n'
            '  rm -rf "$L"\n  exit 0\nfi',
            6,
        ),
        ('mkdir "$L" || { rm -rf "$L"; exit 0; }', 3),
        ('mkdir "$L" || { echo busy; rm -rf "$L"; exit; }', 3),
    ],
)
def test_busy_branch_that_removes_the_lock_and_exits_0_is_a_silent_skip(guard, line):
    guard = guard.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {guard}
        trap 'rmdir "$L"' EXIT
        do_work
    """
    h = hits(src)
    assert ("LCK101", 3) in h
    assert ("LCK401", line) in h


def test_check_then_create_branch_removing_and_exiting_0_is_a_silent_skip():
    src = """
        #!/bin/bash
        L=/srv/jobs/job.pid
        if [ -e "$L" ]; then
          rm -f "$L"
          exit 0
        fi
        echo $$ > "$L"
        do_work
        rm -f "$L"
    """
    h = hits(src)
    assert ("LCK103", 7) in h and ("LCK401", 5) in h


@pytest.mark.parametrize(
    "guard",
    [
        # a takeover: remove, then try again
        'mkdir "$L" || { rm -rf "$L"; mkdir "$L" || exit 75; }',
        'if ! mkdir "$L"; then\n  rm -rf "$L"\n  exec "$0" "$@"\nfi',
        'until mkdir "$L"; do\n  rm -rf "$L"\n  sleep 1\ndone',
        # a removal and a distinct failure status
        'if ! mkdir "$L"; then\n  rm -rf "$L"\n  exit 1\nfi',
        'mkdir "$L" || { rm -rf "$L"; exit 75; }',
    ],
)
def test_removal_that_retries_or_fails_is_no_silent_skip(guard):
    guard = guard.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        L=/srv/jobs/job.lock
        {guard}
        trap 'rmdir "$L"' EXIT
        do_work
    """
    assert "LCK401" not in codes(src)


# ----------------------------------------------------------------------------- precision


@pytest.mark.parametrize(
    "create",
    [
        'curl -fsSL "$1" > "$(mktemp)"',
        'curl -fsSL "$1" > "$tmp"',
        'wget -qO "$tmp" "$1" > /tmp/x.$$',
    ],
)
def test_download_to_a_temporary_file_is_no_check_then_create(create):
    # a per-process name is no lock
    src = f"""
        #!/bin/bash
        tmp=$(mktemp)
        fetch() {{
          {create}
        }}
        if [ -f "$tmp" ]; then
          echo "have it"
          exit 0
        fi
        rm -f "$tmp" /tmp/x.$$
    """
    assert not codes(src) & {"LCK103", "LCK202", "LCK401"}


def test_called_helper_creating_after_the_test_is_check_then_create():
    src = """
        #!/bin/bash
        start() {
          touch /srv/cache/job.lock
          do_work
          rm -f /srv/cache/job.lock
        }
        if [ -f /srv/cache/job.lock ]; then
          exit 0
        fi
        start
    """
    h = hits(src)
    assert ("LCK103", 3) in h and ("LCK401", 8) in h


@pytest.mark.parametrize(
    "feed, read",
    [
        ('( echo $BASHPID > "$FIFO"; exec sleep 100 ) &', 'read pid < "$FIFO"'),
        ('"$TS_HELPER_SIGRECEIVE" > "$FIFO" &', 'read -r pid < "$FIFO"'),
        ("{ print_pid > $FIFO; } &", "pid=$(cat $FIFO)"),
    ],
)
@pytest.mark.parametrize("make", ['mkfifo "$FIFO"', 'mkfifo -m 600 "$FIFO"', 'mknod "$FIFO" p'])
def test_pid_read_from_a_fifo_the_script_feeds_is_no_stored_pid(make, feed, read):
    src = f"""
        #!/bin/bash
        FIFO="$TS_OUTDIR/sig.fifo"
        {make}
        {feed}
        {read}
        kill -USR1 "$pid"
    """
    assert "LCK108" not in codes(src)


@pytest.mark.parametrize("read", ['read pid < "$FIFO"', 'pid=$(cat "$FIFO")'])
def test_pid_read_from_a_pid_file_is_still_lck108(read):
    src = f"""
        #!/bin/bash
        FIFO=/var/run/job.pid
        {read}
        kill -TERM "$pid"
    """
    assert ("LCK108", 4) in hits(src)


# ----------------------------------------------------------------------------- exiting helpers


@pytest.mark.parametrize(
    "helper",
    [
        'fail() { echo "$*" >> /var/log/job.log; exit ${FAIL_CODE:=1}; }',
        'fail() { logger -t job "$*"; exit "${FAIL_CODE:-1}"; }',
        'fail() { logger -t job "$*"; exit $RC; }\nRC=2',
    ],
)
def test_fail_helper_with_a_nonzero_default_status_is_no_zero_exit(helper):
    helper = helper.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        {helper}
        mkdir /srv/jobs/job.lock || fail "busy"
        trap 'rmdir /srv/jobs/job.lock' EXIT
        do_work
    """
    assert not codes(src) & {"LCK401", "LCK402"}


@pytest.mark.parametrize(
    "helper, code",
    [
        ('fail() { logger -t job "$*"; exit ${FAIL_CODE:=1}; }\nFAIL_CODE=0', "LCK402"),
        ('skip() { echo "$*" >&2; exit; }', "LCK401"),
        ('skip() { echo "$*"; exit 0; }', "LCK401"),
    ],
)
def test_helper_exiting_0_is_a_zero_exit(helper, code):
    helper = helper.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        {helper}
        mkdir /srv/jobs/job.lock || {helper.split("(")[0].strip()} "busy"
        trap 'rmdir /srv/jobs/job.lock' EXIT
        do_work
    """
    found = [(c, ln) for c, ln in hits(src) if c in ("LCK401", "LCK402")]
    assert [c for c, _ in found] == [code]


# ----------------------------------------------------------------------------- LCK404 scope

EXIT_TRAP = """
    #!/bin/bash
    cleanup() { rm -rf "$tmp"; exit 0; }
    trap cleanup EXIT
    tmp=$(mktemp -d)
"""


@pytest.mark.parametrize(
    "lock",
    [
        "exec 9<>/srv/jobs/job.lock\nflock -n 9 || exit 75",
        "mkdir /srv/jobs/job.lock || exit 75",
        "flock -n -E 75 /srv/jobs/job.lock make",
        "if [ -e /srv/jobs/job.lock ]; then exit 75; fi\ntouch /srv/jobs/job.lock\n"
        "do_work\nrm -f /srv/jobs/job.lock",
    ],
)
def test_exit_trap_override_in_a_script_that_locks(lock):
    assert ("LCK404", 2) in hits(EXIT_TRAP + "    " + lock.replace("\n", "\n    ") + "\n")


@pytest.mark.parametrize(
    "work",
    ["do_stuff", 'cp -r "$1" "$tmp" && tar czf out.tgz -C "$tmp" .', 'mkdir -p "$tmp/x"'],
)
def test_exit_trap_override_in_a_tool_without_lock_is_quiet(work):
    assert "LCK404" not in codes(EXIT_TRAP + "    " + work + "\n")


# ----------------------------------------------------------------------------- LCK109


@pytest.mark.parametrize(
    "guard, line",
    [
        ('mkdir -p "$L" || exit 1', 3),
        ('mkdir -p "$L" 2>/dev/null || { echo "already running"; exit 0; }', 3),
        ('if ! mkdir -p "$L"; then\n  echo "already running"\n  exit 75\nfi', 3),
        ('mkdir --parents "$L" || exit 75', 3),
        ('until mkdir -p "$L"; do sleep 5; done', 3),
        ('mkdir -p "$L"\nif [ $? -ne 0 ]; then exit 0; fi', 3),
    ],
)
def test_mkdir_p_as_the_test_of_a_busy_branch_is_lck109(guard, line):
    guard = guard.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        L=/srv/jobs/import.lock
        {guard}
        trap 'rmdir "$L"' EXIT
        do_work
    """
    found = run(src)[1]
    assert [(f.code, f.span.line) for f in found if f.code == "LCK109"] == [("LCK109", line)]
    # never an existence lock, and removing its own name is no foreign removal
    assert not {f.code for f in found} & {"LCK101", "LCK107", "LCK202", "LCK401"}
    f = next(f for f in found if f.code == "LCK109")
    assert f.suggestion is not None
    # the directory kept and the open checked on lines of their own, the flock the test
    new = apply_edits(run(src)[0].text, sorted(f.suggestion.edits, key=lambda e: e.start))
    assert 'mkdir -p "$L" || exit 3\nexec 9<>"$L/.lock" || exit 3\n' in new
    assert "flock -n 9" in new and "rmdir" not in new
    assert not {x.code for x in analyze_text("job.sh", new, "shell")[1]} & {"LCK109", "LCK406"}


@pytest.mark.parametrize(
    "src",
    [
        # an output directory that cannot be made: an error exit, not a busy branch
        """
        #!/bin/bash
        OUT=/srv/exports/orders
        mkdir -p "$OUT" || { echo "cannot create $OUT" >&2; exit 1; }
        export_orders > "$OUT/orders.csv"
        """,
        # the parent directory of the real lock
        """
        #!/bin/bash
        LOCKDIR=/var/lock/myapp
        mkdir -p "$LOCKDIR" || exit 1
        exec 9<>"$LOCKDIR/job.lock" || exit 3
        flock -n 9 || exit 75
        """,
        # a lock-named directory that is then filled: a work directory
        """
        #!/bin/bash
        RUN=/srv/jobs/running
        mkdir -p "$RUN" || exit 0
        cp /srv/incoming/* "$RUN/"
        """,
        # not tested at all
        """
        #!/bin/bash
        mkdir -p /srv/jobs/import.lock
        do_work
        """,
        # the failure branch goes on
        """
        #!/bin/bash
        mkdir -p /srv/jobs/import.lock || echo "cannot create, going on"
        do_work
        """,
    ],
)
def test_mkdir_p_that_is_no_lock_is_quiet(src):
    assert "LCK109" not in codes(src)


def test_plain_mkdir_lock_is_lck101_not_lck109():
    src = """
        #!/bin/bash
        mkdir /srv/jobs/import.lock || exit 75
        trap 'rmdir /srv/jobs/import.lock' EXIT
    """
    h = codes(src)
    assert "LCK101" in h and "LCK109" not in h


# ----------------------------------------------------------------------------- LCK406

UNCHECKED_OPENS = [
    'exec 9>"$L"',
    'exec 9<>"$L"',
    'exec 9>>"$L"',
    'exec 9<"$L"',
    'exec 9<>"$L" 2>/dev/null',
]
BUSY = [
    "flock -n 9 || exit 75",
    'if ! flock -w 10 9; then\n  logger -t job "busy"\n  exit 75\nfi',
    "flock -n 9\nif [ $? -ne 0 ]; then exit 75; fi",
]


@pytest.mark.parametrize("busy", BUSY)
@pytest.mark.parametrize("opened", UNCHECKED_OPENS)
@pytest.mark.parametrize("shebang", ["#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/bash -u"])
def test_unchecked_exec_before_flock_busy_branch_is_lck406(shebang, opened, busy):
    busy = busy.replace("\n", "\n        ")
    src = f"""
        {shebang}
        L="${{XDG_RUNTIME_DIR:-/run/user/$(id -u)}}/job.lock"
        {opened}
        {busy}
        do_work
    """
    found = [f for f in run(src)[1] if f.code == "LCK406"]
    assert [f.span.line for f in found] == [3]
    assert found[0].suggestion is not None
    assert found[0].suggestion.edits[0].content == " || exit 3"


@pytest.mark.parametrize(
    "shebang, prelude",
    [
        ("#!/bin/sh", ""),
        ("#!/usr/bin/env sh", ""),
        ("#!/bin/dash", ""),
        ("#!/bin/ksh", ""),
        ("#!/bin/bash --posix", ""),
        ("#!/bin/bash -e", ""),
        ("#!/bin/bash", "set -o posix"),
        ("#!/bin/bash", "set -euo pipefail"),
        ("#!/bin/bash", "set -o errexit"),
        ("#!/usr/bin/env bash", "set -x -e"),
        ("#!/bin/bash", "set -o pipefail -o errexit"),
        ("", ""),  # no shebang, job.sh: which shell runs it is unknown
    ],
)
def test_failed_exec_that_ends_the_shell_is_quiet(shebang, prelude):
    src = f"""
        {shebang}
        {prelude}
        L="${{XDG_RUNTIME_DIR:-/run/user/$(id -u)}}/job.lock"
        exec 9<>"$L"
        flock -n 9 || exit 75
        do_work
    """
    assert "LCK406" not in codes(src)


def test_set_e_after_the_exec_does_not_protect_it():
    src = """
        #!/usr/bin/env bash
        exec 200>"$XDG_RUNTIME_DIR/repack.lock"
        flock -n 200 || { echo "already running"; exit 75; }
        set -u -e
        repack
    """
    assert ("LCK406", 2) in hits(src)


def test_no_shebang_bash_file_is_bash():
    src = """
        L="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/job.lock"
        exec 9<>"$L"
        flock -n 9 || exit 75
    """
    assert ("LCK406", 2) in hits(src, "job.bash")


@pytest.mark.parametrize(
    "lock",
    [
        'exec 9<>"$L" || exit 3\nflock -n 9 || exit 75',
        'if ! exec 9<>"$L"; then exit 3; fi\nflock -n 9 || exit 75',
        'exec 9<>"$L" && flock -n 9 || exit 75',
        'exec 9<>"$L"\nflock 9',  # blocking: no busy branch
        'exec 9<>"$L"\nwhile ! flock -n 9; do sleep 1; done',  # a retry, no busy branch
        'flock -n -E 75 "$L" do_work',  # command form opens the file itself
        '{\n  flock -n 9 || exit 75\n  do_work\n} 9<>"$L"',  # a group redirect skips the group
    ],
)
def test_checked_or_self_opened_lock_is_no_lck406(lock):
    lock = lock.replace("\n", "\n        ")
    src = f"""
        #!/bin/bash
        L="${{XDG_RUNTIME_DIR:-/run/user/$(id -u)}}/job.lock"
        {lock}
    """
    assert "LCK406" not in codes(src)


# ----------------------------------------------------------------------------- spellings


@pytest.mark.parametrize(
    "rm", ['\\rm -f "$LOCKFILE"', '  \\rm -f "$LOCKFILE"', 'command rm -f "$LOCKFILE"']
)
def test_alias_escaped_removal_at_line_start_is_a_release(rm):
    src = f"""
        #!/bin/bash
        LOCKFILE="$HOME/.backup_in_process"
        if [ -f "$LOCKFILE" ]; then
            echo "another backup is running" >> /var/log/backup-audit.log
            exit 0
        fi
        echo $$ > "$LOCKFILE"
        borgmatic -c /etc/borgmatic/box.yaml
        {rm}
    """
    h = hits(src)
    assert ("LCK103", 7) in h and ("LCK202", 7) in h and ("LCK402", 5) in h


def test_escaped_command_without_a_lock_is_quiet():
    src = """
        #!/bin/bash
        out="$HOME/report.txt"
        make_report
        \\cp -f report.txt "$out"
        \\rm -f report.txt
    """
    assert not codes(src)


@pytest.mark.parametrize(
    "src, lines",
    [
        ('while read -r pid; do\n  kill "$pid"\ndone < "$PIDFILE"', [2]),
        ('{ read -r pid; kill -TERM "$pid"; } < "$PIDFILE"', [1]),
        (
            "(flock -n 0 || {\n  read pid\n  kill $pid\n  timeout 10 flock 0\n"
            "  kill -KILL $pid\n}) <>$PIDFILE",
            [3, 5],
        ),
        ('(if ! flock -n 0; then\n  read pid\n  kill "$pid"\nfi) <> "$PIDFILE"', [3]),
    ],
)
def test_pid_read_from_a_compound_commands_stdin_is_a_stored_pid(src, lines):
    body = src.replace("\n", "\n        ")
    text = f"""
        #!/bin/sh
        PIDFILE=/var/run/acc.lock
        {body}
    """
    found = sorted(f.span.line for f in run(text)[1] if f.code == "LCK108")
    assert found == [n + 2 for n in lines]


def test_value_read_from_a_compound_commands_stdin_that_is_no_pid_is_quiet():
    src = """
        #!/bin/sh
        while read -r host; do
          ping -c1 "$host"
        done < /etc/backup-hosts
    """
    assert not codes(src)


# ----------------------------------------------------------------------------- carried liveness


@pytest.mark.parametrize(
    "lookup, dead",
    [
        ('ACTIVE=$(ps -p "$PID" --no-headers -o cmd | grep "$NAME")', '[ -z "$ACTIVE" ]'),
        ("ACTIVE=`ps -p ${PID} | grep ${PID}`", '[ -z "${ACTIVE}" ]'),
        ('ACTIVE=$(ps -p "$PID" -o pid=)', '! [ -n "$ACTIVE" ]'),
        ('ACTIVE=$(ps -p "$PID" -o pid=)', 'test -z "$ACTIVE"'),
        ('ACTIVE=$(ps -p "$PID" -o pid=)', "[[ ! -n $ACTIVE ]]"),
    ],
)
def test_liveness_carried_in_a_variable_decides_a_stale_breaker(lookup, dead):
    src = f"""
        #!/bin/bash
        LOCK=/srv/jobs/job.pid
        NAME=job
        if [ -f "$LOCK" ]; then
          PID=$(cat "$LOCK")
          {lookup}
          if {dead}; then
            rm -f "$LOCK"
          else
            echo "running"
            exit 75
          fi
        fi
        echo $$ > "$LOCK"
        do_work
        rm -f "$LOCK"
    """
    h = hits(src)
    assert ("LCK105", 6) in h and ("LCK106", 8) in h


def test_process_lookup_that_only_reports_is_quiet():
    src = """
        #!/bin/bash
        PID=$(cat /var/run/job.pid)
        ACTIVE=$(ps -p "$PID" -o pid=)
        if [ -z "$ACTIVE" ]; then
          echo "job is not running"
        else
          echo "job runs as $ACTIVE"
        fi
    """
    assert not codes(src) & {"LCK105", "LCK106"}


@pytest.mark.parametrize(
    "name",
    ["LCK_FILE=`basename $0`.lck", 'LCK_FILE="$(basename "$0").lock"', "LCK_FILE=${0##*/}.lock"],
)
def test_lock_named_from_the_script_name_alone_is_in_the_working_directory(name):
    src = f"""
        #!/bin/bash
        {name}
        mkdir "$LCK_FILE" || exit 75
        trap 'rmdir "$LCK_FILE"' EXIT
    """
    assert ("LCK501", 3) in hits(src)


def test_lock_named_from_the_script_name_in_a_private_directory_is_quiet():
    src = """
        #!/bin/bash
        LCK_FILE="$XDG_RUNTIME_DIR/$(basename "$0").lock"
        exec 9<>"$LCK_FILE" || exit 3
        flock -n 9 || exit 75
    """
    assert "LCK501" not in codes(src)
