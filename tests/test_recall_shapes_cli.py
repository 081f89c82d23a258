"""Ordinary spellings of known lock shapes, through the CLI (issue #12: misses of the blind
recall sets' dev parts).  Each positive sits beside a spelling that must stay quiet."""

from __future__ import annotations

import json
import textwrap


def findings(cli, tmp_path, src: str, name: str) -> set[tuple[str, int]]:
    (tmp_path / name).write_text(textwrap.dedent(src).lstrip("\n"))
    status, out, err = cli("scan", "--isolated", "--select", "ALL", "--output-format", "json", name)
    assert status in (0, 1), err
    return {(f["code"], f["location"]["row"]) for f in json.loads(out)}


def codes(found: set[tuple[str, int]]) -> set[str]:
    return {c for c, _ in found}


# ------------------------------------------- Python: a clash that falls through to a retry

RETRY_AFTER_TRY = """
    import os
    import time

    LOCK = "/var/lib/sync/sync.lock"

    while True:
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            print("another sync holds the lock")
        time.sleep(5)
    try:
        print("syncing")
    finally:
        os.close(fd)
        os.remove(LOCK)
    """


def test_a_clash_that_falls_through_to_a_sleep_and_retry_is_an_existence_lock(cli, tmp_path):
    assert ("LCK101", 8) in findings(cli, tmp_path, RETRY_AFTER_TRY, "sync.py")


def test_creating_items_in_a_loop_that_sleeps_is_no_lock(cli, tmp_path):
    src = """
        import os
        import time

        OUT = "/srv/reports"
        names = ["daily", "weekly"]
        while names:
            name = names.pop()
            try:
                os.mkdir(os.path.join(OUT, name))
            except FileExistsError:
                pass
            time.sleep(1)
        """
    assert findings(cli, tmp_path, src, "reports.py") == set()


# ------------------------------------- Python: success recorded in a flag, the flag returned

FLAG_RETURNED = """
    import os
    import sys

    LOCK = "/var/lib/sync/sync.lock"


    def acquire():
        ok = False
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            ok = True
        except FileExistsError:
            print("another sync is running")
        return ok


    def main():
        if not acquire():
            sys.exit(0)
        try:
            print("syncing")
        finally:
            os.remove(LOCK)


    if __name__ == "__main__":
        main()
    """


def test_a_success_flag_returned_to_the_caller_makes_the_create_a_lock(cli, tmp_path):
    found = findings(cli, tmp_path, FLAG_RETURNED, "sync.py")
    assert ("LCK101", 10) in found
    # the caller's `sys.exit(0)` on a False flag is the busy branch
    assert ("LCK401", 20) in found


def test_a_flag_the_handler_sets_itself_is_not_the_success_flag(cli, tmp_path):
    # the handler sets the flag True too: the result says nothing about the clash
    src = FLAG_RETURNED.replace(
        'print("another sync is running")',
        'print("reusing the existing file")\n            ok = True',
    )
    assert src != FLAG_RETURNED
    assert "LCK401" not in codes(findings(cli, tmp_path, src, "sync.py"))


# ------------------------- Python: the holder judged dead falls through to the overwrite

PID_TRY_ELSE = """
    import os
    from os.path import dirname, isfile


    def refuse_second_copy(app, pid_path):
        if isfile(pid_path):
            with open(pid_path) as f:
                pid = f.read()
            if pid == "":
                return
            try:
                os.kill(int(pid), 0)
            except OSError:
                pass
            else:
                print("%s is already running" % app)
                quit()
        os.makedirs(dirname(pid_path), exist_ok=True)
        with open(pid_path, "w") as f:
            f.write(str(os.getpid()))
    """


def test_a_pid_file_written_after_a_failed_liveness_test_is_a_stale_overwrite(cli, tmp_path):
    found = findings(cli, tmp_path, PID_TRY_ELSE, "pid.py")
    assert ("LCK105", 12) in found
    assert ("LCK106", 19) in found
    # the busy branch is the live holder's `quit()`, not the early return on an empty file
    assert ("LCK401", 17) in found


def test_the_runs_own_release_after_a_liveness_test_is_no_stale_breaker(cli, tmp_path):
    # no takeover follows the test: the unlink in `finally` is the run's release
    src = """
        import sys
        from pathlib import Path

        import psutil

        PIDFILE = Path("/var/lib/mirror/mirror.pid")


        def main() -> int:
            if PIDFILE.exists():
                if psutil.pid_exists(int(PIDFILE.read_text())):
                    return 75
            try:
                print("mirroring")
            finally:
                PIDFILE.unlink()
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        """
    assert "LCK106" not in codes(findings(cli, tmp_path, src, "mirror.py"))


# ------------------------------------------------- shell: `ps -p`, then `if [ $? -eq 0 ]`

PS_STATUS = """
    #!/bin/bash
    PIDFILE=/var/run/report.pid
    if [ -f $PIDFILE ]
    then
      PID=$(cat $PIDFILE)
      ps -p $PID > /dev/null 2>&1
      if [ $? -eq 0 ]
      then
        echo "Process already running"
        exit 1
      else
        echo $$ > $PIDFILE
        if [ $? -ne 0 ]
        then
          echo "Could not create PID file"
          exit 1
        fi
      fi
    else
      echo $$ > $PIDFILE
    fi
    run_report  # noqa: LCK999
    """


def test_a_liveness_test_read_through_dollar_question_on_the_next_line(cli, tmp_path):
    found = findings(cli, tmp_path, PS_STATUS, "report.sh")
    assert ("LCK105", 6) in found
    assert ("LCK106", 12) in found


def test_tests_that_tree_sitter_runs_together_are_read_one_by_one(cli, tmp_path):
    # tree-sitter-bash 0.25 reads `[ $? -eq 0 ]` + newline + a redirection + another `[` as one
    # test spanning the lines; lockcheck repairs the parse without moving any line: the
    # comment on the last line is still found on its own line (its unknown code is reported)
    (tmp_path / "report.sh").write_text(textwrap.dedent(PS_STATUS).lstrip("\n"))
    status, out, err = cli(
        "scan", "--isolated", "--extend-select", "LCK001", "--output-format", "json", "report.sh"
    )
    rows = {(f["code"], f["location"]["row"]) for f in json.loads(out)}
    assert ("LCK001", 22) in rows, (rows, err)


def test_the_same_script_with_then_on_the_test_line_agrees(cli, tmp_path):
    same_line = PS_STATUS.replace("]\n  then", "]; then").replace("]\n      then", "]; then")
    same_line = same_line.replace("]\n    then", "]; then").replace("]\n        then", "]; then")
    a = codes(findings(cli, tmp_path, PS_STATUS, "a.sh"))
    b = codes(findings(cli, tmp_path, same_line, "b.sh"))
    assert a == b and {"LCK105", "LCK106"} <= a


# ----------------------- shell: `[ ! -z "$pid" -a -d /proc/$pid ] && exit`: the ! is the -z's

PROC_AND = """
    #!/bin/bash
    lf=/var/lib/cleanup/cleanup.pid
    cat /dev/null >> $lf
    read lastPID < $lf
    [ ! -z "$lastPID" -a -d /proc/$lastPID ] && exit
    echo $$ > $lf
    run_cleanup
    """


def test_a_negated_operand_joined_by_dash_a_does_not_negate_the_proc_test(cli, tmp_path):
    found = findings(cli, tmp_path, PROC_AND, "cleanup.sh")
    assert ("LCK105", 5) in found
    assert ("LCK401", 5) in found  # bare exit after the test held: status 0
    assert ("LCK106", 6) in found


def test_the_whole_test_negated_is_the_dead_branch(cli, tmp_path):
    src = PROC_AND.replace(
        '[ ! -z "$lastPID" -a -d /proc/$lastPID ] && exit',
        '[ -z "$lastPID" -o ! -d /proc/$lastPID ] || exit 75',
    )
    found = findings(cli, tmp_path, src, "cleanup.sh")
    assert ("LCK105", 5) in found
    assert "LCK401" not in codes(found)  # the live holder's branch exits 75


# ------------------------- shell: a bare exit in the then-body keeps the condition's status 0

NESTED_BARE_EXIT = """
    #!/bin/bash
    LOCK_DIR=/var/lib/dumps/dumps.lock
    PID_FILE=$LOCK_DIR/pid
    if mkdir ${LOCK_DIR} 2>/dev/null; then
      trap 'rm -rf "$LOCK_DIR"' EXIT
      echo $$ > ${PID_FILE}
      dump_databases
    else
      if [ -f ${PID_FILE} ] && kill -0 $(cat ${PID_FILE}) 2>/dev/null; then
        exit
      else
        rm -rf ${LOCK_DIR}
        exit
      fi
    fi
    """


def test_a_bare_exit_after_a_holding_condition_exits_zero(cli, tmp_path):
    found = findings(cli, tmp_path, NESTED_BARE_EXIT, "dumps.sh")
    assert ("LCK401", 10) in found


def test_an_explicit_skip_code_there_is_quiet(cli, tmp_path):
    src = NESTED_BARE_EXIT.replace(
        "2>/dev/null; then\n        exit\n", "2>/dev/null; then\n        exit 75\n"
    )
    assert src != NESTED_BARE_EXIT
    assert ("LCK401", 10) not in findings(cli, tmp_path, src, "dumps.sh")


# --------------------- Python: a helper creates, its caller's handler judges and takes over

HELPER_CREATE = """
    import os


    class AlreadyLocked(Exception):
        pass


    class PidLock:
        def __init__(self, pidfile):
            self.pidfile = pidfile
            try:
                self._create()
            except OSError:
                self._check()
                os.unlink(self.pidfile)
                self._create()

        def _create(self):
            fd = os.open(self.pidfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)

        def _check(self):
            with open(self.pidfile) as f:
                pid = int(f.readline())
            try:
                os.kill(pid, 0)
                raise AlreadyLocked(pid)
            except ProcessLookupError:
                pass


    if __name__ == "__main__":
        lock = PidLock("/var/lib/fetch/fetch.pid")
        print("fetching")
    """


def test_a_create_whose_clash_the_callers_handler_takes_over_is_a_lock(cli, tmp_path):
    found = findings(cli, tmp_path, HELPER_CREATE, "fetch.py")
    assert ("LCK101", 19) in found
    assert ("LCK105", 29) in found
    # the caller removes the file once the raising check has let it go on: a stale breaker
    assert ("LCK106", 15) in found


def test_a_handler_that_always_replaces_the_file_is_no_lock(cli, tmp_path):
    # no check before the removal: the old file never stops the run
    src = HELPER_CREATE.replace("                self._check()\n", "")
    assert src != HELPER_CREATE
    found = codes(findings(cli, tmp_path, src, "fetch.py"))
    assert "LCK101" not in found and "LCK106" not in found


# ----------------------- Python: a liveness helper's result tested after an if/else; str(p)

HELPER_ALIVE = """
    import logging
    import os
    from pathlib import Path

    log = logging.getLogger(__name__)


    class LockHeld(Exception):
        pass


    def _pid_is_alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


    class ProcessLock:
        def __init__(self, path):
            self._path = Path(path)

        def _read(self):
            text = self._path.read_text().strip()
            pid, host = text.split("|")
            return int(pid), host

        def acquire(self):
            if self._path.exists():
                other_pid, other_host = self._read()
                if other_host == os.uname().nodename:
                    alive = _pid_is_alive(other_pid)
                else:
                    alive = True
                if alive:
                    raise LockHeld(other_pid)
                log.warning("removing stale lock %s", self._path)
                self._path.unlink()
            fd = os.open(str(self._path), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, f"{os.getpid()}|{os.uname().nodename}".encode())
            os.close(fd)
    """


def test_a_liveness_helper_tested_after_an_if_else_decides(cli, tmp_path):
    found = findings(cli, tmp_path, HELPER_ALIVE, "plock.py")
    assert ("LCK105", 14) in found
    # `str(self._path)` and `self._path` name one file: the unlink breaks this lock
    assert ("LCK106", 39) in found


def test_a_liveness_helper_used_for_a_report_only_is_quiet(cli, tmp_path):
    src = HELPER_ALIVE.replace(
        "                if alive:\n                    raise LockHeld(other_pid)\n"
        '                log.warning("removing stale lock %s", self._path)\n'
        "                self._path.unlink()\n",
        '                log.info("holder alive: %s", alive)\n',
    )
    assert src != HELPER_ALIVE
    assert "LCK105" not in codes(findings(cli, tmp_path, src, "plock.py"))


# ---------------------------- Python: a stale lock directory emptied before its rmdir

LOCK_DIR_EMPTIED = """
    import json
    import os
    import sys
    from pathlib import Path

    LOCK = Path("/var/lib/pipeline/pipeline.lock")


    def alive(pid):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


    def take():
        try:
            LOCK.mkdir()
        except FileExistsError:
            status_file = LOCK / "status.json"
            try:
                status = json.loads(status_file.read_text())
            except Exception:
                status = {}
            pid = int(status.get("pid") or 0)
            if alive(pid):
                sys.exit(75)
            for p in LOCK.glob("*"):
                p.unlink()
            LOCK.rmdir()
            LOCK.mkdir()
        (LOCK / "status.json").write_text(json.dumps({"pid": os.getpid()}))
    """


def test_the_breaker_is_the_rmdir_not_the_files_emptied_before_it(cli, tmp_path):
    found = findings(cli, tmp_path, LOCK_DIR_EMPTIED, "pipeline.py")
    assert ("LCK105", 11) in found  # through `status.get("pid")`, bound in a try and its handler
    stale = {line for code, line in found if code == "LCK106"}
    assert stale == {31}


# ------------------------------------------- Python: a symlink lock's PID read with readlink

SYMLINK_PID = """
    import errno
    import os

    NAME = "/var/lib/feed/feed.lock"


    def lock():
        while True:
            try:
                os.symlink(str(os.getpid()), NAME)
                return True
            except OSError as e:
                if e.errno != errno.EEXIST:
                    raise
                pid = os.readlink(NAME)
                try:
                    os.kill(int(pid), 0)
                except OSError as e:
                    if e.errno == errno.ESRCH:
                        os.remove(NAME)
                        continue
                    raise
                return False
    """


def test_the_pid_a_symlink_lock_names_is_a_stored_pid(cli, tmp_path):
    found = findings(cli, tmp_path, SYMLINK_PID, "feed.py")
    assert ("LCK101", 10) in found
    assert ("LCK105", 17) in found
    assert ("LCK106", 20) in found


# ----------------------------------------- a lock named after the script's own path: beside it


def test_a_lock_named_after_the_scripts_own_path_lies_beside_it(cli, tmp_path):
    src = """
        #!/bin/bash
        exec 9<>"$0.lock" || exit 3
        flock -n 9 || exit 75
        sync_mirror
        """
    assert ("LCK501", 2) in findings(cli, tmp_path, src, "mirror.sh")
    py = """
        import fcntl
        import sys

        fh = open(__file__ + ".lock", "a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        """
    assert ("LCK501", 4) in findings(cli, tmp_path, py, "mirror.py")


def test_locking_the_script_file_itself_is_not_beside_it(cli, tmp_path):
    src = """
        #!/bin/bash
        exec 9<"$0" || exit 3
        flock -n 9 || exit 75
        sync_mirror
        """
    assert "LCK501" not in codes(findings(cli, tmp_path, src, "mirror.sh"))


# ------------- Python: a hard-link lock whose clash falls through to `return False`, an age test

LINK_LOCK = """
    import errno
    import os
    import time


    class LockFile:
        def __init__(self, path, expiry=3600):
            self.path = path
            self.expiry = expiry

        def trylock(self, tmpfile):
            try:
                st = os.stat(self.path)
                if time.time() - st.st_mtime < self.expiry:
                    return False
                os.remove(self.path)
            except OSError as e:
                if e.errno != errno.ENOENT:
                    raise
            open(tmpfile, "w").close()
            try:
                os.link(tmpfile, self.path)
                return True
            except:
                pass
            try:
                os.unlink(tmpfile)
            except OSError:
                pass
            return False


    if __name__ == "__main__":
        lock = LockFile("/var/lib/news/fetch.lock")
        if not lock.trylock("/var/lib/news/fetch.tmp.%d" % os.getpid()):
            raise SystemExit(75)
    """


def test_a_link_lock_whose_clash_falls_through_to_return_false(cli, tmp_path):
    found = findings(cli, tmp_path, LINK_LOCK, "lockfile.py")
    assert ("LCK101", 22) in found
    # the removal after `if <young>: return False` runs only for an old lock
    assert ("LCK106", 16) in found


def test_a_link_that_reports_nothing_on_a_clash_is_no_lock(cli, tmp_path):
    src = LINK_LOCK.replace("                return True\n", "                print('linked')\n")
    src = src.replace("class LockFile:", "class Mirror:").replace("trylock", "copy")
    assert src.count("return True") == 0
    assert "LCK101" not in codes(findings(cli, tmp_path, src, "mirror.py"))


# ------------------ Python: a helper's built-in error, caught by name, continues the busy branch

RAISES_BUILTIN = """
    import fcntl
    import logging
    import logging.handlers
    import os

    log = logging.getLogger("cronrunner")
    log.addHandler(logging.handlers.SysLogHandler(address="/dev/log"))


    def getlock(fname):
        fd = os.open(fname, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RuntimeError("could not acquire lock")
        return fd


    if __name__ == "__main__":
        try:
            fd = getlock(__file__)
        except RuntimeError:
            log.info("another run holds the lock")
            exit(0)
        print("polling")
    """


def test_a_builtin_error_the_caller_catches_by_name_continues_the_busy_branch(cli, tmp_path):
    # the skip goes to syslog through a handler configured here: durable, so LCK402
    assert ("LCK402", 24) in findings(cli, tmp_path, RAISES_BUILTIN, "cronrunner.py")


def test_a_wide_handler_does_not_take_a_builtin_error_for_the_busy_branch(cli, tmp_path):
    src = RAISES_BUILTIN.replace("except RuntimeError:", "except Exception:")
    assert "LCK402" not in codes(findings(cli, tmp_path, src, "cronrunner.py"))


# ----------------- Python: `if not exists(M): ... create M` in a waiting loop is a lock's test

MARKER_IN_WAIT_LOOP = """
    import os
    import sys
    import time

    MARKER = "/var/lib/runner/busy.marker"


    def lock():
        waited = 0
        while waited < 600:
            if not os.path.exists(MARKER):
                with open(MARKER, "w") as f:
                    f.write("delete when the job is done")
                return True
            print("another job is running")
            time.sleep(10)
            waited += 10
        return False


    def unlock():
        os.remove(MARKER)


    if __name__ == "__main__":
        if sys.argv[1] == "lock":
            if not lock():
                sys.exit(1)
        else:
            unlock()
    """


def test_a_test_then_create_in_a_waiting_loop_is_not_atomic(cli, tmp_path):
    assert ("LCK103", 12) in findings(cli, tmp_path, MARKER_IN_WAIT_LOOP, "runner_lock.py")


def test_making_a_missing_file_in_a_loop_that_does_not_wait_is_no_lock(cli, tmp_path):
    src = """
        import os

        for name in ("/srv/feeds/a.cfg", "/srv/feeds/b.cfg"):
            if not os.path.exists(name):
                with open(name, "w") as f:
                    f.write("[feed]")
        """
    assert "LCK103" not in codes(findings(cli, tmp_path, src, "feeds.py"))


# ------------------------ Python: one judgement of the holder, however many calls it takes

TWO_CHECKS_ONE_DECISION = """
    import os
    from pathlib import Path

    import psutil

    LOCK = Path("/var/lib/listings/listings.pid")


    def ours_running(pid):
        if not psutil.pid_exists(pid):
            return False
        return "listings" in " ".join(psutil.Process(pid).cmdline())


    def any_running(pid):
        return psutil.pid_exists(pid)


    def acquire():
        if LOCK.exists():
            pid = int(LOCK.read_text())
            if ours_running(pid):
                return False
            elif any_running(pid):
                return False
            else:
                LOCK.unlink()
        LOCK.write_text(str(os.getpid()))
        return True


    if __name__ == "__main__":
        if not acquire():
            raise SystemExit(75)
    """


def test_liveness_helpers_of_one_if_elif_chain_are_one_finding(cli, tmp_path):
    found = findings(cli, tmp_path, TWO_CHECKS_ONE_DECISION, "listings.py")
    assert len([1 for code, _ in found if code == "LCK105"]) == 1
    assert ("LCK106", 27) in found


# ---------------- shell: a removal guarded only by a test that the name exists is unconditional

FOREIGN_GUARDED = """
    #!/bin/bash
    # clear the restore job's lock before the resize
    if [ -f /var/lock/restore-db.lock ]; then
      rm /var/lock/restore-db.lock
    fi
    [ -e /var/lock/backup.lock ] && rm -f /var/lock/backup.lock
    resize_disk
    """


def test_a_removal_behind_an_existence_test_of_the_same_name_is_unconditional(cli, tmp_path):
    found = findings(cli, tmp_path, FOREIGN_GUARDED, "resize.sh")
    assert ("LCK107", 4) in found and ("LCK107", 6) in found


def test_a_removal_behind_another_condition_stays_conditional(cli, tmp_path):
    src = FOREIGN_GUARDED.replace(
        "if [ -f /var/lock/restore-db.lock ]; then",
        'if [ -f /var/lock/restore-db.lock ] && [ "$FORCE" = yes ]; then',
    ).replace("[ -e /var/lock/backup.lock ] &&", '[ "$FORCE" = yes ] &&')
    assert "LCK107" not in codes(findings(cli, tmp_path, src, "resize.sh"))


# ----------------- Python: a lock handed out as a handle to callers this file does not have

HANDED_OUT = """
    from pathlib import Path


    class Handle:
        def __init__(self, path):
            self.path = path

        def release(self):
            self.path.rmdir()


    def acquire_job_lock(root):
        lock_dir = Path(root) / "job.lock"
        try:
            lock_dir.mkdir()
        except FileExistsError:
            raise RuntimeError("another run holds the lock")
        return Handle(lock_dir)
    """


def test_a_lock_handed_out_to_callers_elsewhere_is_judged_there(cli, tmp_path):
    found = findings(cli, tmp_path, HANDED_OUT, "joblock.py")
    assert ("LCK101", 15) in found and "LCK202" not in codes(found)


def test_a_caller_in_the_same_file_is_judged(cli, tmp_path):
    src = HANDED_OUT + (
        "\n\n    if __name__ == '__main__':\n"
        "        h = acquire_job_lock('/srv/jobs')\n"
        "        print('working')\n"
        "        h.release()\n"
    )
    assert ("LCK202", 15) in findings(cli, tmp_path, src, "joblock.py")


def test_a_command_after_a_three_stage_pipeline_is_read_as_its_own(cli, tmp_path):
    # tree-sitter-bash 0.25 reads the line after `a | b | c` as more words of `c` (its issue
    # 347): the flock on the next line would be lost
    src = """
        #!/bin/bash
        exec 9>/var/lock/report.lock
        ps aux | grep report | wc -l
        flock -n 9 || exit 0
        run_report
        """
    found = findings(cli, tmp_path, src, "report.sh")
    assert ("LCK401", 4) in found and ("LCK406", 2) in found


def test_a_stop_scripts_liveness_test_before_its_kill_is_not_lck105(cli, tmp_path):
    src = """
        #!/bin/bash
        PIDFILE=/var/run/app.pid
        [ -f $PIDFILE ] && pid=$(cat $PIDFILE)
        [ -n "$pid" ] && ps -p $pid | grep $pid >/dev/null
        if [ $? -eq 0 ]; then
          kill -9 $pid
          exit
        fi
        echo "not running"
        """
    stop = findings(cli, tmp_path, src, "stop.sh")
    assert "LCK105" not in codes(stop) and ("LCK108", 6) in stop
    # the same test deciding whether a run starts is LCK105
    start = src.replace("kill -9 $pid", 'echo "running"')
    assert ("LCK105", 4) in findings(cli, tmp_path, start, "start.sh")


# ---------------- Python 2: tabs mixed with spaces, as Python 2 counts them; os.getpgid(pid)

PY2_TABS = (
    "import os, sys\n"
    "\n"
    "def log(msg):\n"
    "\topen('/var/log/fresser.log', 'a').write(msg + '\\n')\n"
    "\n"
    'if __name__ == "__main__":\n'
    "\tfor o in sys.argv:\n"
    '\t\tif o == "-d":\n'
    "\t\t    daemon = True\n"
    '\t    \telif o == "-h":\n'
    "\t\t    sys.exit()\n"
    '\tpidFileName = "/var/lib/fresser/fresser.pid"\n'
    "\tif os.path.isfile(pidFileName):\n"
    "\t\tpid = int(open(pidFileName).readline())\n"
    "\t\ttry:\n"
    "\t\t\tos.getpgid(pid)\n"
    '\t\t\tprint "already running"\n'
    "\t\t\tsys.exit(0)\n"
    "\t\texcept OSError, e:\n"
    "\t\t\tpass\n"
    '\tpidFile = open(pidFileName, "w")\n'
    "\tpidFile.write(str(os.getpid()))\n"
)


def test_python2_tab_indentation_is_read_as_python2_reads_it(cli, tmp_path):
    (tmp_path / "fresser.py").write_text(PY2_TABS)
    status, out, err = cli(
        "scan", "--isolated", "--select", "ALL", "--output-format", "json", "fresser.py"
    )
    found = {(f["code"], f["location"]["row"]) for f in json.loads(out)}
    # `<tab><4 spaces><tab>elif` is column 16 for Python 2, like the `if` it continues
    assert ("LCK105", 16) in found and ("LCK401", 18) in found and ("LCK103", 21) in found
    assert any(code == "LCK000" for code, _ in found)  # python3 cannot run it


# --------------- Python: a module helper only a lock class calls is judged as that class

CLASS_HELPER = """
    import os


    def _create_marker(name):
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)


    class SoftLock:
        def __init__(self, name):
            self.name = name

        def acquire(self):
            try:
                _create_marker(self.name)
            except FileExistsError:
                return False
            return True

        def release(self):
            os.unlink(self.name)
    """


def test_a_helper_that_only_a_lock_class_calls_hands_the_lock_to_its_users(cli, tmp_path):
    found = findings(cli, tmp_path, CLASS_HELPER, "softlock.py")
    assert ("LCK101", 5) in found and "LCK202" not in codes(found)


def test_the_class_used_in_the_same_file_without_finally_is_lck202(cli, tmp_path):
    src = CLASS_HELPER + (
        "\n\n    if __name__ == '__main__':\n"
        "        lock = SoftLock('/var/lib/feed/feed.lock')\n"
        "        if not lock.acquire():\n"
        "            raise SystemExit(75)\n"
        "        print('fetching')\n"
        "        lock.release()\n"
    )
    assert "LCK202" in codes(findings(cli, tmp_path, src, "softlock.py"))
