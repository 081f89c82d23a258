"""Stage 3: the busy branch.  Where a run that did not get the lock goes, with what exit
status it ends (``process.exit()`` is ``process.exitCode`` or 0, ``return`` from the entry
function is 0, ``throw`` is 1) and whether it records the skip durably."""

from __future__ import annotations

from ...hints import Any
from ...model import BusyBranch, Edit, FixTemplate
from . import syntax
from .syntax import Tree, args, text, unwrap
from .values import Names

DURABLE_CALLS = {
    "fs.appendFileSync",
    "fs.appendFile",
    "fs.writeFileSync",
    "fs.writeFile",
    "fs.createWriteStream",
}
LOG_METHODS = {"info", "warn", "warning", "error", "log", "notice", "debug", "write"}
FILE_LOGGER_HINTS = (
    "transports.File",
    "createWriteStream",
    "pino.destination",
    "filename",
    "File(",
)


class Busy:
    def __init__(self, tree: Tree, names: Names) -> None:
        self.tree = tree
        self.names = names

    # -- ends ----------------------------------------------------------------------------------
    def is_exit(self, node: Any) -> bool:
        return node.type == "call_expression" and self.names.callee(node) in (
            "process.exit",
            "process.reallyExit",
        )

    def ends(self, stmts: list[Any]) -> list[Any]:
        """exit calls, throws and returns in ``stmts`` (not in nested functions), in order."""
        out = []
        for st in stmts:
            stack = [st]
            while stack:
                n = stack.pop()
                if n.type in syntax.FUNCTIONS:
                    continue
                if n.type in ("return_statement", "throw_statement") or self.is_exit(n):
                    out.append(n)
                    continue
                if n.type == "call_expression" and self.exiting_helper(n) is not None:
                    out.append(n)
                    continue
                stack.extend(reversed(n.named_children))
        return out

    def exiting_helper(self, call: Any) -> Any:
        """The ``process.exit`` that a call of a local function always reaches (an exit
        among the function's own statements, not under a condition), or None."""
        func = self.names.local_function(call)
        body = func.child_by_field_name("body") if func is not None else None
        if body is None or syntax.within(call, func):
            return None
        for st in syntax.block_statements(body):
            if st.type != "expression_statement":
                continue
            inner = unwrap(st.named_children[0]) if st.named_children else None
            if inner is not None and self.is_exit(inner):
                return inner
        return None

    def _rethrow_guard(self, n: Any) -> bool:
        """``if (e.code !== "EEXIST") throw e``: not the busy path."""
        if n.type != "throw_statement":
            return False
        p = n.parent
        while p is not None and p.type == "statement_block":
            p = p.parent
        if p is None or p.type != "if_statement":
            return False
        cond = text(p.child_by_field_name("condition") or p)
        return "!=" in cond or "!==" in cond

    def _rejects(self, end: Any) -> bool:
        """``return Promise.reject(...)``: a rejection, which fails like a ``throw``."""
        if end.type != "return_statement" or not end.named_children:
            return False
        v = unwrap(end.named_children[0])
        return v.type == "call_expression" and self.names.callee(v) == "Promise.reject"

    @staticmethod
    def returned_truth(ret: Any) -> bool | None:
        vals = [c for c in ret.named_children if c.type != "comment"]
        if not vals:
            return False
        v = unwrap(vals[0])
        if v.type in ("false", "null", "undefined"):
            return False
        if v.type == "true":
            return True
        if v.type == "number":
            return text(v) not in ("0",)
        return None

    # -- branches ------------------------------------------------------------------------------
    def branch(self, stmts: list[Any], anchor: Any, depth: int = 0) -> BusyBranch | None:
        """The busy branch made of ``stmts`` (``anchor``: the acquiring node, for a branch that
        is empty)."""
        if depth > 4:
            return None
        for end in self.ends(stmts):
            if self._rethrow_guard(end):
                continue
            if end.type == "return_statement" and self.returned_truth(end) is True:
                continue  # a takeover path: the lock was taken after all
            return self._ending(stmts, end, anchor, depth)
        # falls off the end
        first = stmts[0] if stmts else anchor
        func = syntax.function_of(anchor)
        if func is None:
            if stmts and not syntax.following(syntax.statement_of(stmts[0].parent or anchor)):
                return BusyBranch(self.tree.span(first), True, 0, self.durable(stmts, None))
            return BusyBranch(self.tree.span(first), False, None)
        return self._propagate(func, None, stmts, first, depth)

    def _ending(self, stmts: list[Any], end: Any, anchor: Any, depth: int) -> BusyBranch | None:
        durable = self.durable(stmts, end)
        helper_exit = None if self.is_exit(end) else self.exiting_helper(end)
        if helper_exit is not None:  # already_running() { log; process.exit(0) }
            func = syntax.function_of(helper_exit)
            inner = syntax.block_statements(func.child_by_field_name("body"))
            durable = durable or self.durable(inner, helper_exit)
            stmts, end = inner, helper_exit
        span = self.tree.span(end)
        if end.type == "throw_statement" or self._rejects(end):
            return BusyBranch(span, True, 1, durable)
        if self.is_exit(end):
            a = args(end)
            if not a:
                code = self.exit_code(stmts, end)
                fix = self._insert_code(end)
                return BusyBranch(span, True, code, durable, status_fix=fix)
            v = unwrap(a[0])
            status = int(text(v)) if v.type == "number" and text(v).isdigit() else None
            fix = FixTemplate(
                "exit with the skip code",
                (Edit(self._s(v), self._e(v), "{code}"),),
            )
            return BusyBranch(span, True, status, durable, status_fix=fix)
        func = syntax.function_of(end)
        return self._propagate(func, end, stmts, end, depth, durable)

    def _propagate(
        self, func: Any, ret: Any, stmts: list[Any], first: Any, depth: int, durable: bool = False
    ) -> BusyBranch | None:
        """A ``return`` (or falling off the end) of ``func``: the caller decides."""
        span = self.tree.span(ret if ret is not None else first)
        if func is None:  # a CommonJS module's top-level return ends the script
            return BusyBranch(span, True, self.exit_code(stmts, ret), durable)
        for site in self.names.call_sites(func):
            cond, negated = self._condition_of(site)
            if cond is not None:
                ifn = cond.parent
                body = ifn.child_by_field_name("consequence" if negated else "alternative")
                if body is None:
                    continue
                b = self.branch(syntax.block_statements(body), site, depth + 1)
                if b is not None:
                    b.durable = b.durable or durable
                    return b
            elif self._entry_call(site):
                code = self.exit_code(stmts, ret)
                fix = self._return_fix(ret) if ret is not None else None
                return BusyBranch(span, True, code, durable, status_fix=fix)
        return BusyBranch(span, False, None, durable)

    def caller_tests(self, func: Any) -> bool:
        """A caller in this file tests what ``func`` returns: the call is an ``if``
        condition, or its value is stored (``const fd = await f()``) and a following ``if``
        tests that name."""
        for site in self.names.call_sites(func):
            if syntax.within(site, func):
                continue
            if self._condition_of(site)[0] is not None:
                return True
            n = site
            while n.parent is not None and n.parent.type in syntax.WRAPPERS:
                n = n.parent
            p = n.parent
            name = None
            if p is not None and p.type == "variable_declarator":
                name = p.child_by_field_name("name")
            elif p is not None and p.type == "assignment_expression":
                name = p.child_by_field_name("left")
            if name is None or name.type != "identifier":
                continue
            for st in syntax.following(syntax.statement_of(site)):
                cond = st.child_by_field_name("condition") if st.type == "if_statement" else None
                if cond is not None and any(
                    text(i) == text(name) for i in syntax.descendants(cond, "identifier")
                ):
                    return True
        return False

    def _condition_of(self, site: Any) -> tuple[Any, bool]:
        n, negated = site, False
        while n.parent is not None:
            p = n.parent
            if p.type in syntax.WRAPPERS:
                n = p
                continue
            if p.type == "unary_expression" and text(p).startswith("!"):
                negated = not negated
                n = p
                continue
            if p.type == "if_statement" and p.child_by_field_name("condition") == n:
                return n, negated
            return None, False
        return None, False

    def _entry_call(self, site: Any) -> bool:
        """``main();``, ``await main();``, ``main().catch(...)`` at the top level."""
        if syntax.function_of(site) is not None:
            return False
        n = site
        while n.parent is not None and n.parent.type in (
            "await_expression",
            "parenthesized_expression",
            "member_expression",
            "call_expression",
        ):
            n = n.parent
        return n.parent is not None and n.parent.type == "expression_statement"

    def exit_code(self, stmts: list[Any], end: Any) -> int | None:
        """``process.exitCode = N`` set in the branch before ``end`` (else 0)."""
        code: int | None = 0
        limit = end.start_byte if end is not None else 1 << 62
        for st in stmts:
            for n in syntax.descendants(st, "assignment_expression"):
                if n.start_byte > limit:
                    break
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and text(left) == "process.exitCode" and right is not None:
                    r = unwrap(right)
                    code = int(text(r)) if r.type == "number" and text(r).isdigit() else None
        return code

    def durable(self, stmts: list[Any], end: Any) -> bool:
        limit = end.start_byte if end is not None else 1 << 62
        for st in stmts:
            for c in syntax.descendants(st, "call_expression"):
                if c.start_byte > limit:
                    break
                q = self.names.callee(c)
                if q in DURABLE_CALLS or self._file_logger(c):
                    return True
        return False

    def _file_logger(self, call: Any) -> bool:
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "member_expression":
            return False
        prop, obj = fn.child_by_field_name("property"), unwrap(fn.child_by_field_name("object"))
        if prop is None or text(prop) not in LOG_METHODS or obj is None or obj.type != "identifier":
            return False
        for v in self.names.values(obj):
            src = text(v)
            if any(h in src for h in FILE_LOGGER_HINTS):
                return True
        return False

    # -- fixes -----------------------------------------------------------------------------------
    def _s(self, n: Any) -> int:
        return self.tree.offsets.char(n.start_byte)

    def _e(self, n: Any) -> int:
        return self.tree.offsets.char(n.end_byte)

    def _insert_code(self, call: Any) -> FixTemplate | None:
        a = call.child_by_field_name("arguments")
        if a is None:
            return None
        pos = self._e(a) - 1
        return FixTemplate("exit with the skip code", (Edit(pos, pos, "{code}"),))

    def _return_fix(self, ret: Any) -> FixTemplate:
        pos = self._s(ret)
        return FixTemplate(
            "exit with the skip code", (Edit(pos, pos, "process.exitCode = {code}; "),)
        )
