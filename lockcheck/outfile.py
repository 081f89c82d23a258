"""Writing a report or baseline file without following a symlink planted in the tree.

The file is written as a new temporary file (``O_EXCL``, never through a link) in the target's
directory and renamed over the target.  A target that is a symlink, or a directory on its way
below the working directory that is one, is refused (:class:`UnsafeOutput`).
"""

from __future__ import annotations

import os
import tempfile


class UnsafeOutput(OSError):
    """The output path goes through a symlink."""


def _check(path: str) -> None:
    ap = os.path.abspath(path)
    if os.path.islink(ap):
        raise UnsafeOutput(f"{path}: is a symlink; refusing to write through it")
    cwd = os.path.abspath(os.getcwd())
    d = os.path.dirname(ap)
    while d != cwd and os.path.commonpath([d, cwd]) == cwd:
        if os.path.islink(d):
            raise UnsafeOutput(
                f"{path}: {os.path.relpath(d, cwd)} is a symlink; refusing to write through it"
            )
        d = os.path.dirname(d)


def write_new(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` (its directories are made when missing)."""
    _check(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    _check(path)  # nothing planted while the directories were made
    fd, tmp = tempfile.mkstemp(prefix=".lockcheck-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
