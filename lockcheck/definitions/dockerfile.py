"""Dockerfiles: the shell form of ``RUN`` (with ``\\`` continuations) is embedded shell for
the script rules; a Dockerfile starts no scheduled job, so no LCK6xx rule reads it."""

from __future__ import annotations

import re

from . import Command, Definition, Entry

_RUN = re.compile(r"^(\s*RUN\s+)(?!\[)(?:--\S+\s+)*", re.I)


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "dockerfile", text)
    e = Entry("dockerfile", path, 1, scheduled=False)
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        no, line = i + 1, lines[i].rstrip("\r")
        i += 1
        if line.lstrip().startswith("#"):
            d.comments[no] = line.strip()
            continue
        m = _RUN.match(line)
        if not m:
            continue
        body = [line[m.end() :]]
        while body[-1].rstrip().endswith("\\") and i < len(lines):
            body.append(lines[i].rstrip("\r"))
            i += 1
        e.commands.append(Command("\n".join(body), no, m.end() + 1, shell="sh"))
    d.entries.append(e)
    return d
