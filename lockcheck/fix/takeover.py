"""Take-overs replaced whole by the flock rewrite (shell), for :mod:`lockcheck.fix.suggest`.

A take-over is what a script does when it finds its lock taken: read the stored PID, test it,
and when the holder "looks dead" remove the lock and create it again::

    if ! mkdir "$LOCK_DIR" 2>/dev/null; then
        holder=$(cat "$LOCK_DIR/pid" 2>/dev/null)
        if kill -0 "$holder" 2>/dev/null; then
            echo "still running" >&2
            exit 75
        fi
        rm -rf "$LOCK_DIR"
        mkdir "$LOCK_DIR" || exit 75
    fi

With a flock, a failed ``flock -n`` means the holder is alive: the "holder alive" branch is the
busy branch, and the rest (the PID read, the removal, the second create) goes.  The rewrite
replaces the body of the outer ``if`` with that branch, dedented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import Acquire, Edit
from ..paths import same_path
from .apply import apply_edits

# commands a take-over branch may hold besides its parts: messages and waits
_TALK = ("echo", "printf", "logger", "sleep", ":", "true")


@dataclass(frozen=True)
class Takeover:
    start: int  # the outer ``if`` (its first line) ...
    end: int  # ... to just past its ``fi`` line
    body: tuple[int, int]  # the outer body's lines, replaced
    alive: tuple[int, int]  # the lines of the "holder alive" branch, kept
    width: int  # how far those lines are dedented


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_end(text: str, pos: int) -> int:
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


def _indent(text: str, pos: int) -> int:
    s = _line_start(text, pos)
    return len(text[s:]) - len(text[s:].lstrip(" \t"))


def _within(node, span) -> bool:
    return node.start_byte <= span.start and span.end <= node.end_byte


def _branches(node):
    """(condition end, body statements, ``fi`` node) of an ``if`` without elif/else."""
    kids = node.children
    if any(k.type in ("elif_clause", "else_clause") for k in kids) or kids[-1].type != "fi":
        return None
    then = next((i for i, k in enumerate(kids) if k.type == "then"), None)
    if then is None:
        return None
    body = [k for k in kids[then + 1 : -1] if k.type != "comment"]
    return kids[then].start_byte, body, kids[-1]


def find(sh, acq: Acquire) -> Takeover | None:
    """The take-over around ``acq`` (``if ! <acq>; then <take-over>; fi``), else None."""
    text, facts = sh.text, sh.facts
    busy = acq.busy
    if acq.path is None or busy is None or not busy.ends_run or not facts.liveness:
        return None  # no take-over without a test of the holder
    outer = sh._enclosing_if(acq.span)
    got = _branches(outer) if outer is not None else None
    if got is None:
        return None
    cond_end, body, fi = got
    if not body or acq.span.end > cond_end:
        return None  # the acquire is not the condition of this `if`
    alive = None
    for st in body:
        if st.type == "if_statement" and _within(st, busy.span):
            inner = _branches(st)
            if inner is None or not inner[1] or alive is not None:
                return None
            icond_end = inner[0]
            if not any(
                st.start_byte <= c.span.start and c.span.end <= icond_end for c in facts.liveness
            ):
                return None  # the busy exit is not behind a test of the holder
            alive = (st, inner)
            continue
        src = text[st.start_byte : st.end_byte]
        if st.type == "variable_assignment" and re.match(r"\w+=\$\(\s*cat\b", src):
            continue  # the stored PID read
        if any(_within(st, r.span) and same_path(r.path, acq.path) for r in facts.removals) or any(
            _within(st, a.span) and same_path(a.path, acq.path) for a in facts.acquires
        ):
            continue  # the removal of the lock, the second create
        word = re.match(r"[\w:.-]+", src)
        if not word or word.group(0) not in _TALK:
            return None
    if alive is None:
        return None
    st, (_c, ibody, ifi) = alive
    a, b = _line_start(text, body[0].start_byte), _line_start(text, fi.start_byte)
    ia, ib = _line_start(text, ibody[0].start_byte), _line_start(text, ifi.start_byte)
    if text[b : fi.start_byte].strip() or text[ib : ifi.start_byte].strip():
        return None  # `fi` shares a line with the body
    width = _indent(text, ibody[0].start_byte) - _indent(text, body[0].start_byte)
    if width < 0:
        return None
    for line in text[ia:ib].splitlines():
        if line.strip() and line[:width].strip():
            return None  # a line indented less than the branch (a here-doc, a string)
    start, end = _line_start(text, outer.start_byte), _line_end(text, fi.end_byte)
    return Takeover(start, end, (a, b), (ia, ib), width)


def replace_body(text: str, tk: Takeover, edits: list[Edit]) -> list[Edit]:
    """``edits`` with the take-over's body replaced by its "holder alive" branch: the edits
    inside that branch (the busy record, the skip code) are applied to it, the others inside
    the body dropped (what they changed goes with the body)."""
    a, b = tk.body
    ia, ib = tk.alive
    inner = sorted((e for e in edits if ia <= e.start and e.end <= ib), key=lambda e: e.start)
    shifted = [Edit(e.start - ia, e.end - ia, e.content) for e in inner]
    branch = apply_edits(text[ia:ib], shifted)
    kept = "".join(
        line[tk.width :] if line.strip() else line for line in branch.splitlines(keepends=True)
    )
    out = [
        e for e in edits if not (a <= e.start and e.end <= b) and not (e.start < b and a < e.end)
    ]
    return [*out, Edit(a, b, kept)]


def covers(tk: Takeover, span) -> bool:
    return span is not None and tk.start <= span.start and span.end <= tk.end
