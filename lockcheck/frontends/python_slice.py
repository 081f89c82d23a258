"""Dropping the functions of a Python file that cannot matter to any lock fact.

libcst's cost grows with the size of the file, and the files that pass the gate are often big
test or library modules where one function of hundreds touches a lock.  Before libcst sees
such a file, every function that neither touches a file, a process or a lock nor is linked to
one that does is replaced by ``pass``.  Everything kept is copied unchanged and its offsets
are mapped back to the file's, so spans, comments and fixes are computed exactly as on the
whole file.

Kept, besides all module-level and class-level statements:

- *seeds*: functions that use the lock, removal, process, exit-hook or logging vocabulary the
  analyser reads, a lock-like name or mode string, a name imported under another name, or a
  module- or class-level lock object; plain file writes only when the file removes a
  lock-like name (then what it creates decides LCK107);
- their callers, transitively (call-site arguments, helpers whose result decides a skip),
  and the users of an attribute or global a kept function binds to such a value;
- the callees of everything kept, transitively (exit helpers, path helpers), and the
  functions that bind an attribute a kept function reads.
"""

from __future__ import annotations

import ast
import bisect
import re

from ..paths import lockish_text
from .python_gate import (
    CREATE_NAMES,
    KILL_NAMES,
    LIB_NAMES,
    LOG_HANDLERS,
    MODE_X,
    OPEN_NAMES,
    REMOVE_FUNCS,
    TEST_NAMES,
    WRITE_NAMES,
    walk,
)

# what makes a file: a fact only when it names what the file also removes (a probe, a
# check-then-create, or a created name that is not another job's lock: LCK107)
WRITE_SEEDS = OPEN_NAMES | WRITE_NAMES | {"O_CREAT", "rename", "replace", "move", "renames"}
SEED_NAMES = (
    LIB_NAMES
    | KILL_NAMES
    | REMOVE_FUNCS
    | CREATE_NAMES
    | LOG_HANDLERS
    | {
        "remove",
        "O_EXCL",
        "register",
        "atexit",
        "signal",
        "getmtime",
        "getctime",
        "st_mtime",
        "st_ctime",
        "st_ino",
        "basicConfig",
        "dictConfig",
        "fileConfig",
        "dup2",
        "stdout",
        "stderr",
        "Popen",
        "fork",
        "Process",
        "acquire",
        "release",
        "Timeout",
        "getpid",
        "fcntl",
        "filelock",
    }
)
_DEF = (ast.FunctionDef, ast.AsyncFunctionDef)


class _Unit:
    __slots__ = (
        "node",
        "name",
        "refs",
        "self_refs",
        "binds",
        "seedish_attrs",
        "seedish_globals",
        "globals",
        "seed",
    )

    def __init__(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None, seeds: frozenset[str]
    ) -> None:
        self.node = node
        # __init__ is reached through the class's name
        self.name = cls if node.name == "__init__" and cls else node.name
        self.refs: set[str] = set()  # names and attribute names used
        self.self_refs: set[str] = set()  # self.X read
        self.binds: set[str] = set()  # attributes stored
        self.seedish_attrs: set[str] = set()  # attributes bound to a seed-like value
        self.seedish_globals: set[str] = set()  # globals bound to one (`global LOCK`)
        seedish_names: set[str] = set()
        self.globals: set[str] = set()
        self.seed = False
        strings = False
        for n in walk(node):
            t = type(n)
            if t is ast.Name:
                self.refs.add(n.id)
            elif t is ast.Attribute:
                self.refs.add(n.attr)
                if isinstance(n.ctx, ast.Store):
                    self.binds.add(n.attr)
                elif isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
                    self.self_refs.add(n.attr)
            elif t is ast.Global:
                self.globals.update(n.names)
            elif t is ast.ImportFrom:
                # a function that imports a seed under another name uses it by that name
                self.refs.update(a.name for a in n.names)
            elif t is ast.Constant and isinstance(n.value, str) and not strings:
                strings = lockish_text(n.value) or bool(MODE_X.match(n.value))
            elif t in (ast.Assign, ast.AnnAssign) and n.value is not None and _seedish(n.value):
                targets = n.targets if t is ast.Assign else [n.target]
                for tg in targets:
                    for x in walk(tg):
                        if isinstance(x, ast.Attribute):
                            self.seedish_attrs.add(x.attr)
                        elif isinstance(x, ast.Name):
                            seedish_names.add(x.id)
        self.seedish_globals = seedish_names & self.globals  # locals stay in the function
        self.seed = (
            strings
            or bool(self.refs & seeds)
            or bool(self.refs & TEST_NAMES and self.refs & WRITE_SEEDS)  # check-then-create
            or any(lockish_text(r) for r in self.refs)
        )


def _seedish(value: ast.AST) -> bool:
    for n in walk(value):
        if isinstance(n, ast.Name) and (n.id in SEED_NAMES or lockish_text(n.id)):
            return True
        if isinstance(n, ast.Attribute) and (n.attr in SEED_NAMES or lockish_text(n.attr)):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and lockish_text(n.value):
            return True
    return False


def _aliases(body: list[ast.stmt], seeds: frozenset[str]) -> set[str]:
    """Local names of seeds imported under another name at module or class level."""
    out: set[str] = set()
    for st in body:
        if isinstance(st, ast.ImportFrom):
            out.update(a.asname for a in st.names if a.asname and a.name in seeds)
        elif not isinstance(st, _DEF):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if isinstance(sub, list):
                    out |= _aliases([s for s in sub if isinstance(s, ast.stmt)], seeds)
            for h in getattr(st, "handlers", None) or ():
                out |= _aliases(h.body, seeds)
    return out


def _shared_seedish(body: list[ast.stmt], out: set[str]) -> set[str]:
    """Names bound at module or class level to a lock-like value (``guard = FileLock(p)``):
    a function that uses one takes part in a lock."""
    for st in body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            if _seedish(st.value):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for tg in targets:
                    out.update(n.id for n in walk(tg) if isinstance(n, ast.Name))
        elif not isinstance(st, _DEF):
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(st, field, None)
                if isinstance(sub, list):
                    _shared_seedish([s for s in sub if isinstance(s, ast.stmt)], out)
    return out


def _units(
    body: list[ast.stmt], cls: str | None, seeds: frozenset[str], out: list[_Unit]
) -> list[_Unit]:
    for st in body:
        if isinstance(st, _DEF):
            out.append(_Unit(st, cls, seeds))
        elif isinstance(st, ast.ClassDef):
            _units(st.body, st.name, seeds, out)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(st, field, None)
                if isinstance(sub, list):
                    _units([s for s in sub if isinstance(s, ast.stmt)], cls, seeds, out)
            for h in getattr(st, "handlers", None) or ():
                _units(h.body, cls, seeds, out)
    return out


def _kept(units: list[_Unit]) -> set[int]:
    by_name: dict[str, list[int]] = {}
    for i, u in enumerate(units):
        by_name.setdefault(u.name, []).append(i)
    up = {i for i, u in enumerate(units) if u.seed}
    # callers, and users of what a kept function binds to a lock-like value
    changed = True
    while changed:
        changed = False
        names = {units[i].name for i in up}
        attrs: set[str] = set()
        globs: set[str] = set()
        for i in up:
            attrs |= units[i].seedish_attrs
            globs |= units[i].seedish_globals
        for i, u in enumerate(units):
            if i not in up and (u.refs & names or u.self_refs & attrs or u.refs & globs):
                up.add(i)
                changed = True
    # callees of everything kept, and the binders of what it reads
    binders: dict[str, list[int]] = {}
    for j, v in enumerate(units):
        for attr in v.binds:
            binders.setdefault(attr, []).append(j)
    kept = set(up)
    work = list(up)
    while work:
        u = units[work.pop()]
        for j in [j for ref in u.refs for j in by_name.get(ref, ())] + [
            j for attr in u.self_refs for j in binders.get(attr, ())
        ]:
            if j not in kept:
                kept.add(j)
                work.append(j)
    return kept


def line_starts(text: str) -> list[int]:
    """The offset of each line's start, lines ended as CPython ends them (CRLF, CR, LF)."""
    return [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", text))]


class Sliced:
    """The text libcst parses, and the way back to the file's offsets."""

    def __init__(self, text: str, starts: list[int], origins: list[int]) -> None:
        self.text = text
        self._starts = starts  # start of each segment in ``text``
        self._origins = origins  # where that segment starts in the file

    def original(self, offset: int) -> int:
        i = bisect.bisect_right(self._starts, offset) - 1
        return self._origins[i] + offset - self._starts[i]


def slice_text(tree: ast.Module, text: str, file_writes: bool = True) -> Sliced | None:
    """``text`` with each function no lock fact can involve replaced by one ``pass`` line
    (None when every function is kept).  Everything kept is copied unchanged, so its
    offsets map back to the file's by segment."""
    seeds = SEED_NAMES | WRITE_SEEDS if file_writes else SEED_NAMES
    seeds = seeds | _aliases(tree.body, seeds) | _shared_seedish(tree.body, set())
    units = _units(tree.body, None, seeds, [])
    if not units:
        return None
    kept = _kept(units)
    drop = sorted(
        (
            (u.node.decorator_list[0].lineno if u.node.decorator_list else u.node.lineno, u.node)
            for i, u in enumerate(units)
            if i not in kept
        ),
        key=lambda x: x[0],
    )
    if not drop:
        return None
    line_start = [*line_starts(text), len(text)]

    def line(n: int) -> str:  # 1-based, with its line break
        return text[line_start[n - 1] : line_start[n]]

    out: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    pos = 0  # in the file
    size = 0  # of the output
    for first, node in drop:
        end = node.end_lineno or node.lineno
        a, b = line_start[first - 1], line_start[end]
        starts.append(size)
        origins.append(pos)
        out.append(text[pos:a])
        size += a - pos
        body = line(node.lineno).rstrip("\r\n")
        indent = body[: len(body) - len(body.lstrip(" \t\f"))]
        last = line(end)
        newline = last[len(last.rstrip("\r\n")) :] or "\n"
        stub = indent + "pass" + newline
        starts.append(size)
        origins.append(line_start[node.lineno - 1])  # the stub stands for the def line
        out.append(stub)
        size += len(stub)
        pos = b
    starts.append(size)
    origins.append(pos)
    out.append(text[pos:])
    return Sliced("".join(out), starts, origins)
