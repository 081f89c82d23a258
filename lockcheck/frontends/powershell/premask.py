"""Stage 1 helper: equal-length masking of valid PowerShell that tree-sitter-powershell 0.26
rejects, so that the rest of the file parses (every byte keeps its offset, so spans, fixes
and the text the stages read stay those of the file).

Only the lines an ERROR or MISSING node covers are masked, and a masked parse is kept only
when it leaves fewer bytes in error than the one before:

* a variable starting a bare path argument (``Import-Module $PSScriptRoot\\..\\x.psd1``):
  its ``$`` becomes ``_`` so that the grammar reads one bare word (the stages read the
  original text, ``$PSScriptRoot\\..\\x.psd1``, and expand it like the shell does);
* a comma list of bare words (``-Property Name, Id``, ``select A, B``): the commas become
  spaces (positional words instead of one array: no lock command takes such a list);
* a UTF-8 byte-order mark kept in the text: spaces.

The rest (``class``/``enum`` bodies the grammar half-reads, the ternary, ``??``, nested
generic types) stays as it is."""

from __future__ import annotations

import re

from ...hints import Any

ROUNDS = 4
_BOM = "\ufeff".encode()
# `$name\x`, `${name}\x`, `$env:X\x` after a blank or `(`: an argument-mode bare word
_VARPATH = re.compile(rb"(?<=[ \t(])\$(?=(?:\{[^}\n]+\}|[A-Za-z_][\w:]*)[\\/][\w.*$\\-])")
# a comma between two bare words
_COMMA = re.compile(rb"(?<=[A-Za-z0-9_*\-])[ \t]*,(?=[ \t]*[A-Za-z_*])")


def error_ranges(root: Any) -> list[tuple[int, int]]:
    """(start, end) bytes of the ERROR and MISSING nodes, without recursion."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            out.append((n.start_byte, max(n.end_byte, n.start_byte + 1)))
        elif n.has_error:
            stack.extend(n.children)
    return sorted(out)


def error_bytes(ranges: list[tuple[int, int]]) -> int:
    total = last = 0
    for s, e in ranges:
        s = max(s, last)
        if e > s:
            total += e - s
            last = e
    return total


def _lines(src: bytes, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The whole lines the ranges touch, merged."""
    out: list[tuple[int, int]] = []
    for s, e in ranges:
        ls = src.rfind(b"\n", 0, s) + 1
        le = src.find(b"\n", max(e - 1, s))
        le = len(src) if le < 0 else le
        if out and ls <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], le))
        else:
            out.append((ls, le))
    return out


def mask(src: bytes, ranges: list[tuple[int, int]]) -> bytes:
    """``src`` with the constructs above masked on the lines ``ranges`` touch."""
    buf = bytearray(src)
    if buf.startswith(_BOM):
        buf[: len(_BOM)] = b" " * len(_BOM)
    for ls, le in _lines(src, ranges):
        line = src[ls:le]
        if line.lstrip().startswith(b"#"):
            continue
        for m in _VARPATH.finditer(line):
            if not _quoted(line, m.start()):
                buf[ls + m.start()] = ord("_")
        for m in _COMMA.finditer(line):
            if not _quoted(line, m.start()):
                buf[ls + m.end() - 1] = ord(" ")
    return bytes(buf)


def _quoted(line: bytes, at: int) -> bool:
    """``at`` lies inside a string or a comment on its line (a rough count of quotes)."""
    head = line[:at]
    if b"#" in head:
        return True
    return (head.count(b'"') - head.count(b'`"')) % 2 == 1 or head.count(b"'") % 2 == 1


def parse(parser: Any, src: bytes) -> tuple[bytes, Any]:
    """(the bytes parsed, the root node): ``src`` itself, or its best masking."""
    root = parser.parse(src).root_node
    if not root.has_error:
        return src, root
    best, best_root = src, root
    ranges = error_ranges(root)
    cost = error_bytes(ranges)
    cur = src
    for _ in range(ROUNDS):
        nxt = mask(cur, ranges)
        if nxt == cur:
            break
        root = parser.parse(nxt).root_node
        ranges = error_ranges(root)
        if error_bytes(ranges) >= cost:
            break
        best, best_root, cost, cur = nxt, root, error_bytes(ranges), nxt
        if not ranges:
            break
    return best, best_root
