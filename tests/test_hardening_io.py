"""Hardening (issue #9, part A): crash isolation and per-file bounds, --jobs, reads and
writes bounded by the scanned paths, fixed files keeping their metadata, input decoding,
output escaping and configuration robustness.  Through the CLI, on realistic scripts."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from helpers import write

from lockcheck.fix.apply import FixWriteError, read_source, write_atomic
from lockcheck.report import FORMATS

# a foreign lock removed: LCK107, no fix
FOREIGN = "#!/bin/sh\nrm -f /tmp/nightly-report.lock\n/usr/local/bin/report\n"

# an flock file removed on exit: LCK201, a safe fix (drop the removal)
REMOVES_FLOCK_FILE = """\
#!/bin/bash
LOCK="$XDG_RUNTIME_DIR/cleanup.lock"
exec 9>"$LOCK" || exit 3
if ! flock -n 9; then
  logger -t cleanup "busy"
  exit 75
fi
trap 'rm -f "$LOCK"' EXIT
tar -czf /backup/spool.tgz /var/spool/app
"""

PY_FINALLY = """\
#!/usr/bin/env python3
# -*- coding: latin-1 -*-
\"\"\"Synchronise l'archive (\xe9t\xe9).\"\"\"
import fcntl
import os
import sys

LOCK = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/run/user/1000"), "sync.lock")


def main() -> int:
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("d\xe9j\xe0 en cours", file=sys.stderr)
        return 75
    try:
        sync_archive()
    finally:
        os.close(fd)
        os.remove(LOCK)
    return 0
"""


def lockcheck(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("LOCKCHECK_")}
    full_env.pop("CI", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", *args],
        cwd=cwd,
        capture_output=True,
        env=full_env,
        timeout=timeout,
    )


def many_python_locks(n: int) -> str:
    return "import fcntl\n" + "".join(
        f"def f{i}():\n    fd = open('/tmp/x{i}.lock', 'w')\n"
        f"    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    return fd\n"
        for i in range(n)
    )


# --------------------------------------------------------------------------- 1. isolation

CRASH = {"LOCKCHECK_TEST_WORKER_FAULT": "crash:crash.sh"}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_crashing_file_is_one_lck000_and_the_others_are_kept(tmp_path, fmt):
    write(tmp_path, "jobs/a.sh", FOREIGN)
    write(tmp_path, "jobs/crash.sh", FOREIGN)
    write(tmp_path, "jobs/z.sh", FOREIGN)
    proc = lockcheck("scan", "--output-format", fmt, "jobs", cwd=tmp_path, env=CRASH)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "internal error" not in proc.stderr.decode()
    assert "analysis stopped: the analysis crashed (SIGSEGV)" in out
    for name in ("a.sh", "z.sh"):
        assert f"jobs/{name}" in out
    assert out.count("LCK107") >= 2
    if fmt == "json":
        rows = {(r["filename"].rsplit("/", 1)[-1], r["code"]) for r in json.loads(out)}
        assert rows == {("a.sh", "LCK107"), ("z.sh", "LCK107"), ("crash.sh", "LCK000")}


def test_a_crash_when_fixing_others_still_fixes_them(tmp_path):
    write(tmp_path, "crash.sh", REMOVES_FLOCK_FILE)
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    proc = lockcheck("scan", "--fix", "--output-format", "concise", ".", cwd=tmp_path, env=CRASH)
    assert "crash.sh:1:1: LCK000 (warning) analysis stopped" in proc.stdout.decode()
    assert "rm -f" not in p.read_text()


FIX_REASONS = {
    "hang": "timed out after 1 s",
    "crash": "the analysis crashed (SIGSEGV), possibly at the memory bound (1 GiB)",
    "memory": "memory bound exceeded (1 GiB)",
}


@pytest.mark.parametrize("fault", list(FIX_REASONS))
def test_fixes_are_checked_within_the_bounds_and_the_others_fixed(tmp_path, fault):
    # the test hook makes the worker that re-analyses hostile.sh's fixed text hang, crash
    # or eat memory: before, that re-analysis ran in the lockcheck process itself
    hostile = write(tmp_path, "hostile.sh", REMOVES_FLOCK_FILE)
    other = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    env = {"LOCKCHECK_TEST_WORKER_FAULT": f"fix-{fault}:hostile.sh"}
    args = ("scan", "--fix", "--file-timeout", "1", "--output-format", "concise", ".")
    proc = lockcheck(*args, cwd=tmp_path, env=env)
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr
    assert (
        f"hostile.sh:1:1: LCK000 (warning) analysis stopped: {FIX_REASONS[fault]}, "
        "while checking its fixes (not fixed)"
    ) in out
    assert "hostile.sh:8:7: LCK201" in out  # its findings are kept
    assert hostile.read_text() == REMOVES_FLOCK_FILE
    assert "rm -f" not in other.read_text() and "cleanup.sh" not in out
    assert proc.stderr.decode() == ""


def test_diff_checks_fixes_within_the_bounds(tmp_path):
    write(tmp_path, "hostile.sh", REMOVES_FLOCK_FILE)
    write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    env = {"LOCKCHECK_TEST_WORKER_FAULT": "fix-hang:hostile.sh"}
    proc = lockcheck("scan", "--diff", "--file-timeout", "1", ".", cwd=tmp_path, env=env)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "+++ b/cleanup.sh" in out and "hostile.sh" not in out
    assert "lockcheck: warning: hostile.sh: fixes not checked: timed out after 1 s; no diff" in err


def test_stdin_fix_checks_fixes_within_the_bounds(tmp_path):
    env = {"LOCKCHECK_TEST_WORKER_FAULT": "fix-crash:job.sh"}
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--fix", "--stdin-filename", "job.sh", "-"],
        input=REMOVES_FLOCK_FILE.encode(),
        capture_output=True,
        cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("LOCKCHECK_")}, **env},
        timeout=120,
    )
    assert proc.stdout == REMOVES_FLOCK_FILE.encode()  # the text as it came: not fixed
    err = proc.stderr.decode()
    assert "analysis stopped: the analysis crashed (SIGSEGV)" in err
    assert "while checking its fixes (not fixed)" in err


def test_a_file_over_its_time_bound_is_stopped(tmp_path):
    write(tmp_path, "big.py", many_python_locks(600))  # a few seconds of libcst
    write(tmp_path, "small.sh", FOREIGN)
    proc = lockcheck(
        "scan", "--output-format", "concise", "--file-timeout", "0.3", ".", cwd=tmp_path
    )
    out = proc.stdout.decode()
    assert "big.py:1:1: LCK000 (warning) analysis stopped: timed out after 0.3 s" in out
    assert "small.sh:2:1: LCK107" in out


def test_the_time_bound_comes_from_the_configuration_too(tmp_path):
    write(tmp_path, "lockcheck.toml", "file-timeout = 0.3\n")
    write(tmp_path, "big.py", many_python_locks(600))
    proc = lockcheck("scan", "--output-format", "concise", ".", cwd=tmp_path)
    assert (
        "big.py:1:1: LCK000 (warning) analysis stopped: timed out after 0.3 s"
        in proc.stdout.decode()
    )


def test_a_file_over_its_memory_bound_is_stopped(tmp_path):
    big = "#!/bin/bash\n" + "".join(  # a 3.4 MB script: its trees need more than 64 MiB
        f"x{i}=$(( i + {i} )); mkdir /srv/l{i}.lock || exit 1\n" for i in range(60000)
    )
    write(tmp_path, "big.sh", big)
    write(tmp_path, "small.sh", FOREIGN)
    proc = lockcheck(
        "scan", "--output-format", "concise", "--file-memory", "64MiB", ".", cwd=tmp_path
    )
    out = proc.stdout.decode()
    assert "big.sh:1:1: LCK000 (warning) analysis stopped: " in out
    line = next(ln for ln in out.splitlines() if ln.startswith("big.sh"))
    assert "memory bound" in line, line
    assert "small.sh:2:1: LCK107" in out
    assert proc.stderr.decode().count("\n") <= 1, "a dying worker prints nothing"


@pytest.mark.parametrize(
    "body, message",
    [
        ("file-timeout = 'soon'", "key 'file-timeout': expected a number of seconds"),
        ("file-memory = 'lots'", "key 'file-memory': expected a size such as 512MiB"),
        ("file-memory = 1024", "below 16 MiB"),
    ],
)
def test_bad_bounds_in_the_configuration(cli, tmp_path, body, message):
    write(tmp_path, "lockcheck.toml", body + "\n")
    write(tmp_path, "a.sh", FOREIGN)
    status, _, err = cli("scan")
    assert status == 2 and message in err and err.count("\n") == 1


# --------------------------------------------------------------------------- 2. --jobs


def test_jobs_1_and_4_give_byte_identical_output(cli, tmp_path, monkeypatch):
    examples = Path(__file__).resolve().parent.parent / "examples"
    scripts = sorted(p for p in examples.rglob("*") if p.is_file() and p.suffix in (".sh", ".py"))
    assert len(scripts) >= 5
    for k in range(3):  # shell scripts are cheap: many of them; the Python ones once
        for p in scripts:
            if k == 0 or p.suffix == ".sh":
                write(tmp_path, f"tree/d{k}/{p.parent.name}-{p.name}", p.read_bytes())
    write(tmp_path, "tree/d9/crash.sh", FOREIGN)
    monkeypatch.setenv("LOCKCHECK_TEST_WORKER_FAULT", "crash:crash.sh")
    for fmt in FORMATS:
        one = cli("scan", "--jobs", "1", "--output-format", fmt, "tree")
        four = cli("scan", "--jobs", "4", "--output-format", fmt, "tree")
        assert one == four, fmt
        assert one[0] == 1
        assert "analysis stopped" in one[1], fmt


def test_jobs_must_be_positive(cli, tmp_path):
    status, _, err = cli("scan", "--jobs", "0")
    assert status == 2 and "expected a positive integer, got '0'" in err


# --------------------------------------------------------------------------- 3. paths


def _tree_with_link_out(tmp_path: Path) -> tuple[Path, Path]:
    outside = write(tmp_path, "secrets/outside.sh", REMOVES_FLOCK_FILE + "# TOPSECRET\n")
    tree = tmp_path / "tree"
    write(tmp_path, "tree/own.sh", FOREIGN)
    (tree / "link.sh").symlink_to(outside)
    return tree, outside


def test_a_symlink_out_of_the_scanned_tree_is_not_read(tmp_path):
    _tree, outside = _tree_with_link_out(tmp_path)
    before = outside.read_bytes()
    proc = lockcheck("scan", "--fix", "--output-format", "full", "tree", cwd=tmp_path)
    assert b"TOPSECRET" not in proc.stdout + proc.stderr
    assert b"link.sh" not in proc.stdout
    assert b"tree/own.sh" in proc.stdout
    assert outside.read_bytes() == before


def test_fix_refuses_a_named_symlink_to_a_file_outside_the_scanned_paths(tmp_path):
    _tree, outside = _tree_with_link_out(tmp_path)
    before = outside.read_bytes()
    proc = lockcheck("scan", "--fix", "tree/link.sh", cwd=tmp_path)
    assert proc.returncode == 2
    assert b"outside the scanned paths" in proc.stderr
    assert outside.read_bytes() == before


def test_fix_writes_through_a_link_that_stays_inside(tmp_path):
    real = write(tmp_path, "tree/lib/cleanup.sh", REMOVES_FLOCK_FILE)
    (tmp_path / "tree/cleanup.sh").symlink_to("lib/cleanup.sh")
    proc = lockcheck("scan", "--fix", "--output-format", "concise", "tree", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "rm -f" not in real.read_text()
    assert (tmp_path / "tree/cleanup.sh").is_symlink()
    assert proc.stdout == b"Found 1 finding (1 fixed, 0 remaining).\n", "the file was seen once"


def test_each_real_file_is_analysed_once(tmp_path):
    write(tmp_path, "tree/a.sh", FOREIGN)
    (tmp_path / "tree/b.sh").symlink_to("a.sh")
    proc = lockcheck("scan", "--output-format", "concise", "tree", "tree/a.sh", cwd=tmp_path)
    assert proc.stdout.decode().count("LCK107") == 1


@pytest.mark.parametrize("option", ["--output-file", "--write-baseline"])
def test_report_files_never_follow_a_planted_symlink(tmp_path, option):
    write(tmp_path, "a.sh", FOREIGN)
    victim = tmp_path / "victim"
    (tmp_path / "report.json").symlink_to(victim)
    proc = lockcheck("scan", option, "report.json", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        "lockcheck: error: report.json: is a symlink; refusing to write through it\n"
    )
    assert not victim.exists()
    # a planted directory link on the way is refused too
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    proc = lockcheck("scan", option, "out/r.json", ".", cwd=tmp_path)
    assert proc.returncode == 2 and b"out is a symlink" in proc.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_report_file_is_written_whole(tmp_path):
    write(tmp_path, "a.sh", FOREIGN)
    proc = lockcheck("scan", "-o", "reports/r.json", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1
    assert json.loads((tmp_path / "reports/r.json").read_text())[0]["code"] == "LCK107"
    assert [p.name for p in (tmp_path / "reports").iterdir()] == ["r.json"]


# --------------------------------------------------------------------------- 4. metadata


def _fix(tmp_path: Path, p: Path):
    return lockcheck("scan", "--fix", p.name, cwd=p.parent)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can set another owner and setuid")
def test_fix_keeps_setuid_owner_and_group(tmp_path):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    os.chown(p, 1234, 5678)
    os.chmod(p, 0o6750)
    proc = _fix(tmp_path, p)
    assert proc.returncode == 0, proc.stderr
    st = p.stat()
    assert "rm -f" not in p.read_text()
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    assert stat.S_IMODE(st.st_mode) == 0o6750


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_fix_as_a_plain_user_keeps_the_files_group():
    """A user who may write a file of one of their groups keeps that group (the new file
    would get the user's primary group)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:  # /tmp: pytest's own directory is root's only
        _fix_as_nobody(Path(d))


def _fix_as_nobody(work: Path) -> None:
    os.chown(work, 65534, 100)
    p = write(work, "cleanup.sh", REMOVES_FLOCK_FILE)
    os.chown(p, 65534, 100)
    os.chmod(p, 0o2750)
    text, data = read_source(str(p))
    groups = os.getgroups()
    os.setgroups([100])
    os.setegid(65534)
    os.seteuid(65534)
    try:
        write_atomic(str(p), text.replace("trap", "# trap"), data, str(work))
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)
    st = p.stat()
    assert "# trap" in p.read_text()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 100, 0o2750)


def _xattrs_supported(path: Path) -> bool:
    try:
        os.setxattr(path, "user.lockcheck-probe", b"1")
        os.removexattr(path, "user.lockcheck-probe")
        return True
    except (OSError, AttributeError):
        return False


def test_fix_keeps_extended_attributes_and_acls(tmp_path):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    if not _xattrs_supported(p):
        pytest.skip(f"the filesystem of {tmp_path} has no user extended attributes")
    os.setxattr(p, "user.origin", b"deploy-42")
    acl = None
    if subprocess.run(["which", "setfacl"], capture_output=True).returncode == 0:
        if subprocess.run(["setfacl", "-m", "u:1234:r", str(p)]).returncode == 0:
            acl = os.getxattr(p, "system.posix_acl_access")
    proc = _fix(tmp_path, p)
    assert proc.returncode == 0, proc.stderr
    assert "rm -f" not in p.read_text()
    assert os.getxattr(p, "user.origin") == b"deploy-42"
    if acl is not None:
        assert os.getxattr(p, "system.posix_acl_access") == acl


def test_fix_refuses_a_file_with_several_hard_links(tmp_path):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    os.link(p, tmp_path / "copy.sh")
    proc = lockcheck("scan", "--fix", "cleanup.sh", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode().count("hard links") == 1
    assert p.read_text() == REMOVES_FLOCK_FILE
    assert os.stat(p).st_ino == os.stat(tmp_path / "copy.sh").st_ino


def test_a_change_made_while_the_fix_is_written_is_kept(tmp_path, monkeypatch):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE)
    text, data = read_source(str(p))
    real_fsync = os.fsync
    theirs = REMOVES_FLOCK_FILE + "echo edited by someone else\n"

    def fsync_then_edit(fd):  # another process edits the file after lockcheck's check
        real_fsync(fd)
        if not p.read_text().endswith("else\n"):
            p.write_text(theirs)

    monkeypatch.setattr(os, "fsync", fsync_then_edit)
    with pytest.raises(FixWriteError, match="changed on disk while the fix was written"):
        write_atomic(str(p), text.replace("trap", "# trap"), data, str(tmp_path))
    assert p.read_text() == theirs
    assert [x.name for x in tmp_path.iterdir()] == ["cleanup.sh"]


# --------------------------------------------------------------------------- 5. decoding


def test_nul_bytes_after_the_first_8k_make_a_file_binary(tmp_path):
    body = FOREIGN.encode() + b"# padding\n" * 1000 + b"\0\0\0"
    write(tmp_path, "tree/blob.sh", body)
    write(tmp_path, "tree/ok.sh", FOREIGN)
    proc = lockcheck("scan", "--output-format", "concise", "tree", cwd=tmp_path)
    assert b"blob.sh" not in proc.stdout + proc.stderr
    proc = lockcheck("scan", "--output-format", "concise", "tree/blob.sh", cwd=tmp_path)
    assert proc.stderr.decode() == "lockcheck: warning: tree/blob.sh: binary file, not checked\n"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_utf16_or_utf32_file_with_a_bom_is_text(tmp_path, encoding):
    write(tmp_path, "export.sh", FOREIGN.encode(encoding))  # Python writes the BOM
    proc = lockcheck("scan", "--output-format", "concise", "export.sh", cwd=tmp_path)
    assert "export.sh:2:1: LCK107" in proc.stdout.decode(), proc.stderr


def test_a_latin1_python_file_is_analysed_and_fixed_in_latin1(tmp_path):
    p = write(tmp_path, "sync.py", PY_FINALLY.encode("latin-1"))
    proc = lockcheck("scan", "--output-format", "concise", "sync.py", cwd=tmp_path)
    assert "LCK201" in proc.stdout.decode(), proc.stdout + proc.stderr
    proc = lockcheck("scan", "--fix", "sync.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fixed = p.read_bytes()
    assert b"os.remove(LOCK)" not in fixed
    assert "d\xe9j\xe0 en cours".encode("latin-1") in fixed
    assert fixed == PY_FINALLY.encode("latin-1").replace(b"        os.remove(LOCK)\n", b"")


# --------------------------------------------------------------------------- 6. escaping

HOSTILE = "#!/bin/sh\n# \x1b]0;pwned\x07\x1b[2J\nrm -f /tmp/night\x1b[8mly.lock\n"


@pytest.mark.parametrize("fmt", ["full", "concise", "github", "pylint", "junit"])
def test_control_characters_never_reach_the_terminal(tmp_path, fmt):
    write(tmp_path, "job\x1b[31m.sh", HOSTILE)
    proc = lockcheck("scan", "--output-format", fmt, ".", cwd=tmp_path)
    out = proc.stdout.decode()
    assert "LCK107" in out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b" in out
    if fmt == "junit":
        xml.dom.minidom.parseString(proc.stdout)  # well-formed


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "gitlab", "rdjson"])
def test_json_formats_escape_control_characters(tmp_path, fmt):
    write(tmp_path, "job\x1b[31m.sh", HOSTILE)
    proc = lockcheck("scan", "--output-format", fmt, ".", cwd=tmp_path)
    out = proc.stdout.decode()
    assert "\x1b" not in out and "LCK107" in out
    for line in out.splitlines() if fmt == "json-lines" else [out]:
        json.loads(line)


# a fix's diff shows these lines: ESC, BEL, a lone CR, a C1 CSI and a bidi override
HOSTILE_FIX = REMOVES_FLOCK_FILE.replace(
    'logger -t cleanup "busy"', 'logger -t cleanup "busy\x1b]0;pwned\x07\rok\x9b2J\u202e"'
).replace("fi\ntrap", "fi # \x1b[8m\ntrap")
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _no_raw_control(text: str) -> None:
    assert not any(ch in text for ch in RAW), ascii(text)
    assert "\r" not in text.replace("\r\n", ""), ascii(text)
    assert "\\x1b]0;pwned\\x07\\x0dok\\x9b2J\\u202e" in text, ascii(text)


@pytest.mark.parametrize("option", ["--diff", "--show-fixes"])
def test_diffs_escape_control_characters(tmp_path, option):
    write(tmp_path, "job\x1b[31m.sh", HOSTILE_FIX)
    proc = lockcheck("scan", option, ".", cwd=tmp_path)
    out = proc.stdout.decode()
    assert "-trap 'rm -f" in out and "job\\x1b[31m.sh" in out
    _no_raw_control(out)
    _no_raw_control(proc.stderr.decode() + out)


def test_diff_keeps_crlf_line_ends_and_escapes_the_rest(tmp_path):
    write(tmp_path, "job.sh", HOSTILE_FIX.replace("\n", "\r\n"))
    out = lockcheck("scan", "--diff", ".", cwd=tmp_path).stdout.decode()
    assert "-trap 'rm -f \"$LOCK\"' EXIT\r\n" in out  # a line end, not \x0d
    _no_raw_control(out)


def test_diff_hunks_count_lines_as_the_file_does(tmp_path):
    # a form feed, U+2028, \x1c and NEL are no line breaks for the shell (nor for the
    # frontends): the hunk must not be numbered as if they were
    text = REMOVES_FLOCK_FILE.replace("fi\n", "# a\x0cb\u2028c\x1cd\x85e\nfi\n")
    write(tmp_path, "job.sh", text)
    out = lockcheck("scan", "--diff", ".", cwd=tmp_path).stdout.decode()
    assert "@@ -6,5 +6,4 @@\n" in out, out  # the trap is line 9 of the file
    assert " # a\\x0cb\u2028c\\x1cd\\x85e\n" in out


def test_stdin_fix_writes_the_fixed_file_byte_exact_and_escapes_the_report(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--fix", "--show-fixes", "-"]
        + ["--stdin-filename", "job.sh"],
        input=HOSTILE_FIX.encode(),
        capture_output=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("LOCKCHECK_")},
        timeout=120,
    )
    fixed = "".join(ln for ln in HOSTILE_FIX.splitlines(True) if not ln.startswith("trap"))
    # standard output is the fixed file itself: its control characters are its own bytes
    assert proc.stdout == fixed.encode()
    err = proc.stderr.decode()
    assert "Fixed 1 error" in err
    assert not any(ch in err for ch in RAW), ascii(err)


def test_warning_lines_escape_file_names(tmp_path):
    write(tmp_path, "x\x1b[2J.sh", b"\0binary")
    proc = lockcheck("scan", "x\x1b[2J.sh", cwd=tmp_path)
    assert b"\x1b" not in proc.stderr and b"\\x1b[2J" in proc.stderr


# --------------------------------------------------------------------------- 7. configuration


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"[project\nname = 'x'\n", "invalid TOML"),
        (b"[tool.black]\nline-length = '\xff'\n", "not UTF-8"),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    ],
)
def test_a_broken_pyproject_in_the_tree_is_one_warning(tmp_path, content, reason):
    write(tmp_path, "vendor/pkg/pyproject.toml", content)
    write(tmp_path, "vendor/pkg/job.sh", FOREIGN)
    write(tmp_path, "own.sh", FOREIGN)
    proc = lockcheck("scan", "--output-format", "concise", ".", cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert err.count("\n") == 1 and err.startswith("lockcheck: warning: vendor/pkg/pyproject.toml")
    assert reason in err
    assert proc.stdout.decode().count("LCK107") == 2


def test_a_hostile_exclude_glob_does_not_hang_the_walk(tmp_path):
    glob = "a*" * 30 + "b"
    write(tmp_path, "sub/.lockcheck.toml", f'extend-exclude = ["{glob}"]\n')
    for i in range(20):
        write(tmp_path, f"sub/{'a' * 120}{i}.sh", FOREIGN)
    # a hang guard only: the backtracking matcher needs ~C(120, 30) steps per name
    proc = lockcheck("scan", "--output-format", "concise", ".", cwd=tmp_path, timeout=60)
    assert proc.stdout.decode().count("LCK107") == 20


def test_compiled_globs_leave_one_backtracking_star_per_segment():
    from lockcheck.globs import STAR, compile_spec

    spec = compile_spec(["a*" * 30 + "b", "src/*x*y*z*/**/*.sh", "*.*.*"])
    for p in spec.patterns:
        segments = p.regex.pattern.split("/")
        # a star inside the atomic (?=(?P<g>[^/]*?piece))(?P=g) is lazy and commits
        assert all(seg.count(STAR) <= 1 for seg in segments), p.regex.pattern
    assert spec.match_file("x/" + "a" * 40 + "b")
    assert not spec.match_file("x/" + "a" * 40)
    assert spec.match_file("src/1x2y3z4/deep/er/job.sh")
    assert not spec.match_file("src/1x2z3y4/deep/job.sh")


def test_globs_with_several_double_stars_match_as_pathspec_does():
    """The linear matcher of globs with several ``**`` against pathspec's own regex, on
    random patterns and paths: the same verdict, the same whole-path match, the same
    directory mark."""
    import random

    import pathspec

    from lockcheck.discover import own_match
    from lockcheck.globs import DeepGlob, compile_spec

    rng = random.Random(9)
    atoms = ["a", "b", "*", "?", "[ab]", "**", "a*b"]
    deep = compared = 0
    for _ in range(4000):
        segs = [rng.choice(atoms) for _ in range(rng.randint(2, 6))]
        glob = ("/" if rng.random() < 0.2 else "") + "/".join(segs)
        glob += "/" if rng.random() < 0.2 else ""
        ours = compile_spec([glob])
        if not isinstance(ours.patterns[0].regex, DeepGlob):
            continue
        deep += 1
        theirs = pathspec.GitIgnoreSpec.from_lines([glob])
        for _ in range(10):
            parts = rng.choices(["a", "b", "ab", "ba", "aab", "c"], k=rng.randint(1, 8))
            path = "/".join(parts)
            mine, ref = ours.patterns[0].regex.search(path), theirs.patterns[0].regex.search(path)
            assert (mine is None) == (ref is None), (glob, path)
            if ref is not None:
                assert mine.end() == ref.end(), (glob, path)
                assert mine.groupdict()["ps_d"] == ref.groupdict().get("ps_d"), (glob, path)
            assert ours.match_file(path) == theirs.match_file(path), (glob, path)
            assert own_match(ours, path) == own_match(theirs, path), (glob, path)
            compared += 1
    assert deep > 50 and compared > 500


def test_a_hostile_double_star_exclude_does_not_hang_the_walk(tmp_path):
    glob = "**/" + "x/**/" * 6 + "y.sh"
    write(tmp_path, ".lockcheck.toml", f'extend-exclude = ["{glob}"]\n')
    deep = "x/" * 60
    write(tmp_path, f"{deep}job.sh", FOREIGN)
    write(tmp_path, f"{deep}y.sh", FOREIGN)
    # a hang guard only (the backtracking regex needs ~C(60, 7) steps per name); the work is
    # counted in test_hardening_perf.py
    proc = lockcheck("scan", "--output-format", "concise", ".", cwd=tmp_path, timeout=60)
    out = proc.stdout.decode()
    assert out.count("LCK107") == 1 and "job.sh" in out, out


def test_a_utf16_crlf_file_is_fixed_in_utf16_with_crlf(tmp_path):
    p = write(tmp_path, "cleanup.sh", REMOVES_FLOCK_FILE.replace("\n", "\r\n").encode("utf-16"))
    proc = lockcheck("scan", "--fix", "cleanup.sh", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = "".join(
        ln for ln in REMOVES_FLOCK_FILE.splitlines(keepends=True) if not ln.startswith("trap")
    )
    assert p.read_bytes() == expected.replace("\n", "\r\n").encode("utf-16")


def test_an_invalid_glob_in_an_ignore_file_or_exclude_does_not_stop_the_run(tmp_path):
    write(tmp_path, "sub/.gitignore", "[z-a]\n")
    write(tmp_path, "sub/a.sh", FOREIGN)
    write(tmp_path, "other/.lockcheck.toml", 'extend-exclude = ["[z-a]"]\n')
    write(tmp_path, "other/b.sh", FOREIGN)
    proc = lockcheck("scan", "--output-format", "concise", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.decode().count("LCK107") == 2
    assert proc.stderr.decode() == (
        "lockcheck: warning: other/.lockcheck.toml: exclude pattern '[z-a]' is not a valid glob;"
        " ignored\n"
    )
