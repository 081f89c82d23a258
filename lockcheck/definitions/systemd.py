"""systemd units: a ``*.timer`` and the ``*.service`` it starts (``Unit=`` or the same base
name).  Unit syntax by hand: ``[Section]`` lines, ``Key=value`` with ``\\`` continuations,
``#``/``;`` comments.  The timer-service link is made over the tree (``join``)."""

from __future__ import annotations

import os
import re

from . import Command, DefError, Definition, Entry, Setting
from .commands import words, wrapper_lock

SERVICE_KEYS = ("Type", "TimeoutStartSec", "TimeoutSec", "RemainAfterExit", "KillMode")


def read_unit(text: str) -> tuple[list[tuple[str, int, str, str, int]], list[DefError], dict]:
    """(section, line, key, value, col of value) for every assignment; errors; comments."""
    out: list[tuple[str, int, str, str, int]] = []
    errors: list[DefError] = []
    comments: dict[int, str] = {}
    section = ""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        no = i + 1
        s = lines[i].rstrip("\r").strip()
        i += 1
        if not s:
            continue
        if s[0] in "#;":
            comments[no] = "#" + s[1:]
            continue
        if s.startswith("["):
            if not s.endswith("]"):
                errors.append(DefError(no, 1, "unit file: unterminated section header"))
                break
            section = s[1:-1]
            continue
        if "=" not in s or not section:
            errors.append(DefError(no, 1, "unit file: expected [Section] or Key=value"))
            break
        key, _, value = s.partition("=")
        col = lines[no - 1].index("=") + 2
        while value.endswith("\\") and i < len(lines):
            value = value[:-1] + " " + lines[i].strip()
            i += 1
        out.append((section, no, key.strip(), value.strip(), col))
    return out, errors, comments


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "systemd", text)
    items, d.errors, d.comments = read_unit(text)
    if d.errors:
        return d
    base = os.path.basename(path)
    name, ext = os.path.splitext(base)
    sections = {sec: no for sec, no, *_ in items}
    if ext == ".timer":
        e = Entry("timer", base, _section_line(text, "Timer"), 1, scheduled=True)
        for sec, no, key, value, col in items:
            if sec == "Timer" and key == "Unit":
                e.settings["Unit"] = Setting(value, no, col)
        e.settings.setdefault("Unit", Setting(name + ".service", e.line))
        d.entries.append(e)
        return d
    if ext == ".service" or "Service" in sections:
        e = Entry("service", base, _section_line(text, "Service"), 1, scheduled=False)
        for sec, no, key, value, col in items:
            if sec != "Service":
                continue
            if key in SERVICE_KEYS:
                e.settings[key] = Setting(value, no, col)
            elif key == "ExecStart" and value:
                e.commands.append(_exec_start(value.lstrip("@-:+!"), no, col, text))
        d.entries.append(e)
    return d


_SHELLS = ("sh", "bash", "dash", "ksh", "zsh")
_DASH_C = re.compile(r"-[a-z]*c[a-z]*")
_SPECIFIER = re.compile(r"%([a-zA-Z])")


def _exec_start(cmd: str, no: int, col: int, text: str) -> Command:
    """An ``ExecStart=`` command; ``sh -c '...'``/``/bin/bash -c "..."`` on one line: its
    literal is a shell script, with systemd's ``%`` specifiers as unknown variables."""
    w = words(cmd)
    if (
        len(w) >= 3
        and w[0].rsplit("/", 1)[-1] in _SHELLS
        and _DASH_C.fullmatch(w[1])
        and "\n" not in w[2]
    ):
        lit = _SPECIFIER.sub(r"$\1", w[2].replace("%%", "%"))
        line = text.split("\n")[no - 1] if no <= text.count("\n") + 1 else ""
        at = line.find(w[2].split("\n", 1)[0][:40], col - 1)
        if line.rstrip("\r").endswith("\\") or at < 0:  # continued: lines do not map
            return Command(lit, no, col, wrapped=wrapper_lock(lit))
        shell = w[0].rsplit("/", 1)[-1]
        return Command(lit, no, at + 1, wrapped=wrapper_lock(lit), shell=shell)
    return Command(cmd, no, col, wrapped=wrapper_lock(cmd))


def _section_line(text: str, name: str) -> int:
    for no, line in enumerate(text.split("\n"), 1):
        if line.strip() == f"[{name}]":
            return no
    return 1
