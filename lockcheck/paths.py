"""Where a lock path lies: synced or network roots, shared temporary directories, the
script's own directory.  Pure functions over :class:`lockcheck.model.PathExpr`."""

from __future__ import annotations

import fnmatch
import os
import re

from . import lazyre
from .model import Part, PartKind, PathExpr

SYNC_ROOTS_HOME = (
    "Dropbox",
    "OneDrive*",
    "Google Drive",
    "My Drive",
    "Library/CloudStorage/*",
    "Library/Mobile Documents/*",
    "iCloudDrive",
    "iCloud Drive",
    "Box",
    "Box Sync",
    "Nextcloud",
    "ownCloud",
    "pCloudDrive",
    "MEGA",
    "Sync",
)
SYNC_WORDS = {
    "SHARED",
    "SYNC",
    "SYNCED",
    "CLOUD",
    "DROPBOX",
    "ONEDRIVE",
    "GDRIVE",
    "ICLOUD",
    "NFS",
    "SMB",
    "CIFS",
    "NAS",
}
# environment variables that name a sync root themselves (Windows: $env:OneDrive, %OneDrive%,
# process.env.OneDrive), whatever their words say
SYNC_ROOT_VARIABLES = {"ONEDRIVE", "ONEDRIVECOMMERCIAL", "ONEDRIVECONSUMER"}
SHARED_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")
# Windows' own temporary directory (%TEMP% of SYSTEM and the service accounts): every local
# user may create entries there
WINDOWS_TEMP = "C:\\Windows\\Temp"
_WINDOWS_TEMP_RE = lazyre.compile(
    r"^(?:[a-z]:)?/windows/temp/|^%(?:systemroot|windir)%/temp/", re.I
)
# directories a user or service manager sets up privately: ${XDG_RUNTIME_DIR:-/tmp} tries one
# first.  TMPDIR does not: it is what tempfile.gettempdir() reads, cron and most services leave
# it unset, and then ${TMPDIR:-/tmp} is /tmp (RULES.md names gettempdir() as shared).
PRIVATE_VARS = {
    "XDG_RUNTIME_DIR",
    "RUNTIME_DIRECTORY",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
}
# a literal home directory: /home/me/Dropbox is ~/Dropbox
_HOME_PREFIX = lazyre.compile(
    r"^(?:/home/[^/\0]+|/Users/[^/\0]+|/root|[A-Za-z]:[/\\\\]Users[/\\\\][^/\\\\\0]+)(?=[/\\\\])"
)


def name_words(name: str) -> list[str]:
    """Split a variable name on '_' and camelCase boundaries, upper-cased."""
    words: list[str] = []
    for chunk in re.split(r"[_\W]+", name):
        words.extend(re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", chunk))
    return [w.upper() for w in words if w]


def synced_variable(name: str) -> bool:
    if name.upper() in SYNC_ROOT_VARIABLES:
        return True
    return any(w in SYNC_WORDS for w in name_words(name))


def _alternatives(path: PathExpr, depth: int = 0) -> list[tuple[Part, ...]]:
    """Expand ${VAR:-default} parts into (VAR itself, default) alternatives."""
    out: list[tuple[Part, ...]] = [()]
    for p in path.parts:
        if p.kind in (PartKind.VAR, PartKind.ARG) and p.default is not None and depth < 4:
            alts = [(Part(p.kind, p.value),)] + _alternatives(p.default, depth + 1)
            out = [o + a for o in out for a in alts][:16]
        else:
            out = [o + (p,) for o in out]
    return out


def _prefix_text(parts: tuple[Part, ...]) -> str | None:
    """The path's leading text with ~ for home, while it stays literal; None if it starts
    with something unknown."""
    s = ""
    for p in parts:
        if p.kind is PartKind.LIT:
            s += p.value
        elif p.kind is PartKind.HOME and not s:
            s += "~"
        else:
            s += "\0"  # marker: anything after is not literal
            break
    return s or None


def synced_reason(
    path: PathExpr | None, extra_roots: list[str] | tuple[str, ...] = ()
) -> str | None:
    """Why the path is synced or network, or None."""
    if path is None:
        return None
    for alt in _alternatives(path):
        # variable names that say shared/synced (unresolved ones only: an assigned variable
        # resolves to its value first)
        for p in alt:
            if p.kind is PartKind.VAR and synced_variable(p.value):
                return f"${p.value} names a shared or synced location"
        pre = _prefix_text(alt)
        if not pre:
            continue
        text = pre.split("\0")[0]
        why = _synced_text(text, pre)
        if why:
            return why
        for root in extra_roots:
            r = root.rstrip("/")
            home = os.path.expanduser("~")
            cand = {r}
            if r.startswith("~"):
                cand.add(home + r[1:])
            elif r.startswith(home):
                cand.add("~" + r[len(home) :])
            for c in cand:
                if text == c or text.startswith(c + "/"):
                    return f"{root} is declared in synced-paths"
    return None


def _synced_text(text: str, full: str) -> str | None:
    """``text``: the literal leading part; ``full``: the same with a NUL where an unresolved
    part begins (so a literal root followed by more path is recognised)."""
    m = _HOME_PREFIX.match(full)
    if m:
        full = "~" + full[m.end() :].replace("\\", "/")
    if full.startswith("~/"):
        segs = full[2:].split("/")
        for root in SYNC_ROOTS_HOME:
            n = root.count("/") + 1
            head = segs[:n]
            if len(segs) > n and all("\0" not in s for s in head):
                if fnmatch.fnmatchcase("/".join(head), root):
                    return f"~/{'/'.join(head)} is a cloud-synced folder"
        return None
    m = re.match(r"^/mnt/([a-z])/", full)
    if m:
        return f"/mnt/{m.group(1)} is a Windows drive mounted in WSL (9p/drvfs)"
    if re.match(r"^(//|\\\\)[^/\\\0]", full):
        return "a UNC path names a network share"
    if full.startswith("smb://"):
        return "smb:// names a network share"
    for root in ("/net/", "/nfs/"):
        if full.startswith(root):
            return f"{root.rstrip('/')} is a network mount"
    if re.match(r"^/mnt/nfs[^/\0]*/", full):
        return "/mnt/nfs* is a network mount"
    return None


def _merge_literals(parts: tuple[Part, ...]) -> PathExpr:
    out: list[Part] = []
    for p in parts:
        if out and p.kind is PartKind.LIT and out[-1].kind is PartKind.LIT:
            out[-1] = Part(PartKind.LIT, out[-1].value + p.value)
        else:
            out.append(p)
    return PathExpr(tuple(out))


def effective(path: PathExpr) -> PathExpr:
    """The path that runs unless the environment says otherwise: ``${LOCK:-/tmp/x.lock}`` and
    ``${LOCKDIR:-/tmp}/x.lock`` are their defaults (a private directory variable is not), and
    so is a positional parameter's ``${1:-/tmp/x.lock}``."""
    first = path.parts[0] if path.parts else None
    if (
        first is not None
        and first.kind in (PartKind.VAR, PartKind.ARG)
        and first.default is not None
        and first.value not in PRIVATE_VARS
        and first.default.parts
    ):
        return _merge_literals(first.default.parts + path.parts[1:])
    return path


def shared_tmp_dir(path: PathExpr | None, system_account: bool = False) -> str | None:
    """The world-writable directory the path lies directly in, or None.  ``%TEMP%``/``%TMP%``
    are private except for a script a Task Scheduler definition runs as SYSTEM (or another
    service account), whose temporary directory is C:\\Windows\\Temp."""
    if path is None or not path.parts:
        return None
    first = path.parts[0]
    if effective(path) is not path:
        return shared_tmp_dir(effective(path), system_account)
    if system_account and first.kind is PartKind.VAR and first.value.upper() in ("TEMP", "TMP"):
        rest = "".join(p.value if p.kind is PartKind.LIT else "\0" for p in path.parts[1:])
        if rest.strip("/").count("/") == 0 and "\0" not in rest:
            return WINDOWS_TEMP + " (%TEMP% of a SYSTEM task)"
        return None
    if first.kind is PartKind.TMPDIR:
        rest = path.parts[1:]
        text = "".join(p.value if p.kind is PartKind.LIT else "\0" for p in rest)
        return "the system temporary directory" if text.count("/") <= 1 else None
    if first.kind is not PartKind.LIT:
        return None
    # the whole path's text, unknown parts as NUL: `/tmp/lock-$USER/x.lock` is not directly
    # in /tmp
    text = "".join(p.value if p.kind is PartKind.LIT else "\0" for p in path.parts)
    m = _WINDOWS_TEMP_RE.match(text)
    if m:
        return WINDOWS_TEMP if "/" not in text[m.end() :] else None
    for d in SHARED_TMP_DIRS:
        if text.startswith(d + "/"):
            rest = text[len(d) + 1 :]
            if "/" not in rest:
                return d
    return None


def private_first(path: PathExpr | None) -> bool:
    """Tries a private directory first (${XDG_RUNTIME_DIR:-/tmp}, env.get(...,'/tmp'))."""
    if path is None or not path.parts:
        return False
    first = path.parts[0]
    return first.kind is PartKind.VAR and first.value in PRIVATE_VARS


def predictable_name(path: PathExpr | None) -> bool:
    """The entry's name is a literal or derived only from script name, user or arguments."""
    if path is None:
        return False
    name = effective(path).basename_parts()
    if not name:
        return False
    ok = {PartKind.LIT, PartKind.SCRIPT_NAME, PartKind.USER, PartKind.ARG}
    return all(p.kind in ok for p in name)


def script_relative(path: PathExpr | None) -> str | None:
    """Why the path is beside the script or in the working directory, or None."""
    if path is None or not path.parts:
        return None
    first = path.parts[0]
    if first.kind is PartKind.SCRIPT_DIR:
        return "it lies beside the script"
    if first.kind is PartKind.SCRIPT and len(path.parts) > 1:
        return "it lies beside the script"  # "$0.pid", __file__ + ".lock"
    if first.kind is PartKind.CWD:
        return "it lies in the working directory"
    if first.kind is PartKind.SCRIPT_NAME:
        # `basename $0`.lck: the script's bare name, with no directory before it
        return "a relative name resolves against the working directory"
    if first.kind is PartKind.LIT:
        v = first.value
        if v and not v.startswith(("/", "~", "\\")) and not re.match(r"^[A-Za-z]:", v):
            return "a relative name resolves against the working directory"
    return None


def is_script_itself(path: PathExpr | None) -> bool:
    return bool(path and len(path.parts) == 1 and path.parts[0].kind is PartKind.SCRIPT)


def _has_unknown(path: PathExpr) -> bool:
    return any(p.kind is PartKind.UNKNOWN and not p.value for p in path.parts)


def _spelling(path: PathExpr) -> str:
    return path.text.replace('"', "").replace("'", "").strip()


def same_path(a: PathExpr | None, b: PathExpr | None) -> bool:
    """Whether two paths of one file name the same entry.  A path with an unresolved part is
    the same as another only when both are spelled alike in the source (``"$a"`` twice), never
    merely because both are unknown."""
    if a is None or b is None:
        return False
    if _has_unknown(a) or _has_unknown(b):
        return bool(_spelling(a)) and _spelling(a) == _spelling(b) and a.key() == b.key()
    return a.key() == b.key()


def glob_matches(pattern: PathExpr | None, path: PathExpr | None) -> bool:
    if pattern is None or path is None:
        return False
    if same_path(pattern, path):
        return True
    if _has_unknown(pattern) or _has_unknown(path):
        return False
    return fnmatch.fnmatchcase(path.key(), pattern.key())


DEPENDENCY_LOCKFILES = {
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "Cargo.lock",
    "poetry.lock",
    "Pipfile.lock",
    "pdm.lock",
    "uv.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "flake.lock",
    "mix.lock",
    "pubspec.lock",
    "Podfile.lock",
    "packages.lock.json",
    "conda-lock.yml",
    "deno.lock",
    "gradle.lockfile",
    "Package.resolved",
}


def is_dependency_lockfile(path: PathExpr | None) -> bool:
    if path is None:
        return False
    key = path.key()
    base = key.rsplit("/", 1)[-1]
    if base in DEPENDENCY_LOCKFILES or key.endswith(".git/index.lock") or "/.git/" in key:
        return True
    return base.endswith((".lock.json", "-lock.json", "-lock.yaml", ".lockb"))


# words of a lock-like name, matched as whole name parts (split on non-alphanumerics and
# camelCase), never as substrings: `block_test.out`, `clock_skew`, `rapid` are not lock names
LOCKISH_WORDS = {
    "LOCK",
    "LOCKS",
    "LOCKED",
    "LOCKFILE",
    "LOCKDIR",
    "FLOCK",
    "LCK",
    "PID",
    "PIDS",
    "PIDFILE",
    "MUTEX",
    "RUNNING",
}


def lockish_text(text: str) -> bool:
    """The text has a lock-like name part (`job.lock`, `cronLock`, `app.pid`, `LOCKFILE`)."""
    return any(w in LOCKISH_WORDS for w in name_words(text))


def lockish_name(path: PathExpr | None) -> bool:
    if path is None:
        return False
    return lockish_text(path.render())
