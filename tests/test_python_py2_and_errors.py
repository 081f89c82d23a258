"""Python 2 code, syntax errors and pathological sizes, through the public surface.

tree-sitter-python reads Python 2 and broken files: their lock code is analysed like any
other (RULES.md, LCK000: "findings outside the broken region are still reported").
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest

from lockcheck.engine import analyze_text

LEGACY_JOB = textwrap.dedent(
    """\
    {shebang}
    import os, sys

    LOCK = "/var/lib/nightly/sync.lock"

    try:
        os.mkdir(LOCK)
    except (OSError, IOError), e:
        print "sync already running:", e
        sys.exit(0)
    try:
        print >>sys.stderr, "syncing"
    finally:
        os.rmdir(LOCK)
    """
)


def codes(src: str, path: str = "job.py") -> list[tuple[str, int]]:
    return [(f.code, f.span.line) for f in analyze_text(path, src, "python")[1]]


def test_python2_job_is_analysed_and_gets_lck000_at_its_first_python2_statement():
    got = codes(LEGACY_JOB.format(shebang="#!/usr/bin/env python"))
    assert ("LCK000", 8) in got  # `except (OSError, IOError), e:`
    assert ("LCK101", 7) in got  # the mkdir lock
    assert ("LCK401", 10) in got  # the busy run exits 0


def test_python2_shebang_means_no_lck000_but_the_same_lock_findings():
    py2 = codes(LEGACY_JOB.format(shebang="#!/usr/bin/python2.7"))
    py = codes(LEGACY_JOB.format(shebang="#!/usr/bin/env python"))
    assert "LCK000" not in {c for c, _ in py2}
    assert py2 == [x for x in py if x[0] != "LCK000"]


@pytest.mark.parametrize(
    ("stmt", "what"),
    [
        ("x = `os.getpid()`", "backticks"),
        ("if os.getpid() <> 1: pass", "<>"),
        ("os.chmod('/tmp', 0777)", "0777"),
        ("NAME = ur'nightly'", "ur"),
        ("exec 'pass'", "exec"),
        ("raise SystemExit, 'no'", "raise"),
    ],
)
def test_each_python2_token_is_lck000_on_its_line(stmt, what):
    src = f"import fcntl, os\n\n{stmt}\nfcntl.flock(3, fcntl.LOCK_EX)\n"
    facts, findings = analyze_text("job.py", src, "python")
    lck000 = [f for f in findings if f.code == "LCK000"]
    assert [f.span.line for f in lck000] == [3], what
    assert "Python 2" in lck000[0].message
    assert len(facts.acquires) == 1  # the rest is still analysed


def test_python3_lookalikes_are_not_python2():
    src = (
        "import fcntl\nx = 0o777 + 0 + 00\ns = rb'x' + u'y' + r'z'\nfcntl.flock(3, fcntl.LOCK_EX)\n"
    )
    assert "LCK000" not in {c for c, _ in codes(src)}


def test_python2_file_reads_as_open():
    src = textwrap.dedent(
        """\
        import fcntl
        fh = file("/home/ops/Dropbox/jobs/report.lock", "w")
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print "locked"
        """
    )
    facts, _findings = analyze_text("job.py", src, "python")
    assert [a.path.render() for a in facts.acquires] == ["/home/ops/Dropbox/jobs/report.lock"]


def test_syntax_error_keeps_the_findings_of_the_intact_parts():
    src = textwrap.dedent(
        """\
        import os, sys

        def report(:
            pass

        try:
            os.mkdir("/var/lib/report.lock")
        except OSError:
            sys.exit(0)
        """
    )
    facts, findings = analyze_text("job.py", src, "python")
    got = [(f.code, f.span.line) for f in findings]
    assert got[0] == ("LCK000", 3)
    assert facts.parse_errors[0].message.startswith("syntax error")
    assert ("LCK101", 7) in got and ("LCK401", 9) in got


def test_spans_are_character_offsets_in_non_ascii_text():
    src = 'import os, sys\n# Überprüfung — «nightly» 🚀\ntry:\n    os.mkdir("/var/lib/ü.lock")\nexcept OSError:\n    sys.exit()\n'
    findings = analyze_text("job.py", src, "python")[1]
    f = next(f for f in findings if f.code == "LCK401")
    assert src[f.span.start : f.span.end] == "sys.exit()"
    assert (f.span.line, f.span.col) == (6, 5)
    g = next(f for f in findings if f.code == "LCK101")
    assert src[g.span.start : g.span.end] == 'os.mkdir("/var/lib/ü.lock")'


GENERATORS = {
    "lambda": "'import fcntl\\nf = ' + 'lambda: ' * 10000 + 'fcntl.flock(3, fcntl.LOCK_EX)\\n'",
    "not": "'import fcntl\\nx = ' + 'not ' * 10000 + 'fcntl.flock(3, fcntl.LOCK_EX)\\n'",
    "elif": (
        "'import fcntl, os\\nif x == 0:\\n    pass\\n' + ''.join("
        "f'elif x == {i}:\\n    os.remove(\"/tmp/f{i}\")\\n' for i in range(1, 20001))"
    ),
    "list": "'import fcntl\\nDATA = [' + ', '.join(str(i) for i in range(170000)) + ']\\n'",
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_pathological_sizes_take_bounded_time_and_memory(name):
    # in a child process: a C stack overflow would kill it, not the test run
    probe = textwrap.dedent(
        f"""
        import resource, time
        from lockcheck.engine import analyze_text
        src = {GENERATORS[name]}
        t = time.monotonic()
        facts, findings = analyze_text("deep.py", src, "python")
        took = time.monotonic() - t
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(len(src), round(took, 1), rss, sorted({{f.code for f in findings}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    size, took, rss, found = out.stdout.split(" ", 3)
    assert int(size) > 40_000
    assert float(took) < 120 and int(rss) < 1500, out.stdout
    # CPython refuses some of them (too deep, too complex): LCK000 at most, never a crash
    assert set(ast.literal_eval(found)) <= {"LCK000"}, out.stdout


REPORT_JOB = textwrap.dedent(
    """\
    #!/usr/bin/env python
    {header}
    import sys

    def main(path):
        for line in open(path):
            print line.strip(){noqa}

    if __name__ == "__main__":
        main(sys.argv[1])
    """
)


@pytest.mark.parametrize(
    ("header", "noqa", "expected"),
    [
        ("", "", [("LCK000", 7)]),
        ("# lockcheck: disable-file=LCK000", "", []),
        ("", "  # noqa: LCK000", []),
    ],
)
def test_python2_code_without_lock_words_keeps_its_suppression_comments(header, noqa, expected):
    # such a file is read only for its LCK000 (no analysis tree is built): its comments
    # must still be read, or a suppression comment would stop working
    assert codes(REPORT_JOB.format(header=header, noqa=noqa)) == expected
