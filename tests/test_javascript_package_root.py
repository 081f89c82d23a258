"""A relative import of a package's own root is that package (issue #14, JS-PS-REVIEW #20): a
lock library's tests and fixtures load it as ``require('../..')``; when the root's
``package.json`` names a lock library lockcheck knows, the calls are that library's (its lock
is taken here, so removing it is no foreign removal).  Any other name stays unknown."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from helpers import write

FIXTURE = """
    "use strict";
    const fs = require("fs");
    const locker = require("../..");

    const work = `${__dirname}/../scratch`;
    fs.writeFileSync(`${work}/target`, "");
    locker.lockSync(`${work}/target`, { update: 500 });

    // pull the lock away from under the holder, to see it notice
    fs.rmdirSync(`${work}/target.lock`);
    setInterval(() => {}, 1000);
"""


def scan(root) -> set[tuple[str, int]]:
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", "--output-format", "json"]
        + [str(root / "test" / "fixtures" / "pull.js")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {(r["code"], r["location"]["row"]) for r in json.loads(proc.stdout or "[]")}


def package(tmp_path, name: str):
    root = tmp_path / name
    write(root, "package.json", json.dumps({"name": name, "main": "index.js"}))
    write(root, "index.js", "module.exports = require('./lib/lockfile');\n")
    write(root, "test/fixtures/pull.js", textwrap.dedent(FIXTURE).lstrip("\n"))
    return root


def test_require_of_the_package_root_is_the_library(tmp_path):
    # the library's own lock (mkdir plus an mtime breaker, beside the script), not LCK107
    assert scan(package(tmp_path, "proper-lockfile")) == {
        ("LCK101", 7),
        ("LCK106", 7),
        ("LCK501", 7),
    }


def test_a_package_root_with_another_name_stays_unknown(tmp_path):
    # nothing says what `locker` is: no lock is read into it (the removal is of a name the
    # script never takes, as before)
    assert scan(package(tmp_path, "lockdir-utils")) == {("LCK107", 10)}
