#!/usr/bin/env python3
"""Cron: 15 6 * * *  cd /srv/reports && ./report_build.py -- the morning sales report."""

import fcntl
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOCK_PATH = os.path.join(HERE, "report_build.lock")


def build_report() -> None:
    """Query the warehouse and render the report (elided)."""


def main() -> None:
    lock = open(LOCK_PATH, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("report build already running")
        sys.exit()
    build_report()


if __name__ == "__main__":
    main()
