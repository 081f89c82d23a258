"""Nomad job files (``*.nomad``, ``*.nomad.hcl``) with a ``periodic`` block.  HCL read by hand
as far as the rules need: blocks, ``key = value`` assignments, heredocs skipped."""

from __future__ import annotations

import re

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock

_OPEN = re.compile(r'^\s*([A-Za-z_][\w-]*)((?:\s+"[^"]*")*)\s*\{\s*(#.*|//.*)?$')
_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*=\s*(.*?)\s*(#.*|//.*)?$")
_HEREDOC = re.compile(r"<<-?\s*([A-Z_]+)\s*$")


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "nomad", text)
    stack: list[tuple[str, str, int]] = []  # (block type, label, line)
    job: Entry | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        no, raw = i + 1, lines[i].rstrip("\r")
        i += 1
        s = raw.strip()
        if not s or s.startswith(("#", "//")):
            if s:
                d.comments[no] = "#" + s.lstrip("#/")
            continue
        m = _OPEN.match(raw)
        if m:
            kind, label = m.group(1), m.group(2).strip().strip('"')
            stack.append((kind, label, no))
            if kind == "job" and len(stack) == 1:
                job = Entry("nomad-job", label or "job", no, scheduled=False)
                d.entries.append(job)
            elif kind == "periodic" and job is not None:
                job.scheduled = True
                job.line, job.col = no, raw.index("periodic") + 1
                job.settings.setdefault("prohibit_overlap", Setting(None, no, job.col))
            continue
        if s == "}" or s.startswith("}"):
            if not stack:
                d.errors.append(DefError(no, raw.index("}") + 1, "HCL: unmatched '}'"))
                return d
            stack.pop()
            continue
        a = _ASSIGN.match(raw)
        if a is None:
            if stack and stack[-1][0] in ("config", "env", "meta") or s.startswith(("]", '"', "[")):
                continue  # list continuation lines
            d.errors.append(DefError(no, 1, "HCL: expected a block or key = value"))
            return d
        key, value = a.group(1), a.group(2)
        h = _HEREDOC.search(value)
        if h:
            while i < len(lines) and lines[i].strip() != h.group(1):
                i += 1
            i += 1
            continue
        where = stack[-1][0] if stack else ""
        if job is not None and where == "periodic" and key == "prohibit_overlap":
            job.settings["prohibit_overlap"] = Setting(value.strip('"'), no, raw.index(key) + 1)
        elif job is not None and where == "config" and key == "command":
            cmd = value.strip('"')
            job.commands.append(Command(cmd, no, raw.index(value) + 2, wrapped=wrapper_lock(cmd)))
    if stack:
        kind, _label, no = stack[-1]
        d.errors.append(DefError(no, 1, f"HCL: block '{kind}' is not closed"))
    if job is not None and not job.scheduled:
        d.entries.remove(job)
    return d
