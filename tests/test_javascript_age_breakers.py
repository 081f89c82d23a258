"""Node.js stale-lock breakers judged by age (LCK106, issue #14): the age test in a local
helper (`if (isStale(L))`), the lock taken over by a plain write rather than removed, and the
`statSync` that reads the lock's age, which is not a test-then-create (LCK103).  Each positive
beside a negative, through the CLI."""

from __future__ import annotations

from helpers import scan_files

HEAD = """
    const fs = require("fs");
    const path = require("path");
    const LOCK = path.join(__dirname, "job.lock");
    const STALE_MS = 10 * 60 * 1000;
"""

HELPER = """
    function isStale(p) {
      const st = fs.statSync(p);
      return Date.now() - st.mtimeMs > STALE_MS;
    }
"""

ARROW = """
    const isStale = (p) => Date.now() - fs.statSync(p).mtimeMs > STALE_MS;
"""

ACQUIRE = """
    function acquire() {
      try {
        fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" });
        return true;
      } catch (err) {
        if (err.code !== "EEXIST") throw err;
        GUARD {
          TAKEOVER
        }
        return false;
      }
    }

    if (!acquire()) {
      console.error("another run holds the lock");
      process.exit(75);
    }
"""


def _src(helper: str, guard: str, takeover: str) -> str:
    body = ACQUIRE.replace("GUARD", guard).replace("TAKEOVER", takeover)
    return HEAD + helper + body


def _line(src: str, needle: str) -> int:
    import textwrap

    lines = textwrap.dedent(src).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


REMOVE = "fs.unlinkSync(LOCK);\n          return acquire();"
OVERWRITE = "fs.writeFileSync(LOCK, String(process.pid));\n          return true;"


def test_age_judged_by_a_local_helper_then_removed_or_overwritten(tmp_path):
    files = {
        "rm.js": _src(HELPER, "if (isStale(LOCK))", REMOVE),
        "ow.js": _src(HELPER, "if (isStale(LOCK))", OVERWRITE),
        "arrow.js": _src(ARROW, "if (isStale(LOCK))", OVERWRITE),
    }
    got = scan_files(tmp_path, files)
    for name, src in files.items():
        needle = "fs.unlinkSync(LOCK)" if name == "rm.js" else "String(process.pid));"
        assert ("LCK106", _line(src, needle)) in got[name], (name, got[name])


def test_a_helper_that_judges_something_else_is_no_breaker(tmp_path):
    other = HELPER.replace("Date.now() - st.mtimeMs > STALE_MS", "st.size === 0")
    files = {
        "rm.js": _src(other, "if (isStale(LOCK))", REMOVE),
        "ow.js": _src(other, "if (isStale(LOCK))", OVERWRITE),
    }
    got = scan_files(tmp_path, files)
    assert not any(c == "LCK106" for c, _ in got["rm.js"] | got["ow.js"]), got


def test_inline_age_then_overwrite_is_a_breaker_not_a_test_then_create(tmp_path):
    inline = "const age = Date.now() - fs.statSync(LOCK).mtimeMs;\n        if (age > STALE_MS)"
    stat_var = "const st = fs.statSync(LOCK);\n        if (Date.now() - st.mtimeMs > STALE_MS)"
    files = {
        "inline.js": _src("", inline, OVERWRITE),
        "var.js": _src("", stat_var, OVERWRITE),
    }
    got = scan_files(tmp_path, files)
    for name, src in files.items():
        line = _line(src, "String(process.pid));")
        assert ("LCK106", line) in got[name], (name, got[name])
        assert not any(c == "LCK103" for c, _ in got[name]), (name, got[name])


def test_a_stat_read_for_more_than_its_times_is_still_a_test(tmp_path):
    src = """
        const fs = require("fs");
        const LOCK = "/var/run/job.lock";
        let st = null;
        try { st = fs.statSync(LOCK); } catch (e) {}
        if (st) { console.log("busy since", st.mtime); process.exit(75); }
        fs.writeFileSync(LOCK, String(process.pid));
        try { work(); } finally { fs.unlinkSync(LOCK); }
    """
    got = scan_files(tmp_path, {"job.js": src})
    assert ("LCK103", 6) in got["job.js"], got


YOUNG_EXIT = """
    import { statSync, writeFileSync } from "node:fs";

    const LOCK = "/var/lib/job/job.lock";

    export function lockAgeSync(p) {
      return Date.now() - statSync(p).mtimeMs;
    }

    export function tryLock(timeoutMs) {
      try {
        writeFileSync(LOCK, "", { flag: "wx" });
      } catch (e) {
        if (e.code !== "EEXIST") throw e;
        if (!(GUARD)) {
          return false;
        }
        writeFileSync(LOCK, "", { flag: "w" });
      }
      return true;
    }
"""


def test_an_age_helper_compared_by_the_caller_then_a_takeover_after_a_young_exit(tmp_path):
    files = {
        "age.mjs": YOUNG_EXIT.replace("GUARD", "lockAgeSync(LOCK) > timeoutMs"),
        "size.mjs": YOUNG_EXIT.replace("GUARD", "statSync(LOCK).size > 0").replace(
            "Date.now() - statSync(p).mtimeMs", "statSync(p).size"
        ),
    }
    got = scan_files(tmp_path, files)
    line = _line(files["age.mjs"], 'flag: "w" }')
    assert ("LCK106", line) in got["age.mjs"], got
    assert not any(c == "LCK106" for c, _ in got["size.mjs"]), got


LOCK_FN = """
    import fs from "fs";

    export async function NAME(dirPath, callback) {
      const run = async () => {
        fs.mkdirSync(dirPath, { recursive: true });
        try {
          await callback();
        } finally {
          fs.rmdirSync(dirPath);
        }
      };
      try {
        fs.statSync(dirPath);
      } catch (err) {
        return await run();
      }
      throw new Error("busy: " + dirPath);
    }
"""


def test_a_test_then_create_in_a_function_named_like_a_lock(tmp_path):
    files = {
        "lock.mjs": LOCK_FN.replace("NAME", "lock"),
        "copy.mjs": LOCK_FN.replace("NAME", "copy"),
    }
    got = scan_files(tmp_path, files)
    assert ("LCK103", _line(files["lock.mjs"], "fs.mkdirSync")) in got["lock.mjs"], got
    assert not any(c == "LCK103" for c, _ in got["copy.mjs"]), got


def test_a_folder_made_if_missing_in_a_lock_named_function_is_no_lock(tmp_path):
    src = """
        const fs = require("fs");
        const path = require("path");
        const os = require("os");

        function getPidFilePath() {
          const dir = path.join(os.homedir(), ".config", "app");
          if (!fs.existsSync(dir)) {
            fs.mkdirSync(dir, { recursive: true });
          }
          return path.join(dir, "daemon.pid");
        }

        module.exports = { getPidFilePath };
    """
    got = scan_files(tmp_path, {"daemon.js": src})
    assert not any(c == "LCK103" for c, _ in got["daemon.js"]), got
