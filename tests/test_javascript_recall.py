"""Node.js recall and precision (issue #14, set-C): callback-style PID checks, busy results
handed through helpers and methods, constructor defaults, run-once markers, locks handed to a
caller that is not in the file, and how unresolved parts are shown.  Each positive beside a
negative, through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from helpers import write


def scan(tmp_path, src: str, name: str = "job.js") -> list[tuple[str, int, str]]:
    p = write(tmp_path, name, textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(p)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return [(r["code"], r["location"]["row"], r["message"]) for r in json.loads(proc.stdout)]


def codes(rows) -> set[tuple[str, int]]:
    return {(c, line) for c, line, _m in rows}


# ------------------------------------------------------------------ 1. callbacks and promises

CALLBACK_PID = """
    var fs = require("fs");
    var check = function (file, callback) {
      fs.readFile(file, { encoding: "utf8" }, function (err, held) {
        if (err) return callback(err);
        held = parseInt(held, 10);
        try {
          process.kill(held, 0);
          callback(null, true);
        } catch (e) {
          callback(null, false);
        }
      });
    };
    var lock = function (file, callback) {
      check(file, function (err, locked) {
        if (err && err.code === "ENOENT") {
          fs.writeFile(file, String(process.pid), { flag: "wx" }, callback);
        } else if (err || locked) {
          callback(err || new Error("locked"));
        } else {
          fs.unlink(file, function (err) {
            if (err) return callback(err);
            fs.writeFile(file, String(process.pid), { flag: "wx" }, callback);
          });
        }
      });
    };
    module.exports = { lock: lock };
"""


def test_callback_read_pid_liveness_and_stale_removal(tmp_path):
    got = codes(scan(tmp_path, CALLBACK_PID))
    assert ("LCK105", 7) in got and ("LCK106", 21) in got
    # an exclusive create ("wx") never overwrites: not a breaker
    assert ("LCK106", 17) not in got and ("LCK106", 23) not in got


def test_promise_then_read_pid_liveness(tmp_path):
    src = """
        const fsp = require("fs/promises");
        fsp.readFile("/var/run/sync/sync.pid", "utf8").then((text) => {
          try {
            process.kill(Number(text), 0);
            console.log("sync still running");
            process.exit(0);
          } catch (e) {
            return fsp.unlink("/var/run/sync/sync.pid");
          }
        });
    """
    got = codes(scan(tmp_path, src))
    assert ("LCK105", 4) in got and ("LCK106", 8) in got


def test_callback_parameter_not_from_a_file_is_no_liveness_check(tmp_path):
    # the negative: the PID comes from a child process, not a file
    src = CALLBACK_PID.replace(
        'fs.readFile(file, { encoding: "utf8" }, function (err, held) {',
        "require('child_process').exec('pgrep job', function (err, held) {",
    )
    got = codes(scan(tmp_path, src))
    assert not any(c in ("LCK105", "LCK106") for c, _ in got)


# --------------------------------------------------- 2. helpers, methods, constructor defaults

PID_HELPERS = """
    const fs = require("fs");
    function start(pidfile, work) {
      fs.writeFileSync(pidfile, String(process.pid));
      work();
    }
    function alreadyRunning() {
      console.error("already running");
      process.exit(0);
    }
    function withPid(name, work) {
      const pidfile = name + ".pid";
      if (fs.existsSync(pidfile)) {
        const old = fs.readFileSync(pidfile, "utf8");
        try {
          process.kill(old, 0);
          alreadyRunning();
        } catch (e) {
          start(pidfile, work);
        }
      } else {
        start(pidfile, work);
      }
    }
    module.exports = withPid;
"""


def test_test_then_create_and_exit_through_helpers(tmp_path):
    got = codes(scan(tmp_path, PID_HELPERS))
    assert {("LCK103", 3), ("LCK106", 3), ("LCK401", 8), ("LCK105", 15)} <= got


def test_exit_helper_that_exits_only_sometimes_is_not_the_busy_end(tmp_path):
    src = PID_HELPERS.replace("process.exit(0);", "if (process.env.STRICT) process.exit(0);")
    got = codes(scan(tmp_path, src))
    assert ("LCK401", 8) not in got and ("LCK103", 3) in got


LOCKER_CLASS = """
    import fs = require("fs");
    class Locker {
      public Lock(): boolean {
        let fd: number = this.CreateLockFile();
        if (fd < 0) return false;
        fs.closeSync(fd);
        return true;
      }
      private CreateLockFile(): number {
        try {
          return fs.openSync(this.ResolvePath(), fs.constants.O_EXCL | fs.constants.O_CREAT);
        } catch (err) {
          if (err.code === "EEXIST") {
            return -1;
          }
          throw err;
        }
      }
    }
    export = Locker;
"""


def test_eexist_result_returned_to_a_caller_that_tests_it(tmp_path):
    rows = scan(tmp_path, LOCKER_CLASS, "Locker.ts")
    assert ("LCK101", 11) in codes(rows)


def test_eexist_result_nobody_tests_is_an_exclusive_create(tmp_path):
    src = LOCKER_CLASS.replace(
        "let fd: number = this.CreateLockFile();\n    if (fd < 0) return false;",
        "let fd: number = this.CreateLockFile();",
    )
    assert ("LCK101", 10) not in codes(scan(tmp_path, src, "Locker.ts"))


def test_async_eexist_resolved_to_the_caller(tmp_path):
    src = """
        const fs = require("fs");
        class Locker {
          async lock() {
            const fd = await this.create();
            if (fd < 0) return false;
            return true;
          }
          create() {
            return new Promise((resolve, reject) => {
              fs.open(this.file, fs.constants.O_EXCL | fs.constants.O_CREAT, (err, fd) => {
                if (err) {
                  if (err.code === "EEXIST") { resolve(-1); return; }
                  reject(err);
                  return;
                }
                resolve(fd);
              });
            });
          }
        }
        module.exports = Locker;
    """
    assert ("LCK101", 10) in codes(scan(tmp_path, src))
    # without a caller that tests the result it is an exclusive create of output
    untested = src.replace("if (fd < 0) return false;", "")
    assert not any(c == "LCK101" for c, _ in codes(scan(tmp_path, untested)))


SPREAD_DEFAULTS = """
    const fs = require("fs");
    const path = require("path");
    class LockManager {
      constructor(options = {}) {
        const defaults = { lockFileName: "app.lock", lockFileDir: process.cwd() };
        const settings = { ...defaults, ...options };
        this.lockFilePath = path.join(settings.lockFileDir, settings.lockFileName);
      }
      acquire() {
        try {
          fs.writeFileSync(this.lockFilePath, String(process.pid), { flag: "wx" });
        } catch (e) {
          console.log("busy");
          process.exit(1);
        }
      }
    }
    new LockManager().acquire();
"""


def test_constructor_defaults_spread_into_this_cwd_lock(tmp_path):
    rows = scan(tmp_path, SPREAD_DEFAULTS)
    assert ("LCK501", 11) in codes(rows)
    assert any("<cwd>/app.lock" in m for c, _l, m in rows if c == "LCK501")


def test_constructor_default_in_a_private_dir_is_not_beside_the_script(tmp_path):
    src = SPREAD_DEFAULTS.replace("lockFileDir: process.cwd()", 'lockFileDir: "/var/lib/app"')
    rows = scan(tmp_path, src)
    assert ("LCK501", 11) not in codes(rows) and ("LCK101", 11) in codes(rows)


# ----------------------------------------------------------------------------- 3. precision

LIBRARY_SETLOCK = """
    var fs = require("fs");
    function FsLock() {}
    FsLock.prototype.setLock = function setLock(lockfile) {
      try {
        fs.openSync(lockfile, "wx");
      } catch (err) {
        if (err.code === "EEXIST") throw new Error("locked");
        throw err;
      }
    };
    FsLock.prototype.clearLock = function clearLock(lockfile) {
      fs.unlinkSync(lockfile);
    };
    var one = new FsLock();
    module.exports = {
      setLock: function (lockfile) { return one.setLock(lockfile); },
      clearLock: function clearLock(lockfile) { return one.clearLock(lockfile); },
    };
"""


def test_library_setlock_without_caller_in_file_is_not_lck202(tmp_path):
    got = codes(scan(tmp_path, LIBRARY_SETLOCK))
    assert ("LCK101", 5) in got and ("LCK202", 5) not in got


def test_setlock_with_caller_in_file_is_judged(tmp_path):
    src = LIBRARY_SETLOCK + 'one.setLock("/var/lib/job/job.lock");\nrunJob();\n'
    src += 'one.clearLock("/var/lib/job/job.lock");\n'
    assert ("LCK202", 5) in codes(scan(tmp_path, src))


RUN_ONCE = """
    const fs = require("fs");
    const { resolve } = require("path");
    const tmp = resolve(__dirname, "../tmp/");
    async function download(meta) {
      const done = resolve(tmp, meta.modified + ".lock");
      if (fs.existsSync(done)) {
        console.log("already downloaded");
        return false;
      }
      const data = await fetchAll(meta);
      fs.writeFileSync("/srv/data/out.csv", data);
      fs.writeFileSync(done, "", "utf8");
      return true;
    }
    (async () => {
      if (!(await download(await meta()))) process.exit(42);
    })();
"""


def test_run_once_lock_marker_written_after_the_work(tmp_path):
    got = codes(scan(tmp_path, RUN_ONCE))
    assert not any(c in ("LCK103", "LCK501", "LCK202") for c, _ in got)


def test_same_lock_written_before_the_work_is_lck103(tmp_path):
    before = RUN_ONCE.replace('fs.writeFileSync(done, "", "utf8");\n', "").replace(
        "const data = await fetchAll(meta);",
        'fs.writeFileSync(done, "", "utf8");\n      const data = await fetchAll(meta);',
    )
    rows = scan(tmp_path, before)
    assert ("LCK103", 10) in codes(rows)
    msg = next(m for c, _l, m in rows if c == "LCK103")
    # the unresolved member is shown as an expression, and the join adds no second slash
    assert "${meta.modified}.lock" in msg and "//" not in msg


# a busy method that returns a rejected promise fails like a throw (the review's viewerjs case)
REJECTING_LOCK = """
    const path = require("path");
    const { mkdir, rmdir } = require("fs/promises");
    const LOCK = path.join("/var/lib/viewer", "config.lock");
    class Lock {
      async lock() {
        try {
          await mkdir(LOCK);
          return "ok";
        } catch (err) {
          console.warn("lock error " + err);
          return Promise.reject("busy");
        }
      }
      async unlock() { await rmdir(LOCK); }
    }
    new Lock().lock();
"""


def test_busy_return_of_a_rejected_promise_is_not_a_silent_skip(tmp_path):
    got = codes(scan(tmp_path, REJECTING_LOCK))
    assert ("LCK101", 7) in got and ("LCK401", 11) not in got


def test_busy_return_of_a_plain_value_from_the_entry_is_a_silent_skip(tmp_path):
    src = REJECTING_LOCK.replace('return Promise.reject("busy");', 'return "busy";')
    assert ("LCK401", 11) in codes(scan(tmp_path, src))


def test_lock_created_right_after_its_test_is_lck103_even_at_the_end(tmp_path):
    # an acquire helper: the create is its last statement, but it follows the test at once
    src = """
        const fs = require("fs");
        const LOCK = "/var/lib/report/report.lock";
        function acquire() {
          if (fs.existsSync(LOCK)) {
            console.log("busy");
            process.exit(0);
          }
          fs.writeFileSync(LOCK, "");
        }
        acquire();
        buildReport();
    """
    assert ("LCK103", 8) in codes(scan(tmp_path, src))


# more spellings: ESM named import without options, fs.promises with a function expression,
# and the helpers as class methods
def test_esm_readfile_callback_without_options(tmp_path):
    src = """
        import { readFile, unlinkSync } from "node:fs";
        const PIDFILE = "/var/run/backup/backup.pid";
        readFile(PIDFILE, (err, data) => {
          if (err) return;
          try {
            process.kill(parseInt(data, 10), 0);
            process.exit(75);
          } catch (e) {
            unlinkSync(PIDFILE);
          }
        });
    """
    got = codes(scan(tmp_path, src, "job.mjs"))
    assert ("LCK105", 6) in got and ("LCK106", 9) in got


def test_fs_promises_then_function_expression(tmp_path):
    src = """
        const fs = require("fs").promises;
        fs.readFile("/var/run/backup/backup.pid", "utf8").then(function (data) {
          process.kill(Number(data), "SIGTERM");
        });
    """
    assert ("LCK108", 3) in codes(scan(tmp_path, src))


def test_then_on_another_promise_is_not_a_pid_read(tmp_path):
    src = """
        const fs = require("fs").promises;
        fetchOwner("/var/run/backup/backup.pid").then(function (data) {
          process.kill(Number(data), "SIGTERM");
        });
    """
    assert ("LCK108", 3) not in codes(scan(tmp_path, src))


PID_METHODS = """
    const fs = require("fs");
    class PidLock {
      start(pidfile) {
        fs.writeFileSync(pidfile, String(process.pid));
      }
      alreadyRunning() {
        console.error("already running");
        process.exit(0);
      }
      take(name) {
        const pidfile = name + ".pid";
        if (fs.existsSync(pidfile)) {
          this.alreadyRunning();
        } else {
          this.start(pidfile);
        }
      }
    }
    module.exports = PidLock;
"""


def test_helpers_as_class_methods(tmp_path):
    got = codes(scan(tmp_path, PID_METHODS))
    assert ("LCK103", 4) in got and ("LCK401", 8) in got


def test_method_of_another_object_is_not_this_class_helper(tmp_path):
    src = PID_METHODS.replace("this.alreadyRunning();", "log.alreadyRunning();")
    got = codes(scan(tmp_path, src))
    assert ("LCK401", 8) not in got


def test_result_passed_on_only_for_other_errors_is_no_lock(tmp_path):
    # a mkdir helper: EEXIST is ignored, other errors are passed on, the caller tests them
    src = """
        const fs = require("fs");
        function ensureDir(dir) {
          return new Promise((resolve, reject) => {
            fs.mkdir(dir, (err) => {
              if (err) {
                if (err.code !== "EEXIST") { reject(err); return; }
              }
              resolve(true);
            });
          });
        }
        async function main() {
          const ok = await ensureDir("/srv/export/out");
          if (!ok) process.exit(1);
        }
        main();
    """
    assert not any(c == "LCK101" for c, _ in codes(scan(tmp_path, src)))
