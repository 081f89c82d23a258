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


# A job module whose lock code is linked to the rest through a caller (the lock name comes
# from the call site), an attribute bound in __init__ and a script-wide logging set-up.  With
# hundreds of unrelated functions around it (only the lock-related part goes to libcst), every
# finding must be the one the short module gives.
LINKED_JOB = """\
#!/usr/bin/env python3
import fcntl
import logging
import os
import sys

LOG = logging.getLogger("sync")


class Job:
    def __init__(self, name):
        self.path = os.path.join("/tmp", name + ".lock")

    def take(self):
        self.fh = open(self.path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            LOG.info("busy")
            sys.exit(0)

    def close(self):
        os.remove(self.path)


def run(job):
    job.take()
    try:
        copy_files()
    finally:
        job.close()


def copy_files():
    pass


def main():
    run(Job("nightly"))


if __name__ == "__main__":
    main()
"""


def _padding(n: int) -> str:
    out = []
    for i in range(n):
        out.append(
            f"\n\ndef helper_{i}(rows, out=None):\n"
            f"    total = sum(r * {i} for r in rows)\n"
            "    if out is not None:\n"
            "        out.append(total)\n"
            f"    return {{'id': {i}, 'total': total}}\n"
        )
        out.append(f"\n\nclass Model{i}:\n    def value(self):\n        return helper_{i}([1])\n")
    return "".join(out)


def test_unrelated_functions_never_change_the_findings():
    short = codes_at(LINKED_JOB)
    assert short == [("LCK502", 15), ("LCK401", 20), ("LCK201", 23)]
    assert codes_at(LINKED_JOB + _padding(300)) == short
    # padding before the lock code too: the same findings, moved down by the added lines
    pad = _padding(40).lstrip("\n") + "\n\n"
    head, sep, tail = LINKED_JOB.partition("class Job:")
    moved = codes_at(head + pad + sep + tail)
    assert moved == [(code, line + pad.count("\n")) for code, line in short]


def test_a_linked_function_far_away_still_counts():
    # a log file configured in a function far below makes the skip recorded: no LCK401
    far = LINKED_JOB.replace(
        'if __name__ == "__main__":',
        _padding(200) + "\n\ndef setup_logging():\n"
        '    logging.basicConfig(filename="/var/log/sync.log")\n\n\n'
        'if __name__ == "__main__":\n    setup_logging()',
    )
    assert "LCK401" in {code for code, _line in codes_at(LINKED_JOB)}
    assert "LCK401" not in {code for code, _line in codes_at(far)}
    assert "LCK201" in {code for code, _line in codes_at(far)}


def test_functions_imported_under_another_name_still_count():
    src = (
        "import sys\n"
        "from os import mkdir as make_dir, rmdir as drop_dir\n"
        "\n\n"
        "def main():\n"
        "    try:\n"
        "        make_dir('/var/lib/nightly/busy.d')\n"
        "    except OSError:\n"
        "        sys.exit(0)\n"
        "    try:\n"
        "        pass\n"
        "    finally:\n"
        "        drop_dir('/var/lib/nightly/busy.d')\n"
        "\n\n"
        "main()\n"
    )
    codes = {code for code, _line in codes_at(src)}
    assert {"LCK101", "LCK401"} <= codes
    padded = src.replace("\n\ndef main", _padding(50) + "\n\ndef main")
    assert {code for code, _line in codes_at(padded)} == codes


def test_open_imported_under_another_name():
    src = (
        "import sys\n"
        "from io import open as io_open\n"
        "\n\n"
        "def main():\n"
        "    try:\n"
        "        io_open('/var/lib/nightly/run.flag', 'x').close()\n"
        "    except FileExistsError:\n"
        "        sys.exit(0)\n"
        "\n\n"
        "main()\n"
    )
    assert {"LCK101", "LCK401"} <= {code for code, _line in codes_at(src)}
    # read-only opens through the alias are no anchor: libcst never sees such a file
    quiet = src.replace("'x').close()", "'r').read()")
    assert codes_at(quiet) == []


def test_check_then_create_released_by_a_helper_taking_the_path():
    src = """\
#!/usr/bin/env python3
import os
import sys

BUSY = "/var/lib/report/report.flag"


def release(path):
    os.remove(path)


def main():
    if os.path.exists(BUSY):
        sys.exit(0)
    with open(BUSY, "w") as fh:
        fh.write(str(os.getpid()))
    try:
        build_report()
    finally:
        release(BUSY)


main()
"""
    assert {"LCK103", "LCK401"} <= {code for code, _line in codes_at(src)}


def test_check_then_create_through_helpers_is_analysed():
    # neither name is lock-like, no lock library: the test is in one helper (`return
    # exists(P)`), the create in another; the gate must let the file through
    created_in_helper = """\
import atexit
import os
import sys

MARK = "/var/lib/report/active.flag"


def write_mark(path):
    with open(path, "w") as f:
        f.write(str(os.getpid()))


def main():
    if os.path.isfile(MARK):
        print("report already running")
        return 1
    write_mark(MARK)
    atexit.register(os.remove, MARK)
    return 0


sys.exit(main())
"""
    assert ("LCK103", 9) in codes_at(created_in_helper)
    tested_in_helper = """\
import os
import sys


class Mark:
    def __init__(self, path="/var/lib/report/active.flag"):
        self.path = path

    def present(self):
        return os.path.exists(self.path)

    def take(self):
        if self.present():
            sys.exit("busy")
        with open(self.path, "w") as f:
            f.write("1")

    def drop(self):
        os.remove(self.path)


m = Mark()
m.take()
try:
    print("work")
finally:
    m.drop()
"""
    assert ("LCK103", 15) in codes_at(tested_in_helper)
    # the path built by a helper, once through a variable and once called again
    path_from_helper = """\
import os
import sys

RUN_DIR = "/var/lib/report"


def flag_path(name):
    return os.path.join(RUN_DIR, name + ".flag")


def main():
    p = flag_path("active")
    if os.path.exists(p):
        sys.exit("report already running")
    with open(flag_path("active"), "w") as f:
        f.write(str(os.getpid()))
    try:
        print("report")
    finally:
        os.remove(p)


main()
"""
    assert ("LCK103", 15) in codes_at(path_from_helper)


def test_what_a_script_creates_still_counts_when_an_anchor_is_found_first():
    # /tmp/stats.pid is made by this script (prepare, which names nothing lock-like itself):
    # removing it is no LCK107.  The gate meets the flock first; the slicer must still learn
    # that a lock-like name is removed, or it drops prepare and the creation with it.
    src = """\
#!/usr/bin/env python3
import fcntl
import os
import sys

STATS = "/tmp/stats.pid"


def prepare(path):
    open(path, "w").close()


def drop():
    os.remove(STATS)


def main():
    with open("/var/lib/job/run.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        drop()


prepare(STATS)
main()
"""
    assert "LCK107" not in {code for code, _line in codes_at(src)}
    padded = src.replace("\n\ndef drop", _padding(40) + "\n\ndef drop")
    assert "LCK107" not in {code for code, _line in codes_at(padded)}


def test_sliced_crlf_module_has_the_same_findings_and_spans():
    src = LINKED_JOB + _padding(100)
    crlf = src.replace("\n", "\r\n")
    _f, lf_found = analyze_text("job.py", src, "python")
    _f, crlf_found = analyze_text("job.py", crlf, "python")
    assert [(f.code, f.span.line, f.span.col) for f in crlf_found] == [
        (f.code, f.span.line, f.span.col) for f in lf_found
    ]
    assert [crlf[f.span.start : f.span.end] for f in crlf_found] == [
        src[f.span.start : f.span.end] for f in lf_found
    ]
