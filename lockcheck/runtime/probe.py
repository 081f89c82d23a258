"""``lockcheck probe``: try a file's whole life cycle in the directories a lock could live in.

For each directory: create, append, read, rename, flock (does a lock taken by one process
exclude a second one, and does it die when the holder is killed with SIGKILL?), delete, mkdir
and rmdir, all on names that carry this process's id and a random part, so two probes never
collide.  What it creates it removes again; where deletion is refused, the leftover is renamed
to one fixed marker, ``.lockcheck-undeletable``, so at most one entry remains whatever the
number of runs (the shell wrapper of ``lockcheck init`` uses the same marker to skip such a
directory).  It opens nothing it did not create, except that marker (read-only, for the flock
test), and never follows a symbolic link: entries are made with ``O_EXCL``/``O_NOFOLLOW``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import secrets
import select
import signal
import stat
import time
from dataclasses import asdict, dataclass, field

from .mounts import mount_of

MARKER = ".lockcheck-undeletable"
LINGER_DIR = "/var/lib/systemd/linger"

EXISTENCE = "existence"  # safe for existence locks (and for flock locks)
FLOCK = "flock"  # safe for flock locks only
UNUSABLE = "unusable"
VERDICT_TEXT = {
    EXISTENCE: "safe for flock and existence locks",
    FLOCK: "safe for flock locks",
    UNUSABLE: "not usable",
}


@dataclass
class DirReport:
    path: str
    real_path: str | None = None
    exists: bool = False
    symlink_to: str | None = None
    fstype: str | None = None
    fs_kind: str | None = None  # local, tmpfs, network
    mount_point: str | None = None
    mode: str | None = None
    owner_uid: int | None = None
    world_writable: bool = False
    sticky: bool = False
    session_only: bool = False
    steps: dict[str, str] = field(default_factory=dict)  # step -> "ok" or the error
    flock_excludes: bool | None = None
    flock_released_on_kill: bool | None = None
    marker_left: bool = False
    verdict: str = UNUSABLE
    reasons: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        d = asdict(self)
        d["verdict_text"] = VERDICT_TEXT[self.verdict]
        return d


def default_candidates(environ: os._Environ | dict | None = None) -> list[str]:
    """The directories a job would try for its lock, in the usual order (duplicates out)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    uid = os.geteuid()
    out = [
        env.get("XDG_RUNTIME_DIR") or "",
        f"/run/user/{uid}",
        "/run/lock",
        "/var/lock",
        env.get("TMPDIR") or "/tmp",
        os.path.join(home, ".cache"),
        env.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state"),
    ]
    seen: set[str] = set()
    return [d for d in out if d and not (d in seen or seen.add(d))]


def _err(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{name}: {exc.strerror or exc}"


def _session_dir(real: str) -> tuple[int, str] | None:
    """(uid, user) when ``real`` is a user's ``/run/user/UID`` runtime directory."""
    parts = real.split("/")
    if len(parts) >= 4 and parts[1] == "run" and parts[2] == "user" and parts[3].isdigit():
        uid = int(parts[3])
        try:
            return uid, pwd.getpwuid(uid).pw_name
        except KeyError:
            return uid, str(uid)
    return None


def _lingers(user: str) -> bool:
    return os.path.exists(os.path.join(LINGER_DIR, user))


def _flock_test(path: str, timeout: float = 5.0) -> tuple[bool | None, bool | None, str]:
    """Lock ``path`` in a child, try it from here, kill the child with SIGKILL, try again.

    Returns (excludes, released_on_kill, detail)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the holder
        try:
            os.close(r)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(w, b"1")
            while True:
                time.sleep(60)
        except BaseException:
            try:
                os.write(w, b"0")
            finally:
                os._exit(1)
    os.close(w)
    excludes: bool | None = None
    released: bool | None = None
    detail = ""
    fd = -1
    try:
        ready, _, _ = select.select([r], [], [], timeout)
        if not ready or os.read(r, 1) != b"1":
            return None, None, "the holder could not take the lock"
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            excludes = True
        except OSError as exc:
            return None, None, f"flock failed: {_err(exc)}"
        else:
            excludes = False
            fcntl.flock(fd, fcntl.LOCK_UN)
            detail = "a second process took the lock while the first held it"
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pid = 0
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                released = True
                fcntl.flock(fd, fcntl.LOCK_UN)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    released = False
                    detail = detail or "the lock outlived its holder killed with SIGKILL"
                    break
                time.sleep(0.01)
        return excludes, released, detail
    finally:
        os.close(r)
        if fd >= 0:
            os.close(fd)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass


def _earlier_leftover(d: str) -> str | None:
    """The marker, or the entry an earlier probe could neither delete nor rename (where
    rename is refused too, as in an append-only directory, that entry is the marker), when
    it is a regular file of this user's: the directory refuses deletion, and probing again
    would only leave one more entry."""
    names = [MARKER]
    try:
        with os.scandir(d) as it:
            names += sorted(e.name for e in it if e.name.startswith(".lockcheck-probe."))
    except OSError:
        return None
    for name in names:
        path = os.path.join(d, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid():
            return path
    return None


def _lifecycle(rep: DirReport, d: str) -> None:
    """Create, append, read, rename, flock, delete, mkdir, rmdir with per-process names."""
    steps = rep.steps
    marker = os.path.join(d, MARKER)
    earlier = _earlier_leftover(d)
    if earlier is not None:
        steps["delete"] = "refused (left by an earlier probe)"
        ex, rel, detail = _flock_test(earlier)
        rep.flock_excludes, rep.flock_released_on_kill = ex, rel
        steps["flock"] = "ok" if ex and rel else (detail or "failed")
        rep.marker_left = True
        return
    base = os.path.join(d, f".lockcheck-probe.{os.getpid()}.{secrets.token_hex(4)}")
    moved = base + ".moved"
    payload = b"lockcheck probe\n"
    try:
        fd = os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        steps["create"] = _err(exc)
        return
    steps["create"] = "ok"
    try:
        os.write(fd, payload)
    finally:
        os.close(fd)
    current = base
    try:
        fd = os.open(base, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
        try:
            os.write(fd, payload)
        finally:
            os.close(fd)
        steps["append"] = "ok"
    except OSError as exc:
        steps["append"] = _err(exc)
    try:
        fd = os.open(base, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
        steps["read"] = "ok" if data.startswith(payload) else "read back different bytes"
    except OSError as exc:
        steps["read"] = _err(exc)
    try:
        if os.path.lexists(moved):
            raise FileExistsError(errno.EEXIST, "the rename target exists")
        os.rename(base, moved)
        current = moved
        steps["rename"] = "ok"
    except OSError as exc:
        steps["rename"] = _err(exc)
    ex, rel, detail = _flock_test(current)
    rep.flock_excludes, rep.flock_released_on_kill = ex, rel
    steps["flock"] = "ok" if ex and rel else (detail or "failed")
    try:
        os.unlink(current)
        steps["delete"] = "ok"
    except OSError as exc:
        steps["delete"] = _err(exc)
        rep.marker_left = True
        try:  # one fixed marker at most, never one per run
            os.rename(current, marker)
        except OSError:  # rename refused as well: this entry is the marker from now on
            rep.caveats.append(f"left {os.path.basename(current)}: later probes reuse it")
        steps["mkdir"] = steps["rmdir"] = "not tried: deletion is refused"
        return
    sub = base + ".d"
    try:
        os.mkdir(sub, 0o700)
        steps["mkdir"] = "ok"
    except OSError as exc:
        steps["mkdir"] = _err(exc)
        return
    try:
        os.rmdir(sub)
        steps["rmdir"] = "ok"
    except OSError as exc:
        steps["rmdir"] = _err(exc)
        rep.caveats.append(f"could not remove {os.path.basename(sub)}")


def probe_dir(path: str) -> DirReport:
    rep = DirReport(path=path)
    if os.path.islink(path):
        rep.symlink_to = os.readlink(path)
    real = os.path.realpath(path)
    rep.real_path = real
    session = _session_dir(real)
    lingers = session is not None and _lingers(session[1])
    if not os.path.isdir(real):
        rep.reasons.append("missing" if not os.path.lexists(real) else "not a directory")
        if session is not None:
            rep.reasons.append(
                "/run/user/UID exists only while the user has a login session or lingers: "
                "cron and system services do not have it"
            )
        return rep
    rep.exists = True
    st = os.stat(real)
    rep.mode = oct(stat.S_IMODE(st.st_mode))
    rep.owner_uid = st.st_uid
    rep.world_writable = bool(st.st_mode & stat.S_IWOTH)
    rep.sticky = bool(st.st_mode & stat.S_ISVTX)
    m = mount_of(real)
    if m is not None:
        rep.fstype, rep.fs_kind, rep.mount_point = m.fstype, m.kind, m.mount_point
    if session is not None and not lingers:
        rep.session_only = True
    if not os.access(real, os.W_OK | os.X_OK):
        rep.reasons.append("not writable by this user")
        return rep
    _lifecycle(rep, real)
    _judge(rep)
    return rep


def _judge(rep: DirReport) -> None:
    s = rep.steps
    ok = lambda name: s.get(name) == "ok"  # noqa: E731
    if rep.world_writable:
        rep.caveats.append(
            "world-writable"
            + (" (sticky)" if rep.sticky else "")
            + ": another user can pre-create a predictable name; use a private subdirectory"
            " (mode 0700)"
        )
    elif rep.owner_uid not in (os.geteuid(), 0):
        rep.caveats.append(f"owned by uid {rep.owner_uid}")
    if not (ok("create") or s.get("delete", "").startswith("refused (left")):
        rep.reasons.append(f"cannot create a file: {s.get('create')}")
        return
    if rep.session_only:
        rep.reasons.append(
            "exists only while the user has a login session (no linger): absent for cron"
            " and system services"
        )
        return
    if rep.fs_kind == "network":
        rep.reasons.append(
            f"{rep.fstype} is a network or FUSE filesystem: flock may be local-only or fail"
        )
        return
    if not ok("flock"):
        rep.reasons.append(f"flock does not exclude reliably: {s.get('flock')}")
        return
    if ok("delete") and ok("mkdir") and ok("rmdir") and ok("rename"):
        rep.verdict = EXISTENCE
        if rep.fs_kind == "tmpfs":
            rep.caveats.append("tmpfs: emptied at boot")
        return
    rep.verdict = FLOCK
    refused = [
        n
        for n in ("delete", "mkdir", "rmdir", "rename")
        if n in s and not ok(n) and not s[n].startswith("not tried")
    ]
    rep.reasons.append(
        f"{', '.join(refused)} refused: an existence lock here would never be released"
        if "delete" in refused
        else f"{', '.join(refused)} failed: not for existence locks"
    )
    if rep.marker_left and not any(c.startswith("left ") for c in rep.caveats):
        rep.caveats.append("an earlier probe's entry remains here: deletion is refused")


def probe(paths: list[str]) -> list[DirReport]:
    return [probe_dir(p) for p in paths]
