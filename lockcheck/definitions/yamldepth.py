"""How deeply a YAML text nests its block collections, counted from indentation before
tree-sitter reads it.

tree-sitter-yaml keeps one entry per open block collection (a mapping or a sequence, each at
its column) and overflows a fixed buffer at about 254 of them: the process dies (SIGSEGV or
SIGABRT), whatever its stack size.  Flow collections (``[[...]]``, ``{a: {...}}``) do not
count (measured to 3,000 levels).  A text deeper than :data:`MAX_DEPTH` is not parsed: its
reader reports the line where it gets too deep.
"""

from __future__ import annotations

import re

MAX_DEPTH = 200  # the parser dies at ~254 open collections; the count below is approximate
_KEY = re.compile(r"""(?:[^\s#'"\[{][^#]*?|"[^"]*"|'[^']*')\s*:(?:\s|$)""")
_BLOCK_SCALAR = re.compile(r"(?:^|[\s:-])[|>][-+0-9]*\s*(?:#.*)?$")
# The open collections sit at increasing columns, at most two (a sequence at its parent key's
# column) at each, none right of the line's lead of spaces and markers: a text whose leads are
# all shorter than limit / 2 cannot be too deep (one C-level search instead of a line loop).
_LEAD = "^[ ?-]{%d}"


def too_deep(text: str, limit: int = MAX_DEPTH) -> tuple[int, int] | None:
    """(line, column), 1-based, of the first place where more than ``limit`` block
    collections are open; None when the text stays within it.  Each line's indentation
    closes the collections right of it; each ``- ``/``? `` marker opens a sequence and a
    ``key:`` a mapping at its column (a sequence may sit at its parent key's column).
    Comments and the lines of a block scalar (``|``, ``>``) are skipped."""
    if not re.search(_LEAD % (limit // 2), text, re.M):
        return None
    stack: list[tuple[int, str]] = []  # (column, "seq" | "map")
    scalar_indent = -1  # inside a block scalar: lines indented more than this
    for no, line in enumerate(text.split("\n"), 1):
        body = line.lstrip(" ")
        col = len(line) - len(body)
        if scalar_indent >= 0:
            if not body.strip() or col > scalar_indent:
                continue
            scalar_indent = -1
        if not body.strip() or body.startswith("#") or body.startswith(("---", "...")):
            continue
        while stack and stack[-1][0] > col:
            stack.pop()
        start = col
        while body:
            if body[:2] in ("- ", "? ") or body in ("-", "?"):
                kind = "seq"
            elif _KEY.match(body):
                kind = "map"
            else:
                break
            _open(stack, col, kind)
            if len(stack) > limit:
                return no, col + 1
            if kind == "map":
                break
            rest = body[1:].lstrip(" ")
            col += len(body) - len(rest)
            body = rest
        if _BLOCK_SCALAR.search(body):
            scalar_indent = start
    return None


def _open(stack: list[tuple[int, str]], col: int, kind: str) -> None:
    """A collection of ``kind`` at ``col``: a new one unless it continues the open one."""
    while stack and stack[-1][0] == col and stack[-1][1] != kind:
        if len(stack) > 1 and stack[-2][0] == col:  # `key:` after a compact sequence
            stack.pop()
            continue
        break
    if not stack or stack[-1] != (col, kind):
        stack.append((col, kind))
