"""Stage 3 helpers: how a failed create is handled when the handler is not a plain exit.

A ``catch`` (or a ``trap`` of the same scope) inside a ``while``/``do``/``for`` loop whose
success leaves the loop (``break``, ``return``, ``exit``, or a flag the loop condition reads)
and whose failure goes round again (a sleep, a counter, ``continue``) is a retry loop: the
create is a lock (RULES, "Deciding what is a lock").  A loop that can run out (a deadline,
a count) has a timeout path, the busy branch: what follows the loop when success returns
or exits from inside it, else the branch of the first ``if`` after it that finds the flag
success sets unset.  ``if (New-Item ...)`` and
``if ($null -eq (New-Item ... -ErrorAction SilentlyContinue))`` use the item ``New-Item``
returns (``$null`` on failure) as the test: the branch taken on ``$null`` is the busy one."""

from __future__ import annotations

import re

from ...hints import Any
from . import syntax
from .syntax import text

LOOPS = ("while_statement", "do_statement", "for_statement", "foreach_statement")
SLEEPS = {"start-sleep", "sleep"}
LEAVES = ("break", "return", "exit")
# values that differ on each pass: a random or temporary name, a GUID, the time
_FRESH = re.compile(r"random|guid|tempfilename|get-date|ticks|now\b", re.I)
_NULL_EQ = re.compile(r"\$null\s*-(?:c|i)?eq\b|-(?:c|i)?eq\s*\$null\b", re.I)


def loop_of(node: Any) -> Any:
    """The innermost loop around ``node`` in its function or script block."""
    for a in syntax.ancestors(node):
        if a.type in LOOPS:
            return a
        if a.type in syntax.SCOPES:
            return None
    return None


def trap_of(node: Any) -> Any:
    """The ``trap`` that handles a terminating error of ``node``: one in the statement list of
    an enclosing block of the same function or script (a trap covers its whole scope)."""
    for a in syntax.ancestors(node):
        if a.type == "statement_list":
            for st in a.named_children:
                if st.type == "trap_statement" and not syntax.within(node, st):
                    return st
        if a.type in syntax.SCOPES:
            return None
    return None


def _inner(n: Any, top: Any, types: tuple[str, ...]) -> bool:
    """A node of ``types`` lies between ``n`` and ``top`` (exclusive)."""
    for a in syntax.ancestors(n):
        if a == top:
            return False
        if a.type in types:
            return True
    return False


def leaves_loop(block: Any, loop: Any, after: Any = None) -> bool:
    """``block`` (run on success) leaves ``loop``: a ``break`` of that loop, a ``return`` or
    ``exit``, or an assignment to a variable the loop condition reads."""
    if block is None:
        return False
    for n in syntax.descendants(block, "flow_control_statement"):
        if after is not None and n.start_byte < after.end_byte:
            continue
        word = text(n.children[0]).lower()
        if word not in LEAVES or _inner(n, block, syntax.SCOPES):
            continue
        if word == "break" and _inner(n, loop, LOOPS + ("switch_statement",)):
            continue
        return True
    cond = next((c for c in loop.named_children if c.type == "while_condition"), None)
    if cond is None:
        return False
    flags = {syntax.var_name(v) for v in syntax.descendants(cond, "variable")} - {None, "true"}
    for a in syntax.descendants(block, "assignment_expression"):
        if syntax.var_name(a.named_children[0]) in flags:
            return True
    return False


def goes_round(loop: Any, handler: Any) -> bool:
    """The failure path stays in ``loop`` and tries again: the handler does not ``break``
    out of it, and the loop sleeps, counts or ``continue``s."""
    for n in syntax.descendants(handler, "flow_control_statement"):
        if text(n.children[0]).lower() == "break" and not _inner(n, loop, LOOPS):
            return False
    for n in syntax.descendants(loop):
        if n.type == "command" and syntax.command_name(n) in SLEEPS:
            return True
        if n.type == "flow_control_statement" and text(n.children[0]).lower() == "continue":
            return True
        if n.type == "assignment_expression" and re.search(r"[-+]=", text(n)[:80]):
            return True
        if n.type in ("pre_increment_expression", "post_increment_expression"):
            return True
        if n.type in ("pre_decrement_expression", "post_decrement_expression"):
            return True
    return False


def per_attempt(loop: Any, create: Any) -> bool:
    """The create names something new on each pass (a ``foreach``/``for`` variable, a
    counter, a random name, a GUID or the time, or a variable computed from one): trying
    candidates, not waiting for one name."""
    names: set[str | None] = set()
    if loop.type == "foreach_statement":
        names |= {syntax.var_name(c) for c in loop.named_children if c.type == "variable"}
    for c in loop.named_children:
        if c.type in ("for_initializer", "for_iterator"):
            names |= {syntax.var_name(v) for v in syntax.descendants(c, "variable")}
    for n in syntax.descendants(loop):
        if n.type.endswith(("increment_expression", "decrement_expression")):
            names |= {syntax.var_name(v) for v in syntax.descendants(n, "variable")}
        elif n.type == "assignment_expression" and re.search(r"[-+]=", text(n)[:80]):
            names.add(syntax.var_name(n.named_children[0]))
    assigned = [
        (syntax.var_name(a.named_children[0]), text(a.named_children[-1]))
        for a in syntax.descendants(loop, "assignment_expression")
    ]
    names |= {n for n, value in assigned if _FRESH.search(value)}
    names.discard(None)
    for _ in range(3):  # names computed from those
        names |= {n for n, value in assigned if _mentions(value, names)}
    return _mentions(text(create), names)


def _mentions(src: str, names: set[str | None]) -> bool:
    low = src.lower()
    return any(n and re.search(r"\$\{?" + re.escape(n) + r"\b", low) for n in names)


def retry_loop(create: Any, handler: Any, success: Any) -> bool:
    """``create`` fails into ``handler`` (a catch or trap, or the failure branch of an
    ``if``) inside a loop that ``success`` leaves and the failure goes round."""
    loop = loop_of(create)
    if loop is None or per_attempt(loop, create):
        return False
    return leaves_loop(success, loop, create) and goes_round(loop, handler or loop)


def endless(loop: Any) -> bool:
    """The loop ends only from inside: ``while ($true)``, ``do { } until ($false)``,
    ``for (;;)``."""
    if loop.type == "foreach_statement":
        return False
    cond = next(
        (c for c in loop.named_children if c.type in ("while_condition", "for_condition")), None
    )
    if cond is None:
        return loop.type == "for_statement"
    t = text(cond).strip().lower()
    until = any(c.type == "until" for c in loop.children)
    return t in ("$false", "0") if until else t in ("$true", "1")


def success_leaves(success: Any, create: Any) -> tuple[bool, set[str]]:
    """(success returns or exits from inside the loop, the variables it sets): read in the
    block run on success, after ``create``."""
    leaves = False
    flags: set[str] = set()
    for n in syntax.descendants(success, "flow_control_statement", "assignment_expression"):
        if n.start_byte < create.end_byte or _inner(n, success, syntax.SCOPES):
            continue
        if n.type == "flow_control_statement":
            leaves = leaves or text(n.children[0]).lower() in ("return", "exit")
        else:
            name = syntax.var_name(n.named_children[0])
            if name:
                flags.add(name)
    return leaves, flags


def after(loop: Any) -> list[Any]:
    """The statements that follow ``loop`` in its statement list."""
    lst = loop.parent
    if lst is None or lst.type != "statement_list":
        return []
    return [
        c
        for c in lst.named_children
        if c.start_byte >= loop.end_byte and c.type not in ("comment", "empty_statement")
    ]


def null_tested(node: Any, top: Any) -> bool:
    """``$null -eq (New-Item ...)`` (or ``(...) -eq $null``) between ``node`` and ``top``:
    the test is true when the create failed."""
    for a in syntax.ancestors(node):
        if a == top:
            return False
        if a.type == "comparison_expression" and any(
            c.type == "comparison_operator" for c in a.children
        ):
            return _NULL_EQ.search(text(a)) is not None
    return False
