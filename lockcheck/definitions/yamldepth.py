"""How deeply a YAML text nests its collections, counted from indentation and brackets
before tree-sitter reads it.

tree-sitter-yaml keeps one entry per open block collection (a mapping or a sequence, each at
its column) and overflows a fixed buffer at about 254 of them: the process dies (SIGSEGV or
SIGABRT), whatever its stack size.  Flow collections (``[[...]]``, ``{a: {...}}``) it parses
to any depth (measured to 100,000), but the tree reader (:mod:`.yamltree`) follows each
level with a few Python frames and runs out of them at about 300.  A text that opens more
than :data:`MAX_DEPTH` collections, block and flow together, is not parsed: its reader
reports the line where it gets too deep.
"""

from __future__ import annotations

import re

MAX_DEPTH = 200  # the parser dies at ~254 open block collections, the reader at ~300 in all
_KEY = re.compile(r"""(?:[^\s#'"\[{][^#]*?|"[^"]*"|'[^']*')\s*:(?:\s|$)""")
_BLOCK_SCALAR = re.compile(r"(?:^|[\s:-])[|>][-+0-9]*\s*(?:#.*)?$")
# The open block collections sit at increasing columns, at most two (a sequence at its parent
# key's column) at each, none right of the line's lead of spaces and markers; the flow ones are
# open brackets.  A text whose leads stay under a quarter of the limit and whose brackets never
# nest half the limit deep cannot be too deep: C-level scans instead of the line loop, for
# nearly every real file (a workflow's many `${{ }}` close as they open).
_LEAD = "^[ ?-]{%d}"
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_ONE_KIND = str.maketrans("{}", "[]")
_PROPERTIES = re.compile(r"(?:[&!]\S*\s+)+")


def too_deep(text: str, limit: int = MAX_DEPTH) -> tuple[int, int] | None:
    """(line, column), 1-based, of the first place where more than ``limit`` collections
    are open; None when the text stays within it.  Each line's indentation closes the block
    collections right of it; each ``- ``/``? `` marker opens a sequence and a ``key:`` a
    mapping at its column (a sequence may sit at its parent key's column); a value that
    starts with ``[`` or ``{`` opens flow collections until its brackets close, over as many
    lines as it takes.  Comments, quoted text and the lines of a block scalar (``|``, ``>``)
    are skipped."""
    if not re.search(_LEAD % (limit // 4), text, re.M) and _bracket_depth(text, limit) < limit // 2:
        return None
    stack: list[tuple[int, str]] = []  # (column, "seq" | "map")
    flow = 0  # flow collections open (a flow value may run over several lines)
    scalar_indent = -1  # inside a block scalar: lines indented more than this
    for no, line in enumerate(text.split("\n"), 1):
        if flow:
            flow, at = _brackets(line, 0, flow, limit - len(stack))
            if at is not None:
                return no, at + 1
            continue
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
            elif key := _KEY.match(body):
                kind = "map"
            else:
                break
            _open(stack, col, kind)
            if len(stack) > limit:
                return no, col + 1
            if kind == "map":
                rest = body[key.end() :].lstrip(" ")
                col += len(body) - len(rest)
                body = rest
                break
            rest = body[1:].lstrip(" ")
            col += len(body) - len(rest)
            body = rest
        props = _PROPERTIES.match(body)  # `&anchor !tag` before the value
        if props:
            col += props.end()
            body = body[props.end() :]
        if body[:1] in ("[", "{"):  # a flow collection as the value
            flow, at = _brackets(line, col, 0, limit - len(stack))
            if at is not None:
                return no, at + 1
        elif _BLOCK_SCALAR.search(body):
            scalar_indent = start
    return None


def _bracket_depth(text: str, cap: int) -> int:
    """At least how deep the text's brackets nest, wherever they are (in quotes and comments
    too: only a quoted closing bracket inside a flow collection counts lower than the flow).
    C-level string work: each round drops the innermost ``[]``/``{}`` pairs, which lowers the
    deepest nesting by one at most; what no round can drop (closers, then openers) adds its
    openers."""
    b = _NOT_BRACKET.sub("", text).translate(_ONE_KIND)
    rounds = 0
    while b and rounds < cap:
        dropped = b.replace("[]", "")
        if dropped == b:
            break
        b, rounds = dropped, rounds + 1
    return rounds + b.count("[")


def _brackets(line: str, start: int, depth: int, room: int) -> tuple[int, int | None]:
    """The flow depth after ``line[start:]`` (``depth`` before it), and the column (0-based)
    of the bracket that opens more than ``room`` collections, if one does.  Quoted text and
    a comment (``#`` after a space) hold no brackets."""
    quote = ""
    prev = " " if start == 0 else line[start - 1]
    for i in range(start, len(line)):
        c = line[i]
        if quote:
            if c == quote:
                quote = ""
        elif c in "[{":
            depth += 1
            if depth > room:
                return depth, i
        elif c in "]}":
            depth = max(0, depth - 1)
        elif c in "'\"":
            quote = c
        elif c == "#" and prev in " \t":
            break
        prev = c
    return depth, None


def _open(stack: list[tuple[int, str]], col: int, kind: str) -> None:
    """A collection of ``kind`` at ``col``: a new one unless it continues the open one."""
    while stack and stack[-1][0] == col and stack[-1][1] != kind:
        if len(stack) > 1 and stack[-2][0] == col:  # `key:` after a compact sequence
            stack.pop()
            continue
        break
    if not stack or stack[-1] != (col, kind):
        stack.append((col, kind))
