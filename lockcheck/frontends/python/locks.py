"""The lock-semantics passes: probes, existence locks, fd locks, lock objects,
check-then-create, release coverage, and the order in which they run."""

from __future__ import annotations

import re

from ... import lazyre
from ...hints import Any
from ...model import (
    Acquire,
    BusyBranch,
    Edit,
    FixTemplate,
    LockKind,
    NonExclusiveCreate,
    PartKind,
    PathExpr,
    Probe,
    Removal,
)
from ...paths import lockish_name, lockish_text
from .calls import (
    BUSY_ERRORS,
    FILE_EXISTS_ERRORS,
    LIB_BUSY_ERRORS_SUFFIX,
    LOG_METHODS,
    PID_PROBES,
    REMOVE_CALLS,
    SLEEP_CALLS,
    Calls,
)
from .handlers import Handlers
from .helpers import Helpers
from .platforms import Platforms
from .processes import Processes
from .values import Values
from .walk import Walk, _Entry


class Analyzer(Walk, Values, Calls, Handlers, Helpers, Processes, Platforms):
    """One file's analysis: the tree walked once (:class:`Walk`), then the passes of
    :meth:`run`."""

    def run(self) -> None:
        self._index_bindings()
        self.entry = self._entry_points()
        facts = self.facts
        self.removal_calls = self._removals()
        self._probes()
        self._existence_locks()
        self._never_fails()
        self._fd_locks()
        self._object_locks()
        self._check_then_create()
        facts.acquires[:] = self._expand(facts.acquires)
        expanded = []
        for c, r in self.removal_calls:
            expanded.extend((c, x) for x in self._expand([r]))
        before = {id(r) for _c, r in self.removal_calls}
        self.removal_calls = expanded
        facts.removals[:] = [r for _c, r in expanded] + [
            r for r in facts.removals if id(r) not in before
        ]
        self._removed_after_unlock()
        self._liveness_and_kills()
        self._liveness_tested_pidfiles()
        self._release_coverage()
        self._hooks()
        self._backgrounds()
        self._created()
        facts.acquires.sort(key=lambda a: a.span.start)  # stable indexes are assigned after
        self._hooks_reindex()
        self._platform_branches()

    def _platform_branches(self) -> None:
        """The platforms each acquire and removal runs on (``if os.name == "nt":``)."""
        by_span = {(c.s, c.e): c for c in self.calls}
        for fact in (*self.facts.acquires, *self.facts.removals):
            node = by_span.get((fact.span.start, fact.span.end))
            if node is not None:
                fact.platforms = self.platforms_of(node)

    def _removals(self) -> list[tuple[Any, Removal]]:
        out = []
        for c in self.calls:
            tgt = self.removal_target(c)
            if tgt is not None:
                path, is_glob = tgt
                r = Removal(path, self.span(c), is_glob=is_glob)
                self._removal_context(c, r)
                r.drop_fix = self.drop_fix(c)
                out.append((c, r))
            elif self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                fq = self.qname(fn) or ""
                if fq in REMOVE_CALLS and len(c.args) > 1:
                    r = Removal(self.path(c.args[1].value), self.span(c), via="atexit")
                    r.hook_span = self.span(c)
                    r.drop_fix = self.drop_fix(c)
                    out.append((c, r))
        for _c, r in out:
            self.facts.removals.append(r)
        return out

    def _removed_after_unlock(self) -> None:
        """A release method that unlocks the flock (``LOCK_UN``) and then removes a file whose
        name is not fully resolved but ends like the flocked file's (``<...>.lock``): the
        file it removes is the lock file."""
        cst = self.cst
        flocked = {
            self.key(a.path): a.path
            for a in self.facts.acquires
            if a.kind is not LockKind.EXISTENCE and a.path is not None
        }
        for c, r in self.removal_calls:
            func = self.func_of(c)
            tail = r.path.parts[-1] if r.path is not None and r.path.parts else None
            if func is None or tail is None or tail.kind is not PartKind.LIT:
                continue
            if all(p.kind is PartKind.LIT for p in r.path.parts) or self.key(r.path) in flocked:
                continue
            unlocks = any(
                self.call_q(u) in ("fcntl.flock", "fcntl.lockf", "portalocker.unlock")
                and u.s < c.s
                and (
                    self.call_q(u) == "portalocker.unlock"
                    or "LOCK_UN" in self.flag_names(self.arg(u, 1))
                )
                for u in self.descendants(func, cst.Call)
            )
            if not unlocks:
                continue
            same_tail = [
                p
                for p in flocked.values()
                if p.parts and p.parts[-1] == tail and len(tail.value) > 1
            ]
            if len(same_tail) == 1:
                r.path = same_tail[0]

    def removals_of(self, path: PathExpr | None) -> list[tuple[Any, Removal]]:
        if path is None:
            return []
        key = self.key(path)
        return [
            (c, r) for c, r in self.removal_calls if r.path is not None and self.key(r.path) == key
        ]

    def _probes(self) -> None:
        cst = self.cst
        self.probe_calls: set[int] = set()
        for c in self.calls:
            cr = self.creation(c)
            if cr is None:
                continue
            mech, pnode, how = cr
            path = self.path(pnode)
            if path is None or not path.key():
                continue
            st = self.stmt_of(c)
            # the statement right after (the with block's body counts as no work when empty)
            if isinstance(st, cst.With) and not all(
                self._is_trivial(s) or self._closes(s) for s in st.body.body
            ):
                continue
            sibs, i = self.block_siblings(st)
            if i + 1 >= len(sibs):
                continue
            nxt = sibs[i + 1]
            rm = None
            for rc, r in self.removal_calls:
                if (
                    self.within(rc, nxt)
                    and self.stmt_of(rc) is nxt
                    and r.path is not None
                    and r.path.key() == path.key()
                    and not self._deferred(rc, nxt)
                ):
                    rm = rc
                    break
            if rm is None:
                continue
            self.probe_calls.add(id(c))
            if any(
                p.kind in (PartKind.ARG, PartKind.VAR, PartKind.UNKNOWN)
                for p in path.basename_parts()
            ):
                # the name comes from the caller or the environment: it may be per-run
                # (unknown stays unknown), so this is a probe but not a fixed-name one
                self.facts.created.append(path)
                continue
            fix = self._probe_fix(pnode, rm)
            self.facts.probes.append(Probe(path, self.span(c), fix))

    def _deferred(self, call: Any, stmt: Any) -> bool:
        """``call`` sits in a lambda or nested function inside ``stmt``: it runs later
        (``addCleanup(lambda: rmtree(p))``), not at once."""
        cst = self.cst
        for a in self.ancestors(call):
            if a is stmt:
                return False
            if isinstance(a, (cst.Lambda, cst.FunctionDef)):
                return True
        return False

    def _closes(self, st: Any) -> bool:
        return self.code(st).strip().endswith((".close()", "pass"))

    def _probe_fix(self, create_arg: Any, rm_call: Any) -> FixTemplate | None:
        cst = self.cst
        osname = next((k for k, v in self.imports.items() if v == "os"), None)
        if osname is None:
            return None
        rm_arg = self.arg(rm_call, 0) if self.call_q(rm_call) in REMOVE_CALLS else None
        if rm_arg is None and isinstance(rm_call.func, cst.Attribute):
            rm_arg = rm_call.func.value
        edits = []
        for node in (create_arg, rm_arg):
            e = self._append_pid(node, osname)
            if e is None:
                return None
            edits.append(e)
        if self.code(create_arg) != self.code(rm_arg):
            return None
        if self.span(create_arg).start == self.span(rm_arg).start:
            return None
        return FixTemplate("add the process id to the probe name", tuple(edits))

    def _append_pid(self, node: Any, osname: str) -> Edit | None:
        cst = self.cst
        if isinstance(node, cst.Call) and self.call_q(node) == "os.path.join" and node.args:
            return self._append_pid(node.args[-1].value, osname)
        sp = self.span(node)
        src = self.text[sp.start : sp.end]
        if isinstance(node, cst.SimpleString):
            prefix = node.prefix.lower()
            if (
                prefix not in ("",)
                or "{" in src
                or "}" in src
                or node.value.startswith(('"""', "'''"))
            ):
                return None
            q = node.quote
            return Edit(sp.start, sp.end, f"f{src[: -len(q)]}.{{{osname}.getpid()}}{q}")
        if isinstance(node, cst.FormattedString):
            q = node.end
            return Edit(sp.end - len(q), sp.end - len(q), f".{{{osname}.getpid()}}")
        return None

    def _existence_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            if id(c) in self.probe_calls:
                continue
            cr = self.creation(c)
            if cr is None:
                continue
            mech, pnode, how = cr
            if how == "plain":
                continue
            t, h = self.catching_handler(c, FILE_EXISTS_ERRORS)
            if h is None:
                t, h = self._caller_handler(c)  # `def _lock(): os.open(...)`, `try: _lock()`
            if h is None:
                continue
            stmts = list(h.body.body)
            flag_ret = None
            if not self.decides(stmts) and not (self._sleeps(stmts) and self._retried(t)):
                # `while True: try: ...; break / except FileExistsError: pass`, then a sleep:
                # each clash tries again; `ok = False` ... `ok = True` after the create, the
                # handler falls through to `return ok`: the caller decides on the flag
                flag_ret = self._success_flag_returned(t, h, c)
                if flag_ret is None and not self._retried_after(t):
                    continue
            path = self.path(pnode)
            end = self.find_end(stmts)
            if flag_ret is not None:
                stmts = [self.stmt_of(flag_ret)]
                end = self.find_end(stmts)
            if end is not None and self._tolerates_eexist(h, end):
                # `if e.errno != EEXIST: raise`, then what the clash does: a timeout raise or
                # an exit, or the retry of an enclosing loop; nothing after: the name is
                # accepted (an ensure-dir helper)
                stmts = self._after_eexist_guard(stmts, end)
                end = self.find_end(stmts)
                if end is None and not (stmts and self._retried(t)):
                    continue
            if (
                end is not None
                and end.kind == "return"
                and self._result_ignored(end.node)
                and not self._sets_tested_flag(end.node)
            ):
                continue  # make-if-missing helper: no caller decides anything on the clash
            if end is None and self._recreates(stmts, path):
                continue  # except FileExistsError: rmtree(d); mkdir(d): the run always goes on
            if end is not None and end.kind == "loop" and self._renamed_each_pass(pnode, end):
                continue  # a search for a free name (name recomputed each pass), not a lock
            eexist = any(n.value == "EEXIST" for n in self.descendants(h, cst.Name)) or any(
                a.attr.value == "EEXIST" for a in self.descendants(h, cst.Attribute)
            )
            # made by __enter__ and removed by __exit__ of the same class: a scope lock
            scoped = self._scoped_by_exit(c, path)
            # `raise AlreadyLocked(...)` on the clash: the caller is told another run holds it
            # (a handler that also returns accepts the existing name: an ensure-dir helper)
            lock_error = (
                end is not None
                and end.kind == "raise"
                and self._raises_busy(end.node)
                and not any(True for _r in self.descendants(h.body, cst.Return))
            )
            if "FileExistsError" not in self.handler_names(h) and not eexist:
                # a generic OSError handler is error handling unless the name (of the path,
                # or of the function and class that create it: `LockFile.trylock`), an exit
                # or the with-scope says lock
                if (
                    not lockish_name(path)
                    and not self._in_lock_code(c)
                    and not (end is not None and end.kind == "exit")
                    and not scoped
                    and not lock_error
                ):
                    continue
                guard = self._guarded_by_absence(c, path)
                if guard is not None and (not lockish_name(path) or guard.orelse is None):
                    # `if not isdir(d): makedirs(d)` under a broad error handler: an existing
                    # name lets the run go on, whatever it is called
                    continue
            if (
                end is not None
                and end.kind == "raise"
                and not lockish_name(path)
                and "SystemExit" not in self.code(end.node)
                and not scoped
                and not lock_error
            ):
                continue  # an error raised on a clash: exclusive create of output
            if end is not None and end.kind == "loop" and not lockish_name(path):
                # `continue` in a for loop over items: a lock only when named like one;
                # in a while loop: a retry
                loop = next(
                    (a for a in self.ancestors(end.node) if isinstance(a, (cst.For, cst.While))),
                    None,
                )
                if isinstance(loop, cst.For):
                    continue
            if flag_ret is not None:
                busy = self._propagate(self.func_of(flag_ret), flag_ret, 0, forced=(False,))
                if busy is None:
                    busy = BusyBranch(self.span(flag_ret), False, None)
            else:
                busy = self.busy_branch(stmts, h, t)
            acq = Acquire(LockKind.EXISTENCE, mech, path, self.span(c), busy=busy)
            acq.function = self._fname(c)
            self.handled_creates.add(id(c))
            self._acq_nodes[id(acq)] = c
            self.facts.acquires.append(acq)

    def _never_fails(self) -> None:
        """LCK109: a create that succeeds on an existing name (``exist_ok=True``, a ``"w"``/
        ``"a"`` open) in a ``try`` whose ``except FileExistsError`` is the busy branch."""
        cst = self.cst
        for c in self.calls:
            q = self.call_q(c)
            ek = self.kw(c, "exist_ok")
            if ek is not None and self.const(ek) is True and q == "os.makedirs":
                mech, pnode, why = "os.makedirs", self.arg(c, 0, "name"), ""
            elif (
                ek is not None
                and self.const(ek) is True
                and self.method(c) == "mkdir"
                and isinstance(c.func, cst.Attribute)
                and not q.startswith("os.")
            ):
                mech, pnode, why = "Path.mkdir", c.func.value, ""
            else:
                cr = self.creation(c)
                if cr is None or cr[2] != "plain" or not cr[0].startswith(("open", "Path.open")):
                    continue
                mech, pnode = cr[0], cr[1]
                why = "a writing open"
            t, h = self.catching_handler(c, {"FileExistsError"})
            if h is None or "FileExistsError" not in self.handler_names(h):
                continue
            if why and self._exclusive_before(c, t):
                continue  # `mkdir(d); open(d/"pid", "w")`: the clash is the mkdir's
            if not why and {"FileNotFoundError", "NotADirectoryError"} & self.handler_names(h):
                # exist_ok=True raises FileExistsError only for a file in the way: caught with
                # the other errors of an unusable path, it is path handling, not a busy branch
                continue
            stmts = list(h.body.body)
            if not self.decides(stmts):
                continue
            path = self.path(pnode)
            if not why and self._raises_error(stmts) and not lockish_name(path):
                # `except FileExistsError: raise SystemExit(f"{d} is not a directory")`: the
                # only clash exist_ok=True leaves, reported as an error, on a name no lock wears
                continue
            if path is not None:
                self.facts.created.append(path)  # it is made here: removing it is no LCK107
            self.facts.non_exclusive.append(
                NonExclusiveCreate(
                    path,
                    self.span(c),
                    mech,
                    why or "exist_ok=True",
                    busy=self.busy_branch(stmts, h, t),
                    function=self._fname(c),
                )
            )

    def _exclusive_before(self, call: Any, tr: Any) -> bool:
        """An exclusive create (``os.mkdir``, ``"x"``, ``O_EXCL``) runs before ``call`` in the
        body of the ``try`` ``tr``: a ``FileExistsError`` there is that create's."""
        start = self.span(call).start
        for c in self.descendants(tr.body, self.cst.Call):
            if self.span(c).start >= start:
                continue
            cr = self.creation(c)
            if cr is not None and cr[2] != "plain":
                return True
        return False

    def _raises_busy(self, raise_node: Any) -> bool:
        """The exception raised on the clash is named like a lock (``raise AlreadyLocked``,
        ``PIDLockedException(name, pid)``): it tells the caller another run holds it."""
        exc = raise_node.exc
        if exc is None:
            return False
        return lockish_text(self.code(exc.func if isinstance(exc, self.cst.Call) else exc))

    def _raises_error(self, stmts: list[Any]) -> bool:
        """The handler ends by raising an error: an exception other than a bare re-raise, or
        ``SystemExit``/``sys.exit`` with a message."""
        cst = self.cst
        if not stmts:
            return False
        last = stmts[-1]
        small = last.body if isinstance(last, cst.SimpleStatementLine) else []
        for st in small:
            if isinstance(st, cst.Raise) and st.exc is not None:
                exc = st.exc
                if isinstance(exc, cst.Call) and self.call_q(exc) == "SystemExit":
                    return self.exit_status(self.arg(exc, 0, "code")) not in (0, 75)
                return True
            if isinstance(st, cst.Expr) and isinstance(st.value, cst.Call):
                if self.call_q(st.value) in ("sys.exit", "exit", "quit"):
                    a = self.arg(st.value, 0, "status")
                    return isinstance(a, (cst.SimpleString, cst.FormattedString)) or (
                        a is not None and isinstance(self.const(a), str)
                    )
        return False

    def _after_eexist_guard(self, stmts: list[Any], end: _Entry) -> list[Any]:
        """The handler's statements after the one holding the re-raise of other errors."""
        for i, st in enumerate(stmts):
            if self.within(end.node, st):
                return stmts[i + 1 :]
        return []

    def _retried(self, tr: Any) -> bool:
        """The try is the body of a ``while`` loop of its function (each clash tries again)."""
        cst = self.cst
        for a in self.ancestors(tr):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(a, cst.While):
                return True
        return False

    def _in_lock_code(self, node: Any) -> bool:
        """The function (or its class) that runs ``node`` is named like a lock: ``trylock``,
        ``acquire_lock``, ``class PidLock``."""
        func = self.func_of(node)
        if func is None:
            return False
        cls = self.class_of(func)
        return lockish_text(func.name.value) or (cls is not None and lockish_text(cls.name.value))

    def _caller_handler(self, create: Any) -> tuple[Any, Any]:
        """The handler of a caller in this file that catches ``create``'s clash when the
        function that creates has none: ``try: self._lock() / except OSError: ...``."""
        func = self.func_of(create)
        if func is None:
            return None, None
        for call, _m in self.call_sites(func):
            if self.within(call, func):
                continue
            t, h = self.catching_handler(call, FILE_EXISTS_ERRORS)
            if h is not None:
                return t, h
        return None, None

    def _waits_in_loop(self, node: Any) -> bool:
        """``node`` is in a ``while`` loop of its function that sleeps outside it: while the
        name exists the run waits and tests again (``while ...: if not exists(M): ...;
        time.sleep(5)``)."""
        cst = self.cst
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(a, cst.While):
                return self._sleeps_under(a.body) > self._sleeps_under(node)
        return False

    def _retried_after(self, tr: Any) -> bool:
        """The try is in a ``while`` loop of its function whose body waits (a sleep outside
        the try) and whose try body leaves the loop on success (``break``/``return``)."""
        cst = self.cst
        loop = None
        for a in self.ancestors(tr):
            if isinstance(a, (cst.FunctionDef, cst.Lambda)):
                return False
            if isinstance(a, cst.While):
                loop = a
                break
        if loop is None:
            return False
        leaves = any(True for _ in self.descendants(tr.body, (cst.Break, cst.Return)))
        # a sleep of the loop outside the try (counted once per loop, not per try)
        return leaves and self._sleeps_under(loop.body) > self._sleeps_under(tr)

    def _success_flag_returned(self, tr: Any, handler: Any, create: Any) -> Any:
        """``ok = False``; ``try: create; ...; ok = True`` / ``except FileExistsError:`` that
        leaves ``ok`` alone; later ``return ok``: that Return (the clash returns False), or
        None."""
        cst = self.cst
        func = self.func_of(tr)
        if func is None:
            return None
        flags = set()
        for a in self.descendants(tr.body, cst.Assign):
            if (
                self.const(a.value) is True
                and len(a.targets) == 1
                and isinstance(a.targets[0].target, cst.Name)
                and self.off(a) > self.off(create)
                and not any(isinstance(x, cst.ExceptHandler) for x in self.ancestors(a))
            ):
                flags.add(a.targets[0].target.value)
        if not flags:
            return self._falls_to_false_return(tr, create)
        for a in self.descendants(handler, cst.Assign):
            for t in a.targets:
                if isinstance(t.target, cst.Name) and t.target.value in flags:
                    return None
        for r in self._returns_of(func):
            if (
                isinstance(r.value, cst.Name)
                and r.value.value in flags
                and self.off(r) > self.off(tr)
            ):
                return r
        return None

    def _returns_of(self, func: Any) -> list[Any]:
        """The Return statements of ``func`` itself (not of nested functions), in source
        order; found once per function."""
        cache = self.__dict__.setdefault("_returns_cache", {})
        got = cache.get(id(func))
        if got is None or got[0] is not func:
            cst = self.cst
            rets = [r for r in self.descendants(func.body, cst.Return) if self.func_of(r) is func]
            got = cache[id(func)] = (func, sorted(rets, key=self.off))
        return got[1]

    def _sleeps_under(self, node: Any) -> int:
        """How many ``time.sleep``/``asyncio.sleep`` calls ``node`` holds (counted once)."""
        cache = self.__dict__.setdefault("_sleeps_cache", {})
        got = cache.get(id(node))
        if got is None or got[0] is not node:
            n = sum(
                1 for c in self.descendants(node, self.cst.Call) if self.call_q(c) in SLEEP_CALLS
            )
            got = cache[id(node)] = (node, n)
        return got[1]

    def _falls_to_false_return(self, tr: Any, create: Any) -> Any:
        """``try: link(tmp, L); return True / except OSError: pass``, then (after clean-up
        statements) ``return False``: that Return, the clash's result, or None."""
        cst = self.cst
        if not any(
            self.const(r.value) is True and self.off(r) > self.off(create)
            for r in self.descendants(tr.body, cst.Return)
        ):
            return None
        sibs, i = self.block_siblings(tr)
        for st in sibs[i + 1 : i + 6]:
            if isinstance(st, cst.Try) and not any(
                True for _ in self.descendants(st, (cst.Return, cst.Raise))
            ):
                continue  # `try: os.unlink(tmp) / except OSError: pass`: clean-up
            if not isinstance(st, cst.SimpleStatementLine):
                return None
            for sm in st.body:
                if isinstance(sm, cst.Return):
                    return sm if self.const(sm.value) in (False, None, 0) else None
        return None

    _PID_WORD = lazyre.compile(r"\bpid\b|getpid|_pid\b", re.I)

    def _writes_pid(self, creator: Any, own: bool = False) -> bool:
        """The created file is written with a PID (``f.write(str(os.getpid()))``, ``pid``) in
        the creating statement or the two after it: a pid file, not an output.  ``own``:
        the run's own PID (``os.getpid()``)."""
        word = self._OWN_PID if own else self._PID_WORD
        for c in (creator, self.created_in_helper.get(id(creator))):  # `write_pid()`'s open
            if c is None:
                continue
            st = self.stmt_of(c)
            sibs, i = self.block_siblings(st)
            if any(word.search(self.code(s)) for s in sibs[i : i + 3]):
                return True
        return False

    _OWN_PID = lazyre.compile(r"\bgetpid\(\)")

    def _raise_escapes(self, raise_node: Any) -> bool:
        """No caller of this file catches the error raised (as a busy branch)."""
        exc = raise_node.exc
        if exc is None:
            return False  # a bare re-raise inside a handler: judged where it is caught
        q = self.qname(exc.func if isinstance(exc, self.cst.Call) else exc)
        return not q or self._caught_by_caller(raise_node, q, 0) is None

    def _scoped_by_exit(self, call: Any, path: PathExpr | None) -> bool:
        """``call`` runs in a class's ``__enter__`` and that class's ``__exit__`` removes the
        same path: the name exists exactly while the ``with`` block runs."""
        func = self.func_of(call)
        if path is None or func is None or func.name.value != "__enter__":
            return False
        cls = self.class_of(func)
        for rc, _r in self.removals_of(path):
            f = self.func_of(rc)
            if f is not None and f.name.value == "__exit__" and self.class_of(f) is cls:
                return True
        return False

    def _sleeps(self, stmts: list[Any]) -> bool:
        """The statements wait (``time.sleep``, ``asyncio.sleep``) before going on."""
        return any(
            self.call_q(c) in SLEEP_CALLS
            for st in stmts
            for c in self.descendants(st, self.cst.Call)
        )

    def _result_ignored(self, ret: Any) -> bool:
        """``ret`` returns from a function (not the entry point) that every caller in this
        file calls as a statement (the result is dropped), and there is at least one."""
        func = self.func_of(ret)
        if func is None or (self.class_of(func) is None and func.name.value in self.entry):
            return False  # returning from the entry point ends the run
        sites = self.call_sites(func)
        return bool(sites) and all(
            isinstance(self.up(c), self.cst.Expr) or self._only_reported(c) for c, _m in sites
        )

    def _sets_tested_flag(self, ret: Any) -> bool:
        """The function of ``ret`` records success in an attribute (``self.locked = True``
        outside its handlers) that a ``while``, or an ``if`` that leaves (raise, return, exit,
        loop jump), tests: the return on the clash leaves it unset, and the caller decides on
        the attribute, not the result."""
        cst = self.cst
        func = self.func_of(ret)
        if func is None or self.class_of(func) is None:
            return False
        flags = set()
        for a in self.descendants(func.body, cst.Assign):
            if self.const(a.value) is not True or any(
                isinstance(x, cst.ExceptHandler) for x in self.ancestors(a)
            ):
                continue
            for t in a.targets:
                tg = t.target
                if (
                    isinstance(tg, cst.Attribute)
                    and isinstance(tg.value, cst.Name)
                    and tg.value.value == "self"
                ):
                    flags.add(tg.attr.value)
        if not flags:
            return False
        for n in self.descendants(self.module, (cst.If, cst.While)):
            if isinstance(n, cst.If) and self.find_end(list(n.body.body)) is None:
                continue  # `if self.locked: os.unlink(p)`: a release, not the decision
            for at in self.descendants(n.test, cst.Attribute):
                if at.attr.value in flags:
                    return True  # `self.locked`, or `p.locked` on an instance
        return False

    def _only_reported(self, call: Any) -> bool:
        """``call`` is the test of an ``if`` whose branches only print or log (``if
        ensure(d): print("created", d)``): the result says what happened, it decides
        nothing."""
        cst = self.cst
        node = call
        while isinstance(self.up(node), cst.UnaryOperation):
            node = self.up(node)
        ifn = self.up(node)
        if not isinstance(ifn, cst.If) or ifn.test is not node:
            return False
        stmts = self._if_region(ifn)
        for st in stmts:
            if not isinstance(st, cst.SimpleStatementLine):
                return False
            for sm in st.body:
                if isinstance(sm, cst.Pass):
                    continue
                if not isinstance(sm, cst.Expr) or not isinstance(sm.value, cst.Call):
                    return False
                q, m = self.call_q(sm.value), self.method(sm.value)
                if q != "print" and m not in LOG_METHODS:
                    return False
        return True

    def _removes_on_normal_path(self, stmts: list[Any], path: PathExpr | None) -> bool:
        """The statements remove ``path`` other than in an ``except`` handler."""
        cst = self.cst
        if path is None:
            return False
        key = self.key(path)
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                tgt = self.removal_target(c)
                if tgt is None or tgt[0] is None or self.key(tgt[0]) != key:
                    continue
                if not any(isinstance(a, cst.ExceptHandler) for a in self.ancestors(c)):
                    return True
        return False

    def _leaves_on_normal_path(self, stmts: list[Any]) -> bool:
        """A return, raise, loop jump or exit call in the statements, other than in an
        ``except`` handler (where only an error leads)."""
        cst = self.cst
        leaving = (cst.Return, cst.Raise, cst.Continue, cst.Break)
        for st in stmts:
            for n in [st, *self.descendants(st)]:
                if isinstance(n, leaving) or self.exit_call(n) is not None:
                    if not any(isinstance(a, cst.ExceptHandler) for a in self.ancestors(n)):
                        return True
        return False

    def _recreates(self, stmts: list[Any], path: PathExpr | None) -> bool:
        """The handler removes the existing name unconditionally (no test, no exit) and goes
        on: the old entry never stops the run, so nothing is excluded."""
        cst = self.cst
        if path is None:
            return False
        key = self.key(path)
        removed = False
        for st in stmts:
            if not isinstance(st, cst.SimpleStatementLine):
                return False  # a test or loop in the handler: a judgement, maybe a takeover
            for c in self.descendants(st, cst.Call):
                tgt = self.removal_target(c)
                if tgt is not None and tgt[0] is not None and self.key(tgt[0]) == key:
                    removed = True
                elif self.call_q(c) in ("os.kill", "os.killpg") or self._helper_judges(c):
                    return False
        return removed

    def _helper_judges(self, call: Any) -> bool:
        """``call`` runs a function of this file that tests a PID or raises: the handler's
        removal that follows happens only when it lets the run go on (a takeover)."""
        q = self.call_q(call)
        if not q.startswith(("local.", "self.")):
            return False
        cst = self.cst
        for fn in self.funcs.get(q.rsplit(".", 1)[-1], ()):
            for n in self.descendants(fn.body, (cst.Raise, cst.Call)):
                if isinstance(n, cst.Raise) or self.call_q(n) in (
                    "os.kill",
                    "psutil.pid_exists",
                ):
                    return True
        return False

    def _renamed_each_pass(self, pnode: Any, end: _Entry) -> bool:
        """``while True: name = ...; try: create(name) except ...: continue``: the name is
        assigned anew inside the retried loop."""
        cst = self.cst
        if not isinstance(pnode, cst.Name):
            return False
        loop = next(
            (a for a in self.ancestors(end.node) if isinstance(a, (cst.For, cst.While))), None
        )
        if loop is None:
            return False
        for t in self.descendants(loop.body, cst.AssignTarget):
            if isinstance(t.target, cst.Name) and t.target.value == pnode.value:
                return True
        if isinstance(loop, cst.For):
            return any(
                isinstance(n, cst.Name) and n.value == pnode.value
                for n in self.descendants(loop.target, cst.Name)
            )
        return False

    def _guarded_by_absence(self, call: Any, path: PathExpr | None) -> Any:
        """The ``if not exists(P)`` (isdir, is_dir...) of ``call``'s own path under which
        alone it runs (it makes what is missing, it does not test for a holder), or None."""
        cst = self.cst
        if path is None:
            return None
        key = self.key(path)
        for a in self.ancestors(call):
            if isinstance(a, (cst.FunctionDef, cst.Try)):
                return None
            if isinstance(a, cst.If) and self.within(call, a.body):
                et = self._exists_test(a.test)
                if et is not None and not et[1]:
                    p = self._exists_path(et[0])
                    if p is not None and self.key(p) == key:
                        return a
        return None

    @property
    def _acq_nodes(self) -> dict[int, Any]:
        if "_acq_nodes_d" not in self.__dict__:
            self.__dict__["_acq_nodes_d"] = {}
        return self.__dict__["_acq_nodes_d"]

    def _tolerates_eexist(self, handler: Any, end: _Entry) -> bool:
        """``if not (e.errno == EEXIST ...): raise``: the existing name is accepted."""
        cst = self.cst
        taken = ""  # the tests of the enclosing ifs whose body leads to the end
        for a in self.ancestors(end.node):
            if a is handler:
                return False
            if isinstance(a, cst.If) and not self.within(end.node, a.test):
                test = self.code(a.test)
                if "EEXIST" in test and ("not" in test or "!=" in test):
                    return self.within(end.node, a.body)
                if self.within(end.node, a.body):
                    taken += " " + test
                if (
                    "EEXIST" in taken
                    and re.search(r"\b(isdir|is_dir|exists)\(", taken)
                    and end.kind == "return"
                ):
                    # `if e.errno == EEXIST and isdir(p): return p` (or the two tests
                    # nested): an ensure-dir helper that accepts the existing directory
                    return True
        return False

    def _fname(self, node: Any) -> str | None:
        f = self.func_of(node)
        return f.name.value if isinstance(f, self.cst.FunctionDef) else None

    def _fd_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            q = self.call_q(c)
            if q in (
                "fcntl.flock",
                "django.core.files.locks.lock",
                "portalocker.lock",
                "portalocker.portalocker.lock",
            ):
                kind = LockKind.FLOCK
            elif q == "fcntl.lockf":
                kind = LockKind.LOCKF
            else:
                continue
            flags = self.flag_names(self.arg(c, 1))
            if "LOCK_UN" in flags or not (
                {"LOCK_EX", "LOCK_SH", "EXCLUSIVE", "SHARED"} & flags or not flags
            ):
                continue
            mech = "portalocker.lock" if q.startswith("portalocker") else q
            fd = self.arg(c, 0)
            opener = self.trace_open(fd)
            acq = Acquire(kind, mech, None, self.span(c))
            acq.nonblocking = bool({"LOCK_NB", "NON_BLOCKING"} & flags)
            acq.function = self._fname(c)
            self._fill_open(acq, opener)
            t, h = self.catching_handler(c, BUSY_ERRORS, LIB_BUSY_ERRORS_SUFFIX)
            if h is not None and acq.nonblocking:
                acq.busy = self.busy_branch(list(h.body.body), h, t)
                acq.open_failure_is_busy = self.open_failure_is_busy(opener, h)
            acq.inode_recheck = self._inode_recheck(c)
            self._acq_nodes[id(acq)] = c
            self.facts.acquires.append(acq)
            _ = cst

    def _inode_recheck(self, call: Any) -> bool:
        scope = self.func_of(call) or self.module
        src = self.code(scope) if scope is not self.module else self.text
        return "st_ino" in src and ("fstat" in src or "samestat" in src or "samefile" in src)

    def _fill_open(self, acq: Acquire, opener: Any) -> None:
        cst = self.cst
        if opener is None:
            return
        q = self.call_q(opener)
        if q == "os.open":
            acq.path = self.path(self.arg(opener, 0, "path"))
            flags = self.flag_names(self.arg(opener, 1, "flags"))
            acq.truncating = "O_TRUNC" in flags
        elif (
            self.method(opener) == "open"
            and isinstance(opener.func, cst.Attribute)
            and q not in ("io.open", "codecs.open")
        ):
            acq.path = self.path(opener.func.value)
            mv = self.arg(opener, 0, "mode")
            mode = self.const(mv) if mv is not None else "r"
            acq.truncating = isinstance(mode, str) and "w" in mode
        else:
            acq.path = self.path(self.arg(opener, 0, "file"))
            mode = self.mode_of(opener)
            acq.truncating = isinstance(mode, str) and "w" in mode
            if isinstance(mode, str) and "a" in mode and self._truncated_later(opener):
                acq.truncating = True
        acq.open_span = self.span(opener)

    def _truncated_later(self, opener: Any) -> bool:
        cst = self.cst
        names = set()
        par = self.up(opener)
        if isinstance(par, cst.Assign):
            for t in par.targets:
                if isinstance(t.target, cst.Name):
                    names.add(t.target.value)
        if (
            isinstance(par, cst.WithItem)
            and par.asname is not None
            and isinstance(par.asname.name, cst.Name)
        ):
            names.add(par.asname.name.value)
        for c in self.calls:
            if (
                self.method(c) == "truncate"
                and isinstance(c.func.value, cst.Name)
                and c.func.value.value in names
            ):
                return True
        return False

    def _object_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            info = self.OBJECT_LOCKS.get(self.call_q(c))
            if info is None:
                continue
            kind, mech = info
            pnode = (
                self.arg(c, 0, "lock_file") or self.arg(c, 0, "filename") or self.arg(c, 0, "path")
            )
            acq = Acquire(kind, mech, self.path(pnode), self.span(c))
            acq.function = self._fname(c)
            nb = self._nonblocking_kw(c)
            par = self.up(c)
            uses: list[Any] = []  # acquire calls / with items
            if isinstance(par, cst.WithItem):
                uses.append(par)
            else:
                var = None
                if isinstance(par, cst.Assign) and len(par.targets) == 1:
                    var = par.targets[0].target
                if var is not None:
                    for u in self.calls:
                        if (
                            self.method(u) == "acquire"
                            and self._same_ref(u.func.value, var)
                            and self._same_scope(u, c, var)
                        ):
                            uses.append(u)
                    for w in self.withs:
                        if not self._same_scope(w, c, var):
                            continue
                        for item in w.items:
                            it = item.item
                            if self._same_ref(it, var):
                                uses.append(item)
                            elif (
                                isinstance(it, cst.Call)
                                and self.method(it) == "acquire"
                                and self._same_ref(it.func.value, var)
                            ):
                                if item not in uses and it not in uses:
                                    uses.append(item)
                if kind is LockKind.EXISTENCE and not uses and not self._escapes(c, var):
                    # constructing a SoftFileLock creates nothing: only its acquire is a lock
                    continue
            if uses:
                u = uses[0]
                acq.open_span = self.span(c)
                node = u.item if isinstance(u, cst.WithItem) else u
                acq.span = self.span(node)
                if isinstance(node, cst.Call) and node is not c:
                    nb = nb or self._nonblocking_kw(node)
                acq.busy = self._object_busy(node, nb)
                if kind is not LockKind.EXISTENCE and self.lock_object_open_failure_is_busy(
                    node, acq.busy
                ):
                    acq.open_failure_is_busy = True
                    acq.open_failure_span = self.span(node)  # its acquire opens the file
                if isinstance(u, cst.WithItem) or kind is LockKind.EXISTENCE:
                    anchor = u
                else:
                    anchor = u
                self._acq_nodes[id(acq)] = (
                    anchor if not isinstance(anchor, cst.WithItem) else anchor.item
                )
                acq.released = kind is LockKind.EXISTENCE
                if kind is LockKind.EXISTENCE:
                    acq.release_on_every_exit = isinstance(
                        u, cst.WithItem
                    ) or self._released_in_finally(par)
            else:
                self._acq_nodes[id(acq)] = c
            acq.nonblocking = nb
            self.facts.acquires.append(acq)

    def _same_scope(self, use: Any, ctor: Any, var: Any) -> bool:
        """``use`` can refer to the object bound at ``ctor``: the same function for a local
        name, the same class for ``self.x``, anywhere for a module-level name."""
        cst = self.cst
        if isinstance(var, cst.Attribute):
            return self.class_of(use) is self.class_of(ctor)
        f = self.func_of(ctor)
        return f is None or self.func_of(use) is f

    def _escapes(self, ctor: Any, var: Any) -> bool:
        """The lock object leaves the place it is made (returned, yielded, a lambda's value,
        passed to a call, stored in a container or attribute), so it may be acquired
        elsewhere."""
        cst = self.cst
        par = self.up(ctor)
        if isinstance(par, cst.Expr):
            return False  # the value is dropped
        if var is None:
            if isinstance(par, cst.Attribute):
                return par.attr.value == "acquire"  # SoftFileLock(p).acquire()
            return not isinstance(par, (cst.Comparison, cst.ComparisonTarget))
        if not isinstance(var, cst.Name):
            return True  # self.lock = ...: used by other methods
        f = self.func_of(ctor)
        scope = f if f is not None else self.module
        for n in self.descendants(scope, cst.Name):
            if n.value != var.value or n is var or self.off(n) < self.off(ctor):
                continue
            up = self.up(n)
            if isinstance(up, cst.Attribute) and up.value is n:
                continue  # lock.lifetime, lock.is_locked
            if isinstance(up, cst.Comparison):
                continue  # lock1 is lock2
            if isinstance(up, cst.ComparisonTarget):
                continue
            return True
        return False

    def _object_busy(self, node: Any, nb: bool) -> BusyBranch | None:
        cst = self.cst
        # if not lock.acquire(blocking=False): / if lock.acquire(...): ... else:
        if isinstance(node, cst.Call):
            n = node
            negate = False
            par = self.up(n)
            if isinstance(par, cst.UnaryOperation) and isinstance(par.operator, cst.Not):
                negate = True
                n = par
                par = self.up(n)
            if isinstance(par, cst.If) and par.test is n:
                return self._if_branch(par, negate, 0)
            if (
                isinstance(par, cst.Assign)
                and len(par.targets) == 1
                and isinstance(par.targets[0].target, cst.Name)
            ):
                st = self.stmt_of(par)
                sibs, i = self.block_siblings(st)
                if i + 1 < len(sibs) and isinstance(sibs[i + 1], cst.If):
                    nxt = sibs[i + 1]
                    name = par.targets[0].target.value
                    t = nxt.test
                    if (
                        isinstance(t, cst.UnaryOperation)
                        and isinstance(t.operator, cst.Not)
                        and isinstance(t.expression, cst.Name)
                        and t.expression.value == name
                    ):
                        return self._if_branch(nxt, True, 0)
                    if isinstance(t, cst.Name) and t.value == name:
                        return self._if_branch(nxt, False, 0)
        t, h = self.catching_handler(node, BUSY_ERRORS, LIB_BUSY_ERRORS_SUFFIX)
        if h is not None and nb:
            return self.busy_branch(list(h.body.body), h, t)
        if h is not None:
            hn = self.handler_names(h)
            if any(x.endswith(LIB_BUSY_ERRORS_SUFFIX) for x in hn):
                return self.busy_branch(list(h.body.body), h, t)
        return None

    def _exists_test(self, test: Any, depth: int = 0) -> tuple[Any, bool] | None:
        """(exists call, positive) when an if test is exists(P) / not exists(P), also through
        a helper whose body is ``return exists(P)``."""
        cst = self.cst
        negate = False
        n = test
        if isinstance(n, cst.BooleanOperation) and isinstance(n.operator, cst.And):
            # `if reset == False and exists(P):` - the body runs only when P exists
            for side in (n.left, n.right):
                r = self._exists_test(side, depth)
                if r is not None:
                    return r
            return None
        if isinstance(n, cst.BooleanOperation):
            n = n.left
        while isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            negate = not negate
            n = n.expression
        if isinstance(n, cst.Comparison) and len(n.comparisons) == 1:
            # `if os.path.isfile(P) == True:` / `... is False`
            op, right = n.comparisons[0].operator, n.comparisons[0].comparator
            if (
                isinstance(op, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot))
                and isinstance(right, cst.Name)
                and right.value in ("True", "False")
            ):
                if (right.value == "False") != isinstance(op, (cst.NotEqual, cst.IsNot)):
                    negate = not negate
                n = n.left
        if not isinstance(n, cst.Call):
            return None
        q = self.call_q(n)
        m = self.method(n)
        if q in ("os.path.exists", "os.path.isfile", "os.path.lexists", "os.path.isdir"):
            return n, not negate
        if self.local_callee(n) is not None:  # `self.exists()`: a method of this file
            ht = self.helper_test(n) if depth < 3 else None
            r = self._exists_test(ht[1], depth + 1) if ht is not None else None
            if r is None:
                return None
            self._tests_via[id(n)] = (ht[0], r[0])
            return n, r[1] != negate
        if (
            m in ("exists", "is_file", "is_dir")
            and isinstance(n.func, cst.Attribute)
            and not q.startswith("os.")
        ):
            return n, not negate
        return None

    @property
    def _tests_via(self) -> dict[int, tuple[Any, Any]]:
        """helper call -> (helper, the exists call it returns)"""
        return self.__dict__.setdefault("_tests_via_d", {})

    def _exists_path(self, call: Any) -> PathExpr | None:
        via = self._tests_via.get(id(call))
        if via is not None:
            fn, inner = via
            if id(inner) in self._tests_via:
                return self._exists_path(inner)
            return self.path(self.helper_arg(call, fn, self._exists_arg(inner)))
        return self.path(self._exists_arg(call))

    def _exists_arg(self, call: Any) -> Any:
        if self.call_q(call).startswith("os.path."):
            return self.arg(call, 0)
        return call.func.value

    def _check_then_create(self) -> None:
        cst = self.cst
        flocked = {
            a.path.key()
            for a in self.facts.acquires
            if a.kind is not LockKind.EXISTENCE and a.path is not None
        }
        for ifn in self.ifs:
            et = self._exists_test(ifn.test)
            if et is None:
                continue
            test_call, positive = et
            path = self._exists_path(test_call)
            if path is None or not path.key() or path.key() in flocked:
                continue
            creator = None
            if positive:
                sibs, i = self.block_siblings(ifn)
                region = sibs[i + 1 :]
                if isinstance(ifn.orelse, cst.Else):  # `if exists(P): return False / else:`
                    region = list(ifn.orelse.body.body) + region
                busy_stmts = list(ifn.body.body)
            else:
                region = list(ifn.body.body)
                busy_stmts = None
            # the first plain creation of the same path in the region (an index of the file's
            # creations by path, so each test costs its candidates, not the rest of the file)
            spans = [(st.s, st.e) for st in region]
            for off, c, cr in self._plain_creations().get(path.key(), ()):
                if id(c) in self.probe_calls or id(c) in self.handled_creates:
                    continue
                if any(s0 <= off < e0 for s0, e0 in spans):
                    creator, creator_cr = c, cr
                    break
            if creator is None:
                continue
            released = [
                c
                for c, _r in self.removals_of(path)
                if not (positive and self.within(c, ifn.body))  # not the busy branch's own
            ]
            # a run-once marker, never removed (or only as a takeover); not a file the run's
            # PID is written into (`f.write(str(os.getpid()))`): a PID record, removed by
            # whoever the lock is handed to
            marker = not released and not self._writes_pid(creator, own=True)
            if (
                positive
                and self._removes_on_normal_path(busy_stmts, path)
                and not self._leaves_on_normal_path(busy_stmts)
            ):
                continue  # `if exists(P): remove(P)`, then create: an overwrite, not a guard
            if positive:
                alive = self._alive_branch(busy_stmts)
                if alive is not None:
                    busy_stmts = alive  # `if isfile(P): ... os.kill(pid, 0) ... else: exit`
                end = self.find_end(busy_stmts)
                kill = self._kills_holder(busy_stmts, path) if end is None else None
                if end is None and kill is None:
                    # `if exists(P): print("busy") / else: create(P) ... remove(P)` as the
                    # script's last statement: the busy run falls off the end
                    if not (
                        isinstance(ifn.orelse, cst.Else)
                        and (released or lockish_name(path))
                        and self.falls_off(ifn)
                    ):
                        continue
                    busy = self.busy_branch(busy_stmts, ifn, ifn)
                elif kill is not None:
                    # `if exists(P): os.kill(int(open(P).read()), SIGTERM)`, then create: a
                    # takeover of the holder's lock, the run goes on
                    busy = BusyBranch(self.span(kill), False, None)
                elif not lockish_name(path) and self._ends_on_content(end, ifn):
                    continue  # the file's contents decide, not its existence
                elif (
                    end.kind == "raise"
                    and not lockish_name(path)
                    and "SystemExit" not in self.code(end.node)
                    and self._raise_escapes(end.node)
                    and not self._writes_pid(creator)
                ):
                    # `if exists(out): raise Error("exists, delete it")`: a refusal to
                    # overwrite an output, like an exclusive create of output
                    continue
                else:
                    busy = self.busy_branch(busy_stmts, ifn, ifn)
            else:
                sibs, i = self.block_siblings(ifn)
                after = list(sibs[i + 1 :])
                leaves = False
                if ifn.orelse is None and after and self.find_end(list(ifn.body.body)):
                    # `if not exists(P): create(P); return True`, then `return False`: what
                    # follows the `if` runs only when P exists, and leaves like the positive
                    # test's body does
                    busy = self.busy_branch(after, ifn, ifn)
                    leaves = self.find_end(after) is not None
                else:
                    busy = self._if_branch(ifn, False, 0)
                if (
                    not busy.ends_run
                    and not leaves
                    and not any(self.within(c, ifn) for c in released)
                    and not self._waits_in_loop(ifn)
                ):
                    # `if not exists(F): create(F)` and the run goes on either way, the name
                    # kept: making what is missing, nothing is excluded
                    continue
            acq = Acquire(
                LockKind.EXISTENCE,
                "exists() then " + creator_cr[0],
                path,
                self.span(self.created_in_helper.get(id(creator), creator)),
                check_then_create=True,
                test_span=self.span(test_call),
                busy=busy,
            )
            acq.truncating = True
            acq.function = self._fname(creator)
            self.handled_creates.add(id(creator))
            self._acq_nodes[id(acq)] = creator
            if marker:
                self._unreleased_pidfiles.append(acq)  # a lock if its PID is tested
                continue
            self.facts.acquires.append(acq)

    def _plain_creations(self) -> dict[str, list[tuple[int, Any, Any]]]:
        """Every call that creates a file plainly (``open(p, "w")``, ``touch``, a helper that
        does), by the key of its path: (offset, call, creation), in source order."""
        got = self.__dict__.get("_plain_creations_idx")
        if got is None:
            got = {}
            for c in self.calls:
                cr = self.creation(c) or self.helper_creation(c)
                if cr is None or cr[2] != "plain":
                    continue  # mkdir/link after a test: making a directory, not a lock
                p = self.path(cr[1])
                if p is not None and p.key():
                    got.setdefault(p.key(), []).append((self.off(c), c, cr))
            for v in got.values():
                v.sort(key=lambda t: t[0])
            self.__dict__["_plain_creations_idx"] = got
        return got

    def _alive_branch(self, stmts: list[Any]) -> list[Any] | None:
        """The statements run when a liveness test among ``stmts`` finds the holder alive
        (``try: os.kill(pid, 0) / except OSError: ... / else: <alive>``, ``if
        psutil.pid_exists(pid): <alive>``), when they leave; else None."""
        cst = self.cst

        def probe(node: Any) -> Any:
            for c in self.descendants(node, cst.Call):
                q = self.call_q(c)
                if q in PID_PROBES or (
                    q == "os.kill" and self.const(self.arg(c, 1, "sig")) in (0, "0")
                ):
                    return c
            return None

        def tests(node: Any) -> bool:
            return probe(node) is not None

        for st in stmts:
            alive = None
            if isinstance(st, cst.Try) and st.orelse is not None and tests(st.body):
                alive = list(st.orelse.body.body)
            elif isinstance(st, cst.Try) and tests(st.body):
                # `try: os.getpgid(pid); log("running"); sys.exit(0) / except OSError: pass`
                body = list(st.body.body)
                c = probe(st.body)
                k = next((i for i, b in enumerate(body) if self.within(c, b)), None)
                alive = body[k + 1 :] if k is not None else None
            elif isinstance(st, cst.If) and tests(st.test):
                neg = isinstance(st.test, cst.UnaryOperation) and isinstance(
                    st.test.operator, cst.Not
                )
                if not neg:
                    alive = list(st.body.body)
                elif st.orelse is not None and isinstance(st.orelse, cst.Else):
                    alive = list(st.orelse.body.body)
            if alive and self.find_end(alive) is not None:
                return alive
        return None

    def _kills_holder(self, stmts: list[Any], path: PathExpr) -> Any:
        """The ``os.kill``/``os.killpg`` in ``stmts`` that signals (not with 0) the PID read
        from ``path``: the holder is killed so that this run can take the lock over."""
        key = self.key(path)
        for st in stmts:
            for c in self.descendants(st, self.cst.Call):
                if self.call_q(c) not in ("os.kill", "os.killpg") or self.const(
                    self.arg(c, 1, "sig")
                ) in (0, "0"):
                    continue
                read, pid_file = self.pid_source(self.arg(c, 0, "pid"))
                if read and pid_file is not None and self.key(pid_file) == key:
                    return c
        return None

    @property
    def _unreleased_pidfiles(self) -> list[Acquire]:
        return self.__dict__.setdefault("_unreleased_pidfiles_l", [])

    def _liveness_tested_pidfiles(self) -> None:
        """A check-then-create file that is never released is a run-once marker, unless the
        PID it holds is tested for a live holder (os.kill(pid, 0), /proc/<pid>, psutil): that
        is a pid lock whose stale case is a takeover."""
        tested = {
            self.key(lv.pid_file)
            for lv in self.facts.liveness
            if lv.consequential and lv.pid_file is not None
        }
        for acq in self._unreleased_pidfiles:
            if acq.path is not None and self.key(acq.path) in tested:
                self.facts.acquires.append(acq)

    _LIVENESS_WORDS = lazyre.compile(r"kill|pid|/proc|psutil|alive|running|lock")

    def _ends_on_content(self, end: _Entry, ifn: Any) -> bool:
        """The branch under ``if exists(P)`` ends only under a further test that is not about
        a live holder (``if f.readlines() == lines: return``): the file's contents decide."""
        cst = self.cst
        for a in self.ancestors(end.node):
            if a is ifn:
                return False
            if isinstance(a, cst.If) and not self._LIVENESS_WORDS.search(self.code(a.test)):
                return True
        return False

    def _created(self) -> None:
        cst = self.cst
        locked = {a.path.key() for a in self.facts.acquires if a.path is not None}
        for c in self.calls:
            q = self.call_q(c)
            if q == "os.makedirs":
                ek = self.kw(c, "exist_ok")
                if ek is not None and self.const(ek) is True:
                    p = self.path(self.arg(c, 0, "name"))
                    if p is not None:
                        self.facts.dirs_made.append(p)
                continue
            if self.method(c) == "mkdir" and isinstance(c.func, cst.Attribute):
                ek = self.kw(c, "exist_ok")
                if ek is not None and self.const(ek) is True:
                    p = self.path(c.func.value)
                    if p is not None:
                        self.facts.dirs_made.append(p)
                continue
            dst = None
            if q in ("os.rename", "os.replace", "shutil.move", "os.renames"):
                dst = self.arg(c, 1, "dst")
            elif self.method(c) in ("rename", "replace") and isinstance(c.func, cst.Attribute):
                if self.is_pathlike(c.func.value) and c.args:
                    dst = self.arg(c, 0, "target")
            if dst is not None:
                p = self.path(dst)  # a rename makes its destination
                if p is not None and p.key() not in locked:
                    self.facts.created.append(p)
                continue
            cr = self.creation(c)
            if cr is None or id(c) in self.handled_creates:
                continue
            p = self.path(cr[1])
            if p is not None and p.key() not in locked:
                self.facts.created.append(p)
        # a name with a per-process part (pid, uuid, tempfile) is this process's own
        for r in self.facts.removals:
            if r.path is not None and r.path.has_unique:
                self.facts.created.append(r.path)
