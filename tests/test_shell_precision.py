"""Shell frontend precision: patterns from real scripts that are not locks (negative cases),
each next to the lock it must not be confused with (positive cases)."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from lockcheck.engine import analyze_text
from lockcheck.frontends import shell
from lockcheck.model import PartKind


def run(src: str, path: str = "job.sh"):
    text = textwrap.dedent(src).lstrip("\n")
    return analyze_text(path, text, "shell")


def hits(src: str, path: str = "job.sh") -> set[tuple[str, int]]:
    return {(f.code, f.span.line) for f in run(src, path)[1]}


def codes(src: str, path: str = "job.sh") -> set[str]:
    return {c for c, _ in hits(src, path)}


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


# ----------------------------------------------------------------------------- LCK000


@needs_bash
def test_semicolon_in_quoted_default_is_valid_bash():
    src = """
        #!/usr/bin/env bash
        NAME="demo"
        labels="${labels:-web;proxy;cache}"
        cpu="${cpu:-2}"
        mkdir /srv/jobs/demo.lock || exit 0
    """
    h = hits(src)
    assert not any(c == "LCK000" for c, _ in h)
    # the rest of the file is still read
    assert ("LCK401", 5) in h


def test_without_bash_tree_sitter_verdict_stands(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    src = """
        #!/usr/bin/env bash
        labels="${labels:-web;proxy;cache}"
    """
    assert "LCK000" in codes(src)


@needs_bash
def test_file_bash_rejects_is_still_a_parse_error():
    src = """
        #!/bin/bash
        if [ -n "$X" ]; then
          echo "unterminated
        rm -f /tmp/other.lock
    """
    assert ("LCK000", 3) in hits(src)


def test_polyglot_ends_at_exec():
    # a Tcl program started through sh: the shell never reads past the exec
    src = """
        #!/bin/sh
        # restart with the interpreter \\
        exec scotty -nf "$0" "$@"

        mib load rfc1493.mib
        proc getArps { s } {
            if {[catch {snmp walk $s x} r]} {
                puts "failed $r"
            }
        }
    """
    facts, findings = run(src)
    assert facts.parse_errors == [] and findings == []


def test_payload_after_top_level_exit_is_not_read():
    src = """
        #!/bin/sh
        mkdir /srv/inst.lock || exit 0
        tail -n +6 "$0" | tar xz
        rmdir /srv/inst.lock
        exit 0
        )(}{ binary ' payload "
    """
    h = hits(src)
    assert not any(c == "LCK000" for c, _ in h)
    assert ("LCK401", 2) in h


def test_exec_in_a_branch_does_not_end_the_file():
    src = """
        #!/bin/sh
        if [ -x /usr/bin/tclsh ]; then exec tclsh "$0"; fi
        echo "unterminated
    """
    assert "LCK000" in codes(src)


def test_shell_that_runs_another_script_on_this_file():
    # `#!/bin/sh /usr/share/dpatch/dpatch-run`: the file is the script's data, not shell
    src = """
        #! /bin/sh /usr/share/dpatch/dpatch-run
        ## 01_fix.dpatch
        @DPATCH@
        --- a/tsocks.c
        +++ b/tsocks.c
        @@ -990,6 +990,8 @@ static int recv_buffer(struct connreq *c
               if (rc > 0) {
                  rc = 0;
        +      } else if (rc == 0) {
        +         rc = ENOTCONN; /* the peer's shutdown */
               } else {
                  show_msg(MSGDEBUG, "Read failed, %s\\n", strerror(errno));
    """
    facts, findings = run(src, "01_fix.patch")
    assert findings == [] and facts.parse_errors == []


@needs_bash
def test_bats_file_with_a_grammar_gap():
    src = """
        #!/usr/bin/env bats

        setup() {
          mkdir -p "$BATS_TEST_TMPDIR/home"
        }

        @test "reports carriage returns" {
          cat >".tool-versions" <<<$'nodejs 19.6.0\\r'
          [[ "$(find_tool_versions 2>&1)" = *"carriage returns"* ]]
        }
    """
    facts, findings = run(src, "utils.bats")
    assert not any(f.code == "LCK000" for f in findings)


# ----------------------------------------------------------------------------- lock names


def test_lock_word_inside_another_word_is_not_a_lock_name():
    src = """
        #!/bin/sh
        rm -f clock_skew.out block_test.out rapid.txt
        measure_clock > /var/tmp/clock_skew.out
    """
    assert hits(src) == set()


@pytest.mark.parametrize(
    "name",
    [
        "/tmp/*.lock",
        "/var/run/app.pid",
        "/srv/job.lck",
        "/srv/cronLock",
        "/srv/state/job_running",
        "/srv/state/pidfile",
        "/srv/state/.lock",
        "/srv/state/db-mutex",
        "/srv/state/LOCK",
    ],
)
def test_lock_name_parts_are_recognised(name):
    src = f"""
        #!/bin/sh
        rm -f {name}
    """
    assert ("LCK107", 2) in hits(src)


def test_lockish_name_splits_words():
    from lockcheck.model import PathExpr
    from lockcheck.paths import lockish_name

    assert lockish_name(PathExpr.literal("/var/lock/job.lock"))
    assert lockish_name(PathExpr.literal("/run/myLockFile"))
    assert lockish_name(PathExpr.literal("/run/app.pid"))
    assert lockish_name(PathExpr.literal("/run/app_running"))
    assert not lockish_name(PathExpr.literal("/tmp/block_test.out"))
    assert not lockish_name(PathExpr.literal("/tmp/clock_skew.out"))
    assert not lockish_name(PathExpr.literal("/tmp/rapid.txt"))
    assert not lockish_name(PathExpr.literal("/srv/unlocked.txt"))


# ----------------------------------------------------------------------------- plain mkdir


def test_fresh_output_directory_under_set_e_is_not_a_lock():
    src = """
        #!/bin/sh
        set -e
        rm -rf out
        mkdir out
        cp -r assets out/
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_plain_mkdir_under_set_e_removed_by_exit_trap_is_a_lock():
    src = """
        #!/bin/sh
        set -e
        mkdir /srv/jobs/run.d
        trap 'rm -rf /srv/jobs/run.d' EXIT
        work
    """
    assert ("LCK101", 3) in hits(src)


def test_plain_mkdir_under_set_e_named_like_a_lock():
    src = """
        #!/bin/sh
        set -e
        mkdir /srv/jobs/import.lock
        work
        rmdir /srv/jobs/import.lock
    """
    h = hits(src)
    assert ("LCK101", 3) in h and ("LCK202", 3) in h


# ----------------------------------------------------------------------------- LCK105


def test_status_function_with_kill_0_only_reports():
    src = """
        #!/bin/sh
        is_running() {
            pid="$(cat /run/svc.pid)"
            kill -0 "$pid" 2>/dev/null || return 1
        }
        if is_running; then echo running; else echo stopped; fi
    """
    assert hits(src) == set()


def test_status_function_whose_caller_exits_is_lck105():
    src = """
        #!/bin/sh
        is_running() {
            pid="$(cat /run/svc.pid)"
            kill -0 "$pid" 2>/dev/null || return 1
        }
        if is_running; then echo "already running"; exit 75; fi
        echo $$ > /run/svc.pid
    """
    assert ("LCK105", 4) in hits(src)


def test_early_return_that_skips_the_function_work_is_lck105():
    src = """
        #!/bin/sh
        sync_once() {
            if kill -0 "$(cat /srv/sync.pid)" 2>/dev/null; then
                return 0
            fi
            echo $$ > /srv/sync.pid
            rsync -a /src /dst
        }
        sync_once
    """
    assert ("LCK105", 3) in hits(src)


def test_waiting_for_a_signalled_process_is_not_lck105():
    src = """
        #!/bin/sh
        PIDFILE=/run/worker.pid
        pid=$(cat "$PIDFILE")
        kill -TERM "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "still running"
            exit 1
        fi
        rm -f "$PIDFILE"
    """
    h = hits(src)
    assert ("LCK108", 4) in h
    assert not any(c == "LCK105" for c, _ in h)


def test_liveness_in_stop_function_is_not_lck105():
    src = """
        #!/bin/bash
        PIDFILE=/run/worker.pid
        daemon_stop() {
            pid="$(cat "$PIDFILE")"
            kill -0 "$pid" 2>/dev/null || { echo "not running"; return 1; }
            kill -2 "$pid"
            rm -f "$PIDFILE"
        }
        daemon_stop
    """
    h = hits(src)
    assert not any(c == "LCK105" for c, _ in h)
    assert ("LCK108", 6) in h


# ----------------------------------------------------------------------------- mktemp


def test_mktemp_paths_are_never_locks():
    src = """
        #!/bin/bash
        trap "rm -f $(mktemp)" EXIT
        conf="$(mktemp)"
        if [ -f "$conf" ]; then
            exit 0
        fi
        sed -e 's/a/b/' template > "$conf"
        trap 'rm -f "$conf"' EXIT
        sed -e 's/x/y/' in.txt > "$(mktemp)"
        rm -f "$conf"
    """
    facts, findings = run(src)
    assert findings == []
    assert not facts.acquires


# ----------------------------------------------------------------------------- LCK203


def test_signal_only_trap_before_the_test_is_lck203():
    # RULES.md: a release already active when the busy branch runs; a losing run stopped
    # (SIGTERM) or interrupted during its busy branch deletes the winner's lock
    src = """
        #!/bin/sh
        LOCK=/var/lib/job/lock
        cleanup() { rm -f "$LOCK"; }
        trap cleanup INT TERM
        if [ -f "$LOCK" ]; then
            exit 75
        fi
        touch "$LOCK"
        do_work
        rm -f "$LOCK"
    """
    h = hits(src)
    assert ("LCK203", 4) in h
    assert ("LCK103", 8) in h and ("LCK202", 8) in h


def test_signal_only_trap_after_the_acquire_is_not_lck203():
    src = """
        #!/bin/sh
        LOCK=/var/lib/job/lock
        cleanup() { rm -f "$LOCK"; }
        if [ -f "$LOCK" ]; then
            exit 75
        fi
        touch "$LOCK"
        trap cleanup INT TERM
        do_work
        rm -f "$LOCK"
    """
    h = hits(src)
    assert not any(c == "LCK203" for c, _ in h)
    assert ("LCK103", 7) in h


def test_exit_trap_before_acquire_is_lck203():
    src = """
        #!/bin/sh
        LOCK=/var/lib/job/lock
        trap 'rm -f "$LOCK"' EXIT INT TERM
        if [ -f "$LOCK" ]; then
            exit 75
        fi
        touch "$LOCK"
        do_work
    """
    assert ("LCK203", 3) in hits(src)


# ----------------------------------------------------------------------------- LCK404


def test_exit_with_computed_status_in_exit_trap():
    src = """
        #!/usr/bin/env bash
        suite_status=0
        on_exit() {
            rm -rf "$TMPD"
            exit "$suite_status"
        }
        trap on_exit EXIT
        TMPD=$(mktemp -d)
        run_tests || suite_status=$?
    """
    assert hits(src) == set()


def test_exit_with_fixed_status_in_exit_trap():
    src = """
        #!/usr/bin/env bash
        RC=2
        on_exit() {
            rm -rf "$TMPD"
            exit $RC
        }
        trap on_exit EXIT
        trap 'rm -f /tmp/x; exit $?' EXIT
        exec 9<"$0"; flock -n 9 || exit 75  # LCK404 applies to scripts that lock
    """
    h = hits(src)
    assert ("LCK404", 5) in h and ("LCK404", 8) in h


# ----------------------------------------------------------------------------- build stamps


def test_build_stamp_removed_only_on_abort_is_not_a_lock():
    src = """
        #!/bin/bash
        abort() { rm -f "$WORK/.built"; exit 1; }
        build() {
            trap abort INT QUIT
            make -C "$WORK"
            touch "$WORK/.built"
            trap - INT QUIT
        }
        [ -e "$WORK/.built" ] || build
    """
    assert hits(src) == set()


def test_stamp_that_skips_and_is_never_removed_is_a_run_once_marker():
    src = """
        #!/bin/sh
        STAMP=/srv/build/.prepared
        if [ -f "$STAMP" ]; then
            echo "already prepared"
            exit 0
        fi
        ./prepare.sh
        touch "$STAMP"
    """
    assert hits(src) == set()


def test_test_then_create_lock_released_at_the_end_is_lck103():
    src = """
        #!/bin/sh
        MARK=/srv/build/.busy
        if [ -f "$MARK" ]; then
            exit 75
        fi
        touch "$MARK"
        make
        rm -f "$MARK"
    """
    h = hits(src)
    assert ("LCK103", 6) in h and ("LCK202", 6) in h


# ----------------------------------------------------------------------------- OpenWrt lock


def test_openwrt_lock_command_is_a_flock():
    src = """
        #!/bin/sh
        LOCKFILE=/var/lock/myjob.lock
        cleanup() {
            lock -u "$LOCKFILE"
            rm "$LOCKFILE"
        }
        lock "$LOCKFILE"
        trap cleanup EXIT
        do_work
    """
    h = hits(src)
    assert ("LCK201", 5) in h
    assert not any(c == "LCK107" for c, _ in h)


def test_lock_command_without_unlock_is_not_assumed_to_be_openwrt():
    src = """
        #!/bin/sh
        lock "$HOME/notes.txt"
        rm -f /srv/x.lock
    """
    h = hits(src)
    assert ("LCK107", 3) in h and not any(c == "LCK201" for c, _ in h)


# ----------------------------------------------------------------------------- flock in $()


def test_flock_in_command_substitution():
    src = """
        #!/bin/sh
        ANSWER="$(flock /tmp/updater.lock curl -fsS https://example.invalid/api)"
        echo "$ANSWER"
    """
    assert ("LCK502", 2) in hits(src)


def test_nonblocking_flock_in_command_substitution_status_is_tested():
    src = """
        #!/bin/sh
        out=$(flock -n /srv/app/update.lock ./update.sh) || exit 0
        echo "$out"
    """
    assert ("LCK401", 2) in hits(src)


# ----------------------------------------------------------------------------- unknown parts


def test_unknown_parts_carry_their_source_text():
    facts, _ = run(
        """
        #!/bin/sh
        errlog="$(pick_log)"
        target=$(echo "$entry" | cut -d: -f2)
        [ -f "$errlog" ] && rm -f "$errlog"
        cat template.conf > "$target"
        """
    )
    rm = facts.removals[0].path
    made = facts.created[-1]
    unk_rm = [p for p in rm.parts if p.kind is PartKind.UNKNOWN]
    unk_made = [p for p in made.parts if p.kind is PartKind.UNKNOWN]
    assert unk_rm and unk_made
    assert unk_rm[0].value == "$(pick_log)"
    assert unk_made[0].value != unk_rm[0].value


# ----------------------------------------------------------------------------- appends, clean-ups


def test_removing_an_old_output_then_appending_is_not_a_lock():
    src = """
        #!/bin/sh
        OUT=/etc/app/generated.conf
        [ -f "$OUT" ] && rm -f "$OUT"
        add_line() {
            echo "$1" >> $OUT
        }
        add_line "opt=1"
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_waiting_for_the_name_to_go_then_creating_it_is_lck103():
    src = """
        #!/bin/sh
        L=/srv/spool/job.busy
        while [ -f "$L" ]; do sleep 5; done
        echo $$ > "$L"
        work
        rm -f "$L"
    """
    h = hits(src)
    assert ("LCK103", 4) in h and ("LCK202", 4) in h


def test_openwrt_rc_common_script_is_shell():
    src = """
        #!/bin/sh /etc/rc.common
        START=60
        PIDFILE=/var/run/worker.pid
        stop() {
            kill -9 "$(cat "$PIDFILE")"
        }
    """
    assert ("LCK108", 5) in hits(src, "worker.init")


def test_error_return_to_a_fallback_is_not_a_busy_branch():
    src = """
        #!/bin/sh
        reuse_cached() {
            cached="$CACHE_DIR/$1"
            [ -e "$cached" ] || return 1
            ln -s "$cached" "$1" 2>/dev/null || return 1
        }
        reuse_cached pkg.tar.gz || curl -fO "https://example.invalid/pkg.tar.gz"
        tar xzf pkg.tar.gz
        rm -f pkg.tar.gz
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_lock_helper_whose_caller_exits_is_a_lock():
    src = """
        #!/bin/sh
        take() {
            mkdir /srv/jobs/sync.d 2>/dev/null || return 1
        }
        take || { echo busy; exit 0; }
        work
        rmdir /srv/jobs/sync.d
    """
    h = hits(src)
    assert ("LCK101", 3) in h and ("LCK401", 5) in h


def test_plain_mkdir_of_a_mktemp_dir_under_set_e():
    src = """
        #!/usr/bin/env bash
        set -eux
        work="$(mktemp -d)/out"
        mkdir "$work"
        trap 'rm -rf "$work"' EXIT
        run_tests "$work"
    """
    facts, findings = run(src)
    assert findings == [] and facts.parse_errors == []


def test_flock_in_substitution_with_basename_suffix():
    src = """
        #!/bin/sh
        ANSWER="$(flock /tmp/$(basename -s .sh "$0").lock curl -fsS https://example.invalid)"
    """
    facts, findings = run(src)
    assert ("LCK502", 2) in {(f.code, f.span.line) for f in findings}
    assert [p.kind for p in facts.acquires[0].path.parts][1] is PartKind.SCRIPT_NAME


def test_return_0_from_a_lock_helper_skips_its_work():
    src = """
        #!/bin/sh
        do_sync() {
            mkdir /srv/jobs/sync.d 2>/dev/null || return 0
            rsync -a /src /dst
            rmdir /srv/jobs/sync.d
        }
        do_sync
        report
    """
    assert ("LCK101", 3) in hits(src)


def test_work_directory_cleared_then_made_under_set_e():
    src = """
        #!/bin/sh -eu
        rm -rf buildtmp
        mkdir buildtmp
        meson setup buildtmp
        ninja -C buildtmp install
        rm -rf buildtmp
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_ignored_failure_and_forced_link_are_not_locks():
    src = """
        #!/bin/sh
        mkdir ./tmp/ ||:
        mv defaults ./tmp/ || true
        ln -sf "$srcdir/x" /srv/app/current || die "cannot link"
        rm -rf ./tmp /srv/app/current
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_set_e_mkdir_released_at_the_end_is_a_lock():
    src = """
        #!/bin/sh
        set -e
        mkdir /srv/jobs/nightly.d
        run_nightly
        rmdir /srv/jobs/nightly.d
    """
    h = hits(src)
    assert ("LCK101", 3) in h and ("LCK202", 3) in h


def test_high_plane_characters_do_not_crash_the_parser():
    # tree-sitter-bash 0.25 reads out of bounds on `{` followed by U+F1862 (a segfault)
    for cp in (0xF1862, 0x10FFFF, 0xE0067, 0x52000):
        text = "#!/bin/sh\n{" + chr(cp) + "\nmkdir /srv/a.lock || exit 0 # " + chr(cp) + "\n"
        facts = shell.parse("fuzz.sh", text)
        assert not any("internal error" in e.message for e in facts.parse_errors)
        assert [a.span.line for a in facts.acquires] == [3]
        assert shell.tree_sitter_source(text).count(b"{") == 1


def test_unknown_variable_spelled_two_ways_is_one_path():
    src = """
        #!/bin/bash
        while read -r LOCKFILE; do
            ( set -o noclobber; echo $$ > "$LOCKFILE" ) 2>/dev/null || continue
            work
            rm -f "${LOCKFILE}"
        done < jobs.txt
    """
    facts, _ = run(src)
    # the parts are equal; comparing paths (PathExpr.key) is paths.py's business
    assert facts.acquires[0].path.parts == facts.removals[0].path.parts
    assert facts.acquires[0].path.parts[0].value == "${LOCKFILE}"


def test_openwrt_rc_common_script_is_an_init_script():
    src = """
        #!/bin/sh /etc/rc.common
        START=30
        PIDFILE=/var/run/svc/svc.pid
        start() {
            if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
                echo "already running"
                exit 0
            fi
            /usr/sbin/svc &
            echo $! > "$PIDFILE"
        }
        stop() {
            kill "$(cat "$PIDFILE")"
            rm -f "$PIDFILE"
        }
    """
    h = hits(src, "svc.init")
    # the PID file is a service record; LCK105 in start, LCK108 in stop still apply
    assert ("LCK105", 5) in h and ("LCK108", 13) in h
    assert not any(c in ("LCK401", "LCK103", "LCK202", "LCK106") for c, _ in h)


def test_directory_filled_or_entered_after_mkdir_is_a_work_directory():
    src = """
        #!/usr/bin/env bash
        set -eux
        bad_dir="${OUTPUT_DIR}/ansi[ble"
        mkdir "${bad_dir}"
        cp -a "${lib_path}" "${bad_dir}"
        PYTHONPATH="${bad_dir}/lib" ansible -m ping localhost
        rm -rf "${bad_dir}"
        mkdir git && cd git && git init
        cd .. && rm -rf git
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_directory_given_a_file_inside_is_a_work_directory():
    # `touch D/__init__.py` puts content in it: a fixture, removed on exit, not a lock
    src = """
        #!/usr/bin/env bash
        set -eu
        vendor_dir="$(python -c 'import mod; print(mod.__path__[0])')"
        cleanup() {
            rm -rf "${vendor_dir}/demo/"
        }
        trap cleanup EXIT
        mkdir "${vendor_dir}/demo/"
        touch "${vendor_dir}/demo/__init__.py"
        run_import_tests
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_mkdir_inside_a_mktemp_fallback_directory_under_set_e():
    src = """
        #!/usr/bin/env bash
        set -eux
        MYTMPDIR=$(mktemp -d 2>/dev/null || mktemp -d -t 'mytmpdir')
        trap 'rm -rf "${MYTMPDIR}"' EXIT
        NOT_WRITABLE_DIR="${MYTMPDIR}/not_writable"
        mkdir "${NOT_WRITABLE_DIR}"
        chmod ugo-w "${NOT_WRITABLE_DIR}"
    """
    facts, findings = run(src)
    assert findings == [] and facts.acquires == []
    # a fallback that is not mktemp on both sides is no fresh name
    other = src.replace("|| mktemp -d -t 'mytmpdir'", "|| echo /srv/jobs")
    assert ("LCK101", 6) in hits(other)


def test_lock_directory_holding_a_pid_is_still_a_lock():
    src = """
        #!/bin/sh
        set -e
        LOCKD=/srv/jobs/nightly.d
        mkdir "$LOCKD"
        echo $$ > "$LOCKD/pid"
        run_nightly
        rm -rf "$LOCKD"
    """
    h = hits(src)
    assert ("LCK101", 4) in h and ("LCK202", 4) in h


def test_conditional_removal_in_an_exit_handler_is_not_foreign():
    src = """
        #!/bin/bash
        on_exit() {
            [[ -n "${lockfile:-}" && -e "$lockfile" ]] && rm -f "$lockfile"
            rm -f /tmp/other.lock
        }
        trap on_exit EXIT
    """
    h = hits(src)
    assert ("LCK107", 4) in h and ("LCK107", 3) not in h


def test_once_per_boot_marker_directory_is_not_a_lock():
    src = """
        #!/bin/sh
        marker=/var/run/travelmate/ntp.done
        if mkdir "$marker" 2>/dev/null; then
            /etc/init.d/travelmate start
        fi
    """
    facts, findings = run(src)
    assert findings == [] and not facts.acquires


def test_mkdir_gate_released_after_the_work_is_a_lock():
    src = """
        #!/bin/sh
        if mkdir /srv/jobs/sync.lock 2>/dev/null; then
            rsync -a /src /dst
            rmdir /srv/jobs/sync.lock
        fi
    """
    h = hits(src)
    assert ("LCK101", 2) in h and ("LCK202", 2) in h and ("LCK401", 2) in h


def test_conditional_switch_off_keeps_the_lock_path():
    src = """
        #!/bin/bash
        LOCKFILE="/srv/acme/lock"
        [[ -n "${PARAM_NO_LOCK:-}" ]] && LOCKFILE=""
        ( set -C; date > "${LOCKFILE}" ) 2>/dev/null || exit 1
        trap 'rm -f "${LOCKFILE}"' EXIT
    """
    facts, findings = run(src)
    assert [a.path.render() for a in facts.acquires] == ["/srv/acme/lock"]
    assert ("LCK101", 4) in {(f.code, f.span.line) for f in findings}


def test_skipping_work_while_a_daemon_is_down_is_not_lck105():
    src = """
        #!/bin/sh
        report_event() {
            if [ ! -s "$MM_PID_FILE" ] || ! kill -0 "$(cat "$MM_PID_FILE")" 2>/dev/null; then
                return
            fi
            mmcli --report-kernel-event="$1"
        }
        report_event "add"
    """
    assert hits(src) == set()


def test_taking_over_from_a_dead_holder_is_lck105():
    src = """
        #!/bin/sh
        P=/srv/run/sync.pid
        if ! kill -0 "$(cat "$P")" 2>/dev/null; then
            echo $$ > "$P"
            rsync -a /src /dst
        fi
    """
    assert ("LCK105", 3) in hits(src)


def test_exit_trap_disarmed_on_the_way_out_sets_only_the_failure_status():
    # zgrep/e2scrub: the trap's `exit 2` covers interrupts and errors; the normal end
    # disarms it and keeps its own status
    src = """
        #!/bin/sh
        tmp=$(mktemp); exec 9<"$0"; flock -n 9 || exit 75  # LCK404: a script that locks
        trap '
          rm -f "$tmp"
          (exit 2); exit 2
        ' HUP INT PIPE TERM 0
        gzip -cdfq -- "$1" > "$tmp" || exit 2
        cmp -s -- "$tmp" "$2"
        cmp_status=$?
        rm -f "$tmp"
        trap - HUP INT PIPE TERM 0
        (exit $cmp_status)
    """
    assert "LCK404" not in codes(src)
    # never disarmed: every run reports 2
    kept = src.replace("        trap - HUP INT PIPE TERM 0\n", "")
    assert ("LCK404", 5) in hits(kept)


def test_exit_trap_disarmed_only_before_a_busy_exit_still_overrides():
    src = """
        #!/bin/bash
        trap 'rm -f /var/lib/job/run.pid; exit 1' EXIT
        if [ -e /var/lib/job/busy ]; then
            trap - EXIT
            exit 75
        fi
        run_job
        exec 9<"$0"; flock -n 9 || exit 75  # LCK404 applies to scripts that lock
    """
    assert ("LCK404", 2) in hits(src)


def test_disarmed_exit_trap_that_reports_a_cleanup_status_still_overrides():
    # on the failure paths it still runs, and `exit $?` after rm reports rm's 0
    src = """
        #!/bin/sh
        lockdir=/var/tmp/mylock
        if ( mkdir ${lockdir} ) 2> /dev/null; then
            trap 'rm -rf "$lockdir"; exit $?' INT TERM EXIT
            run_job
            rm -rf "$lockdir"
            trap - INT TERM EXIT
        else
            echo "Lock Exists: $lockdir"
        fi
    """
    assert ("LCK404", 4) in hits(src)


def test_directory_made_then_entered_and_filled_is_provisioning_not_a_lock():
    # addgnupghome: mkdir as a test with an error return, then cd into it and fill it
    src = """
        #!/bin/sh
        copy_skel() {
            home=$1
            if [ -d "$home/.gnupg" ]; then
                return
            fi
            if ! mkdir "$home/.gnupg" ; then
                echo "error creating $home/.gnupg" >&2
                return
            fi
            if ! cd "$home/.gnupg" ; then
                return
            fi
            cp /etc/skel/.gnupg/gpg.conf gpg.conf
        }
        copy_skel /home/ann
    """
    facts, findings = run(src)
    assert findings == [] and facts.acquires == []
    # a lock directory that only holds the PID and is removed again stays a lock
    lock = """
        #!/bin/sh
        if ! mkdir /var/lib/job/run.d; then
            exit 0
        fi
        echo $$ > /var/lib/job/run.d/pid
        run_job
        rm -rf /var/lib/job/run.d
    """
    assert ("LCK101", 2) in hits(lock)


def test_link_with_a_copy_fallback_is_not_a_lock():
    # gettextize: symlink the file, or copy it when linking fails
    src = """
        #!/bin/sh
        linkorcopy() {
            rm -f "$srcdir/$3"
            (ln -s "$2" "$srcdir/$3" && echo "Symlinking file $3") 2>/dev/null ||
            { echo "Copying file $3"; cp "$1" "$srcdir/$3"; }
        }
        for file in ABOUT-NLS config.rpath; do
            linkorcopy "$file" "$datadir/$file" "$file"
        done
        if [ -n "$undo" ]; then
            for file in ABOUT-NLS config.rpath; do
                rm -f "$srcdir/$file"
            done
        fi
    """
    facts, findings = run(src)
    assert findings == [] and facts.acquires == []
    # a failure branch that gives up is a busy branch
    busy = src.replace('{ echo "Copying file $3"; cp "$1" "$srcdir/$3"; }', "exit 0")
    assert busy != src and "LCK101" in codes(busy)
