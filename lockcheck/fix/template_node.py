"""``lockcheck init --node``: the single-instance wrapper as a Node.js (CommonJS) script.

Same design as the shell and Python wrappers (:mod:`lockcheck.fix.templates`): a private,
local lock root chosen by a per-process create-and-delete test, a lock file opened without
truncating or following links and never deleted, exit 75 when busy, a ledger line per event.
Node has no flock of its own: the lock is taken on the wrapper's open descriptor either by
the ``fs-ext`` package when it is installed, or by util-linux ``flock -n 3`` run on a copy
of that descriptor (flock(2) locks the open file description, which the wrapper keeps, so
the lock stays held after the helper exits and dies with the wrapper)."""

TEMPLATE = r"""#!/usr/bin/env node
// Single-instance wrapper for the slot "@SLOT@" (made by `lockcheck init --node`).
//
//   usage: node @NAME@ COMMAND [ARG...]
//
// Runs COMMAND while holding a flock on a lock file in a local, run-private directory.
// The lock is taken with the fs-ext package when it is installed, else by util-linux
// `flock -n` on this process's own descriptor (the lock belongs to the open file, which
// this process keeps): either way it dies with this process, and nothing is left to clean.
// Exit status: COMMAND's own status when it ran; 75 (EX_TEMPFAIL) when another run holds
// the lock, so a skip is never mistaken for success; 3 when no directory lets an entry be
// both created and deleted or the lock cannot be taken; 64 on a usage error.
// Every run appends one line per event (acquired, skipped, released, failed) to the ledger
// $LOCKCHECK_LEDGER (default: ${XDG_STATE_HOME:-~/.local/state}/lockcheck/@SLOT@.log).
// The lock file is never deleted: the lock lives on the open descriptor, not on the name.
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const SLOT = "@SLOT@";
const EX_BUSY = 75; // EX_TEMPFAIL: another run holds the lock
const EX_NO_LOCK = 3; // no usable lock location, or the lock cannot be taken
const EX_USAGE = 64;
const MARKER = ".lockcheck-undeletable";
const STATE_HOME = process.env.XDG_STATE_HOME || path.join(os.homedir(), ".local", "state");
const LEDGER =
  process.env.LOCKCHECK_LEDGER || path.join(STATE_HOME, "lockcheck", `${SLOT}.log`);
const UID = typeof process.getuid === "function" ? process.getuid() : os.userInfo().username;

function record(event) {
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const line = `${stamp}\t${SLOT}\t${process.pid}\t${event}\n`;
  try {
    fs.mkdirSync(path.dirname(LEDGER), { recursive: true });
    fs.appendFileSync(LEDGER, line);
  } catch (err) {
    process.stderr.write(`${SLOT}: ${event} (ledger ${LEDGER} is not writable: ${err.message})\n`);
  }
}

// An entry can be created and deleted in `dir`.  Locks must not live where deletion is
// refused (cloud-synced folders, some sandboxes).  The test entry is named per process;
// one that cannot be deleted becomes a single fixed marker (rename still works there), so
// the directory is skipped at once next time.
function usable(dir) {
  let info;
  try {
    info = fs.lstatSync(dir);
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    return false;
  }
  if (!info.isDirectory() || fs.existsSync(path.join(dir, MARKER))) return false;
  const probe = path.join(dir, `.lockcheck-probe.${process.pid}`);
  try {
    fs.mkdirSync(probe, 0o700);
  } catch {
    return false;
  }
  try {
    fs.rmdirSync(probe);
  } catch {
    try {
      fs.renameSync(probe, path.join(dir, MARKER));
    } catch {
      // neither delete nor rename: the directory is refused all the same
    }
    return false;
  }
  return true;
}

// A `lockcheck-UID` directory of our own under `base` (a shared parent is fine: someone
// else's directory or a planted link there is refused).
function privateSubdir(base) {
  if (!base) return null;
  const dir = path.join(base, `lockcheck-${UID}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = fs.lstatSync(dir);
    if (!info.isDirectory()) return null;
    if (typeof process.getuid === "function" && info.uid !== process.getuid()) return null;
  } catch {
    return null;
  }
  return dir;
}

// The first candidate where create and delete both work: private and local first.  The
// same root for cron, timers and manual runs: never the session's runtime directory.
function lockRoot() {
  try {
    fs.mkdirSync(STATE_HOME, { recursive: true });
  } catch {
    // the next candidates
  }
  const candidates = [STATE_HOME, path.join(os.homedir(), ".cache"), os.tmpdir()];
  for (const base of candidates) {
    const dir = privateSubdir(base);
    if (dir && usable(dir)) return dir;
  }
  return null;
}

// Lock the open file behind `fd`: true when taken, false when another run holds it.
function lockDescriptor(fd) {
  let fsExt = null;
  try {
    fsExt = require("fs-ext");
  } catch {
    // not installed: util-linux flock(1) below
  }
  if (fsExt) {
    try {
      fsExt.flockSync(fd, "exnb");
      return true;
    } catch (err) {
      if (err.code === "EAGAIN" || err.code === "EWOULDBLOCK") return false;
      throw err;
    }
  }
  // flock(1) locks its fd 3, a copy of ours: the same open file, so the lock stays ours
  const r = spawnSync("flock", ["--nonblock", "--conflict-exit-code", "75", "3"], {
    stdio: ["ignore", "inherit", "inherit", fd],
  });
  if (r.error) throw r.error;
  if (r.status === 0) return true;
  if (r.status === 75) return false;
  throw new Error(`flock exited with status ${r.status}`);
}

function main(argv) {
  if (argv.length === 0) {
    process.stderr.write(`usage: node ${path.basename(process.argv[1])} COMMAND [ARG...]\n`);
    return EX_USAGE;
  }
  const root = lockRoot();
  if (root === null) {
    record("failed: no lock location accepts both create and delete");
    return EX_NO_LOCK;
  }
  const lockPath = path.join(root, `${SLOT}.lock`);
  let fd;
  try {
    // no truncation, no symlink following, private mode; the file is kept for good
    const { O_RDWR, O_CREAT, O_NOFOLLOW } = fs.constants;
    fd = fs.openSync(lockPath, O_RDWR | O_CREAT | (O_NOFOLLOW || 0), 0o600);
  } catch (err) {
    record(`failed: cannot open ${lockPath}: ${err.message}`);
    return EX_NO_LOCK;
  }
  let locked;
  try {
    locked = lockDescriptor(fd);
  } catch (err) {
    record(`failed: cannot lock ${lockPath}: ${err.message}`);
    return EX_NO_LOCK;
  }
  if (!locked) {
    record("skipped");
    return EX_BUSY;
  }
  record("acquired");
  // Node opens files close-on-exec: the command cannot keep the slot locked after us
  const r = spawnSync(argv[0], argv.slice(1), { stdio: "inherit" });
  let status;
  if (r.error) {
    process.stderr.write(`${SLOT}: cannot run ${argv[0]}: ${r.error.message}\n`);
    status = 127;
  } else if (r.signal) {
    status = 128 + (os.constants.signals[r.signal] || 0); // as the shell reports it
  } else {
    status = r.status;
  }
  record(`released status=${status}`);
  return status;
}

process.exitCode = main(process.argv.slice(2));
"""
