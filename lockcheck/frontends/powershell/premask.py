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
* PowerShell 7 operators the grammar lacks, each as one it has: the ternary ``c ? a : b``
  becomes ``c + a + b`` and ``a ?? b`` becomes ``a +  b`` (the stages read the operators'
  own text: a ternary is unknown, ``??`` a value with a default), ``$x ??= v`` becomes
  ``$x +=  v`` (a binding of the default);
* an upper-case multiplier suffix (``10MB``, ``1KB``): lower case (the grammar knows only
  ``10mb``; PowerShell reads both alike);
* what a ``class``/``enum`` header carries that the grammar rejects: an attribute before
  ``enum`` (``[Flags()]``), an enum's underlying type (``enum E : byte``), a constructor's
  ``: base(...)`` call: spaces.

Two maskings apply to the whole file before the first parse, because the grammar reads them
wrongly without an error (a typographic string becomes a command name):

* the typographic quotes PowerShell takes for quotes (``“ ” „`` and ``‘ ’``; scripts pasted
  from a web page or a word processor have them): each three-byte quote becomes its ASCII
  quote and two blanks, on the outer side of the string (``"  `` for an opening one, ``  "``
  for a closing one), so that the string node covers the quotes' bytes;
* the dashes PowerShell takes for ``-`` before a parameter or operator name (``–Force``,
  ``—eq``: en dash, em dash, horizontal bar): two blanks and ``-``, the name unmoved
  (:func:`.syntax.text` reads such a node's first character as ``-``); and the explicitly
  case-insensitive or case-sensitive ``-iin``/``-inotin``/``-cin``/``-cnotin`` the grammar
  lacks become ``-in``/``-notin`` and a blank.

``class``/``enum`` bodies, generic type names (``[List[string]]``), here-strings and
``${braced}`` names parse as they are."""

from __future__ import annotations

import re

from ...hints import Any

ROUNDS = 4
_BOM = "\ufeff".encode()
# `$name\x`, `${name}\x`, `$env:X\x` after a blank or `(`: an argument-mode bare word
_VARPATH = re.compile(rb"(?<=[ \t(])\$(?=(?:\{[^}\n]+\}|[A-Za-z_][\w:]*)[\\/][\w.*$\\-])")
# a comma between two bare words
_COMMA = re.compile(rb"(?<=[A-Za-z0-9_*\-])[ \t]*,(?=[ \t]*[A-Za-z_*])")
# `a ?? b`, `$x ??= v`: PowerShell needs the blank before `??` (`$x??` is a variable name)
_COALESCE = re.compile(rb"(?<=[ \t])\?\?(=?)(?=[ \t])")
# the ternary's `?` (not the Where-Object alias after `|`) and its `:`, blank on both sides
_QUESTION = re.compile(rb"(?<=[ \t])\?(?=[ \t])")
_COLON = re.compile(rb"(?<=[ \t]):(?=[ \t])")
_MULTIPLIER = re.compile(rb"(?<![\w$.])\d+(?:\.\d+)?(?=[KMGTP][Bb]\b|[kmgtp]B\b)", re.I)
_ENUM_ATTR = re.compile(rb"^[ \t]*(\[[A-Za-z.]+\([^()\n]*\)\][ \t]*)+(?=enum\b)", re.I)
_ENUM_BASE = re.compile(rb"\benum[ \t]+\w+([ \t]*:[ \t]*[\w.]+)(?=[ \t]*\{|[ \t]*$)", re.I)
_BASE_CALL = re.compile(rb"\)([ \t]*:[ \t]*base[ \t]*\([^()\n]*\))(?=[ \t]*\{)", re.I)


_OPEN_QUOTES = re.compile(rb"\xe2\x80[\x9c\x9e]")  # “ „
_CLOSE_QUOTE = b"\xe2\x80\x9d"  # ”
_SINGLE_OPEN, _SINGLE_CLOSE = b"\xe2\x80\x98", b"\xe2\x80\x99"  # ‘ ’
_DASH = re.compile(rb"(?:(?<=[\s(,;{|=])|^)\xe2\x80[\x93\x94\x95](?=[A-Za-z])", re.M)
DASHES = (b"\xe2\x80\x93", b"\xe2\x80\x94", b"\xe2\x80\x95")
_CASE_IN = re.compile(rb"(?<=[\s)])-[ic](not)?in(?=[\s(@$])", re.I)


def typography(src: bytes) -> bytes:
    """``src`` with typographic quotes and dashes, and ``-iin``/``-cin``, masked (see above)."""
    if b"\xe2\x80" not in src and not _CASE_IN.search(src):
        return src
    out = _OPEN_QUOTES.sub(b'"  ', src)
    out = out.replace(_CLOSE_QUOTE, b'  "').replace(_SINGLE_OPEN, b"'  ")
    out = out.replace(_SINGLE_CLOSE, b"  '")
    out = _DASH.sub(b"  -", out)
    return _CASE_IN.sub(lambda m: b"-notin " if m.group(1) else b"-in ", out)


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
        _operators(buf, ls, line)
        for m in _MULTIPLIER.finditer(line):
            if not _quoted(line, m.start()):
                e = ls + m.end()
                buf[e : e + 2] = buf[e : e + 2].lower()
        for rx, group in ((_ENUM_ATTR, 0), (_ENUM_BASE, 1), (_BASE_CALL, 1)):
            m = rx.search(line)
            if m is not None and not _quoted(line, m.start(group)):
                buf[ls + m.start(group) : ls + m.end(group)] = b" " * (
                    m.end(group) - m.start(group)
                )
    return bytes(buf)


def _operators(buf: bytearray, ls: int, line: bytes) -> None:
    """``??``/``??=`` and the ternary on one line, as ``+``/``+=`` (see the module text)."""
    for m in _COALESCE.finditer(line):
        if not _quoted(line, m.start()):
            buf[ls + m.start() : ls + m.end()] = b"+= " if m.group(1) else b"+ "
    for m in _QUESTION.finditer(line):
        before = line[: m.start()].rstrip()
        if not before or before.endswith((b"|", b"(", b"{", b";")) or _quoted(line, m.start()):
            continue  # `| ? { ... }` is Where-Object
        colon = _COLON.search(line, m.end())
        if colon is None or _quoted(line, colon.start()):
            continue
        buf[ls + m.start()] = buf[ls + colon.start()] = ord("+")


def _quoted(line: bytes, at: int) -> bool:
    """``at`` lies inside a string or a comment on its line (a rough count of quotes)."""
    head = line[:at]
    if b"#" in head:
        return True
    return (head.count(b'"') - head.count(b'`"')) % 2 == 1 or head.count(b"'") % 2 == 1


def parse(parser: Any, src: bytes) -> tuple[bytes, Any]:
    """(the bytes parsed, the root node): ``src`` itself, or its best masking."""
    src = typography(src)
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
