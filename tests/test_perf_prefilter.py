"""The Python frontend's cheap filters (text tokens, then CPython's AST) must never hide a lock
fact: scripts that reach a lock only through the constructs the filters look for are still
analysed.  No timing here (timings live in bench/)."""

from __future__ import annotations

from lockcheck.engine import analyze_text

STOP_PREVIOUS = '''\
#!/usr/bin/env python3
"""Stop the nightly report job before the maintenance window."""
import sys

from psutil import NoSuchProcess, Process

PIDFILE = "/var/run/report-job.pid"


def stop_previous():
    try:
        with open(PIDFILE) as fh:
            pid = int(fh.read().strip())
    except (OSError, ValueError):
        return 0
    try:
        Process(pid).terminate()
    except NoSuchProcess:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(stop_previous())
'''


def codes_at(text: str) -> list[tuple[str, int]]:
    _facts, findings = analyze_text("job.py", text, "python")
    return [(f.code, f.span.line) for f in findings]


def test_psutil_signal_through_from_import_is_analysed():
    # psutil reached only by `from psutil import Process`: no removal, no lock library
    assert codes_at(STOP_PREVIOUS) == [("LCK108", 17)]


def test_psutil_send_signal_through_from_import_is_analysed():
    text = STOP_PREVIOUS.replace(
        "from psutil import NoSuchProcess, Process",
        "import signal\n\nfrom psutil import NoSuchProcess, Process",
    ).replace("Process(pid).terminate()", "Process(pid).send_signal(signal.SIGTERM)")
    assert [code for code, _line in codes_at(text)] == ["LCK108"]


CLEAN_MARKERS = '''\
#!/usr/bin/env python3
"""Cleanup job run from cron after the backup window."""
import glob
import os

MARKERS = "/var/tmp/backup"

for stale in glob.glob(os.path.join(MARKERS, "*.tmp")):
    os.remove(stale)
os.remove(os.path.join(MARKERS, "{name}"))
print("cleaned")
'''


def test_removal_of_a_running_marker_is_analysed():
    # the only lock-like string is the marker's name: "running" is a lock word
    assert codes_at(CLEAN_MARKERS.format(name="nightly.running")) == [("LCK107", 10)]


def test_removal_of_a_camel_case_lock_name_is_analysed():
    assert codes_at(CLEAN_MARKERS.format(name="backupLock")) == [("LCK107", 10)]


def test_removal_of_a_pid_file_is_analysed():
    assert codes_at(CLEAN_MARKERS.format(name="backup.pid")) == [("LCK107", 10)]
