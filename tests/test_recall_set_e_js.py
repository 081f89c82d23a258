"""Node.js and PowerShell recall from set-E's dev half (issues #12/#14): locks broken by
their age (``stat.mtimeMs`` against ``Date.now()``), stored PIDs read by a helper function,
a recursive mkdir whose catch only rethrows, and named mutexes whose name comes from a call
site.  Each positive in several spellings, each beside a negative, through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from helpers import write


def scan(tmp_path, src: str, name: str = "job.js") -> set[tuple[str, int]]:
    p = write(tmp_path, name, textwrap.dedent(src).lstrip("\n"))
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "check", "--output-format", "json", str(p)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {(r["code"], r["location"]["row"]) for r in json.loads(proc.stdout)}


def lines(found: set[tuple[str, int]], code: str) -> set[int]:
    return {line for c, line in found if c == code}


# ------------------------------------------------------------------ 1. breaking a lock by its age

AGE_INLINE = """
    const fs = require("fs");
    const LOCK = "/var/run/report.lock";
    const STALE_MS = 10 * 60 * 1000;
    try {
      if (Date.now() - fs.statSync(LOCK).mtimeMs > STALE_MS) {
        fs.unlinkSync(LOCK);
      }
    } catch (e) {}
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" });
    } catch (e) {
      if (e.code === "EEXIST") process.exit(75);
      throw e;
    }
    try {
      work();
    } finally {
      fs.unlinkSync(LOCK);
    }
"""

AGE_VARIABLE_ELSE = """
    const fs = require("fs");
    const path = require("path");
    const STALE = 30 * 60 * 1000;
    function acquire(name) {
      const lockPath = path.join("/var/lock/jobs", `${name}.lock`);
      try {
        const stat = fs.statSync(lockPath);
        const age = Date.now() - stat.mtimeMs;
        if (age < STALE) {
          return null;
        } else {
          fs.unlinkSync(lockPath);
        }
      } catch (err) {
        if (err.code !== "ENOENT") return null;
      }
      try {
        fs.writeFileSync(lockPath, String(process.pid), { flag: "wx" });
        return lockPath;
      } catch {
        return null;
      }
    }
    module.exports = { acquire };
"""

AGE_CALLBACK_MKDIR = """
    import fs from "node:fs";
    const lockDir = "/var/lock/sync.lock";
    const lock = (staleInterval: number, done: (ok: boolean) => void): void => {
      fs.mkdir(lockDir, (error) => {
        if (error && error.code === "EEXIST") {
          fs.stat(lockDir, (_e, stat) => {
            if (stat && stat.mtime.getTime() + staleInterval < Date.now()) {
              fs.rmdir(lockDir, () => lock(staleInterval, done));
            } else {
              done(false);
            }
          });
        } else {
          done(!error);
        }
      });
    };
    lock(60000, (ok) => {
      if (!ok) process.exit(75);
      process.on("exit", () => fs.rmdirSync(lockDir));
    });
"""


@pytest.mark.parametrize(
    "src,name,line",
    [
        (AGE_INLINE, "job.js", 6),
        (AGE_VARIABLE_ELSE, "lock.js", 12),
        (AGE_CALLBACK_MKDIR, "lock.ts", 8),
    ],
    ids=["inline-mtimeMs", "age-variable-else", "callback-mtime-getTime"],
)
def test_removal_guarded_by_file_age_is_a_stale_breaker(tmp_path, src, name, line):
    assert line in lines(scan(tmp_path, src, name), "LCK106")


def test_age_expiry_of_files_that_are_not_locks_is_quiet(tmp_path):
    found = scan(
        tmp_path,
        """
        const fs = require("fs");
        const path = require("path");
        const LOCK = "/var/run/report.lock";
        const CACHE = "/var/cache/report";
        try {
          fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" });
        } catch (e) {
          if (e.code === "EEXIST") process.exit(75);
          throw e;
        }
        try {
          for (const f of fs.readdirSync(CACHE)) {
            const p = path.join(CACHE, f);
            if (Date.now() - fs.statSync(p).mtimeMs > 86400000) fs.unlinkSync(p);
          }
        } finally {
          fs.unlinkSync(LOCK);
        }
        """,
    )
    assert lines(found, "LCK106") == set()
    assert lines(found, "LCK101") == {6}


def test_release_without_an_age_test_is_no_breaker(tmp_path):
    found = scan(
        tmp_path,
        AGE_INLINE.replace("if (Date.now() - fs.statSync(LOCK).mtimeMs > STALE_MS)", "if (true)"),
    )
    assert lines(found, "LCK106") == set()


# ------------------------------------------------------------------ 2. a stored PID read by a helper

PID_HELPER_DECL = """
    const fs = require("fs");
    const LOCK = "/var/run/sync.pid";
    function readPid(file) {
      return parseInt(fs.readFileSync(file, "utf8"), 10);
    }
    if (fs.existsSync(LOCK)) {
      const pid = readPid(LOCK);
      try {
        process.kill(pid, 0);
        console.log("already running");
        process.exit(75);
      } catch (e) {
        fs.unlinkSync(LOCK);
      }
    }
    fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" });
    process.on("exit", () => fs.unlinkSync(LOCK));
"""

PID_HELPER_ARROW_INLINE = """
    const fs = require("fs");
    const LOCK = "/var/run/sync.pid";
    const storedPid = (p) => Number(JSON.parse(fs.readFileSync(p, "utf8")).pid);
    try {
      fs.writeFileSync(LOCK, JSON.stringify({ pid: process.pid }), { flag: "wx" });
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
      try {
        process.kill(storedPid(LOCK), 0);
        process.exit(75);
      } catch {
        fs.unlinkSync(LOCK);
        fs.writeFileSync(LOCK, JSON.stringify({ pid: process.pid }), { flag: "wx" });
      }
    }
    process.on("exit", () => fs.unlinkSync(LOCK));
"""

PID_HELPER_TWO_HELPERS = """
    const fs = require("fs");
    const LOCK = "/var/lock/bot.lock";
    function parsePid(lockPath) {
      try {
        const pid = Number(JSON.parse(fs.readFileSync(lockPath, "utf8")).pid);
        return pid > 0 ? pid : null;
      } catch {
        return null;
      }
    }
    function isAlive(pid) {
      try {
        process.kill(pid, 0);
        return true;
      } catch (err) {
        return err.code === "EPERM";
      }
    }
    function acquire() {
      const pid = parsePid(LOCK);
      if (pid && !isAlive(pid)) {
        fs.unlinkSync(LOCK);
      }
      try {
        fs.writeFileSync(LOCK, JSON.stringify({ pid: process.pid }), { flag: "wx" });
        return true;
      } catch {
        return false;
      }
    }
    module.exports = { acquire };
"""


@pytest.mark.parametrize(
    "src,check,breaker",
    [
        (PID_HELPER_DECL, 9, 13),
        (PID_HELPER_ARROW_INLINE, 9, 12),
        (PID_HELPER_TWO_HELPERS, 13, 22),
    ],
    ids=["function-declaration", "arrow-inline", "two-helpers"],
)
def test_pid_read_by_a_local_helper_is_a_stored_pid(tmp_path, src, check, breaker):
    found = scan(tmp_path, src)
    assert check in lines(found, "LCK105")
    assert breaker in lines(found, "LCK106")


def test_pid_from_a_helper_that_reads_no_file_is_not_stored(tmp_path):
    src = PID_HELPER_DECL.replace(
        'return parseInt(fs.readFileSync(file, "utf8"), 10);',
        "return parseInt(process.argv[2], 10);",
    )
    found = scan(tmp_path, src)
    assert lines(found, "LCK105") == set()
    assert lines(found, "LCK106") == set()


def test_dead_holder_breaker_is_not_the_release_of_a_handed_out_lock(tmp_path):
    # the only removal in the taking function breaks a dead holder's lock; the caller that
    # releases is not in this file, so LCK202 is not judged
    assert lines(scan(tmp_path, PID_HELPER_TWO_HELPERS), "LCK202") == set()


# ------------------------------------------------------------------ 3. mkdir -p whose catch rethrows

LOCK_DIR_MADE = """
    const fs = require("fs");
    const LOCK_DIR = "/var/lib/bot/locks";
    function ensureDir() {
      try {
        fs.mkdirSync(LOCK_DIR, { recursive: true });
      } catch (err) {
        console.error("cannot create the lock directory", err);
        CATCH_END
      }
    }
    module.exports = { ensureDir };
"""


@pytest.mark.parametrize(
    "end", ["throw err;", 'throw new Error("no lock directory: " + err.message);']
)
def test_recursive_mkdir_whose_catch_rethrows_is_no_lock(tmp_path, end):
    found = scan(tmp_path, LOCK_DIR_MADE.replace("CATCH_END", end))
    assert lines(found, "LCK109") == set()


@pytest.mark.parametrize(
    "end,name",
    [
        ("process.exit(0);", "/var/lib/bot/locks"),
        ('if (err.code === "EEXIST") process.exit(75); else throw err;', "/var/lib/bot/out"),
    ],
    ids=["lockish-name-skips", "eexist-tested"],
)
def test_recursive_mkdir_as_the_busy_test_still_never_fails(tmp_path, end, name):
    src = LOCK_DIR_MADE.replace("CATCH_END", end).replace("/var/lib/bot/locks", name)
    assert lines(scan(tmp_path, src), "LCK109") == {5}


# ------------------------------------------------------------------ 4. a mutex named by a call site

MUTEX_PARAM_BLOCK = """
    function Wait-OnMutex {
        param (
            [Parameter(Mandatory = $true)]
            [System.String]$MutexId
        )
        try {
            $m = New-Object System.Threading.Mutex($false, $MutexId)
            if ($m.WaitOne(3000)) {
                return $m
            }
            throw New-Object System.TimeoutException("busy")
        }
        catch [System.Threading.AbandonedMutexException] {
            return (Wait-OnMutex -MutexId $MutexId)
        }
    }
    CALL_SITE
    try {
        Add-Content -Path C:\\Jobs\\trace.csv -Value "run"
    }
    finally {
        $mutex.ReleaseMutex()
    }
"""

MUTEX_DECLARED_PARAMS = """
    function Enter-Job([string]$Name, [int]$Timeout = 0) {
        $m = [System.Threading.Mutex]::new($false, $Name)
        if (-not $m.WaitOne($Timeout)) {
            Write-Error "another run holds $Name"
            exit 75
        }
        return $m
    }
    CALL_SITE
"""


@pytest.mark.parametrize(
    "src,call,line",
    [
        (MUTEX_PARAM_BLOCK, "$mutex = Wait-OnMutex -MutexId 'Trace_Logging'", 7),
        (MUTEX_PARAM_BLOCK, "$mutex = Wait-OnMutex -Mutex 'Trace_Logging'", 7),
        (MUTEX_DECLARED_PARAMS, '$m = Enter-Job "NightlyReport" 0', 2),
        (MUTEX_DECLARED_PARAMS, "$m = Enter-Job -Timeout 5 -Name 'NightlyReport'", 2),
        (MUTEX_DECLARED_PARAMS, "$m = Enter-Job -Timeout 5 'NightlyReport'", 2),
    ],
    ids=["named", "prefix", "positional", "named-reordered", "named-then-positional"],
)
def test_mutex_name_passed_by_the_call_site(tmp_path, src, call, line):
    found = scan(tmp_path, src.replace("CALL_SITE", call), "job.ps1")
    assert lines(found, "LCK407") == {line}


@pytest.mark.parametrize(
    "src,call",
    [
        (MUTEX_PARAM_BLOCK, "$mutex = Wait-OnMutex -MutexId 'Global\\Trace_Logging'"),
        (MUTEX_DECLARED_PARAMS, '$m = Enter-Job "Global\\NightlyReport" 0'),
        (MUTEX_PARAM_BLOCK, ""),  # a mandatory parameter no call site fills: unknown
        (MUTEX_DECLARED_PARAMS, "$m = Enter-Job $args[0]"),
    ],
    ids=["global-named", "global-positional", "no-call-site", "unresolved-argument"],
)
def test_mutex_name_from_call_site_global_or_unknown_is_quiet(tmp_path, src, call):
    found = scan(tmp_path, src.replace("CALL_SITE", call), "job.ps1")
    assert lines(found, "LCK407") == set()


# ------------------------------------------------------------------ 5. exit-hook libraries release

EXIT_HOOK_LOCK = """
    IMPORT
    const fs = require("fs");
    const LOCK = "/var/lib/report/run.lock";
    function unlockAll() {
      fs.rmdir(LOCK, (err) => {
        if (err && err.code !== "ENOENT") console.error(err);
      });
    }
    try {
      fs.mkdirSync(LOCK);
    } catch (e) {
      if (e.code === "EEXIST") process.exit(75);
      throw e;
    }
    HOOK
    work();
"""


@pytest.mark.parametrize(
    "imp,hook",
    [
        ('import whenExit from "when-exit";', "whenExit(unlockAll);"),
        ('import { onExit } from "signal-exit";', "onExit(() => unlockAll());"),
        ('const onExit = require("signal-exit");', "onExit(unlockAll);"),
        ('const exitHook = require("exit-hook");', "exitHook(() => { unlockAll(); });"),
        ('import nodeCleanup from "node-cleanup";', "nodeCleanup(unlockAll);"),
    ],
    ids=["when-exit", "signal-exit-onExit", "signal-exit-v3", "exit-hook", "node-cleanup"],
)
def test_release_run_by_an_exit_hook_library_is_on_every_path(tmp_path, imp, hook):
    found = scan(tmp_path, EXIT_HOOK_LOCK.replace("IMPORT", imp).replace("HOOK", hook), "job.mjs")
    assert lines(found, "LCK101") == {10}
    assert lines(found, "LCK202") == set()


@pytest.mark.parametrize(
    "imp,hook",
    [
        ('import whenExit from "when-exit";', "unlockAll();"),  # imported, never registered
        ('import { register } from "./hooks.js";', "register(unlockAll);"),  # a local module
    ],
    ids=["not-registered", "unknown-module"],
)
def test_release_without_an_exit_hook_is_judged(tmp_path, imp, hook):
    found = scan(tmp_path, EXIT_HOOK_LOCK.replace("IMPORT", imp).replace("HOOK", hook), "job.mjs")
    assert lines(found, "LCK202") == {10}
