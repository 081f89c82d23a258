"""``lockcheck init``: ready single-instance wrappers, in shell and in Python (here), Node.js
(:mod:`.template_node`) and PowerShell (:mod:`.template_powershell`, a ``Global\\`` named
mutex: no lock file at all).

The shell, Python and Node wrappers follow the same design:

* the lock root is the first candidate directory where an entry can be both created *and*
  deleted: a private ``lockcheck-UID`` subdirectory of the state home
  (``${XDG_STATE_HOME:-~/.local/state}``), then of ``~/.cache`` and, last, of
  ``${TMPDIR:-/tmp}``.  Never the session's runtime directory: cron has no
  ``$XDG_RUNTIME_DIR`` and ``/run/user/$UID`` exists only while the user has a session, so a
  manual run and a cron run would choose different roots and not exclude each other.  The
  test entry carries the process id, so concurrent starts never collide, and a test entry
  that cannot be deleted is renamed to one fixed marker so that the directory is skipped
  cheaply next time;
* the lock is a flock held on an open descriptor; the lock file is opened without truncating
  or following links and is never deleted;
* exit status: the wrapped command's own status, 75 (EX_TEMPFAIL) when another run holds the
  lock, 3 when no usable lock location exists, 64 on a usage error;
* every run appends a line (acquired / skipped / released / failed) to a ledger, named by
  ``$LOCKCHECK_LEDGER`` (default ``${XDG_STATE_HOME:-~/.local/state}/lockcheck/SLOT.log``).
"""

from __future__ import annotations

import re

SLOT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
LANGUAGES = ("shell", "python", "node", "powershell")
EXTENSIONS = {"shell": ".sh", "python": ".py", "node": ".cjs", "powershell": ".ps1"}

_SHELL = r"""#!/usr/bin/env bash
# Single-instance wrapper for the slot "@SLOT@" (made by `lockcheck init --shell`).
#
#   usage: @NAME@ COMMAND [ARG...]
#
# Runs COMMAND while holding a flock on a lock file in a local, run-private directory.
# Exit status: COMMAND's own status when it ran; 75 (EX_TEMPFAIL) when another run holds
# the lock, so a skip is never mistaken for success; 3 when no directory lets an entry be
# both created and deleted; 64 on a usage error.
# Every run appends one line per event (acquired, skipped, released, failed) to the ledger
# $LOCKCHECK_LEDGER (default: ${XDG_STATE_HOME:-$HOME/.local/state}/lockcheck/@SLOT@.log).
# The lock file is never deleted: the lock lives on the open descriptor, not on the name.
set -u

slot='@SLOT@'
ledger=${LOCKCHECK_LEDGER:-${XDG_STATE_HOME:-${HOME:-/}/.local/state}/lockcheck/$slot.log}

record() {
    mkdir -p -- "${ledger%/*}" 2>/dev/null
    printf '%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$slot" "$$" "$*" \
        >>"$ledger" 2>/dev/null ||
        printf '%s: %s (ledger %s is not writable)\n' "${0##*/}" "$*" "$ledger" >&2
}

# usable DIR: an entry can be created and deleted in DIR.  Locks must not live where
# deletion is refused (cloud-synced folders, some sandboxes).  The test entry is named per
# process; one that cannot be deleted becomes a single fixed marker (rename still works
# there), so the directory is skipped at once next time and nothing piles up.
usable() {
    [ -n "$1" ] && [ -d "$1" ] && [ -w "$1" ] && [ ! -L "$1" ] || return 1
    [ -e "$1/.lockcheck-undeletable" ] && return 1
    probe="$1/.lockcheck-probe.$$"
    if mkdir -- "$probe" 2>/dev/null && rmdir -- "$probe" 2>/dev/null; then
        return 0
    fi
    [ -d "$probe" ] && mv -f -- "$probe" "$1/.lockcheck-undeletable" 2>/dev/null
    return 1
}

# try_root BASE [SUBDIR]: use BASE (or a private SUBDIR made in it) as the lock root.
try_root() {
    dir=$1
    [ -n "$dir" ] && [ -d "$dir" ] || return 1
    if [ -n "${2:-}" ]; then
        dir="$dir/$2"
        mkdir -m 700 -- "$dir" 2>/dev/null
        # someone else's directory (or a planted link) under a shared parent is refused
        [ -d "$dir" ] && [ ! -L "$dir" ] && [ -O "$dir" ] || return 1
    fi
    usable "$dir" || return 1
    root=$dir
}

case ${1:-} in
'')
    printf 'usage: %s COMMAND [ARG...]\n' "${0##*/}" >&2
    exit 64
    ;;
esac

uid=$(id -u)
root=
# the same root for cron, timers and manual runs: never the session's runtime directory
state=${XDG_STATE_HOME:-${HOME:-/nonexistent}/.local/state}
mkdir -p -- "$state" 2>/dev/null
try_root "$state" "lockcheck-$uid" ||
    try_root "${HOME:-}/.cache" "lockcheck-$uid" ||
    try_root "${TMPDIR:-/tmp}" "lockcheck-$uid" || {
    record "failed: no lock location accepts both create and delete"
    exit 3
}

lock="$root/$slot.lock"
# read-write open: no truncation; the file is created once and kept
if ! exec 9<>"$lock"; then
    record "failed: cannot open $lock"
    exit 3
fi
if ! flock -n 9; then
    record skipped
    exit 75
fi
record acquired

# the command does not inherit the lock descriptor: a child it leaves running in the
# background cannot keep the slot locked after this run ends
"$@" 9<&-
rc=$?
record "released status=$rc"
exit "$rc"
"""

_PYTHON = r'''#!/usr/bin/env python3
"""Single-instance wrapper for the slot "@SLOT@" (made by `lockcheck init --python`).

usage: @NAME@ COMMAND [ARG...]

Runs COMMAND while holding a flock on a lock file in a local, run-private directory.
Exit status: COMMAND's own status when it ran; 75 (EX_TEMPFAIL) when another run holds the
lock, so a skip is never mistaken for success; 3 when no directory lets an entry be both
created and deleted; 64 on a usage error.
Every run appends one line per event (acquired, skipped, released, failed) to the ledger
$LOCKCHECK_LEDGER (default: ${XDG_STATE_HOME:-~/.local/state}/lockcheck/@SLOT@.log).
The lock file is never deleted: the lock lives on the open descriptor, not on the name.
"""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import time

SLOT = "@SLOT@"
EX_BUSY = 75  # EX_TEMPFAIL: another run holds the lock
EX_NO_LOCK = 3  # no usable lock location
EX_USAGE = 64
MARKER = ".lockcheck-undeletable"
STATE_HOME = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
LEDGER = os.environ.get("LOCKCHECK_LEDGER") or os.path.join(
    STATE_HOME, "lockcheck", SLOT + ".log"
)


def record(event: str) -> None:
    """Append one ledger line: time, slot, pid, event."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp}\t{SLOT}\t{os.getpid()}\t{event}\n"
    try:
        os.makedirs(os.path.dirname(LEDGER) or ".", exist_ok=True)
        with open(LEDGER, "a", encoding="utf-8") as ledger:
            ledger.write(line)
    except OSError as exc:
        sys.stderr.write(f"{SLOT}: {event} (ledger {LEDGER} is not writable: {exc})\n")


def usable(directory: str) -> bool:
    """An entry can be created and deleted in ``directory``.

    Locks must not live where deletion is refused (cloud-synced folders, some sandboxes).
    The test entry is named per process; one that cannot be deleted becomes a single fixed
    marker (rename still works there), so the directory is skipped at once next time.
    """
    if not directory or os.path.islink(directory) or not os.path.isdir(directory):
        return False
    if not os.access(directory, os.W_OK | os.X_OK):
        return False
    if os.path.lexists(os.path.join(directory, MARKER)):
        return False
    probe = os.path.join(directory, f".lockcheck-probe.{os.getpid()}")
    try:
        os.mkdir(probe, 0o700)
        os.rmdir(probe)
    except OSError:
        if os.path.isdir(probe):
            try:
                os.replace(probe, os.path.join(directory, MARKER))
            except OSError:
                pass
        return False
    return True


def private_subdir(base: str) -> str | None:
    """A ``lockcheck-UID`` directory of our own under ``base`` (a shared parent is fine:
    someone else's directory or a planted link there is refused)."""
    if not base or not os.path.isdir(base):
        return None
    path = os.path.join(base, f"lockcheck-{os.getuid()}")
    try:
        os.makedirs(path, 0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return None
    return path


def lock_root() -> str | None:
    """The first candidate where create and delete both work: private and local first."""
    # the same root for cron, timers and manual runs: never the session's runtime directory
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    try:
        os.makedirs(state, exist_ok=True)
    except OSError:
        pass
    candidates = [
        private_subdir(state),
        private_subdir(os.path.expanduser("~/.cache")),
        private_subdir(os.environ.get("TMPDIR") or "/tmp"),
    ]
    for directory in candidates:
        if directory and usable(directory):
            return directory
    return None


def main(argv: list[str]) -> int:
    if not argv:
        sys.stderr.write(f"usage: {os.path.basename(sys.argv[0])} COMMAND [ARG...]\n")
        return EX_USAGE
    root = lock_root()
    if root is None:
        record("failed: no lock location accepts both create and delete")
        return EX_NO_LOCK
    lock_path = os.path.join(root, SLOT + ".lock")
    try:
        # no truncation, no symlink following, private mode; the file is kept for good
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        record(f"failed: cannot open {lock_path}: {exc}")
        return EX_NO_LOCK
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        record("skipped")
        return EX_BUSY
    record("acquired")
    try:
        # the descriptor is close-on-exec: the command cannot keep the slot locked
        status = subprocess.call(argv)
    except OSError as exc:
        sys.stderr.write(f"{SLOT}: cannot run {argv[0]}: {exc}\n")
        status = 127
    if status < 0:
        status = 128 - status  # killed by a signal, as the shell reports it
    record(f"released status={status}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''


def render_init(language: str, slot: str) -> str:
    """The ``lockcheck init`` wrapper for ``language`` (one of :data:`LANGUAGES`) and ``slot``."""
    aliases = {"sh": "shell", "bash": "shell", "py": "python", "js": "node", "ps": "powershell"}
    lang = aliases.get(language, language)
    if lang not in LANGUAGES:
        raise ValueError(
            f"unknown language {language!r}: expected 'shell', 'python', 'node' or 'powershell'"
        )
    if not SLOT_RE.match(slot or ""):
        raise ValueError(
            f"invalid slot name {slot!r}: use letters, digits, '.', '_' or '-' "
            "(at most 100, not starting with a punctuation mark)"
        )
    if lang == "node":
        from .template_node import TEMPLATE as template
    elif lang == "powershell":
        from .template_powershell import TEMPLATE as template
    else:
        template = _SHELL if lang == "shell" else _PYTHON
    name = f"{slot}-lock" + EXTENSIONS[lang]
    return template.replace("@SLOT@", slot).replace("@NAME@", name)
