"""Walking the tree and control flow: the node index, positions, scopes, and where a branch
ends (exit, raise, return, loop jump, falling off the end of the run)."""

from __future__ import annotations

import bisect
import re

from ... import lazyre
from ...hints import Any
from ...model import (
    BusyBranch,
    Edit,
    FileFacts,
    FixTemplate,
    Part,
    PathExpr,
    Span,
)
from . import nodes
from .calls import LOG_METHODS
from .values import _NOVALUE, status_literal


class _Entry:
    """Where a busy branch ends, as found in the code."""

    def __init__(self, node: Any, kind: str, via: list[Any] | None = None) -> None:
        self.node = node  # the small statement / call that ends it
        self.kind = kind  # exit | raise | return | loop | falls
        self.via = via  # exit through a helper: the helper's body


_KINDS = {
    nodes.Call: "call",
    nodes.If: "if",
    nodes.Try: "try",
    nodes.For: "for",
    nodes.With: "with",
    nodes.FunctionDef: "def",
    nodes.ClassDef: "class",
    nodes.Import: "import",
    nodes.ImportFrom: "from",
    nodes.Assign: "assign",
    nodes.AnnAssign: "annassign",
    nodes.WithItem: "withitem",
}


_MISS = object()


_GLOBAL = lazyre.compile(r"^[ \t]*global[ \t]+([\w, \t]+)", re.M)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


class Walk:
    """Methods of :class:`.locks.Analyzer`."""

    def __init__(self, facts: FileFacts, module: Any, line_starts: list[int], py2: bool) -> None:
        self.cst = nodes
        self.facts = facts
        self.text = facts.text
        self.module = module
        self.py2 = py2  # Python 2 code: `file()` is `open()`, `ur""` strings
        self.starts = line_starts
        self.calls: list[Any] = []
        self.ifs: list[Any] = []
        self.tries: list[Any] = []
        self.fors: list[Any] = []
        self.withs: list[Any] = []
        self.funcs: dict[str, list[Any]] = {}
        self.classes: dict[str, Any] = {}
        self.imports: dict[str, str] = {}
        self.assigns: dict[tuple[int, str], list[tuple[int, Any]]] = {}
        self.globals_declared: dict[int, set[str]] = {}
        self.attr_assigns: dict[tuple[int, str], list[Any]] = {}
        self._func_cache: dict[int, Any] = {}
        self._class_cache: dict[int, Any] = {}
        self._hook_cache: dict[int, Any] = {}
        self._walk(self.module)
        self.shadowed = self._shadowed_modules()
        self.entry = self._entry_points()
        self.durable_everywhere = self._script_wide_durable()
        self.handled_creates: set[int] = set()
        self._multi: dict[int, int] = {}
        self._work = 0
        self._param_cache: dict[int, list[list[Part]]] = {}
        self._resolving: set[int] = set()
        self._bound_params: dict[int, Any] = {}  # a helper's parameters, as one call passes them
        self._choice: dict[int, int] = {}
        self._variants: dict[int, tuple[PathExpr, list[PathExpr]]] = {}
        self._keep: list[Any] = []

    # ------------------------------------------------------------------ tree plumbing
    def _walk(self, root: Any) -> None:
        cst = self.cst
        stack = [root]
        while stack:
            n = stack.pop()
            kind = _KINDS.get(n.__class__)
            if kind is None:
                pass
            elif kind == "call":
                self.calls.append(n)
            elif kind == "if":
                self.ifs.append(n)
            elif kind == "try":
                self.tries.append(n)
            elif kind == "for":
                self.fors.append(n)
            elif kind == "with":
                self.withs.append(n)
            elif kind == "def":
                if n.name is not None:
                    self.funcs.setdefault(n.name.value, []).append(n)
            elif kind == "class":
                if n.name is not None:
                    self.classes[n.name.value] = n
            elif kind == "import":
                for a in n.names:
                    full = self._dotted(a.name)
                    if a.asname is not None and isinstance(a.asname.name, cst.Name):
                        self.imports[a.asname.name.value] = full
                    else:
                        top = full.split(".")[0]
                        self.imports[top] = top
            elif kind == "from":
                mod = self._dotted(n.module) if n.module is not None else ""
                if n.relative:
                    mod = "local." + mod
                if not isinstance(n.names, cst.ImportStar):
                    for a in n.names:
                        name = self._dotted(a.name)
                        local = name
                        if a.asname is not None and isinstance(a.asname.name, cst.Name):
                            local = a.asname.name.value
                        self.imports[local] = f"{mod}.{name}"
            elif kind == "assign":
                if n.value is not None:
                    for t in n.targets:
                        self._bind(t.target, n.value, n)
            elif kind == "annassign":
                if n.value is not None:
                    self._bind(n.target, n.value, n)
            elif kind == "withitem":
                if n.asname is not None:
                    self._bind(n.asname.name, n.item, n)
            stack.extend(reversed(n.kids()))
        self.calls.sort(key=self.off)

    def _bind(self, target: Any, value: Any, stmt: Any) -> None:
        cst = self.cst
        if isinstance(target, cst.Name):
            self._pending.append((target.value, value, stmt))
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            if target.value.value == "self":
                self._pending_attr.append((target.attr.value, value, stmt))
        elif isinstance(target, (cst.Tuple, cst.List)):
            vals = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, el in enumerate(target.elements):
                v = vals[i].value if vals is not None and i < len(vals) else None
                if v is not None:
                    self._bind(el.value, v, stmt)
                elif isinstance(el.value, cst.Name):
                    self._pending.append((el.value.value, None, stmt))
                    if vals is None and value is not None:
                        # `ok, pid = take(path)`: element i of what the call returns
                        self._unpacked.setdefault(el.value.value, []).append((stmt, value, i))

    def _dotted(self, node: Any) -> str:
        cst = self.cst
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return self._dotted(node.value) + "." + node.attr.value
        return ""

    def __getattr__(self, name: str) -> Any:
        # lazily created binding queues (filled during the walk, indexed afterwards)
        if name in ("_pending", "_pending_attr"):
            v: list = []
            object.__setattr__(self, name, v)
            return v
        if name == "_unpacked":  # name -> [(statement, value, index)] of tuple targets
            d: dict = {}
            object.__setattr__(self, name, d)
            return d
        raise AttributeError(name)

    def _index_bindings(self) -> None:
        declared = self.globals_declared  # `global X` per function
        for name, value, stmt in self._pending:
            scope = self.func_of(stmt)
            key = (id(scope) if scope is not None else 0, name)
            sp = self.span(stmt)
            self.assigns.setdefault(key, []).append((sp.start, sp.end, value))
            if isinstance(scope, nodes.FunctionDef):
                if id(scope) not in declared:
                    declared[id(scope)] = {
                        n for m in _GLOBAL.finditer(self.code(scope)) for n in _names(m[1])
                    }
                if name in declared[id(scope)]:  # binds the module's name as well
                    self.assigns.setdefault((0, name), []).append((sp.start, sp.end, value))
        for name, value, stmt in self._pending_attr:
            cls = self.class_of(stmt)
            key = (id(cls) if cls is not None else 0, name)
            self.attr_assigns.setdefault(key, []).append(value)

    def off(self, node: Any) -> int:
        return node.s

    def span(self, node: Any) -> Span:
        s, e = node.s, node.e
        line = bisect.bisect_right(self.starts, s)
        end_line = bisect.bisect_right(self.starts, e)
        col = s - self.starts[line - 1]
        end_col = e - self.starts[end_line - 1]
        return Span(line, col + 1, end_line, end_col + 1, s, e)

    def code(self, node: Any) -> str:
        sp = self.span(node)
        return self.text[sp.start : sp.end]

    def up(self, node: Any) -> Any:
        # None: a node with no statement around it (code in a region that did not parse)
        return node.parent if node is not None else None

    def ancestors(self, node: Any):
        p = self.up(node)
        while p is not None:
            yield p
            p = self.up(p)

    def func_of(self, node: Any) -> Any:
        """The innermost function or lambda around ``node``."""
        return self._enclosing(node, (nodes.FunctionDef, nodes.Lambda), self._func_cache)

    def class_of(self, node: Any) -> Any:
        return self._enclosing(node, nodes.ClassDef, self._class_cache)

    def _enclosing(self, node: Any, kinds: Any, cache: dict[int, Any]) -> Any:
        """The nearest ancestor of one of ``kinds``, memoised for every node on the way up
        (so that a 20,000-branch ``elif`` chain is climbed once, not once per call)."""
        seen = []
        a = node.parent
        found = None
        while a is not None:
            r = cache.get(id(a), _MISS)
            if r is not _MISS:
                found = r
                break
            if isinstance(a, kinds):
                found = a
                break
            seen.append(a)
            a = a.parent
        for x in seen:
            cache[id(x)] = found
        return found

    def stmt_of(self, node: Any) -> Any:
        """The statement (simple line or compound) holding ``node``."""
        cst = self.cst
        n = node
        while n is not None:
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return n
            n = self.up(n)
        return None

    def small_of(self, node: Any) -> Any:
        cst = self.cst
        n = node
        while n is not None:
            if isinstance(n, cst.BaseSmallStatement):
                return n
            if isinstance(n, cst.BaseStatement):
                return None
            n = self.up(n)
        return None

    def block_siblings(self, stmt: Any) -> tuple[list[Any], int]:
        if stmt is None:
            return [], -1  # nothing before or after: `sibs[i + 1 :]` is empty
        blk = self.up(stmt)
        body = getattr(blk, "body", None)
        if isinstance(body, (list, tuple)):
            for i, s in enumerate(body):
                if s is stmt:
                    return list(body), i
        return [stmt], 0

    def within(self, node: Any, container: Any) -> bool:
        if node is container:
            return True
        if container is None or node is None:
            return False
        if not (container.s <= node.s and node.e <= container.e):
            return False  # disjoint or larger
        if container.s < node.s or node.e < container.e:
            return True  # strictly inside the container's text: one of its nodes
        return any(x is container for x in self.ancestors(node))

    def descendants(self, node: Any, kind: Any = None):
        stack = [node] if node is not None else []  # an absent argument has none
        while stack:
            n = stack.pop()
            if kind is None or isinstance(n, kind):
                yield n
            stack.extend(reversed(n.kids()))

    def find_end(self, stmts: list[Any]) -> _Entry | None:
        """The first statement that ends or leaves a branch, depth first."""
        cst = self.cst
        for st in stmts:
            if isinstance(st, cst.SimpleStatementLine):
                for sm in st.body:
                    if isinstance(sm, cst.Return):
                        return _Entry(sm, "return")
                    if isinstance(sm, cst.Raise):
                        return _Entry(sm, "raise")
                    if isinstance(sm, (cst.Continue, cst.Break)):
                        return _Entry(sm, "loop")
                    if isinstance(sm, cst.Expr) and self.exit_call(sm.value) is not None:
                        return _Entry(sm, "exit")
                    if isinstance(sm, cst.Expr):
                        body = self._exiting_helper(sm.value)
                        if body is not None:
                            return _Entry(sm, "exit", via=body)
                    ret = self._flag_returned(st, sm)
                    if ret is not None:
                        return _Entry(ret, "return")
                    tested = self._attr_flag_tested(sm)
                    if tested is not None:
                        return tested
            elif isinstance(st, cst.If):
                e = self.find_end(list(st.body.body))
                if e is not None:
                    return e
                if st.orelse is not None:
                    body = st.orelse.body
                    e = self.find_end([body] if isinstance(body, cst.If) else list(body.body))
                    if e is not None:
                        return e
            elif isinstance(st, cst.With):
                e = self.find_end(list(st.body.body))
                if e is not None:
                    return e
            elif isinstance(st, cst.Try):
                blocks = [st.body] + [h.body for h in st.handlers]
                if st.orelse is not None:
                    blocks.append(st.orelse.body)
                for b in blocks:
                    e = self.find_end(list(b.body))
                    if e is not None:
                        return e
        return None

    def _flag_returned(self, line: Any, sm: Any) -> Any:
        """``except FileExistsError: locked = False`` and, after the ``try`` (or ``if``) that
        holds the branch, ``return locked``: the branch ends in that return, its flag the
        function's result.  The Return, or None."""
        cst = self.cst
        if not (
            isinstance(sm, cst.Assign)
            and len(sm.targets) == 1
            and isinstance(sm.targets[0].target, cst.Name)
            and self.const(sm.value) in (False, True, None)
        ):
            return None
        flag = sm.targets[0].target.value
        owner = next(
            (a for a in self.ancestors(line) if isinstance(a, (cst.Try, cst.If, cst.FunctionDef))),
            None,
        )
        if not isinstance(owner, (cst.Try, cst.If)) or self.func_of(owner) is None:
            return None
        sibs, i = self.block_siblings(owner)
        for st in sibs[i + 1 :]:
            if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1:
                ret = st.body[0]
                if isinstance(ret, cst.Return):
                    v = ret.value
                    return ret if isinstance(v, cst.Name) and v.value == flag else None
            if any(n.value == flag for n in self.descendants(st, cst.Name)) or any(
                True for _ in self.descendants(st, (cst.Return, cst.Raise))
            ):
                return None
        return None

    def _attr_flag_tested(self, sm: Any) -> _Entry | None:
        """``self.is_running = True`` in a method of class C, and elsewhere ``si = C()`` then
        ``if si.is_running: sys.exit(...)``: the branch ends where that test's body ends."""
        cst = self.cst
        if not (
            isinstance(sm, cst.Assign)
            and len(sm.targets) == 1
            and isinstance(sm.targets[0].target, cst.Attribute)
            and isinstance(sm.targets[0].target.value, cst.Name)
            and sm.targets[0].target.value.value == "self"
            and self.const(sm.value) in (True, False)
        ):
            return None
        cls = self.class_of(sm)
        if cls is None:
            return None
        attr, value = sm.targets[0].target.attr.value, self.const(sm.value)
        for ifn in self.ifs:
            test, want = ifn.test, True
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, want = test.expression, False
            if not (
                isinstance(test, cst.Attribute)
                and test.attr.value == attr
                and isinstance(test.value, cst.Name)
                and want == value
                and self.class_of(ifn) is not cls
            ):
                continue
            inst = self.lookup(test.value)
            if (
                isinstance(inst, cst.Call)
                and isinstance(inst.func, cst.Name)
                and inst.func.value == cls.name.value
            ):
                end = self.find_end(list(ifn.body.body))
                if end is not None and end.kind == "exit":
                    return end
        return None

    def falls_off(self, stmt: Any) -> bool:
        """After ``stmt`` the run ends (nothing follows up to the module or entry function)."""
        cst = self.cst
        n = stmt
        while True:
            sibs, i = self.block_siblings(n)
            rest = sibs[i + 1 :]
            if any(not self._is_trivial(s) for s in rest):
                return False
            blk = self.up(n)
            owner = self.up(blk)
            if owner is None or isinstance(owner, cst.Module) or isinstance(blk, cst.Module):
                return True
            if isinstance(owner, cst.FunctionDef):
                return self.entry.get(owner.name.value) is not None and self.class_of(owner) is None
            if isinstance(owner, (cst.For, cst.While)):
                return False
            if isinstance(owner, (cst.Else, cst.ExceptHandler, cst.Finally)):
                owner = self.up(owner)
                if isinstance(owner, (cst.For, cst.While)):
                    return False
                if isinstance(owner, cst.If):
                    while isinstance(self.up(owner), cst.If) and self.up(owner).orelse is owner:
                        owner = self.up(owner)
            elif isinstance(owner, cst.If):
                while isinstance(self.up(owner), cst.If) and self.up(owner).orelse is owner:
                    owner = self.up(owner)
            if not isinstance(owner, cst.BaseCompoundStatement):
                return False
            n = owner

    def _is_trivial(self, st: Any) -> bool:
        cst = self.cst
        return isinstance(st, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Pass) for s in st.body
        )

    def busy_branch(self, stmts: list[Any], anchor: Any, owner: Any, depth: int = 0) -> BusyBranch:
        """Busy branch of ``stmts`` (a handler, an if-branch).  ``owner``: the compound
        statement the branch belongs to (for falling off its end)."""
        cst = self.cst
        end = self.find_end(stmts)
        if end is None:
            first = stmts[0] if stmts else anchor
            sp_node = first.body[0] if isinstance(first, cst.SimpleStatementLine) else first
            if owner is not None and self.falls_off(owner):
                return BusyBranch(self.span(sp_node), True, 0, durable=self.durable_in(stmts))
            return BusyBranch(self.span(sp_node), False, None)
        node = end.node
        durable = self.durable_in(stmts, before=self.off(node))
        if end.kind == "loop":
            return BusyBranch(self.span(node), False, None, durable=durable)
        if end.kind == "exit" and end.via is not None:
            # through the script's own helper: its exit decides the status; the helper is
            # shared, so no fix edits it
            inner = self.busy_branch(end.via, anchor, None, depth + 1)
            return BusyBranch(self.span(node), True, inner.status, durable=durable or inner.durable)
        if end.kind == "exit":
            call = node.value
            status = self.exit_status(
                self.arg(call, 0, "code") if self.call_q(call) != "os._exit" else self.arg(call, 0)
            )
            return BusyBranch(
                self.span(node), True, status, durable=durable, status_fix=self._exit_fix(call)
            )
        if end.kind == "raise":
            exc = node.exc
            if exc is None:
                return BusyBranch(self.span(node), True, 1, durable=durable)
            call = exc if isinstance(exc, cst.Call) else None
            q = self.qname(call.func if call is not None else exc)
            if q == "SystemExit":
                arg = self.arg(call, 0, "code") if call is not None else None
                fix = None
                if call is None:
                    sp = self.span(exc)
                    fix = FixTemplate(
                        "exit with the skip code", (Edit(sp.start, sp.end, "SystemExit({code})"),)
                    )
                elif status_literal(self, arg):
                    sp = self.span(call)
                    fix = FixTemplate(
                        "exit with the skip code", (Edit(sp.start, sp.end, "SystemExit({code})"),)
                    )
                return BusyBranch(
                    self.span(node), True, self.exit_status(arg), durable=durable, status_fix=fix
                )
            caught = self._caught_by_caller(node, q, depth) if q else None
            if caught is not None:
                if durable and not caught.durable:
                    caught.durable = True
                return caught
            return BusyBranch(self.span(node), True, 1, durable=durable)
        # return
        func = self.func_of(node)
        if func is None:
            return BusyBranch(self.span(node), False, None, durable=durable)
        mode = self.entry.get(func.name.value) if self.class_of(func) is None else None
        if mode == "ignored":
            return BusyBranch(self.span(node), True, 0, durable=durable)
        if mode == "sysexit":
            status = self.exit_status(node.value)
            fix = None
            if status == 0 and (node.value is None or status_literal(self, node.value)):
                sp = self.span(node)
                fix = FixTemplate(
                    "return the skip code", (Edit(sp.start, sp.end, "return {code}"),)
                )
            return BusyBranch(self.span(node), True, status, durable=durable, status_fix=fix)
        if depth < 2:
            prop = self._propagate(func, node, depth)
            if prop is not None:
                if durable and not prop.durable:
                    prop.durable = True
                return prop
        return BusyBranch(self.span(node), False, None, durable=durable)

    def _propagate(
        self, func: Any, ret: Any, depth: int, forced: tuple[Any] | None = None
    ) -> BusyBranch | None:
        """A helper returned a value on its busy path: follow it to the caller's test.
        ``forced``: the value the return has on that path (a flag left at its start value)."""
        cst = self.cst
        if forced is not None:
            val = forced[0]
        else:
            val = self.const(ret.value) if ret.value is not None else None
        if val is _NOVALUE:
            return None
        truthy = bool(val)
        for call, _m in self.call_sites(func):
            if self.within(call, func):
                continue
            test_node = call
            par = self.up(call)
            # x = helper(); if not x:
            if isinstance(par, cst.Assign) and len(par.targets) == 1:
                tgt = par.targets[0].target
                st = self.stmt_of(par)
                sibs, i = self.block_siblings(st)
                if (
                    isinstance(tgt, cst.Name)
                    and i + 1 < len(sibs)
                    and isinstance(sibs[i + 1], cst.If)
                ):
                    nxt = sibs[i + 1]
                    for n in self.descendants(nxt.test, cst.Name):
                        if n.value == tgt.value:
                            test_node = n
                            par = self.up(n)
                            break
                    else:
                        continue
                else:
                    continue
            node = test_node
            negate = False
            while True:
                par = self.up(node)
                if isinstance(par, cst.UnaryOperation) and isinstance(par.operator, cst.Not):
                    negate = not negate
                    node = par
                    continue
                if isinstance(par, cst.Comparison) and len(par.comparisons) == 1:
                    op = par.comparisons[0].operator
                    other = self.const(par.comparisons[0].comparator)
                    if other is _NOVALUE:
                        break
                    eq = val == other if not isinstance(op, (cst.Is, cst.IsNot)) else val is other
                    if isinstance(op, (cst.IsNot, cst.NotEqual)):
                        eq = not eq
                    truthy_here = eq
                    node = par
                    if isinstance(self.up(node), cst.If) and self.up(node).test is node:
                        return self._if_branch(self.up(node), truthy_here != negate, depth)
                    break
                if isinstance(par, cst.If) and par.test is node:
                    return self._if_branch(par, truthy != negate, depth)
                break
        return None

    def _caught_by_caller(self, raise_node: Any, exc: str, depth: int) -> BusyBranch | None:
        """A helper raises its own error on the busy path (``raise LockExists(...)``) and the
        caller's ``except LockExists:`` (or a wider ``except Exception:``) handles it: the busy
        branch goes on in that handler."""
        cst = self.cst
        func = self.func_of(raise_node)
        if depth >= 2 or not isinstance(func, cst.FunctionDef):
            return None
        name = exc.rsplit(".", 1)[-1]
        if name in ("SystemExit", "KeyboardInterrupt"):
            return None
        # the script's own exception classes are followed into any handler that takes them;
        # a built-in one (`raise RuntimeError("busy")`) only into a handler that names it
        wide = {name, "Exception", "BaseException"} if name in self.classes else {name}
        for call, _m in self.call_sites(func):
            if self.within(call, func):
                continue
            t = self.enclosing_try(call)
            while t is not None:
                for h in t.handlers:
                    if self.handler_names(h) & wide:
                        return self.busy_branch(list(h.body.body), h, t, depth + 1)
                t = self.enclosing_try(t)
        return None

    def _if_branch(self, ifnode: Any, body_taken: bool, depth: int) -> BusyBranch:
        cst = self.cst
        if body_taken:
            return self.busy_branch(list(ifnode.body.body), ifnode, ifnode, depth + 1)
        if ifnode.orelse is not None:
            body = ifnode.orelse.body
            stmts = [body] if isinstance(body, cst.If) else list(body.body)
            return self.busy_branch(stmts, ifnode, ifnode, depth + 1)
        if self.falls_off(ifnode):
            return BusyBranch(self.span(ifnode.test), True, 0)
        return BusyBranch(self.span(ifnode.test), False, None)

    def _exit_fix(self, call: Any) -> FixTemplate | None:
        q = self.call_q(call)
        arg = self.arg(call, 0, "code")
        if arg is not None and not status_literal(self, arg):
            return None
        sp = self.span(call)
        if q in ("sys.exit", "os._exit"):
            func = self.code(call.func)
            return FixTemplate(
                "exit with the skip code", (Edit(sp.start, sp.end, f"{func}({{code}})"),)
            )
        if q in ("exit", "quit"):
            sysname = next((k for k, v in self.imports.items() if v == "sys"), None)
            if sysname is None:
                return None
            return FixTemplate(
                "exit with the skip code", (Edit(sp.start, sp.end, f"{sysname}.exit({{code}})"),)
            )
        return None

    def durable_in(self, stmts: list[Any], before: int | None = None) -> bool:
        cst = self.cst
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                if before is not None and self.off(c) > before:
                    continue
                q = self.call_q(c)
                m = self.method(c)
                if q.startswith("syslog.") or q in ("systemd.journal.send",):
                    return True
                if q in ("open", "io.open") and "a" in str(self.mode_of(c) or ""):
                    return True
                if m in ("write_text", "write_bytes"):
                    return True
                if q in ("open", "io.open") and "w" in str(self.mode_of(c) or ""):
                    return True
                if (
                    self.durable_everywhere is not None
                    and (m in LOG_METHODS or q in ("print",) or m == "write")
                    and (self.func_of(c) is not None or self.off(c) > self.durable_everywhere)
                ):
                    # a module-level skip before the log file is set up records nothing
                    return True
        return False

    def mode_of(self, call: Any) -> str | None:
        m = self.arg(call, 1, "mode")
        if m is None:
            return "r"
        v = self.const(m)
        return v if isinstance(v, str) else None
