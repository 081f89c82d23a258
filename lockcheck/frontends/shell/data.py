"""The small data classes and node helpers every stage of the shell frontend uses: how a
command's status is used (:class:`Pos`, :class:`Branch`), function frames, open descriptors,
trap events, the read-only view of the statements that follow (:class:`Rest`), and the
command words several stages share.
"""

from __future__ import annotations

import re

from ...model import Part, PartKind, PathExpr, Span
from ...records import field, record

STATEMENT_SKIP = {"comment", "heredoc_body", "heredoc_start", "heredoc_end"}

REMOVERS = {"rm", "rmdir", "unlink"}

# a file's age read: `stat -c %Y`, `find -mmin`, `date -r`, `-ot`/`-nt` (a `stat` then `%i`
# later on its line is an inode re-check instead: only the line's first `stat` is tried)
AGE_TEST = re.compile(
    r"(?m)^(?:(?!stat\b)[^\n])*stat\b[^\n]*%[YZm]|-mmin|-mtime|-amin|-newer|date\s+-r|-ot\b|-nt\b"
)

SIGNALS_EXIT = {"EXIT", "0", "SIGEXIT"}


def _covers(removed: str, lock: str) -> bool:
    """Removing ``removed`` removes ``lock`` (the same name, or a directory holding it)."""
    return removed == lock or (bool(removed) and lock.startswith(removed.rstrip("/") + "/"))


def _txt(node) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _merge(parts: list[Part]) -> tuple[Part, ...]:
    out: list[Part] = []
    for p in parts:
        if (
            p.kind is PartKind.LIT
            and out
            and out[-1].kind is PartKind.LIT
            and out[-1].default is None
        ):
            out[-1] = Part(PartKind.LIT, out[-1].value + p.value)
        elif p.kind is PartKind.LIT and not p.value:
            continue
        else:
            out.append(p)
    return tuple(out)


def _unescape_word(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


class _Joined:
    """Adjacent destination pieces that tree-sitter-bash splits (`~/a/"$(x)"-$1.lock`)."""

    type = "concatenation"
    is_named = True

    def __init__(self, a, b, src: bytes) -> None:
        first = (
            a.children
            if isinstance(a, _Joined)
            else list(a.children)
            if a.type == "concatenation"
            else [a]
        )
        self.children = self.named_children = first + [b]
        self.start_byte = a.start_byte
        self.end_byte = b.end_byte
        self.text = src[self.start_byte : self.end_byte]


class _NamesSet(set):
    """A set of names that also lists them in the order they were first added."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[str] = []

    def add(self, name: str) -> None:
        if name not in self:
            self.added.append(name)
            super().add(name)


class Rest:
    """A read-only view of the statements that follow (no copying: walks stay linear)."""

    __slots__ = ("head", "base", "start")

    def __init__(self, base=(), start: int = 0, head: tuple = ()) -> None:
        if isinstance(base, Rest):
            head = head + base.head
            base, start = base.base, base.start + start
        self.head = tuple(head)
        self.base = base
        self.start = start

    def __len__(self) -> int:
        return len(self.head) + max(0, len(self.base) - self.start)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self):
        yield from self.head
        for i in range(self.start, len(self.base)):
            yield self.base[i]

    def __getitem__(self, k):
        if isinstance(k, slice):
            if k.step is None and (k.stop is None) and (k.start or 0) >= 0:
                st = k.start or 0
                if st <= len(self.head):
                    return Rest(self.base, self.start, self.head[st:])
                return Rest(self.base, self.start + st - len(self.head))
            out = []
            stop = k.stop if k.stop is not None else len(self)
            for i, x in enumerate(self):
                if i >= stop:
                    break
                out.append(x)
            return out[k.start : k.stop : k.step]
        if k < 0:
            k += len(self)
        if k < len(self.head):
            return self.head[k]
        return self.base[self.start + k - len(self.head)]


@record
class Branch:
    """What runs when a tested command fails or succeeds."""

    stmts: list  # statement nodes run in that case
    status: int | None  # status of the last command before the branch runs ($? there)
    fallthrough: bool = False  # the branch is "what follows" (rest of the script)
    tail: bool = False  # nothing follows the branch in the script
    frame: object = None  # function frame the branch lives in


@record
class Pos:
    tested: bool = False
    on_fail: Branch | None = None
    on_success: Branch | None = None
    tail: bool = False
    rest: list = field(default_factory=list)
    seq_tail: bool = False  # nothing follows the sequence the statement is in (`rest`)
    retry: bool = False  # condition of a retry loop (while ! acquire; do sleep; done)
    background: str | None = None
    negated: bool = False
    chain_success: Branch | None = None  # `a && b` as a condition: what runs when both hold
    chained: bool = False  # the right side of `&&`/`||`


@record
class Frame:
    name: str
    params: dict
    tail: bool
    on_fail: Branch | None
    depth: int
    pos: Pos | None = None  # how the call's status is used
    last: tuple | None = None  # byte range of the function's last statement


@record
class FdInfo:
    path: PathExpr | None
    span: Span
    truncating: bool
    locks: list = field(default_factory=list)
    unchecked: bool = False  # opened by an `exec` whose failure nothing tests


@record
class TrapEvent:
    order: int
    exit_trap: bool
    keys: set
    node: object
    span: Span
    before_exit: bool = False  # `trap - EXIT` right before an exit (a busy branch)
    disarm: bool = False  # `trap - EXIT` / `trap '' EXIT`
    top: object = None  # the top-level statement, when the trap is one
    removals: list = field(default_factory=list)
    # keys removed only after the trap takes the flock again (`flock -xn 9 && rm -f L`): the
    # losing run, which cannot get it while the winner holds it, does not remove them
    relocked: set = field(default_factory=set)
