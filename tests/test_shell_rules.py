"""Shell frontend: every rule through ``analyze_text`` on realistic scripts (code and line)."""

from __future__ import annotations

import textwrap

import pytest

from lockcheck.engine import analyze_text
from lockcheck.model import PartKind


def run(src: str, path: str = "job.sh"):
    text = textwrap.dedent(src).lstrip("\n")
    facts, findings = analyze_text(path, text, "shell")
    return facts, findings


def hits(src: str, path: str = "job.sh") -> set[tuple[str, int]]:
    return {(f.code, f.span.line) for f in run(src, path)[1]}


def codes(src: str, path: str = "job.sh") -> set[str]:
    return {c for c, _ in hits(src, path)}


# ----------------------------------------------------------------------------- reference


REFERENCE = """
    #!/bin/bash
    # nightly backup: the reference single-instance pattern
    set -euo pipefail
    RUN_DIR="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/backup"
    LOCK_FILE="$RUN_DIR/backup.lock"
    LEDGER="$HOME/.local/state/backup/ledger.log"
    log() { printf '%s %s\\n' "$(date -Is)" "$*" >> "$LEDGER"; }
    mkdir -p "$RUN_DIR"
    exec 9<>"$LOCK_FILE"
    flock -n 9 || { log "skipped: previous run still holds the lock"; exit 75; }
    sources=(/etc /home/data)
    for src in "${sources[@]}"; do
      rsync -a --delete "$src" /srv/backup/
    done
    cat <<EOF >> "$LEDGER"
    done: $(date -Is)
    EOF
"""


def test_reference_pattern_is_clean():
    facts, findings = run(REFERENCE)
    assert findings == []
    assert len(facts.acquires) == 1
    acq = facts.acquires[0]
    assert acq.kind.value == "flock" and not acq.truncating
    assert acq.busy is not None and acq.busy.status == 75 and acq.busy.durable
    assert acq.path.parts[0].value == "XDG_RUNTIME_DIR"
    assert facts.removals == []


# ----------------------------------------------------------------------------- LCK101 / 102


@pytest.mark.parametrize(
    "snippet, line",
    [
        ('if mkdir "$LOCK" 2>/dev/null; then\n  work\n  rmdir "$LOCK"\nelse\n  exit 1\nfi\n', 3),
        ('mkdir "$LOCK" || exit 1\ntrap \'rmdir "$LOCK"\' EXIT\nwork\n', 3),
        ('mkdir "$LOCK" && {\n  trap \'rmdir "$LOCK"\' EXIT\n  work\n}\n', 3),
        ('mkdir "$LOCK" 2>/dev/null\nif [ $? -ne 0 ]; then\n  exit 2\nfi\n', 3),
        (
            'while ! mkdir "$LOCK" 2>/dev/null; do\n  sleep 5\ndone\ntrap \'rmdir "$LOCK"\' EXIT\n',
            3,
        ),
        ('set -C\nif ! : > "$LOCK"; then exit 1; fi\ntrap \'rm -f "$LOCK"\' EXIT\n', 4),
        ('set -o noclobber\necho $$ > "$LOCK" || exit 1\n', 4),
        ('ln -s "$$" "$LOCK" 2>/dev/null || exit 1\n', 3),
        ('lockfile -r 0 "$LOCK" || exit 1\n', 3),
        ('dotlockfile -p "$LOCK" || exit 1\n', 3),
    ],
)
def test_existence_lock_shapes(snippet, line):
    src = '#!/bin/bash\nLOCK="$HOME/.cache/job.lock"\n' + snippet
    assert ("LCK101", line) in hits(src)


def test_existence_lock_in_synced_folder_is_lck102_not_101():
    src = """
        #!/bin/bash
        SHARE="$HOME/Dropbox/jobs"
        if ! mkdir "$SHARE/sync.lock" 2>/dev/null; then
          echo "busy" >> "$HOME/job.log"
          exit 75
        fi
        trap 'rmdir "$SHARE/sync.lock"' EXIT
    """
    h = hits(src)
    assert ("LCK102", 3) in h
    assert not any(c == "LCK101" for c, _ in h)


def test_synced_variable_name_is_lck102():
    src = """
        #!/bin/sh
        mkdir "$NAS_MOUNT/job.lock" || exit 75
        trap 'rmdir "$NAS_MOUNT/job.lock"' EXIT
    """
    assert ("LCK102", 2) in hits(src)


def test_default_expansion_resolves_synced_default():
    src = """
        #!/bin/bash
        LOCKDIR=${LOCKDIR:-$HOME/OneDrive/locks}
        mkdir "$LOCKDIR/job.lock" 2>/dev/null || exit 75
        trap 'rmdir "$LOCKDIR/job.lock"' EXIT
    """
    assert ("LCK102", 3) in hits(src)


def test_mkdir_p_and_plain_mkdir_are_not_locks():
    src = """
        #!/bin/bash
        set -e
        mkdir -p "$HOME/.cache/job"
        mkdir "$HOME/.cache/job/out-$(date +%F)"
        mkdir /srv/data/new || true
        cp a b
    """
    facts, findings = run(src)
    assert findings == []
    assert not facts.acquires


def test_plain_mkdir_under_set_e_is_a_lock_when_removed_on_exit():
    src = """
        #!/bin/bash
        set -e
        mkdir /srv/jobs/run.d
        trap 'rmdir /srv/jobs/run.d' EXIT
        work
    """
    assert ("LCK101", 3) in hits(src)


def test_commented_out_and_heredoc_code_is_not_analysed():
    src = """
        #!/bin/bash
        # mkdir /tmp/old.lock || exit 0
        cat > /etc/cron.d/job <<'EOF'
        mkdir /tmp/cron.lock || exit 0
        rm -f /tmp/*.lock
        EOF
        echo 'flock -n /tmp/x.lock cmd'
    """
    assert hits(src) == set()


def test_lockfile_with_age_breaks_locks():
    src = """
        #!/bin/sh
        lockfile -l 600 -r 2 /var/lock/fetch.lock || exit 1
        trap 'rm -f /var/lock/fetch.lock' EXIT
        fetchmail
    """
    h = hits(src)
    assert ("LCK101", 2) in h and ("LCK106", 2) in h


# ----------------------------------------------------------------------------- LCK103


def test_check_then_create_pid_file():
    src = """
        #!/bin/bash
        PIDFILE="$HOME/.run/job.pid"
        if [ -e "$PIDFILE" ]; then
          echo "already running" >&2
          exit 1
        fi
        echo $$ > "$PIDFILE"
        trap 'rm -f "$PIDFILE"' EXIT
        work
    """
    h = hits(src)
    assert ("LCK103", 7) in h
    assert not any(c == "LCK101" for c, _ in h)


def test_check_then_create_double_bracket_and_touch():
    src = """
        #!/bin/bash
        L=/srv/app/cron.lock
        [[ -f $L ]] && exit 0
        touch "$L"
        do_work
        rm -f "$L"
    """
    h = hits(src)
    assert ("LCK103", 4) in h
    assert ("LCK401", 3) in h
    assert ("LCK202", 4) in h


def test_precreated_flock_file_and_run_once_marker_are_not_lck103():
    src = """
        #!/bin/bash
        L="$XDG_RUNTIME_DIR/job.lock"
        [ -e "$L" ] || touch "$L"
        exec 9<"$L"
        flock -n 9 || exit 75
        MARK="$HOME/.setup-done"
        if [ -f "$MARK" ]; then
          exit 0
        fi
        initial_setup
        touch "$MARK"
    """
    assert not any(c in ("LCK103", "LCK101", "LCK202") for c, _ in hits(src))


# ----------------------------------------------------------------------------- LCK104


def test_flock_on_synced_path():
    src = """
        #!/bin/bash
        exec 8>"$HOME/Dropbox/tasks/run.lock"
        flock -n 8 || exit 75
    """
    assert ("LCK104", 2) in hits(src)


def test_flock_command_form_on_wsl_drive():
    src = """
        #!/bin/bash
        flock -n -E 75 /mnt/c/Users/me/job.lock ./job.sh
    """
    assert ("LCK104", 2) in hits(src)


# ----------------------------------------------------------------------------- LCK105 / 106 / 108


def test_pid_liveness_and_stale_breaker():
    src = """
        #!/bin/bash
        LOCK=/var/lib/job/job.pid
        if [ -f "$LOCK" ]; then
          pid=$(cat "$LOCK")
          if kill -0 "$pid" 2>/dev/null; then
            echo "running as $pid"
            exit 1
          fi
          rm -f "$LOCK"
        fi
        echo $$ > "$LOCK"
        trap 'rm -f "$LOCK"' EXIT
    """
    h = hits(src)
    assert ("LCK105", 5) in h
    assert ("LCK106", 9) in h
    assert ("LCK103", 11) in h


def test_liveness_forms():
    src = """
        #!/bin/bash
        F=/var/lib/job/pid
        read -r pid < "$F"
        if ps -p "$pid" > /dev/null; then exit 1; fi
        if [ -d "/proc/$pid" ]; then exit 1; fi
        kill -0 "$(cat "$F")" 2>/dev/null && exit 1
        pgrep -F "$F" >/dev/null && exit 1
        echo $$ > "$F"
    """
    h = hits(src)
    for line in (4, 5, 6, 7):
        assert ("LCK105", line) in h


def test_dead_holder_overwrite_and_removal_in_list():
    src = """
        #!/bin/bash
        P=/var/run/sync.pid
        pid=$(<"$P")
        kill -0 "$pid" 2>/dev/null || rm -f "$P"
        if ! kill -0 "$pid" 2>/dev/null; then
          echo $$ > "$P"
        fi
    """
    h = hits(src)
    assert ("LCK106", 4) in h
    assert ("LCK106", 6) in h


def test_age_breakers():
    src = """
        #!/bin/bash
        L=/srv/locks/import.lock
        find "$L" -mmin +60 -delete
        if [ $(( $(date +%s) - $(stat -c %Y "$L") )) -gt 3600 ]; then
          rm -f "$L"
        fi
        mkdir "$L" || exit 75
        trap 'rmdir "$L"' EXIT
    """
    h = hits(src)
    assert ("LCK106", 3) in h and ("LCK106", 5) in h


def test_status_check_that_only_reports_is_not_lck105():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/app.pid
        if kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
          echo "app is running"
        else
          echo "app is stopped"
        fi
    """
    assert hits(src) == set()


def test_kill_stored_pid():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/worker.pid
        kill "$(cat "$PIDFILE")"
        pid=$(cat "$PIDFILE")
        kill -9 $pid
        kill -s HUP "$pid"
        pkill -F "$PIDFILE"
        kill -0 "$pid" && echo alive
        kill %1
    """
    h = hits(src)
    assert {ln for c, ln in h if c == "LCK108"} == {3, 5, 6, 7}


# ----------------------------------------------------------------------------- LCK107


def test_foreign_lock_removal():
    src = """
        #!/bin/bash
        rm -f /tmp/*.lock
        rm -f /var/lock/other-job.lock
        rm -f package-lock.json yarn.lock
        rm -f .git/index.lock
        rm -f /tmp/report.txt
    """
    h = hits(src)
    assert ("LCK107", 2) in h and ("LCK107", 3) in h
    assert not any(c == "LCK107" and ln > 3 for c, ln in h)


def test_removal_of_own_lock_is_not_foreign():
    src = """
        #!/bin/bash
        if [ "$1" = "--reset" ]; then
          rm -f /var/lock/mine.lock
        fi
        echo $$ > /var/lock/mine.pid
        rm -f /var/lock/mine.pid
    """
    assert not any(c == "LCK107" for c, _ in hits(src))


# ----------------------------------------------------------------------------- LCK201


def test_flock_file_removed_in_trap_with_fix():
    src = """
        #!/bin/bash
        LOCK=/var/lock/mirror.lock
        exec 9>"$LOCK"
        trap 'rm -f "$LOCK"' EXIT
        flock -n 9 || exit 75
        rsync -a src/ dst/
    """
    facts, findings = run(src)
    f = [x for x in findings if x.code == "LCK201"]
    assert [x.span.line for x in f] == [4]
    text = facts.text
    for e in sorted(f[0].fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert "trap" not in text and "flock -n 9" in text


def test_flock_file_removed_keeps_rest_of_trap():
    src = """
        #!/bin/bash
        exec 9>/var/lock/sync.lock
        flock -n 9 || exit 75
        trap 'rm -f /var/lock/sync.lock; rm -rf "$WORK"' EXIT
    """
    facts, findings = run(src)
    f = [x for x in findings if x.code == "LCK201"]
    assert [x.span.line for x in f] == [4]
    text = facts.text
    for e in sorted(f[0].fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert "trap 'rm -rf \"$WORK\"' EXIT" in text


def test_flock_file_removed_directly_and_via_function():
    src = """
        #!/bin/bash
        LOCK="$XDG_RUNTIME_DIR/x.lock"
        cleanup() {
          rm -f "$LOCK"
        }
        trap cleanup EXIT
        (
          flock -n 9 || exit 75
          work
        ) 9>"$LOCK"
        rm "$LOCK"
    """
    h = hits(src)
    assert ("LCK201", 4) in h and ("LCK201", 11) in h


def test_inode_recheck_protocol_is_not_lck201():
    src = """
        #!/bin/bash
        L="$XDG_RUNTIME_DIR/q.lock"
        while :; do
          exec 9>>"$L"
          flock 9
          if [ "$(stat -c %i "$L" 2>/dev/null)" = "$(stat -L -c %i /proc/$$/fd/9)" ]; then
            break
          fi
          exec 9>&-
        done
        work
        rm -f "$L"
    """
    assert not any(c == "LCK201" for c, _ in hits(src))


# ----------------------------------------------------------------------------- LCK202 / 203


def test_release_not_on_every_exit():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        mkdir "$LOCK" || exit 75
        work
        rmdir "$LOCK"
    """
    assert ("LCK202", 3) in hits(src)


def test_trap_replaced_later_drops_release():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        mkdir "$LOCK" || exit 75
        trap 'rmdir "$LOCK"' EXIT
        work
        trap 'echo done' EXIT
    """
    assert ("LCK202", 3) in hits(src)


def test_trap_exit_release_is_fine():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        mkdir "$LOCK" || exit 75
        trap 'rmdir "$LOCK"' EXIT INT TERM
        work
    """
    assert not any(c in ("LCK202", "LCK203") for c, _ in hits(src))


def test_release_before_acquire():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        trap 'rmdir "$LOCK"' EXIT
        if ! mkdir "$LOCK" 2>/dev/null; then
          echo "busy" >> /var/log/app.log
          exit 75
        fi
        work
    """
    assert ("LCK203", 3) in hits(src)


def test_acquire_in_function_judged_at_caller():
    src = """
        #!/bin/bash
        LOCK="$HOME/.cache/app.lock"
        take_lock() {
          mkdir "$LOCK" 2>/dev/null || return 1
          trap 'rmdir "$LOCK"' EXIT
        }
        take_lock || { logger -t app busy; exit 75; }
        work
    """
    h = hits(src)
    assert ("LCK101", 4) in h
    assert not any(c in ("LCK202", "LCK203", "LCK401") for c, _ in h)


# ----------------------------------------------------------------------------- LCK301


def test_fixed_probe_names_and_fix():
    src = """
        #!/bin/bash
        DIR=/srv/shared
        if mkdir "$DIR/.probe" 2>/dev/null; then rmdir "$DIR/.probe"; fi
        : > "$DIR/.w" && rm -f "$DIR/.w"
        touch "$DIR/.t"; rm "$DIR/.t"
        mkdir "$DIR/.p.$$" && rmdir "$DIR/.p.$$"
    """
    facts, findings = run(src)
    lines = sorted(f.span.line for f in findings if f.code == "LCK301")
    assert lines == [3, 4, 5]
    assert not any(f.code in ("LCK101", "LCK107") for f in findings)
    f = next(f for f in findings if f.code == "LCK301" and f.span.line == 3)
    text = facts.text
    for e in sorted(f.fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert 'mkdir "$DIR/.probe.$$"' in text and 'rmdir "$DIR/.probe.$$"' in text


# ----------------------------------------------------------------------------- LCK401 / 402


@pytest.mark.parametrize(
    "snippet, line",
    [
        ("flock -n 9 || exit 0\n", 4),
        ("if ! flock -n 9; then\n  echo busy\n  exit\nfi\n", 6),
        ("flock -n 9 || { echo busy; exit; }\n", 4),
        ("if flock -n 9; then\n  work\nelse\n  echo busy\nfi\n", 7),
        ("flock -n 9\nif [ $? -ne 0 ]; then\n  echo busy\n  exit 0\nfi\n", 7),
        ('flock -n 9\nrc=$?\nif [ "$rc" != 0 ]; then exit 0; fi\n', 6),
    ],
)
def test_silent_skip_shapes(snippet, line):
    src = '#!/bin/bash\nLOCK="$XDG_RUNTIME_DIR/j.lock"\nexec 9<>"$LOCK"\n' + snippet
    assert ("LCK401", line) in hits(src)


@pytest.mark.parametrize(
    "snippet",
    [
        "flock -n 9 || exit 75\n",
        "flock -n 9 || exit 1\n",
        "flock -n 9 || exit\n",
        "flock -n 9 || { echo busy; exit 75; }\n",
        "while ! flock -n 9; do sleep 10; done\n",
        'flock -n 9 || { echo busy >> "$HOME/skips.log"; exit 0; }\n',
    ],
)
def test_not_silent_skip(snippet):
    src = '#!/bin/bash\nLOCK="$XDG_RUNTIME_DIR/j.lock"\nexec 9<>"$LOCK"\n' + snippet
    assert not any(c == "LCK401" for c, _ in hits(src))


def test_bare_exit_status_follows_last_command():
    facts, _ = run(
        """
        #!/bin/bash
        mkdir /srv/a.lock || exit
        mkdir /srv/b.lock || { echo busy; exit; }
        if ! mkdir /srv/c.lock; then exit; fi
        """
    )
    st = {a.path.render(): a.busy.status for a in facts.acquires}
    assert st == {"/srv/a.lock": 1, "/srv/b.lock": 0, "/srv/c.lock": 0}


def test_durable_skip_is_lck402():
    src = """
        #!/bin/bash
        exec >> /var/log/job.log 2>&1
        exec 9<>"$XDG_RUNTIME_DIR/job.lock"
        if ! flock -n 9; then
          echo "$(date) busy, skipping"
          exit 0
        fi
    """
    h = hits(src)
    assert ("LCK402", 6) in h and not any(c == "LCK401" for c, _ in h)


def test_logger_in_branch_is_durable():
    src = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/job.lock"
        flock -n 9 || { logger -t job "busy"; exit 0; }
    """
    assert ("LCK402", 3) in hits(src)


def test_silent_skip_fix_and_falling_off_the_end():
    src = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/job.lock"
        flock -n 9 || exit 0
    """
    facts, findings = run(src)
    f = next(x for x in findings if x.code == "LCK401")
    assert f.fix is not None and f.fix.edits[0].content == "75"
    src2 = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/job.lock"
        if flock -n 9; then
          work
        fi
    """
    assert ("LCK401", 3) in hits(src2)


def test_flock_e0_is_silent_skip_at_flock():
    src = """
        #!/bin/bash
        flock -n -E 0 "$XDG_RUNTIME_DIR/sync.lock" rsync -a a/ b/
    """
    facts, findings = run(src)
    f = [x for x in findings if x.code == "LCK401"]
    assert [x.span.line for x in f] == [2]


def test_function_return_then_caller_exit():
    src = """
        #!/bin/bash
        lock() {
          exec 9<>"$XDG_RUNTIME_DIR/j.lock"
          flock -n 9 || return 0
        }
        lock
    """
    assert ("LCK401", 4) in hits(src)


# ----------------------------------------------------------------------------- LCK403


def test_flock_command_form_default_code():
    src = """
        #!/bin/bash
        /usr/bin/flock -n "$XDG_RUNTIME_DIR/mirror.lock" rsync -a src/ dst/
    """
    facts, findings = run(src)
    f = [x for x in findings if x.code == "LCK403"]
    assert [x.span.line for x in f] == [2]
    text = facts.text
    for e in f[0].fix.edits:
        text = text[: e.start] + e.content + text[e.end :]
    assert "/usr/bin/flock -E 75 -n" in text


@pytest.mark.parametrize(
    "line",
    [
        'flock -n -E 75 "$L" cmd',
        'flock -n "$L" cmd || true',
        'if ! flock -n "$L" cmd; then exit 75; fi',
        'flock -n "$L" cmd\necho done',
        'flock "$L" cmd',
    ],
)
def test_flock_command_form_handled(line):
    src = '#!/bin/bash\nL="$XDG_RUNTIME_DIR/m.lock"\n' + line + "\n"
    assert not any(c == "LCK403" for c, _ in hits(src))


def test_flock_command_form_propagates_under_set_e_and_exec():
    src = """
        #!/bin/bash
        set -e
        FLOCK="$(command -v flock)"
        "$FLOCK" -w 10 "$XDG_RUNTIME_DIR/a.lock" make all
        echo built
    """
    assert ("LCK403", 4) in hits(src)
    src2 = """
        #!/bin/sh
        exec flock --nonblock "$XDG_RUNTIME_DIR/b.lock" -c 'make all'
    """
    assert ("LCK403", 2) in hits(src2)


# ----------------------------------------------------------------------------- LCK404


def test_exit_trap_overrides_status():
    src = """
        #!/bin/bash
        cleanup() {
          rm -rf "$TMP"
          exit 0
        }
        trap cleanup EXIT
        trap 'rm -f "$XDG_RUNTIME_DIR/x"; exit $?' EXIT
        exec 9<"$0"; flock -n 9 || exit 75  # LCK404 applies to scripts that lock
    """
    h = hits(src)
    assert ("LCK404", 4) in h and ("LCK404", 7) in h


def test_exit_trap_keeping_status_is_fine():
    src = """
        #!/bin/bash
        cleanup() {
          rc=$?
          rm -rf "$TMP"
          exit "$rc"
        }
        trap cleanup EXIT
        trap 'exit 1' INT
    """
    assert not any(c == "LCK404" for c, _ in hits(src))


# ----------------------------------------------------------------------------- LCK405


def test_background_in_flock_scope():
    src = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/w.lock"
        flock -n 9 || exit 75
        nohup ./long-task > /dev/null 2>&1 &
        ./helper 9>&- &
        ./other & disown
    """
    h = hits(src)
    assert ("LCK405", 4) in h and ("LCK405", 6) in h
    assert ("LCK405", 5) not in h


def test_background_not_waited_before_release():
    src = """
        #!/bin/bash
        L=/srv/app/job.lock
        mkdir "$L" || exit 75
        trap 'rmdir "$L"' EXIT
        ./worker &
        ./fast-step
    """
    assert ("LCK405", 5) in hits(src)


def test_background_waited_or_before_lock_is_fine():
    src = """
        #!/bin/bash
        ./prefetch &
        exec 9<>"$XDG_RUNTIME_DIR/w.lock"
        flock -n 9 || exit 75
        ./a & ./b &
        wait
        setsid -f ./notify 9>&-
        flock -o 9 ./x
    """
    assert not any(c == "LCK405" for c, _ in hits(src))


# ----------------------------------------------------------------------------- LCK501 / 502


@pytest.mark.parametrize(
    "decl",
    [
        'L="$(dirname "$0")/job.lock"',
        'L="$(cd "$(dirname "$0")" && pwd)/job.lock"',
        'L="${BASH_SOURCE%/*}/job.lock"',
        'L="$(dirname "${BASH_SOURCE[0]}")/job.lock"',
        'L="$PWD/job.lock"',
        "L=job.lock",
        "L=./run.lock",
    ],
)
def test_lock_beside_script(decl):
    src = f'#!/bin/bash\n{decl}\nexec 9<>"$L"\nflock -n 9 || exit 75\n'
    assert ("LCK501", 3) in hits(src)


def test_locking_the_script_itself_is_not_lck501():
    src = """
        #!/bin/bash
        [ "${FLOCKER:-}" != "$0" ] && exec env FLOCKER="$0" flock -E 75 -en "$0" "$0" "$@" || :
        work
    """
    assert not any(c == "LCK501" for c, _ in hits(src))


def test_predictable_lock_in_shared_tmp():
    src = """
        #!/bin/bash
        NAME=$(basename "$0" .sh)
        exec 9>"/tmp/$NAME.lock"
        flock -n 9 || exit 75
    """
    facts, findings = run(src)
    f = [x for x in findings if x.code == "LCK502"]
    assert [x.span.line for x in f] == [3]
    assert "truncates" in f[0].message


def test_shared_tmp_with_private_first_or_unique_is_fine():
    src = """
        #!/bin/bash
        exec 9<>"${XDG_RUNTIME_DIR:-/tmp}/job.lock"
        flock -n 9 || exit 75
        exec 8<>"/tmp/job.$$.lock"
        flock -n 8 || exit 75
    """
    assert not any(c == "LCK502" for c, _ in hits(src))


def test_predictable_subdir_made_with_mkdir_p():
    src = """
        #!/bin/bash
        mkdir -p /tmp/myjobs
        exec 9<>/tmp/myjobs/sync.lock
        flock -n 9 || exit 75
    """
    assert ("LCK502", 3) in hits(src)


def test_exec_fd_variable_form():
    src = """
        #!/bin/bash
        exec {lockfd}>/var/tmp/report.lock
        flock -n "$lockfd" || { echo "busy"; exit; }
    """
    facts, findings = run(src)
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK502", 2) in h and ("LCK401", 3) in h
    assert facts.acquires[0].path.render() == "/var/tmp/report.lock"


# ----------------------------------------------------------------------------- init scripts


INIT = """
    #!/bin/sh
    ### BEGIN INIT INFO
    # Provides:          food
    # Required-Start:    $remote_fs
    ### END INIT INFO
    PIDFILE=/var/run/food.pid
    DAEMON=/usr/sbin/food

    do_start() {
      if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        echo "food already running"
        exit 0
      fi
      start-stop-daemon --start --background --make-pidfile --pidfile "$PIDFILE" --exec "$DAEMON"
    }

    do_stop() {
      kill "$(cat "$PIDFILE")"
      rm -f "$PIDFILE"
    }

    case "$1" in
      start) do_start ;;
      stop) do_stop ;;
      status)
        if kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then echo running; exit 0; else echo stopped; exit 3; fi
        ;;
      restart) do_stop; do_start ;;
      *) echo "Usage: $0 {start|stop|status|restart}"; exit 2 ;;
    esac
"""


def test_init_script():
    facts, findings = run(INIT, "food")
    h = {(f.code, f.span.line) for f in findings}
    assert facts.init_script
    assert ("LCK105", 10) in h
    assert ("LCK108", 18) in h
    assert not any(c in ("LCK103", "LCK106", "LCK107", "LCK202", "LCK401") for c, _ in h)
    assert not any(c == "LCK105" and ln == 26 for c, ln in h)


def test_lsb_start_on_running_service_is_lck402():
    src = """
        #!/bin/sh
        LOCK=/var/lock/subsys/myd
        case "$1" in
          start)
            if ! mkdir "$LOCK" 2>/dev/null; then
              echo "myd is already running"
              exit 0
            fi
            trap 'rmdir "$LOCK"' EXIT
            /usr/sbin/myd
            ;;
          stop) rmdir "$LOCK" ;;
        esac
    """
    h = hits(src)
    assert ("LCK402", 7) in h and not any(c == "LCK401" for c, _ in h)


# ----------------------------------------------------------------------------- parse errors


def test_parse_errors_point_at_region_and_keep_other_findings():
    src = """
        #!/bin/bash
        mkdir /srv/x.lock || exit 0
        if [ -n "$X" ]; then
          echo "unterminated
        rm -f /tmp/other.lock
    """
    h = hits(src)
    assert ("LCK000", 4) in h
    assert ("LCK401", 2) in h


def test_unbalanced_if_and_heredoc():
    assert ("LCK000", 2) in hits("#!/bin/sh\nif true; then\n  echo x\n")
    assert ("LCK000", 2) in hits("#!/bin/sh\ncat <<EOF\nhello\n")


def test_not_shell_at_all():
    py = "import os\n\nclass A(object):\n    def f(self):\n        return {'a': [1, 2]}\n"
    assert "LCK000" in codes(py, "tool.sh")


def test_exec_read_write_gap_is_not_a_parse_error():
    src = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/x.lock"
        flock -n 9 || exit 75
    """
    facts, findings = run(src)
    # (bash goes on after the unchecked exec: LCK406 is the one finding)
    assert [f.code for f in findings] == ["LCK406"] and facts.parse_errors == []
    assert facts.acquires[0].open_span.line == 2 and not facts.acquires[0].truncating


def test_lock_command_inside_error_region_is_found():
    # valid bash that tree-sitter-bash 0.25 reads as an ERROR region: no LCK000, and the lock
    # commands inside the region are still found on their lines
    src = (
        "#!/bin/bash\n"
        'if [ "$a" \\< "$b" ]; then mkdir /srv/j.lock || exit 0; fi\n'
        "mkdir /srv/k.lock || exit 0\n"
    )
    h = hits(src)
    assert ("LCK401", 2) in h and ("LCK401", 3) in h
    assert not any(c == "LCK000" for c, _ in h)


def test_stray_closing_keyword_is_a_parse_error_and_later_code_is_not_guessed():
    src = "#!/bin/sh\nmkdir /srv/a.lock || exit 0\necho x\nfi\nmkdir /srv/b.lock || exit 0\n"
    h = hits(src)
    assert ("LCK000", 4) in h and ("LCK401", 2) in h
    assert not any(ln == 5 for _, ln in h)


def test_unterminated_quote_hides_nothing_before_it():
    src = '#!/bin/sh\nmkdir /srv/a.lock || exit 0\necho "$(date\nmkdir /srv/b.lock || exit 0\n'
    h = hits(src)
    assert ("LCK000", 3) in h and ("LCK401", 2) in h
    assert not any(ln == 4 for _, ln in h)


def test_valid_bash_kitchen_sink_has_no_parse_error():
    src = r"""
        #!/usr/bin/env bash
        set -Eeuo pipefail
        shopt -s nullglob extglob
        declare -A MAP=([a]=1 [b]=2)
        arr=(one "two three" $'four\tfive')
        for ((i = 0; i < ${#arr[@]}; i++)); do printf '%s\n' "${arr[$i]^^}"; done
        if [[ "${1:-}" =~ ^[0-9]+$ && -n ${2-} ]]; then echo num; fi
        case "${1:-}" in
          run) echo go ;&
          +([0-9])) echo digits ;;
        esac
        while IFS= read -r line; do echo "$line"; done < <(ls -1)
        read -r x <<< "hello"
        coproc worker { cat; }
        echo $(( 3 * (4 + 5) )) ${x:+set} ${x//l/L} ${x:1:2} ${!MAP[@]}
        f() ( echo subshell-function )
        exec 3>&1 4>&2
        diff <(echo a) <(echo b) || true
        cat <<-EOF
        <TAB>indented $x
        <TAB>EOF
    """
    text = textwrap.dedent(src).lstrip("\n").replace("<TAB>", "\t")
    facts, findings = analyze_text("job.sh", text, "shell")
    assert facts.parse_errors == [] and findings == []


# ----------------------------------------------------------------------------- suppressions


def test_noqa_and_disable_comments():
    src = """
        #!/bin/bash
        mkdir /srv/a.lock || exit 75  # noqa: LCK101
        # lockcheck: disable=LCK101
        mkdir /srv/b.lock || exit 75
        mkdir /srv/c.lock || exit 75
    """
    facts, findings = run(src)
    assert 2 in facts.comments
    assert {(f.code, f.span.line) for f in findings if f.code == "LCK101"} == {("LCK101", 5)}


def test_release_before_acquire_move_fix():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        trap 'rmdir "$LOCK"' EXIT
        mkdir "$LOCK" 2>/dev/null || exit 75
        work
    """
    facts, findings = run(src)
    f = next(x for x in findings if x.code == "LCK203")
    assert f.span.line == 3 and f.fix is not None
    text = facts.text
    for e in sorted(f.fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    lines = text.splitlines()
    assert lines[2].startswith("mkdir") and lines[3] == "trap 'rmdir \"$LOCK\"' EXIT"
    _, after = analyze_text("job.sh", text, "shell")
    assert not any(x.code == "LCK203" for x in after)


def test_busy_branch_resetting_the_trap_is_not_lck203():
    src = """
        #!/bin/bash
        LOCK=/srv/app/run.lock
        trap 'rmdir "$LOCK"' EXIT
        if ! mkdir "$LOCK" 2>/dev/null; then
          trap - EXIT
          exit 75
        fi
    """
    assert not any(c in ("LCK203", "LCK202") for c, _ in hits(src))


def test_error_exit_mkdir_of_output_is_not_a_lock():
    src = """
        #!/bin/bash
        OUT="/srv/reports/$(date +%F)"
        mkdir "$OUT" || exit 1
        ln -s "$OUT" /srv/reports/latest.new || exit 1
        generate > "$OUT/report.html"
    """
    assert hits(src) == set()


def test_liveness_through_function_status():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/app.pid
        is_running() {
          [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
        }
        if is_running; then
          echo "already running" >&2
          exit 0
        fi
        if kill -0 "$(cat "$PIDFILE")"; then echo "up" >&2; fi
    """
    h = hits(src)
    assert ("LCK105", 4) in h and ("LCK105", 10) not in h


def test_classic_pid_lock_idiom():
    src = """
        #!/bin/bash
        LOCKFILE=/tmp/lock.txt
        if [ -e ${LOCKFILE} ] && kill -0 `cat ${LOCKFILE}`; then
            echo "already running"
            exit
        fi
        trap "rm -f ${LOCKFILE}; exit" INT TERM EXIT
        echo $$ > ${LOCKFILE}
        work
        rm -f ${LOCKFILE}
    """
    h = hits(src)
    assert {("LCK105", 3), ("LCK401", 5), ("LCK103", 8), ("LCK502", 8)} <= h
    # the trap comes after the busy branch; the final rm is the release, not a breaker
    assert not any(c in ("LCK203", "LCK106", "LCK107", "LCK202") for c, _ in h)


def test_flock_in_lock_function_with_exiting_helper():
    src = """
        #!/bin/bash
        LOCKFILE="$XDG_RUNTIME_DIR/sync.lock"
        eexit() {
          echo "$1" >&2
          exit 0
        }
        lock() {
          exec 200<>"$LOCKFILE"
          flock -n 200 && return 0 || return 1
        }
        main() {
          lock || eexit "Only one instance can run"
          sync_all
        }
        main "$@"
    """
    facts, findings = run(src)
    acq = facts.acquires[0]
    assert acq.busy is not None and acq.busy.status == 0 and acq.busy.ends_run
    assert ("LCK401", 12) in {(f.code, f.span.line) for f in findings}


def test_subshell_exit_ends_only_the_subshell():
    src = """
        #!/bin/bash
        (
          flock -n 9 || exit 0
          refresh_cache
        ) 9<>"$XDG_RUNTIME_DIR/cache.lock"
        publish_report
    """
    assert not any(c == "LCK401" for c, _ in hits(src))
    src2 = """
        #!/bin/bash
        prepare
        (
          flock -n 9 || exit 0
          refresh_cache
        ) 9<>"$XDG_RUNTIME_DIR/cache.lock"
    """
    assert ("LCK401", 4) in hits(src2)


def test_foreign_removal_in_called_function_and_not_in_branch():
    src = """
        #!/bin/bash
        clean_locks() {
          rm -f /var/lock/etl-*.lock
        }
        clean_locks
        run_etl
        if [ "$FORCE" = 1 ]; then
          rm -f /var/lock/other.lock
        fi
    """
    h = hits(src)
    assert ("LCK107", 3) in h
    assert ("LCK107", 8) not in h


def test_exit_trap_override_suggestion_keeps_status():
    src = """
        #!/bin/bash
        trap 'rm -rf "$WORK"; exit 0' EXIT
        false
        exec 9<"$0"; flock -n 9 || exit 75  # LCK404 applies to scripts that lock
    """
    facts, findings = run(src)
    f = next(x for x in findings if x.code == "LCK404")
    assert f.span.line == 2 and f.suggestion is not None
    text = facts.text
    for e in sorted(f.suggestion.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert "exit 0" not in text
    assert not any(x.code == "LCK404" for x in analyze_text("job.sh", text, "shell")[1])


def test_mkdir_in_subshell_condition_and_noclobber_subshell():
    src = """
        #!/bin/sh
        lockdir=/var/tmp/mylock
        if ( mkdir ${lockdir} ) 2> /dev/null; then
          trap 'rm -rf "$lockdir"' INT TERM EXIT
          do_stuff
        else
          echo "Lock Exists: $lockdir"
        fi
    """
    h = hits(src)
    assert {("LCK101", 3), ("LCK502", 3), ("LCK401", 7)} <= h
    src2 = """
        #!/bin/bash
        LOCK_FILE=/tmp/`basename $0`.lock
        (set -C; echo "$$" > "${LOCK_FILE}") 2>/dev/null
        if [ $? -ne 0 ]; then
          logger "lock file exists - exiting"
          exit 1
        fi
        trap 'rm -f "$LOCK_FILE"' EXIT
        echo "$LOCK_FILE" > /dev/null > /srv/out.txt
    """
    facts, findings = run(src2)
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK101", 3) in h and ("LCK502", 3) in h
    assert facts.acquires[0].path.parts[1].kind is PartKind.SCRIPT_NAME
    # set -C ended with the subshell: the later `>` is not a lock
    assert len(facts.acquires) == 1


def test_takeover_after_dead_holder_with_ps():
    src = """
        #!/bin/bash
        LOCKDIR="/srv/run/$1"
        PIDFILE="$LOCKDIR/pid"
        if ! mkdir "$LOCKDIR"; then
          PID=$(cat "$PIDFILE")
          if [ -n "$PID" ] && /bin/ps $PID > /dev/null; then
            echo "$PID is still running"
            exit 1
          else
            /bin/rm -rf "$LOCKDIR"
            mkdir "$LOCKDIR" || exit
          fi
        fi
        trap 'rm -rf "$LOCKDIR"' EXIT
        echo $$ > "$PIDFILE"
    """
    h = hits(src)
    assert {("LCK101", 4), ("LCK105", 6), ("LCK106", 10)} <= h
    assert not any(c == "LCK401" for c, _ in h)


def test_flock_unlock_is_not_an_acquire_and_ends_the_scope():
    src = """
        #!/bin/bash
        exec {lock_fd}<>"$XDG_RUNTIME_DIR/cron.lock" || exit 1
        flock -n "$lock_fd" || { echo "busy" >&2; exit 1; }
        python app/main.py
        flock -u "$lock_fd"
        ./notify-later &
    """
    facts, findings = run(src)
    assert len(facts.acquires) == 1 and findings == []


def test_init_script_running_helper_used_by_status_and_start():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/x.pid
        running() {
          [ ! -f $PIDFILE ] && return 1
          ps -p $(cat $PIDFILE) > /dev/null
          return $?
        }
        case "$1" in
          status)
            if running; then echo running; else echo stopped; fi
            ;;
          start)
            if running; then
              echo already running
              exit 1
            fi
            /usr/sbin/x &
            echo $! > $PIDFILE
            ;;
        esac
    """
    facts, findings = run(src)
    assert facts.init_script
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK105", 5) in h
    assert not any(c in ("LCK106", "LCK107", "LCK405") for c, _ in h)


def test_lock_helper_called_twice_reports_each_problem_once():
    src = """
        #!/bin/bash
        with_lock() {
          trap "rmdir '$1'" EXIT
          mkdir "$1" 2>/dev/null || exit 75
        }
        with_lock /srv/run/a.lock
        with_lock /srv/run/a.lock
    """
    facts, findings = run(src)
    assert [f.span.line for f in findings if f.code == "LCK203"] == [3]
    assert [f.span.line for f in findings if f.code == "LCK101"] == [4]


def test_flock_on_fd_held_in_a_variable_and_eval_opened_files():
    src = """
        #!/bin/bash
        LOCKFD=99
        _lock() { flock -$1 $LOCKFD; }
        _prepare() { eval "exec $LOCKFD>\\"$LOCKFILE\\""; trap '_lock u; rm -f $LOCKFILE' EXIT; }
        _prepare
        if ! _lock xn; then
          echo "already running"
          exit 0
        fi
    """
    facts, findings = run(src)
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK401", 8) in h
    assert not any(c in ("LCK501", "LCK107") for c, _ in h)
    # the eval'd `exec` is read: the lock is the file it opens (an unresolved variable here),
    # and the EXIT trap deletes that flock file
    acq = facts.acquires[0]
    assert acq.nonblocking and acq.path is not None and acq.path.text == '"$LOCKFILE"'
    assert ("LCK201", 4) in h


def test_proc_liveness_with_command_substitution():
    src = """
        #!/bin/bash
        F=/var/run/j.pid
        if [ -e /proc/$(cat $F) ]; then exit 0; fi
        if [[ -d "/proc/$(< "$F")" ]]; then exit 0; fi
        [[ -d /proc/$(cat $F) ]] && echo up >&2
    """
    h = hits(src)
    assert ("LCK105", 3) in h and ("LCK105", 4) in h and ("LCK105", 5) not in h


def test_per_process_probe_in_helper_is_neither_lock_nor_lck301():
    src = """
        #!/usr/bin/env bash
        usable_dir() {
          local dir="$1" probe
          [ -d "$dir" ] && [ -w "$dir" ] || return 1
          probe="$dir/.probe.$$"
          if ! mkdir "$probe" 2>/dev/null; then return 1; fi
          if ! rmdir "$probe" 2>/dev/null; then
            : > "$dir/.cannot-clean" 2>/dev/null
            return 1
          fi
          return 0
        }
        first_usable() {
          local d
          for d in "${XDG_RUNTIME_DIR:-}" "$HOME/.cache"; do
            if usable_dir "$d"; then printf '%s\\n' "$d"; return 0; fi
          done
          return 1
        }
        ROOT="$(first_usable)" || exit 3
        exec 9<>"$ROOT/job.lock" || exit 3
        flock -n 9 || { printf 'skipped\\n' >> "$HOME/.job-ledger"; exit 2; }
    """
    facts, findings = run(src)
    assert findings == []
    assert len(facts.probes) == 1 and facts.probes[0].path.has_unique


def test_trap_before_a_waiting_loop_is_not_lck203():
    src = """
        #!/bin/bash
        L=/srv/app/x.lock
        trap 'rmdir "$L"' EXIT
        until mkdir "$L" 2>/dev/null; do sleep 1; done
        work
    """
    h = hits(src)
    assert ("LCK101", 4) in h and not any(c == "LCK203" for c, _ in h)


def test_trap_before_a_takeover_that_can_still_exit_is_lck203():
    src = """
        #!/bin/bash
        LOCK=/srv/app/job.pid
        trap 'rm -f "$LOCK"' EXIT
        if [ -e "$LOCK" ]; then
          if kill -0 "$(cat "$LOCK")" 2>/dev/null; then
            exit 1
          fi
          rm -f "$LOCK"
        fi
        echo $$ > "$LOCK"
    """
    h = hits(src)
    assert {("LCK203", 3), ("LCK105", 5), ("LCK106", 8), ("LCK103", 10)} <= h


def test_falling_off_the_end_fix_only_inside_a_block():
    src = """
        #!/bin/bash
        exec 9<>"$XDG_RUNTIME_DIR/j.lock"
        if flock -n 9; then
          work
        else
          echo busy >&2
        fi
    """
    facts, findings = run(src)
    f = next(x for x in findings if x.code == "LCK401")
    assert f.span.line == 6
    text = facts.text
    for e in sorted(f.fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert "  echo busy >&2\n  exit 75\nfi\n" in text
    src2 = '#!/bin/bash\nexec 9<>"$XDG_RUNTIME_DIR/j.lock"\nflock -n 9 || echo busy\n'
    f2 = next(x for x in analyze_text("j.sh", src2, "shell")[1] if x.code == "LCK401")
    assert f2.span.line == 3 and f2.fix is None


def test_dotlockfile_unlock_is_the_release():
    src = """
        #!/bin/sh
        dotlockfile -l -r 0 /srv/mail/inbox.lock || exit 75
        trap 'dotlockfile -u /srv/mail/inbox.lock' EXIT
        fetch
    """
    facts, findings = run(src)
    assert {(f.code, f.span.line) for f in findings} == {("LCK101", 2)}
    assert len(facts.acquires) == 1 and facts.acquires[0].released


def test_removing_the_directory_holding_the_lock_releases_it():
    src = """
        #!/bin/bash
        W=/srv/work.d
        mkdir -p "$W"
        trap 'rm -rf "$W"' EXIT
        mkdir "$W/lock" || exit 75
        work
    """
    facts, findings = run(src)
    assert {(f.code, f.span.line) for f in findings} == {("LCK101", 5)}
    assert facts.acquires[0].released and facts.acquires[0].release_on_every_exit


def test_pid_file_guard_with_chained_existence_and_liveness():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/myjob.pid
        if [ -f "$PIDFILE" ] && ps -p "$(cat "$PIDFILE")" > /dev/null; then
          echo "Already running"; exit 1
        fi
        echo $$ > "$PIDFILE"
        trap 'rm -f "$PIDFILE"' EXIT
        work
    """
    h = hits(src)
    assert h == {("LCK105", 3), ("LCK103", 6)}


def test_nested_alive_exit_is_the_skip_and_the_cleanup_is_a_breaker():
    src = """
        #!/bin/bash
        PIDFILE=/var/run/myjob.pid
        if [ -e "$PIDFILE" ]; then
          pid=$(cat "$PIDFILE")
          if ps -p $pid >/dev/null 2>&1; then echo running; exit 0; fi
          echo "stale pid file, removing"
          rm -f "$PIDFILE"
        fi
        echo $$ > "$PIDFILE"
        work
        rm -f "$PIDFILE"
    """
    h = hits(src)
    assert {("LCK105", 5), ("LCK401", 5), ("LCK106", 7), ("LCK103", 9), ("LCK202", 9)} == h
