"""The one tree-sitter layer of the frontends: parsers, source bytes, offsets, spans, errors.

Every frontend that reads a tree-sitter tree goes through this module:

* :func:`parser` builds (once per process) the parser of a grammar (``"bash"``,
  ``"python"``, ``"javascript"``, ``"typescript"``, ``"powershell"``); the grammar package
  is imported only then.
* :func:`source_bytes` turns the decoded text into the bytes tree-sitter reads (UTF-8 with
  undecodable bytes kept, so offsets stay one-to-one with the text).
* :class:`Offsets` maps tree-sitter's byte offsets to ``str`` offsets (computed once, and
  only for a non-ASCII text), and offsets to 1-based lines and character columns.
* :func:`first_error` finds the first ERROR or MISSING node without recursion.
* :func:`walk` yields a subtree's nodes iteratively (trees can be 10,000 deep).
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections.abc import Iterator

from .. import lazyre
from ..hints import Any
from ..model import Span

_PARSERS: dict[str, Any] = {}

# code points above U+2FFFF: tree-sitter-bash 0.25 reads out of bounds on some of them
_HIGH_PLANES = lazyre.compile(
    rb"\xf0[\xb0-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)


# grammars whose package is not ``tree_sitter_<grammar>`` with a ``language()`` function
_GRAMMARS = {"typescript": ("tree_sitter_typescript", "language_typescript")}


def parser(grammar: str) -> Any:
    """The (cached) tree-sitter parser of ``grammar``: ``"bash"``, ``"python"``,
    ``"javascript"``, ``"typescript"`` or ``"powershell"``."""
    p = _PARSERS.get(grammar)
    if p is None:
        import importlib

        # tree-sitter's own classes from its native module too: the package's ``__init__``
        # imports ``typing`` (~3 ms) for a Protocol lockcheck never uses
        ts = _binding("tree_sitter") or importlib.import_module("tree_sitter")
        package, function = _GRAMMARS.get(grammar, (f"tree_sitter_{grammar}", "language"))
        module = _binding(package) or importlib.import_module(package)
        language = ts.Language(getattr(module, function)())
        p = _PARSERS[grammar] = ts.Parser(language)
    return p


def _binding(package: str) -> Any:
    """The package's native ``_binding`` module, loaded without running the package's
    ``__init__`` (a grammar's imports ``importlib.resources`` for its query files, a third
    of a one-file run's analysis time); None if the package is not laid out so.  A later
    import of the package finds this module in ``sys.modules`` and uses it."""
    name = f"{package}._binding"
    if name in sys.modules:
        return sys.modules[name]
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.util.find_spec(package)  # finds, does not import, a top-level name
        if spec is None or not spec.submodule_search_locations:
            return None
        for where in spec.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(where, "_binding" + suffix)
                if os.path.isfile(path):
                    loader = importlib.machinery.ExtensionFileLoader(name, path)
                    found = importlib.util.spec_from_file_location(name, path, loader=loader)
                    if found is None:
                        return None
                    module = importlib.util.module_from_spec(found)
                    loader.exec_module(module)
                    return sys.modules.setdefault(name, module)  # the package's own import
    except (ImportError, OSError):
        return None
    return None


def source_bytes(text: str) -> bytes:
    """The bytes to give tree-sitter for ``text``: UTF-8 (undecodable bytes, kept as
    surrogates when the file was read, back to their byte), with code points above U+2FFFF
    replaced by a harmless 4-byte character (same offsets)."""
    try:
        src = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        src = text.encode("utf-8", "surrogatepass")
    if len(src) != len(text):
        src = _HIGH_PLANES.sub("\U0001f600".encode(), src)
    return src


class Offsets:
    """Byte offsets of the source bytes -> ``str`` offsets of ``text``, and ``str`` offsets
    -> (line, column), both 1-based, columns in characters."""

    def __init__(self, text: str, src: bytes) -> None:
        self.text = text
        self.ascii = len(src) == len(text)
        self._b2c: list[int] | None = None
        self._starts: list[int] | None = None

    def char(self, b: int) -> int:
        if self.ascii:
            return b
        m = self._b2c
        if m is None:
            m = []
            for i, ch in enumerate(self.text):
                o = ord(ch)
                n = 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
                if 0xDC80 <= o <= 0xDCFF:
                    n = 1  # an undecodable byte kept as a surrogate
                m.extend([i] * n)
            m.append(len(self.text))
            self._b2c = m
        return m[min(b, len(m) - 1)]

    @property
    def line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return self._starts

    def line_col(self, c: int) -> tuple[int, int]:
        starts = self.line_starts
        i = bisect.bisect_right(starts, c) - 1
        return i + 1, c - starts[i] + 1

    def span_of(self, s: int, e: int) -> Span:
        """The span of ``text[s:e]`` (``str`` offsets)."""
        l1, c1 = self.line_col(s)
        l2, c2 = self.line_col(e)
        return Span(l1, c1, l2, c2, s, e)

    def span(self, node: Any) -> Span:
        """The span of a tree-sitter node."""
        return self.span_of(self.char(node.start_byte), self.char(node.end_byte))

    def line_span(self, line: int) -> Span:
        """The whole of 1-based ``line`` (without its line break)."""
        starts = self.line_starts
        line = max(1, min(line, len(starts)))
        s = starts[line - 1]
        e = starts[line] if line < len(starts) else len(self.text)
        while e > s and self.text[e - 1] in "\r\n":
            e -= 1
        return Span(line, 1, line, e - s + 1, s, e)


def walk(node: Any) -> Iterator[Any]:
    """``node`` and its descendants, in source order, without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if n.child_count:
            stack.extend(reversed(n.children))


def first_error(root: Any) -> Any:
    """The first (in source order) ERROR or MISSING node under ``root``, or None.  Only the
    subtrees that hold an error are entered (``has_error``)."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        stack.extend(reversed([c for c in n.children if c.has_error or c.is_missing]))
    return None


def text_of(node: Any) -> str:
    """The source of a node as ``str`` (for identifiers and short tokens)."""
    return node.text.decode("utf-8", "surrogateescape")


def within(node: Any, container: Any) -> bool:
    """Whether ``node`` lies inside ``container`` (None contains nothing)."""
    return (
        container is not None
        and container.start_byte <= node.start_byte
        and node.end_byte <= container.end_byte
    )


def descendants(node: Any, *types: str) -> Iterator[Any]:
    """The nodes of ``node``'s subtree (itself included), iteratively, of ``types`` if given."""
    for n in walk(node):
        if not types or n.type in types:
            yield n
