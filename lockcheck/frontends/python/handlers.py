"""try/except/finally and atexit: which handler catches a failed lock, where a removal runs
(finally, atexit, a signal handler, ``__exit__``) and the release hooks."""

from __future__ import annotations

from ... import lazyre
from ...hints import Any
from ...model import (
    Acquire,
    Edit,
    FixTemplate,
    LockKind,
    ReleaseHook,
    Removal,
    Span,
)
from .calls import (
    BUSY_ERRORS,
    CLASH_ERRORS,
    EXIT_CALLS_Q,
    LIB_BUSY_ERRORS_SUFFIX,
    REMOVE_CALLS,
    REMOVE_METHODS,
)

# what a failed open raises, caught by a handler that is wide enough (LCK406)
OPEN_ERRORS = set(CLASH_ERRORS) - {"FileExistsError"}
# a handler body that tells contention from other errors (LCK406)
_CONTENTION_TEST = lazyre.compile(r"\b(EWOULDBLOCK|EAGAIN|BlockingIOError)\b")


class Handlers:
    """Methods of :class:`.locks.Analyzer`."""

    def enclosing_try(self, node: Any) -> Any:
        """The nearest try whose body holds ``node`` (not its handlers), within one function."""
        cst = self.cst
        prev = node
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(a, cst.Try) and prev is a.body:
                return a
            prev = a
        return None

    def handler_names(self, h: Any) -> set[str]:
        cst = self.cst
        if h.type is None:
            return {"BaseException"}
        types = [e.value for e in h.type.elements] if isinstance(h.type, cst.Tuple) else [h.type]
        out = set()
        for t in types:
            q = self.qname(t) or ""
            out.add(q)
            out.add(q.split(".")[-1])
        return out

    def catching_handler(self, node: Any, names: set[str], suffixes: tuple = ()) -> tuple[Any, Any]:
        t = self.enclosing_try(node)
        while t is not None:
            for h in t.handlers:
                hn = self.handler_names(h)
                if hn & names or any(n.endswith(suffixes) for n in hn if suffixes):
                    return t, h
            t = self.enclosing_try(t)
        return None, None

    def open_failure_is_busy(self, opener: Any, handler: Any) -> bool:
        """LCK406: ``handler`` (the busy branch) is also the one that catches ``opener``'s
        errors (``except OSError``/``IOError``/``Exception``/bare ``except`` around both the
        open and the acquire) and does not tell contention apart (``EWOULDBLOCK``/``EAGAIN``,
        ``BlockingIOError`` tested in its body)."""
        if opener is None or handler is None:
            return False
        _t, h = self.catching_handler(opener, OPEN_ERRORS)
        if h is not handler:
            return False  # the open is before the try, or an inner handler checks it
        if self._tests_opened(opener, handler):
            return False
        return not self._tells_contention_apart(handler)

    def _tests_opened(self, opener: Any, handler: Any) -> bool:
        """The handler asks whether the open got a file (``if self.fh is not None:`` busy,
        else ``raise``): a failed open is told apart from contention.  Not an ``if`` that only
        tidies up (``if fh: fh.close()``) and ends neither way."""
        cst = self.cst
        par = self.up(opener)
        if not isinstance(par, cst.Assign) or len(par.targets) != 1:
            return False
        target = par.targets[0].target
        for ifn in self.descendants(handler.body, cst.If):
            if self.find_end(list(ifn.body.body)) is None and not isinstance(ifn.orelse, cst.Else):
                continue
            for n in self.descendants(ifn.test):
                if isinstance(n, (cst.Name, cst.Attribute)) and self._same_ref(n, target):
                    return True
        return False

    def lock_object_open_failure_is_busy(self, acquire: Any, busy: Any) -> bool:
        """LCK406 for a lock object (FileLock, portalocker.Lock, fasteners): its acquire (or
        ``with``) opens the lock file, so a wide handler that is the busy branch (``except
        OSError``/``Exception``/bare; filelock's Timeout is an OSError too) also reads a
        missing directory or a refused open as busy, unless it tells contention apart."""
        if busy is None:
            return False
        _t, h = self.catching_handler(acquire, BUSY_ERRORS, LIB_BUSY_ERRORS_SUFFIX)
        if h is None or not (self.off(h) <= busy.span.start < h.e):
            return False  # the busy branch is an `if`, or another handler
        if not self.handler_names(h) & OPEN_ERRORS:
            return False  # `except Timeout:` / `except AlreadyLocked:`
        return not self._tells_contention_apart(h)

    def _tells_contention_apart(self, handler: Any) -> bool:
        """The handler tests for contention (``EWOULDBLOCK``/``EAGAIN``, ``BlockingIOError``)
        and the test changes the outcome: a ``raise``, or two different ends (returns, exits,
        falling off the end).  A test that only picks the log message (``if e.errno in
        (EACCES, EAGAIN): log("running") else: log("cannot open")``, then one ``return
        False``) still reads a failed open as busy."""
        cst = self.cst
        if not _CONTENTION_TEST.search(self.code(handler.body)):
            return False
        ends: set[str] = set()
        for n in self.descendants(handler.body):
            if isinstance(n, cst.Raise):
                return True
            if isinstance(n, cst.Return):
                ends.add(self.code(n))
            elif isinstance(n, cst.Call) and self.call_q(n) in EXIT_CALLS_Q:
                ends.add(self.code(n))
        body = list(handler.body.body)
        last = body[-1] if body else None
        if last is None or self.find_end([last]) is None:
            ends.add("")  # falls off the end
        return len(ends) > 1

    def decides(self, stmts: list[Any]) -> bool:
        """The branch skips, exits, returns, retries or takes over."""
        cst = self.cst
        if self.find_end(stmts) is not None:
            return True
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                q = self.call_q(c)
                if (
                    q in REMOVE_CALLS
                    or q in ("os.kill", "os.killpg")
                    or self.method(c) in REMOVE_METHODS
                ):
                    return True
        return False

    def _atexit_funcs(self) -> dict[int, Any]:
        cst = self.cst
        out: dict[int, Any] = {}
        for c in self.calls:
            if self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                if isinstance(fn, cst.Name) and fn.value in self.funcs:
                    for f in self.funcs[fn.value]:
                        out[id(f)] = c
                elif isinstance(fn, cst.Attribute):
                    for f in self.funcs.get(fn.attr.value, []):
                        out[id(f)] = c
        for fl in self.funcs.values():
            for f in fl:
                for d in f.decorators:
                    if self.qname(d.decorator) == "atexit.register":
                        out[id(f)] = f
        return out

    def _signal_handlers(self) -> dict[int, Any]:
        """Functions (and lambdas) installed with ``signal.signal(SIG..., handler)`` -> the
        installing call."""
        cst = self.cst
        out: dict[int, Any] = {}
        for c in self.calls:
            if not self.is_q(c, "signal.signal") or len(c.args) < 2:
                continue
            fn = c.args[1].value
            if isinstance(fn, cst.Lambda):
                out[id(fn)] = c
            elif isinstance(fn, cst.Name) and fn.value in self.funcs:
                for f in self.funcs[fn.value]:
                    out[id(f)] = c
            elif isinstance(fn, cst.Attribute) and not (self.qname(fn) or "").startswith("signal."):
                for f in self.funcs.get(fn.attr.value, []):
                    out[id(f)] = c
        return out

    def _removal_context(self, call: Any, r: Removal) -> None:
        cst = self.cst
        if not hasattr(self, "_atexit_map"):
            self._atexit_map = self._atexit_funcs()
        if not hasattr(self, "_signal_map"):
            self._signal_map = self._signal_handlers()
        conditional = False
        # the nearest lambda, finally or function decides how the removal runs; between it
        # and the call, any branch or loop makes it conditional (found once, then skipped:
        # a 20,000-branch elif is not climbed per removal)
        stop = self._enclosing(call, (cst.Lambda, cst.Finally, cst.FunctionDef), self._hook_cache)
        for a in self.ancestors(call):
            if a is stop:
                break
            if isinstance(a, cst.If) and self._tests_existence_of(a, call):
                continue  # `if os.path.exists(P): os.remove(P)`: whenever there is one
            if isinstance(a, cst.For) and self._over_literals(a):
                continue  # `for f in ["a.lock", "b.pid"]:`: each name, every time
            if isinstance(a, (cst.If, cst.ExceptHandler, cst.While, cst.Else)) or (
                isinstance(a, cst.For) and not r.is_glob
            ):
                conditional = True
                break
        for a in () if stop is None else (stop,):
            if isinstance(a, cst.Lambda):
                reg = self._signal_map.get(id(a))
                arg = self.up(a)
                owner = self.up(arg) if isinstance(arg, cst.Arg) else None
                if reg is not None:
                    r.via = "trap"
                    r.hook_span = self.span(reg)
                elif owner is not None and self.is_q(owner, "atexit.register"):
                    r.via = "atexit"  # atexit.register(lambda: os.remove(L))
                    r.hook_span = self.span(owner)
                    break
                conditional = True  # runs when (if ever) the lambda is called
                break
            if isinstance(a, cst.Finally):
                r.via = "finally"
                r.hook_span = self.span(self.up(a))
                break
            if isinstance(a, cst.FunctionDef):
                reg = self._atexit_map.get(id(a))
                cls = self.class_of(a)
                name = a.name.value
                sig = self._signal_map.get(id(a))
                if reg is not None:
                    r.via = "atexit"
                    r.hook_span = self.span(reg)
                elif sig is not None:
                    r.via = "trap"
                    r.hook_span = self.span(sig)
                elif name == "__exit__" and cls is not None:
                    r.via = "exit-method"
                elif (
                    name in ("release", "unlock", "close", "__del__", "cleanup", "remove")
                    and cls is not None
                ):
                    r.via = "release-method"
                if reg is None and not self._runs_unconditionally(a):
                    conditional = True  # a function or method this file may never run
                break
        r.conditional = conditional

    def _tests_existence_of(self, ifn: Any, call: Any) -> bool:
        """``call`` is in the body of ``if exists(X):`` and removes that same ``X``."""
        if not self.within(call, ifn.body) or not call.args:
            return False
        et = self._exists_test(ifn.test)
        if et is None or not et[1]:
            return False
        return self.code(self._exists_arg(et[0])) == self.code(call.args[0].value)

    def _over_literals(self, loop: Any) -> bool:
        it = loop.iter
        return isinstance(it, (self.cst.List, self.cst.Tuple)) and all(
            isinstance(self.const(e.value), str) for e in it.elements
        )

    def _runs_unconditionally(self, func: Any, depth: int = 0) -> bool:
        """A plain function that the run always calls: the entry point, or a function the
        entry point (or module code) calls outside any branch."""
        cst = self.cst
        if self.class_of(func) is not None or depth > 3:
            return False
        if self.entry.get(func.name.value) is not None:
            return True
        for call, _m in self.call_sites(func):
            caller = self.func_of(call)
            branchy = False
            for a in self.ancestors(call):
                if a is caller:
                    break
                if isinstance(a, (cst.If, cst.For, cst.While, cst.ExceptHandler, cst.Else)):
                    if not (isinstance(a, cst.If) and "__name__" in self.code(a.test)):
                        branchy = True
                        break
            if branchy:
                continue
            if caller is None or (
                isinstance(caller, cst.FunctionDef)
                and self._runs_unconditionally(caller, depth + 1)
            ):
                return True
        return False

    def drop_fix(self, call: Any) -> FixTemplate | None:
        cst = self.cst
        par = self.up(call)
        if not isinstance(par, cst.Expr):
            return None
        line = self.up(par)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        sibs, _i = self.block_siblings(line)
        sp = self.span(line)
        # delete the whole physical line(s)
        start = self.starts[sp.line - 1]
        end = self.starts[sp.end_line] if sp.end_line < len(self.starts) else len(self.text)
        if len(sibs) == 1:
            indent = self.text[start : sp.start]
            nl = "\n" if self.text[start:end].endswith("\n") else ""
            return FixTemplate(
                "remove the deletion of the lock file", (Edit(start, end, f"{indent}pass{nl}"),)
            )
        return FixTemplate("remove the deletion of the lock file", (Edit(start, end, ""),))

    def _release_coverage(self) -> None:
        for acq in self.facts.acquires:
            if acq.kind is not LockKind.EXISTENCE or acq.mechanism == "SoftFileLock":
                continue
            rms = [
                (c, r)
                for c, r in self.removals_of(acq.path)
                if not r.stale_guard and not r.overwrite
            ]
            if not rms:
                continue
            acq.released = True
            acq.release_on_every_exit = any(self._every_exit(c, r) for c, r in rms)
            if not acq.release_on_every_exit and self._handed_out(acq, rms):
                acq.release_on_every_exit = True  # the caller, not in this file, releases
            if acq.release_on_every_exit:
                route = self._plain_route(acq, rms)
                if route is not None:
                    acq.release_on_every_exit = False
                    acq.unreleased_route = self.span(route)

    def _callers(self, node: Any, depth: int = 3) -> dict[int, Any]:
        """The calls that lead to ``node`` through the functions of this file: the call
        itself, the call sites of its function, theirs... (id -> call)."""
        cst = self.cst
        out = {id(node): node}
        todo = [(node, 0)]
        while todo:
            n, d = todo.pop()
            func = self.func_of(n)
            if d >= depth or not isinstance(func, cst.FunctionDef) or func.name.value == "__exit__":
                continue
            for site, _m in self.call_sites(func):
                if id(site) not in out:
                    out[id(site)] = site
                    todo.append((site, d + 1))
        return out

    def _plain_route(self, acq: Acquire, rms: list[tuple[Any, Removal]]) -> Any:
        """One way of taking the lock releases it as a plain later statement of the same
        block, with work in between and no ``finally``/``with``: a decorator's ``self.lock();
        result = func(); self.release()`` beside a context manager whose ``__exit__``
        releases.  The call that takes it that way, or None."""
        cst = self.cst
        node = self._acq_nodes.get(id(acq))
        if node is None:
            return None
        takes = self._callers(node)
        releases: dict[int, Any] = {}
        for c, _r in rms:
            releases.update(self._callers(c))
        for t in takes.values():
            st = self.stmt_of(t)
            if not isinstance(st, cst.SimpleStatementLine) or id(t) in releases:
                continue
            if any(isinstance(a, (cst.Finally, cst.With)) for a in self.ancestors(st)):
                continue
            sibs, i = self.block_siblings(st)
            for j, later in enumerate(sibs[i + 1 :], i + 1):
                if not isinstance(later, cst.SimpleStatementLine):
                    break
                if any(id(c) in releases for c in self.descendants(later, cst.Call)):
                    work = any(
                        True for mid in sibs[i + 1 : j] for _c in self.descendants(mid, cst.Call)
                    )
                    if work:
                        return t
                    break
        return None

    def _handed_out(self, acq: Acquire, rms: list[tuple[Any, Removal]]) -> bool:
        """A lock class's method takes the lock and another method releases it, and nothing
        outside the class in this file calls the taking method: the lock is handed to a
        caller this file does not have, whose release cannot be judged here."""
        cst = self.cst
        node = self._acq_nodes.get(id(acq))
        func = self.func_of(node) if node is not None else None
        cls = self.class_of(func) if isinstance(func, cst.FunctionDef) else None
        if cls is None and isinstance(func, cst.FunctionDef):
            if self.entry.get(func.name.value) is not None or any(
                self.func_of(c) is func for c, _r in rms
            ):
                return False
            sites = [c for c, _m in self.call_sites(func) if not self.within(c, func)]
            if not sites:
                # `def acquire_job_lock(...): ... return LockHandle(lock_dir)` that nothing in
                # this file calls: the handle goes to a caller elsewhere, which releases
                return any(
                    r.value is not None and self.off(r) > self.off(node)
                    for r in self.descendants(func.body, cst.Return)
                    if self.func_of(r) is func
                )
            # a module helper that only a lock class's methods call: judged as those methods
            owners = {id(self.class_of(c)): self.class_of(c) for c in sites}
            if len(owners) != 1 or None in owners.values():
                return False
            cls = next(iter(owners.values()))
            return self._only_within(cls, [self.func_of(c) for c in sites])
        if cls is None or any(self.func_of(c) is func for c, _r in rms):
            return False
        return self._only_within(cls, [func])

    def _only_within(self, cls: Any, funcs: list[Any]) -> bool:
        """Nothing outside ``cls`` in this file reaches ``funcs`` (methods of ``cls``)."""
        cst = self.cst
        seen, todo = set(), list(funcs)
        while todo:
            f = todo.pop()
            if id(f) in seen or len(seen) > 20:
                continue
            seen.add(id(f))
            for site, _m in self.call_sites(f):
                outer = self.func_of(site)
                if self.class_of(site) is not cls or not isinstance(outer, cst.FunctionDef):
                    return False  # a caller in this file: it is judged
                todo.append(outer)
        return True

    def _every_exit(self, call: Any, r: Removal) -> bool:
        cst = self.cst
        if r.via in ("finally", "atexit", "exit-method"):
            return True
        func = self.func_of(call)
        if not isinstance(func, cst.FunctionDef):
            return False
        # a helper / release method: called from finally, __exit__ or atexit?
        for site, _m in self.call_sites(func):
            if any(isinstance(a, cst.Finally) for a in self.ancestors(site)):
                return True
            f = self.func_of(site)
            if isinstance(f, cst.FunctionDef) and f.name.value == "__exit__":
                return True
        for c in self.calls:
            if self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                name = (
                    fn.value
                    if isinstance(fn, cst.Name)
                    else fn.attr.value
                    if isinstance(fn, cst.Attribute)
                    else None
                )
                if name == func.name.value:
                    return True
        return False

    def _hooks(self) -> None:
        cst = self.cst
        self._hook_pending: list[tuple[ReleaseHook, list[Any]]] = []
        for c, r in self.removal_calls:
            if r.via == "finally" and not self._owner_checked(c):
                tr = None
                for a in self.ancestors(c):
                    if (
                        isinstance(a, cst.Try)
                        and a.finalbody is not None
                        and self.within(c, a.finalbody)
                    ):
                        tr = a
                        break
                if tr is None:
                    continue
                active = [acq for acq in self.facts.acquires if self._busy_inside(acq, tr)]
                hook = ReleaseHook(r.path, Span(*self._try_kw_span(tr)), "finally")
                self._hook_pending.append((hook, active))
            elif r.via == "atexit" and r.hook_span is not None:
                reg_off = r.hook_span.start
                active = []
                for acq in self.facts.acquires:
                    if acq.busy is None or not acq.busy.ends_run:
                        continue
                    if reg_off < self._acquired_at(acq, reg_off):
                        active.append(acq)
                hook = ReleaseHook(r.path, r.hook_span, "atexit")
                self._hook_pending.append((hook, active))
        # finally that calls a local release function
        for tr in self.tries:
            if tr.finalbody is None:
                continue
            for c in self.descendants(tr.finalbody, cst.Call):
                fname = None
                if isinstance(c.func, cst.Name):
                    fname = c.func.value
                elif isinstance(c.func, cst.Attribute):
                    fname = c.func.attr.value  # lock.release(): a method of this file
                if fname in self.funcs:
                    for f in self.funcs[fname]:
                        if isinstance(c.func, cst.Attribute) and self.class_of(f) is None:
                            continue
                        for rc, r in self.removal_calls:
                            if self.func_of(rc) is f and not self._owner_checked(rc):
                                active = [
                                    a for a in self.facts.acquires if self._busy_inside(a, tr)
                                ]
                                self._hook_pending.append(
                                    (
                                        ReleaseHook(
                                            r.path, Span(*self._try_kw_span(tr)), "finally"
                                        ),
                                        active,
                                    )
                                )

    def _acquired_at(self, acq: Acquire, reg_off: int) -> int:
        """Where the acquire runs, for a registration at ``reg_off``: the acquire itself, or,
        for an acquire in a method or helper that the registration is not in, its first call
        (``self.lock()`` in ``__init__``, then ``atexit.register(self.cleanup)``)."""
        node = self._acq_nodes.get(id(acq))
        func = self.func_of(node) if node is not None else None
        if func is None or self.off(func) <= reg_off < func.e:
            return acq.span.start
        sites = [self.off(c) for c, _m in self.call_sites(func)]
        return min(sites) if sites else acq.span.start

    def _owner_checked(self, call: Any) -> bool:
        """The removal runs only when the PID in the file is this process's own (``if
        int(f.read()) == os.getpid():``): a run that did not take the lock removes nothing."""
        cst = self.cst
        for a in self.ancestors(call):
            if isinstance(a, cst.FunctionDef):
                return False
            if isinstance(a, cst.If) and self.within(call, a.body):
                if "getpid" in self.code(a.test):
                    return True
                for n in self.descendants(a.test, cst.Name):
                    v = self.lookup(n)
                    if v is not None and not isinstance(v, tuple) and "getpid" in self.code(v):
                        return True
        return False

    def _try_kw_span(self, tr: Any) -> tuple:
        sp = self.span(tr)
        return (sp.line, sp.col, sp.line, sp.col + 3, sp.start, sp.start + 3)

    def _busy_inside(self, acq: Acquire, tr: Any) -> bool:
        node = self._acq_nodes.get(id(acq))
        if node is None or acq.busy is None:
            return False
        if not (acq.busy.ends_run or self._leaves(acq)):
            return False
        if self.within(node, tr.body):
            return True
        # the acquire is elsewhere (a method, a helper) but its busy branch runs in the try
        b0 = self.off(tr.body)
        b1 = self.off(tr.finalbody)
        return b0 <= acq.busy.span.start < b1

    def _leaves(self, acq: Acquire) -> bool:
        b = acq.busy
        txt = self.text[b.span.start : b.span.end].lstrip()
        return txt.startswith(("return", "raise"))

    def _hooks_reindex(self) -> None:
        index = {id(a): i for i, a in enumerate(self.facts.acquires)}
        for hook, active in getattr(self, "_hook_pending", []):
            hook.active_in_busy_of = tuple(sorted(index[id(a)] for a in active if id(a) in index))
            self.facts.hooks.append(hook)
        for bg, acq in getattr(self, "_bg_pending", []):
            if id(acq) in index:
                bg.lock = index[id(acq)]
                self.facts.backgrounds.append(bg)

    def _released_in_finally(self, assign: Any) -> bool:
        cst = self.cst
        if not isinstance(assign, cst.Assign):
            return False
        var = assign.targets[0].target
        for u in self.calls:
            if self.method(u) == "release" and self._same_ref(u.func.value, var):
                if any(isinstance(a, cst.Finally) for a in self.ancestors(u)):
                    return True
        return False
