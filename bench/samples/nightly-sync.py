#!/usr/bin/env python3
"""Sample job script for `bench/run.py single`: a nightly export job of ordinary size and
shape (argparse, logging, a dataclass, subprocess, an fcntl guard and a finally)."""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

JOB_NAME = Path(sys.argv[0]).name
STATE_DIR = Path(os.environ.get("STATE_DIR", "/var/lib/nightly-export"))
LOCK_FILE = Path(os.environ.get("XDG_RUNTIME_DIR", "/run/lock")) / f"{JOB_NAME}.lock"
EX_TEMPFAIL = 75

log = logging.getLogger(JOB_NAME)


@dataclass
class Target:
    name: str
    source: Path
    dest: str

    @classmethod
    def parse(cls, spec: str) -> Target:
        name, _, rest = spec.partition(":")
        source, _, dest = rest.partition("=")
        return cls(name, Path(source), dest or f"backup:/exports/{name}")


def export(target: Target, dry_run: bool) -> int:
    cmd = ["rsync", "-a", "--delete", f"{target.source}/", target.dest]
    if dry_run:
        cmd.insert(1, "--dry-run")
    log.info("exporting %s: %s", target.name, " ".join(cmd))
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        log.error("%s failed (%d): %s", target.name, done.returncode, done.stderr.strip())
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=JOB_NAME)
    ap.add_argument("-n", "--dry-run", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("targets", nargs="*", default=["a:/srv/a", "b:/srv/b"])
    args = ap.parse_args(argv)
    logging.basicConfig(
        filename=STATE_DIR / "export.log",
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s[%(process)d]: %(message)s",
    )
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log.info("another run holds %s; skipping", LOCK_FILE)
        return EX_TEMPFAIL
    try:
        failed = [t.name for t in map(Target.parse, args.targets) if export(t, args.dry_run)]
        if failed:
            log.error("failed: %s", ", ".join(failed))
            return 1
        (STATE_DIR / "last-success").write_text(f"{os.getpid()}\n")
        return 0
    finally:
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
