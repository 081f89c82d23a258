"""Shell frontend on realistic full scripts, parameters, path resolution and robustness."""

from __future__ import annotations

import textwrap

from lockcheck.engine import analyze_text
from lockcheck.frontends import shell
from lockcheck.model import PartKind


def run(src: str, path: str = "job.sh"):
    return analyze_text(path, textwrap.dedent(src).lstrip("\n"), "shell")


def hits(src: str, path: str = "job.sh") -> set[tuple[str, int]]:
    return {(f.code, f.span.line) for f in run(src, path)[1]}


CRON_BACKUP = r"""
    #!/usr/bin/env bash
    # Nightly backup, run from cron: 15 2 * * * /opt/backup/backup.sh daily
    set -uo pipefail

    BACKUP_ROOT="$HOME/Dropbox/backups"
    LOCKDIR="$BACKUP_ROOT/.backup.lock"
    TARGETS=(/etc /var/www "/home/shared docs")
    MODE="${1:-daily}"

    usage() {
      cat <<EOF
    usage: $0 [daily|weekly]
    mkdir "$LOCKDIR" || exit 0
    EOF
    }

    case "$MODE" in
      daily|weekly) ;;
      -h|--help) usage; exit 0 ;;
      *) usage >&2; exit 2 ;;
    esac

    if ! mkdir "$LOCKDIR" 2>/dev/null; then
      echo "backup already running, skipping"
      exit 0
    fi

    for t in "${TARGETS[@]}"; do
      if [[ -d "$t" ]]; then
        tar -czf "$BACKUP_ROOT/$(basename "$t")-$MODE.tgz" "$t"
      fi
    done
    rmdir "$LOCKDIR"
"""


def test_cron_backup_job():
    facts, findings = run(CRON_BACKUP, "backup.sh")
    h = {(f.code, f.span.line) for f in findings}
    # mkdir lock in a Dropbox folder, skip exits 0 silently, release only on the normal path
    assert ("LCK102", 23) in h
    assert ("LCK401", 25) in h
    assert ("LCK202", 23) in h
    # the usage here-doc is text, not code
    assert len(facts.acquires) == 1
    assert facts.acquires[0].path.render() == "~/Dropbox/backups/.backup.lock"


RSYNC_MIRROR = r"""
    #!/bin/bash
    # Mirror upstream every 10 minutes.
    set -e
    SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    LOCK="$SCRIPT_DIR/mirror.lock"
    PIDFILE=/var/run/mirror.pid
    LOG=/var/log/mirror.log
    declare -a OPTS=(-a --delete --partial)

    exec 200>"$LOCK"
    trap 'rm -f "$LOCK" "$PIDFILE"; exit 0' EXIT
    flock -x -n 200 || { echo "mirror busy"; exit 0; }
    echo $$ > "$PIDFILE"

    if [[ -f /etc/mirror/old.pid ]]; then
      kill -TERM "$(cat /etc/mirror/old.pid)" || true
    fi

    rsync "${OPTS[@]}" rsync://upstream/pub/ /srv/mirror/ >> "$LOG" 2>&1 &
    wait $!
"""


def test_rsync_mirror_job():
    facts, findings = run(RSYNC_MIRROR, "mirror.sh")
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK501", 10) in h  # lock beside the script (the open)
    assert ("LCK201", 11) in h  # the flocked file is removed by the trap
    assert ("LCK203", 11) in h  # and the trap is already active in the busy branch
    assert ("LCK404", 11) in h  # the EXIT trap ends with exit 0
    assert ("LCK401", 12) in h
    assert ("LCK108", 16) in h
    assert not any(c == "LCK405" for c, _ in h)  # waited for
    rm = next(f for f in findings if f.code == "LCK201")
    text = facts.text
    for e in sorted(rm.fix.edits, key=lambda e: -e.start):
        text = text[: e.start] + e.content + text[e.end :]
    assert """trap 'rm -f "$PIDFILE"; exit 0' EXIT""" in text


def test_function_parameters_from_each_call_site():
    src = """
        #!/bin/bash
        with_lock() {
          local name=$1
          mkdir "$name" 2>/dev/null || return 1
          trap "rmdir '$name'" EXIT
        }
        with_lock "$HOME/Dropbox/a.lock" || exit 75
        with_lock /srv/local/b.lock || exit 75
    """
    facts, findings = run(src)
    paths = sorted(a.path.render() for a in facts.acquires)
    assert paths == ["/srv/local/b.lock", "~/Dropbox/a.lock"]
    h = {(f.code, f.span.line) for f in findings}
    assert ("LCK102", 4) in h and ("LCK101", 4) in h


def test_path_resolution_parts():
    src = """
        #!/bin/bash
        BASE=${STATE_DIR:-/var/lib/app}
        NAME=${0##*/}
        exec 3<>"$BASE/$NAME.$USER.lock"
        flock -n 3 || exit 75
        exec 4<>~/locks/"$(whoami)"-$1.lock
        flock -n 4 || exit 75
        exec 5<>"$(mktemp -d)/x.lock"
        flock -n 5 || exit 75
        for d in a b; do exec 6<>"$d/x.lock"; done
        flock -n 6 || exit 75
    """
    facts, _ = run(src)
    a, b, c, d = facts.acquires
    kinds = [p.kind for p in a.path.parts]
    assert kinds[0] is PartKind.VAR and a.path.parts[0].value == "STATE_DIR"
    assert a.path.parts[0].default.render() == "/var/lib/app"
    assert PartKind.SCRIPT_NAME in kinds and PartKind.USER in kinds
    assert [p.kind for p in b.path.parts][:1] == [PartKind.HOME]
    assert PartKind.USER in [p.kind for p in b.path.parts]
    assert PartKind.ARG in [p.kind for p in b.path.parts]
    assert c.path.has_unique
    assert d.path.parts[0].kind is PartKind.UNKNOWN


def test_sourced_file_does_not_invent_values():
    src = """
        #!/bin/bash
        . /etc/default/myjob
        mkdir "$LOCK_DIR/run.lock" || exit 75
        trap 'rmdir "$LOCK_DIR/run.lock"' EXIT
    """
    facts, findings = run(src)
    assert facts.acquires[0].path.parts[0].kind is PartKind.VAR
    assert {f.code for f in findings} == {"LCK101"}


def test_never_raises_on_junk_and_deep_nesting():
    junk = bytes(range(256)).decode("latin-1") * 50
    facts = shell.parse("junk.sh", junk)
    assert facts.language == "shell"
    deep = "f() {\n" * 400 + "mkdir /srv/x.lock || exit 0\n" + "}\n" * 400
    shell.parse("deep.sh", deep)
    nested = "$(" * 300 + "echo" + ")" * 300
    shell.parse("nested.sh", "x=" + nested + "\n")
    shell.parse("empty.sh", "")
    shell.parse("surrogate.sh", "echo '\udcff'\nmkdir /srv/é.lock || exit 0\n")


def test_non_ascii_columns_and_offsets():
    src = "#!/bin/bash\necho 'héllo wörld'; mkdir /srv/ü.lock || exit 0\n"
    facts, findings = analyze_text("u.sh", src, "shell")
    acq = facts.acquires[0]
    assert src[acq.span.start : acq.span.end] == "mkdir /srv/ü.lock"
    assert acq.span.col == src.splitlines()[1].index("mkdir") + 1


def test_large_file_is_read_in_linear_work():
    """Size is no excuse: the lock at the end of a 20,000-line file is found, and doubling the
    file about doubles the work (counted in executed lines, not seconds: the timings live in
    bench/scaling.py)."""
    from test_hardening_perf import growth

    def big(n: int) -> str:
        body = "\n".join(f'echo "line {i}" >> "$LOG"; x{i}=$((i + 1))' for i in range(n))
        return body + "\nmkdir /srv/z.lock || exit 75\n"

    facts, findings = analyze_text("big.sh", big(20000), "shell")
    assert [a.mechanism for a in facts.acquires] == ["mkdir"]
    assert growth(big, 2000) < 2.6


def test_indirect_flock_invocations():
    for head in ('"$(command -v flock)"', "$(which flock)", "/usr/bin/flock", "`which flock`"):
        src = f"#!/bin/bash\n{head} -n /srv/locks/a.lock make all\n"
        facts, findings = analyze_text("build.sh", src, "shell")
        assert [a.mechanism for a in facts.acquires] == ["flock"], head
        assert [(f.code, f.span.line) for f in findings] == [("LCK403", 2)], head


def test_cli_reports_shell_findings(tmp_path):
    import json
    import subprocess
    import sys

    script = tmp_path / "nightly.sh"
    script.write_text(textwrap.dedent(CRON_BACKUP).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--output-format", "json", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    data = json.loads(proc.stdout)
    got = {(r["code"], r["location"]["row"]) for r in data}
    assert ("LCK401", 25) in got and ("LCK102", 23) in got


SNIPPETS = [
    'exec 9<>"$L"\n',
    "flock -n 9 || exit 0\n",
    "mkdir /tmp/x.lock || { echo busy; exit; }\n",
    "trap 'rm -f \"$L\"; exit 0' EXIT\n",
    'if ! mkdir "$D"; then\n',
    "fi\n",
    'case "$1" in start) f ;; esac\n',
    "f() {\n",
    "}\n",
    "cat <<EOF\n",
    "EOF\n",
    'kill -0 "$(cat "$P")" && exit 0\n',
    "( flock -n 9 || exit 1\n",
    ") 9>/var/lock/x\n",
    'echo "unterminated\n',
    "rm -f /tmp/*.lock &\n",
    "while ! mkdir L; do sleep 1; done\n",
    "\x00\x01\ufffd\udcff\n",
]


def test_parse_never_raises_on_arbitrary_text():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.one_of(st.sampled_from(SNIPPETS), st.text(max_size=30)), max_size=25))
    def check(pieces):
        facts = shell.parse("fuzz.sh", "".join(pieces))
        assert not any("internal error" in e.message for e in facts.parse_errors)

    check()
