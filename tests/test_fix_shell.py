"""Before/after fixtures for the shell fixes and suggestions (real frontend, real checks)."""

from __future__ import annotations

import textwrap

import pytest

from lockcheck.engine import analyze_text, fix_text
from lockcheck.fix.apply import apply_edits, unified_diff
from lockcheck.model import Applicability
from lockcheck.settings import Settings


def sh(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def fixed(text: str, unsafe: bool = False, settings: Settings | None = None):
    return fix_text("job.sh", text, "shell", settings or Settings(), None, unsafe)


# --------------------------------------------------------------------------- LCK201

ROTATE = sh(
    """
    #!/bin/bash
    # rotate logs, one run at a time
    LOCK="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/rotate.lock"
    exec 9>>"$LOCK"
    flock -n 9 || { logger -t rotate "busy"; exit 75; }
    trap 'rm -f "$LOCK"; echo "rotate finished" >&2' EXIT INT TERM
    for f in /var/log/app/*.log; do
        gzip -9 "$f"
    done
    """
)


def test_lck201_trap_keeps_its_other_parts():
    assert "LCK201" in codes(analyze_text("job.sh", ROTATE, "shell")[1])
    res = fixed(ROTATE)
    assert res.fixed == ROTATE.replace(
        """trap 'rm -f "$LOCK"; echo "rotate finished" >&2' EXIT INT TERM""",
        """trap 'echo "rotate finished" >&2' EXIT INT TERM""",
    )
    assert [f.code for f in res.applied] == ["LCK201"]
    assert "LCK201" not in codes(res.remaining)


SUBSHELL = sh(
    """
    #!/bin/sh
    LOCKFILE=/var/lib/backup/backup.lock
    (
        flock -n 9 || exit 75
        tar -czf /backup/home.tgz /home
    ) 9>"$LOCKFILE"
    status=$?
    rm -f "$LOCKFILE"
    exit $status
    """
)


def test_lck201_plain_removal_line_is_dropped():
    res = fixed(SUBSHELL)
    assert res.fixed == SUBSHELL.replace('rm -f "$LOCKFILE"\n', "")
    assert "LCK201" in [f.code for f in res.applied]


def test_lck201_fix_is_safe_and_exact_byte_range():
    _facts, findings = analyze_text("job.sh", SUBSHELL, "shell")
    (f,) = [f for f in findings if f.code == "LCK201"]
    assert f.fix.applicability is Applicability.SAFE
    (edit,) = f.fix.edits
    removed = SUBSHELL[edit.start : edit.end]
    assert 'rm -f "$LOCKFILE"' in removed and "exit" not in removed


# --------------------------------------------------------------------------- LCK301

PROBE = sh(
    """
    #!/usr/bin/env bash
    pick_root() {
        for d in "${XDG_RUNTIME_DIR:-}" /dev/shm "$HOME/.cache"; do
            [ -d "$d" ] || continue
            if mkdir "$d/.probe" 2>/dev/null && rmdir "$d/.probe"; then
                echo "$d"
                return 0
            fi
        done
        return 1
    }
    ROOT=$(pick_root) || exit 3
    exec 9<>"$ROOT/sync.lock" || exit 3
    flock -n 9 || { echo "busy" >>"$HOME/sync.log"; exit 75; }
    rsync -a src/ dst/
    """
)


def test_lck301_per_process_name_at_create_and_remove():
    res = fixed(PROBE)
    assert res.fixed == PROBE.replace(
        'mkdir "$d/.probe" 2>/dev/null && rmdir "$d/.probe"',
        'mkdir "$d/.probe.$$" 2>/dev/null && rmdir "$d/.probe.$$"',
    )
    assert [f.code for f in res.applied] == ["LCK301"]
    assert res.remaining == []


# --------------------------------------------------------------------------- LCK401

MIRROR = sh(
    """
    #!/bin/bash
    exec 200>>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/mirror.lock" || exit 3
    if ! flock -n 200; then
        echo "mirror already running"
        exit 0
    fi
    case "${1:-}" in
        --full) rsync -a --delete /srv/ mirror:/srv/ ;;
        *) rsync -a /srv/ mirror:/srv/ ;;
    esac
    """
)

INDEXER = sh(
    """
    #!/bin/bash
    LOCK="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/index.lock"
    exec 9<>"$LOCK" || exit 3
    flock -n 9 || { echo "indexer busy"; exit; }
    declare -a dirs=(/srv/a /srv/b)
    for d in "${dirs[@]}"; do
        updatedb -U "$d"
    done
    """
)


def test_lck401_is_unsafe_and_not_applied_by_default():
    res = fixed(MIRROR)
    assert res.fixed == MIRROR
    assert codes(res.remaining) == ["LCK401"]


def test_lck401_exit_0_becomes_skip_code():
    res = fixed(MIRROR, unsafe=True)
    assert res.fixed == MIRROR.replace("    exit 0\n", "    exit 75\n")
    assert res.remaining == []


def test_lck401_bare_exit_in_group_becomes_skip_code():
    res = fixed(INDEXER, unsafe=True)
    assert res.fixed == INDEXER.replace(
        '{ echo "indexer busy"; exit; }', '{ echo "indexer busy"; exit 75; }'
    )


def test_lck401_uses_configured_skip_code():
    res = fixed(MIRROR, unsafe=True, settings=Settings(skip_exit_code=99))
    assert "    exit 99\n" in res.fixed


# --------------------------------------------------------------------------- LCK403

DEPLOY = sh(
    """
    #!/bin/bash
    set -euo pipefail
    cd /srv/app
    exec flock -n "${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/deploy.lock" ./deploy.sh "$@"
    """
)


def test_lck403_inserts_conflict_code():
    assert fixed(DEPLOY).fixed == DEPLOY  # unsafe
    res = fixed(DEPLOY, unsafe=True)
    assert res.fixed == DEPLOY.replace("exec flock -n", "exec flock -E 75 -n")
    assert res.remaining == []


# --------------------------------------------------------------------------- LCK203

IMPORT = sh(
    """
    #!/bin/bash
    LOCKDIR="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/import.d"
    trap 'rmdir "$LOCKDIR"' EXIT
    if ! mkdir "$LOCKDIR" 2>/dev/null; then
        echo "import already running" >>/var/log/import.log
        exit 75
    fi
    python3 /opt/import/run.py
    """
)


def test_lck203_trap_moves_after_the_acquire():
    res = fixed(IMPORT, unsafe=True)
    assert res.fixed == sh(
        """
        #!/bin/bash
        LOCKDIR="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/import.d"
        if ! mkdir "$LOCKDIR" 2>/dev/null; then
            echo "import already running" >>/var/log/import.log
            exit 75
        fi
        trap 'rmdir "$LOCKDIR"' EXIT
        python3 /opt/import/run.py
        """
    )
    assert "LCK203" in [f.code for f in res.applied]
    assert "LCK203" not in codes(res.remaining)


def test_lck203_and_lck201_fixes_combine_in_rounds():
    text = ROTATE.replace(
        """flock -n 9 || { logger -t rotate "busy"; exit 75; }
trap 'rm -f "$LOCK"; echo "rotate finished" >&2' EXIT INT TERM
""",
        """trap 'rm -f "$LOCK"; echo "rotate finished" >&2' EXIT INT TERM
flock -n 9 || { logger -t rotate "busy"; exit 75; }
""",
    )
    assert text != ROTATE
    res = fixed(text, unsafe=True)
    assert res.fixed == ROTATE.replace("""'rm -f "$LOCK"; echo""", """'echo"""), unified_diff(
        "job.sh", text, res.fixed
    )
    assert sorted(f.code for f in res.applied) == ["LCK201", "LCK203"]


# --------------------------------------------------------------------------- suggestions

BUILD = sh(
    """
    #!/bin/bash
    cleanup() {
        rm -rf "$WORKDIR"
        exit 0
    }
    WORKDIR=$(mktemp -d)
    trap cleanup EXIT
    exec 9<>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/build.lock" || exit 3
    flock -n 9 || exit 75
    make -C "$WORKDIR" all
    """
)


def test_lck404_suggestion_keeps_status_and_is_never_applied():
    res = fixed(BUILD, unsafe=True)
    assert res.fixed == BUILD
    (f,) = [f for f in res.remaining if f.code == "LCK404"]
    assert f.suggestion.applicability is Applicability.SUGGESTION
    assert apply_edits(BUILD, f.suggestion.edits) == BUILD.replace("    exit 0\n", "    exit\n")
    # once applied by hand, the rule is satisfied
    _facts, after = analyze_text("job.sh", apply_edits(BUILD, f.suggestion.edits), "shell")
    assert "LCK404" not in codes(after)


SYNCED = sh(
    """
    #!/bin/bash
    # nightly report
    LOCKDIR="$HOME/Dropbox/jobs/report.lock"
    trap 'rmdir "$LOCKDIR"' EXIT
    if ! mkdir "$LOCKDIR" 2>/dev/null; then
        echo "already running"
        exit 0
    fi
    run_report
    """
)

SYNCED_AFTER = sh(
    """
    #!/bin/bash
    # nightly report
    lock_dir=${XDG_STATE_HOME:-$HOME/.local/state}/job; (umask 077 && mkdir -p "$lock_dir")
    exec 9>>"$lock_dir/report.lock" || exit 3
    if ! flock -n 9 2>/dev/null; then
        echo "already running"
        logger -t "${0##*/}" "lock busy, run skipped"
        exit 75
    fi
    run_report
    """
)


def _suggestion(text: str, code: str, settings: Settings | None = None):
    _facts, findings = analyze_text("job.sh", text, "shell", settings or Settings())
    (f,) = [f for f in findings if f.code == code]
    assert f.suggestion is not None and f.suggestion.applicability is Applicability.SUGGESTION
    return apply_edits(text, f.suggestion.edits)


def test_lck102_suggestion_moves_lock_out_of_synced_folder():
    assert _suggestion(SYNCED, "LCK102") == SYNCED_AFTER
    res = fixed(SYNCED, unsafe=True)
    assert "mkdir" in res.fixed, "a suggestion is never applied"


def test_suggestion_result_is_clean():
    _facts, findings = analyze_text("job.sh", SYNCED_AFTER, "shell")
    assert codes(findings) == []


def test_suggestion_uses_configured_skip_code():
    assert "    exit 64\n" in _suggestion(SYNCED, "LCK102", Settings(skip_exit_code=64))


BESIDE = sh(
    """
    #!/bin/bash
    LOCK="$(dirname "$0")/sync.lock"
    mkdir "$LOCK" || { echo "sync busy"; exit 0; }
    rsync -a ~/src/ ~/dst/
    rmdir "$LOCK"
    """
)


def test_lck101_suggestion_or_form_drops_release():
    assert _suggestion(BESIDE, "LCK101") == sh(
        """
        #!/bin/bash
        lock_dir=${XDG_STATE_HOME:-$HOME/.local/state}/job; (umask 077 && mkdir -p "$lock_dir")
        exec 9>>"$lock_dir/sync.lock" || exit 3
        flock -n 9 || { echo "sync busy"; logger -t "${0##*/}" "lock busy"; exit 75; }
        rsync -a ~/src/ ~/dst/
        """
    )


PIDFILE = sh(
    """
    #!/bin/bash
    PIDFILE=/var/lib/reports/reports.pid
    if [ -f "$PIDFILE" ]; then
        echo "reports already running"
        exit 0
    fi
    echo $$ > "$PIDFILE"
    trap 'rm -f "$PIDFILE"' EXIT
    generate_reports
    """
)


def test_lck103_suggestion_replaces_test_and_creation():
    assert _suggestion(PIDFILE, "LCK103") == sh(
        """
        #!/bin/bash
        PIDFILE=/var/lib/reports/reports.pid
        exec 9>>"$PIDFILE" || exit 3
        if ! flock -n 9; then
            echo "reports already running"
            logger -t "${0##*/}" "lock busy, run skipped"
            exit 75
        fi
        generate_reports
        """
    )


# --------------------------------------------------------------------------- CRLF


@pytest.mark.parametrize("text", [MIRROR, INDEXER, PROBE])
def test_crlf_script_fixes_keep_crlf(text):
    crlf = text.replace("\n", "\r\n")
    res = fixed(crlf, unsafe=True)
    assert res.fixed != crlf
    assert res.fixed.replace("\r\n", "\n") == fixed(text, unsafe=True).fixed
    assert "\n" not in res.fixed.replace("\r\n", "")


# --------------------------------------------------------------------------- facts-level advice

SHARED_TMP = sh(
    """
    #!/bin/bash
    exec 9>/tmp/report.lock
    flock -n 9 || exit 75
    pid=$(cat /var/lib/rep/rep.pid)
    if kill -0 "$pid" 2>/dev/null; then
        exit 75
    fi
    kill -TERM "$(cat /var/lib/rep/old.pid)"
    make report
    """
)


def test_lck502_placement_suggestion_moves_and_stops_truncating():
    facts, findings = analyze_text("job.sh", SHARED_TMP, "shell")
    assert "LCK502" in codes(findings)
    (acq,) = facts.acquires
    after = apply_edits(SHARED_TMP, acq.placement_suggestion.edits)
    assert after == SHARED_TMP.replace(
        "exec 9>/tmp/report.lock",
        'lock_dir=${XDG_STATE_HOME:-$HOME/.local/state}/job; (umask 077 && mkdir -p "$lock_dir")\n'
        'exec 9<>"$lock_dir/report.lock" || exit 3',
    )
    assert "LCK502" not in codes(analyze_text("job.sh", after, "shell")[1])


def test_pid_liveness_and_kill_get_flock_advice():
    facts, findings = analyze_text("job.sh", SHARED_TMP, "shell", Settings(skip_exit_code=70))
    assert {"LCK105", "LCK108"} <= set(codes(findings))
    assert facts.liveness and all("flock" in c.suggestion.message for c in facts.liveness)
    assert "exit 70" in facts.liveness[0].suggestion.message
    assert facts.kills and all(k.suggestion is not None for k in facts.kills)


NOCLOBBER = sh(
    """
    #!/bin/bash
    LOCK=/srv/run/job.lock
    set -o noclobber
    if ! { echo $$ > "$LOCK"; } 2>/dev/null; then
        echo "busy" >&2
        exit 75
    fi
    trap 'rm -f "$LOCK"' EXIT
    work
    """
)


def test_noclobber_suggestion_replaces_the_redirection_and_drops_the_trap():
    after = _suggestion(NOCLOBBER, "LCK101")
    assert after.startswith(
        sh(
            """
            #!/bin/bash
            LOCK=/srv/run/job.lock
            set -o noclobber
            exec 9>>"$LOCK" || exit 3
            if ! { flock -n 9; } 2>/dev/null; then
                echo "busy" >&2
            """
        )
    )
    assert after.endswith("    exit 75\nfi\nwork\n")
    assert "trap" not in after and "echo $$" not in after


ONEDRIVE = sh(
    """
    #!/bin/sh
    acquire() {
        while ! ln -s "$$" "$HOME/OneDrive/state/job.lock" 2>/dev/null; do
            sleep 5
        done
    }
    acquire
    trap 'rm -f "$HOME/OneDrive/state/job.lock"; echo bye' EXIT
    work
    """
)


def test_suggestion_keeps_the_other_parts_of_a_cleanup_trap():
    after = _suggestion(ONEDRIVE, "LCK102")
    assert after == sh(
        """
        #!/bin/sh
        acquire() {
            lock_dir=${XDG_STATE_HOME:-$HOME/.local/state}/job; (umask 077 && mkdir -p "$lock_dir")
            exec 9>>"$lock_dir/job.lock" || exit 3
            while ! flock -n 9 2>/dev/null; do
                sleep 5
            done
        }
        acquire
        trap 'echo bye' EXIT
        work
        """
    )
    assert codes(analyze_text("job.sh", after, "shell")[1]) == []
