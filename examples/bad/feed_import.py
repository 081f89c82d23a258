#!/usr/bin/env python3
"""Cron: */30 * * * *  /opt/feeds/bin/feed_import.py -- import supplier price feeds."""

import os
import sys
import time

LOCK = "/var/lib/feed-import/import.lock"
STALE_AFTER = 2 * 60 * 60  # seconds


def import_feeds() -> None:
    """Fetch and load the supplier feeds (elided)."""


def main() -> int:
    if os.path.exists(LOCK) and time.time() - os.path.getmtime(LOCK) > STALE_AFTER:
        os.remove(LOCK)  # assume the previous run crashed
    try:
        fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        print("import already running")
        return 0
    os.write(fd, str(os.getpid()).encode())
    import_feeds()
    os.close(fd)
    os.remove(LOCK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
