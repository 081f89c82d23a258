"""Output formats.  One module per format, each with ``render(findings, ctx) -> str``.

Reporters know nothing of languages: they read :class:`lockcheck.model.Finding` objects and,
through :class:`ReportContext`, the text of the flagged files (source lines, edit positions).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable

from .. import lazyre
from ..model import Applicability, Edit, Finding, Fix
from ..records import field, record

FORMATS = {
    "full": "full",
    "concise": "concise",
    "json": "jsonfmt",
    "json-lines": "jsonlines",
    "github": "github",
    "sarif": "sarif",
    "junit": "junit",
    "gitlab": "gitlab",
    "pylint": "pylint",
    "rdjson": "rdjson",
}
HUMAN_FORMATS = ("full", "concise")

SEVERITY_ORDER = {"info": 0, "warning": 1, "error": 2}


@record
class ReportContext:
    root: str = field(default_factory=os.getcwd)  # scan root: absolute names, relative URIs
    sources: dict[str, str] = field(default_factory=dict)  # finding.path -> decoded text
    color: bool = False
    unsafe_fixes: bool = False  # unsafe fixes count as applicable ([*])
    show_fixes: bool = False
    version: str = ""
    rule_docs: bool = True  # SARIF: take descriptions from the rule pages when available
    # finding.path -> absolute path, when findings carry display paths
    absolute: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        if not self.version:
            from .. import __version__

            self.version = __version__
        self._lines: dict[str, list[str]] = {}
        self._starts: dict[str, list[int]] = {}

    # -- paths ------------------------------------------------------------------------------
    def abspath(self, path: str) -> str:
        if self.absolute is not None:
            return self.absolute(path)
        return os.path.normpath(os.path.join(self.root, path))

    def relpath(self, path: str) -> str:
        """``path`` relative to the scan root, '/'-separated (as given when outside it)."""
        ap = self.abspath(path)
        try:
            rel = os.path.relpath(ap, self.root)
        except ValueError:
            rel = ap
        if rel.startswith(".."):
            rel = ap
        return rel.replace(os.sep, "/")

    # -- source -----------------------------------------------------------------------------
    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            text = self.sources.get(path)
            if text is None:
                self._lines[path] = []
            else:
                self._lines[path] = [
                    ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")
                ]
        return self._lines[path]

    def line(self, path: str, row: int) -> str | None:
        ls = self.lines(path)
        if 1 <= row <= len(ls):
            return ls[row - 1]
        return None

    def position(self, path: str, offset: int) -> tuple[int, int]:
        """(row, column), 1-based, of a character offset into the file's text."""
        if path not in self._starts:
            text = self.sources.get(path, "")
            starts = [0]
            for i, ch in enumerate(text):
                if ch == "\n":
                    starts.append(i + 1)
            self._starts[path] = starts
        starts = self._starts[path]
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - starts[lo] + 1

    def edit_range(self, path: str, edit: Edit) -> tuple[tuple[int, int], tuple[int, int]]:
        return self.position(path, edit.start), self.position(path, edit.end)

    # -- fixes ------------------------------------------------------------------------------
    def applicable(self, finding: Finding) -> bool:
        """The finding's fix would be applied by ``--fix`` (with the current unsafe setting)."""
        fix = finding.fix
        if fix is None or not fix.edits:
            return False
        if fix.applicability is Applicability.SAFE:
            return True
        return self.unsafe_fixes and fix.applicability is Applicability.UNSAFE


_SURROGATE = lazyre.compile("[\ud800-\udfff]")


def json_text(obj: object, **kwargs) -> str:
    """JSON with non-ASCII text kept, but lone surrogates (undecodable bytes of a file or file
    name, kept by ``surrogateescape``) written as ``\\udcXX`` escapes so that the output stays
    valid UTF-8."""
    import json  # here: the human formats never need it

    text = json.dumps(obj, ensure_ascii=False, **kwargs)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def valid_utf8(text: str) -> str:
    """Undecodable bytes shown as U+FFFD (for formats that must be valid UTF-8, e.g. XML)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# C0 and C1 control characters (a tab is kept) and the bidirectional overrides and isolates
# ("Trojan source"): text from scanned files and their names never reaches a terminal raw
_CONTROL = lazyre.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udc9f]"
)


def _escape_char(ch: str) -> str:
    n = ord(ch)
    if 0xDC80 <= n <= 0xDCFF:  # an undecodable byte (surrogateescape): the byte itself
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: str, keep_newlines: bool = False) -> str:
    """``text`` with control characters written as ``\\x1b``-style escapes (for the text
    formats; JSON formats escape them already).  ``keep_newlines``: LF and CR stay (XML,
    where they are legal and escaped by the writer)."""
    if not _CONTROL.search(text):
        return text

    def sub(m: re.Match) -> str:
        ch = m.group()
        return ch if keep_newlines and ch in "\n\r" else _escape_char(ch)

    return _CONTROL.sub(sub, text)


_LINE_END_OR_CONTROL = lazyre.compile("\r\n|" + _CONTROL.pattern)


def printable_lines(text: str) -> str:
    """:func:`printable` for text made of lines (diffs): line ends (LF, CRLF) stay, every
    other control character, a lone CR among them, is escaped."""
    if not _CONTROL.search(text.replace("\r\n", "\n").replace("\n", "")):
        return text

    def sub(m: re.Match) -> str:
        ch = m.group()
        return ch if ch in ("\n", "\r\n") else _escape_char(ch)

    return _LINE_END_OR_CONTROL.sub(sub, text)


def one_line(text: str) -> str:
    """A message for a line-oriented format: line breaks become spaces."""
    return " ".join(text.splitlines()) if ("\n" in text or "\r" in text) else text


def fix_of(finding: Finding) -> Fix | None:
    """The fix, else the shown-only suggestion."""
    return finding.fix or finding.suggestion


def rule_url(code: str) -> str:
    from ..checks import rule_url as url

    return url(code)


def render(fmt: str, findings: list[Finding], ctx: ReportContext) -> str:
    module = importlib.import_module(f"{__name__}.{FORMATS[fmt]}")
    return module.render(sorted(findings, key=lambda f: f.sort_key), ctx)
