"""Python frontend precision: patterns from real code that are not lock bugs (negative tests),
each next to the true positive it must not hide."""

from __future__ import annotations

import textwrap

from lockcheck.engine import analyze_text


def found(src: str, path: str = "/srv/jobs/job.py") -> list[tuple[str, int]]:
    facts_findings = analyze_text(path, textwrap.dedent(src).lstrip("\n"), "python")
    return [(f.code, f.span.line) for f in facts_findings[1]]


def codes(src: str, path: str = "/srv/jobs/job.py") -> set[str]:
    return {c for c, _ in found(src, path)}


# --------------------------------------------------------------------------- LCK301 probes

ARGV_PROBE = """
    #!/usr/bin/env python3
    \"\"\"Report which of the given directories are writable.\"\"\"
    import json
    import os
    import sys


    def main():
        probe_name = sys.argv[1]
        results = {}
        for directory in sys.argv[2:]:
            probe = os.path.join(directory, probe_name)
            try:
                os.mkdir(probe)
                os.rmdir(probe)
            except OSError as exc:
                results[directory] = str(exc)
            else:
                results[directory] = None
        print(json.dumps(results))


    if __name__ == "__main__":
        main()
"""


def test_probe_named_by_the_caller_is_not_a_fixed_probe():
    # the caller chooses the name (it may well carry the caller's pid): unknown, not fixed
    assert not {"LCK301", "LCK101"} & codes(ARGV_PROBE)


def test_probe_with_literal_name_in_an_argument_directory_is_still_lck301():
    src = """
        #!/usr/bin/env python3
        import os
        import sys

        target = sys.argv[1]
        probe = os.path.join(target, ".write-test")
        try:
            os.mkdir(probe)
            os.rmdir(probe)
        except OSError:
            sys.exit("not writable: " + target)
    """
    assert ("LCK301", 8) in found(src)


def test_fixture_directory_with_deferred_cleanup_is_not_a_probe():
    src = """
        import pathlib
        import shutil
        import unittest


        def make_dir(test_case, path):
            p = pathlib.Path(path)
            p.mkdir()
            test_case.addCleanup(lambda: shutil.rmtree(p))
            return p


        class T(unittest.TestCase):
            def test_it(self):
                make_dir(self, "/var/tmp/fixture-data")
    """
    assert "LCK301" not in codes(src)


# --------------------------------------------------------------------------- LCK107

BREAK_FILE = """
    #!/usr/bin/env python3
    import os
    import secrets
    import sys
    import time

    LOCK = "/var/lib/app/app.lock"


    def break_stale(lock_file, mtime_before, ino_before):
        break_path = f"{lock_file}.break.{os.getpid()}.{secrets.token_hex(16)}"
        os.rename(lock_file, break_path)
        st = os.lstat(break_path)
        if st.st_mtime > mtime_before or st.st_ino != ino_before:
            return
        os.unlink(break_path)


    st = os.stat(LOCK)
    break_stale(LOCK, st.st_mtime, st.st_ino)
    time.sleep(1)
    sys.exit(0)
"""


def test_removal_of_a_per_process_break_file_is_not_a_foreign_lock_removal():
    assert "LCK107" not in codes(BREAK_FILE)


def test_module_level_break_file_removal_is_not_lck107():
    src = """
        #!/usr/bin/env python3
        import os

        LOCK = "/var/lib/app/app.lock"
        aside = LOCK + ".break." + str(os.getpid())
        os.rename(LOCK, aside)
        os.unlink(aside)
    """
    assert "LCK107" not in codes(src)


def test_unconditional_removal_of_another_jobs_lock_is_still_lck107():
    src = """
        #!/usr/bin/env python3
        import os

        os.remove("/var/lock/nightly-backup.lock")
        print("cleared")
    """
    assert ("LCK107", 4) in found(src)


# --------------------------------------------------------------------------- LCK405

POLLED_CHILD = """
    #!/usr/bin/env python3
    import fcntl
    import subprocess
    import sys
    import time

    with open("/var/lib/mirror/mirror.lock", "a") as lk:
        try:
            fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(75)
        p = subprocess.Popen(["rsync", "-a", "src/", "dst/"], close_fds=False)
        while p.poll() is None:
            time.sleep(1)
        sys.exit(p.returncode)
"""


def test_child_waited_for_with_a_poll_loop_is_not_background_work():
    assert "LCK405" not in codes(POLLED_CHILD)


def test_child_polled_once_is_still_background_work():
    src = """
        #!/usr/bin/env python3
        import fcntl
        import subprocess
        import sys

        with open("/var/lib/mirror/mirror.lock", "a") as lk:
            try:
                fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                sys.exit(75)
            p = subprocess.Popen(["rsync", "-a", "src/", "dst/"], close_fds=False)
            if p.poll() is not None:
                print("rsync ended at once")
    """
    assert ("LCK405", 11) in found(src)


# --------------------------------------------------------------------------- SoftFileLock


def test_soft_file_lock_constructed_but_never_acquired_is_not_a_lock():
    src = """
        import pytest
        from filelock import SoftFileLock


        def test_policy_rejected(tmp_path):
            with pytest.raises(ValueError):
                SoftFileLock(str(tmp_path / "a"), context_error_policy="explode")


        def test_singleton(tmp_path):
            lock1 = SoftFileLock(tmp_path / "test.lock", is_singleton=True, lifetime=10.0)
            assert lock1.lifetime == 10.0
    """
    assert "LCK101" not in codes(src)


def test_acquire_of_another_functions_variable_is_not_this_soft_lock():
    src = """
        from filelock import FileLock, SoftFileLock


        def describe(tmp_path):
            lock = SoftFileLock(tmp_path / "a")
            return repr(lock.lock_file)


        def run(tmp_path):
            lock = FileLock(tmp_path / "b.lock")
            lock.acquire()
            lock.release()
    """
    assert "LCK101" not in codes(src)


def test_soft_file_lock_acquired_is_still_lck101():
    src = """
        #!/usr/bin/env python3
        from filelock import SoftFileLock, Timeout
        import sys

        lock = SoftFileLock("/var/lib/app/app.lock", timeout=0)
        try:
            lock.acquire()
        except Timeout:
            sys.exit(75)
        try:
            print("work")
        finally:
            lock.release()
    """
    assert ("LCK101", 7) in found(src)  # the acquire


def test_soft_file_lock_handed_out_by_a_factory_is_still_lck101():
    src = """
        from filelock import SoftFileLock


        def job_lock():
            return SoftFileLock("/var/lib/app/app.lock")


        with job_lock():
            print("work")
    """
    assert "LCK101" in codes(src)


# --------------------------------------------------------------------------- LCK106


def test_cache_file_expired_by_age_is_not_a_stale_lock_breaker():
    src = """
        #!/usr/bin/env python3
        import json
        import os
        import time

        cache_file = "/var/cache/app/negative.json"
        if os.path.exists(cache_file):
            if os.path.getmtime(cache_file) > time.time() - 3600:
                with open(cache_file) as f:
                    print(json.load(f))
            else:
                os.remove(cache_file)
    """
    assert "LCK106" not in codes(src)


def test_lock_removed_by_age_is_still_lck106():
    src = """
        #!/usr/bin/env python3
        import os
        import sys
        import time

        LOCK = "/var/lib/app/app.lock"
        if os.path.exists(LOCK) and time.time() - os.path.getmtime(LOCK) > 3600:
            os.remove(LOCK)
        try:
            fd = os.open(LOCK, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            sys.exit(75)
    """
    assert ("LCK106", 8) in found(src)


# --------------------------------------------------------------------------- LCK101 ensure-dir


def test_eexist_and_isdir_accepted_is_an_ensure_dir_helper():
    src = """
        import errno
        import os


        def mkdir_p(path):
            try:
                os.makedirs(path)
                return path
            except OSError as e:
                if e.errno == errno.EEXIST and os.path.isdir(path):
                    return path
                raise


        mkdir_p(os.environ["DATA_DIR"])
    """
    assert "LCK101" not in codes(src)


def test_checked_makedirs_inside_a_broad_error_handler_is_not_a_lock():
    src = """
        #!/usr/bin/env python3
        import os
        import shutil
        import sys


        def main():
            for index in range(3):
                try:
                    run_case(index)
                    topdir = "testcases"
                    if index == 1 and os.path.isdir(topdir):
                        shutil.rmtree(topdir)
                    if not os.path.isdir(topdir):
                        os.makedirs(topdir)
                    shutil.copytree("/tmp/case", os.path.join(topdir, str(index)))
                except Exception as e:
                    print("ERROR", e)
                    sys.exit(1)


        def run_case(i):
            print(i)


        if __name__ == "__main__":
            main()
    """
    assert not {"LCK101", "LCK202", "LCK501"} & codes(src)


def test_mkdir_lock_with_generic_handler_and_exit_is_still_lck101():
    src = """
        #!/usr/bin/env python3
        import os
        import sys

        LOCK = "/var/lib/app/run.lock"
        try:
            os.mkdir(LOCK)
        except OSError:
            print("busy")
            sys.exit(75)
        try:
            print("work")
        finally:
            os.rmdir(LOCK)
    """
    assert ("LCK101", 7) in found(src)


# --------------------------------------------------------------------------- LCK103


def test_config_written_unless_identical_is_not_check_then_create():
    src = """
        import os

        RULES = "/etc/udev/rules.d/99-app-%s.rules"


        class Helper:
            def save(self, user, lines):
                if os.path.exists(RULES % user):
                    with open(RULES % user) as f:
                        if f.readlines() == lines:
                            return False
                with open(RULES % user, "w") as f:
                    f.writelines(lines)
                return True

            def delete(self, user):
                os.remove(RULES % user)
    """
    assert not {"LCK103", "LCK202"} & codes(src)


def test_pid_file_checked_for_a_live_holder_is_still_check_then_create():
    src = """
        #!/usr/bin/env python3
        import os
        import sys

        PIDFILE = "/var/run/app/app.pid"
        if os.path.exists(PIDFILE):
            with open(PIDFILE) as f:
                pid = int(f.read())
            if os.path.exists("/proc/%d" % pid):
                sys.exit(75)
        with open(PIDFILE, "w") as f:
            f.write(str(os.getpid()))
        try:
            print("work")
        finally:
            os.remove(PIDFILE)
    """
    assert "LCK103" in codes(src)


# --------------------------------------------------------------------------- signal handlers

SIGTERM_RELEASE = """
    #!/usr/bin/env python3
    import os
    import signal
    import sys

    LOCK = "/var/lib/app/app.lock"


    def on_term(signum, frame):
        os.rmdir(LOCK)
        sys.exit(143)


    try:
        os.mkdir(LOCK)
    except FileExistsError:
        sys.exit(75)
    signal.signal(signal.SIGTERM, on_term)
    print("work")
    os.rmdir(LOCK)
"""


def test_sigterm_handler_removing_the_lock_is_a_trap_release():
    facts, findings = analyze_text(
        "/srv/jobs/job.py", textwrap.dedent(SIGTERM_RELEASE).lstrip("\n"), "python"
    )
    traps = [r for r in facts.removals if r.via == "trap"]
    assert [(r.span.line, r.hook_span.line) for r in traps] == [(10, 18)]
    assert traps[0].conditional
    # a SIGTERM handler does not cover an exception: the release is still not on every exit
    assert ("LCK202", 15) in [(f.code, f.span.line) for f in findings]


def test_lambda_signal_handler_removing_a_lock_is_not_an_unconditional_removal():
    src = """
        #!/usr/bin/env python3
        import os
        import signal
        import time

        signal.signal(signal.SIGTERM, lambda *a: os.remove("/var/lock/other-job.lock"))
        time.sleep(60)
    """
    facts, findings = analyze_text("/srv/jobs/job.py", textwrap.dedent(src).lstrip("\n"), "python")
    assert [r.via for r in facts.removals] == ["trap"]
    assert "LCK107" not in {f.code for f in findings}


def test_atexit_lambda_release_covers_every_exit():
    src = """
        #!/usr/bin/env python3
        import atexit
        import os
        import sys

        LOCK = "/var/lib/app/app.lock"
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            sys.exit(75)
        atexit.register(lambda: os.rmdir(LOCK))
        print("work")
    """
    facts, findings = analyze_text("/srv/jobs/job.py", textwrap.dedent(src).lstrip("\n"), "python")
    assert [(r.via, r.hook_span.line) for r in facts.removals] == [("atexit", 11)]
    got = {f.code for f in findings}
    assert "LCK101" in got
    assert "LCK202" not in got


# --------------------------------------------------------------------------- LCK000


def test_zip_application_is_not_a_syntax_error():
    text = "#!/usr/bin/env python\n# a zipped Python application\nPK\x03\x04\x14\x00\x00\x00lock"
    assert analyze_text("/srv/jobs/app.pyz", text, "python")[1] == []


def test_null_byte_in_source_is_still_lck000():
    text = "#!/usr/bin/env python3\nimport fcntl\nx = 1\x00\n"
    assert [f.code for f in analyze_text("/srv/jobs/job.py", text, "python")[1]] == ["LCK000"]


# --------------------------------------------------------------------------- LCK405 lists

POOL_OF_CHILDREN = """
    #!/usr/bin/env python3
    import fcntl
    import multiprocessing
    import subprocess
    import sys


    def work(i):
        print(i)


    if __name__ == "__main__":
        with open("/var/lib/app/app.lock", "a") as lk:
            try:
                fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                sys.exit(75)
            procs = [multiprocessing.Process(target=work, args=(i,)) for i in range(4)]
            for p in procs:
                p.start()
            for p in procs:
                p.join()
            children = []
            for host in ("a", "b"):
                children.append(subprocess.Popen(["ping", "-c1", host], close_fds=False))
            rcs = [c.wait() for c in children]
            sys.exit(max(rcs))
"""


def test_children_kept_in_a_list_and_joined_in_a_loop_are_waited_for():
    assert "LCK405" not in codes(POOL_OF_CHILDREN)


def test_children_kept_in_a_list_and_never_joined_are_background_work():
    src = POOL_OF_CHILDREN.replace(
        "            for p in procs:\n                p.join()\n", ""
    ).replace("            rcs = [c.wait() for c in children]\n", "            rcs = [0]\n")
    got = found(src)
    assert ("LCK405", 18) in got
    assert ("LCK405", 23) in got


# --------------------------------------------------------------------------- LCK101 idioms


def test_search_for_a_free_name_is_not_a_lock():
    src = """
        #!/usr/bin/env python3
        import os
        import random


        def unique_output(base):
            while True:
                name = "%s.%06d" % (base, random.randint(0, 999999))
                try:
                    fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    continue
                return os.fdopen(fd, "w")


        with unique_output("/srv/reports/report") as fh:
            fh.write("x")
    """
    assert "LCK101" not in codes(src)


def test_retry_loop_on_a_fixed_lock_name_is_still_lck101():
    src = """
        #!/usr/bin/env python3
        import os
        import time

        LOCK = "/var/lib/app/app.lock"
        while True:
            try:
                os.mkdir(LOCK)
                break
            except FileExistsError:
                time.sleep(5)
                continue
        try:
            print("work")
        finally:
            os.rmdir(LOCK)
    """
    assert ("LCK101", 8) in found(src)


def test_work_dir_cleared_and_recreated_on_clash_is_not_a_lock():
    src = """
        #!/usr/bin/env python3
        import os
        import shutil
        import subprocess
        import sys

        workdir = os.path.join("/srv/build", sys.argv[1])
        try:
            os.mkdir(workdir)
        except FileExistsError:
            shutil.rmtree(workdir)
            os.mkdir(workdir)
        subprocess.check_call(["make", "-C", workdir])
    """
    assert not {"LCK101", "LCK202"} & codes(src)


def test_stale_lock_taken_over_after_an_age_test_is_still_a_lock():
    src = """
        #!/usr/bin/env python3
        import os
        import sys
        import time

        LOCK = "/var/lib/app/app.lock"
        try:
            os.mkdir(LOCK)
        except FileExistsError:
            if time.time() - os.path.getmtime(LOCK) > 3600:
                os.rmdir(LOCK)
                os.mkdir(LOCK)
            else:
                sys.exit(75)
        try:
            print("work")
        finally:
            os.rmdir(LOCK)
    """
    got = found(src)
    assert ("LCK101", 8) in got
    assert ("LCK106", 11) in got


def test_detached_child_of_a_flock_holder_is_reported_as_outliving_the_lock():
    from lockcheck.engine import analyze_text

    base = """import fcntl
import os
import subprocess
import sys

fd = os.open("/var/lib/reports/build.lock", os.O_RDWR | os.O_CREAT, 0o600)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit(75)
subprocess.Popen(["render-reports"], {kw})
"""
    _, detached = analyze_text("job.py", base.format(kw="start_new_session=True"), "python")
    (f,) = [f for f in detached if f.code == "LCK405"]
    assert f.span.line == 11 and "detached child outlives the lock" in f.message
    _, inherits = analyze_text("job.py", base.format(kw="close_fds=False"), "python")
    (g,) = [f for f in inherits if f.code == "LCK405"]
    assert "inherits the locked descriptor" in g.message
    _, closed = analyze_text("job.py", base.format(kw="close_fds=True"), "python")
    assert not [f for f in closed if f.code == "LCK405"]


def test_pid_file_named_after_the_program_in_tmp_is_predictable():
    from lockcheck.engine import analyze_text

    text = """import os
import sys

program_name = os.path.basename(sys.argv[0])
PIDFILE = f"/tmp/{program_name}.pid"


def main():
    try:
        fd = os.open(PIDFILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        sys.exit(75)
    try:
        os.write(fd, str(os.getpid()).encode())
        rebuild_index()
    finally:
        os.remove(PIDFILE)


main()
"""
    _, findings = analyze_text("job.py", text, "python")
    assert {(f.code, f.span.line) for f in findings} == {("LCK101", 10), ("LCK502", 10)}


def test_pid_read_in_try_with_fallback_and_release_after_takeover():
    from lockcheck.engine import analyze_text

    text = """import os
import sys

import psutil

PIDFILE = "/var/run/sync/sync.pid"


def main():
    try:
        with open(PIDFILE) as f:
            pid = int(f.read())
    except (OSError, ValueError):
        pid = None
    if pid and psutil.pid_exists(pid):
        print("sync already running")
        return 0
    with open(PIDFILE, "w") as f:
        f.write(str(os.getpid()))
    run_sync()
    os.remove(PIDFILE)


if __name__ == "__main__":
    sys.exit(main())
"""
    _, findings = analyze_text("sync.py", text, "python")
    found = {(f.code, f.span.line) for f in findings}
    assert ("LCK105", 15) in found  # the liveness test, pid read from the file
    assert ("LCK106", 18) in found  # the pid file overwritten where the holder was judged dead
    assert not any(line == 21 for _, line in found)  # the final removal is the release


def test_liveness_returned_by_a_helper_counts_only_when_the_caller_decides():
    from lockcheck.engine import analyze_text

    helper = """import os
import sys

import psutil

PIDFILE = "/var/run/sync/sync.pid"


def holder_alive():
    with open(PIDFILE) as f:
        return psutil.pid_exists(int(f.read()))


"""
    decides = (
        helper
        + """def main():
    if holder_alive():
        print("sync already running")
        return 0
    run_sync()


if __name__ == "__main__":
    sys.exit(main())
"""
    )
    reports = (
        helper
        + """def status():
    print("running" if holder_alive() else "stopped")


status()
"""
    )
    _, found = analyze_text("sync.py", decides, "python")
    assert ("LCK105", 11) in {(f.code, f.span.line) for f in found}
    _, quiet = analyze_text("status.py", reports, "python")
    assert not [f for f in quiet if f.code == "LCK105"]


def test_make_if_missing_helper_whose_result_nobody_reads_is_not_a_lock():
    src = textwrap.dedent(
        """
        import errno
        import os


        class Profile:
            def _mkdir(self, path):
                if os.path.exists(path):
                    return False
                try:
                    os.mkdir(path)
                except OSError as e:
                    if e.errno == errno.EEXIST:
                        return False
                    raise
                return True

            def check_dirs(self):
                self._mkdir("/srv/app/log")
                self._mkdir("/srv/app/run")
        """
    )
    assert codes(src) == set()
    # a caller that skips on the result makes it a lock
    used = src.replace(
        '        self._mkdir("/srv/app/run")\n',
        '        if not self._mkdir("/srv/app/run"):\n            return\n',
    )
    assert "LCK101" in codes(used)


def test_exists_then_remove_then_create_is_an_overwrite():
    # distutils' copy: a name found is deleted and written afresh, nothing is skipped
    src = textwrap.dedent(
        """
        import os


        def copy_contents(src, dst):
            fdst = None
            try:
                if os.path.exists(dst):
                    try:
                        os.unlink(dst)
                    except OSError as e:
                        raise RuntimeError(f"could not delete {dst}: {e}")
                try:
                    fdst = open(dst, "wb")
                except OSError as e:
                    raise RuntimeError(f"could not create {dst}: {e}")
                with open(src, "rb") as inp:
                    fdst.write(inp.read())
            finally:
                if fdst:
                    fdst.close()


        def move_file(src, dst):
            try:
                os.rename(src, dst)
            except OSError:
                copy_contents(src, dst)
                try:
                    os.unlink(src)
                except OSError:
                    os.unlink(dst)
                    raise
        """
    )
    assert codes(src) == set()


def test_create_if_missing_with_the_run_going_on_is_not_a_lock():
    # oauth2client's "touch": the file is kept, and the run goes on whether it existed or not
    src = textwrap.dedent(
        """
        import os


        class Storage:
            def __init__(self, filename):
                self._filename = filename

            def _create_file_if_needed(self):
                if not os.path.exists(self._filename):
                    open(self._filename, "a+b").close()

            def locked_delete(self):
                os.unlink(self._filename)
        """
    )
    assert codes(src) == set()
    # the same test whose missing branch holds the name for the work and removes it is a lock
    lock = src.replace(
        '            open(self._filename, "a+b").close()\n',
        '            open(self._filename, "a+b").close()\n'
        "            work()\n"
        "            os.unlink(self._filename)\n"
        "        else:\n"
        "            raise SystemExit(0)\n",
    )
    assert lock != src
    assert "LCK103" in codes(lock)


def test_private_directory_search_accepting_an_existing_own_directory_is_not_a_lock():
    # devappserver: try each candidate; an existing one that is a private directory is used
    src = textwrap.dedent(
        """
        import errno
        import os
        import sys


        def storage_path(app_id):
            for path in candidates(app_id):
                try:
                    os.mkdir(path, 0o700)
                except OSError as err:
                    if err.errno == errno.EEXIST:
                        if (os.stat(path).st_mode & 0o777) == 0o700 and os.path.isdir(path):
                            return path
                        else:
                            continue
                    raise
                else:
                    return path
        """
    )
    assert codes(src) == set()
    # the same loop that gives up on an existing name is a lock
    busy = src.replace(
        "            if err.errno == errno.EEXIST:\n",
        "            if err.errno == errno.EEXIST:\n                sys.exit(0)\n",
    )
    assert busy != src and "LCK101" in codes(busy)


# ---------------------------------------- LCK109: the clash exist_ok=True leaves is an error

BUILD_DIR_CHECK = """
    import os
    import sys


    def validate_dirs(build_dir):
        try:
            os.makedirs(build_dir, exist_ok=True)
        except FileExistsError:
            raise SystemExit(f"Directory {build_dir} exists and is not a directory.")
        return build_dir
    """


def test_makedirs_exist_ok_whose_clash_raises_an_error_is_path_handling():
    # meson's build-directory check: with exist_ok=True only a file in the way raises
    assert "LCK109" not in codes(BUILD_DIR_CHECK)
    assert "LCK109" not in codes(BUILD_DIR_CHECK.replace('raise SystemExit(f"', 'sys.exit(f"'))


def test_makedirs_exist_ok_as_the_busy_test_of_a_lock_is_still_lck109():
    lock_named = BUILD_DIR_CHECK.replace("build_dir", "lock_dir")
    assert "LCK109" in codes(lock_named)
    skipping = BUILD_DIR_CHECK.replace(
        'raise SystemExit(f"Directory {build_dir} exists and is not a directory.")',
        'print("already running")\n            raise SystemExit(0)',
    )
    assert "LCK109" in codes(skipping)


# ------------------------------------- LCK401/LCK402: a log file set up after the skip records

LATE_LOG_SETUP = """
    import logging
    import os
    import sys

    LOCK = "/var/tmp/report.lock"
    {before}
    if os.path.exists(LOCK):
        print("already running")
        sys.exit()
    {after}
    open(LOCK, "w").write(str(os.getpid()))
    logging.info("start")
    os.remove(LOCK)
    """
LOG_SETUP = 'logging.basicConfig(filename="/var/log/report.log", level=logging.INFO)'


def test_a_skip_before_the_log_file_is_set_up_records_nothing():
    assert "LCK401" in codes(LATE_LOG_SETUP.format(before="", after=LOG_SETUP))


def test_a_skip_after_the_log_file_is_set_up_is_recorded():
    got = codes(LATE_LOG_SETUP.format(before=LOG_SETUP, after=""))
    assert "LCK402" in got and "LCK401" not in got
