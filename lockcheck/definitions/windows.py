"""Windows Task Scheduler exports: XML (often UTF-16 with a BOM) whose root is ``Task`` in the
task namespace.  Read through defusedxml (no entity expansion, no external references); lines
from the expat parser."""

from __future__ import annotations

import codecs
import re

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock

NS = "{http://schemas.microsoft.com/windows/2004/02/mit/task}"


def decode(data: bytes) -> str:
    for bom, enc in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(enc, errors="replace")
    if data[:2] == b"<\0":
        return data.decode("utf-16-le", errors="replace")
    return data.decode("utf-8", errors="surrogateescape")


_DECLARES_UTF16 = re.compile(rb"^\s*<\?xml[^>]*\bencoding\s*=\s*[\"']utf-?16", re.I)


def _mislabelled(data: bytes | None) -> bool:
    """Bytes without a byte-order mark or a NUL (UTF-8, as an editor saved a task export)
    whose declaration says UTF-16: expat would refuse them; the decoded text is read."""
    if data is None or data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return False
    return b"\0" not in data[:512] and bool(_DECLARES_UTF16.match(data[:512]))


class _Target:
    def __init__(self) -> None:
        self.parser = None
        self.stack: list[dict] = []
        self.root: dict | None = None
        self.comments: dict[int, str] = {}

    def start(self, tag, attrs):
        node = {
            "tag": tag.replace(NS, ""),
            "line": self.parser.parser.CurrentLineNumber,
            "text": "",
            "kids": [],
        }
        if self.stack:
            self.stack[-1]["kids"].append(node)
        else:
            self.root = node
        self.stack.append(node)

    def end(self, tag):
        self.stack.pop()

    def data(self, text):
        if self.stack:
            self.stack[-1]["text"] += text

    def comment(self, text):
        line = self.parser.parser.CurrentLineNumber
        # a comment may span lines: its last line is the one before the element it precedes
        self.comments[line + text.count("\n")] = "# " + text.strip()

    def close(self):
        return self.root


def _find(node: dict | None, *path: str) -> dict | None:
    for name in path:
        if node is None:
            return None
        node = next((k for k in node["kids"] if k["tag"] == name), None)
    return node


# SYSTEM, LocalService, NetworkService: their %TEMP% is the shared C:\\Windows\\Temp
SERVICE_ACCOUNTS = {
    "s-1-5-18",
    "s-1-5-19",
    "s-1-5-20",
    "system",
    "localsystem",
    "nt authority\\system",
    "local service",
    "localservice",
    "nt authority\\localservice",
    "nt authority\\local service",
    "network service",
    "networkservice",
    "nt authority\\networkservice",
    "nt authority\\network service",
}


def runs_as_service_account(user: str | None) -> bool:
    """A task principal's ``UserId`` names SYSTEM, LocalService or NetworkService."""
    return (user or "").strip().lower() in SERVICE_ACCOUNTS


def parse(path: str, text: str, data: bytes | None = None) -> Definition:
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import XMLParser

    d = Definition(path, "windows", text)
    target = _Target()
    parser = XMLParser(target=target)
    target.parser = parser
    raw = data if data is not None else text.encode("utf-8")
    if data is None and text.lstrip().startswith("<?xml") or _mislabelled(data):
        raw = text.encode("utf-16")  # any declared encoding is then read as UTF-16
    try:
        parser.feed(raw)
        root = parser.close()
    except DefusedXmlException as exc:
        d.errors.append(DefError(1, 1, f"XML refused: {type(exc).__name__}"))
        return d
    except Exception as exc:  # ParseError: expat's position
        pos = getattr(exc, "position", (1, 0))
        d.errors.append(
            DefError(pos[0], pos[1] + 1, f"XML does not parse: {exc}".split(":", 1)[0] + f": {exc}")
        )
        return d
    d.comments = target.comments
    if root is None or root["tag"] != "Task":
        return d
    settings = _find(root, "Settings")
    line = settings["line"] if settings else root["line"]
    e = Entry("windows-task", path, line)
    for key in ("MultipleInstancesPolicy", "ExecutionTimeLimit"):
        n = _find(settings, key)
        e.settings[key] = Setting(n["text"].strip(), n["line"]) if n else Setting(None, line)
    user = _find(root, "Principals", "Principal", "UserId")
    if user is not None:
        e.settings["UserId"] = Setting(user["text"].strip(), user["line"])
    for action in (_find(root, "Actions") or {"kids": []})["kids"]:
        if action["tag"] != "Exec":
            continue
        c, a = _find(action, "Command"), _find(action, "Arguments")
        if c is None:
            continue
        cmd = (c["text"].strip() + " " + (a["text"].strip() if a else "")).strip()
        e.commands.append(
            Command(re.sub(r"[\\/]+", "/", cmd), c["line"], wrapped=wrapper_lock(cmd))
        )
    d.entries.append(e)
    return d
