"""Python and PowerShell shapes behind the misses and false findings of set G (a dev set from
session 12 on, bench/recall/SET-G.md) and of sets E/F's dev parts, each positive beside a
negative, through the CLI: PID files tested, then written with the run's PID; a lock handle's
``.name``; contention tests that only pick a message; PIDs behind a property; releases for a
live holder; atexit hooks after the acquiring call; loops over literal lock names; PowerShell
typographic quotes and dashes, rewrites in the exists branch, script traps and free-name
searches."""

from __future__ import annotations

from helpers import lines_of, scan_files

HANDED = """
    import logging
    import os
    import sys


    def prevent_multiple_instances():
        PID_FILE = "/var/lib/scraper/scraper.state"

        if os.path.exists(PID_FILE):
            logging.critical("Instance Already Exists")
            sys.exit(1)

        with open(PID_FILE, "w") as f:
            f.write({content})

        return PID_FILE
"""


def test_a_tested_name_written_with_the_runs_pid_is_a_lock_though_kept(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "pid.py": HANDED.format(content="str(os.getpid())"),
            "marker.py": HANDED.format(content='"done"'),
        },
    )
    assert lines_of(got["pid.py"], "LCK103") == {13}, got
    assert not lines_of(got["marker.py"], "LCK103"), got  # a run-once marker


CHECKLOCK = """
    $lockfile = {q1}D:\\jobs\\lock.lck{q2}
    $lockstatus = 0
    While ($lockstatus -ne 1)
    {{
        If (Test-Path $lockfile)
        {{
            $pidlist = Get-Content $lockfile
            If (!$pidlist)
            {{
                $PID | Out-File $lockfile
                $lockstatus = 1
            }}
            Else
            {{
                Start-Sleep -Milliseconds 500
            }}
        }}
        Else
        {{
            $PID | Out-File $lockfile
            $lockstatus = 1
        }}
    }}
    Write-Output {q1}working{q2}
    Remove-Item $lockfile {dash}Force
"""


def test_a_test_path_lock_whose_exists_branch_rewrites_the_file(tmp_path):
    ascii_ = CHECKLOCK.format(q1='"', q2='"', dash="-")
    typographic = CHECKLOCK.format(q1="\u201c", q2="\u201d", dash="\u2013")
    got = scan_files(tmp_path, {"ascii.ps1": ascii_, "typo.ps1": typographic})
    for name in got:
        assert lines_of(got[name], "LCK103") == {20}, (name, got[name])
        assert lines_of(got[name], "LCK202") == {20}, (name, got[name])


def test_typographic_quotes_and_dashes_read_as_powershell_reads_them(tmp_path):
    src = """
        $lock = \u201cC:\\ProgramData\\job\\job.lock\u201d
        if ($env:COMPUTERNAME \u2013iin @('a', 'b')) {{ exit 3 }}
        try {{
            New-Item \u2013ItemType File \u2013Path $lock {ea} | Out-Null
        }} catch {{
            Write-Output \u2018busy\u2019
            exit 75
        }}
        try {{ & C:\\jobs\\run.exe }} finally {{ Remove-Item $lock \u2013Force }}
    """
    got = scan_files(
        tmp_path,
        {
            "stop.ps1": src.format(ea="\u2013ErrorAction Stop"),
            "silent.ps1": src.format(ea=""),
        },
    )
    assert lines_of(got["stop.ps1"], "LCK101") == {4}, got  # the path is read from “...”
    assert not lines_of(got["stop.ps1"], "LCK109"), got  # –ErrorAction Stop is read
    assert lines_of(got["silent.ps1"], "LCK109") == {4}, got


SINGLE = """
    import atexit
    import errno
    import fcntl
    import logging
    import os

    logger = logging.getLogger(__name__)
    LOCK_FILE_HANDLE = None


    def cleanup_lock_file():
        global LOCK_FILE_HANDLE
        if LOCK_FILE_HANDLE:
            lock_file_path = LOCK_FILE_HANDLE.name
            fcntl.lockf(LOCK_FILE_HANDLE, fcntl.LOCK_UN)
            LOCK_FILE_HANDLE.close()
            {remove}
            LOCK_FILE_HANDLE = None


    def acquire_lock(lock_file_path):
        global LOCK_FILE_HANDLE
        try:
            LOCK_FILE_HANDLE = open(lock_file_path, "a+")
            fcntl.lockf(LOCK_FILE_HANDLE, fcntl.LOCK_EX | fcntl.LOCK_NB)
            atexit.register(cleanup_lock_file)
            return True
        except (IOError, OSError) as e:
            if e.errno in (errno.EACCES, errno.EAGAIN):
                logger.error("Another instance is already running")
            else:
                logger.critical("Could not create or lock %s: %s", lock_file_path, e)
            if LOCK_FILE_HANDLE:
                LOCK_FILE_HANDLE.close()
            {other}
"""


def test_a_lock_handles_name_and_a_contention_test_that_only_picks_the_message(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "only-message.py": SINGLE.format(
                remove="os.remove(lock_file_path)", other="return False"
            ),
            # the open's failure goes its own way: contention is told apart
            "apart.py": SINGLE.replace(
                'logger.critical("Could not create or lock %s: %s", lock_file_path, e)',
                'logger.critical("Could not create or lock %s: %s", lock_file_path, e)\n'
                "                raise",
            ).format(remove="pass", other="return False"),
        },
    )
    assert lines_of(got["only-message.py"], "LCK201") == {17}, got  # `fh.name` is the path
    assert lines_of(got["only-message.py"], "LCK406") == {24}, got
    assert not lines_of(got["apart.py"], "LCK406"), got
    assert not lines_of(got["apart.py"], "LCK201"), got


PIDLOCK = """
    import errno
    import os
    import time


    class FileLock(object):
        def __init__(self, fpath):
            self.fpath = fpath

        @property
        def lockpid(self):
            return self._readpidfile()

        def _readpidfile(self):
            try:
                pid = int(open(self.fpath, "r").read())
            except (IOError, ValueError):
                return None
            return pid

        def isLocked(self):
            if self.lockpid:
                return os.path.exists("/proc/%s" % self.lockpid)
            return False

        def acquire(self):
            while True:
                try:
                    fd = os.open(self.fpath, os.O_CREAT | os.O_RDWR | os.O_EXCL)
                    os.write(fd, str(os.getpid()).encode())
                    os.close(fd)
                    return
                except OSError as e:
                    if e.errno != errno.EEXIST:
                        raise
                    time.sleep(0.1)

        def release(self):
            if {test}:
                os.unlink(self.fpath)
"""


def test_a_pid_read_through_a_property_and_a_release_for_a_live_holder(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "alive.py": PIDLOCK.format(test="self.isLocked() and os.getpid() == self.lockpid"),
            "dead.py": PIDLOCK.format(test="not self.isLocked()"),
        },
    )
    assert lines_of(got["alive.py"], "LCK105") == {23}, got
    assert not lines_of(got["alive.py"], "LCK106"), got  # its own lock, released while alive
    assert lines_of(got["dead.py"], "LCK106") == {40}, got  # removed as dead: a breaker


ENSURE = """
    import logging
    import os
    import sys

    log = logging.getLogger("lock")
    lock_folder = os.path.join(os.path.dirname(os.path.realpath(sys.argv[0])), "locks")


    def ensure_lock_folder():
        try:
            if not os.path.exists(lock_folder):
                os.mkdir(lock_folder)
            {other}
        except Exception:
            log.exception("cannot create %s", lock_folder)
            sys.exit(1)
"""


def test_making_a_missing_lock_folder_is_no_lock(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "ensure.py": ENSURE.format(other=""),
            "guard.py": ENSURE.format(other="else:\n                sys.exit(75)"),
        },
    )
    assert not lines_of(got["ensure.py"], "LCK101"), got
    assert lines_of(got["guard.py"], "LCK103") | lines_of(got["guard.py"], "LCK101"), got


TRAPPED = """
    $ErrorActionPreference = 'Continue'
    trap {
        Write-Output "Interrupted: $($_.Exception.Message)"
        exit 1
    }
    $logDir = Join-Path -Path $PSScriptRoot -ChildPath "script_logs"
    {make}
    $rotated = Join-Path -Path $logDir -ChildPath "job_1.log"
    $counter = 1
    while (Test-Path $rotated) {
        {step}
        $counter++
    }
    Move-Item -Path (Join-Path $logDir "job.log") -Destination $rotated -Force
"""


def test_a_script_trap_and_a_free_name_search_make_no_lock(tmp_path):
    ensure = "if (-not (Test-Path -Path $logDir)) {\n        New-Item -ItemType Directory -Path $logDir -Force | Out-Null\n    }"
    got = scan_files(
        tmp_path,
        {
            "ensure.ps1": TRAPPED.replace("{make}", ensure).replace(
                "{step}", '$rotated = Join-Path -Path $logDir -ChildPath "job_$counter.log"'
            ),
            # waiting for the name to go, then moving onto it: a test-then-create
            "wait.ps1": TRAPPED.replace("{make}", "").replace("{step}", "Start-Sleep -Seconds 1"),
            # a lock folder made with -Force where the trap ends the run: never busy
            "force.ps1": TRAPPED.replace(
                "{make}", "New-Item -ItemType Directory -Path $logDir\\run.lock -Force | Out-Null"
            ).replace("{step}", "Start-Sleep -Seconds 1"),
        },
    )
    assert not lines_of(got["ensure.ps1"], "LCK109"), got
    assert not lines_of(got["ensure.ps1"], "LCK103"), got
    assert lines_of(got["wait.ps1"], "LCK103") == {14}, got
    assert lines_of(got["force.ps1"], "LCK109") == {7}, got


NEGATED = """
    import os


    def acquire_lock(dst):
        lock_file = os.path.join(dst, "fastcopy.lock")

        def write_pid():
            with open(lock_file, "w") as handle:
                handle.write(str(os.getpid()))

        if not os.path.exists(lock_file):
            {create}
            return True
        {after}
"""


def test_a_negated_exists_test_whose_body_creates_and_returns(tmp_path):
    inline = 'with open(lock_file, "w") as handle:\n                handle.write(str(os.getpid()))'
    got = scan_files(
        tmp_path,
        {
            "helper.py": NEGATED.format(create="write_pid()", after="return False"),
            "inline.py": NEGATED.format(create=inline, after="return False"),
            # the run goes on either way: making what is missing
            "goes-on.py": NEGATED.format(create="write_pid()", after="print('exists')"),
        },
    )
    assert lines_of(got["helper.py"], "LCK103") == {8}, got
    assert lines_of(got["inline.py"], "LCK103") == {12}, got
    assert not lines_of(got["goes-on.py"], "LCK103"), got


ATEXIT_AFTER = """
    import atexit
    import fcntl
    import os
    import sys


    class SingleInstance:
        def __init__(self, path):
            self.lockfile = path
            {before}
            atexit.register(self.cleanup)
            {after}

        def lock(self):
            self.fp = open(self.lockfile, "a+")
            try:
                fcntl.lockf(self.fp, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print("Another instance is already running")
                sys.exit(75)

        def cleanup(self):
            fcntl.lockf(self.fp, fcntl.LOCK_UN)
            os.unlink(self.lockfile)


    SingleInstance("/var/lib/app/singleton.lock")
"""


def test_an_atexit_registered_after_the_method_that_takes_the_lock(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "after.py": ATEXIT_AFTER.format(before="self.lock()", after=""),
            "before.py": ATEXIT_AFTER.format(before="", after="self.lock()"),
        },
    )
    assert not lines_of(got["after.py"], "LCK203"), got
    assert lines_of(got["before.py"], "LCK203") == {11}, got
    assert lines_of(got["after.py"], "LCK201") == {24}, got  # the flocked file removed


CLEANER = """
    import os


    def clean():
        for lockfile in [{names}]:
            if os.path.exists(lockfile):
                os.remove(lockfile)


    if __name__ == "__main__":
        clean()
"""


def test_a_loop_removing_other_jobs_lock_names_is_one_lck107(tmp_path):
    got = scan_files(
        tmp_path,
        {
            "locks.py": CLEANER.format(names='"bot.lock", "app.lock", "bot.pid"'),
            "caches.py": CLEANER.format(names='"cache.db", "index.json"'),
        },
    )
    assert lines_of(got["locks.py"], "LCK107") == {7}, got
    assert not lines_of(got["caches.py"], "LCK107"), got
