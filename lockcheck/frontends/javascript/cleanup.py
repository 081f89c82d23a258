"""Stage 5: what happens to the locks afterwards.  Removals (``unlinkSync``/``rmSync``...) and
the hooks that run them (``finally``, ``process.on("exit"|"SIGINT"|"SIGTERM")``, through the
functions they call), stored-PID liveness checks and kills, stale-lock breakers, and whether
each existence lock is released on every exit path."""

from __future__ import annotations

from ...hints import Any
from ...model import Edit, FileFacts, FixTemplate, Kill, LivenessCheck, ReleaseHook, Removal
from ...paths import lockish_name, same_path
from . import syntax
from .busy import Busy
from .syntax import TIMES, Tree, arg, object_entries, string_value, text
from .values import Names

REMOVES = {
    "fs.unlinkSync",
    "fs.unlink",
    "fs.rmSync",
    "fs.rm",
    "fs.rmdirSync",
    "fs.rmdir",
    "fs.remove",
    "fs.removeSync",
}
OVERWRITES = {"fs.writeFileSync", "fs.writeFile"}
EXIT_EVENTS = {"exit", "beforeExit"}
SIGNAL_EVENTS = {"SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"}
# exit-hook libraries, called with the function to run at exit (and on signals)
EXIT_HOOKS = {"when-exit", "signal-exit", "exit-hook", "async-exit-hook", "node-cleanup"}
EXIT_HOOKS |= {f"{m}.default" for m in EXIT_HOOKS} | {"signal-exit.onExit"}
EXIT_HOOKS |= {"exit-hook.asyncExitHook"}
ORDERING = {"<", ">", "<=", ">="}


class Cleanup:
    def __init__(self, tree: Tree, names: Names, busy: Busy, facts: FileFacts, nodes: list) -> None:
        self.tree, self.names, self.busy, self.facts = tree, names, busy, facts
        self.acq_nodes = nodes
        self.handlers = self._handlers()  # function node start -> (event, process.on call)

    def run(self) -> None:
        self._removals()
        self._pids()
        self._coverage()

    # -- hooks -----------------------------------------------------------------------------------
    def _handlers(self) -> dict[int, tuple[str, Any]]:
        out: dict[int, tuple[str, Any]] = {}
        for c in self.tree.calls:
            q = self.names.callee(c)
            if q in EXIT_HOOKS:
                event, h = "exit", arg(c, 0)
            elif q in ("process.on", "process.once", "process.addListener"):
                event, h = string_value(arg(c, 0)) or "", arg(c, 1)
            else:
                continue
            if h is None:
                continue
            if h.type == "identifier" and text(h) in self.names.functions:
                h = self.names.functions[text(h)]
            if h.type in syntax.FUNCTIONS:
                out[h.start_byte] = (event, c)
        return out

    def _context(self, node: Any, depth: int = 0) -> tuple[str, Any, Any]:
        """How a removal runs: ("finally", try) / ("atexit", process.on call) /
        ("signal", call) / ("direct", None); the last item is the node that runs it."""
        for a in syntax.ancestors(node):
            if a.type == "finally_clause":
                return "finally", a.parent, a
            if a.type in syntax.FUNCTIONS:
                if a.start_byte in self.handlers:
                    event, call = self.handlers[a.start_byte]
                    kind = "atexit" if event in EXIT_EVENTS else "signal"
                    return kind, call, a
                if syntax.function_name(a) is None:
                    continue  # a callback (``fs.rmdir(L, err => ...)``): its function runs it
                if depth < 3:  # a release helper: how its call sites run it
                    for site in self.names.call_sites(a):
                        ctx = self._context(site, depth + 1)
                        if ctx[0] != "direct":
                            return ctx
                break
        return "direct", None, None

    # -- removals --------------------------------------------------------------------------------
    def _removals(self) -> None:
        for c in self.tree.calls:
            q = self.names.callee(c)
            if q in OVERWRITES:
                self._age_overwrite(c)
                continue
            if q not in REMOVES:
                continue
            path = self.names.path(arg(c, 0))
            via, hook, _runner = self._context(c)
            r = Removal(path, self.tree.span(c), via="direct" if via == "signal" else via)
            r.conditional = self._conditional(c)
            if self._lock_path(path) and self._age_guarded(c):
                r.stale_guard = "age"
            r.drop_fix = self._drop_fix(c)
            if hook is not None:
                r.hook_span = self.tree.span(hook)
                self._hook(path, via, hook)
            self.facts.removals.append(r)

    def _age_overwrite(self, call: Any) -> None:
        """A plain write over the file an exclusive create takes, under an age test: the
        lock judged old is taken over in place (``if (age > STALE) writeFileSync(L, pid)``)."""
        if "x" in self._write_flags(call):
            return  # an exclusive create never overwrites
        path = self.names.path(arg(call, 0))
        if path is None or not any(same_path(path, a.path) for a in self.facts.acquires):
            return
        if self._age_guarded(call):
            span = self.tree.span(call)
            self.facts.removals.append(Removal(path, span, stale_guard="age", overwrite=True))

    def _lock_path(self, path: Any) -> bool:
        """Only the removal of a lock is a breaker: cache and retention expiry remove old
        files too."""
        if path is None:
            return False
        return lockish_name(path) or any(same_path(path, a.path) for a in self.facts.acquires)

    def _age_guarded(self, call: Any) -> bool:
        """An ``if``/``while``/ternary around the removal orders a file time, or a value
        computed from one: ``Date.now() - stat.mtimeMs > STALE``, ``age >= MAX_AGE``; or an
        ``if`` just before it leaves for a young lock (``if (!(age(L) > MAX)) return false;``
        and the takeover follows)."""
        for a in syntax.ancestors(call):
            if a.type in syntax.FUNCTIONS:
                return False
            if a.type in ("if_statement", "while_statement", "ternary_expression"):
                cond = a.child_by_field_name("condition")
                if cond is not None and self._age_test(cond):
                    return True
            if a.parent is not None and a.parent.type in ("statement_block", "program"):
                sibs = syntax.block_statements(a.parent)
                i = next((k for k, s in enumerate(sibs) if s == a), 0)
                for prev in sibs[max(0, i - 3) : i]:
                    cond = prev.child_by_field_name("condition")
                    if prev.type != "if_statement" or cond is None or not self._age_test(cond):
                        continue
                    body = prev.child_by_field_name("consequence")
                    if any(
                        s.type in ("return_statement", "throw_statement")
                        for s in syntax.block_statements(body)
                    ):
                        return True
        return False

    def _age_test(self, cond: Any, depth: int = 0) -> bool:
        if depth < 2:  # a local helper that judges the age: ``if (isStale(L))``
            for c in [cond, *syntax.descendants(cond, "call_expression")]:
                helper = self.names.local_function(c) if c.type == "call_expression" else None
                if helper is None:
                    continue
                body = helper.child_by_field_name("body")
                if body is not None and body.type != "statement_block":  # p => age(p) > MAX
                    if self._age_test(body, depth + 1):
                        return True
                for ret in syntax.descendants(helper, "return_statement"):
                    if syntax.function_of(ret) == helper and self._age_test(ret, depth + 1):
                        return True
        for cmp in [cond, *syntax.descendants(cond, "binary_expression")]:
            op = cmp.child_by_field_name("operator") if cmp.type == "binary_expression" else None
            if op is None or op.type not in ORDERING:
                continue
            if TIMES.search(text(cmp)):
                return True
            for c in syntax.descendants(cmp, "call_expression"):  # `lockAge(L) > MAX`
                helper = self.names.local_function(c)
                if helper is not None and any(
                    TIMES.search(text(r)) for r in syntax.descendants(helper, "return_statement")
                ):
                    return True
            for ident in syntax.descendants(cmp, "identifier"):
                if any(TIMES.search(text(v)) for v in self.names.values(ident)):
                    return True
        return False

    def _conditional(self, call: Any) -> bool:
        for a in syntax.ancestors(call):
            if a.type in ("if_statement", "catch_clause", "ternary_expression"):
                cond = a.child_by_field_name("condition")
                if cond is not None and "exists" in text(cond):
                    continue  # if (existsSync(L)) unlinkSync(L): the same removal
                return True
            if a.type in syntax.FUNCTIONS:
                return a.start_byte not in self.handlers
        return False

    def _drop_fix(self, call: Any) -> FixTemplate | None:
        st = call.parent
        while st is not None and st.type in syntax.WRAPPERS:
            st = st.parent
        if st is None or st.type != "expression_statement":
            return None
        if st.parent is None or st.parent.type not in ("statement_block", "program"):
            return None
        s = self.tree.offsets.char(st.start_byte)
        e = self.tree.offsets.char(st.end_byte)
        t = self.tree.text
        ls = t.rfind("\n", 0, s) + 1
        if t[ls:s].strip() == "":
            le = t.find("\n", e)
            if le != -1 and t[e:le].strip() == "":
                s, e = ls, le + 1
        return FixTemplate("drop the removal of the locked file", (Edit(s, e, ""),))

    def _hook(self, path: Any, via: str, hook: Any) -> None:
        span = self.tree.span(hook.child(0) if via == "finally" else hook)
        for h in self.facts.hooks:
            if h.span == span and same_path(h.path, path):
                return
        if via == "finally":
            mech = "finally"
        elif self.names.callee(hook).startswith("process."):
            mech = f"process.on({text(arg(hook, 0))})"
        else:  # an exit-hook library: whenExit(...), onExit(...)
            mech = f"{text(hook.child_by_field_name('function'))}(...)"
        active = []
        for i, acq in enumerate(self.facts.acquires):
            if acq.busy is None or not acq.busy.ends_run or not same_path(path, acq.path):
                continue
            if via == "finally":
                body = hook.child_by_field_name("body")
                if body is not None and self._inside(acq.busy.span, body):
                    active.append(i)
            elif via == "atexit" and self.when(hook) < self.when(self.acq_nodes[i]):
                active.append(i)
        self.facts.hooks.append(ReleaseHook(path, span, mech, tuple(active)))

    def when(self, node: Any, depth: int = 0) -> int:
        """Where in the top-level flow ``node`` runs: its own offset at the top level, else
        the earliest top-level call that leads to its function."""
        func = syntax.function_of(node)
        if func is None or depth > 4:
            return node.start_byte
        sites = self.names.call_sites(func)
        if not sites:
            return node.start_byte
        return min(self.when(s, depth + 1) for s in sites)

    def _inside(self, span: Any, node: Any) -> bool:
        s = self.tree.offsets.char(node.start_byte)
        e = self.tree.offsets.char(node.end_byte)
        return s <= span.start and span.end <= e

    # -- PIDs ------------------------------------------------------------------------------------
    def _pids(self) -> None:
        for c in self.tree.calls:
            if self.names.callee(c) != "process.kill":
                continue
            pid = arg(c, 0)
            pid_file = self.names.read_file(pid) if pid is not None else None
            if pid_file is None:
                continue
            sig_node = arg(c, 1)
            sig = "SIGTERM" if sig_node is None else (string_value(sig_node) or text(sig_node))
            if sig in ("0", "SIG0"):
                self.facts.liveness.append(
                    LivenessCheck(self.tree.span(c), pid_file, self._consequential(c))
                )
                self._stale(c, pid_file)
            else:
                self.facts.kills.append(Kill(self.tree.span(c), sig, pid_file))

    def _consequential(self, call: Any) -> bool:
        for a in syntax.ancestors(call):
            if a.type in ("try_statement", "if_statement", "return_statement"):
                return True
            if a.type in syntax.FUNCTIONS:
                return any(
                    self.busy._condition_of(s)[0] is not None for s in self.names.call_sites(a)
                )
        return False

    def _stale(self, check: Any, pid_file: Any) -> None:
        """Removals and overwrites of the PID file after the decision: in the block that
        holds the decision (the check, or the call of the helper that makes it) after it,
        in the ``catch`` of a ``try`` around it (``process.kill(pid, 0)`` throws for a dead
        holder), in the callbacks the helper's call hands its result to, and in the local
        functions those call: the branch taken when the holder was judged dead."""
        for c in self._after_decision(check):
            q = self.names.callee(c)
            if q not in REMOVES and q not in OVERWRITES:
                continue
            if q in OVERWRITES and "x" in self._write_flags(c):
                continue  # an exclusive create never overwrites
            path = self.names.path(arg(c, 0))
            if path is None or path.key() != pid_file.key():
                continue
            span = self.tree.span(c)
            if any(r.span == span for r in self.facts.removals if r.stale_guard):
                continue
            plain = [r for r in self.facts.removals if r.span == span and not r.overwrite]
            if plain:  # the removal itself, judged a breaker: not a release
                plain[0].stale_guard = "dead-holder"
                continue
            self.facts.removals.append(
                Removal(path, span, stale_guard="dead-holder", overwrite=q in OVERWRITES)
            )

    def _after_decision(self, check: Any) -> list[Any]:
        func = syntax.function_of(check)
        while func is not None and syntax.function_name(func) is None:
            func = syntax.function_of(func)  # a callback: its named function decides
        sites = self.names.call_sites(func) if func is not None else []
        regions: list[tuple[Any, int]] = []  # (node, calls after this offset)
        for decision in [check, *sites]:
            block = next(
                (a for a in syntax.ancestors(decision) if a.type in ("statement_block", "program")),
                None,
            )
            if block is not None:
                regions.append((block, decision.end_byte))
            for a in syntax.ancestors(decision):
                if a.type in syntax.FUNCTIONS:
                    break
                if a.type == "try_statement":
                    h = a.child_by_field_name("handler")
                    if h is not None and not syntax.within(decision, h):
                        regions.append((h, -1))
                    break
            if decision is not check:
                for a in syntax.args(decision):
                    if a.type in syntax.FUNCTIONS:
                        regions.append((a, -1))
        out: list[Any] = []
        seen: set[int] = set()
        for node, after in regions:
            for c in syntax.descendants(node, "call_expression"):
                if c.start_byte <= after or c.start_byte in seen:
                    continue
                if any(
                    a.type == "finally_clause"
                    for a in syntax.ancestors(c)
                    if syntax.within(a, node)
                ):
                    continue
                seen.add(c.start_byte)
                out.append(c)
                helper = self.names.local_function(c)
                if helper is not None and helper != func:
                    for inner in syntax.descendants(helper, "call_expression"):
                        if inner.start_byte not in seen:
                            seen.add(inner.start_byte)
                            out.append(inner)
        return out

    @staticmethod
    def _write_flags(call: Any) -> str:
        opts = object_entries(arg(call, 2))
        flag = opts.get("flag") if opts else arg(call, 2)
        return (string_value(flag) or "") if flag is not None else ""

    # -- release coverage ------------------------------------------------------------------------
    def _coverage(self) -> None:
        for i, acq in enumerate(self.facts.acquires):
            if acq.mechanism in ("proper-lockfile", "lockfile"):
                continue
            mine = [
                r for r in self.facts.removals if not r.stale_guard and same_path(r.path, acq.path)
            ]
            if not mine:
                continue
            acq.released = True
            acq.release_on_every_exit = any(r.via in ("finally", "atexit") for r in mine)
            if not acq.release_on_every_exit and self._handed_out(i, mine):
                acq.release_on_every_exit = True  # the caller, not in this file, releases

    def _handed_out(self, i: int, mine: list[Removal]) -> bool:
        """The function that takes the lock hands it to its caller (another function
        releases it), and no caller in this file reaches that function: the caller that
        would release it is not here, so the release is not judged (RULES: LCK202)."""
        func = _named(syntax.function_of(self.acq_nodes[i]))
        if func is None:
            return False
        s, e = self.tree.offsets.char(func.start_byte), self.tree.offsets.char(func.end_byte)
        if any(s <= r.span.start < e for r in mine):
            return False  # released in the taking function itself: judged here
        seen, todo = set(), [func]
        while todo:
            f = todo.pop()
            if f.start_byte in seen or len(seen) > 20:
                continue
            seen.add(f.start_byte)
            for site in self.names.call_sites(f):
                outer = _named(syntax.function_of(site))
                if outer is None:
                    return False  # called from the top level (or an IIFE there): judged
                todo.append(outer)
        return True


def _named(func: Any) -> Any:
    """The innermost named function around ``func`` (callbacks and promise executors are
    run by it), or None at the top level."""
    while func is not None and syntax.function_name(func) is None:
        func = syntax.function_of(func)
    return func
