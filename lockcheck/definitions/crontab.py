"""crontab files: ``m h dom mon dow [user] command`` lines, ``@daily``-style lines, and
``NAME=value`` lines (not entries).  Files under ``cron.d/`` and ``/etc/crontab`` have a user
field; elsewhere the sixth field is a user only when a command follows it and it has no ``/``.
"""

from __future__ import annotations

import os
import re

from . import Command, DefError, Definition, Entry
from .commands import wrapper_lock

_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*=")
_FIELD = r"(\S+)\s+"
_TIMED = re.compile(r"^\s*" + _FIELD * 5 + r"(.*)$")
_AT = re.compile(r"^\s*(@(?:reboot|yearly|annually|monthly|weekly|daily|midnight|hourly))\s+(.*)$")
_TIME_FIELD = re.compile(r"^[\d*/,\-A-Za-z?LW#]+$")


def has_user_field(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return "cron.d" in parts[:-1] or parts[-1] == "crontab" and "etc" in parts


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "crontab", text)
    system = has_user_field(os.path.abspath(path))
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip("\r")
        s = line.strip()
        if not s or s.startswith("#"):
            if s.startswith("#"):
                d.comments[no] = s
            continue
        if _ENV.match(s):
            continue
        m = _AT.match(line)
        if m:
            rest = m.group(2)
            col = line.index(rest) + 1
        else:
            m = _TIMED.match(line)
            if not m or not all(_TIME_FIELD.match(f) for f in m.groups()[:5]):
                d.errors.append(DefError(no, 1, "not a crontab line (5 time fields or @daily)"))
                continue
            rest = m.group(6)
            col = len(line) - len(rest) + 1
        user_m = re.match(r"(\S+)\s+(\S.*)$", rest)
        if user_m and (system or _looks_user(user_m.group(1))):
            col += len(rest) - len(user_m.group(2))
            rest = user_m.group(2)
        cmd = rest.split("%", 1)[0].rstrip()  # % starts standard input
        comment = re.search(r"\s(#\s*(noqa|lockcheck:).*)$", cmd)
        if comment:
            d.comments[no] = comment.group(1)
        e = Entry("crontab", f"line {no}", no, 1)
        e.commands.append(Command(cmd, no, col, wrapped=wrapper_lock(cmd), shell="sh"))
        d.entries.append(e)
    return d


def _looks_user(first: str) -> bool:
    """Outside system crontabs a sixth field followed by a command is a user when it has no
    ``/`` and is a common login name (``root``), never a program (``run-parts``)."""
    return "/" not in first and first in _USERS


_USERS = {"root", "www-data", "nobody", "postgres", "mysql", "backup", "daemon", "ubuntu"}
