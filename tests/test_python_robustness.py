"""Python frontend: pre-filter, libcst never imported, syntax errors and pathological files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from lockcheck.engine import InternalError, analyze_text
from lockcheck.frontends import python as pyfront


def test_file_without_lock_tokens_never_imports_libcst(tmp_path):
    script = tmp_path / "report.py"
    script.write_text(
        textwrap.dedent(
            """
            import csv
            import sys

            def main(argv):
                with open(argv[1]) as fh:
                    rows = list(csv.reader(fh))
                print(len(rows))

            if __name__ == "__main__":
                main(sys.argv)
            """
        )
    )
    probe = textwrap.dedent(
        f"""
        import sys
        from lockcheck.engine import InternalError, analyze_text
        path = {str(script)!r}
        facts, findings = analyze_text(path, open(path).read(), "python")
        assert findings == [] and facts.language == "python"
        print("libcst" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_plain_scan_of_a_lock_taking_file_never_imports_libcst(tmp_path):
    # the analysis reads tree-sitter's tree: a text-format scan with findings never pays
    # libcst's import
    script = tmp_path / "job.py"
    script.write_text(
        "import os, sys\ntry:\n    os.mkdir('/var/lib/nightly.lock')\nexcept OSError:\n"
        "    sys.exit()\n"
    )
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lockcheck", "scan", "--isolated", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "LCK101" in out.stdout and "LCK401" in out.stdout, out.stdout + out.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] == "libcst"}
    # the same file in-process (the CLI may analyse in a worker): read by tree-sitter
    probe = (
        "import sys\nfrom lockcheck.engine import InternalError, analyze_text\n"
        f"src = open({str(script)!r}).read()\n"
        "_facts, findings = analyze_text('job.py', src, 'python')\n"
        "print(sorted({f.code for f in findings}),"
        " any(m.split('.')[0] == 'tree_sitter_python' for m in sys.modules),"  # its grammar
        " any(m.split('.')[0] == 'libcst' for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['LCK101', 'LCK401'] True False", out.stdout + out.stderr


# Ordinary code that uses the same words and calls as lock code: none of it holds a lock.
LOCK_FREE = {
    "threading lock, list.remove": (
        "import threading\nlock = threading.Lock()\nitems = [1]\nitems.remove(1)\n"
    ),
    "subprocess kill": (
        "import subprocess\np = subprocess.Popen(['sleep', '9'])\np.kill()\np.wait()\n"
    ),
    "cleanup of an output file": (
        "import os\nout = 'report.csv'\nif os.path.exists(out):\n    os.remove(out)\n"
    ),
    "makedirs exist_ok in try": (
        "import os\ntry:\n    os.makedirs('out', exist_ok=True)\nexcept OSError:\n    pass\n"
    ),
    "axis named x": "import math\nfor axis in ('x', 'y'):\n    print(axis, math.pi)\n",
    "open for reading in try": "try:\n    fh = open('cfg.ini')\nexcept OSError:\n    fh = None\n",
}

# The smallest form of each anchor: each must reach the analysis and give its fact.
ANCHORED = {
    "flock": ("import fcntl\nfh = open('/tmp/j.lock', 'w')\nfcntl.flock(fh, fcntl.LOCK_EX)\n"),
    "x mode via a variable": (
        "import sys\nMODE = 'x'\ntry:\n    open('/var/lib/j.lock', MODE)\n"
        "except FileExistsError:\n    sys.exit(0)\n"
    ),
    "mkdir in try": (
        "import os, sys\ntry:\n    os.mkdir('/var/lib/j.lck')\nexcept OSError:\n    sys.exit(0)\n"
    ),
    "os alias kill": ("import os as o\npid = int(open('/run/j.pid').read())\no.kill(pid, 15)\n"),
    "removal of a traced lock name": (
        "import os\nBASE = '/tmp'\nNAME = 'nightly.lock'\n\ndef clean(p):\n"
        "    os.unlink(p)\n\nclean(os.path.join(BASE, NAME))\n"
    ),
    "probe": "import os\nopen('/srv/share/probe', 'w').close()\nos.remove('/srv/share/probe')\n",
}


def _libcst_imported(src: str) -> bool:
    probe = textwrap.dedent(
        f"""
        import sys
        from lockcheck.engine import InternalError, analyze_text
        analyze_text("job.py", {src!r}, "python")
        print("libcst" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip() == "True"


@pytest.mark.parametrize("name", sorted(LOCK_FREE))
def test_ordinary_code_with_lock_words_is_quiet_and_never_imports_libcst(name):
    src = LOCK_FREE[name]
    facts, findings = analyze_text("job.py", src, "python")
    assert findings == [] and facts.acquires == []
    assert not _libcst_imported(src)


@pytest.mark.parametrize("name", sorted(ANCHORED))
def test_each_anchor_reaches_the_analysis(name):
    facts, findings = analyze_text("job.py", ANCHORED[name], "python")
    assert facts.acquires or facts.kills or facts.removals or facts.probes, name
    assert findings, name


def test_python2_file_is_a_parse_error_with_its_line_and_its_lock_findings():
    src = 'import os\nprint "hello"\nos.remove("/tmp/x.lock")\n'
    facts, findings = analyze_text("old.py", src, "python")
    # LCK000 at the print statement; the removal of a lock this file never takes is still
    # reported (RULES.md: Python 2 code is analysed like Python 3)
    assert [(f.code, f.span.line) for f in findings] == [("LCK000", 2), ("LCK107", 3)]
    assert "\n" not in findings[0].message and "Python 2" in findings[0].message


@pytest.mark.parametrize(
    ("src", "line"),
    [
        # a legacy cron job with nothing lock-related: python3 cannot run it at all
        ("import sys\n\nfor arg in sys.argv[1:]:\n    print arg\n", 4),
        (
            "import urllib2\n\ntry:\n    urllib2.urlopen('http://h/ping')\n"
            "except urllib2.URLError, e:\n    sys.stderr.write(str(e))\n",
            5,
        ),
        ("def check(a):\n    if a.ndim != 2:\n        raise ValueError, 'two dimensions'\n", 3),
        ("try:\n    n = int(input())\nexcept ValueError, e :\n    n = 0\n", 3),
    ],
)
def test_python2_job_without_lock_code_is_still_lck000(src, line):
    _facts, findings = analyze_text("ping.py", src, "python")
    assert [(f.code, f.span.line) for f in findings] == [("LCK000", line)]


def test_python3_file_that_only_mentions_print_statements_is_quiet():
    src = 'HELP = """\nprint "x" was Python 2\n"""\nprint(HELP)\n'
    assert analyze_text("doc.py", src, "python")[1] == []


def test_syntax_error_line_and_message():
    src = textwrap.dedent(
        """
        import fcntl
        import sys

        def main(:
            fcntl.flock(3, fcntl.LOCK_EX)
        """
    ).lstrip("\n")
    facts, findings = analyze_text("broken.py", src, "python")
    assert [(f.code, f.span.line) for f in findings] == [("LCK000", 4)]
    assert facts.parse_errors[0].message.startswith("syntax error")


def test_only_shebang_and_empty_files():
    for src in ("#!/usr/bin/env python3\n", "", "#!/usr/bin/python\n# pid lock\n", "\n\n"):
        facts, findings = analyze_text("x.py", src, "python")
        assert findings == []
        assert facts.acquires == []


def test_null_bytes_are_a_parse_error():
    facts, findings = analyze_text("x.py", "import os\x00\nos.remove('/tmp/a.lock')\n", "python")
    assert [f.code for f in findings] == ["LCK000"]


@pytest.mark.parametrize(
    "src",
    [
        "import fcntl\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "import fcntl\nx = " + "+".join(["a"] * 50000) + "\n",
        "import fcntl\nx = " + "[" * 150 + "]" * 150 + "\n",
        "import fcntl\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\nprint 'x'\n",
        "import fcntl\n" + "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n",
    ],
    ids=["parens", "binop-chain", "lists-150", "parens-and-py2", "deep-indent"],
)
def test_deeply_nested_files_do_not_crash_or_hang(src):
    t = time.monotonic()
    facts, findings = analyze_text("deep.py", src, "python")
    assert time.monotonic() - t < 30
    assert {f.code for f in findings} <= {"LCK000"}
    assert facts.acquires == []


def test_deep_nesting_in_a_subprocess_does_not_segfault():
    probe = (
        "from lockcheck.engine import InternalError, analyze_text\n"
        "src = 'import fcntl\\nx = ' + '(' * 20000 + '1' + ')' * 20000 + '\\n'\n"
        "f, fs = analyze_text('deep.py', src, 'python')\n"
        "print([x.code for x in fs])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['LCK000']"


def test_huge_generated_file_is_skipped_quickly():
    src = "import os\nDATA = [\n" + "    {'pid': 1, 'name': 'x'},\n" * 100000 + "]\n"
    assert len(src) > pyfront.MAX_CHARS
    t = time.monotonic()
    facts = pyfront.parse("data.py", src)
    assert time.monotonic() - t < 2
    assert facts.acquires == [] and facts.parse_errors == []


def test_an_analysis_bug_is_the_files_internal_error_not_an_empty_result(monkeypatch):
    # a bug must not read as "no findings": the engine names it, and the runner reports it
    # as that file's one-line error while the other files go on (tests/test_cli_scan.py)
    def boom(self):
        raise RuntimeError("analysis bug")

    monkeypatch.setattr(pyfront._Analyzer, "run", boom)
    src = "import os, sys\ntry:\n    os.mkdir('/tmp/x.lock')  # keep\nexcept OSError:\n    sys.exit()\n"
    with pytest.raises(InternalError, match="python frontend.*analysis bug"):
        analyze_text("x.py", src, "python")


def test_crlf_line_endings():
    src = (
        "import os\r\ntry:\r\n    os.mkdir('/var/lib/a.lock')\r\nexcept OSError:\r\n    exit(0)\r\n"
    )
    facts, findings = analyze_text("crlf.py", src, "python")
    assert [(f.code, f.span.line) for f in findings] == [("LCK101", 3), ("LCK401", 5)]
    f = findings[1]
    assert src[f.span.start : f.span.end] == "exit(0)"


def test_newer_syntax_than_the_interpreter_is_not_flagged_when_libcst_reads_it():
    # a match statement is valid for both; the point is that valid files give no LCK000
    src = textwrap.dedent(
        """
        import os, sys
        match sys.argv[1:]:
            case ["--unlock"]:
                os.remove("/var/lib/app/app.lock")
            case _:
                pass
        """
    )
    _facts, findings = analyze_text("m.py", src, "python")
    assert "LCK000" not in {f.code for f in findings}


def test_byte_order_mark_keeps_offsets():
    src = "\ufeffimport os, sys\ntry:\n    os.mkdir('/var/lib/a.lock')\nexcept OSError:\n    sys.exit()\n"
    facts, findings = analyze_text("bom.py", src, "python")
    f = next(f for f in findings if f.code == "LCK401")
    assert src[f.span.start : f.span.end] == "sys.exit()"
    assert f.span.line == 5 and f.span.col == 5


def test_call_site_fan_out_is_bounded():
    # every function passes its parameter on to the next one and is called from the module:
    # resolving a path through parameters must not explode
    n = 120
    parts = ["import os, sys, fcntl\n"]
    for i in range(n):
        parts.append(
            f"\ndef job{i}(path, k):\n"
            f"    try:\n        os.mkdir(path + '.lock')\n    except FileExistsError:\n"
            f"        return k\n"
            f"    return job{(i + 1) % n}(path, k + 1)\n\n"
            f"job{i}('/var/lib/x{i}', 0)\n"
        )
    src = "".join(parts)
    t = time.monotonic()
    facts = pyfront.parse("fan.py", src)
    assert time.monotonic() - t < 20
    assert len(facts.acquires) >= n


def test_text_libcst_does_not_reproduce_still_gets_exact_spans():
    # libcst regenerates `except OSError :` without the blank; the offsets must still be
    # the file's own
    src = (
        "import os, sys\n"
        "try:\n"
        "    os.mkdir('/srv/jobs/nightly.lck')\n"
        "except FileExistsError :\n"
        "    sys.exit(0)\n"
    )
    _facts, findings = analyze_text("job.py", src, "python")
    got = {(f.code, f.span.line, f.span.col, src[f.span.start : f.span.end]) for f in findings}
    assert ("LCK401", 5, 5, "sys.exit(0)") in got
    assert ("LCK101", 3, 5, "os.mkdir('/srv/jobs/nightly.lck')") in got


def test_the_analysis_gives_the_collector_back_as_it_found_it():
    # the frontend pauses the cyclic collector while it builds a file's trees (issue 11):
    # an embedding program gets it back enabled, or still disabled if it had turned it off,
    # also when the analysis of the file fails
    import gc

    job = (
        "import fcntl, sys\n"
        "fh = open('/tmp/nightly.lock', 'w')\n"
        "try:\n"
        "    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except OSError:\n"
        "    sys.exit(0)\n"
    )
    assert gc.isenabled()
    facts, _findings = analyze_text("job.py", job, "python")
    assert facts.acquires and gc.isenabled()
    broken = "import fcntl\nfcntl.flock(open('/tmp/x.lock', 'w'), fcntl.LOCK_EX\n"
    analyze_text("broken.py", broken, "python")
    assert gc.isenabled()
    gc.disable()
    try:
        analyze_text("job.py", job, "python")
        assert not gc.isenabled()
    finally:
        gc.enable()
