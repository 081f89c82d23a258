"""Hostile input must not hang lockcheck or eat the machine's memory (issue #9).

No timings here (they live in bench/scaling.py): work is counted as the lines of lockcheck's
own code that run (a line-event trace), and the shape is doubled; a linear pass about doubles
its count, a quadratic one quadruples it.  Regex and C-level work (which a line trace does not
see) is checked by running the shape at a size the quadratic code could not finish."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import lockcheck
from lockcheck import frontends
from lockcheck.engine import analyze_text, fix_text
from lockcheck.model import PartKind

PKG = Path(lockcheck.__file__).resolve().parent
# the shell frontend: every module of its package
SHELL_FILES = tuple(str(p) for p in sorted((PKG / "frontends" / "shell").glob("*.py")))
APPLY_PY = str(PKG / "fix" / "apply.py")


def work(fn, *args, files=SHELL_FILES) -> int:
    """Lines of ``files`` executed by ``fn(*args)``."""
    count = 0
    wanted = set(files)

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename in wanted else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(old)
    return count


def growth(make, n: int, files=SHELL_FILES, run=None) -> float:
    """Work at size 2n over work at size n."""
    run = run or (lambda text: frontends.parse("shell", "job.sh", text))
    small = work(run, make(n), files=files)
    big = work(run, make(2 * n), files=files)
    return big / small


# ----------------------------------------------------------------- value resolution


def doubling(n: int, step: str = "v=$v$$$v") -> str:
    # `$$` between the copies keeps the parts apart: the value's part count doubles per line
    return "#!/bin/bash\nv=/srv/locks/x\n" + f"{step}\n" * n + 'mkdir "$v.lock" || exit 1\n'


def test_doubling_assignments_do_not_double_the_work():
    assert growth(doubling, 8) < 2.5


def test_a_value_that_outgrows_a_path_stays_unknown():
    facts, _ = analyze_text("job.sh", doubling(60, "v=$v$v"), "shell")
    (acq,) = facts.acquires
    assert any(p.kind is PartKind.UNKNOWN for p in acq.path.parts)
    # a value that stays small is still resolved
    facts, _ = analyze_text("job.sh", doubling(3, "v=$v$v"), "shell")
    (acq,) = facts.acquires
    assert acq.path.is_literal
    assert acq.path.render() == "/srv/locks/x" * 8 + ".lock"


def test_many_references_in_one_word_stay_bounded():
    # each copy is under the bound, the word holding 20,000 of them is not
    def script(word: str) -> str:
        return f'#!/bin/bash\nv={"a" * 4000}\nw={word}\nmkdir "/srv/locks/$w.lock" || exit 1\n'

    facts, _ = analyze_text("job.sh", script("$v"), "shell")
    (acq,) = facts.acquires
    assert acq.path.render() == "/srv/locks/" + "a" * 4000 + ".lock"
    facts, _ = analyze_text("job.sh", script("$v" * 20000), "shell")
    (acq,) = facts.acquires
    assert [p.kind for p in acq.path.parts] == [PartKind.UNKNOWN]


def test_values_read_outside_a_resolution_are_not_charged_to_one():
    # `eval` reads variable values directly; that must not use up a resolution's budget
    text = (
        "#!/bin/bash\nv=" + "a" * 4000 + "\n" + "eval $v\n" * 40 + "mkdir /srv/l.lock || exit 1\n"
    )
    facts, _ = analyze_text("job.sh", text, "shell")
    assert not facts.parse_errors
    assert [a.path.render() for a in facts.acquires] == ["/srv/l.lock"]


# ----------------------------------------------------------------- uncalled functions


def uncalled_chain(n: int) -> str:
    # f0 calls f1 calls f2 ...; nothing calls f0: every one is walked as an uncalled function
    return "#!/bin/bash\n" + "".join(
        f"f{i}() {{ f{i + 1}; mkdir /srv/locks/l{i}.lock || return 1; }}\n" for i in range(n)
    )


def test_uncalled_functions_pass_is_linear():
    assert growth(uncalled_chain, 150) < 2.6


def many_functions(n: int) -> str:
    return (
        "#!/bin/bash\n"
        + "".join(f"f{i}() {{ echo {i}; }}\n" for i in range(n))
        + "".join(f"f{i}\n" for i in range(0, n, 7))
    )


def test_many_functions_pass_is_linear():
    assert growth(many_functions, 300) < 2.6


def big_helper_called_often(n: int) -> str:
    # a helper of n lines called n times: walking it at every call site is n * n
    body = "".join(f"  echo {i} >> /srv/log/job.log\n" for i in range(n))
    return "#!/bin/bash\nhelper() {\n" + body + "}\n" + "helper\n" * n


def test_inlining_helpers_at_call_sites_is_bounded():
    assert growth(big_helper_called_often, 60) < 2.6


# ----------------------------------------------------------------- mkdir work directories


def test_each_mkdir_reads_a_window_not_the_rest_of_the_file():
    # 3,000 work directories, then a 300,000-line here-doc: re-splitting the rest of the file
    # for every mkdir (as before) reads 900 million lines
    body = "".join(f"line {i}\n" for i in range(300_000))
    text = (
        "#!/bin/bash\n"
        + "".join(f"mkdir /srv/work/d{i}\n" for i in range(3000))
        + f"cat > /srv/work/list <<'EOF'\n{body}EOF\n"
        + "mkdir /srv/locks/job.lock || exit 1\n"
    )
    facts, findings = analyze_text("job.sh", text, "shell")
    assert "/srv/locks/job.lock" in {a.path.render() for a in facts.acquires}


def test_work_directory_detection_unchanged():
    text = "#!/bin/bash\nmkdir /srv/build/out || exit 1\ncd /srv/build/out\nmake\n"
    facts, _ = analyze_text("job.sh", text, "shell")
    assert not facts.acquires  # a directory the job works in is no lock


# ----------------------------------------------------------------- regexes on long lines

HOSTILE_SHELL = {
    # `$aa$aa...!` as a mkdir operand: exponential in the work-directory name test
    "mkdir-name": "#!/bin/bash\nmkdir " + "$aa" * 40 + "!\n",
    # `(( ... != 0 ))` alternative of the status test, on a line of 50,000 `((`
    "status-test": "#!/bin/bash\nmkdir /srv/l.lock\nif [ $? "
    + "((" * 50_000
    + " ]; then exit 1; fi\n",
    # many `stat` words after a lock: the inode re-check and age tests
    "stat-words": "#!/bin/bash\nexec 9>/srv/l.lock\nflock -n 9 || exit 1\necho "
    + "stat -L " * 15_000
    + "\n[ -e /srv/l.lock ] && echo "
    + "stat " * 20_000
    + "\n",
    # the OpenWrt `lock -u` test on 200,000 blank lines
    "blank-lines": "#!/bin/sh\nlock /var/lock/job.lock\n"
    + "\n" * 200_000
    + "lock -u /var/lock/job\n",
    # foreign-language check of a broken file with 100 KB lines
    "foreign-lines": "#!/bin/sh\n"
    + ("def " + "a" * 100_000 + "\n")
    + ("var " + "b" * 100_000 + "\n")
    + "echo 'unterminated\n",
}


def test_hostile_long_lines_complete():
    for name, text in HOSTILE_SHELL.items():
        analyze_text("job.sh", text, "shell")  # no hang, no exception
        assert name


def test_python2_gate_on_long_lines():
    for text in (
        "import fcntl\n" + "except " * 15_000 + "\n",
        "import fcntl\n" + "xprint a" * 40_000 + "\n",
    ):
        analyze_text("job.py", text, "python")


# ----------------------------------------------------------------- fix_text


def probes(n: int) -> str:
    # each line carries one safe fix of two edits (LCK301: append `.$$` to the probe name)
    return "#!/bin/bash\n" + "".join(
        f"mkdir /srv/state/.probe{i} && rmdir /srv/state/.probe{i}\n" for i in range(n)
    )


def test_fix_text_merging_is_n_log_n():
    def run(text):
        fix_text("job.sh", text, "shell")

    assert growth(probes, 200, files=(APPLY_PY,), run=run) < 2.6


def test_fix_text_applies_every_fix_once():
    result = fix_text("job.sh", probes(300), "shell")
    assert len(result.applied) == 300
    assert result.fixed == "#!/bin/bash\n" + "".join(
        f"mkdir /srv/state/.probe{i}.$$ && rmdir /srv/state/.probe{i}.$$\n" for i in range(300)
    )


# ----------------------------------------------------------------- globs with several **

GLOBS_PY = str(PKG / "globs.py")
DEEP = "**/" + "a/**/" * 4 + "b"  # five ** parts: O(n^5) steps for pathspec's regex


def deep_path(n: int) -> str:
    return "a/" * n + "c"  # almost matches at every placement, then fails on the last piece


def test_several_double_stars_match_in_linear_work():
    from lockcheck.globs import compile_spec

    spec = compile_spec([DEEP])

    def run(path):
        assert spec.match_file(path) is False

    assert growth(deep_path, 200, files=(GLOBS_PY,), run=run) < 2.3
    # the regex work is one anchored piece match per segment start: at a depth where the
    # backtracking regex needs ~10^13 steps (it took 4.5 s at depth 100) it is instant
    assert spec.match_file(deep_path(5000)) is False
    assert spec.match_file(deep_path(5000)[:-1] + "b") is True


# ----------------------------------------------------------------- bash -n


def test_bash_in_the_scanned_directory_never_runs(tmp_path):
    # a file tree-sitter-bash reads as broken makes the frontend ask `bash -n`; with an empty
    # or relative PATH entry (the working directory) that must not be the scanned tree's bash
    marker = tmp_path / "ran"
    fake = tmp_path / "bash"
    fake.write_text(f"#!/bin/sh\necho hostile > {marker}\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    script = tmp_path / "job.sh"
    script.write_text('#!/bin/bash\nmkdir /srv/l.lock || exit 1\necho "unterminated\n')
    real = os.path.dirname(sys.executable)
    for path in ("", ".", f":{real}:/usr/bin:/bin", f".:{real}:/usr/bin:/bin"):
        subprocess.run(
            [sys.executable, "-m", "lockcheck", "scan", "--isolated", "job.sh"],
            cwd=tmp_path,
            env={**os.environ, "PATH": path},
            capture_output=True,
            check=False,
        )
        assert not marker.exists(), f"PATH={path!r} ran the scanned directory's bash"


# ----------------------------------------------------------------- deep nesting


def test_deep_nesting_loses_only_what_is_too_deep():
    # 10,000 levels: what is nested that deep is not read, the rest of the file still is
    top = "#!/bin/bash\nexec 9>/srv/locks/job.lock\nflock -n 9 || exit 1\n"
    for depth in (300, 10_000):
        for deep in (
            "if true; then\n" * depth + "mkdir /tmp/x.lock || exit 1\n" + "fi\n" * depth,
            "x=" + "$(" * depth + "echo /tmp" + ")" * depth + '\nmkdir "$x.lock" || exit 1\n',
            "(" * depth + "mkdir /tmp/x.lock || exit 1" + ")" * depth + "\n",
            "{ " * depth + "mkdir /tmp/x.lock || exit 1;" + " }" * depth + "\n",
        ):
            facts, _ = analyze_text("job.sh", top + deep, "shell")
            if depth > 1000 and deep.startswith("{"):
                continue  # tree-sitter-bash itself reads 10,000 braces as one ERROR
            assert "/srv/locks/job.lock" in {a.path.render() for a in facts.acquires}, deep[:20]


def test_rewrites_of_a_file_with_many_locks_parse_it_a_bounded_number_of_times():
    """Each suggested rewrite is checked by parsing the whole rewritten file: a file with
    hundreds of locks made the suggestions quadratic.  One file gets at most
    MAX_REWRITE_CHECKS checked rewrites (the rest keep their advice), and the original is parsed
    once."""
    from lockcheck.fix import suggest

    text = "#!/bin/bash\n" + "".join(
        f'mkdir "/srv/jobs/j{i}.lock" || {{ logger busy; exit 75; }}\nrun-job {i}\n'
        for i in range(300)
    )
    suggest._shell_ok(text, [])  # builds the parser
    real = suggest._BASH_PARSER
    calls = 0

    class Counting:
        def parse(self, src):
            nonlocal calls
            calls += 1
            return real.parse(src)

    suggest._BASH_PARSER = Counting()
    try:
        facts, findings = analyze_text("many.sh", text, "shell")
    finally:
        suggest._BASH_PARSER = real
    assert sum(f.code == "LCK101" for f in findings) == 300
    assert calls <= suggest.MAX_REWRITE_CHECKS + 1


def test_python_rewrites_of_a_file_with_many_locks_stay_linear():
    """The same bound for Python: each rewrite was checked with two whole-file parses."""
    from test_hardening_io import many_python_locks

    def run(text):
        return analyze_text("big.py", text, "python")

    facts, findings = run(many_python_locks(80))
    assert sum(f.code == "LCK502" for f in findings) == 80
    fix_py = str(PKG / "fix" / "suggest.py")
    assert growth(many_python_locks, 60, files=(fix_py,), run=run) < 2.6
