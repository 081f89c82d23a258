"""The JavaScript frontend's text tests (``frontends/javascript/gate.py``) must never hide a
lock fact: scripts whose only lock anchor is one of the constructs the test looks for are
still analysed, and a file with a syntax error still gets its LCK000.  Minified and bundled
files are generated code: not read.  No timing here (timings live in bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from helpers import write

from lockcheck.engine import analyze_text


def found(src: str, path: str = "/srv/jobs/job.js") -> list[tuple[str, int]]:
    _facts, findings = analyze_text(path, textwrap.dedent(src).lstrip("\n"), "javascript")
    return [(f.code, f.span.line) for f in findings]


# no lock-like word anywhere: the clash code is the only anchor
MKDIR_EEXIST = """
    const fs = require("fs");
    const GUARD = "/var/lib/report/in-progress";
    try {
      fs.mkdirSync(GUARD);
    } catch (e) {
      if (e.code === "EEXIST") {
        console.log("another report is being built");
        process.exit(0);
      }
      throw e;
    }
    buildReport();
    fs.rmdirSync(GUARD);
"""


def test_eexist_guard_without_lock_words_is_analysed():
    got = found(MKDIR_EEXIST)
    assert ("LCK101", 4) in got and ("LCK401", 8) in got


def test_same_code_without_the_clash_test_has_no_lock():
    # the negative: no EEXIST test, the mkdir is a plain create
    src = MKDIR_EEXIST.replace('if (e.code === "EEXIST") {', "if (e) {")
    assert [c for c, _ in found(src) if c != "LCK301"] == []


def test_probe_without_lock_words_is_analysed():
    src = """
        const fs = require("fs");
        fs.writeFileSync("/srv/share/.probe", "");
        fs.unlinkSync("/srv/share/.probe");
        copyTree("/srv/share");
    """
    assert ("LCK301", 2) in found(src)


def test_stored_pid_signalled_without_lock_words_is_analysed():
    src = """
        const fs = require("fs");
        const prev = Number(fs.readFileSync("/var/run/exporter/owner", "utf8"));
        process.kill(prev, "SIGTERM");
    """
    assert ("LCK108", 3) in found(src)


def test_a_file_without_lock_code_is_not_judged_even_when_broken():
    # as for Python: a syntax error in a file that cannot hold a lock is the JavaScript
    # tooling's (the grammars lag the language: import attributes, `accessor`)
    clean = """
        const path = require("path");
        function render(items) { return items.map((i) => path.basename(i)).join(",\\n"); }
        module.exports = { render };
    """
    assert found(clean) == []
    assert found(clean.replace("join(", "join(((")) == []
    assert (
        found('import data from "./d.json" assert { type: "json" };\nexport default data;\n') == []
    )


def test_a_broken_lock_script_gets_its_lck000_and_noqa_suppresses_it():
    src = """
        const fs = require("fs");
        function broken( {
        fs.openSync("/var/lib/report/report.lock", "wx");
    """
    assert ("LCK000", 2) in found(src)
    assert "LCK000" not in {
        c for c, _ in found(src.replace("broken( {", "broken( { // noqa: LCK000"))
    }


LOCK_SCRIPT = """
    const fs = require("fs");
    try { fs.openSync("/var/lib/report/report.lock", "wx"); }
    catch (e) { console.log("busy"); process.exit(0); }
"""


def _scan(tmp_path, *paths) -> set[tuple[str, str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {(r["filename"].rsplit("/", 1)[-1], r["code"]) for r in json.loads(proc.stdout)}


def test_cli_minified_and_bundled_files_are_not_read(tmp_path):
    code = textwrap.dedent(LOCK_SCRIPT).strip().replace("\n", " ")
    filler = "var a" + "".join(f",v{i}=function(x){{return x+{i}}}" for i in range(6000)) + ";"
    write(tmp_path, "dist/app.min.js", code + "\n")
    write(tmp_path, "dist/bundle.js", filler + code + "\n")
    write(tmp_path, "jobs/report.js", textwrap.dedent(LOCK_SCRIPT).lstrip("\n"))
    rows = _scan(tmp_path, tmp_path)
    assert ("report.js", "LCK101") in rows and ("report.js", "LCK401") in rows
    assert not any(name in ("app.min.js", "bundle.js") for name, _ in rows)


def test_cli_long_file_of_short_lines_is_read(tmp_path):
    # the negative: as long as the bundle, but hand-written lines (not minified)
    filler = "".join(f"function f{i}(x) {{ return x + {i}; }}\n" for i in range(3000))
    write(tmp_path, "jobs/big.js", filler + textwrap.dedent(LOCK_SCRIPT).lstrip("\n"))
    assert ("big.js", "LCK101") in _scan(tmp_path, tmp_path / "jobs" / "big.js")


def test_destructured_imports_still_reach_the_analysis():
    # no `fs.` and no `process.kill` in the text: the imports are the only Node anchors
    src = """
        const { kill } = require("process");
        const { readFileSync } = require("node:fs");
        const prev = Number(readFileSync("/var/run/exporter/owner", "utf8"));
        kill(prev, "SIGTERM");
    """
    assert ("LCK108", 4) in found(src)


def test_lock_words_without_node_apis_have_no_findings():
    # browser code: lock-like names, no fs and no process.kill - nothing to analyse
    src = """
        function zoom(chart) {
          if (chart.zoomLock || chart.isRunning) { return false; }
          chart.minLocked = true;
          window.open("/help");
        }
    """
    assert found(src) == []
