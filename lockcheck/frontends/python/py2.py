"""Python 2 code: which statements python3 cannot read, and whether the file asks for python2.

tree-sitter-python reads Python 2 and 3 alike: a print statement is a ``print_statement``,
``except (OSError, IOError), e:`` an ``except_clause`` with two values; backticks, ``<>`` and
``0777`` parse without an error node, so their tokens tell them apart.  The lowering pass
(:mod:`.lower`) asks :func:`py2_evidence` of the node types below and keeps the first hit.
"""

from __future__ import annotations

from ... import lazyre
from ...hints import Any

PY2_TYPES = frozenset(
    {"print_statement", "exec_statement", "except_clause", "raise_statement", "string", "integer"}
)
_OCTAL = lazyre.compile(rb"0[0-9]+\Z")
_SHEBANG_PY2 = lazyre.compile(r"#![^\n]*\bpython2(?:\.\d+)?\b")


def py2_evidence(n: Any, t: str) -> str | None:
    """What makes the tree-sitter node ``n`` (of type ``t``) Python 2 only, or None."""
    if t == "print_statement":
        return "a print statement"
    if t == "exec_statement":
        return "an exec statement"
    if t == "except_clause":
        values = [c for c in n.children if c.type == ","]
        return "`except E, e:`" if values else None
    if t == "raise_statement":
        kids = n.named_children
        return '`raise E, "why"`' if kids and kids[0].type == "expression_list" else None
    if t == "integer":
        v = n.text
        if _OCTAL.match(v) and v.strip(b"0"):
            return f"the octal literal `{v.decode()}`"
        if v[-1:] in (b"l", b"L") and v[:1].isdigit() and not v.lower().startswith(b"0x"):
            return f"the long literal `{v.decode()}`"
        if v[-1:] in (b"l", b"L") and v.lower().startswith(b"0x"):
            return f"the long literal `{v.decode()}`"
        return None
    if t == "string":
        start = n.children[0] if n.child_count else None
        if start is None or start.type != "string_start":
            return None
        opener = start.text.lower()
        if opener == b"`":
            return "backticks"
        prefix = opener.rstrip(b"'\"")
        if b"u" in prefix and b"r" in prefix:
            return f"the string prefix `{start.text.decode().rstrip(chr(39) + chr(34))}`"
    return None


def asks_for_python2(text: str) -> bool:
    """The shebang names python2 (``#!/usr/bin/python2``, ``#!/usr/bin/env python2.7``)."""
    if not text.startswith(("#!", "\ufeff#!")):
        return False
    first = text.split("\n", 1)[0]
    return _SHEBANG_PY2.match(first.lstrip("\ufeff")) is not None


def message(what: str) -> str:
    return f"Python 2 code ({what}): python3 cannot run this file"
