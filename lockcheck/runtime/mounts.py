"""Which filesystem a directory lives on, and what kind of filesystem that is.

Read from ``/proc/self/mountinfo`` (the mount whose mount point is the longest prefix of the
directory's real path); where that file is absent, ``statfs(2)``'s magic number names the
common types.  Nothing here writes anything.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass

NETWORK = {
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "ncpfs",
    "9p",
    "drvfs",
    "v9fs",
    "afs",
    "ceph",
    "glusterfs",
    "lustre",
    "gpfs",
    "davfs",
    "fuse.sshfs",
    "fuse.rclone",
    "fuse.s3fs",
    "fuse.gcsfuse",
}
MEMORY = {"tmpfs", "ramfs", "devtmpfs"}

# statfs f_type magic numbers (linux/magic.h) for the fallback
_MAGIC = {
    0xEF53: "ext4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0x858458F6: "ramfs",
    0x6969: "nfs",
    0xFF534D42: "cifs",
    0xFE534D42: "smb2",
    0x65735546: "fuse",
    0x01021997: "9p",
    0x794C7630: "overlay",
    0x2FC12FC1: "zfs",
    0x4D44: "vfat",
    0x5346544E: "ntfs",
}


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fstype: str
    source: str
    options: str

    @property
    def kind(self) -> str:
        """'network', 'tmpfs' or 'local'."""
        return classify(self.fstype)


def classify(fstype: str) -> str:
    t = fstype.lower()
    if t in MEMORY:
        return "tmpfs"
    if t in NETWORK or t.startswith("fuse") or t.startswith("nfs"):
        return "network"
    return "local"


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf, rf = left.split(), right.split()
        if len(lf) < 6 or len(rf) < 2:
            continue
        mounts.append(
            Mount(
                mount_point=_unescape(lf[4]),
                fstype=rf[0],
                source=_unescape(rf[1]),
                options=rf[2] if len(rf) > 2 else "",
            )
        )
    return mounts


def _statfs_type(path: str) -> str | None:
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
    except OSError:
        return None
    buf = ctypes.create_string_buffer(256)  # struct statfs is smaller; f_type comes first
    if libc.statfs(os.fsencode(path), buf) != 0:
        return None
    f_type = ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF
    return _MAGIC.get(f_type, f"0x{f_type:x}")


def mount_of(path: str, mountinfo: str | None = None) -> Mount | None:
    """The mount holding ``path`` (an existing directory)."""
    real = os.path.realpath(path)
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
                mountinfo = fh.read()
        except OSError:
            mountinfo = ""
    best: Mount | None = None
    for m in parse_mountinfo(mountinfo):
        mp = m.mount_point.rstrip("/") or "/"
        if real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best.mount_point.rstrip("/") or "/"):
                best = m
    if best is not None:
        return best
    fstype = _statfs_type(real)
    return Mount(real, fstype, "", "") if fstype else None
