#!/usr/bin/env python3
"""Sample job for `bench/run.py single`: a nightly report job of ordinary size and shape
(argparse, logging, a dataclass, pathlib, a subprocess, a non-blocking flock guard)."""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

STATE_DIR = Path(os.environ.get("STATE_DIR", "/var/lib/nightly-report"))
LOCK_FILE = Path(os.environ.get("XDG_RUNTIME_DIR", "/run/lock")) / "nightly-report.lock"
EX_TEMPFAIL = 75

log = logging.getLogger("nightly-report")


@dataclass
class Source:
    name: str
    url: str
    tags: list[str] = field(default_factory=list)

    def fetch(self, timeout: int) -> dict:
        out = subprocess.run(
            ["curl", "-fsS", "--max-time", str(timeout), self.url],
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout)


def load_sources(path: Path) -> list[Source]:
    with path.open() as fh:
        return [Source(**item) for item in json.load(fh)]


def summarise(rows: list[dict]) -> dict:
    total = sum(r.get("count", 0) for r in rows)
    failed = [r["name"] for r in rows if r.get("status") != "ok"]
    return {"total": total, "failed": failed, "sources": len(rows)}


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-n", "--dry-run", action="store_true", help="fetch nothing")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("sources", nargs="?", default=str(STATE_DIR / "sources.json"))
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    lock = open(LOCK_FILE, "a")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log.info("another run holds %s: skipping", LOCK_FILE)
        return EX_TEMPFAIL
    rows = []
    for source in load_sources(Path(args.sources)):
        if args.dry_run:
            log.info("would fetch %s", source.url)
            continue
        try:
            rows.append({"name": source.name, "status": "ok", **source.fetch(args.timeout)})
        except (subprocess.CalledProcessError, ValueError) as exc:
            log.warning("%s: %s", source.name, exc)
            rows.append({"name": source.name, "status": "failed"})
    report = summarise(rows)
    (STATE_DIR / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    log.info("%d sources, %d failed", report["sources"], len(report["failed"]))
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
