"""Node.js frontend (tree-sitter-javascript / -typescript): each rule in several shapes, each
beside a negative, through analyze_text; the CLI on .js/.mjs/.ts files and shebangs; the
field report's lock module and task rewritten."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import write

from lockcheck.engine import analyze_text
from lockcheck.frontends import language_of


def found(src: str, path: str = "/srv/jobs/job.js") -> list[tuple[str, int]]:
    _facts, findings = analyze_text(path, textwrap.dedent(src).lstrip("\n"), "javascript")
    return [(f.code, f.span.line) for f in findings]


def codes(src: str, path: str = "/srv/jobs/job.js") -> set[str]:
    return {c for c, _ in found(src, path)}


WX_EXIT0 = """
    const fs = require("fs");
    const LOCK = "/var/lib/report/report.lock";
    try {
      fs.openSync(LOCK, "wx");
    } catch (e) {
      console.log("busy");
      process.exit(0);
    }
    try { work(); } finally { fs.unlinkSync(LOCK); }
"""

FLOCK_GOOD = """
    const fs = require("fs");
    const { flockSync } = require("fs-ext");
    const fd = fs.openSync("/var/lib/report/report.lock", "a");
    try {
      flockSync(fd, "exnb");
    } catch (e) {
      if (e.code === "EAGAIN") { console.error("busy"); process.exit(75); }
      throw e;
    }
    work();
"""


# --------------------------------------------------------------------------- LCK101 / LCK102


@pytest.mark.parametrize(
    "src, line",
    [
        (WX_EXIT0, 4),
        (
            """
            import { openSync as grab } from "node:fs";
            try { grab("/var/lib/job/job.lock", "wx"); } catch { process.exit(3); }
            """,
            2,
        ),
        (
            """
            const fsp = require("fs").promises;
            async function main() {
              try {
                await fsp.open("/var/lib/job/job.lock", "wx");
              } catch (err) {
                return;
              }
            }
            main();
            """,
            4,
        ),
        (
            """
            import { open } from "node:fs/promises";
            try { await open("/var/lib/job/run.lock", "ax"); } catch { process.exit(2); }
            """,
            2,
        ),
        (
            """
            const fs = require("fs");
            try {
              fs.writeFileSync("/var/lib/job/job.lock", String(process.pid), { flag: "wx" });
            } catch (e) { process.exit(1); }
            """,
            3,
        ),
        (
            """
            const fs = require("fs");
            const { O_CREAT, O_EXCL, O_WRONLY } = fs.constants;
            try {
              fs.openSync("/var/lib/job/job.lock", fs.constants.O_CREAT | fs.constants.O_EXCL);
            } catch (e) { process.exit(1); }
            """,
            4,
        ),
        (
            """
            const fs = require("fs");
            try {
              fs.mkdirSync("/var/lib/job/job.lck");
            } catch (e) {
              if (e.code === "EEXIST") { process.exit(1); }
              throw e;
            }
            """,
            3,
        ),
        (
            """
            const fs = require("fs");
            fs.open("/var/lib/job/job.lock", "wx", (err, fd) => {
              if (err) { console.error("busy"); process.exit(1); }
              work(fd);
            });
            """,
            2,
        ),
    ],
)
def test_lck101_exclusive_creates(src, line):
    assert ("LCK101", line) in found(src)


@pytest.mark.parametrize(
    "src",
    [
        FLOCK_GOOD,
        # an exclusive create of output with no guard that skips: not a lock
        """
        const fs = require("fs");
        fs.writeFileSync("/srv/out/report.csv", data, { flag: "wx" });
        """,
        # a mkdir whose failure is not a busy branch
        """
        const fs = require("fs");
        fs.mkdirSync("/srv/out/cache");
        """,
        # a local module named like fs is not fs
        """
        const fs = require("./my-fs");
        try { fs.openSync("/var/lib/job/job.lock", "wx"); } catch (e) { process.exit(1); }
        """,
    ],
)
def test_lck101_negatives(src):
    assert "LCK101" not in codes(src)


def test_lck102_onedrive_via_env():
    src = """
        const fs = require("fs");
        const path = require("path");
        const L = path.join(process.env.OneDrive, "jobs", "sync.lock");
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(1); }
    """
    assert ("LCK102", 4) in found(src)
    assert "LCK101" not in codes(src)
    local = src.replace("process.env.OneDrive", '"/var/lib"')
    assert "LCK102" not in codes(local) and "LCK101" in codes(local)


def test_lck102_home_dropbox():
    src = """
        const fs = require("fs");
        const os = require("os");
        const L = `${os.homedir()}/Dropbox/state/run.lock`;
        try { fs.mkdirSync(L); } catch (e) { process.exit(1); }
    """
    assert ("LCK102", 4) in found(src)


# --------------------------------------------------------------------------- LCK103


def test_lck103_exists_then_write():
    src = """
        const fs = require("fs");
        const LOCK = "/var/lib/job/job.pid";
        if (fs.existsSync(LOCK)) {
          console.log("running");
          process.exit(1);
        }
        fs.writeFileSync(LOCK, String(process.pid));
        try { work(); } finally { fs.unlinkSync(LOCK); }
    """
    assert ("LCK103", 7) in found(src)


def test_lck103_negated_test():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        if (!fs.existsSync(L)) {
          fs.writeFileSync(L, "");
          work();
          fs.unlinkSync(L);
        }
    """
    assert ("LCK103", 4) in found(src)


def test_lck103_not_for_run_once_marker():
    src = """
        const fs = require("fs");
        const M = "/var/lib/job/initialised";
        if (!fs.existsSync(M)) {
          setup();
          fs.writeFileSync(M, "done");
        }
    """
    assert "LCK103" not in codes(src)


# --------------------------------------------------------------------------- LCK105 / 106 / 108


PID_SCRIPT = """
    const fs = require("fs");
    const PIDFILE = "/var/run/job/job.pid";
    function alive(pid) {
      try { process.kill(pid, 0); return true; } catch (e) { return false; }
    }
    if (fs.existsSync(PIDFILE)) {
      const old = parseInt(fs.readFileSync(PIDFILE, "utf8"), 10);
      if (alive(old)) { process.exit(1); }
      fs.unlinkSync(PIDFILE);
    }
"""


def test_lck105_and_lck106_remove_after_dead_holder():
    got = found(PID_SCRIPT)
    assert ("LCK105", 4) in got
    assert ("LCK106", 9) in got


def test_lck105_not_for_own_pid():
    src = """
        const child = require("child_process").spawn("x");
        try { process.kill(child.pid, 0); } catch (e) { console.log("gone"); }
    """
    assert "LCK105" not in codes(src)


def test_lck108_sigterm_stored_pid():
    src = """
        const fs = require("fs");
        const pid = Number(fs.readFileSync("/var/run/job.pid", "utf8"));
        process.kill(pid, "SIGTERM");
    """
    assert ("LCK108", 3) in found(src)
    assert "LCK108" not in codes(src.replace('"SIGTERM"', "0"))


def test_lck108_default_signal():
    src = """
        const fs = require("fs");
        process.kill(+fs.readFileSync("/var/run/job.pid", "utf8"));
    """
    assert ("LCK108", 2) in found(src)


def test_lck106_proper_lockfile_and_npm_lockfile_stale():
    src = """
        const lockfile = require("proper-lockfile");
        async function main() {
          try {
            await lockfile.lock("/var/lib/job/data", { retries: 0 });
          } catch (e) {
            process.exit(75);
          }
        }
        main();
    """
    got = found(src)
    assert ("LCK101", 4) in got and ("LCK106", 4) in got
    npm = """
        const lockFile = require("lockfile");
        lockFile.lock("/var/lib/job/job.lock", { stale: 60000 }, (err) => {
          if (err) { process.exit(75); }
        });
    """
    assert {"LCK101", "LCK106"} <= codes(npm)
    assert "LCK106" not in codes(npm.replace("{ stale: 60000 }", "{}"))


# --------------------------------------------------------------------------- LCK109


def test_lck109_recursive_mkdir_as_test():
    src = """
        const fs = require("fs");
        try {
          fs.mkdirSync("/var/lib/job/job.lock", { recursive: true });
        } catch (e) {
          if (e.code === "EEXIST") process.exit(1);
        }
    """
    got = found(src)
    assert ("LCK109", 3) in got and "LCK101" not in codes(src)
    assert "LCK109" not in codes(src.replace("{ recursive: true }", "{}"))


def test_lck109_w_open_with_eexist_catch():
    src = """
        const fs = require("fs");
        try { fs.openSync("/var/lib/job/job.lock", "w"); }
        catch (e) { if (e.code === "EEXIST") process.exit(1); }
    """
    assert ("LCK109", 2) in found(src)
    assert "LCK109" not in codes(src.replace('"w"', '"wx"'))


def test_recursive_mkdir_alone_is_not_a_lock():
    assert (
        codes('const fs = require("fs");\nfs.mkdirSync("/var/lib/x", {recursive: true});\n')
        == set()
    )


# --------------------------------------------------------------------------- LCK201


def test_lck201_fs_ext_flock_file_removed_in_exit_handler():
    src = """
        const fs = require("fs");
        const { flockSync } = require("fs-ext");
        const L = "/var/lib/job/job.lock";
        const fd = fs.openSync(L, "a");
        flockSync(fd, "exnb");
        process.on("exit", () => { fs.unlinkSync(L); });
        work();
    """
    assert ("LCK201", 6) in found(src)
    assert "LCK201" not in codes(FLOCK_GOOD)


# --------------------------------------------------------------------------- LCK202 / LCK203


def test_lck202_release_only_on_normal_path():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(75); }
        work();
        fs.unlinkSync(L);
    """
    assert ("LCK202", 3) in found(src)
    good = src.replace("fs.unlinkSync(L);", "").replace(
        "work();", "try { work(); } finally { fs.unlinkSync(L); }"
    )
    assert "LCK202" not in codes(good)


def test_lck202_exit_handler_is_a_release_on_every_path():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(75); }
        process.on("exit", () => fs.unlinkSync(L));
        work();
    """
    assert "LCK202" not in codes(src) and "LCK203" not in codes(src)


def test_lck202_signal_handler_alone_is_not_every_path():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(75); }
        process.on("SIGTERM", () => { fs.unlinkSync(L); process.exit(1); });
        work();
    """
    assert ("LCK202", 3) in found(src)


def test_lck203_exit_handler_before_acquire():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        process.on("exit", () => fs.unlinkSync(L));
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(75); }
        work();
    """
    assert ("LCK203", 3) in found(src)


def test_lck203_finally_around_busy_branch():
    src = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        function take() {
          try { fs.mkdirSync(L); return true; } catch (e) { return false; }
        }
        async function main() {
          try {
            if (!take()) { process.exitCode = 75; return; }
            await work();
          } finally {
            fs.rmSync(L, { recursive: true });
          }
        }
        main();
    """
    assert ("LCK203", 7) in found(src)
    good = """
        const fs = require("fs");
        const L = "/var/lib/job/job.lock";
        function take() {
          try { fs.mkdirSync(L); return true; } catch (e) { return false; }
        }
        async function main() {
          if (!take()) { process.exitCode = 75; return; }
          try {
            await work();
          } finally {
            fs.rmSync(L, { recursive: true });
          }
        }
        main();
    """
    assert "LCK203" not in codes(good)


# --------------------------------------------------------------------------- LCK401 / LCK402


@pytest.mark.parametrize(
    "busy, zero",
    [
        ("process.exit(0);", True),
        ("process.exit();", True),
        ("process.exitCode = 0; return;", True),
        ("return;", True),
        ("process.exit(75);", False),
        ("process.exitCode = 75; return;", False),
        ('throw new Error("busy");', False),
    ],
)
def test_lck401_busy_exit_status(busy, zero):
    src = f"""
        const fs = require("fs");
        async function main() {{
          try {{
            fs.mkdirSync("/var/lib/job/job.lock");
          }} catch (e) {{
            console.log("already running");
            {busy}
          }}
          try {{ await work(); }} finally {{ fs.rmdirSync("/var/lib/job/job.lock"); }}
        }}
        main();
    """
    assert ("LCK401" in codes(src)) is zero


def test_lck402_durable_append():
    src = """
        const fs = require("fs");
        try { fs.openSync("/var/lib/job/job.lock", "wx"); }
        catch (e) {
          fs.appendFileSync("/var/log/job.log", "skipped: busy\\n");
          process.exit(0);
        }
    """
    got = found(src)
    assert ("LCK402", 5) in got and "LCK401" not in codes(src)


def test_lck402_file_logger():
    src = """
        const fs = require("fs");
        const winston = require("winston");
        const log = winston.createLogger({ transports: [new winston.transports.File({ filename: "/var/log/j.log" })] });
        try { fs.openSync("/var/lib/job/job.lock", "wx"); }
        catch (e) { log.warn("busy"); process.exit(0); }
    """
    assert "LCK402" in codes(src) and "LCK401" not in codes(src)


# --------------------------------------------------------------------------- LCK501 / LCK502


@pytest.mark.parametrize(
    "expr",
    [
        'path.join(__dirname, "job.lock")',
        'path.resolve("job.lock")',
        'path.join(process.cwd(), "job.lock")',
        '"./job.lock"',
        'fileURLToPath(new URL("./job.lock", import.meta.url))',
        "`${__dirname}/job.lock`",
    ],
)
def test_lck501_beside_script(expr):
    src = f"""
        const fs = require("fs");
        const path = require("path");
        const {{ fileURLToPath }} = require("url");
        const L = {expr};
        try {{ fs.openSync(L, "wx"); }} catch (e) {{ process.exit(75); }}
    """
    assert ("LCK501", 5) in found(src)


def test_lck501_negative_absolute():
    src = """
        const fs = require("fs");
        try { fs.openSync("/var/lib/job/job.lock", "wx"); } catch (e) { process.exit(75); }
    """
    assert "LCK501" not in codes(src)


def test_lck502_tmpdir():
    src = """
        const fs = require("fs");
        const os = require("os");
        const path = require("path");
        const L = path.join(os.tmpdir(), "report.lock");
        try { fs.openSync(L, "wx"); } catch (e) { process.exit(75); }
    """
    assert ("LCK502", 5) in found(src)
    assert "LCK502" not in codes(src.replace('"report.lock"', "`report-${process.pid}.lock`"))
    assert "LCK502" in codes(src.replace("os.tmpdir()", '"/tmp"'))


# --------------------------------------------------------------------------- TypeScript, parse errors


def test_typescript_file():
    src = """
        import * as fs from "node:fs";
        const LOCK: string = "/var/lib/job/job.lock";
        function take(p: string): boolean {
          try { fs.openSync(p as string, "wx"); return true; } catch (e: unknown) { return false; }
        }
        if (!take(LOCK)) { process.exit(0); }
    """
    got = found(src, "/srv/jobs/job.ts")
    assert ("LCK101", 4) in got and ("LCK401", 6) in got


def test_parse_error_is_lck000_and_rest_still_analysed():
    src = """
        const fs = require("fs");
        try { fs.openSync("/var/lib/job/job.lock", "wx"); } catch (e) { process.exit(0); }
        function broken( {
    """
    got = codes(src)
    assert "LCK000" in got and "LCK401" in got
    assert "LCK000" not in codes(WX_EXIT0)


# --------------------------------------------------------------------------- suppressions


def test_noqa_and_disable_comments():
    base = textwrap.dedent(WX_EXIT0).lstrip("\n")
    noqa = base.replace('fs.openSync(LOCK, "wx");', 'fs.openSync(LOCK, "wx"); // noqa: LCK101')
    _f, findings = analyze_text("/srv/j.js", noqa, "javascript")
    assert "LCK101" not in {f.code for f in findings} and "LCK401" in {f.code for f in findings}
    disable = base.replace(
        '  fs.openSync(LOCK, "wx");', '  // lockcheck: disable=LCK101\n  fs.openSync(LOCK, "wx");'
    )
    _f, findings = analyze_text("/srv/j.js", disable, "javascript")
    assert "LCK101" not in {f.code for f in findings}
    block = base.replace('fs.openSync(LOCK, "wx");', 'fs.openSync(LOCK, "wx"); /* noqa: LCK101 */')
    _f, findings = analyze_text("/srv/j.js", block, "javascript")
    assert "LCK101" in {f.code for f in findings}
    whole = "// lockcheck: disable-file=LCK401\n" + base
    _f, findings = analyze_text("/srv/j.js", whole, "javascript")
    assert "LCK401" not in {f.code for f in findings}


# --------------------------------------------------------------------------- the field report


SEED_TASK = """
    const path = require("path");
    const fs = require("fs");

    function holderAlive(pid) {
      try {
        process.kill(pid, 0);
        return true;
      } catch (e) {
        return e.code === "EPERM";
      }
    }

    function acquireLock(file) {
      try {
        fs.closeSync(fs.openSync(file, "wx"));
        fs.writeFileSync(file, String(process.pid));
        return true;
      } catch (e) {
        if (e.code !== "EEXIST") throw e;
        const owner = Number(fs.readFileSync(file, "utf8").trim());
        if (holderAlive(owner)) return false;
        fs.writeFileSync(file, String(process.pid));
        return true;
      }
    }

    function releaseLock(file) {
      if (fs.existsSync(file)) fs.unlinkSync(file);
    }

    const LOCK_FILE = path.join(__dirname, "export.lock");

    async function main() {
      if (!acquireLock(LOCK_FILE)) {
        console.log("previous export still running, skipping this one");
        process.exit(0);
      }
      try {
        await doExport();
      } catch (err) {
        console.error("export failed:", err.message);
        process.exitCode = 1;
      } finally {
        releaseLock(LOCK_FILE);
      }
    }

    main();
"""


def test_field_report_node_task():
    got = found(SEED_TASK, "C:/jobs/export/task.js")
    # existence lock beside the script, PID liveness, overwrite of a "stale" lock, exit 0
    for want in [("LCK101", 15), ("LCK501", 15), ("LCK105", 6), ("LCK106", 22), ("LCK401", 36)]:
        assert want in got, got
    # released in finally, after the busy branch: neither LCK202 nor LCK203
    assert not {"LCK202", "LCK203"} & {c for c, _ in got}


# --------------------------------------------------------------------------- CLI and discovery


def test_language_of_extensions_and_shebangs():
    for name in ("a.js", "a.mjs", "a.cjs", "a.ts", "a.mts", "a.cts"):
        assert language_of(name, b"") == "javascript"
    assert language_of("a.tsx", b"") is None
    for she in (
        b"#!/usr/bin/env node\n",
        b"#!/usr/bin/env -S deno run\n",
        b"#!/usr/local/bin/bun\n",
        b"#!/usr/bin/env ts-node\n",
    ):
        assert language_of("job", she) == "javascript"


def test_cli_scans_node_scripts(tmp_path):
    write(tmp_path, "jobs/export.js", textwrap.dedent(SEED_TASK).lstrip("\n"))
    write(tmp_path, "jobs/run", "#!/usr/bin/env node\n" + textwrap.dedent(WX_EXIT0).lstrip("\n"))
    write(tmp_path, "jobs/good.mjs", textwrap.dedent(FLOCK_GOOD).lstrip("\n"))
    write(tmp_path, "jobs/view.tsx", textwrap.dedent(WX_EXIT0).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    rows = {(r["filename"].rsplit("/", 1)[-1], r["code"]) for r in json.loads(proc.stdout)}
    assert ("export.js", "LCK401") in rows and ("run", "LCK401") in rows
    assert not any(name in ("good.mjs", "view.tsx") for name, _ in rows)


def test_cli_unsafe_fix_sets_skip_code(tmp_path):
    p = write(tmp_path, "job.js", textwrap.dedent(WX_EXIT0).lstrip("\n"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lockcheck",
            "check",
            "--fix",
            "--unsafe-fixes",
            "--select",
            "LCK401",
            str(p),
        ],
        capture_output=True,
        text=True,
    )
    assert "process.exit(75);" in p.read_text(), proc.stdout + proc.stderr


def test_mkdirp_helper_is_not_a_lock():
    """webpack-style mkdirp: EEXIST is handled and the work goes on."""
    src = """
        const fs = require("fs");
        function mkdirp(p, callback) {
          fs.mkdir(p, (err) => {
            if (err) {
              if (err.code === "EEXIST") return callback();
              return callback(err);
            }
            callback();
          });
        }
        mkdirp("/srv/out/cache", () => build());
    """
    assert codes(src) == set()


def test_mkdirp_sync_that_rethrows_is_not_a_lock():
    """webpack's mkdirpSync shape: the first way out of the catch is a throw."""
    src = """
        const fs = require("fs");
        const path = require("path");
        const mkdirpSync = (p) => {
          try {
            fs.mkdirSync(p);
          } catch (err) {
            if (err.code === "ENOENT") {
              const dir = path.dirname(p);
              if (dir === p) throw err;
              mkdirpSync(dir);
              return;
            }
            if (err.code === "EEXIST") return;
            throw err;
          }
        };
        mkdirpSync("/srv/out/cache");
    """
    assert codes(src) == set()
