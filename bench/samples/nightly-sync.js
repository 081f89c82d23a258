#!/usr/bin/env node
// Nightly sync job (benchmark sample): mirrors a source tree to a backup directory under an
// exclusive-create lock, with a PID check for a leftover lock.
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const SOURCE = process.env.SYNC_SOURCE || "/srv/data";
const TARGET = process.env.SYNC_TARGET || "/mnt/backup/data";
const LOCK = path.join(os.tmpdir(), "nightly-sync.lock");
const LOG = path.join(os.homedir(), ".local", "state", "nightly-sync.log");

function log(message) {
  fs.appendFileSync(LOG, `${new Date().toISOString()} ${message}\n`);
}

function holderAlive() {
  try {
    const pid = Number(fs.readFileSync(LOCK, "utf8").trim());
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function acquireLock() {
  try {
    const fd = fs.openSync(LOCK, "wx");
    fs.writeSync(fd, String(process.pid));
    fs.closeSync(fd);
    return true;
  } catch (err) {
    if (err.code !== "EEXIST") throw err;
    if (!holderAlive()) {
      fs.unlinkSync(LOCK);
      return acquireLock();
    }
    return false;
  }
}

function main() {
  if (!acquireLock()) {
    console.log("sync already running");
    return;
  }
  process.on("exit", () => {
    try {
      fs.unlinkSync(LOCK);
    } catch {
      // already gone
    }
  });
  const r = spawnSync("rsync", ["-a", "--delete", `${SOURCE}/`, `${TARGET}/`], {
    stdio: "inherit",
  });
  log(`rsync exited ${r.status}`);
  process.exitCode = r.status === 0 ? 0 : 1;
}

main();
