"""Shell frontend: tree-sitter-bash -> :class:`FileFacts`.

The walk follows the script in execution order: the top level first, a function's body where
it is called (positional parameters bound from that call site, so a helper called with two
paths yields one fact per path), then functions never called (their facts are conditional).
Every command is seen with a :class:`Pos` saying how its exit status is used (tested by
``if``/``while``/``!``/``&&``/``||``, by ``$?`` on the next line, or not) and which statements run
when it fails or succeeds; locks and busy branches are read from that.

Approximations (kept on purpose, see the tests): one environment of variables for the whole
walk (no ``local`` scoping, branch assignments visible afterwards); a dead-holder guard covers
only the statement right after ``if alive; then exit; fi``; code run by ``eval``/``sh -c``/``ssh``,
``flock -c`` strings and here-doc bodies is never read.  tree-sitter-bash 0.25 gaps handled
here: ``exec 9<>F`` (an ERROR holding ``>`` or ``<``), ``exec {fd}>F``, destinations and
``X=/tmp/`cmd`.lock`` assignments split in two, ``-$1.lock`` split after ``$``, and valid code
it reads as an ERROR region (read again line by line).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..model import (
    Acquire,
    Background,
    BusyBranch,
    Edit,
    FileFacts,
    FixTemplate,
    Kill,
    LivenessCheck,
    LockKind,
    NonExclusiveCreate,
    ParseError,
    Part,
    PartKind,
    PathExpr,
    Probe,
    ReleaseHook,
    Removal,
    Span,
    StatusOverride,
)
from ..paths import lockish_text, name_words
from .treesitter import Offsets, source_bytes
from .treesitter import parser as ts_parser

_CONSEQUENCE = re.compile(
    r"\b(exit|rm|rmdir|unlink|mkdir|touch|ln)\b|(?<![\d&>])>>?(?![&>])\s*(?!/dev/)"
)
_FILE_CHANGE = re.compile(
    r"\b(rm|rmdir|unlink|mkdir|touch|ln)\b|(?<![\d&>])>>?(?![&>])\s*(?!/dev/)"
)
# functions that stop or report on a service: a liveness test there is not a lock decision
_STOP_WORDS = {"STOP", "STATUS", "KILL", "TERMINATE", "SHUTDOWN", "HALT"}
_RUNS_OTHER_SCRIPT = re.compile(r"#![ \t]*\S*/(?:sh|bash|dash|ksh|mksh|ash)[ \t]+[^-\s]")
_BATS_TEST = re.compile(rb"(?m)^([ \t]*)@test[ \t][^\n]*\{[ \t]*$")


_ESCAPED_COMMAND = re.compile(rb"(?m)^([ \t]*)\\(?=[A-Za-z_])")


def tree_sitter_source(text: str) -> bytes:
    """The bytes to give tree-sitter-bash for ``text`` (see :func:`treesitter.source_bytes`:
    tree-sitter-bash 0.25 reads out of bounds on some code points above U+2FFFF).  A command
    word escaped against aliases at the start of a line (`\\rm -f L`) is glued by
    tree-sitter-bash 0.25 to the line before: its backslash becomes a space (same offsets)."""
    return _ESCAPED_COMMAND.sub(rb"\1 ", source_bytes(text))


def _bash_accepts(src: bytes, bats: bool = False) -> bool:
    """Whether ``bash -n`` reads the script (extglob on, as scripts that use it enable it at
    run time).  False when bash rejects it, is missing or does not answer: then the
    tree-sitter verdict stands."""
    import shutil  # only for the few files tree-sitter finds broken: kept off start-up
    import subprocess

    # only absolute PATH entries: an empty or relative one is the directory being scanned,
    # whose `bash` must never run
    dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)]
    bash = shutil.which("bash", path=os.pathsep.join(dirs)) if dirs else None
    if bash is None:
        return False
    if bats:
        # bats turns `@test "name" {` into a function before bash reads the file
        src = _BATS_TEST.sub(rb"\1bats_test_() {", src)
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV")}
    try:
        done = subprocess.run(
            [bash, "--norc", "--noprofile", "-O", "extglob", "-n"],
            input=src,
            capture_output=True,
            timeout=10,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    # an unterminated here-doc is only a warning for bash, but the rest of the file is lost in it
    return done.returncode == 0 and b"here-document" not in done.stderr


def _parser():
    return ts_parser("bash")


# ----------------------------------------------------------------------------- small helpers

OPENERS = {'"', "'", "`", "$(", "{", "((", "$((", "${", "$'", '$"'}
CLOSER_WORDS = {"fi", "done", "esac", "then", "else", "elif", "do"}
CLOSERS = {"fi", "done", "esac", "then", "else", "elif", "do", "}", ")", ";;"}
STATEMENT_SKIP = {"comment", "heredoc_body", "heredoc_start", "heredoc_end"}
WRAPPERS = {"command", "builtin", "exec", "sudo", "nice", "ionice", "chrt", "time", "env"}
ZERO_CMDS = {"echo", "printf", ":", "true", "logger", "log", "warn", "info", "say", "msg"}
REMOVERS = {"rm", "rmdir", "unlink"}
# `stat ... %Y` is tried from the first `stat` of a line only: a later one has less of the line
# after it, and trying each would rescan the line once per `stat` (quadratic)
AGE_TEST = re.compile(
    r"(?m)^(?:(?!stat\b)[^\n])*stat\b[^\n]*%[YZm]|-mmin|-mtime|-amin|-newer|date\s+-r|-ot\b|-nt\b"
)
SIGNALS_EXIT = {"EXIT", "0", "SIGEXIT"}


# `stat` then `%i` / `-c` later on the line, tried from the line's first `stat` only (see AGE_TEST)
_INODE_TEST = re.compile(
    r"(?m)-ef\b|/proc/\$\$/fd|/dev/fd/|^(?:(?!stat\b)[^\n])*stat\b[^\n]*%i"
    r"|^(?:(?!stat\s+-L\b)[^\n])*stat\s+-L\b.*-c"
)


_FOREIGN_LINE = re.compile(
    r"^\s*(?:(?:def|class)\s+\w+\b.*:\s*$|import\s+[\w.]+(?:\s+as\s+\w+)?\s*;?\s*$"
    r"|from\s+[\w.]+\s+import\s|(?:try|finally|else):\s*$|(?:elif|except|with|while|for|if)\b.*:\s*$"
    r"|#include\s|package\s+[\w.]+;?\s*$|(?:public|private|const|let|var)\s+\w+\b.*[;{]\s*$)"
)


def _looks_foreign(text: str) -> bool:
    """Python, C, Java or JavaScript source handed to the shell frontend."""
    code = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.lstrip().startswith("#")]
    if not code:
        return False
    foreign = sum(1 for ln in code if _FOREIGN_LINE.match(ln))
    return foreign >= 2 and foreign * 5 >= len(code)


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


# statements walked inside each other: Python's stack holds a few frames per level
_MAX_NESTING = 150
# bounds of static resolution (a hostile script must not make a value grow without end)
_VALUE_LIMIT = 4096  # PATH_MAX: a longer value names no file, it stays unknown
_RESOLVE_WORK = 16 * _VALUE_LIMIT  # nodes read and characters copied by one resolution


class _TooMuchWork(Exception):
    """One resolution went past :data:`_RESOLVE_WORK`: its value stays unknown."""


def _value_size(parts) -> int:
    """Characters and parts of a resolved value (defaults included)."""
    return sum(
        1 + len(p.value) + (_value_size(p.default.parts) if p.default is not None else 0)
        for p in parts
    )


def _lines_after(text: str, start: int, count: int, limit: int = 1 << 16) -> list[str]:
    """The ``count`` lines after the one holding ``start`` (``text[start:].split("\n")
    [1:count + 1]`` without splitting the rest of the file), at most ``limit`` characters."""
    begin = text.find("\n", start)
    if begin < 0 or count < 1:
        return []
    end = begin
    for _ in range(count):
        end = text.find("\n", end + 1, begin + 1 + limit)
        if end < 0:
            end = min(len(text), begin + 1 + limit)
            break
    return text[begin + 1 : end].split("\n")


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


@dataclass
class Branch:
    """What runs when a tested command fails or succeeds."""

    stmts: list  # statement nodes run in that case
    status: int | None  # status of the last command before the branch runs ($? there)
    fallthrough: bool = False  # the branch is "what follows" (rest of the script)
    tail: bool = False  # nothing follows the branch in the script
    frame: object = None  # function frame the branch lives in


@dataclass
class Pos:
    tested: bool = False
    on_fail: Branch | None = None
    on_success: Branch | None = None
    tail: bool = False
    rest: list = field(default_factory=list)
    retry: bool = False  # condition of a retry loop (while ! acquire; do sleep; done)
    background: str | None = None
    negated: bool = False
    chain_success: Branch | None = None  # `a && b` as a condition: what runs when both hold
    chained: bool = False  # the right side of `&&`/`||`


@dataclass
class Frame:
    name: str
    params: dict
    tail: bool
    on_fail: Branch | None
    depth: int
    pos: Pos | None = None  # how the call's status is used
    last: tuple | None = None  # byte range of the function's last statement


@dataclass
class FdInfo:
    path: PathExpr | None
    span: Span
    truncating: bool
    locks: list = field(default_factory=list)
    unchecked: bool = False  # opened by an `exec` whose failure nothing tests


# compound commands that `&` puts in the background as one child
_COMPOUND = frozenset(
    {
        "while_statement",
        "until_statement",
        "for_statement",
        "c_style_for_statement",
        "select_statement",
        "compound_statement",
        "subshell",
        "if_statement",
        "case_statement",
    }
)

# words before the command of a line that tests it (`if ! cd D; then`)
_CONDITION_WORDS = frozenset({"if", "!", "then", "elif", "while", "until", "do", "else"})


@dataclass
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


class _Analyzer:
    def __init__(self, path: str, text: str) -> None:
        self.text = text
        self.facts = FileFacts(path=path, language="shell", text=text)
        self.src = tree_sitter_source(text)
        self.offsets = Offsets(text, self.src)
        self.offmap: list[int] | None = None  # byte map for a sub-parsed trap string
        self._sub_src = b""
        self.functions: dict[str, object] = {}
        self.called = _NamesSet()
        self.env: dict[str, tuple[Part, ...] | None] = {}
        self.cmdvars: dict[str, str] = {}  # VAR -> command it names (FLOCK=$(command -v flock))
        self.pidvars: dict[str, PathExpr | None] = {}  # pid var -> file it was read from
        self.live_vars: dict[str, tuple] = {}  # var -> (ps command, pid file) of its output
        self.fdvars: set[str] = set()
        self.fds: dict[str, FdInfo] = {}
        self.set_e = False
        self.noclobber = False
        self.durable_global = False
        self.frames: list[Frame] = []
        self.cond_depth = 0
        self.order = 0
        self.traps: list[TrapEvent] = []
        self.acq_order: list[int] = []
        self.acq_keys: list[str] = []
        self.direct_removals: list[tuple[int, str]] = []
        self.pending_bg: list[Background] = []
        self.held: list[int] = []  # existence locks held (index)
        self.stale: tuple[str, str | None] | None = None  # (guard, key)
        self.actions: list[str] = []  # case "$1" in <action>) being walked
        self.cte: list[tuple] = []  # check-then-create candidates
        self.stdin: list[PathExpr] = []  # files compound commands read their stdin from
        self.fifos: set[str] = set()  # named pipes the script makes (mkfifo, mknod P p)
        self.sete_mkdirs: list[tuple] = []
        self.mkdir_p_guards: list[tuple] = []  # (NonExclusiveCreate, end offset)
        self.seen_acq: dict[tuple, int] = {}
        self.seen_other: set[tuple] = set()
        self.inlines = 0
        self.in_trap = False
        self.inode_recheck = False
        self.flock_close: set[int] = set()
        self.weak: set[int] = set()
        self.override_order: dict[int, int] = {}  # StatusOverride -> order of its trap
        self.top_stmt = None
        self.untrapping: set[int] = set()  # busy branches that reset the EXIT trap
        self.loser_exits: dict[int, bool] = {}  # acquires whose losing run can exit
        self.referenced: dict[str, set[str]] = {}  # function -> functions ("" = top) calling it
        self.cut: int | None = None
        self.live_seen: dict = {}
        self._openwrt: bool | None = None
        self._loud_exec: bool | None = None
        self.trap_depth = 0  # cond_depth where the trap being walked was installed
        self.rc_common = False
        self.gates: set[int] = set()  # existence locks whose failure just goes on
        self.clearing: list[tuple[int, str]] = []  # unconditional removals (order, key)
        self.signalled: set[tuple[str, str]] = set()  # (function, pid file) sent a signal
        self._trap_dquoted = False
        self.subshells: list[Pos] = []
        self.acq_top: list = []
        self.cte_acqs: list[int] = []
        self.trap_keys: set[str] = set()
        self.trap_span: Span | None = None
        self.stale_rest = None
        self._stale_list_right = None
        self._pending_stale_success = None
        self._pending_stale_fail = None
        self._budget = float("inf")  # work left to the resolution under way (see resolve())
        self.nesting = 0  # statements being walked inside each other (see stmt())
        self.inlined = 0  # bytes of function bodies walked at call sites (see call())
        self.too_deep = False

    # ------------------------------------------------------------------ positions
    def _c(self, b: int) -> int:
        if self.offmap is not None:
            b = self.offmap[min(b, len(self.offmap) - 1)]
        return self.offsets.char(b)

    def _lc(self, c: int) -> tuple[int, int]:
        return self.offsets.line_col(c)

    def span(self, node) -> Span:
        s, e = self._c(node.start_byte), self._c(node.end_byte)
        return self.span_of(s, e)

    def span_of(self, s: int, e: int) -> Span:
        l1, c1 = self._lc(s)
        l2, c2 = self._lc(e)
        return Span(l1, c1, l2, c2, s, e)

    # ------------------------------------------------------------------ entry
    def run(self) -> FileFacts:
        tree = _parser().parse(self.src)
        root = tree.root_node
        self.root = root
        self._prescan(root)
        self.walk_seq(self.statements(root), tail=True)
        self.offmap = None
        # functions never called from the top level: those no other function calls first, so
        # that the others are reached through their call sites
        for name in self._uncalled_in_order():
            fn = self.functions[name]
            self.called.add(name)
            self.cond_depth += 1
            self.frames.append(Frame(name, {}, False, None, 1))
            self.walk_seq(self.statements(self._fn_body(fn)), tail=False)
            self.frames.pop()
            self.cond_depth -= 1
        self.finish()
        if self.cut is not None:
            self._drop_after(self.cut)
        return self.facts

    def _uncalled_in_order(self):
        """The functions not called yet, one at a time: the first (in definition order) that
        no other uncalled function calls, else the first uncalled one.  Callers are counted
        once and the count kept as functions get called (``self.called.added``), so the whole
        pass is linear in functions and call sites."""
        import heapq

        order = list(self.functions)
        index = {n: i for i, n in enumerate(order)}
        callees: dict[str, list[str]] = {}
        waiting = dict.fromkeys(order, 0)  # uncalled callers other than itself
        for n, callers in self.referenced.items():
            if n not in index:
                continue
            for c in callers:
                if c != n and c in index:
                    callees.setdefault(c, []).append(n)
                    if c not in self.called:
                        waiting[n] += 1
        ready = [i for i, n in enumerate(order) if not waiting[n]]  # sorted: a heap already
        seen = len(self.called.added)
        first = 0
        while True:
            for m in self.called.added[seen:]:
                for n in callees.get(m, ()):
                    waiting[n] -= 1
                    if not waiting[n]:
                        heapq.heappush(ready, index[n])
            seen = len(self.called.added)
            while ready and order[ready[0]] in self.called:
                heapq.heappop(ready)
            while first < len(order) and order[first] in self.called:
                first += 1
            if first == len(order):
                return
            yield order[ready[0]] if ready else order[first]

    def _drop_after(self, cut: int) -> None:
        f = self.facts
        keep = [i for i, a in enumerate(f.acquires) if a.span.start < cut]
        remap = {old: new for new, old in enumerate(keep)}
        f.acquires = [f.acquires[i] for i in keep]
        f.removals = [r for r in f.removals if r.span.start < cut]
        f.liveness = [x for x in f.liveness if x.span.start < cut]
        f.kills = [x for x in f.kills if x.span.start < cut]
        f.probes = [x for x in f.probes if x.span.start < cut]
        f.overrides = [x for x in f.overrides if x.span.start < cut]
        f.non_exclusive = [x for x in f.non_exclusive if x.span.start < cut]
        f.backgrounds = [b for b in f.backgrounds if b.span.start < cut and b.lock in remap]
        for b in f.backgrounds:
            b.lock = remap[b.lock]
        hooks = []
        for h in f.hooks:
            if h.span.start < cut:
                h.active_in_busy_of = tuple(remap[i] for i in h.active_in_busy_of if i in remap)
                hooks.append(h)
        f.hooks = hooks

    def _prescan(self, root) -> None:
        if "### BEGIN INIT INFO" in self.text:
            self.facts.init_script = True
        first = self.text.split("\n", 1)[0]
        if re.match(r"#!\s*\S+\s+/etc/rc\.common\b", first):
            self.rc_common = self.facts.init_script = True
        if re.match(r"#!\S*(?:\s+\S*(?:sh|bash|dash|ksh))?(?:\s+-\w+)*\s+-\w*e", first):
            self.set_e = True  # #!/bin/sh -e
        stack = [(root, "")]
        errors = []
        while stack:
            n, owner = stack.pop()
            t = n.type
            if t == "comment":
                ln = n.start_point[0] + 1
                self.facts.comments[ln] = _txt(n)
                continue
            if t == "heredoc_body":
                continue
            if t == "command_name":
                self.referenced.setdefault(_txt(n), set()).add(owner)
            if t == "function_definition":
                name = n.child_by_field_name("name")
                if name is not None:
                    self.functions.setdefault(_txt(name), n)
            if t == "case_statement":
                v = _txt(n.child_by_field_name("value"))
                if v in ('"$1"', "$1", '"${1:-}"', "${1:-}", '"${1}"', "${1}"):
                    for it in n.named_children:
                        if it.type == "case_item":
                            vals = [_txt(c) for c in it.children_by_field_name("value")]
                            if any(v.strip("'\"") == "start" for v in vals):
                                self.facts.init_script = True
            if n.is_missing or (t == "heredoc_end" and n.start_byte == n.end_byte):
                errors.append(n)
            elif t == "ERROR" and not self._benign_error(n):
                errors.append(n)
            elif t == "command_name" and _txt(n) in CLOSER_WORDS and n.parent is not None:
                # tree-sitter-bash reads a stray `fi`/`done`/`}` as a command; bash stops there
                errors.append(n.parent)
            if t == "function_definition":
                nm = n.child_by_field_name("name")
                owner = _txt(nm) if nm is not None else owner
            stack.extend((c, owner) for c in reversed(n.children))
        self._errors(root, errors)

    def _benign_error(self, n) -> bool:
        # exec 9<>file: tree-sitter-bash 0.25 reads '<' then an ERROR holding '>'
        p = n.parent
        return p is not None and p.type == "file_redirect" and _txt(n) in (">", "<")

    def _errors(self, root, errors) -> None:
        if not errors:
            return
        size = max(1, root.end_byte)
        broken = None
        for n in errors:
            if n.is_missing or n.type == "heredoc_end":
                broken = broken or n
                continue
            kids = [c for c in n.children if c.type != "comment"]
            if n.end_byte >= size - 1 and (n.end_byte - n.start_byte) > 0:
                # an unterminated quote, substitution or brace runs to the end of the file; a
                # grammar gap on valid code (`[ "$a" \< "$b" ]`) does not open anything
                if any(c.type in OPENERS for c in kids) or _txt(n)[:1] in ("'", '"', "`"):
                    broken = broken or n
                elif any(c.type == "ERROR" and _txt(c)[:1] in ("'", '"', "`") for c in kids):
                    broken = broken or n
            if n.type == "command" or (kids and kids[0].type in CLOSER_WORDS):
                broken = broken or n  # a stray `fi`/`done`/`esac`: bash stops there
        if broken is None and _looks_foreign(self.text):
            broken = errors[0]
        if broken is None:
            return
        first = min(errors, key=lambda n: n.start_byte)
        end = self._shell_ends_at(root)
        if end is not None:
            # `exec tclsh "$0"` / `exit 0` at the top level: the shell never reads what follows
            # (a polyglot's other language, a self-extracting archive's payload)
            self.cut = self._c(end)
            return
        if _RUNS_OTHER_SCRIPT.match(self.text):
            # `#!/bin/sh /usr/share/dpatch/dpatch-run`: the shell runs that script with this
            # file as its argument; what the script does not source may be data (a patch)
            self.cut = self._c(first.start_byte)
            return
        if _bash_accepts(self.src, self._is_bats()):
            # a tree-sitter-bash gap on code bash reads (`"${v:-a;b}"`): read on as valid code
            return
        quote = None
        if not broken.is_missing and broken.type == "ERROR":
            for c in broken.children:
                if c.type in ('"', "'", "`", "string_content", "raw_string"):
                    quote = c
                    break
                if c.type == "ERROR" and _txt(c)[:1] in ("'", '"', "`"):
                    quote = c
                    break
        if quote is not None and broken is first:
            first = quote
        if broken.type == "heredoc_end":
            first = broken.parent or broken
        if broken.is_missing:
            # point at the construct left open
            node = broken.parent or broken
            first = node if node.start_byte < first.start_byte else first
        what = "cannot be read as shell"
        if quote is not None:
            what = "has an unterminated quote"
        elif broken.type == "heredoc_end":
            what = "has an unterminated here-doc"
        elif broken.is_missing:
            what = f"lacks a closing `{broken.type}`"
        if broken.type == "command":
            first = broken
            what = f"has an unexpected `{_txt(broken.child_by_field_name('name'))}`"
        elif broken.type == "ERROR" and broken.children and broken.children[0].type in CLOSER_WORDS:
            first = broken
            what = f"has an unexpected `{broken.children[0].type}`"
        self.facts.parse_errors.append(
            ParseError(
                self.span(first), f"the file {what} here; the rest is read as far as possible"
            )
        )
        # bash never runs what follows: facts from there on would be guesses
        self.cut = self._c(first.start_byte)

    def _is_bats(self) -> bool:
        return self.facts.path.endswith(".bats") or "bats" in self.text.split("\n", 1)[0]

    def _shell_ends_at(self, root) -> int | None:
        """End of the first top-level statement after which the shell stops reading the file
        (`exit`, `exec CMD`, an if whose every branch ends so), when the file up to there is
        readable shell; None otherwise."""
        stmts = []
        for node, _bg in self.statements(root):
            if node.type == "ERROR":
                # tree-sitter-bash wraps the statements before a later error in the ERROR
                stmts.extend(
                    c
                    for c in node.named_children
                    if c.type in ("command", "redirected_statement", "if_statement")
                )
            else:
                stmts.append(node)
        for node in stmts:
            if self._ends_shell(node, 0):
                end = node.end_byte
                head = self.src[:end]
                if not _parser().parse(head).root_node.has_error or _bash_accepts(head):
                    return end
                return None
        return None

    def _ends_shell(self, node, depth: int) -> bool:
        if depth > 4:
            return False
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "command":
            name = self.cmd_name(node)
            if name == "exit":
                return True
            if name == "exec":
                args = self.cmd_args(node)
                return bool(args) and not _txt(args[0]).startswith("{")
            return False
        if node.type == "if_statement":
            _conds, body, other = self._if_parts(node)
            if not body or other is None or not self._ends_shell(body[-1], depth + 1):
                return False
            while other is not None and other.type == "elif_clause":
                _c2, b2, o2 = self._if_parts(other)
                if not b2 or not self._ends_shell(b2[-1], depth + 1):
                    return False
                other = o2
            if other is None:
                return False
            stmts = self.statements(other)
            return bool(stmts) and self._ends_shell(stmts[-1][0], depth + 1)
        return False

    # ------------------------------------------------------------------ structure
    def statements(self, node) -> list:
        """Named statement children of a block, with '&' recorded."""
        out = []
        for c in node.children:
            if c.type == "&" and out:
                out[-1] = (out[-1][0], True)
                continue
            if not c.is_named or c.type in STATEMENT_SKIP:
                continue
            if c.type in ("do", "done", "then", "fi", "else"):
                continue
            out.append((c, False))
        return out

    def _fn_body(self, fn):
        return fn.child_by_field_name("body") or fn

    def walk_seq(self, stmts, tail: bool) -> None:
        n = len(stmts)
        i = 0
        applied = False
        saved_stale = self.stale
        while i < n:
            node, bg = stmts[i]
            rest = Rest(stmts, i + 1)
            pos = Pos(tail=tail and i == n - 1, rest=rest, background="&" if bg else None)
            if bg:
                self.cond_depth += 1
            if not self.frames and self.offmap is None and self.cond_depth == 0:
                self.top_stmt = node
            self.stmt(node, pos)
            if bg:
                self.cond_depth -= 1
            if applied and self.classify_busy_stmt(node)[0] not in ("zero", "durable"):
                # `if alive; then exit; fi` guards what follows up to the first real work
                # (messages do not end it)
                self.stale = saved_stale
                applied = False
            if self.stale_rest is not None:
                self.stale = self.stale_rest
                self.stale_rest = None
                applied = True
            i += 1
        if applied:
            self.stale = saved_stale

    def stmt(self, node, pos: Pos, redirects=()) -> None:
        """One statement (:meth:`_stmt`), at most ``_MAX_NESTING`` statements deep: what is
        nested deeper is not read (its facts stay unknown, a parse error says so) instead of
        overflowing Python's stack and losing the whole file."""
        if self.nesting >= _MAX_NESTING:
            if not self.too_deep:
                self.too_deep = True
                self.facts.parse_errors.append(
                    ParseError(
                        self.span(node),
                        f"the file nests statements more than {_MAX_NESTING} deep here; "
                        "what is deeper is not read",
                    )
                )
            return
        self.nesting += 1
        try:
            self._stmt(node, pos, redirects)
        finally:
            self.nesting -= 1

    def _stmt(self, node, pos: Pos, redirects=()) -> None:
        t = node.type
        self.order += 1
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            reds = [
                c
                for c in node.children
                if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")
            ]
            reds = list(redirects) + reds
            if body is None:
                self.command(None, pos, reds, node)
                return
            stdin = None
            if body.type in _COMPOUND:
                # `while read pid; do ...; done < F`, `( read pid; ... ) <>F`: what `read`
                # reads inside comes from F
                prev = None
                for r in node.children:
                    info = self.redirect_info(r)
                    # (`<>F` without a space reads as an ERROR `<`, then a `>F` redirect)
                    gap = prev is not None and prev.type == "ERROR" and _txt(prev) == "<"
                    op = "<>" if gap and info and info[1] == ">" else info[1] if info else ""
                    if info and info[0] in (None, "0") and op in ("<", "<>") and info[2]:
                        stdin = self.resolve(info[2])
                    prev = r
            if stdin is not None:
                self.stdin.append(stdin)
            self.stmt(body, pos, reds)
            if stdin is not None:
                self.stdin.pop()
            return
        if t == "command":
            self.command(node, pos, list(redirects), node)
            return
        if pos.background and t in _COMPOUND:
            # `while ...; done &`, `{ ...; } &`, `( ... ) &`: the whole compound is the child
            closes = any(
                (self.redirect_info(r) or (None, ""))[1] in (">&-", "<&-") for r in redirects
            )
            if not closes:
                self.background_at(node, pos.background)
        if t == "list":
            self.list_(node, pos)
            return
        if t == "negated_command":
            inner = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if inner:
                p2 = Pos(
                    tested=True,
                    on_fail=pos.on_success,
                    on_success=pos.on_fail,
                    tail=pos.tail,
                    rest=pos.rest,
                    retry=pos.retry,
                    negated=not pos.negated,
                )
                if not pos.tested:
                    # `! acquire` alone: the status is dropped
                    p2.on_fail = None
                self.stmt(inner[0], p2, redirects)
            return
        if t == "pipeline":
            cmds = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if pos.background and any(c.type in _COMPOUND for c in cmds):
                # `tail -f L | while read ...; done &`: one background child, the pipeline
                self.background_at(node, pos.background)
                pos = Pos(
                    tested=pos.tested,
                    on_fail=pos.on_fail,
                    on_success=pos.on_success,
                    tail=pos.tail,
                    rest=pos.rest,
                )
            for j, c in enumerate(cmds):
                last = j == len(cmds) - 1
                self.stmt(c, pos if last else Pos(rest=[], background=pos.background))
            return
        if t == "if_statement":
            self.if_(node, pos)
            return
        if t in ("while_statement", "until_statement"):
            self.loop_(node, pos, until=t == "until_statement")
            return
        if t in ("for_statement", "c_style_for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            if var is not None:
                self.env[_txt(var)] = None
            body = node.child_by_field_name("body")
            if body is not None:
                self.cond_depth += 1
                self.walk_seq(self.statements(body), tail=False)
                self.cond_depth -= 1
            return
        if t == "case_statement":
            self.case_(node, pos)
            return
        if t in ("compound_statement", "subshell"):
            self.group_(node, pos, redirects)
            return
        if t == "function_definition":
            return
        if t == "variable_assignment":
            self.assign(node, pos=pos)
            return
        if t == "variable_assignments":
            for c in node.named_children:
                if c.type == "variable_assignment":
                    self.assign(c)
            return
        if t == "declaration_command":
            self.declare(node)
            return
        if t == "test_command":
            self.test_cmd(node, pos)
            return
        if t == "ERROR" and self.offmap is None and self.cut is None:
            self._walk_error_region(node)
            return
        if t in ("ERROR", "program", "do_group"):
            self.walk_seq(self.statements(node), tail=False)
            return
        # unknown statement kinds: look for nested statements
        for c in node.named_children:
            if c.type in ("command", "list", "redirected_statement", "if_statement"):
                self.stmt(c, Pos())

    _SEGMENT = re.compile(rb"^;?\s*(?:(?:if|then|else|elif|do|while|until)\s+)*")

    def _walk_error_region(self, node) -> None:
        """A region tree-sitter-bash could not read (valid code it does not know, e.g.
        `[ "$a" \\< "$b" ]`): read its lines, and the `;`-separated pieces of lines that do
        not read alone, as separate commands at their own positions."""
        src = self.src
        start = src.rfind(b"\n", 0, node.start_byte) + 1
        end = node.end_byte
        pos = start
        self.cond_depth += 1
        try:
            while pos < end:
                nl = src.find(b"\n", pos, end)
                stop = end if nl < 0 else nl
                self._walk_piece(pos, stop, split=True)
                pos = stop + 1
        finally:
            self.cond_depth -= 1
            self.offmap = None

    def _walk_piece(self, a: int, b: int, split: bool) -> None:
        piece = self.src[a:b]
        if not piece.strip() or piece.lstrip().startswith(b"#"):
            return
        tree = _parser().parse(piece)
        if not tree.root_node.has_error:
            self.offmap = list(range(a, b + 1))
            self._sub_src = piece
            self.walk_seq(self.statements(tree.root_node), tail=False)
            self.offmap = None
            return
        if not split:
            return
        # split at separators outside quotes (roughly) and drop leading keywords
        bounds = []
        quote = None
        i = 0
        while i < len(piece):
            ch = piece[i : i + 1]
            if quote:
                if ch == b"\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in (b"'", b'"'):
                quote = ch
            elif ch == b";":
                bounds.append(i)
            i += 1
        cuts = [0] + [x for x in bounds] + [len(piece)]
        for x, y in zip(cuts, cuts[1:], strict=False):
            seg = piece[x:y]
            m = self._SEGMENT.match(seg)
            off = m.end() if m else 0
            if seg[off:].strip() in (b"fi", b"done", b"esac", b"then", b"else", b"do", b""):
                continue
            self._walk_piece(a + x + off, a + y, split=False)

    # ------------------------------------------------------------------ compound statements
    def list_(self, node, pos: Pos) -> None:
        kids = [c for c in node.children if c.type not in STATEMENT_SKIP]
        if len(kids) < 3:
            for c in node.named_children:
                self.stmt(c, Pos())
            return
        left, op, right = kids[0], kids[1].type, kids[2]
        fr = self.frames[-1] if self.frames else None
        if op == "||" and not pos.tested and self._status_var(right) is not None:
            # `cmd || rc=$?`: the status is carried in rc and tested later, like `cmd; rc=$?`
            # (rc keeps its earlier value when cmd succeeds)
            self.stmt(left, Pos(rest=Rest(pos.rest, 0, ((right, False),))))
            self._list_right(right, pos, self.stale)
            return
        if op == "||":
            lp = Pos(
                tested=True,
                on_fail=Branch([(right, False)], 1, frame=fr, tail=pos.tail),
                on_success=pos.on_success
                or Branch(pos.rest, None, fallthrough=True, tail=pos.tail, frame=fr),
                tail=False,
                rest=Rest(pos.rest, 0, ((right, False),)),
            )
            self.stmt(left, lp)
            self._pending_stale_success = None
            self._pending_stale_fail = None
            saved = self.stale
            if self._stale_list_right is not None:
                self.stale = self._stale_list_right
                self._stale_list_right = None
            self._list_right(right, pos, saved)
        elif op == "&&":
            lp = Pos(
                tested=True,
                on_fail=pos.on_fail
                or Branch(pos.rest, 1, fallthrough=True, tail=pos.tail, frame=fr),
                on_success=Branch([(right, False)], 0, frame=fr, tail=pos.tail),
                tail=False,
                rest=Rest(pos.rest, 0, ((right, False),)),
                chain_success=pos.on_success if pos.tested else None,
            )
            self.stmt(left, lp)
            saved = self.stale
            if self._pending_stale_success is not None:
                self.stale = self._pending_stale_success
            self._pending_stale_success = None
            self._pending_stale_fail = None
            self._stale_list_right = None
            self._list_right(right, pos, saved)
        else:
            for c in node.named_children:
                self.stmt(c, Pos())

    def _list_right(self, right, pos: Pos, saved) -> None:
        """The right side of `&&`/`||`: run conditionally, in the list's own position; then
        the stale-holder state from before the list comes back."""
        self.cond_depth += 1
        chained = Pos(
            tested=pos.tested,
            on_fail=pos.on_fail,
            on_success=pos.on_success,
            tail=pos.tail,
            rest=pos.rest,
            chained=True,
        )
        self.stmt(right, chained)
        self.cond_depth -= 1
        self.stale = saved

    def _if_parts(self, node):
        """(condition nodes, then stmts, else-part) where else-part is a list of statements or
        an elif_clause node."""
        conds, body, other = [], [], None
        state = "cond"
        for i, c in enumerate(node.children):
            ft = node.field_name_for_child(i)
            if c.type == "then":
                state = "then"
                continue
            if c.type in ("elif_clause", "else_clause"):
                other = other or c
                continue
            if not c.is_named or c.type in STATEMENT_SKIP:
                continue
            if state == "cond" or ft == "condition":
                conds.append(c)
            else:
                body.append(c)
        return conds, body, other

    def _else_stmts(self, other):
        if other is None:
            return None
        if other.type == "else_clause":
            return self.statements(other)
        return [(other, False)]

    def if_(self, node, pos: Pos) -> None:
        conds, body, other = self._if_parts(node)
        self._if_chain(node, conds, body, other, pos)

    def _if_chain(self, node, conds, body, other, pos: Pos) -> None:
        then_stmts = [(c, False) for c in body]
        fr = self.frames[-1] if self.frames else None
        else_stmts = self._else_stmts(other)
        if else_stmts is None:
            on_fail = Branch(pos.rest, 0, fallthrough=True, tail=pos.tail, frame=fr)
        else:
            on_fail = Branch(else_stmts, 1, tail=pos.tail, frame=fr)
        on_success = Branch(then_stmts, 0, tail=pos.tail, frame=fr)
        for j, c in enumerate(conds):
            if j == len(conds) - 1:
                self.stmt(
                    c, Pos(tested=True, on_fail=on_fail, on_success=on_success, rest=then_stmts)
                )
            else:
                self.stmt(c, Pos())
        saved = self.stale
        rest_stale, self.stale_rest = self.stale_rest, None
        self.cond_depth += 1
        if self._pending_stale_success is not None:
            self.stale = self._pending_stale_success
        self._pending_stale_success = None
        self.walk_seq(then_stmts, tail=pos.tail)
        self.stale = saved
        if self._pending_stale_fail is not None:
            self.stale = self._pending_stale_fail
        self._pending_stale_fail = None
        if other is not None:
            if other.type == "else_clause":
                self.walk_seq(self.statements(other), tail=pos.tail)
            else:
                c2, b2, o2 = self._if_parts(other)
                self._if_chain(other, c2, b2, o2, pos)
        self.stale = saved
        self.cond_depth -= 1
        if rest_stale is not None:
            self.stale_rest = rest_stale

    def loop_(self, node, pos: Pos, until: bool) -> None:
        conds = node.children_by_field_name("condition")
        conds = [c for c in conds if c.is_named and c.type not in STATEMENT_SKIP]
        body = node.child_by_field_name("body")
        fr = self.frames[-1] if self.frames else None
        body_stmts = self.statements(body) if body is not None else []
        for j, c in enumerate(conds):
            if j == len(conds) - 1:
                # the body runs while the condition is true (until: false)
                br_body = Branch(body_stmts, 0, frame=fr)
                br_out = Branch(pos.rest, 1, fallthrough=True, tail=pos.tail, frame=fr)
                p = Pos(tested=True, retry=True)
                if until:
                    p.on_fail, p.on_success = br_body, br_out
                else:
                    p.on_fail, p.on_success = br_out, br_body
                self.stmt(c, p)
            else:
                self.stmt(c, Pos())
        if body is not None:
            self.cond_depth += 1
            self.walk_seq(body_stmts, tail=False)
            self.cond_depth -= 1

    def case_(self, node, pos: Pos) -> None:
        value = _txt(node.child_by_field_name("value"))
        dispatch = value in ('"$1"', "$1", '"${1:-}"', "${1:-}", '"${1}"', "${1}")
        self.cond_depth += 1
        for it in node.named_children:
            if it.type != "case_item":
                continue
            vals = [_txt(c).strip("'\"") for c in it.children_by_field_name("value")]
            stmts = [
                (c, False)
                for i, c in enumerate(it.children)
                if c.is_named
                and c.type not in STATEMENT_SKIP
                and it.field_name_for_child(i) != "value"
            ]
            if dispatch:
                self.actions.append("|".join(vals))
            self.walk_seq(stmts, tail=pos.tail)
            if dispatch:
                self.actions.pop()
        self.cond_depth -= 1

    def group_(self, node, pos: Pos, redirects) -> None:
        saved_fds = dict(self.fds)
        opened = []
        for r in redirects:
            info = self.redirect_info(r)
            if (
                info
                and info[0] is not None
                and info[0] not in ("0", "1", "2")
                and info[2] is not None
            ):
                fd, op, dest = info
                if op in (">&-", "<&-"):
                    continue
                path = self.resolve(dest)
                self.fds[fd] = FdInfo(path, self.span(r), op in (">", ">|"))
                opened.append(fd)
        for r in redirects:
            self.check_write_redirect(r, Pos())
        stmts = self.statements(node)
        subshell = node.type == "subshell"
        env_saved = dict(self.env) if subshell else None
        flags = (self.set_e, self.noclobber)
        if subshell:
            self.subshells.append(pos)
        cond = pos if pos.tested else self._status_pos(pos)
        if cond is not None and stmts:
            # ( mkdir L ) 2>/dev/null as a condition, or followed by `if [ $? ...`: the group's
            # status is its last command's
            self.walk_seq(stmts[:-1], tail=False)
            last, bg = stmts[-1]
            self.order += 1
            if subshell:
                self.subshells.pop()  # the branches taken on its status are outside it
            self.stmt(last, cond)
            if subshell:
                self.subshells.append(pos)
        else:
            self.walk_seq(stmts, tail=pos.tail or subshell)
        if subshell:
            self.subshells.pop()
            self.set_e, self.noclobber = flags
        if env_saved is not None:
            self.env = env_saved
        for fd in opened:
            if fd in saved_fds:
                self.fds[fd] = saved_fds[fd]
            else:
                self.fds.pop(fd, None)

    # ------------------------------------------------------------------ assignments
    def _split_assignment(self, cmd) -> bool:
        """tree-sitter-bash reads X=/tmp/`cmd`.lock as a prefix assignment X=/tmp/ and a
        command named `cmd`.lock: rejoin them into one assignment."""
        kids = cmd.children
        if len(kids) != 2 or kids[0].type != "variable_assignment":
            return False
        a, n = kids
        if n.type != "command_name" or a.end_byte != n.start_byte:
            return False
        value = a.child_by_field_name("value")
        inner = n.named_children[0] if n.named_children else None
        if value is None or inner is None:
            return False
        name = _txt(a.child_by_field_name("name"))
        joined = _Joined(value, inner, self.src if self.offmap is None else self._sub_src)
        self.env[name] = self.resolve(joined).parts
        return True

    def assign(self, node, local: bool = False, pos: Pos | None = None) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        n = _txt(name)
        if name.type == "subscript":
            return
        if value is None:
            self.env[n] = ()
            return
        if value.type == "array":
            self.env[n] = None
            return
        self._walk_substitutions(value, pos)
        parts = self.resolve(value).parts
        if (
            self.cond_depth > 0
            and all(p.kind is PartKind.LIT and not p.value for p in parts)
            and self.env.get(n)
        ):
            return  # `[ -n "$NO_LOCK" ] && LOCKFILE=""` switches a value off: keep the value
        self.env[n] = parts
        cmd = self.command_name_of_value(value)
        if cmd:
            self.cmdvars[n] = cmd
        else:
            self.cmdvars.pop(n, None)
        src = self.pid_source(value)
        if src is not False:
            self.pidvars[n] = src
        else:
            self.pidvars.pop(n, None)
        probe = self._liveness_output(value)
        if probe is not None:
            self.live_vars[n] = probe
        else:
            self.live_vars.pop(n, None)
        # rc=$? after a tested acquire is handled by the sequence look-ahead

    def _is_flock(self, c) -> bool:
        if c.type == "redirected_statement":
            c = c.child_by_field_name("body") or c
        return c.type == "command" and self.unwrap(c)[0] == "flock"

    def _walk_substitutions(self, value, pos: Pos | None = None, flock_only=False) -> None:
        """Commands inside `$(...)` of an assignment run in a subshell: walk the ones that call
        this file's functions (so their parameters come from this call site) and flock.  When
        the value is one `$(flock ...)`, its status is the assignment's (``pos``)."""
        whole = value
        if whole.type == "string" and len(whole.named_children) == 1:
            whole = whole.named_children[0]
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type == "command_substitution":
                inner = [c for c in n.named_children if c.type not in STATEMENT_SKIP]
                calls = not flock_only and any(
                    c.type == "command" and self.cmd_name(c) in self.functions for c in inner
                )
                locks = any(self._is_flock(c) for c in inner)
                if (calls or locks) and len(self.subshells) < 8:
                    last = inner[-1] if inner else None
                    tested = (
                        pos is not None
                        and n is whole
                        and last is not None
                        and self._is_flock(last)
                        and (pos.tested or pos.tail or self._status_pos(pos) is not None)
                    )
                    self.subshells.append(Pos())
                    self.walk_seq([(c, False) for c in (inner[:-1] if tested else inner)], False)
                    self.subshells.pop()
                    if tested:
                        # the status of `x=$(flock ...)` is flock's: the branches are outside
                        self.stmt(last, pos)
                continue
            stack.extend(n.named_children)

    def _liveness_output(self, value):
        """`ACTIVE=$(ps -p "$PID" -o cmd | grep job)`: (the ps command, the pid file) when the
        value is the output of a process lookup of a stored PID; tested later with
        `[ -z "$ACTIVE" ]`, it decides whether the holder lives."""
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type == "command" and self.cmd_name(n) == "ps":
                args = self.cmd_args(n)
                argt = [_txt(a) for a in args]
                for i, t in enumerate(argt):
                    if t in ("-p", "--pid", "-q") and i + 1 < len(args):
                        src = self.pid_file_of(args[i + 1])
                        if src is not False:
                            return n, src
                return None
            stack.extend(n.named_children)
        return None

    def _liveness_var_test(self, node, op: str, operand, neg: bool, pos: Pos) -> None:
        """`[ -z "$ACTIVE" ]` / `[ -n "$ACTIVE" ]` of a process lookup's output."""
        m = re.fullmatch(r"\"?\$\{?(\w+)\}?\"?", _txt(operand))
        if m is None or m.group(1) not in self.live_vars or op not in ("-z", "-n"):
            return
        ps_cmd, src = self.live_vars[m.group(1)]
        # true when the holder is dead: an empty lookup (`-z`), unless negated
        self.liveness_file(ps_cmd, src, pos, True, negated=(op == "-z") != neg)

    def declare(self, node) -> None:
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c)
            elif c.type == "variable_name":
                self.env.setdefault(_txt(c), ())

    def pid_source(self, value):
        """The file a PID value is read from: $(cat F), $(<F), $(head -n1 F); False if none."""
        node = value
        if node.type == "string":
            kids = [c for c in node.named_children]
            if len(kids) != 1:
                return False
            node = kids[0]
        if node.type != "command_substitution":
            return False
        inner = [c for c in node.named_children]
        if not inner:
            return False
        c = inner[0]
        if c.type == "file_redirect":
            dest = c.child_by_field_name("destination")
            return self.resolve(dest) if dest is not None else None
        if c.type == "redirected_statement":
            body = c.child_by_field_name("body")
            reds = [r for r in c.children if r.type == "file_redirect"]
            if (
                body is not None
                and body.type == "command"
                and self.cmd_name(body) in ("cat", "head", "tail", "tr")
            ):
                for r in reds:
                    info = self.redirect_info(r)
                    if info and info[1] == "<":
                        return self.resolve(info[2])
                c = body
            else:
                return False
        if c.type == "command" and self.cmd_name(c) in ("cat", "head", "tail"):
            ops = [
                a for a in self.cmd_args(c) if not _txt(a).startswith("-") and not _txt(a).isdigit()
            ]
            if ops:
                return self.resolve(ops[-1])
        return False

    # ------------------------------------------------------------------ path resolution
    def resolve(self, node) -> PathExpr:
        # each resolution may copy at most _RESOLVE_WORK characters and parts of stored values,
        # and a value longer than a path can be (PATH_MAX) stays unknown: `v=$v$v` repeated
        # would otherwise double the value on every line
        saved, self._budget = self._budget, _RESOLVE_WORK
        try:
            parts = _merge(self._parts(node, first=True, depth=0))
        except (RecursionError, _TooMuchWork):
            parts = None
        finally:
            self._budget = saved
        if parts is None or _value_size(parts) > _VALUE_LIMIT:
            parts = (Part(PartKind.UNKNOWN, _txt(node)),)
        return PathExpr(parts, _txt(node))

    def _charge(self, units: int) -> None:
        self._budget -= units
        if self._budget < 0:
            raise _TooMuchWork

    def _parts(self, node, first: bool, depth: int) -> list[Part]:
        parts = self._parts_raw(node, first, depth)
        if node is not None and any(p.kind is PartKind.UNKNOWN and not p.value for p in parts):
            # an unresolved part carries its source text: two different expressions differ,
            # the same expression is the same
            text = _txt(node)
            parts = [
                Part(PartKind.UNKNOWN, text) if p.kind is PartKind.UNKNOWN and not p.value else p
                for p in parts
            ]
        return parts

    def _parts_raw(self, node, first: bool, depth: int) -> list[Part]:
        if node is None:
            return [Part(PartKind.UNKNOWN)]
        self._charge(1)
        if depth > 20:
            return [Part(PartKind.UNKNOWN)]
        t = node.type
        if t in ("word", "number", "extglob_pattern", "regex"):
            s = _txt(node)
            if first and (s == "~" or s.startswith("~/")):
                return [Part(PartKind.HOME), Part(PartKind.LIT, _unescape_word(s[1:]))]
            return [Part(PartKind.LIT, _unescape_word(s))]
        if t == "raw_string":
            return [Part(PartKind.LIT, _txt(node)[1:-1])]
        if t == "ansi_c_string":
            return [Part(PartKind.LIT, _txt(node)[2:-1])]
        if t in ("string", "translated_string"):
            out: list[Part] = []
            for c in node.named_children:
                if c.type == "string_content":
                    out.append(Part(PartKind.LIT, _txt(c)))
                else:
                    out.extend(self._parts(c, False, depth + 1))
            if not node.named_children:
                out.append(Part(PartKind.LIT, ""))
            return out
        if t == "concatenation":
            out = []
            kids = list(node.children)
            carry = False
            for i, c in enumerate(kids):
                if carry:
                    carry = False
                    w = _txt(c)
                    m = re.match(r"[0-9]|[A-Za-z_]\w*", w)
                    if c.type == "word" and m:
                        out.extend(self._var(m.group(0), depth))
                        out.append(Part(PartKind.LIT, _unescape_word(w[m.end() :])))
                        continue
                if not c.is_named:
                    s = _txt(c)
                    if s == "$" and i + 1 < len(kids) and kids[i + 1].type == "word":
                        carry = True  # tree-sitter-bash splits `-$1.lock` into `$` and `1.lock`
                        continue
                    out.append(Part(PartKind.UNIQUE, "$") if s == "$$" else Part(PartKind.LIT, s))
                    continue
                out.extend(self._parts(c, first and i == 0, depth + 1))
            return out
        if t == "simple_expansion":
            kids = node.named_children
            if not kids:
                return [Part(PartKind.UNKNOWN)]
            return self._var(_txt(kids[0]), depth)
        if t == "expansion":
            return self._expansion(node, depth)
        if t == "command_substitution":
            return self._cmdsub(node, depth)
        return [Part(PartKind.UNKNOWN)]

    def _var(self, name: str, depth: int) -> list[Part]:
        if self.frames and name.isdigit() and name != "0":
            v = self.frames[-1].params.get(name)
            if v is None:
                return (
                    [Part(PartKind.UNKNOWN, "${" + name + "}")]
                    if self.frames[-1].params
                    else [Part(PartKind.ARG, name)]
                )
            self._charge(_value_size(v))
            return list(v)
        if name in ("$", "BASHPID", "RANDOM", "SRANDOM"):
            return [Part(PartKind.UNIQUE, name)]
        if name == "0":
            return [Part(PartKind.SCRIPT)]
        if name.isdigit() or name in ("@", "*"):
            return [Part(PartKind.ARG, name)]
        if name in ("?", "#", "!", "-", "_"):
            return [Part(PartKind.UNKNOWN, "${" + name + "}")]
        if name in self.env:
            v = self.env[name]
            if v is None:
                # a value known only at run time (read, a loop variable): `$f` and `${f}` are
                # one expression
                return [Part(PartKind.UNKNOWN, "${" + name + "}")]
            self._charge(_value_size(v))
            return list(v)
        if name == "HOME":
            return [Part(PartKind.HOME)]
        if name in ("USER", "LOGNAME", "UID", "EUID", "USERNAME"):
            return [Part(PartKind.USER, name)]
        if name == "PWD":
            return [Part(PartKind.CWD)]
        if name == "BASH_SOURCE":
            return [Part(PartKind.SCRIPT)]
        return [Part(PartKind.VAR, name)]

    def _expansion(self, node, depth: int) -> list[Part]:
        name = None
        op = ""
        operand = []
        seen_name = False
        for c in node.children:
            if c.type in ("${", "}"):
                continue
            if not seen_name and c.type in ("variable_name", "special_variable_name"):
                name = _txt(c)
                seen_name = True
                continue
            if not seen_name and c.type == "subscript":
                nm = c.child_by_field_name("name")
                idx = _txt(c.child_by_field_name("index"))
                if nm is not None and _txt(nm) == "BASH_SOURCE" and idx in ("0", ""):
                    name = "0"
                else:
                    name = None
                seen_name = True
                continue
            if not seen_name:
                if c.type == "#":
                    return [Part(PartKind.UNKNOWN)]
                continue
            if not c.is_named:
                op += c.type
            else:
                operand.append(c)
        if name is None:
            return [Part(PartKind.UNKNOWN)]
        if not op:
            return self._var(name, depth)
        op = op.strip()
        if op in (":-", "-", ":=", "="):
            params = self.frames[-1].params if self.frames and name.isdigit() else None
            if params:
                # a function's parameter: the call site's value, or the default when the call
                # passes none (or, for `:-`, an empty one)
                v = params.get(name)
                empty = v is not None and all(p.kind is PartKind.LIT and not p.value for p in v)
                if v is not None and not (empty and op.startswith(":")):
                    return list(v)
            known = name in self.env
            if not params and (
                known or name in ("HOME", "PWD", "USER", "LOGNAME", "UID", "$", "0")
            ):
                return self._var(name, depth)
            dparts: list[Part] = []
            for i, c in enumerate(operand):
                dparts.extend(self._parts(c, i == 0, depth + 1))
            default = PathExpr(_merge(dparts), "".join(_txt(c) for c in operand))
            if params:
                return list(default.parts)
            if op in (":=", "="):
                self.env[name] = default.parts
                return list(default.parts)
            if name.isdigit():
                return [Part(PartKind.ARG, name, default=default)]
            return [Part(PartKind.VAR, name, default=default)]
        base = self._var(name, depth)
        pat = "".join(_txt(c) for c in operand)
        if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
            if op in ("##", "#") and pat in ("*/",):
                return [Part(PartKind.SCRIPT_NAME)]
            if op in ("%", "%%") and pat == "/*":
                return [Part(PartKind.SCRIPT_DIR)]
        if op in ("%", "%%") and all(p.kind is PartKind.SCRIPT_NAME for p in base) and base:
            return base
        if op in ("%", "%%") and pat == "/*":
            pe = PathExpr(_merge(base))
            d = pe.dirname()
            if d is not None:
                return list(d.parts)
        return [Part(PartKind.UNKNOWN)]

    def _inner_cmds(self, node) -> list:
        out = []
        for c in node.named_children:
            if c.type in ("command", "list", "redirected_statement", "pipeline", "file_redirect"):
                out.append(c)
        return out

    def _cmdsub(self, node, depth: int) -> list[Part]:
        inner = self._inner_cmds(node)
        if len(inner) != 1:
            return [Part(PartKind.UNKNOWN)]
        c = inner[0]
        if c.type == "list":
            kids = [k for k in c.named_children]
            ops = [k.type for k in c.children if not k.is_named]
            if len(kids) == 2 and ops == ["&&"]:
                a, b = kids
                if a.type == "redirected_statement":
                    a = a.child_by_field_name("body") or a
                if b.type == "redirected_statement":
                    b = b.child_by_field_name("body") or b
                if (
                    a.type == "command"
                    and b.type == "command"
                    and self.cmd_name(a) == "cd"
                    and self.cmd_name(b) == "pwd"
                ):
                    args = [x for x in self.cmd_args(a) if not _txt(x).startswith("-")]
                    if len(args) == 1:
                        return self._parts(args[0], True, depth + 1)
            if len(kids) == 2 and ops == ["||"]:
                # `mktemp -d 2>/dev/null || mktemp -d -t x`: either way a fresh name
                sides = [self._cmdsub_one(k, depth) for k in kids]
                if all(len(x) == 1 and x[0].kind is PartKind.UNIQUE for x in sides):
                    return sides[0]
            return [Part(PartKind.UNKNOWN)]
        return self._cmdsub_one(c, depth)

    def _cmdsub_one(self, c, depth: int) -> list[Part]:
        """The value of one command in a command substitution."""
        if c.type == "redirected_statement":
            c = c.child_by_field_name("body") or c
        if c.type != "command":
            return [Part(PartKind.UNKNOWN)]
        name = self.cmd_name(c)
        args = [x for x in self.cmd_args(c)]
        ops = [x for x in args if not _txt(x).startswith("-")]
        flags = [_txt(x) for x in args if _txt(x).startswith("-")]
        if name == "dirname" and len(ops) == 1:
            base = self._parts(ops[0], True, depth + 1)
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [Part(PartKind.SCRIPT_DIR)]
            d = PathExpr(_merge(base)).dirname()
            return list(d.parts) if d is not None else [Part(PartKind.UNKNOWN)]
        if name == "basename" and ops:
            # basename -s SUFFIX NAME / basename NAME SUFFIX: the name is the first operand
            # that is not the -s argument
            skip = {
                id(args[i + 1]) for i, x in enumerate(args[:-1]) if _txt(x) in ("-s", "--suffix")
            }
            ops = [x for x in ops if id(x) not in skip] or ops
            base = self._parts(ops[0], True, depth + 1)
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [Part(PartKind.SCRIPT_NAME)]
            pe = PathExpr(_merge(base))
            if pe.is_literal:
                return [Part(PartKind.LIT, pe.render().rstrip("/").rsplit("/", 1)[-1])]
            return [Part(PartKind.UNKNOWN)]
        if name == "pwd":
            return [Part(PartKind.CWD)]
        if name in ("readlink", "realpath") and len(ops) == 1:
            return self._parts(ops[0], True, depth + 1)
        if name == "mktemp":
            return [Part(PartKind.UNIQUE, "mktemp")]
        if name in ("whoami", "logname") or (
            name == "id" and any(f.startswith("-u") for f in flags)
        ):
            return [Part(PartKind.USER, name)]
        if name == "echo" and len(ops) == 1 and not flags:
            return self._parts(ops[0], True, depth + 1)
        return [Part(PartKind.UNKNOWN)]

    def command_name_of_value(self, value) -> str | None:
        """FLOCK=/usr/bin/flock, FLOCK=$(command -v flock), FLOCK=`which flock`."""
        node = value
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        if node.type in ("word", "raw_string", "string_content"):
            s = _txt(node).strip("'\"")
            base = s.rsplit("/", 1)[-1]
            return base if base in ("flock", "lockfile", "dotlockfile", "shlock", "mkdir") else None
        if node.type == "command_substitution":
            inner = self._inner_cmds(node)
            if len(inner) == 1 and inner[0].type == "redirected_statement":
                inner = [inner[0].child_by_field_name("body")]
            if len(inner) == 1 and inner[0] is not None and inner[0].type == "command":
                c = inner[0]
                if _txt(c.child_by_field_name("name")).lstrip("\"'").startswith(("$(", "`")):
                    return None  # `$($(...) -v x)` names no lock tool (and nests without end)
                n = self.cmd_name(c)
                args = [_txt(a) for a in self.cmd_args(c)]
                if n in ("command", "which", "type") and args:
                    return args[-1].strip("'\"")
        return None

    # ------------------------------------------------------------------ commands
    def cmd_name(self, cmd) -> str:
        name = cmd.child_by_field_name("name")
        if name is None:
            return ""
        kids = name.named_children
        node = kids[0] if kids else name
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        if node.type == "simple_expansion" or node.type == "expansion":
            var = _txt(node).strip("${}")
            return self.cmdvars.get(var, "$" + var)
        if node.type == "command_substitution":
            n = self.command_name_of_value(node)
            return n or "$(...)"
        s = _unescape_word(_txt(node).strip("'\""))
        return s.rsplit("/", 1)[-1] if "/" in s else s

    def cmd_args(self, cmd) -> list:
        out = []
        for i, c in enumerate(cmd.children):
            f = cmd.field_name_for_child(i)
            if f == "argument":
                out.append(c)
        return out

    def unwrap(self, cmd):
        """(name, args, prefixes) after wrappers like exec/command/nohup/setsid."""
        name = self.cmd_name(cmd)
        args = self.cmd_args(cmd)
        prefixes = []
        guard = 0
        while guard < 5 and (name in WRAPPERS or name in ("nohup", "setsid", "timeout")) and args:
            guard += 1
            prefixes.append(name)
            if name == "exec" and _txt(args[0]).startswith("{"):
                break
            # skip the wrapper's own options (and timeout's duration)
            while args and _txt(args[0]).startswith("-"):
                args = args[1:]
            if name == "timeout" and args:
                args = args[1:]
            if name == "env":
                while args and "=" in _txt(args[0]):
                    args = args[1:]
            if name in ("nice",) and args and _txt(args[0]).lstrip("-").isdigit():
                args = args[1:]
            if not args:
                break
            a0 = args[0]
            s = a0
            if s.type == "string" and len(s.named_children) == 1:
                s = s.named_children[0]
            if s.type in ("simple_expansion", "expansion"):
                var = _txt(s).strip("${}")
                name = self.cmdvars.get(var, "$" + var)
            elif s.type == "command_substitution":
                name = self.command_name_of_value(s) or "$(...)"
            else:
                w = _unescape_word(_txt(a0).strip("'\""))
                name = w.rsplit("/", 1)[-1]
            args = args[1:]
        return name, args, prefixes

    def redirect_info(self, r):
        """(fd or None, operator, destination node) of a file_redirect."""
        if r.type != "file_redirect":
            return None
        fd = None
        op = ""
        dest = None
        for i, c in enumerate(r.children):
            f = r.field_name_for_child(i)
            if f == "descriptor" or c.type == "file_descriptor":
                fd = _txt(c)
            elif f == "destination":
                dest = (
                    c
                    if dest is None
                    else _Joined(dest, c, self.src if self.offmap is None else self._sub_src)
                )
            elif not c.is_named or c.type == "ERROR":
                op += _txt(c)
        return fd, op.replace(" ", ""), dest

    def command(self, cmd, pos: Pos, redirects, stmt_node) -> None:
        if cmd is None:
            name, args, prefixes = ":", [], []
        else:
            if self._split_assignment(cmd):
                return
            name, args, prefixes = self.unwrap(cmd)
            # prefix assignments (FOO=x cmd) do not touch the script's variables
        argt = [_txt(a) for a in args]
        for a, t in zip(args, argt, strict=False):
            if "flock" in t and not self.in_trap:
                self._walk_substitutions(a, None, flock_only=True)  # echo "$(flock L cmd)"
        background = pos.background
        if "nohup" in prefixes and background:
            background = "nohup"
        if "setsid" in prefixes:
            background = background or "setsid"
        # command substitutions inside arguments may hold commands of interest (kill -0 ...)
        # exec with fds / redirects
        if name == "exec" or (name in ("exec",) and not args):
            self.exec_(cmd, args, redirects, pos)
            return
        if name == "set":
            self.set_(argt)
            return
        if name == "trap":
            self.trap_(cmd, args, pos)
            return
        if name == "wait":
            self.pending_bg = []
            return
        if name == "disown":
            # a disowned child is never waited for: the children started so far stay reported
            self.facts.backgrounds.extend(self.pending_bg)
            self.pending_bg = []
            return
        if name == "lockfile-touch":
            background = None  # refreshes the lock's age; killed before the release
        if background and cmd is not None:
            closes = any(
                (self.redirect_info(r) or (None, ""))[1] in (">&-", "<&-") for r in redirects
            )
            if not closes:
                self.background_at(cmd, background)
        # functions: walk the body where it is called
        if name in self.functions and cmd is not None and not self.in_trap:
            self.call(name, cmd, args, pos)
            self.redirect_writes(redirects, pos, cmd)
            return
        if name == "mkdir":
            self.mkdir_(cmd, args, pos, redirects)
        elif name == "flock":
            self.flock_(cmd, args, pos, prefixes, redirects)
        elif name == "lock" and self._openwrt_lock():
            self.openwrt_lock_(cmd, args, pos)
        elif name in ("ln",):
            self.ln_(cmd, args, pos)
        elif name == "dotlockfile" and any(_txt(a) in ("-u", "--unlock") for a in args):
            ops = [a for a in args if not _txt(a).startswith("-")]
            for a in ops[-1:]:
                self.add_removal(cmd, self.resolve(a), a, 1, pos)
        elif name in ("lockfile", "lockfile-create", "dotlockfile", "shlock"):
            self.lockfile_(cmd, name, args, pos)
        elif name in REMOVERS:
            self.remove_(cmd, name, args, pos)
        elif name == "lockfile-remove":
            for a in args:
                if not _txt(a).startswith("-"):
                    p = self.resolve(a)
                    if not p.key().endswith(".lock"):
                        p = PathExpr(_merge([*p.parts, Part(PartKind.LIT, ".lock")]), p.text)
                    self.add_removal(cmd, p, a, 1, pos)
        elif name in ("mkfifo", "mknod"):
            ops = [a for a in args if not _txt(a).startswith("-")]
            if name == "mkfifo" or (len(ops) >= 2 and _txt(ops[1]) == "p"):
                for a in ops if name == "mkfifo" else ops[:1]:
                    self.fifos.add(self.resolve(a).key())
        elif name == "touch":
            for a in args:
                if not _txt(a).startswith("-"):
                    self.created_path(self.resolve(a), cmd, pos)
        elif name in ("kill", "pkill"):
            self.kill_(cmd, name, args, pos)
        elif name in ("ps", "pgrep", "pidof"):
            self.ps_(cmd, name, args, pos)
        elif name in ("[", "test"):
            self.bracket_test(cmd, args, pos)
        elif name == "find":
            self.find_(cmd, args, pos)
        elif name == "read":
            skip = False
            for a in argt:
                if skip:
                    skip = False
                    continue
                if a in ("-p", "-d", "-n", "-N", "-t", "-u", "-a", "-i"):
                    skip = True
                    continue
                if not a.startswith("-"):
                    self.env[a] = None  # read at run time
                    self.pidvars.pop(a, None)
            src = self.stdin[-1] if self.stdin else None
            for r in redirects:
                info = self.redirect_info(r)
                if info and info[1] in ("<", "<>") and info[0] in (None, "0"):
                    src = self.resolve(info[2])
            if src is not None:
                for a in argt:
                    if not a.startswith("-") and a in self.env:
                        self.pidvars[a] = src
        elif name in ("export", "readonly", "local", "declare", "typeset"):
            pass
        elif name == "eval":
            # code run by eval is not analysed; paths it names are the script's own business
            for m in re.finditer(r"\$\{?(\w+)\}?", " ".join(argt)):
                if not m.group(1).isdigit():
                    self.facts.created.append(PathExpr(tuple(self._var(m.group(1), 0))))
        elif name == "start-stop-daemon":
            for i, a in enumerate(argt):
                if a in ("--pidfile", "-p") and i + 1 < len(args):
                    self.facts.created.append(self.resolve(args[i + 1]))
        self.redirect_writes(redirects, pos, cmd or stmt_node, name)

    # ------------------------------------------------------------------ set / exec
    def set_(self, argt: list[str]) -> None:
        i = 0
        while i < len(argt):
            a = argt[i]
            if a in ("-o", "+o") and i + 1 < len(argt):
                opt = argt[i + 1]
                on = a == "-o"
                if opt == "errexit":
                    self.set_e = on
                elif opt == "noclobber":
                    self.noclobber = on
                i += 2
                continue
            if a.startswith("-") and not a.startswith("--"):
                if "e" in a:
                    self.set_e = True
                if "C" in a:
                    self.noclobber = True
            elif a.startswith("+"):
                if "e" in a:
                    self.set_e = False
                if "C" in a:
                    self.noclobber = False
            i += 1

    def exec_(self, cmd, args, redirects, pos: Pos) -> None:
        fdvar = None
        if args:
            a0 = _txt(args[0])
            m = re.fullmatch(r"\{(\w+)\}", a0)
            if m:
                fdvar = m.group(1)
        for r in redirects:
            info = self.redirect_info(r)
            if not info:
                continue
            fd, op, dest = info
            if op in (">&-", "<&-"):
                if fd in self.fds:
                    self.fds.pop(fd, None)
                continue
            if fdvar is not None and fd is None:
                key = "$" + fdvar
                self.fdvars.add(fdvar)
                self.env[fdvar] = None
                path = self.resolve(dest)
                self.fds[key] = FdInfo(
                    path,
                    self.span(cmd if cmd is not None else r),
                    op in (">", ">|"),
                    unchecked=not (pos.tested or self.set_e),
                )
                self.facts.created.append(path)
                fdvar = None
                continue
            if fd is not None and fd not in ("0", "1", "2") and dest is not None:
                path = self.resolve(dest)
                span_node = (
                    cmd.parent
                    if cmd is not None
                    and cmd.parent is not None
                    and cmd.parent.type == "redirected_statement"
                    else (cmd or r)
                )
                self.fds[fd] = FdInfo(
                    path,
                    self.span(span_node),
                    op in (">", ">|"),
                    unchecked=not (pos.tested or self.set_e),
                )
                self.facts.created.append(path)
                continue
            if fd in (None, "1", "2") and dest is not None:
                d = _txt(dest)
                if op in (">>", "&>>") and not d.startswith("/dev/"):
                    self.durable_global = True
                if dest.type == "process_substitution" and re.search(
                    r"\b(logger|systemd-cat)\b|\btee\s+(-\w*a|--append)", d
                ):
                    self.durable_global = True
                if (
                    op in (">", "&>")
                    and not d.startswith(("/dev/", "&"))
                    and dest.type != "process_substitution"
                    and not d.isdigit()
                ):
                    self.durable_global = True
        if args and fdvar is None:
            # exec cmd ... : the command replaces the shell
            pass

    # ------------------------------------------------------------------ functions
    def call(self, name: str, cmd, args, pos: Pos) -> None:
        self.called.add(name)
        if (
            any(f.name == name for f in self.frames)
            or len(self.frames) > 6
            or self.inlines > 400
            or self.inlined > 16 * len(self.src) + 65536  # a big helper called 400 times
        ):
            return
        self.inlines += 1
        fn = self.functions[name]
        self.inlined += fn.end_byte - fn.start_byte
        params = {}
        for i, a in enumerate(args[:9], start=1):
            params[str(i)] = self.resolve(a).parts
        params["#"] = ()
        frame = Frame(
            name, params, pos.tail, pos.on_fail if pos.tested else None, len(self.frames) + 1
        )
        frame.pos = pos
        self.frames.append(frame)
        body = self._fn_body(fn)
        stmts = (
            self.statements(body)
            if body.type in ("compound_statement", "subshell")
            else [(body, False)]
        )
        frame.last = (stmts[-1][0].start_byte, stmts[-1][0].end_byte) if stmts else None
        cond = pos if pos.tested else self._status_pos(pos)
        last_node = stmts[-1][0] if stmts else None
        if (
            cond is not None
            and last_node is not None
            and last_node.type not in ("if_statement", "case_statement", "while_statement")
            and not re.match(r"\s*(return|exit)\b", _txt(last_node))
        ):
            # the function's status is its last command's: that command is what the caller tests
            self.walk_seq(stmts[:-1], tail=False)
            self.order += 1
            self.stmt(last_node, cond)
        else:
            self.walk_seq(stmts, tail=pos.tail)
        self.frames.pop()

    # ------------------------------------------------------------------ facts helpers
    def _dedupe(self, key) -> bool:
        if key in self.seen_other:
            return False
        self.seen_other.add(key)
        return True

    def add_acquire(self, acq: Acquire) -> int | None:
        if self.in_trap:
            return None  # a trap that locks: not an acquisition of the run
        if acq.kind is LockKind.EXISTENCE and acq.path is not None and acq.path.has_unique:
            return None  # a per-process name ($$, $(mktemp)) excludes no other run
        key = (acq.kind, acq.span.start, acq.path.key() if acq.path else None)
        if key in self.seen_acq:
            old = self.facts.acquires[self.seen_acq[key]]
            if old.busy is None and acq.busy is not None:
                # the same command reached again (a helper called from several places): keep
                # the call whose status decides the run
                old.busy = acq.busy
                old.status_handled = acq.status_handled and old.status_handled
                old.nonblocking = old.nonblocking or acq.nonblocking
            elif not acq.status_handled:
                old.status_handled = False
            return None
        if self.frames:
            acq.function = self.frames[-1].name
        idx = len(self.facts.acquires)
        self.seen_acq[key] = idx
        self.facts.acquires.append(acq)
        self.acq_order.append(self.order)
        self.acq_keys.append(acq.path.key() if acq.path else "")
        self.acq_top.append(self.top_stmt if self.offmap is None else None)
        return idx

    def in_init_action(self) -> str | None:
        if self.actions:
            return self.actions[-1]
        if self.rc_common:
            # OpenWrt's /etc/rc.common calls the script's start()/stop()/start_service()...
            for f in reversed(self.frames):
                name = f.name.removesuffix("_service")
                if name in ("start", "stop", "restart", "reload", "status", "boot", "shutdown"):
                    return name
        return None

    # ------------------------------------------------------------------ busy branches
    def busy_of(self, pos: Pos, acq_node, fail_status: int) -> BusyBranch | None:
        """The busy branch of an acquire whose status is used as ``pos`` says."""
        if pos.retry:
            return None
        br = pos.on_fail
        if br is None:
            if self.set_e and not pos.tested:
                return BusyBranch(
                    self.span(acq_node), True, fail_status, durable=self.durable_global
                )
            return None
        status = br.status if br.status is not None else fail_status
        if br.fallthrough and br.status == 1:
            status = fail_status
        if pos.negated and br.status is not None:
            status = 0
        return self.branch_outcome(br, status, acq_node)

    def branch_outcome(self, br: Branch, status, acq_node, depth: int = 0) -> BusyBranch | None:
        busy = self._branch_outcome(br, status, acq_node, depth)
        if busy is not None:
            for node, _ in self._flatten(br.stmts[:60] if br.fallthrough else br.stmts):
                if node.type == "command" and self.cmd_name(node) == "trap":
                    a = [_txt(x).upper() for x in self.cmd_args(node)]
                    if a and a[0] in ("-", "''", '""') and any(x in SIGNALS_EXIT for x in a[1:]):
                        self.untrapping.add(id(busy))
        return busy

    def _branch_outcome(self, br: Branch, status, acq_node, depth: int = 0) -> BusyBranch | None:
        last = status
        durable = self.durable_global
        first = None
        last_simple = None
        stmts = self._flatten(br.stmts[:60] if br.fallthrough else br.stmts)
        action = self.in_init_action() if self.facts.init_script else None
        lsb = bool(action and "start" in action.split("|"))
        for node, _bg in stmts:
            if first is None:
                first = node
            if node.type == "if_statement" and depth < 3:
                # `if holder_alive; then echo running; exit 0; fi; <takeover>`: the skip is the
                # nested exit
                nested = self._nested_exit(node, acq_node, depth)
                if nested is not None:
                    return nested
            kind, info = self.classify_busy_stmt(node)
            if kind == "durable":
                durable = True
                last = 0
                last_simple = node
                continue
            if kind == "zero":
                last = 0
                last_simple = node
                continue
            if kind == "status":
                last = info
                last_simple = node
                continue
            if kind == "retry":
                gone = self._removal_then_exit(node, stmts)
                if gone is None:
                    return None
                # the lock removed, then the branch exits without trying again: a skip
                last = gone
                last_simple = node
                continue
            if kind == "exit":
                exit_node, arg, fix = info
                if exit_node is not node or self._helper_durable(self.unwrap(node)[0]):
                    durable = True  # the helper records before it exits (`die` that logs)
                st = last if arg == "" else self.number_of(arg)
                ends = True
                if self.subshells and not self.in_trap:
                    # exit leaves only the subshell: the run ends if the subshell is last or
                    # its failure stops the script
                    sp = self.subshells[-1]
                    ends = sp.tail or (self.set_e and st != 0 and not sp.tested)
                return BusyBranch(self.span(exit_node), ends, st, durable, lsb, fix)
            if kind == "return":
                exit_node, arg, _fix = info
                st = last if arg == "" else self.number_of(arg)
                fr = br.frame
                if fr is not None and depth < 4:
                    cpos = fr.pos
                    if cpos is not None and cpos.tested and cpos.on_fail is not None and st != 0:
                        return self.branch_outcome(cpos.on_fail, st, acq_node, depth + 1)
                    if fr.tail or (
                        self.set_e and st not in (0, None) and cpos is not None and not cpos.tested
                    ):
                        return BusyBranch(self.span(exit_node), True, st, durable, lsb, _fix)
                    if cpos is not None and not cpos.tested and cpos.rest and st == 0:
                        nb = Branch(cpos.rest, 0, fallthrough=True, tail=cpos.tail)
                        return self.branch_outcome(nb, 0, acq_node, depth + 1)
                return BusyBranch(self.span(exit_node), False, st, durable, lsb, _fix)
            # other work
            if br.fallthrough:
                return BusyBranch(self.span(first or acq_node), False, None, durable, lsb)
            last = None
            last_simple = None
        # falls off the end of the branch
        if br.fallthrough or br.tail:
            if br.tail or (br.fallthrough and not br.stmts):
                fix = None
                holder = last_simple.parent if last_simple is not None else None
                if holder is not None and holder.type == "redirected_statement":
                    last_simple, holder = holder, holder.parent
                if (
                    last_simple is not None
                    and holder is not None
                    and holder.type
                    in ("else_clause", "if_statement", "compound_statement", "program")
                    and self.offmap is None
                ):
                    e = self._c(last_simple.end_byte)
                    s0 = self._c(last_simple.start_byte)
                    ls = self.text.rfind("\n", 0, s0) + 1
                    indent = self.text[ls:s0] if not self.text[ls:s0].strip() else ""
                    fix = FixTemplate(
                        "exit with {code}", (Edit(e, e, "\n" + indent + "exit {code}"),)
                    )
                span = self.span(first) if first is not None else self.span(acq_node)
                ends = br.tail
                return BusyBranch(span, ends, last, durable, lsb, fix)
        return BusyBranch(self.span(first or acq_node), False, last, durable, lsb)

    _RETAKE = re.compile(
        r"\b(?:mkdir|ln|touch|flock|lockfile|lockfile-create|dotlockfile|shlock|exec|sleep"
        r"|continue|kill|pkill)\b|\$\$\s*>|\$\{?0\b"
    )

    def _removal_then_exit(self, node, stmts) -> int | None:
        """`rm -f L; exit 0` in a busy branch: a removal that the branch follows with an exit
        and no new attempt (no re-create, retry, kill or re-run of the script) is no
        takeover.  The status the removal leaves ($? for a bare exit; None when unknown)."""
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return None
        name, args, _p = self.unwrap(node)
        if name not in REMOVERS:
            return None
        after = []
        for k, (n, _) in enumerate(stmts):
            if n.start_byte <= node.start_byte < n.end_byte:
                after = [m for m, _ in stmts[k + 1 :]]
                break
        for n in after:
            if self._RETAKE.search(_txt(n)):
                return None
            kind, _info = self.classify_busy_stmt(n)
            if kind == "exit":
                break
            if kind in ("retry", "return", "other"):
                return None
        else:
            return None
        forced = any(re.fullmatch(r"-\w*f\w*|--force", _txt(a)) for a in args)
        return 0 if forced else None

    def _nested_exit(self, node, acq_node, depth: int) -> BusyBranch | None:
        _conds, body, other = self._if_parts(node)
        branches = [[(c, False) for c in body]]
        if other is not None and other.type == "else_clause":
            branches.append(self.statements(other))
        for stmts in branches:
            if not stmts or re.search(r"\b(sleep|continue)\b", " ".join(_txt(n) for n, _ in stmts)):
                continue
            last = stmts[-1][0]
            if last.type == "command" and self.cmd_name(last) == "exit":
                busy = self._branch_outcome(Branch(stmts, None), None, acq_node, depth + 1)
                if busy is not None and busy.ends_run:
                    return busy
        return None

    def _flatten(self, stmts) -> list:
        out = []
        for node, bg in stmts:
            if node.type == "compound_statement":
                out.extend(self._flatten(self.statements(node)))
            elif node.type == "list":
                kids = [c for c in node.children if c.type not in STATEMENT_SKIP]
                if len(kids) == 3 and kids[1].type == "&&":
                    out.extend(self._flatten([(kids[0], False), (kids[2], False)]))
                else:
                    out.append((node, bg))
            elif node.type == "redirected_statement":
                body = node.child_by_field_name("body")
                reds = [c for c in node.children if c.type == "file_redirect"]
                if body is not None and body.type == "compound_statement":
                    if any(self._durable_redirect(r) for r in reds):
                        out.append((node, bg))
                    out.extend(self._flatten(self.statements(body)))
                else:
                    out.append((node, bg))
            else:
                out.append((node, bg))
        return out

    def number_of(self, arg: str) -> int | None:
        s = arg.strip("'\"")
        if s.isdigit():
            return int(s)
        m = re.fullmatch(r"\$\{?(\w+)\}?", s)
        if m:
            v = self.env.get(m.group(1))
            if v and len(v) == 1 and v[0].kind is PartKind.LIT and v[0].value.isdigit():
                return int(v[0].value)
        return None

    def classify_busy_stmt(self, node):
        t = node.type
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            reds = [c for c in node.children if c.type == "file_redirect"]
            d = any(self._durable_redirect(r) for r in reds)
            if body is None:
                return ("durable" if d else "zero", None)
            k, info = self.classify_busy_stmt(body)
            if d and k in ("zero", "status", "other"):
                return ("durable", None)
            return k, info
        if t in ("compound_statement",):
            # classify the last meaningful command; durable if any is durable
            kids = [c for c, _ in self.statements(node)]
            res = ("zero", None)
            dur = False
            for k in kids:
                res = self.classify_busy_stmt(k)
                if res[0] == "durable":
                    dur = True
                if res[0] in ("exit", "return", "retry"):
                    return res
            if dur:
                return ("durable", None)
            return res
        if t == "list":
            kids = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            res = ("zero", None)
            dur = False
            for k in kids:
                res = self.classify_busy_stmt(k)
                if res[0] == "durable":
                    dur = True
                if res[0] in ("exit", "return", "retry"):
                    return res
            return ("durable", None) if dur else res
        if t == "pipeline":
            kids = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            dur = any(self.classify_busy_stmt(k)[0] == "durable" for k in kids)
            return (
                ("durable", None)
                if dur
                else self.classify_busy_stmt(kids[-1])
                if kids
                else ("zero", None)
            )
        if t in ("while_statement", "until_statement", "for_statement"):
            return ("other", None)
        if t == "if_statement":
            txt = _txt(node)
            if re.search(r"\b(sleep|continue|rm|rmdir|unlink|kill)\b", txt):
                return ("retry", None)  # a retry, or a takeover (remove/kill, then retry)
            if re.search(r">>|\blogger\b|tee\s+-a|systemd-cat", txt):
                return ("durable", None)
            return ("status", None)
        if t == "variable_assignment" or t == "declaration_command":
            return ("status", None)
        if t == "test_command":
            return ("status", None)
        if t != "command":
            return ("other", None)
        name, args, _p = self.unwrap(node)
        argt = [_txt(a) for a in args]
        if name in ("exit", "return"):
            arg = argt[0] if argt else ""
            if arg:
                num = args[0]
                fix = FixTemplate(
                    "exit with {code}",
                    (Edit(self._c(num.start_byte), self._c(num.end_byte), "{code}"),),
                )
            else:
                e = self._c(node.end_byte)
                fix = FixTemplate("exit with {code}", (Edit(e, e, " {code}"),))
            return (name, (node, arg, fix))
        if name in ("sleep", "continue", "usleep"):
            return ("retry", None)
        if name in ("kill", "pkill") or name in REMOVERS:
            return ("retry", None)
        if name in ("logger", "systemd-cat"):
            return ("durable", None)
        if name == "tee" and any(
            a in ("-a", "--append") or (a.startswith("-") and "a" in a and not a.startswith("--"))
            for a in argt
        ):
            return ("durable", None)
        if name in self.functions:
            ex = self._helper_exit(name)
            if ex is not None:
                return ("exit", (node, ex, None))
            if self._helper_durable(name):
                return ("durable", None)
            return ("zero", None)
        if name in ZERO_CMDS:
            return ("zero", None)
        if name == "false":
            return ("status", 1)
        return ("status", None)

    def _helper_durable(self, name: str) -> bool:
        fn = self.functions.get(name)
        return fn is not None and bool(
            re.search(r">>|\blogger\b|tee\s+(-\w*a|--append)|systemd-cat", _txt(fn))
        )

    def _helper_exit(self, name: str) -> str | None:
        """The status a helper that exits (`die`, `fail`) ends the run with, as an argument
        for :meth:`number_of`: `exit 3` -> "3"; `exit ${FAIL_CODE:=1}` -> the variable's value
        when the script sets it, else the default; a bare `exit` after a message -> "0";
        "" when the status is the caller's last; None when the helper does not exit."""
        m = re.search(
            r"\bexit\b(?:[ \t]+(\"?\$\{[^}]*\}\"?|[^;\s}&|]+))?", _txt(self.functions[name])
        )
        if m is None:
            return None
        arg = (m.group(1) or "").strip().strip('"')
        d = re.fullmatch(r"\$\{(\w+):?[-=](\d+)\}", arg)
        if d:
            known = self.number_of("$" + d.group(1))
            return str(known) if known is not None else d.group(2)
        if arg:
            return arg
        stmts = self.statements(self._fn_body(self.functions[name]))
        for k, (n, _) in enumerate(stmts):
            if re.match(r"exit\s*$", _txt(n).strip()) and k > 0:
                if self.classify_busy_stmt(stmts[k - 1][0])[0] in ("zero", "durable"):
                    return "0"  # `echo "$*" >&2; exit`: the message's status
        return ""

    def _durable_redirect(self, r) -> bool:
        info = self.redirect_info(r)
        if not info:
            return False
        fd, op, dest = info
        d = _txt(dest)
        if dest is None or d.startswith("/dev/") or d.startswith("&") or d.isdigit():
            return False
        if op in (">>", "&>>"):
            return True
        if op in (">", "&>", ">|") and fd in (None, "1", "2"):
            return True
        return False

    # ------------------------------------------------------------------ lock kinds
    def _first_success_cmd(self, pos: Pos):
        br = pos.on_success
        if br is None:
            if not pos.tested and pos.rest:
                return pos.rest[0][0]
            return None
        if not br.stmts:
            return None
        n = br.stmts[0][0]
        for _ in range(6):
            if n.type == "list" and n.named_children:
                n = n.named_children[0]
            elif n.type == "if_statement":
                conds = self._if_parts(n)[0]
                if not conds:
                    break
                n = conds[-1]
            elif n.type in ("negated_command", "redirected_statement"):
                kids = [c for c in n.named_children if c.type not in STATEMENT_SKIP]
                body = n.child_by_field_name("body") if n.type == "redirected_statement" else None
                n = body or (kids[0] if kids else n)
                if n.type == "redirected_statement" or not kids:
                    break
            else:
                break
        return n

    def _removes(self, node, key: str) -> bool:
        if node is None:
            return False
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return False
        name, args, _ = self.unwrap(node)
        if name not in REMOVERS:
            return False
        return any(self.resolve(a).key() == key for a in args if not _txt(a).startswith("-"))

    def maybe_probe(self, cmd, path: PathExpr, pos: Pos, create_text_span) -> bool:
        nxt = self._first_success_cmd(pos)
        if nxt is None or not self._removes(nxt, path.key()):
            return False
        if self._dedupe(("probe", cmd.start_byte, path.key())):
            fix = self._probe_fix(cmd, nxt, path)
            self.facts.probes.append(Probe(path, self.span(cmd), fix))
        return True

    def _probe_fix(self, create, remove, path: PathExpr) -> FixTemplate | None:
        edits = []
        for c in (create, remove):
            if c.type == "redirected_statement":
                c = c.child_by_field_name("body") or c
            args = []
            if c.type == "command":
                args = self.cmd_args(c)
            hit = None
            for a in args:
                if self.resolve(a).key() == path.key():
                    hit = a
            if hit is None and create.parent is not None:
                for r in create.parent.children if create.parent else []:
                    if r.type == "file_redirect":
                        info = self.redirect_info(r)
                        if (
                            info
                            and info[2] is not None
                            and self.resolve(info[2]).key() == path.key()
                        ):
                            hit = info[2]
            if hit is None:
                return None
            e = self._c(hit.end_byte)
            if hit.type == "string":
                e -= 1
            edits.append(Edit(e, e, ".$$"))
        return FixTemplate("append `.$$` to the probe's name", tuple(edits))

    def existence(
        self, cmd, mechanism: str, path: PathExpr, pos: Pos, fail_status: int = 1
    ) -> int | None:
        acq = Acquire(LockKind.EXISTENCE, mechanism, path, self.span(cmd))
        acq.busy = self.busy_of(pos, cmd, fail_status)
        self.loser_exits[id(acq)] = acq.busy is not None or (
            pos.on_fail is not None and not pos.retry and self._branch_exits(pos.on_fail)
        )
        br = pos.on_fail
        # a skip (status 0 or EX_TEMPFAIL), a retry loop or a takeover reads as a lock; an
        # error exit (`mkdir "$OUT" || exit 1`) only with a lock-like name or a later removal
        skipping = (
            br is not None
            and not br.fallthrough
            and (acq.busy is None or (acq.busy.status in (0, 75) and self._branch_exits(br)))
        )
        if (
            br is not None
            and not br.fallthrough
            and br.stmts
            and all(_txt(n).strip() in (":", "true") for n, _ in br.stmts)
        ):
            self.facts.created.append(path)  # `mkdir D ||:`: the failure is ignored
            return None
        if br is not None and br.stmts and self._makes_instead(br, path):
            # `ln -s A D || cp A D`: the failure branch makes the same name another way
            self.facts.created.append(path)
            return None
        ret = (
            re.match(r"\s*(?:\{\s*)?return(?:\s+(\d+))?\s*(?:[;}]|$)", _txt(br.stmts[0][0]))
            if br is not None and not br.fallthrough and br.stmts
            else None
        )
        if (
            ret is not None
            and (ret.group(1) is None or int(ret.group(1)) not in (0, 75))
            and (acq.busy is None or not acq.busy.ends_run)
            and mechanism in ("mkdir", "ln", "noclobber >")
            and not lockish_text(path.render().rsplit("/", 1)[-1])
        ):
            # `ln -s "$cached" "$f" || return 1` in a helper whose caller falls back to other
            # work: an error return, not a busy branch
            self.facts.created.append(path)
            return None
        strong = pos.retry or skipping
        weak = not strong and mechanism in ("mkdir", "ln", "noclobber >")
        if (
            self.facts.init_script
            and lockish_text(path.render())
            and "pid" in path.render().lower()
        ):
            acq.service_record = True
        idx = self.add_acquire(acq)
        if idx is not None and weak:
            self.weak.add(idx)
        if (
            idx is not None
            and br is not None
            and br.fallthrough
            and not pos.retry
            and mechanism in ("mkdir", "ln", "noclobber >")
        ):
            self.gates.add(idx)
        if idx is not None:
            self.held.append(idx)
        return idx

    def mkdir_(self, cmd, args, pos: Pos, redirects) -> None:
        argt = [_txt(a) for a in args]
        parents = (
            any(a.startswith("-") and not a.startswith("--") and "p" in a for a in argt)
            or "--parents" in argt
        )
        ops = []
        skip = False
        for a, s in zip(args, argt, strict=False):
            if skip:
                skip = False
                continue
            if s in ("-m", "--mode"):
                skip = True
                continue
            if s.startswith("-"):
                continue
            ops.append(a)
        for a in ops:
            path = self.resolve(a)
            if parents:
                self.facts.dirs_made.append(path)
                if len(ops) == 1 and (pos.tested or pos.retry or self._status_tested_next(pos)):
                    self.mkdir_p_guard(cmd, a, path, pos if pos.tested else self._status_pos(pos))
                continue
            if self.maybe_probe(cmd, path, pos, None):
                continue
            if pos.tested or pos.retry or self._status_tested_next(pos):
                p = pos if pos.tested else self._status_pos(pos)
                self.existence(cmd, "mkdir", path, p)
            elif self.set_e:
                n = len(self.facts.acquires)
                self.created_path(path, cmd, pos, directory=True)
                self.facts.created.pop()
                if len(self.facts.acquires) == n:
                    self.sete_mkdirs.append((cmd, path, pos, self.order))
            else:
                self.created_path(path, cmd, pos, directory=True)

    def mkdir_p_guard(self, cmd, operand, path: PathExpr, pos: Pos) -> None:
        """`mkdir -p L || exit`, `if ! mkdir -p L; then ...`: `-p` succeeds on an existing
        directory, so the branch its failure leads to never runs (LCK109) - when that branch
        reads as a busy branch (a skip, a retry, or an exit with a lock-like name); finish()
        drops the directories that hold other files or locks."""
        if path.has_unique:
            return
        br = pos.on_fail
        busy = self.busy_of(pos, cmd, 1)
        if not pos.retry:
            if br is None or br.fallthrough or not br.stmts:
                return
            if busy is None or not busy.ends_run:
                return
            skip = busy.status in (0, 75)
            if not skip and not lockish_text(path.render().rstrip("/").rsplit("/", 1)[-1]):
                return  # `mkdir -p "$OUT" || exit 1`: an output directory that cannot be made
        self.mkdir_p_guards.append(
            (
                NonExclusiveCreate(
                    path,
                    self.span(cmd),
                    "mkdir -p",
                    "-p",
                    busy=busy,
                    function=self._frame_name() or None,
                ),
                self._c(cmd.end_byte),
            )
        )

    def _status_tested_next(self, pos: Pos) -> bool:
        return self._status_pos(pos) is not None

    def _status_pos(self, pos: Pos) -> Pos | None:
        """``cmd; if [ $? -ne 0 ]; then ...`` / ``cmd; rc=$?; ...``: a Pos for the command."""
        if pos.tested or not pos.rest:
            return None
        nxt = pos.rest[0][0]
        rest = pos.rest[1:]
        var = self._status_var(nxt)
        if var is not None:
            # `rc=$?`, then commands that leave rc alone (`echo "flock: $rc"`), then its test
            nxt = None
            for k, (n, _) in enumerate(rest[:6]):
                if not self._keeps_var(n, var):
                    nxt, rest = n, rest[k + 1 :]
                    break
            if nxt is None:
                return None
        pat = r"\$\?|\$\{\?\}" if var is None else r"\$\{?" + re.escape(var) + r"\b"
        if var is not None:
            # `(( rc == 75 ))`: a bare name inside arithmetic
            pat += r"|\(\(.*\b" + re.escape(var) + r"\b.*\)\)"
        fr = self.frames[-1] if self.frames else None
        if nxt.type == "if_statement":
            conds, body, other = self._if_parts(nxt)
            ctext = " ".join(_txt(c) for c in conds)
            if not re.search(pat, ctext):
                return None
            failing = self._status_test_true_when_failed(ctext)
            if failing is None:
                return None
            then_b = Branch([(c, False) for c in body], 0, tail=pos.tail and not rest, frame=fr)
            els = self._else_stmts(other)
            else_b = (
                Branch(els, 1, tail=pos.tail and not rest, frame=fr)
                if els is not None
                else Branch(rest, 0, fallthrough=True, tail=pos.tail and not rest, frame=fr)
            )
            if failing:
                return Pos(tested=True, on_fail=then_b, on_success=else_b)
            return Pos(tested=True, on_fail=else_b, on_success=then_b)
        if nxt.type == "list":
            kids = [c for c in nxt.children if c.type not in STATEMENT_SKIP]
            if len(kids) == 3 and re.search(pat, _txt(kids[0])):
                failing = self._status_test_true_when_failed(_txt(kids[0]))
                if failing is None:
                    return None
                rb = Branch([(kids[2], False)], 0, tail=pos.tail and not rest, frame=fr)
                if (kids[1].type == "&&") == failing:
                    return Pos(tested=True, on_fail=rb)
                return Pos(
                    tested=True,
                    on_success=rb,
                    on_fail=Branch(rest, 0, fallthrough=True, tail=pos.tail and not rest),
                )
        return None

    def _exits_with_status(self, pos: Pos) -> bool:
        """The command's status leaves the script right after it: `exit`, `exit $?`, or
        `rc=$?` (then commands that keep rc) and `exit "$rc"`."""
        if pos.tested or not pos.rest:
            return False
        stmts = list(pos.rest[:8])
        ref = r"\$\?|\$\{\?\}"
        var = self._status_var(stmts[0][0])
        if var is not None:
            ref = r"\$\{?" + re.escape(var) + r"\}?"
            stmts = stmts[1:]
            while stmts and self._keeps_var(stmts[0][0], var):
                stmts = stmts[1:]
        if not stmts:
            return False
        t = _txt(stmts[0][0]).strip().rstrip(";").strip()
        if t == "exit":
            return var is None  # a bare exit: the status of the last command
        m = re.fullmatch(r"exit\s+(\S+)", t)
        return m is not None and re.fullmatch(r"\"?(?:" + ref + r")\"?", m.group(1)) is not None

    @staticmethod
    def _status_var(node) -> str | None:
        """The name in `rc=$?` / `local rc=$?` / `declare -i rc=$?`, else None."""
        if node.type == "declaration_command":
            kids = [c for c in node.named_children if c.type == "variable_assignment"]
            if len(kids) != 1:
                return None
            node = kids[0]
        if node.type == "variable_assignment" and re.fullmatch(
            r"\w+=(\"?)\$(\?|\{\?\})\1", _txt(node)
        ):
            return _txt(node.child_by_field_name("name"))
        return None

    def _keeps_var(self, node, var: str) -> bool:
        """A statement between `rc=$?` and its test that cannot change rc: a message, or an
        assignment of another name."""
        t = _txt(node)
        if re.search(r"\b" + re.escape(var) + r"\s*(?:\+|-)?=|\bread\b|\$\(|`", t):
            return False
        if node.type in ("variable_assignment", "declaration_command"):
            return True
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "command":
            return self.cmd_name(node) in ZERO_CMDS and "exit" not in t
        return False

    def _status_test_true_when_failed(self, ctext: str) -> bool | None:
        if re.search(r"-ne\s+\"?0|!=\s*\"?0|-gt\s+\"?0", ctext):  # (( x != 0 )) too
            return True
        if re.search(r"\(\(\s*\$?\{?[\w?]+\}?\s*\)\)|\(\(.*>\s*0\s*\)\)", ctext):
            return True  # (( rc )), (( $? )), (( rc > 0 ))
        if re.search(r"-eq\s+\"?0|==?\s*\"?0\b", ctext):
            return False
        if re.search(r"-eq\s+\"?[1-9]|==?\s*\"?[1-9]", ctext):
            return True
        return None

    def ln_(self, cmd, args, pos: Pos) -> None:
        ops = [a for a in args if not _txt(a).startswith("-")]
        if len(ops) < 2:
            return
        path = self.resolve(ops[-1])
        if any(re.fullmatch(r"-\w*f\w*|--force", _txt(a)) for a in args):
            self.facts.created.append(path)  # ln -f replaces the name: it never fails on it
            return
        if self.maybe_probe(cmd, path, pos, None):
            return
        if pos.tested or self._status_tested_next(pos):
            p = pos if pos.tested else self._status_pos(pos)
            self.existence(cmd, "ln", path, p)

    def lockfile_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = []
        age = False
        skip = False
        for i, (a, s) in enumerate(zip(args, argt, strict=False)):
            if skip:
                skip = False
                continue
            if name == "lockfile" and s.startswith("-l"):
                age = True
                if s == "-l":
                    skip = True
                continue
            if name == "lockfile" and s in ("-r", "-s"):
                skip = True
                continue
            if name == "lockfile-create" and s in ("-r", "--retry", "-p", "--use-pid"):
                skip = s in ("-r", "--retry")
                continue
            if name == "shlock":
                if s == "-f" and i + 1 < len(args):
                    ops.append(args[i + 1])
                    skip = True
                elif s == "-p":
                    skip = True
                continue
            if name == "dotlockfile" and s in ("-r", "-p"):
                skip = s == "-r"
                continue
            if s.startswith("-"):
                continue
            ops.append(a)
        for a in ops[:1]:
            p = pos
            if not pos.tested and self._status_pos(pos) is not None:
                p = self._status_pos(pos)
            path = self.resolve(a)
            if name == "lockfile-create" and not path.key().endswith(".lock"):
                path = PathExpr(_merge([*path.parts, Part(PartKind.LIT, ".lock")]), path.text)
            idx = self.existence(cmd, name, path, p, 1)
            if idx is not None and age:
                self.facts.acquires[idx].age_breaker = self.span(cmd)

    # ------------------------------------------------------------------ flock
    def flock_(self, cmd, args, pos: Pos, prefixes, redirects) -> None:
        argt = [self._arg_text(a) for a in args]
        nonblocking = False
        conflict = None
        conflict_node = None
        close = False
        unlock = False
        has_c = False
        i = 0
        operands = []
        while i < len(args):
            s = argt[i]
            if operands:
                operands.append(args[i])
                i += 1
                continue
            if s in ("-n", "--nb", "--nonblock"):
                nonblocking = True
            elif s in ("-w", "--wait", "--timeout"):
                nonblocking = True
                i += 1
            elif s.startswith("--timeout=") or s.startswith("--wait="):
                nonblocking = True
            elif s in ("-E", "--conflict-exit-code"):
                if i + 1 < len(args):
                    conflict_node = args[i + 1]
                    conflict = self.number_of(argt[i + 1])
                i += 1
            elif s.startswith("--conflict-exit-code="):
                conflict = self.number_of(s.split("=", 1)[1])
            elif s in ("-c", "--command"):
                has_c = True
                i += 1
            elif s in ("-o", "--close"):
                close = True
            elif s in ("-u", "--unlock"):
                unlock = True
            elif (
                s.startswith("-") and not s.startswith("--") and len(s) > 1 and not s[1:].isdigit()
            ):
                flags = s[1:]
                j = 0
                while j < len(flags):
                    f = flags[j]
                    if f == "n":
                        nonblocking = True
                    elif f == "u":
                        unlock = True
                    elif f == "o":
                        close = True
                    elif f == "c":
                        has_c = True
                        if j == len(flags) - 1:
                            i += 1
                        break
                    elif f in ("w", "E"):
                        rest = flags[j + 1 :]
                        if f == "w":
                            nonblocking = True
                        if rest:
                            if f == "E":
                                conflict = self.number_of(rest)
                        else:
                            if f == "E" and i + 1 < len(args):
                                conflict_node = args[i + 1]
                                conflict = self.number_of(argt[i + 1])
                            i += 1
                        break
                    j += 1
            elif s.startswith("--"):
                pass
            else:
                operands.append(args[i])
            i += 1
        if not operands:
            return
        if unlock:
            m = re.fullmatch(r"\"?\$?\{?(\w+)\}?\"?", _txt(operands[0]))
            if m:
                key = m.group(1) if m.group(1).isdigit() else "$" + m.group(1)
                if key in self.fds:
                    self.fds[key].locks.clear()
            return
        first = operands[0]
        ft = argt[args.index(first)] if first in args else _txt(first)
        fdkey = None
        m = re.fullmatch(r"\"?\$\{?(\w+)\}?\"?", ft)
        if ft.isdigit():
            fdkey = ft
        elif m and m.group(1) in self.fdvars:
            fdkey = "$" + m.group(1)
        fd_form = fdkey is not None and len(operands) == 1 and not has_c
        name_node = cmd.child_by_field_name("name")
        ins = self._c(name_node.end_byte) if name_node is not None else self._c(cmd.start_byte)
        if "exec" in prefixes or "command" in prefixes or "sudo" in prefixes:
            # the flock word is an argument: insert after it
            for a in self.cmd_args(cmd):
                if self.cmd_name_word(a) == "flock":
                    ins = self._c(a.end_byte)
                    break
        cfix = FixTemplate("add -E {code}", (Edit(ins, ins, " -E {code}"),))
        if fd_form:
            info = self.fds.get(fdkey)
            acq = Acquire(
                LockKind.FLOCK,
                "flock",
                info.path if info else None,
                self.span(cmd),
                open_span=info.span if info else None,
                truncating=info.truncating if info else False,
                nonblocking=nonblocking,
                conflict_code=conflict,
            )
            acq.inode_recheck = self._inode_recheck_after(pos)
            st = conflict if conflict is not None else 1
            if pos.tested or self._status_pos(pos) is not None:
                p = pos if pos.tested else self._status_pos(pos)
                acq.busy = self.busy_of(p, cmd, st)
                acq.status_handled = True
            else:
                acq.busy = self.busy_of(pos, cmd, st)
                acq.status_handled = not (pos.tail or self.set_e)
            if (
                info is not None
                and info.unchecked
                and nonblocking
                and acq.busy is not None
                and not self._failed_exec_is_loud()
            ):
                # a failed `exec 9>L` leaves 9 closed: flock fails too, and the busy branch runs
                acq.open_failure_is_busy = True
                e = info.span.end
                acq.open_check_fix = FixTemplate(
                    "check the open on its own", (Edit(e, e, " || exit 3"),)
                )
            idx = self.add_acquire(acq)
            if idx is not None and info is not None and not close:
                info.locks.append(idx)
            if idx is not None and close:
                self.flock_close.add(idx)
            return
        # command form: flock [opts] FILE CMD... / flock FILE -c CMD
        path = self.resolve(first)
        acq = Acquire(
            LockKind.FLOCK,
            "flock",
            path,
            self.span(cmd),
            nonblocking=nonblocking,
            command_form=True,
            conflict_code=conflict,
            conflict_code_fix=cfix,
        )
        st = conflict if conflict is not None else 1
        status_fix = None
        if conflict_node is not None:
            status_fix = FixTemplate(
                "exit with {code}",
                (
                    Edit(
                        self._c(conflict_node.start_byte), self._c(conflict_node.end_byte), "{code}"
                    ),
                ),
            )
        if pos.tested or self._status_pos(pos) is not None:
            p = pos if pos.tested else self._status_pos(pos)
            acq.status_handled = True
            if nonblocking:
                acq.busy = self.busy_of(p, cmd, st)
        else:
            propagates = (
                pos.tail or "exec" in prefixes or self.set_e or self._exits_with_status(pos)
            )
            acq.status_handled = not propagates
            if propagates and nonblocking:
                acq.busy = BusyBranch(
                    self.span(cmd), True, st, self.durable_global, False, status_fix
                )
        self.add_acquire(acq)

    def _failed_exec_is_loud(self) -> bool:
        """A failed `exec 9>L` ends the script rather than going on with 9 closed: under sh,
        dash, ksh and other POSIX shells (exec is a special built-in) and in bash's POSIX mode
        (`--posix`, `set -o posix`, POSIXLY_CORRECT).  Only bash goes on; a file without a
        shebang counts as bash only when named `.bash`.  (`set -e` in effect at the `exec`
        is read where the descriptor is opened.)"""
        if self._loud_exec is None:
            text = self.text
            first = text.split("\n", 1)[0]
            m = re.match(r"#!\s*(\S+)((?:\s+\S+)*)", first)
            words = m.group(2).split() if m else []
            interp = m.group(1).rsplit("/", 1)[-1] if m else ""
            if interp == "env":
                rest = [w for w in words if not w.startswith("-") and "=" not in w]
                interp = rest[0].rsplit("/", 1)[-1] if rest else ""
                words = rest[1:]
            if not m:
                interp = "bash" if self.facts.path.endswith(".bash") else ""
            self._loud_exec = (
                interp != "bash"
                or "--posix" in words
                or bool(re.search(r"\bset\s+-o\s+posix\b|\bPOSIXLY_CORRECT\b", text))
            )
        return self._loud_exec

    def _openwrt_lock(self) -> bool:
        """The script uses OpenWrt's (busybox) flock-based `lock F` ... `lock -u F`."""
        if self._openwrt is None:
            # blanks before `lock` stop at a newline: a run of blank lines is read once, not once
            # per line (a newline in them is a line start the `^` branch takes)
            self._openwrt = bool(
                re.search(r"(?m)(?:^|[;&|({]|then|do)[^\S\n]*lock\s+-u\s", self.text)
            )
        return self._openwrt

    def openwrt_lock_(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = [a for a, t in zip(args, argt, strict=False) if not t.startswith("-")]
        if not ops or "-u" in argt:
            return
        nonblocking = "-n" in argt
        acq = Acquire(
            LockKind.FLOCK, "lock", self.resolve(ops[-1]), self.span(cmd), nonblocking=nonblocking
        )
        if nonblocking:
            p = pos if pos.tested else self._status_pos(pos)
            if p is not None:
                acq.busy = self.busy_of(p, cmd, 1)
            else:
                acq.busy = self.busy_of(pos, cmd, 1)
        self.add_acquire(acq)

    def _arg_text(self, a) -> str:
        """An argument's text, with variables of known literal value put in (`-$1`, `$FD`)."""
        t = _txt(a)
        if "$" not in t:
            return t
        pe = self.resolve(a)
        return pe.render() if pe.is_literal and pe.parts else t

    def cmd_name_word(self, a) -> str:
        s = _txt(a).strip("'\"")
        if a.type in ("command_substitution",) or (
            a.type == "string"
            and a.named_children
            and a.named_children[0].type == "command_substitution"
        ):
            n = a if a.type == "command_substitution" else a.named_children[0]
            return self.command_name_of_value(n) or ""
        if s.startswith("$"):
            return self.cmdvars.get(s.strip("${}"), "")
        return s.rsplit("/", 1)[-1]

    def _inode_recheck_after(self, pos: Pos) -> bool:
        txt = " ".join(_txt(n) for n, _ in pos.rest[:6])
        if pos.on_success is not None:
            txt += " " + " ".join(_txt(n) for n, _ in pos.on_success.stmts[:6])
        return bool(_INODE_TEST.search(txt)) or self.inode_recheck

    # ------------------------------------------------------------------ removals
    def remove_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = [
            (a, s) for a, s in zip(args, argt, strict=False) if not s.startswith("-") or s == "-"
        ]
        for a, s in ops:
            path = self.resolve(a)
            is_glob = (
                bool(re.search(r"(?<!\\)[*?\[]", s))
                and a.type not in ("raw_string",)
                and not (a.type == "string" and "*" not in _txt(a).replace('"', ""))
            )
            if is_glob:
                path = PathExpr(path.parts, path.text)
            self.add_removal(cmd, path, a, len(ops), pos, is_glob)

    def add_removal(
        self, cmd, path: PathExpr, operand, nops: int, pos: Pos, is_glob=False, overwrite=False
    ) -> None:
        key = path.key()
        via = "trap" if self.in_trap else "direct"
        # functions are walked where they are called (cond_depth counts the branches there);
        # functions never called are walked afterwards with cond_depth raised
        conditional = self.cond_depth > 0 or pos.tested
        stale = None
        if self.stale is not None:
            guard, skey = self.stale
            if (
                skey is None
                or skey == key
                or skey.startswith(key.rstrip("/") + "/")
                or key in self.acq_keys
                or guard == "age"
            ):
                stale = guard
        if self.in_trap:
            # a trap runs on every exit: only a test inside the trap makes it conditional
            conditional = pos.tested or self.cond_depth > self.trap_depth
        drop = self.drop_fix(cmd, operand, nops)
        rm = Removal(
            path,
            self.span(cmd),
            via=via,
            hook_span=self.trap_span if self.in_trap else None,
            conditional=conditional,
            stale_guard=stale,
            overwrite=overwrite,
            is_glob=is_glob,
            drop_fix=None if overwrite else drop,
        )
        if self.in_trap:
            self.trap_keys.add(key)
        dk = ("rm", cmd.start_byte, key, via, self.offmap is not None)
        if not self._dedupe(dk):
            return
        self.facts.removals.append(rm)
        if self.in_trap:
            self.trap_keys.add(key)
        else:
            self.direct_removals.append((self.order, key))
            if not conditional and not stale:
                self.clearing.append((self.order, key))
            # an existence lock released: background children after this are fine
            released = {i for i in self.held if self.acq_keys[i] == key}
            if released:
                self.held = [i for i in self.held if i not in released]
                keep = []
                for b in self.pending_bg:
                    (self.facts.backgrounds if b.lock in released else keep).append(b)
                self.pending_bg = keep

    def drop_fix(self, cmd, operand, nops: int) -> FixTemplate | None:
        if nops > 1 and operand is not None:
            s = self._c(operand.start_byte)
            e = self._c(operand.end_byte)
            # take the space before the operand
            while s > 0 and self.text[s - 1] in " \t":
                s -= 1
            return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))
        node = cmd
        if node.parent is not None and node.parent.type == "redirected_statement":
            node = node.parent
        parent = node.parent
        if parent is not None and parent.type == "list":
            kids = [c for c in parent.children if c.type not in STATEMENT_SKIP]
            if len(kids) == 3:
                left, op, right = kids
                if left.id == node.id:
                    s, e = self._c(left.start_byte), self._c(right.start_byte)
                else:
                    s, e = self._c(left.end_byte), self._c(right.end_byte)
                if op.type == "||" and left.id == node.id:
                    return None
                return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))
            return None
        s, e = self._c(node.start_byte), self._c(node.end_byte)
        # a whole statement: swallow a following ';' and its line if alone on it
        t = self.text
        j = e
        while j < len(t) and t[j] in " \t":
            j += 1
        if j < len(t) and t[j] == ";" and (j + 1 >= len(t) or t[j + 1] != ";"):
            j += 1
            while j < len(t) and t[j] in " \t":
                j += 1
            e2 = j
        else:
            e2 = e
        ls = t.rfind("\n", 0, s) + 1
        le = t.find("\n", e2)
        le = len(t) if le < 0 else le
        if self.offmap is None and t[ls:s].strip() == "" and t[e2:le].strip() == "":
            return FixTemplate(
                "drop the removal of the lock file", (Edit(ls, min(le + 1, len(t)), ""),)
            )
        if e2 > e:
            return FixTemplate("drop the removal of the lock file", (Edit(s, e2, ""),))
        # preceded by a separator: take "; " before it
        k = s
        while k > 0 and t[k - 1] in " \t":
            k -= 1
        if k > 0 and t[k - 1] == ";":
            return FixTemplate("drop the removal of the lock file", (Edit(k - 1, e, ""),))
        return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))

    def find_(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if not any(a in ("-delete",) for a in argt) and not (
            "-exec" in argt and any(a in ("rm", "rmdir") for a in argt)
        ):
            return
        start = [a for a in args[:1] if not _txt(a).startswith("-")]
        age = any(
            a in ("-mmin", "-mtime", "-amin", "-atime", "-newer", "-cmin", "-ctime") for a in argt
        )
        if not start:
            return
        path = self.resolve(start[0])
        name = None
        for i, s in enumerate(argt):
            if s in ("-name", "-iname") and i + 1 < len(args):
                name = self.resolve(args[i + 1])
        if name is not None:
            path = PathExpr(
                _merge(list(path.parts) + [Part(PartKind.LIT, "/")] + list(name.parts)), path.text
            )
        # an age test breaks a lock only when the find aims at one (the lock itself, a
        # lock-like name or directory): a job's own pruning of its tree is not a breaker
        if age and path.key() not in self.acq_keys and not lockish_text(path.render()):
            age = False
        saved = self.stale
        if age:
            self.stale = ("age", None)
        is_glob = name is not None and "*" in name.render()
        self.add_removal(cmd, path, None, 1, pos, is_glob=is_glob)
        self.stale = saved

    # ------------------------------------------------------------------ writes / creation
    def redirect_writes(self, redirects, pos: Pos, cmd, name: str = "") -> None:
        for r in redirects:
            self.check_write_redirect(r, pos, cmd, name)

    def check_write_redirect(self, r, pos: Pos, cmd=None, name: str = "") -> None:
        info = self.redirect_info(r)
        if not info:
            return
        fd, op, dest = info
        if dest is None or fd not in (None, "1", "2") or op not in (">", ">|", "&>", ">>", "&>>"):
            return
        d = _txt(dest)
        if d.startswith("/dev/") or d.startswith("&") or dest.type == "process_substitution":
            return
        path = self.resolve(dest)
        node = cmd if cmd is not None else r
        key = path.key()
        if (
            self.stale is not None
            and op in (">", ">|", "&>")
            and (self.stale[1] is None or self.stale[1] == key)
            and lockish_text(path.render())
        ):
            self.add_removal(node, path, None, 1, pos, overwrite=True)
            return
        if (
            op in (">", "&>")
            and self.noclobber
            and (pos.tested or self._status_pos(pos) is not None)
        ):
            if self.maybe_probe(node, path, pos, None):
                return
            p = pos if pos.tested else self._status_pos(pos)
            self.existence(node, "noclobber >", path, p)
            return
        if op in (">", ">|", "&>") and name == ":" and self.maybe_probe(node, path, pos, None):
            return
        # an append adds to a file that may well exist: not the creation half of a lock
        self.created_path(path, node, pos, guard=op not in (">>", "&>>"))

    def created_path(
        self, path: PathExpr, node, pos: Pos, guard: bool = True, directory: bool = False
    ) -> None:
        if name_probe := self.maybe_probe(node, path, pos, None):
            return name_probe
        self.facts.created.append(path)
        if not guard:
            return
        # check-then-create: a test of this path that leads to a skip/exit came before (a
        # directory test `-d` guards only a directory's creation, `[ -d D ] && exit; mkdir D`)
        key = path.key()
        for c in self.cte:
            tkey, tnode, order, done = c[0], c[1], c[2], c[3]
            if (c[6] == "-d") != directory and c[6] != "-e":
                continue
            if tkey == key and not done[0]:
                done[0] = True
                busy = c[4]
                acq = Acquire(
                    LockKind.EXISTENCE,
                    "test-then-create",
                    path,
                    self.span(node),
                    check_then_create=True,
                    test_span=self.span(tnode),
                )
                acq.busy = busy
                self.loser_exits[id(acq)] = c[5]
                if self.facts.init_script and "pid" in path.render().lower():
                    acq.service_record = True
                idx = self.add_acquire(acq)
                if idx is not None:
                    self.held.append(idx)
                    self.cte_acqs.append(idx)
                    self.acq_order[idx] = order  # the busy branch runs at the test

    # ------------------------------------------------------------------ tests
    def test_text_ops(self, node) -> list[tuple[str, object, bool]]:
        """(operator, operand node, negated) of unary file tests in a test command; negated
        when an odd number of `!` wrap the test (`[ ! -e F ]`, `[[ ! -f F ]]`)."""
        out = []
        stack = [(node, False)]
        while stack:
            n, neg = stack.pop()
            if n.type == "unary_expression":
                op = n.child_by_field_name("operator")
                kids = [c for c in n.named_children if c.type != "test_operator"]
                if op is None and n.children and n.children[0].type == "!":
                    stack.extend((k, not neg) for k in kids)
                elif op is not None and _txt(op) == "!":
                    stack.extend((k, not neg) for k in kids)
                elif op is not None and kids:
                    out.append((_txt(op), kids[-1], neg))
                continue
            if n.type == "parenthesized_expression":
                stack.extend((k, neg) for k in n.named_children)
                continue
            stack.extend((k, neg) for k in n.named_children)
        return out

    def test_cmd(self, node, pos: Pos) -> None:
        ops = self.test_text_ops(node)
        txt = _txt(node)
        negated = txt.lstrip("[ ").startswith("!") or pos.negated
        found = [(o, self.resolve(a), a, neg) for o, a, neg in ops]
        for o, a, neg in ops:
            self._liveness_var_test(node, o, a, neg, pos)
        self._file_test(node, found, txt, pos, negated)

    def bracket_test(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        txt = _txt(cmd)
        neg = "!" in argt[:1] or pos.negated
        found = []
        for i, s in enumerate(argt):
            if s in ("-e", "-f", "-d", "-s", "-L", "-h", "-r") and i + 1 < len(args):
                inner = (argt[i - 1] == "!") if i > 0 else False
                found.append((s, self.resolve(args[i + 1]), args[i + 1], inner))
            elif s in ("-z", "-n") and i + 1 < len(args):
                inner = (argt[i - 1] == "!") if i > 0 else False
                self._liveness_var_test(cmd, s, args[i + 1], inner, pos)
        self._file_test(cmd, found, txt, pos, neg)

    def _file_test(self, node, found, txt: str, pos: Pos, negated: bool) -> None:
        # liveness: [ -d /proc/$pid ]
        m = re.search(r"/proc/\$\{?(\w+)\}?", txt)
        if m and re.search(r"-[de]\b", txt) and "/fd/" not in txt:
            self.liveness(node, m.group(1), pos, test_true_alive=not negated)
        elif "/proc/$(" in txt or "/proc/`" in txt:
            for op, _path, a, _neg in found:
                if op not in ("-d", "-e") or "/proc/" not in _txt(a):
                    continue
                stack = [a]
                while stack:
                    n = stack.pop()
                    if n.type == "command_substitution":
                        src = self.pid_source(n)
                        if src is not False:
                            self.liveness_file(node, src, pos, True, negated=negated)
                        break
                    stack.extend(n.named_children)
        if re.search(r"-ef\b", txt) or re.search(r"%i", txt):
            self.inode_recheck = True
        if AGE_TEST.search(txt) and pos.tested:
            br = pos.on_success
            if br is not None:
                self._pending_stale_success = ("age", None)
        for op, path, _a, negated in found:
            if op not in ("-e", "-f", "-s", "-L", "-h", "-d"):
                continue
            if not pos.tested:
                continue
            # the branch taken when the file exists (a `!` outside the test, `! [ -e F ]`,
            # has already swapped the branches of ``pos``; only the test's own `!` counts)
            exists_br = pos.on_fail if negated else pos.on_success
            if exists_br is None:
                continue
            # $? when that branch starts: `test ! -f L || exit` exits 1, `[ -f L ] && exit` 0
            busy = self.branch_outcome(exists_br, int(negated) ^ int(pos.negated), node)
            if (
                (busy is None or not busy.ends_run)
                and not negated
                and pos.chain_success is not None
                and exists_br.stmts
                and re.match(r"\s*(!\s*)?(kill|ps|pgrep|\[|test)\b", _txt(exists_br.stmts[0][0]))
            ):
                # `[ -e L ] && kill -0 "$(cat L)"` as a condition: the branch is the `then`
                exists_br = pos.chain_success
                busy = self.branch_outcome(exists_br, 0, node)
            if exists_br.fallthrough:
                if busy is None or not busy.ends_run:
                    continue
            elif exists_br.stmts and busy is None:
                # a retry loop or a takeover (a liveness or age test, a kill, then remove) is
                # still a guard; removing the old file and going on (`[ -f F ] && rm -f F`)
                # decides nothing
                t = " ".join(_txt(n) for n, _ in exists_br.stmts[:20])
                if not re.search(r"\b(sleep|continue|exit|return|kill|ps|pgrep)\b|/proc/", t):
                    if not AGE_TEST.search(t):
                        continue
            elif busy is None or (not busy.ends_run and not self._branch_exits(exists_br)):
                continue
            exits = busy is not None or bool(
                re.search(r"\b(exit|return)\b", " ".join(_txt(n) for n, _ in exists_br.stmts[:20]))
            )
            self.cte.append((path.key(), node, self.order, [False], busy, exits, op))

    def _branch_exits(self, br: Branch) -> bool:
        for n, _ in br.stmts[:20] if br.fallthrough else br.stmts:
            if re.search(r"\b(exit|return)\b", _txt(n)):
                return True
        return False

    # ------------------------------------------------------------------ processes
    def pid_file_of(self, a) -> PathExpr | None | bool:
        """The pid file an argument's value was read from; False when it is not from a file."""
        node = a
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        src = False
        if node.type == "command_substitution":
            src = self.pid_source(node)
        elif node.type in ("simple_expansion", "expansion"):
            var = _txt(node).strip('${}"')
            if var in self.pidvars:
                src = self.pidvars[var]
        if src and src.key() in self.fifos:
            return False  # read from a pipe the script made and its own child feeds
        return src

    def kill_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if name == "pkill":
            for i, s in enumerate(argt):
                if s in ("-F", "--pidfile") and i + 1 < len(args):
                    sig = "TERM"
                    for t in argt:
                        if re.fullmatch(r"-(\d+|[A-Z]+)", t) and t not in ("-F",):
                            sig = t[1:]
                    path = self.resolve(args[i + 1])
                    if sig == "0":
                        self.liveness_file(cmd, path, pos, True)
                    elif self._dedupe(("kill", cmd.start_byte)):
                        self.facts.kills.append(Kill(self.span(cmd), sig, path))
            return
        sig = "TERM"
        targets = []
        skip = False
        for i, (a, s) in enumerate(zip(args, argt, strict=False)):
            if skip:
                skip = False
                continue
            if s in ("-s", "-n") and i + 1 < len(args):
                sig = argt[i + 1].upper().removeprefix("SIG")
                skip = True
                continue
            if s.startswith("-") and not targets and len(s) > 1:
                if s == "--":
                    continue
                sig = s[1:].upper().removeprefix("SIG")
                continue
            targets.append(a)
        for a in targets:
            src = self.pid_file_of(a)
            if src is False:
                continue
            if sig == "0":
                self.liveness_file(cmd, src, pos, True)
                continue
            if src is not None:
                self.signalled.add((self._frame_name(), src.key()))
            if self._dedupe(("kill", cmd.start_byte)):
                self.facts.kills.append(Kill(self.span(cmd), sig, src))

    def ps_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if name == "ps":
            for i, s in enumerate(argt):
                target = None
                if s in ("-p", "--pid", "-q") and i + 1 < len(args):
                    target = args[i + 1]
                elif not s.startswith("-") and (i == 0 or argt[i - 1] not in ("-o", "-O")):
                    target = args[i]
                if target is not None:
                    src = self.pid_file_of(target)
                    if src is not False:
                        self.liveness_file(cmd, src, pos, True)
                        break
        elif name == "pgrep":
            for i, s in enumerate(argt):
                if s in ("-F", "--pidfile") and i + 1 < len(args):
                    self.liveness_file(cmd, self.resolve(args[i + 1]), pos, True)

    def _frame_name(self) -> str:
        return self.frames[-1].name if self.frames else ""

    def _liveness_consequential(self, pos: Pos, depth: int, dead: Branch | None = None) -> bool:
        """The result of a liveness test leads to a skip/exit or to creating, removing or
        overwriting a file.  A `return` counts when it skips work of the function, or when the
        caller's use of the function's status does (a status function only reports).  Leaving
        when the process is *dead* (``dead``: that branch) is a check that a daemon is up, not
        a lock decision: there only creating, removing or overwriting counts."""
        for br in (pos.on_fail, pos.on_success):
            if br is None or (br.fallthrough and not br.stmts):
                continue
            t = " ".join(_txt(n) for n, _ in (br.stmts[:3] if br.fallthrough else br.stmts))
            if br is dead:
                if _FILE_CHANGE.search(t):
                    return True
                continue
            if _CONSEQUENCE.search(t):
                return True
            if not re.search(r"\breturn\b", t):
                continue
            other = pos.on_success if br is pos.on_fail else pos.on_fail
            if other is not None and other.fallthrough and other.stmts:
                return True  # the return skips the rest of the function
            fr = br.frame
            if fr is None or fr.pos is None or depth > 3:
                continue
            cpos = fr.pos if fr.pos.tested else self._status_pos(fr.pos)
            if cpos is not None and self._liveness_consequential(cpos, depth + 1):
                return True
        return False

    def liveness(self, node, var: str, pos: Pos, test_true_alive: bool) -> None:
        if var not in self.pidvars:
            return
        self.liveness_file(
            node, self.pidvars[var], pos, test_true_alive, negated=not test_true_alive
        )

    def liveness_file(
        self, node, pid_file, pos: Pos, alive_on_success: bool, negated: bool = False
    ) -> None:
        fr = self.frames[-1] if self.frames else None
        if (
            not pos.tested
            and fr is not None
            and fr.last is not None
            and (
                fr.last[0] <= node.start_byte < fr.last[1]
                or (
                    bool(pos.rest)
                    and re.fullmatch(r"return(\s+\"?\$\??\"?)?", _txt(pos.rest[0][0]).strip())
                    is not None
                )
            )
            and fr.pos is not None
            and fr.pos.tested
        ):
            # the check is the function's last command: its status is the function's
            pos = fr.pos
        neg = pos.negated ^ negated
        # the branch taken when the process is dead (`!` already swapped the branches; a test
        # that is true when dead, `[ ! -d /proc/$pid ]`, comes with ``negated``)
        dead = pos.on_success if negated else pos.on_fail
        consequential = pos.tested and self._liveness_consequential(pos, 0, dead)
        action = self.in_init_action()
        if action and {"status", "stop"} & set(action.split("|")):
            consequential = False  # reporting, or part of stopping the service (LCK108's)
        if any(_STOP_WORDS & set(name_words(f.name)) for f in self.frames):
            consequential = False
        fkey = pid_file.key() if pid_file is not None else None
        if fkey is not None and (self._frame_name(), fkey) in self.signalled:
            consequential = False  # waiting for a process this run has just signalled
        seen = self.live_seen.get(node.start_byte)
        if seen is None:
            chk = LivenessCheck(self.span(node), pid_file, consequential)
            self.live_seen[node.start_byte] = chk
            self.facts.liveness.append(chk)
        elif consequential:
            seen.consequential = True  # a function called from several places
        if pos.tested:
            key = pid_file.key() if pid_file is not None else None
            # the branch taken when the holder is judged dead
            dead_is_success = neg
            if dead_is_success:
                self._pending_stale_success = ("dead-holder", key)
            else:
                self._pending_stale_fail = ("dead-holder", key)
                # `if kill -0 ...; then exit; fi; rm -f L` : the rest runs only when dead
                if (
                    pos.on_success is not None
                    and self._branch_exits(pos.on_success)
                    and pos.on_fail is not None
                    and pos.on_fail.fallthrough
                    and not pos.chained
                ):
                    # (`[ -f P ] && kill -0 ...` as the condition: what follows also runs
                    # when there is no file at all: the normal acquisition, not a breaker)
                    self.stale_rest = ("dead-holder", key)
            if (
                pos.on_fail is not None
                and not pos.on_fail.fallthrough
                and pos.on_fail.stmts
                and not dead_is_success
            ):
                # `kill -0 $pid || rm -f L`
                self._stale_list_right = ("dead-holder", key)

    # ------------------------------------------------------------------ background
    def background_at(self, cmd, how: str) -> None:
        held = [i for i in self.held]
        for info in self.fds.values():
            held.extend(i for i in info.locks if i not in self.flock_close)
        if not held:
            return
        if self._dedupe(("bg", cmd.start_byte)):
            self.pending_bg.append(Background(self.span(cmd), held[-1], how))

    # ------------------------------------------------------------------ traps
    def trap_(self, cmd, args, pos: Pos) -> None:
        if not args or self.in_trap:
            return
        argt = [_txt(a) for a in args]
        if argt[0] in ("-p", "-l"):
            return
        action = args[0]
        sigs = [s.upper() for s in argt[1:]]
        if argt[0] == "-" or argt[0] in ("''", '""'):
            if any(s in SIGNALS_EXIT for s in sigs):
                ev = TrapEvent(self.order, True, set(), cmd, self.span(cmd), disarm=True)
                ev.before_exit = any(  # an exit command, not a `(exit N)` subshell setting $?
                    re.search(r"(?<![(\w])exit\b", _txt(n)) for n, _ in pos.rest[:3]
                )
                self.traps.append(ev)
            return
        if not sigs:
            return
        is_exit = any(s.removeprefix("SIG") in SIGNALS_EXIT for s in sigs)
        self.trap_span = self.span(cmd)
        self.trap_keys = set()
        saved = (self.in_trap, self.cond_depth, self.stale, self.offmap)
        self.in_trap = True
        self.trap_depth = self.cond_depth
        self.stale = None
        removals_before = len(self.facts.removals)
        self._trap_only_removal = False
        try:
            self.walk_trap_body(action, cmd, is_exit)
        finally:
            self.in_trap, self.cond_depth, self.stale, self.offmap = saved
        keys = set(self.trap_keys)
        ev = TrapEvent(self.order, is_exit, keys, cmd, self.span(cmd))
        ev.before_exit = False
        top = self.top_stmt
        ev.top = (
            top
            if top is not None
            and not self.frames
            and self.cond_depth == 0
            and self.offmap is None
            and top.start_byte <= cmd.start_byte
            and cmd.end_byte <= top.end_byte
            and top.type in ("command", "redirected_statement")
            else None
        )
        ev.removals = self.facts.removals[removals_before:]
        if self._trap_only_removal and len(ev.removals) == 1:
            whole = self.drop_fix(cmd, None, 1)
            if whole is not None:
                ev.removals[0].drop_fix = FixTemplate(
                    "drop the trap that removes the lock file", whole.edits
                )
        self.traps.append(ev)

    def walk_trap_body(self, action, cmd, is_exit: bool) -> None:
        self._trap_dquoted = action.type == "string"
        if action.type == "raw_string":
            inner = action.start_byte + 1
            body = self.src[inner : action.end_byte - 1]
            bmap = list(range(inner, action.end_byte - 1)) + [action.end_byte - 1]
        elif action.type == "string":
            raw = self.src[action.start_byte + 1 : action.end_byte - 1]
            # "..." is expanded when the trap is set: put known literal values in place
            subs = {}
            for c in action.named_children:
                if c.type in ("simple_expansion", "expansion"):
                    pe = self.resolve(c)
                    val = pe.render()
                    if pe.is_literal and re.fullmatch(r"[\w./~@%+=:,-]+", val):
                        subs[c.start_byte] = (c.end_byte, val.encode())
            out = bytearray()
            bmap = []
            i = 0
            while i < len(raw):
                absb = action.start_byte + 1 + i
                if absb in subs:
                    end_b, lit = subs[absb]
                    out += lit
                    bmap.extend([absb] * len(lit))
                    i += end_b - absb
                    continue
                ch = raw[i : i + 1]
                if (
                    ch == b"\\"
                    and i + 1 < len(raw)
                    and raw[i + 1 : i + 2] in (b'"', b"\\", b"$", b"`", b"\n")
                ):
                    out += raw[i + 1 : i + 2]
                    bmap.append(action.start_byte + 1 + i + 1)
                    i += 2
                    continue
                out += ch
                bmap.append(action.start_byte + 1 + i)
                i += 1
            bmap.append(action.end_byte - 1)
            body = bytes(out)
        elif action.type == "word":
            name = _txt(action)
            if name in self.functions:
                fn = self.functions[name]
                self.called.add(name)
                stmts = self.statements(self._fn_body(fn))
                self.frames.append(Frame(name, {}, False, None, 1))
                self.walk_seq(stmts, tail=False)
                self.frames.pop()
                if is_exit:
                    self.status_override(stmts)
                return
            body = self.src[action.start_byte : action.end_byte]
            bmap = list(range(action.start_byte, action.end_byte + 1))
        else:
            return
        if self.offmap is not None:
            bmap = [self.offmap[min(b, len(self.offmap) - 1)] for b in bmap]
        tree = _parser().parse(body)
        # traps that only call functions: walk the function bodies
        self.offmap = bmap
        self._sub_src = body
        stmts = self.statements(tree.root_node)
        names = []
        for n, _ in stmts:
            if n.type == "command" and self.cmd_name(n) in self.functions:
                names.append(self.cmd_name(n))
        self.walk_seq(stmts, tail=False)
        if is_exit:
            self.status_override(stmts)
        self.offmap = None
        for name in names:
            fn = self.functions[name]
            self.called.add(name)
            fst = self.statements(self._fn_body(fn))
            self.frames.append(Frame(name, {}, False, None, 1))
            self.walk_seq(fst, tail=False)
            self.frames.pop()
            if (
                is_exit
                and (name,)
                and len(stmts)
                and stmts[-1][0].type == "command"
                and self.cmd_name(stmts[-1][0]) == name
            ):
                self.status_override(fst)
        self._trap_remove_fixes(tree, action, cmd, stmts)

    def _trap_remove_fixes(self, tree, action, cmd, stmts) -> None:
        """A trap whose whole string is one removal of one path: the fix drops the trap."""
        if len(stmts) != 1:
            return
        node = stmts[0][0]
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return
        name, args, _ = self.unwrap(node)
        ops = [a for a in args if not _txt(a).startswith("-")]
        self._trap_only_removal = name in REMOVERS and len(ops) == 1

    def status_override(self, stmts) -> None:
        if not stmts:
            return
        last = stmts[-1][0]
        node = last
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "list":
            kids = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if kids:
                node = kids[-1]
        if node.type != "command" or self.cmd_name(node) != "exit":
            return
        args = self.cmd_args(node)
        if not args:
            return
        a = _txt(args[0]).strip("\"'")
        status = None
        if a.isdigit() or (self.number_of(a) is not None and self._fixed_var(a)):
            detail = f"exit {a}"
            status = (self.number_of(a) or 0) & 0xFF
        elif a in ("$?", "${?}"):
            # exit $? right at the start is fine; after another command it is that status
            if len(stmts) == 1 and last.type == "command":
                return
            detail = "exit $? after another command"
        else:
            return
        # keep_status_fix is left to lockcheck.fix.suggest (a bare `exit`)
        if self._dedupe(("ov", node.start_byte)):
            ov = StatusOverride(self.span(node), detail, status=status)
            self.override_order[id(ov)] = self.order
            self.facts.overrides.append(ov)

    def _fixed_var(self, ref: str) -> bool:
        """`$RC` holds one fixed number everywhere in the file (assigned only that literal,
        never read, counted or set from a status)."""
        m = re.fullmatch(r"\$\{?(\w+)\}?", ref)
        if not m:
            return False
        name = re.escape(m.group(1))
        values = set()
        for a in re.finditer(r"(?<![\w$])" + name + r"(\+=|=|\+\+|--)(\S*)", self.text):
            if a.group(1) != "=":
                return False
            values.add(a.group(2).strip("\"';"))
        if re.search(
            r"\b(read|for|let|getopts|printf\s+-v)\b[^\n;|]*\b" + name + r"\b|\(\([^)]*\b" + name,
            self.text,
        ):
            return False
        return len(values) == 1 and next(iter(values)).isdigit()

    # ------------------------------------------------------------------ finishing
    def finish(self) -> None:
        acqs = self.facts.acquires
        # an EXIT trap the script disarms on its way out (`trap - EXIT` other than right
        # before a busy exit) runs on the failure paths only: a fixed non-zero status there
        # still reports the failure (no LCK404); `exit 0` or `exit $?` after a cleanup
        # command would report a failed run as done, and stays
        disarmed = [t.order for t in self.traps if t.disarm and not t.before_exit]
        if disarmed:
            last = max(disarmed)
            self.facts.overrides = [
                o
                for o in self.facts.overrides
                if self.override_order.get(id(o), last) >= last or not o.status
            ]
        self._mkdir_p_guards()
        # plain mkdir under set -e: a lock only when removed on exit or named like a lock
        self._service_records()
        removed_keys = {
            r.path.key() for r in self.facts.removals if r.path is not None and not r.overwrite
        }
        for cmd, path, _pos, order in self.sete_mkdirs:
            if path.has_unique:
                continue  # inside this run's own mktemp -d (or named with $$): no other run
            key = path.key()
            # removed again after it is made (a removal before it clears the way for a fresh
            # output directory: `rm -rf out; mkdir out`)
            lockish = lockish_text(path.render().rsplit("/", 1)[-1])
            if not lockish and self._cleared_before(key, order):
                continue
            if not lockish and self._work_dir(path, self._c(cmd.end_byte)):
                continue
            if self._removed_after(key, order) or lockish:
                acq = Acquire(LockKind.EXISTENCE, "mkdir", path, self.span(cmd))
                acq.busy = BusyBranch(self.span(cmd), True, 1, self.durable_global)
                idx = self.add_acquire(acq)
                if idx is not None:
                    self.acq_order[idx] = order
        flocked = {a.path.key() for a in acqs if a.kind is LockKind.FLOCK and a.path is not None}
        # a stale-guarded removal is a lock breaker only for a lock, a pid file or a lock name
        lockish = set(self.acq_keys) | {
            c.pid_file.key() for c in self.facts.liveness if c.pid_file is not None
        }
        for r in self.facts.removals:
            if r.stale_guard and r.path is not None:
                k = r.path.key()
                if k not in lockish and not lockish_text(k.rsplit("/", 1)[-1]):
                    if not any(x.startswith(k.rstrip("/") + "/") for x in lockish):
                        r.stale_guard = None
        # check-then-create: not for pre-created flock files nor never-removed markers
        keep = []
        for i, a in enumerate(acqs):
            if i in self.weak:
                k = a.path.key() if a.path else ""
                removed = self._removed_after(k, self.acq_order[i])
                lockish = lockish_text(k.rsplit("/", 1)[-1])
                if not lockish and self._cleared_before(k, self.acq_order[i]):
                    continue
                if (
                    not lockish
                    and a.mechanism == "mkdir"
                    and a.path is not None
                    and self._work_dir(a.path, a.span.end)
                ):
                    continue
                if not removed and not lockish:
                    continue
            elif (
                a.mechanism == "mkdir"
                and a.path is not None
                and not a.check_then_create
                and not lockish_text(a.path.render().rstrip("/").rsplit("/", 1)[-1])
                and not self._removed_after(a.path.key(), self.acq_order[i])
                and self._work_dir(a.path, a.span.end)
            ):
                # `mkdir "$home/.gnupg" || { error; return; }`, then cd into it and fill it,
                # never removed: a directory being provisioned, not a lock
                continue
            if i in self.gates and a.path is not None:
                k = a.path.key()
                if not any(_covers(r, k) for r in removed_keys):
                    # `if mkdir M; then work; fi` and M never removed: a run-once (or
                    # once-per-boot) marker, like a never-removed test-then-create marker
                    continue
            if a.check_then_create:
                k = a.path.key() if a.path else ""
                # a marker removed only by a signal trap (a build stamp cleared on abort) is
                # never removed by a run that ends normally: a run-once marker, not a lock
                if k in flocked or not self._removed_after(k, self.acq_order[i]):
                    continue
            keep.append(i)
        if len(keep) != len(acqs):
            remap = {old: new for new, old in enumerate(keep)}
            self.facts.acquires = [acqs[i] for i in keep]
            self.acq_order = [self.acq_order[i] for i in keep]
            self.acq_keys = [self.acq_keys[i] for i in keep]
            self.acq_top = [self.acq_top[i] for i in keep]
            for lst in (self.pending_bg, self.facts.backgrounds):
                bgs = []
                for b in lst:
                    if b.lock in remap:
                        b.lock = remap[b.lock]
                        bgs.append(b)
                lst[:] = bgs
            acqs = self.facts.acquires
        # releases
        for i, a in enumerate(acqs):
            if a.kind is not LockKind.EXISTENCE or a.path is None:
                continue
            key = a.path.key()
            a.released = any(_covers(k, key) for k in removed_keys)
            a.release_on_every_exit = True
            if a.released:
                a.release_on_every_exit = self._released_on_exit(i, key)
            if self.facts.init_script and a.busy is None and "pid" in key.lower():
                a.service_record = True
        # hooks
        hooks_seen: dict = {}
        for ev in self.traps:
            if not ev.keys:
                continue
            for key in sorted(ev.keys):
                active = []
                for i, a in enumerate(acqs):
                    if a.path is None or a.path.key() != key:
                        continue
                    if not ev.exit_trap or a.path.has_unique:
                        # a signal-only trap runs only when a signal arrives: the losing run's
                        # own exit does not run it
                        continue
                    if a.busy is None and not self.loser_exits.get(id(a), False):
                        continue  # a waiting loop or a takeover: no losing run exits here
                    if a.busy is not None and id(a.busy) in self.untrapping:
                        continue
                    if ev.order < self.acq_order[i] and self._trap_in_effect(ev, self.acq_order[i]):
                        active.append(i)
                path = next(
                    (r.path for r in ev.removals if r.path is not None and r.path.key() == key),
                    None,
                )
                if path is None:
                    path = next(
                        (
                            r.path
                            for r in self.facts.removals
                            if r.path is not None
                            and r.via == "trap"
                            and r.hook_span == ev.span
                            and r.path.key() == key
                        ),
                        None,
                    )
                old = hooks_seen.get((ev.span.start, key))
                if old is not None:
                    # the same trap installed again (a function called twice)
                    old.active_in_busy_of = tuple(sorted(set(old.active_in_busy_of) | set(active)))
                    if old.move_fix is None:
                        old.move_fix = self._move_fix(ev, active)
                    continue
                hook = ReleaseHook(path, ev.span, "trap", tuple(active), self._move_fix(ev, active))
                hooks_seen[(ev.span.start, key)] = hook
                self.facts.hooks.append(hook)
        self.facts.backgrounds.extend(self.pending_bg)

    _TRIVIAL = {
        "rm", "rmdir", "unlink", "echo", "printf", "trap", "[", "[[", "test", "mkdir", "cat",
        "kill", "read", "if", "elif", "while", "until", "local", "export", "return", "exit",
        "logger", "log", ":", "true", "false", "chmod", "chown", "touch",
    }  # fmt: skip

    def _makes_instead(self, br, path: PathExpr) -> bool:
        """A command of the failure branch copies or links to the same name, and the
        branch never leaves: a fallback (`ln -s A D || cp A D`), not a busy branch (a
        takeover re-makes the name too, but after a test that exits)."""
        spelled = path.text.strip("\"'").rstrip("/")
        if not spelled:
            return False
        if any(re.search(r"\b(?:exit|return)\b", _txt(n)) for n, _ in br.stmts):
            return False
        for n, _ in br.stmts:
            for c in [n, *self._descendants_of_type(n, "command")]:
                if c.type != "command":
                    continue
                name = self.cmd_name(c)
                if name not in ("cp", "install", "ln"):
                    continue
                ops = [_txt(a).strip("\"'").rstrip("/") for a in self.cmd_args(c)]
                ops = [o for o in ops if o and not o.startswith("-")]
                if ops and ops[-1] == spelled:
                    return True
        return False

    def _descendants_of_type(self, node, kind: str) -> list:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            if n.type == kind:
                out.append(n)
            stack.extend(n.named_children)
        return out

    def _mkdir_p_guards(self) -> None:
        """LCK109 candidates: not a directory that holds the script's locks or files (`mkdir
        -p /var/lock/app || exit 1` before `exec 9>/var/lock/app/job.lock`) or that later
        commands fill or enter."""
        inner = [a.path.key() for a in self.facts.acquires if a.path is not None]
        inner += [p.key() for p in self.facts.created]
        seen = set()
        for nx, end in self.mkdir_p_guards:
            key = nx.path.key() if nx.path is not None else ""
            if (nx.span.start, key) in seen:
                continue
            seen.add((nx.span.start, key))
            if any(k.startswith(key.rstrip("/") + "/") for k in inner):
                continue
            if nx.path is not None and self._work_dir(nx.path, end):
                continue
            self.facts.non_exclusive.append(nx)
            if nx.path is not None:
                self.facts.created.append(nx.path)  # its own name: removing it is no LCK107

    def _work_dir(self, path: PathExpr, start: int) -> bool:
        """The directory made at ``start`` is filled or entered by later commands (`cd D`,
        `cp x D`, `tar -C D`, `tool -p ./D`, `touch D/__init__.py`): a work directory, not a
        lock (a lock directory is only tested, written a PID into and removed)."""
        t = path.text.strip("\"'").rstrip("/")
        # (?!\w): a name is read whole, else `$aa$aa...!` is split every way (exponential)
        if not t or not re.fullmatch(r"(?:\$\{?\w+(?!\w)\}?|[\w./-])+", t):
            return False
        pat = "".join(
            r"\$\{?" + re.escape(part.strip("${}")) + r"\}?"
            if part.startswith("$")
            else re.escape(part)
            for part in re.split(r"(\$\{?\w+\}?)", t.removeprefix("./"))
            if part
        )
        if not t.startswith("$"):
            pat = r"(?<![\w/.-])(?:\./)?" + pat
        whole = re.compile(pat + r"(?![\w-])(?!/[\w.-]*pid)")
        # a file put inside it (not its PID file)
        inside = re.compile(pat + r"/(?![\w.-]*pid\b)[\w.-]")
        for line in _lines_after(self.text, start, 199):
            code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
            hit_inside = inside.search(code)
            if not hit_inside and not whole.search(code):
                continue
            words = re.findall(r"[^\s;&|()]+", code)
            first = next(
                (w for w in words if "=" not in w and w not in _CONDITION_WORDS), ""
            ).rsplit("/", 1)[-1]
            if hit_inside and first not in ("rm", "rmdir", "unlink"):
                return True
            if first not in self._TRIVIAL:
                return True
        return False

    def _cleared_before(self, key: str, order: int) -> bool:
        """The script removes the name unconditionally before making it (`rm -rf out; mkdir
        out`): a fresh work directory; a lock is never cleared by the run that takes it."""
        return any(o < order and _covers(k, key) for o, k in self.clearing)

    def _removed_after(self, key: str, order: int) -> bool:
        """The name is removed again after it is made: later in the run or by an EXIT trap (a
        removal before it only clears the way: `rm -rf out; mkdir out`)."""
        return any(o > order and _covers(k, key) for o, k in self.direct_removals) or any(
            t.exit_trap and any(_covers(k, key) for k in t.keys) for t in self.traps
        )

    def _service_records(self) -> None:
        if not self.facts.init_script:
            return
        keep = []
        for r in self.facts.removals:
            if r.stale_guard and r.path is not None:
                if "pid" in r.path.key().rsplit("/", 1)[-1].lower():
                    if r.overwrite:
                        # the service's PID file written again: a record, not a lock breaker
                        self.facts.created.append(r.path)
                        continue
                    r.stale_guard = None
            keep.append(r)
        self.facts.removals[:] = keep

    def _move_fix(self, ev: TrapEvent, active) -> FixTemplate | None:
        """Move a top-level trap to just after the top-level statement that acquires."""
        if not active or ev.top is None:
            return None
        target = self.acq_top[active[0]] if active[0] < len(self.acq_top) else None
        if target is None or target.start_byte <= ev.top.start_byte:
            return None
        busy = self.facts.acquires[active[0]].busy
        if busy is None:
            return None
        # after the busy branch too: `mkdir L; if [ $? -ne 0 ]; then exit; fi` tests the status
        # of the command before it, so the trap cannot go between the two
        for top in self.root.named_children:
            if self._c(top.start_byte) <= busy.span.start < self._c(top.end_byte):
                if top.start_byte <= ev.top.start_byte:
                    return None  # the busy branch is not after the trap at top level
                if top.end_byte > target.end_byte:
                    target = top
                break
        else:
            return None
        t = self.text
        s, e = self._c(ev.top.start_byte), self._c(ev.top.end_byte)
        ls = t.rfind("\n", 0, s) + 1
        le = t.find("\n", e)
        if t[ls:s].strip() or (le >= 0 and t[e:le].strip()):
            return None
        le = len(t) if le < 0 else le + 1
        end = self._c(target.end_byte)
        indent = t[ls:s]
        return FixTemplate(
            "install the release only after the lock is acquired",
            (Edit(ls, le, ""), Edit(end, end, "\n" + indent + t[s:e])),
        )

    def _trap_in_effect(self, ev: TrapEvent, order: int) -> bool:
        for other in self.traps:
            if other is ev or other.before_exit:
                continue
            if (
                ev.order < other.order < order
                and other.exit_trap == ev.exit_trap
                and other.exit_trap
            ):
                if not (ev.keys & other.keys):
                    return False
        return True

    def _released_on_exit(self, idx: int, key: str) -> bool:
        order = self.acq_order[idx]
        exits = [t for t in self.traps if t.exit_trap and not t.before_exit]
        for t in exits:
            if not any(_covers(k, key) for k in t.keys):
                continue
            # in effect at or after the acquire, and not dropped later without a release first
            if t.order > order or self._trap_in_effect(t, order):
                dropped = False
                for t2 in exits:
                    if t2.order > max(t.order, order) and not any(_covers(k, key) for k in t2.keys):
                        released_before = any(
                            t.order < o < t2.order and _covers(k, key)
                            for o, k in self.direct_removals
                        )
                        if not released_before:
                            dropped = True
                if not dropped:
                    return True
        return False


def parse(path: str, text: str) -> FileFacts:
    try:
        return _Analyzer(path, text).run()
    except RecursionError:
        facts = FileFacts(path=path, language="shell", text=text)
        facts.parse_errors.append(
            ParseError(Span(1, 1, 1, 1, 0, 0), "the file is nested too deeply to analyse")
        )
        return facts
    except Exception as exc:  # noqa: BLE001 - no exception may escape a frontend
        facts = FileFacts(path=path, language="shell", text=text)
        msg = f"internal error while reading the file as shell: {type(exc).__name__}: {exc}".splitlines()[
            0
        ]
        facts.parse_errors.append(ParseError(Span(1, 1, 1, 1, 0, 0), msg[:200]))
        return facts
