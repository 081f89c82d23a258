"""Stage 4: the locks a file takes.  Exclusive creates (``"wx"``, ``O_EXCL``), ``mkdir``
guarded by ``EEXIST`` (and ``{recursive: true}``, which never fails), test-then-create,
``proper-lockfile`` and npm ``lockfile``, ``fs-ext`` flock and ``os-lock`` descriptor locks."""

from __future__ import annotations

import re

from ...hints import Any
from ...model import Acquire, Edit, FileFacts, FixTemplate, LockKind, NonExclusiveCreate, PathExpr
from ...paths import lockish_name, lockish_text
from .. import treesitter
from . import syntax
from .busy import Busy
from .syntax import TIMES, Tree, arg, object_entries, string_value, text, unwrap
from .values import Names

OPENS = {"fs.openSync": 1, "fs.open": 1, "fs.writeFileSync": 2, "fs.writeFile": 2}
STREAMS = {"fs.createWriteStream": 1}
MKDIRS = {"fs.mkdirSync", "fs.mkdir", "fs.mkdirp", "fs.ensureDir", "fs.ensureDirSync"}
TESTS = {"fs.existsSync", "fs.statSync", "fs.lstatSync", "fs.accessSync", "fs.access", "fs.stat"}
CREATES = {"fs.writeFileSync", "fs.writeFile", "fs.openSync", "fs.open", "fs.appendFileSync"}
# error codes that tell a held lock apart from a lock file that cannot be opened (LCK406)
# what takes a name away again (a lock directory is removed with rmdir)
REMOVALS = {"fs.unlinkSync", "fs.unlink", "fs.rmSync", "fs.rm", "fs.rmdirSync", "fs.rmdir"}
CONTENTION_CODES = ("EAGAIN", "EWOULDBLOCK", "ELOCKED")
# the names a result is passed on by: a promise executor's functions, callback parameters
PASS_ON = ("resolve", "reject", "callback", "cb", "done")
CREATES |= {"fs.mkdirSync", "fs.mkdir", "fs.closeSync", "fs.createWriteStream"}


class Locks:
    def __init__(self, tree: Tree, names: Names, busy: Busy, facts: FileFacts) -> None:
        self.tree, self.names, self.busy, self.facts = tree, names, busy, facts
        self.nodes: list[Any] = []  # the acquiring call of each facts.acquires entry

    def run(self) -> None:
        for call in self.tree.calls:
            q = self.names.callee(call)
            if q in OPENS or q in STREAMS:
                self._open(call, q)
            elif q in MKDIRS:
                self._mkdir(call, q)
            elif q.startswith(("proper-lockfile.", "lockfile.")):
                self._library(call, q)
            elif q in ("fs-ext.flock", "fs-ext.flockSync", "os-lock.lock", "os-lock.lockSync"):
                self._descriptor(call, q)
        self._check_then_create()

    def add(self, acq: Acquire, node: Any) -> None:
        acq.function = syntax.function_name(syntax.function_of(node))
        self.facts.acquires.append(acq)
        self.nodes.append(node)

    def add_non_exclusive(
        self, call: Any, mechanism: str, why: str, path: PathExpr | None, stmts: list[Any]
    ) -> None:
        """A creation used as the test of a busy branch that succeeds on an existing name."""
        nx = NonExclusiveCreate(path, self.tree.span(call), mechanism, why)
        nx.busy = self.busy.branch(stmts, call)
        nx.function = syntax.function_name(syntax.function_of(call))
        self.facts.non_exclusive.append(nx)
        if path is not None and path not in self.facts.created:
            self.facts.created.append(path)  # its own name: removing it is no LCK107

    # -- flags -----------------------------------------------------------------------------------
    def flags(self, call: Any, q: str) -> str | None:
        i = OPENS.get(q, STREAMS.get(q))
        node = arg(call, i) if i is not None else None
        if node is None:
            return None
        opts = object_entries(node)
        if opts:
            node = opts.get("flag") or opts.get("flags")
            if node is None:
                return None
        s = string_value(node)
        if s is not None:
            return s
        src = text(node)
        return "x" if "O_EXCL" in src else "?"

    # -- guards ----------------------------------------------------------------------------------
    def guard(self, call: Any) -> tuple[list[Any] | None, Any]:
        """The busy statements of a creation: the ``catch`` of the ``try`` it is in, the
        ``if (err)`` of its callback, or a ``.catch(...)`` handler; and the catch clause."""
        for a in syntax.ancestors(call):
            if a.type in syntax.FUNCTIONS:
                break
            if a.type == "try_statement":
                body = a.child_by_field_name("body")
                h = a.child_by_field_name("handler")
                if h is not None and syntax.within(call, body):
                    return syntax.block_statements(h.child_by_field_name("body")), h
        cb = syntax.arg(call, len(syntax.args(call)) - 1)
        if cb is not None and cb.type in ("arrow_function", "function_expression", "function"):
            params = self.names.params(cb)
            if params:
                err = text(params[0])
                for n in syntax.descendants(cb, "if_statement"):
                    cond = n.child_by_field_name("condition")
                    if cond is not None and err in text(cond):
                        return syntax.block_statements(n.child_by_field_name("consequence")), n
        p = call.parent
        while p is not None and p.type in syntax.WRAPPERS:
            p = p.parent
        if p is not None and p.type == "member_expression":
            prop = p.child_by_field_name("property")
            outer = p.parent
            if prop is not None and text(prop) == "catch" and outer is not None:
                h = syntax.arg(outer, 0)
                if h is not None and h.type in syntax.FUNCTIONS:
                    body = h.child_by_field_name("body")
                    return syntax.block_statements(body), h
        return None, None

    def decides(self, acq: Acquire, handler: Any, stmts: list[Any] | None = None) -> bool:
        """A creation is a lock when its name says so, when its "exists" failure ends the
        run, or when that failure is handed to a caller in this file that tests it
        (``return -1`` / ``resolve(false)`` / ``callback(err)`` on EEXIST, then ``if (fd < 0)
        return false``).  mkdirp helpers and output files handle EEXIST and go on."""
        if lockish_name(acq.path) and stmts != []:
            return True  # (an empty `catch {}` goes on whatever happened: create if missing)
        if stmts is not None and self._eexist(handler) and self._hands_on(stmts, handler):
            return True
        b = acq.busy
        if (
            b is None
            or not b.ends_run
            or self.tree.text[b.span.start : b.span.end].startswith("throw")
        ):
            return False  # rethrowing is error handling, not a skip
        return self._eexist(handler)

    def _hands_on(self, stmts: list[Any], handler: Any) -> bool:
        """The clash branch passes a result on (``return X``, ``resolve(X)``, a call of the
        callback parameter) and a caller of the (named) function tests what it gets."""
        passes = False
        for st in stmts:
            for n in treesitter.walk(st):
                if n.type == "return_statement" and n.named_children:
                    passes = passes or not self._not_clash(n, st)
                elif n.type == "call_expression":
                    fn = n.child_by_field_name("function")
                    if fn is not None and text(fn) in PASS_ON:
                        passes = passes or not self._not_clash(n, st)
        if not passes:
            return False
        func = syntax.function_of(handler)
        while func is not None and syntax.function_name(func) is None:
            func = syntax.function_of(func)  # a callback or a promise executor
        return func is not None and self.busy.caller_tests(func)

    @staticmethod
    def _not_clash(node: Any, top: Any) -> bool:
        """``node`` runs only when the error is not the clash (``if (e.code !== "EEXIST")``)."""
        for a in syntax.ancestors(node):
            if a.type == "if_statement":
                cond = text(a.child_by_field_name("condition") or a)
                if "EEXIST" in cond and "!=" in cond and not syntax.within(node, cond_alt(a)):
                    return True
            if a == top:
                break
        return False

    def _rethrows(self, stmts: list[Any], call: Any) -> bool:
        """The ``catch`` ends by throwing (``log; throw err``): error handling, no busy branch."""
        b = self.busy.branch(stmts, call)
        return b is not None and self.tree.text[b.span.start : b.span.end].startswith("throw")

    def _eexist(self, handler: Any) -> bool:
        return handler is not None and "EEXIST" in text(handler)

    # -- exclusive create ------------------------------------------------------------------------
    def _open(self, call: Any, q: str) -> None:
        flags = self.flags(call, q)
        path = self.names.path(arg(call, 0))
        if flags is None or flags == "?":
            if q in ("fs.writeFileSync", "fs.writeFile") and path is not None:
                self.facts.created.append(path)
            return
        stmts, handler = self.guard(call)
        if "x" not in flags:
            if path is not None:
                self.facts.created.append(path)
            if stmts is not None and self._eexist(handler):  # a "w" open whose catch tests EEXIST
                mech = f'{q.split(".")[-1]}(..., "{flags}")'
                self.add_non_exclusive(call, mech, f'"{flags}" opens an existing file', path, stmts)
            return
        acq = Acquire(
            LockKind.EXISTENCE, f'{q.split(".")[-1]}(..., "{flags}")', path, self.tree.span(call)
        )
        if stmts is not None:
            acq.busy = self.busy.branch(stmts, call)
        if not self.decides(acq, handler, stmts):
            return  # an exclusive create of output, not a lock
        self.add(acq, call)

    # -- mkdir -----------------------------------------------------------------------------------
    def _mkdir(self, call: Any, q: str) -> None:
        path = self.names.path(arg(call, 0))
        opts = object_entries(arg(call, 1))
        recursive = q in ("fs.mkdirp", "fs.ensureDir", "fs.ensureDirSync") or (
            "recursive" in opts and text(opts["recursive"]) == "true"
        )
        stmts, handler = self.guard(call)
        as_test = stmts is not None and (
            self._eexist(handler) or (lockish_name(path) and not self._rethrows(stmts, call))
        )
        if recursive:
            if as_test and not self._parent_of_create(call, path):
                mech = f"{q.split('.')[-1]}(..., {{recursive: true}})"
                self.add_non_exclusive(call, mech, "recursive: true", path, stmts)
            elif path is not None:
                self.facts.dirs_made.append(path)
            return
        acq = Acquire(LockKind.EXISTENCE, q.split(".")[-1], path, self.tree.span(call))
        acq.busy = self.busy.branch(stmts, call) if as_test else None
        if not as_test or not self.decides(acq, handler, stmts):
            if path is not None:
                self.facts.created.append(path)
            return
        self.add(acq, call)

    def _parent_of_create(self, call: Any, path: PathExpr | None) -> bool:
        """``mkdirSync(dirname(L), {recursive: true})`` before an exclusive create of ``L`` in
        the same ``try``: it makes the lock's folder; the catch's EEXIST is the create's."""
        try_body = None
        for a in syntax.ancestors(call):
            if a.type in syntax.FUNCTIONS:
                return False
            if a.type == "try_statement":
                try_body = a.child_by_field_name("body")
                break
        if try_body is None:
            return False
        for other in self.tree.calls:
            if other.start_byte <= call.end_byte or not syntax.within(other, try_body):
                continue
            q = self.names.callee(other)
            if (q in OPENS or q in STREAMS) and "x" in (self.flags(other, q) or ""):
                return True
            if q in MKDIRS and "recursive" not in text(arg(other, 1) or other):
                return True
        return False

    # -- libraries -------------------------------------------------------------------------------
    def _library(self, call: Any, q: str) -> None:
        lib, _, method = q.partition(".")
        if method not in ("lock", "lockSync"):
            return
        base = self.names.path(arg(call, 0))
        opts = object_entries(arg(call, 1))
        if lib == "proper-lockfile":
            path = None
            if base is not None:
                path = PathExpr(base.parts + PathExpr.literal(".lock").parts, base.text)
            acq = Acquire(LockKind.EXISTENCE, "proper-lockfile", path, self.tree.span(call))
            acq.age_breaker = self.tree.span(call)  # mtime-based staleness, 10 s by default
        else:
            acq = Acquire(LockKind.EXISTENCE, "lockfile", base, self.tree.span(call))
            if "stale" in opts:
                acq.age_breaker = self.tree.span(opts["stale"].parent or call)
        acq.released = True  # the library removes its own lock at exit
        stmts, _h = self.guard(call)
        if stmts is not None:
            acq.busy = self.busy.branch(stmts, call)
        self.add(acq, call)

    def _descriptor(self, call: Any, q: str) -> None:
        fd = arg(call, 0)
        path, opener = self.opened(fd)
        mode = string_value(arg(call, 1)) or ""
        opts = object_entries(arg(call, 1))
        mech = "fs-ext flock" if q.startswith("fs-ext") else "os-lock"
        acq = Acquire(LockKind.FLOCK, mech, path, self.tree.span(call))
        acq.nonblocking = "nb" in mode or (
            "immediate" in opts and text(opts["immediate"]) == "true"
        )
        if opener is not None:
            acq.open_span = self.tree.span(opener)
            flags = self.flags(opener, self.names.callee(opener)) or ""
            acq.truncating = "w" in flags
        stmts, handler = self.guard(call)
        if stmts is not None:
            acq.busy = self.busy.branch(stmts, call)
            if opener is not None and handler is not None:
                acq.open_failure_is_busy = self._open_in_handler_scope(opener, handler)
                if acq.open_failure_is_busy:
                    acq.open_check_fix = self._open_before_try(opener, handler.parent)
        self.add(acq, call)

    def _open_in_handler_scope(self, opener: Any, handler: Any) -> bool:
        """The open sits in the ``try`` whose ``catch`` is the busy branch, and that catch does
        not tell contention (``EAGAIN``/``EWOULDBLOCK``/``ELOCKED``) from an open error."""
        if handler.type != "catch_clause":
            return False
        body = handler.parent.child_by_field_name("body") if handler.parent else None
        if body is None or not syntax.within(opener, body):
            return False
        src = text(handler)
        if any(code in src for code in CONTENTION_CODES):
            return False
        return re.search(r"\.(?:code|errno)\b", src) is None  # no test of e.code at all

    def _open_before_try(self, opener: Any, tr: Any) -> FixTemplate | None:
        """Moves the statement that opens the lock file to just before the ``try``."""
        st = syntax.statement_of(opener)
        if st.parent is None or st.parent.parent != tr:
            return None
        t, off = self.tree.text, self.tree.offsets
        s, e = off.char(st.start_byte), off.char(st.end_byte)
        ls, le = t.rfind("\n", 0, s) + 1, t.find("\n", e)
        if t[ls:s].strip() or le == -1 or t[e:le].strip():
            return None
        ts = off.char(tr.start_byte)
        tls = t.rfind("\n", 0, ts) + 1
        indent = t[tls:ts]
        if indent.strip():
            return None
        moved = Edit(tls, tls, indent + t[s:e] + "\n")
        return FixTemplate(
            "open the lock file before the try, so that only contention reads as busy",
            (moved, Edit(ls, le + 1, "")),
        )

    def opened(self, fd: Any) -> tuple[PathExpr | None, Any]:
        fd = unwrap(fd)
        if fd is None:
            return None, None
        vals = self.names.values(fd) if fd.type == "identifier" else [fd]
        for v in vals:
            v = unwrap(v)
            if v.type == "call_expression" and self.names.callee(v) in OPENS:
                return self.names.path(arg(v, 0)), v
            if v.type == "member_expression":  # (await fs.promises.open(p)).fd / fh.fd
                inner = unwrap(v.child_by_field_name("object"))
                return self.opened(inner)
        return None, None

    # -- test then create ------------------------------------------------------------------------
    def _check_then_create(self) -> None:
        taken = {n.start_byte for n in self.nodes}
        creates = [c for c in self.tree.calls if self.names.callee(c) in CREATES]
        for test in self.tree.calls:
            if self.names.callee(test) not in TESTS:
                continue
            tpath = self.names.path(arg(test, 0))
            if tpath is None or self._age_read(test):
                continue
            ifn, negated = self._if_of(test)
            func = syntax.function_of(test)
            body = None
            if ifn is not None:
                body = ifn.child_by_field_name("alternative" if negated else "consequence")
            cands = self._creates_after(test, func, creates)
            # a create outside the busy body first (a takeover inside it creates too)
            cands.sort(key=lambda cs: body is not None and syntax.within(cs[1], body))
            for c, site in cands:
                if c.start_byte in taken:
                    continue
                target = arg(c, 0)
                if self.names.callee(c) == "fs.closeSync":  # closeSync(openSync(L, "w"))
                    target = arg(target, 0) if target is not None else None
                cpath = self.names.path(target)
                if cpath is None or cpath.key() != tpath.key():
                    continue
                # a function named like a lock that also removes the name: its path parameter
                # is the lock, whatever it is called (`lock(dirPath)`)
                lockish = lockish_name(cpath) or (self._removed(cpath) and self._in_lock_code(test))
                if not self._removed(cpath) and (not lockish or self._marker(c, test)):
                    continue  # a run-once marker
                acq = Acquire(
                    LockKind.EXISTENCE,
                    "test-then-create",
                    cpath,
                    self.tree.span(c),
                    check_then_create=True,
                    test_span=self.tree.span(test),
                )
                if body is not None and not syntax.within(site, body):
                    acq.busy = self.busy.branch(syntax.block_statements(body), test)
                if not (lockish or (acq.busy is not None and acq.busy.ends_run)):
                    continue  # "create it if missing", not a guard
                self.add(acq, c)
                taken.add(c.start_byte)
                break

    @staticmethod
    def _in_lock_code(node: Any) -> bool:
        """``node`` runs in a function named like a lock (``lock``, ``acquireLock``): its
        test and create are the lock, whatever the path it is handed is called."""
        func = syntax.function_of(node)
        while func is not None:
            name = syntax.function_name(func)
            if name is not None:
                return lockish_text(name)
            func = syntax.function_of(func)
        return False

    def _age_read(self, test: Any) -> bool:
        """``statSync(L).mtimeMs``, or ``const st = statSync(L)`` read only for its times: the
        lock's age is read (a stale-lock breaker's question), not whether it exists."""
        up = test.parent
        while up is not None and up.type in syntax.WRAPPERS:
            up = up.parent
        if up is None:
            return False
        if up.type == "member_expression":
            return TIMES.match("." + text(up.child_by_field_name("property") or up)) is not None
        if up.type != "variable_declarator" or up.child_by_field_name("name") is None:
            return False
        name = text(up.child_by_field_name("name"))
        scope = syntax.function_of(test) or self.tree.root
        uses = [
            i for i in syntax.descendants(scope, "identifier") if text(i) == name and i.parent != up
        ]
        return bool(uses) and all(
            i.parent.type == "member_expression"
            and i.parent.child_by_field_name("object") == i
            and TIMES.match("." + text(i.parent.child_by_field_name("property")))
            for i in uses
        )

    def _creates_after(self, test: Any, func: Any, creates: list[Any]) -> list[tuple[Any, Any]]:
        """(create, where it runs in ``func``) after ``test``: the creates of ``func`` itself,
        and those of the local functions ``func`` calls after the test (``start(pidfile)``
        writing its argument)."""
        out = []
        for c in creates:
            if c.start_byte > test.end_byte and syntax.function_of(c) == func:
                out.append((c, c))
        for site in self.tree.calls:
            if site.start_byte <= test.end_byte or syntax.function_of(site) != func:
                continue
            helper = self.names.local_function(site)
            if helper is None or helper == func:
                continue
            out += [(c, site) for c in creates if syntax.within(c, helper)]
        return out

    def _marker(self, create: Any, test: Any) -> bool:
        """A name created after the work and never removed is a run-once marker (``done``
        records, ``<version>.lock`` files): work runs between the test and the create, nothing
        but returns and logging follows the create in its function, and what it writes is
        not the process id.  A create right after its test is a lock, wherever it is."""
        if "process.pid" in text(create):
            return False
        st_test, st_create = syntax.statement_of(test), syntax.statement_of(create)
        if st_test.parent is None or st_test.parent != st_create.parent:
            return False
        between = [
            st
            for st in syntax.following(st_test)
            if st.start_byte < st_create.start_byte and not _logging(st)
        ]
        if not between:
            return False
        n = st_create
        while n is not None and n.type not in syntax.FUNCTIONS and n.type != "program":
            for st in syntax.following(n):
                if st.type in ("return_statement", "break_statement", "empty_statement"):
                    continue
                if _logging(st):
                    continue
                return False
            n = n.parent
        return True

    def _if_of(self, test: Any) -> tuple[Any, bool]:
        cond, negated = self.busy._condition_of(test)
        return (cond.parent, negated) if cond is not None else (None, False)

    def _removed(self, path: PathExpr) -> bool:
        for c in self.tree.calls:
            if self.names.callee(c) in REMOVALS:
                p = self.names.path(arg(c, 0))
                if p is not None and p.key() == path.key():
                    return True
        return False


def _logging(st: Any) -> bool:
    return st.type == "expression_statement" and text(st).startswith("console.")


def cond_alt(ifn: Any) -> Any:
    """The ``else`` of an ``if`` (or the ``if`` itself when it has none: nothing is in it)."""
    return ifn.child_by_field_name("alternative") or ifn.child_by_field_name("condition")
