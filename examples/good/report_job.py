#!/usr/bin/env python3
"""Cron: 15 6 * * *  /opt/reports/report_job.py -- the morning sales report, one run at a time.

Reference pattern: flock on a descriptor in run-private storage, never deleted; a busy run
logs the skip to a file and exits 75 (EX_TEMPFAIL).
"""

import fcntl
import logging
import os
import sys

RUN_DIR = os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}")
LOCK_PATH = os.path.join(RUN_DIR, "report_job.lock")
EX_TEMPFAIL = 75

logging.basicConfig(
    filename=os.path.expanduser("~/.local/state/report_job.log"),
    level=logging.INFO,
    format="%(asctime)s %(levelname)s %(message)s",
)


def build_report() -> None:
    logging.info("report built")


def main() -> int:
    fd = os.open(LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        logging.warning("skipped: previous run still active")
        return EX_TEMPFAIL
    build_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
