"""Properties of fixing real scripts: fixes touch only their edits; fixing is idempotent."""

from __future__ import annotations

import shutil
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lockcheck.engine import analyze_text, fix_text
from lockcheck.fix.apply import apply_edits

BASH = shutil.which("bash")

SHELL_BLOCKS = [
    'LOCK="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/job.lock"\n',
    'exec 9>>"$LOCK"\n',
    "flock -n 9 || exit 0\n",
    'flock -n 9 || { echo "busy"; exit; }\n',
    'if ! flock -n 9; then\n    echo "busy" >&2\n    exit 0\nfi\n',
    "trap 'rm -f \"$LOCK\"; echo done' EXIT\n",
    'rm -f "$LOCK"\n',
    "mkdir /var/tmp/probe && rmdir /var/tmp/probe\n",
    ': > "$HOME/.cache/t" && rm -f "$HOME/.cache/t"\n',
    "flock -n /var/lib/job/run.lock make -C /srv all\n",
    'case "$1" in\n    start) run ;;\n    *) echo "usage" ;;\nesac\n',
    'arr=(a b c)\nfor x in "${arr[@]}"; do echo "$x"; done\n',
    "cat <<EOF\nhello $USER\nEOF\n",
    'LOCKDIR=/srv/locks/job.d\nif ! mkdir "$LOCKDIR" 2>/dev/null; then echo busy; exit 0; fi\n',
    "trap 'rmdir \"$LOCKDIR\"' EXIT\n",
    "# a comment\n",
    "\n",
    "run_job\r\n",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SHELL_BLOCKS), min_size=1, max_size=8), st.booleans())
def test_shell_fixes_are_local_and_idempotent(blocks, unsafe):
    text = "#!/bin/bash\n" + "".join(blocks)
    _facts, findings = analyze_text("job.sh", text, "shell")
    for f in findings:
        for fix in (f.fix, f.suggestion):
            if fix is None or not fix.edits:
                continue
            edits = sorted(fix.edits, key=lambda e: e.start)
            assert all(0 <= e.start <= e.end <= len(text) for e in edits)
            out = apply_edits(text, edits)  # raises on overlap
            # nothing before the first edit or after the last one changes
            assert out[: edits[0].start] == text[: edits[0].start]
            tail = len(text) - edits[-1].end
            assert out[len(out) - tail :] == text[edits[-1].end :]
            if BASH:  # fixes and suggestions keep the script valid shell
                ok = subprocess.run([BASH, "-n"], input=out, text=True, capture_output=True)
                assert ok.returncode == 0, (out, ok.stderr)
    once = fix_text("job.sh", text, "shell", unsafe=unsafe)
    twice = fix_text("job.sh", once.fixed, "shell", unsafe=unsafe)
    assert twice.fixed == once.fixed
    assert twice.applied == []
    # what was applied is gone, and nothing that parsed stops parsing
    assert not any(f.code == "LCK000" for f in once.remaining) or any(
        f.code == "LCK000" for f in findings
    )


PY_HEAD = "import atexit\nimport fcntl\nimport os\nimport sys\n"
PY_BLOCKS = [
    'LOCK = "/var/lib/job/job.lock"\n',
    "fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)\n",
    "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "except BlockingIOError:\n    print('busy')  # say so\n    sys.exit(0)\n",
    "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "except BlockingIOError:\n    raise SystemExit\n",
    "atexit.register(os.remove, LOCK)\n",
    "try:\n    work()\nfinally:\n    os.remove(LOCK)\n",
    "os.mkdir('/var/tmp/probe')\nos.rmdir('/var/tmp/probe')\n",
    "try:\n    os.mkdir('/srv/x.d')\nexcept FileExistsError:\n    sys.exit()\n",
    "# comment\n",
    "x = [1,  2]   # odd spacing kept\n",
    "\n",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PY_BLOCKS), min_size=1, max_size=7), st.booleans())
def test_python_fixes_are_local_and_idempotent(blocks, unsafe):
    text = PY_HEAD + "".join(blocks)
    _facts, findings = analyze_text("job.py", text, "python")
    for f in findings:
        for fix in (f.fix, f.suggestion):
            if fix is None or not fix.edits:
                continue
            edits = sorted(fix.edits, key=lambda e: e.start)
            out = apply_edits(text, edits)
            assert out[: edits[0].start] == text[: edits[0].start]
            tail = len(text) - edits[-1].end
            assert out[len(out) - tail :] == text[edits[-1].end :]
            compile(out, "job.py", "exec")  # fixes and suggestions keep the file valid
    once = fix_text("job.py", text, "python", unsafe=unsafe)
    compile(once.fixed, "job.py", "exec")  # fixes never break the file
    twice = fix_text("job.py", once.fixed, "python", unsafe=unsafe)
    assert twice.fixed == once.fixed
    assert twice.applied == []
    assert "# odd spacing kept" in once.fixed or "# odd spacing kept" not in text
