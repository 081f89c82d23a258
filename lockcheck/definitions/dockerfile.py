"""Dockerfiles: the shell form of ``RUN`` (with ``\\`` continuations) is embedded shell for
the script rules; a Dockerfile starts no scheduled job, so no LCK6xx rule reads it."""

from __future__ import annotations

import re

from . import Command, Definition, Entry

_RUN = re.compile(r"^(\s*RUN\s+)(?!\[)(?:--\S+\s+)*", re.I)
_SHELL = re.compile(r"^\s*SHELL\s+(\[.*\])\s*$", re.I)
_ESCAPE = re.compile(r"^#\s*escape\s*=\s*(\S)", re.I)
POSIX = ("sh", "bash", "dash", "ash")


def _shell_of(instruction: str) -> str | None:
    """The shell a ``SHELL ["prog", ...]`` instruction sets: a POSIX shell's name, else None
    (``powershell``, ``cmd``: not analysed)."""
    import json

    try:
        argv = json.loads(instruction)
    except ValueError:
        return None
    if not argv or not isinstance(argv[0], str):
        return None
    prog = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    if prog not in POSIX:
        return None
    flags = [a for a in argv[1:] if isinstance(a, str) and re.fullmatch(r"-[a-z]+", a)]
    return prog + " -e" if any("e" in f for f in flags) else prog


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "dockerfile", text)
    e = Entry("dockerfile", path, 1, scheduled=False)
    lines = text.split("\n")
    # `# escape=`` (Windows images): another continuation character and, as a rule, no sh
    esc = _ESCAPE.match(lines[0]) if lines else None
    shell: str | None = "sh" if esc is None or esc.group(1) == "\\" else None
    i = 0
    while i < len(lines):
        no, line = i + 1, lines[i].rstrip("\r")
        i += 1
        if line.lstrip().startswith("#"):
            d.comments[no] = line.strip()
            continue
        sh = _SHELL.match(line)
        if sh:
            shell = _shell_of(sh.group(1))
            continue
        m = _RUN.match(line)
        if not m:
            continue
        body = [line[m.end() :]]
        last = body[-1]
        while last.rstrip().endswith("\\") and i < len(lines):
            nxt = lines[i].rstrip("\r")
            i += 1
            if nxt.lstrip().startswith("#") or not nxt.strip():
                # Docker drops comment (and empty) lines inside an instruction: the command
                # goes on after them (kept as blank lines, so lines still map)
                d.comments[i] = nxt.strip()
                body.append("")
                continue
            body.append(nxt)
            last = nxt
        if shell is not None:
            e.commands.append(Command("\n".join(body), no, m.end() + 1, shell=shell))
    d.entries.append(e)
    return d
