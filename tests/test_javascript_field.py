"""Node.js shapes from a run over real lock libraries and CLIs (issue #14): the recursive
`mkdirSync` of a lock's folder before the lock's own `"wx"` create in one `try` is no lock
that cannot fail (LCK109); an exclusive create whose `catch {}` is empty goes on whatever
happened (a file made if missing), even under a lock-like name: no LCK101.  Through the CLI,
each beside a negative."""

from __future__ import annotations

from helpers import scan_files


def scan(tmp_path, files: dict[str, str]) -> dict[str, set[tuple[str, int]]]:
    return scan_files(tmp_path, files)


PARENT_THEN_LOCK = """
    const fs = require("fs");
    const path = require("path");
    const LOCK = "/var/lib/report/state/report.lock";

    try {
        fs.mkdirSync(path.dirname(LOCK), { recursive: true });
        fs.writeFileSync(LOCK, String(process.pid), { flag: "wx" });
    } catch (e) {
        if (e.code !== "EEXIST") throw e;
        console.error("report already running");
        process.exit(75);
    }
    try {
        require("./report").run();
    } finally {
        fs.unlinkSync(LOCK);
    }
"""

RECURSIVE_AS_LOCK = """
    const fs = require("fs");
    const LOCK = "/var/lib/report/state/report.lock";

    try {
        fs.mkdirSync(LOCK, { recursive: true });
    } catch (e) {
        if (e.code !== "EEXIST") throw e;
        console.error("report already running");
        process.exit(75);
    }
    try {
        require("./report").run();
    } finally {
        fs.rmdirSync(LOCK);
    }
"""

EMPTY_CATCH = """
    const fs = require("fs");
    const file = `${process.env.HOME}/.jobs/pid_lock_maps/${process.env.JOB_PID}.json`;
    try {
        fs.writeFileSync(file, "{}", { flag: "wx" });
    } catch (err) {
    }
    const locks = JSON.parse(fs.readFileSync(file, "utf8"));
    locks[process.env.JOB_NAME] = { at: Date.now() };
    fs.writeFileSync(file, JSON.stringify(locks));
"""

SKIPPING_CATCH = """
    const fs = require("fs");
    const file = `${process.env.HOME}/.jobs/locks/nightly.lock`;
    try {
        fs.writeFileSync(file, String(process.pid), { flag: "wx" });
    } catch (err) {
        console.log("nightly already running");
        process.exit(0);
    }
"""


def test_lock_folder_mkdir_and_empty_catch(tmp_path):
    got = scan(
        tmp_path,
        {
            "parent_then_lock.js": PARENT_THEN_LOCK,
            "recursive_as_lock.js": RECURSIVE_AS_LOCK,
            "empty_catch.js": EMPTY_CATCH,
            "skipping_catch.js": SKIPPING_CATCH,
        },
    )
    assert got == {
        # the "wx" create is the lock; the recursive mkdir makes its folder
        "parent_then_lock.js": {("LCK101", 7)},
        # the recursive mkdir is the test itself: it never fails (LCK109)
        "recursive_as_lock.js": {("LCK109", 5)},
        "empty_catch.js": set(),
        "skipping_catch.js": {("LCK101", 4), ("LCK401", 7)},
    }
