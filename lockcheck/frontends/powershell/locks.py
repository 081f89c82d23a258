"""Stage 3: the locks a PowerShell script takes and its busy branches.  ``New-Item`` (with
``-Force``/``-ErrorAction`` and ``$ErrorActionPreference``), ``[IO.File]::Open`` with
``CreateNew`` or ``FileShare.None``, ``[Threading.Mutex]`` with ``WaitOne``, ``Test-Path``
then create; ``exit`` (bare: 0), ``exit N``, ``return`` (script level: 0; in a function: its
caller decides), ``throw``."""

from __future__ import annotations

import re

from ...hints import Any
from ...model import (
    Acquire,
    BusyBranch,
    Edit,
    FileFacts,
    FixTemplate,
    LockKind,
    NonExclusiveCreate,
    Part,
    PartKind,
    PathExpr,
)
from ...paths import lockish_name
from . import retry, syntax
from .syntax import Tree, invocation_parts, text, unwrap
from .testcreate import TestThenCreate
from .values import Values

DURABLE = {"add-content", "write-eventlog", "start-transcript", "ac"}
QUIET = {"write-host", "write-output", "write-verbose", "write-warning", "write-information"}
QUIET |= {"write-debug", "echo", "stop-transcript", "out-null", "out-host", "get-date"}
APPEND_DURABLE = {"out-file", "tee-object"}
_NONFAILING_EA = {"silentlycontinue", "ignore", "continue", "0", "4"}
_FAILURE = re.compile(r"could not|cannot|can't|unable to|failed|abort", re.I)
LINKS = {"hardlink": "HardLink", "symboliclink": "SymbolicLink", "junction": "Junction"}
ITEM_KINDS = {"file": "File", "directory": "Directory", **LINKS}


class Locks(TestThenCreate):
    def __init__(self, tree: Tree, values: Values, facts: FileFacts) -> None:
        self.tree, self.values, self.facts = tree, values, facts
        self.nodes: list[Any] = []

    def run(self) -> None:
        for cmd in self.tree.commands:
            name = syntax.command_name(cmd)
            if name in ("new-item", "ni"):
                self._new_item(cmd)
            elif name == "new-object":
                self._new_object(cmd)
        for inv in self.tree.invocations:
            target, member, args = invocation_parts(inv)
            if target in ("io.file", "io.filestream") and member in ("open", "new"):
                self._file_open(inv, args)
            elif target == "threading.mutex" and member == "new":
                self._mutex(inv, args)
        self._test_then_create()

    def add(self, acq: Acquire, node: Any) -> None:
        acq.function = syntax.function_name(syntax.scope_of(node))
        self.facts.acquires.append(acq)
        self.nodes.append(node)

    # -- guards ----------------------------------------------------------------------------------
    def catch_of(self, node: Any) -> tuple[Any, Any]:
        """(the try statement, its first catch clause) whose body holds ``node``."""
        for a in syntax.ancestors(node):
            if a.type in syntax.FUNCTIONS:
                break
            if a.type == "try_statement":
                body = syntax.block_of(a)
                if body is not None and syntax.within(node, body):
                    for c in syntax.descendants(a, "catch_clause"):
                        if c.parent is not None and c.parent.parent == a:
                            return a, c
                    return a, None
        return None, None

    def condition_of(self, node: Any) -> tuple[Any, bool]:
        """(the if statement, negated) when ``node`` is (inside) an if condition."""
        negated = False
        n = node
        for a in syntax.ancestors(node):
            if a.type == "expression_with_unary_operator" and text(a).lower().startswith(
                ("-not", "!")
            ):
                negated = not negated
            if a.type in ("if_statement", "elseif_clause"):
                cond = a.child_by_field_name("condition")
                if cond is None:
                    parts = [c for c in a.named_children if c.type == "pipeline"]
                    cond = parts[0] if parts else None
                if cond is not None and syntax.within(n, cond):
                    return a, negated
                return None, False
            if a.type in ("statement_list", "statement_block") or a.type in syntax.FUNCTIONS:
                return None, False
        return None, False

    def if_branch(self, ifn: Any, taken: bool) -> list[Any] | None:
        """The statements run when the condition is ``taken`` (True) or not (the else)."""
        if taken:
            return syntax.statements(syntax.block_of(ifn))
        for c in ifn.named_children:
            if c.type == "else_clause":
                return syntax.statements(syntax.block_of(c))
        return None

    # -- busy branches ---------------------------------------------------------------------------
    def busy(self, stmts: list[Any], anchor: Any, depth: int = 0) -> BusyBranch | None:
        if depth > 4:
            return None
        for st in stmts:
            for n in syntax.descendants(st, "flow_control_statement"):
                if any(
                    a.type in syntax.FUNCTIONS for a in syntax.ancestors(n) if syntax.within(a, st)
                ):
                    continue
                word = text(n.children[0]).lower()
                if word in ("exit", "return", "throw"):
                    return self._ending(stmts, n, word, anchor, depth)
        if stmts:
            durable = self.durable(stmts, stmts[-1])
            return self._falls_through(stmts[-1], self.tree.span(stmts[0]), durable, depth)
        return self._falls_through(anchor, self.tree.span(anchor), False, depth)

    def _falls_through(self, last: Any, span: Any, durable: bool, depth: int) -> BusyBranch:
        """The busy branch ends without ``exit``/``return``/``throw``: what runs next decides.
        Past output and logging only: the end of the script ends the run (status 0), an
        ``exit``/``return`` there ends it as usual, the end of a function returns to its
        caller; other work, or a loop that goes round again, is not the end of the run."""
        node = last
        while True:
            st = node
            while st.parent is not None and st.parent.type != "statement_list":
                st = st.parent
                if st.type in retry.LOOPS or st.type == "script_block_expression":
                    return BusyBranch(span, False, None, durable)
                if st.type in syntax.FUNCTIONS:  # the function returns to its caller
                    return self._propagate(st, span, durable, depth + 1)
            lst = st.parent
            if lst is None:
                return BusyBranch(span, False, None, durable)
            rest = [
                r
                for r in lst.named_children
                if r.start_byte >= st.end_byte
                and r.type not in ("comment", "empty_statement", "function_statement")
                and r.type not in ("class_statement", "enum_statement", "trap_statement")
            ]
            for i, r in enumerate(rest):
                if r.type == "flow_control_statement":
                    word = text(r.children[0]).lower()
                    if word in ("exit", "return", "throw"):
                        b = self._ending(rest[: i + 1], r, word, r, depth + 1)
                        if b is not None:
                            b.durable = b.durable or durable
                        return b or BusyBranch(span, False, None, durable)
                if not self._quiet(r):
                    return BusyBranch(span, False, None, durable)
                durable = durable or self._records(r)
            if lst.parent is None or lst.parent.type == "program":
                return BusyBranch(span, True, 0, durable)  # falls off the end of the script
            node = lst.parent

    def _quiet(self, st: Any) -> bool:
        """A statement that only reports: output, logging, a transcript's end."""
        cmds = list(syntax.descendants(st, "command"))
        if not cmds or any(n.type == "assignment_expression" for n in syntax.descendants(st)):
            return False
        return all(
            syntax.command_name(c) in QUIET
            or syntax.command_name(c) in DURABLE
            or syntax.command_name(c) in APPEND_DURABLE
            or (syntax.command_name(c) in self.values.functions and self._logs_only(c))
            for c in cmds
        )

    def _logs_only(self, cmd: Any) -> bool:
        func = self.values.functions.get(syntax.command_name(cmd))
        return func is not None and not syntax.within(cmd, func) and self._records(func, 2)

    def _ending(
        self, stmts: list[Any], n: Any, word: str, anchor: Any, depth: int
    ) -> BusyBranch | None:
        durable = self.durable(stmts, n)
        span = self.tree.span(n)
        value = [c for c in n.named_children if c.type != "comment"]
        if word == "throw":
            return BusyBranch(span, True, 1, durable)
        func = syntax.scope_of(n)
        if word == "return" and func is not None:
            return self._propagate(func, span, durable, depth)
        if not value:
            pos = self.tree.char(n.end_byte)
            content = " {code}" if word == "exit" else None
            fix = None
            if content is not None:
                fix = FixTemplate("exit with the skip code", (Edit(pos, pos, content),))
            else:  # a script-level return: exit with the code instead
                s = self.tree.char(n.start_byte)
                fix = FixTemplate("exit with the skip code", (Edit(s, pos, "exit {code}"),))
            return BusyBranch(span, True, 0, durable, status_fix=fix)
        v = unwrap(value[0])
        t = text(v)
        status = int(t) if t.isdigit() else None
        fix = FixTemplate(
            "exit with the skip code",
            (Edit(self.tree.char(v.start_byte), self.tree.char(v.end_byte), "{code}"),),
        )
        return BusyBranch(span, True, status, durable, status_fix=fix if word == "exit" else None)

    def _propagate(self, func: Any, span: Any, durable: bool, depth: int) -> BusyBranch | None:
        for cmd in syntax.calls(self.tree, func):
            ifn, negated = self.condition_of(cmd)
            b = None
            if ifn is not None:
                body = self.if_branch(ifn, negated)
                b = self.busy(body, cmd, depth + 1) if body is not None else None
            elif self._assigned_var(cmd):  # $ok = Get-JobLock ...; if (-not $ok) { ... }
                b = self._busy_of_var(self._assigned_var(cmd), cmd, depth + 1)
            elif depth < 4:  # a plain call: the run goes on after it
                b = self._falls_through(cmd, span, durable, depth + 1)
                if not b.ends_run:
                    b = None
            if b is not None:
                b.durable = b.durable or durable
                return b
        return BusyBranch(span, False, None, durable)

    def durable(self, stmts: list[Any], end: Any) -> bool:
        if any(syntax.command_name(c) == "start-transcript" for c in self.tree.commands):
            return True
        return any(self._records(st) for st in stmts if st.start_byte <= end.start_byte)

    def _records(self, node: Any, depth: int = 0) -> bool:
        """``node`` appends to a file (``Add-Content``, ``Out-File -Append``, ``>>``,
        ``Write-EventLog``), itself or through a function of this file it calls (a ``Log``
        or ``Write-Log`` helper that does)."""
        for c in syntax.descendants(node, "command", "file_redirection_operator"):
            if c.type == "file_redirection_operator":
                if text(c).startswith(">>") or text(c).endswith(">>"):
                    return True
                continue
            name = syntax.command_name(c)
            if name in DURABLE:
                return True
            if name in APPEND_DURABLE and self.values.command(c).has("append"):
                return True
            func = self.values.functions.get(name)
            if func is not None and depth < 3 and not syntax.within(c, func):
                if self._records(func, depth + 1):
                    return True
        return False

    def _busy_of_try(self, node: Any) -> BusyBranch | None:
        _tr, catch = self.catch_of(node)
        if catch is None:
            return None
        return self.busy(syntax.statements(syntax.block_of(catch)), node)

    # -- New-Item ----------------------------------------------------------------------------------
    def _new_item(self, cmd: Any) -> None:
        c = self.values.command(cmd)
        path = self.values.path(c.get("path", "literalpath", position=0))
        name = c.get("name")
        if name is not None:  # -Name alone is relative to the working directory
            path = self.values.path(name) if path is None else _join(path, self.values.path(name))
        kind = (self.values.literal(c.get("itemtype", "type")) or "File").lower()
        if kind not in ITEM_KINDS:
            return
        ea = (self.values.literal(c.get("erroraction", "ea")) or "").lower()
        stop = ea == "stop" or (not ea and self._preference_stop(cmd))
        force = c.has("force")
        mech = "New-Item" + (f" -ItemType {ITEM_KINDS[kind]}" if kind in LINKS else "")
        mech += " -Force" if force else ""
        acq = Acquire(LockKind.EXISTENCE, mech, path, self.tree.span(cmd))
        guard = self._handler_guard(cmd, acq)
        if guard is not None:
            decider, retrying = guard
            never = force or ea in _NONFAILING_EA or not stop
        else:  # if (New-Item ...): $null on failure, whatever -ErrorAction says
            decider, retrying = self._condition_guard(cmd, acq)
            never = force
        if retrying and not self.held(path):
            decider = None  # retried on any error, never released: making sure it exists
        if guard is not None and not retrying and self._ensures(cmd, path, decider):
            decider = None
        if decider is None or (not retrying and not self.decides(acq, decider)) or _own(path):
            if path is not None:
                (self.facts.dirs_made if kind == "directory" else self.facts.created).append(path)
            return
        if not never:
            self.add(acq, cmd)
            return
        why = "-Force" if force else f"-ErrorAction {ea}" if ea else "no -ErrorAction Stop"
        nx = NonExclusiveCreate(path, acq.span, mech, why, busy=acq.busy)
        nx.exclusive_fix = self._new_item_fix(cmd, c)
        nx.function = syntax.function_name(syntax.scope_of(cmd))
        self.facts.non_exclusive.append(nx)
        if path is not None:
            self.facts.created.append(path)  # its own name: removing it is no LCK107

    def _handler_guard(self, node: Any, acq: Acquire) -> tuple[Any, bool] | None:
        """(the catch or trap, retries) when one handles ``node``'s failure by ending the run
        or by trying again in a loop; sets the busy branch (None for a retry loop)."""
        tr, catch = self.catch_of(node)
        handler = catch if catch is not None else retry.trap_of(node)
        if handler is None:
            return None
        if catch is not None:
            success = syntax.block_of(tr)
        else:
            success = next(a for a in syntax.ancestors(node) if a.type == "statement_list")
        retrying = retry.retry_loop(node, handler, success)
        if not self._ends(handler):
            if not retrying:
                return None
            acq.busy = self._timeout(node, success)
            return handler, True
        acq.busy = self.busy(syntax.statements(syntax.block_of(handler)), node)
        return handler, retrying

    def _condition_guard(self, cmd: Any, acq: Acquire) -> tuple[Any, bool]:
        """(the ``if``, retries) when the item ``cmd`` returns (``$null`` when it failed) is
        tested, directly or through the variable it is assigned to; else (None, False)."""
        at = cmd
        ifn, negated = self.condition_of(cmd)
        if ifn is None:
            var = self._assigned_var(cmd)
            for v in self.tree.nodes if var else ():
                if v.type == "variable" and v.start_byte > cmd.end_byte:
                    if syntax.var_name(v) == var:
                        ifn, negated = self.condition_of(v)
                        at = v
                        break
        if ifn is None:
            return None, False
        on_failure = negated != retry.null_tested(at, ifn)  # the then-branch runs on failure
        stmts = self.if_branch(ifn, on_failure)
        loop = retry.loop_of(cmd)
        if stmts:
            acq.busy = self.busy(stmts, at)
            success = loop.child_by_field_name("body") if loop is not None else None
            success = success or (syntax.block_of(loop) if loop is not None else None)
            if not acq.busy.ends_run and loop is not None:
                handler = syntax.block_of(ifn) if on_failure else ifn
                if retry.retry_loop(cmd, handler, success):
                    acq.busy = None
                    return ifn, True
            return ifn, False
        then = syntax.block_of(ifn)
        if not on_failure and retry.retry_loop(cmd, None, then):
            acq.busy = self._timeout(cmd, then)
            return ifn, True
        # if (New-Item L) { work }: the creation is the condition of the work
        acq.busy = BusyBranch(self.tree.span(ifn), False, None)
        if lockish_name(acq.path):
            return ifn, True
        return None, False

    def _timeout(self, create: Any, success: Any) -> BusyBranch | None:
        """The busy branch of a retry loop: the path taken when the loop runs out (a deadline,
        a count) without the create succeeding; None for a loop that only success ends."""
        loop = retry.loop_of(create)
        if loop is None or retry.endless(loop):
            return None
        leaves, flags = retry.success_leaves(success, create)
        rest = retry.after(loop)
        if leaves:  # only a failed wait gets past the loop
            if rest:
                return self.busy(rest, loop)
            func = syntax.scope_of(loop)
            if func is not None:  # falls off the end of the function: $null to the caller
                return self._propagate(func, self.tree.span(loop), False, 0)
            return BusyBranch(self.tree.span(create), True, 0)
        for st in rest:
            for v in syntax.descendants(st, "variable"):
                if syntax.var_name(v) not in flags:
                    continue
                ifn, negated = self.condition_of(v)
                if ifn is not None:
                    stmts = self.if_branch(ifn, negated)
                    return self.busy(stmts, v) if stmts else None
        return None

    def held(self, path: PathExpr | None) -> bool:
        """A retried create is a lock when it is named like one or removed again (released):
        a folder made with retries on a share and kept is making sure it exists."""
        return path is not None and (lockish_name(path) or self._removed(path))

    def skips(self, b: BusyBranch | None) -> bool:
        """The branch ends the run without raising (``throw`` is error handling)."""
        if b is None or not b.ends_run:
            return False
        return not self.tree.text[b.span.start : b.span.end].lower().startswith("throw")

    def decides(self, acq: Acquire, catch: Any) -> bool:
        """A creation is a lock when its name says so, when its catch tells "exists" apart,
        or when the catch skips (exit 0 or 75, bare exit, return); a catch that reports an error
        and exits non-zero is error handling (``New-Item`` of an output folder)."""
        if lockish_name(acq.path):
            return True
        b = acq.busy
        if not self.skips(b):
            return False
        src = text(catch).lower() if catch is not None else ""
        return b.status in (0, 75) or any(
            w in src for w in ("exist", "ioexception", "busy", "running")
        )

    def _ensures(self, cmd: Any, path: PathExpr | None, handler: Any) -> bool:
        """``if (-not (Test-Path P)) { try { New-Item P } catch { "could not create P";
        exit } }``: made because it is missing, and a failure is an error, not "busy".  A
        script's ``trap`` handles every error of the script: made if missing under it, the
        item is no lock whatever the trap says."""
        src = text(handler).lower() if handler is not None else ""
        if path is None:
            return False
        if handler is None or handler.type != "trap_statement":
            if _FAILURE.search(src) is None or any(w in src for w in ("exist", "busy", "running")):
                return False
        for test in self.tree.commands:
            if syntax.command_name(test) != "test-path" or test.start_byte > cmd.start_byte:
                continue
            ifn, negated = self.condition_of(test)
            if ifn is None or not negated or not syntax.within(cmd, syntax.block_of(ifn)):
                continue
            t = self.values.path(self.values.command(test).get("path", "literalpath", position=0))
            if t is not None and t.key() == path.key():
                return True
        return False

    def _ends(self, catch: Any) -> bool:
        return any(
            text(n.children[0]).lower() in ("exit", "return", "throw")
            for n in syntax.descendants(catch, "flow_control_statement")
        )

    def _preference_stop(self, cmd: Any) -> bool:
        """``$ErrorActionPreference = 'Stop'`` (or ``$PSDefaultParameterValues`` for
        New-Item) assigned before the call, in its function or the script."""
        for name in ("erroractionpreference", "psdefaultparametervalues"):
            for value, _scope in self.values.bindings.get(name, []):
                if value.start_byte > cmd.start_byte:
                    continue
                src = text(value).lower()
                if name == "erroractionpreference" and "stop" in src:
                    return True
                if name == "psdefaultparametervalues" and re.search(
                    r"new-item:erroraction'?\"?\s*=\s*'?\"?stop", src
                ):
                    return True
        return False

    def _new_item_fix(self, cmd: Any, c: Any) -> FixTemplate | None:
        edits = []
        force = c.param_nodes.get("force")
        if force is not None:
            s, e = self.tree.char(force.start_byte), self.tree.char(force.end_byte)
            while s > 0 and self.tree.text[s - 1] in " \t":
                s -= 1
            edits.append(Edit(s, e, ""))
        ea_node = c.param_nodes.get("erroraction") or c.param_nodes.get("ea")
        if ea_node is not None:
            value = c.params.get("erroraction", c.params.get("ea"))
            if value is not None and value is not True and not isinstance(value, str):
                edits.append(
                    Edit(self.tree.char(value.start_byte), self.tree.char(value.end_byte), "Stop")
                )
        else:
            end = cmd.child_by_field_name("command_elements") or cmd
            pos = self.tree.char(end.end_byte)
            while pos > 0 and self.tree.text[pos - 1] in " \t":
                pos -= 1
            edits.append(Edit(pos, pos, " -ErrorAction Stop"))
        return FixTemplate(
            "make New-Item fail when the lock exists", tuple(sorted(edits, key=lambda e: e.start))
        )

    # -- .NET files and mutexes ------------------------------------------------------------------------
    def _file_open(self, inv: Any, args: list[Any]) -> None:
        if len(args) < 2:
            return
        mode = (syntax.string_value(args[1]) or text(args[1])).lower()
        share = (syntax.string_value(args[3]) or text(args[3])).lower() if len(args) > 3 else ""
        path = self.values.path(args[0])
        if "createnew" in mode:
            acq = Acquire(
                LockKind.EXISTENCE, "[IO.File]::Open(..., CreateNew)", path, self.tree.span(inv)
            )
        elif share.endswith("none"):
            acq = Acquire(LockKind.FLOCK, "FileShare.None handle", path, self.tree.span(inv))
            acq.nonblocking = True
            acq.truncating = "truncate" in mode or mode.endswith("create")
        else:
            return
        guard = self._handler_guard(inv, acq)
        if guard is None:
            acq.busy = self._busy_of_try(inv)
        handler, retrying = guard or (self.catch_of(inv)[1], False)
        if retrying and not self.held(path):
            retrying, handler = False, None
        if acq.kind is LockKind.EXISTENCE and not (retrying or self.decides(acq, handler)):
            return
        if acq.kind is LockKind.EXISTENCE and _own(path):
            return
        if acq.kind is LockKind.FLOCK and self.skips(acq.busy):  # a rethrow is no busy branch
            acq.open_failure_is_busy = not self._tells_sharing_apart(self.catch_of(inv)[0])
            acq.open_span = acq.span
        self.add(acq, inv)

    def _tells_sharing_apart(self, tr: Any) -> bool:
        """A catch of the ``try`` tests ``HResult`` for a sharing or lock violation (32, 33:
        0x80070020/21), so that a missing directory or a refused open is not read as busy."""
        src = text(tr).lower() if tr is not None else ""
        if "hresult" not in src:
            return False
        return (
            re.search(r"\b(?:32|33|0x80070020|0x80070021|-2147024864|-2147024863)\b", src)
            is not None
        )

    def _new_object(self, cmd: Any) -> None:
        c = self.values.command(cmd)
        tname = (
            (self.values.literal(c.get("typename", position=0)) or "")
            .lower()
            .removeprefix("system.")
        )
        args_node = c.get("argumentlist")
        args: list[Any] = []
        if args_node is not None and args_node is not True and not isinstance(args_node, str):
            u = unwrap(args_node)
            args = list(u.named_children) if u.type == "array_literal_expression" else [u]
        elements = cmd.child_by_field_name("command_elements")
        for x in elements.named_children if elements is not None else []:
            if x.type == "argument_list":
                lst = [y for y in x.named_children if y.type == "argument_expression_list"]
                args = list(lst[0].named_children) if lst else []
        if tname in ("threading.mutex",):
            self._mutex(cmd, args)
        elif tname in ("io.filestream",):
            self._file_open(cmd, args)

    def _mutex(self, node: Any, args: list[Any]) -> None:
        if len(args) < 2:
            return  # an unnamed mutex: this process only
        name = self.values.literal(args[1], node)
        acq = Acquire(LockKind.FLOCK, "named mutex", None, self.tree.span(node), mutex_name=name)
        acq.nonblocking = True
        var = self._assigned_var(node)
        created = syntax.var_name(args[2]) if len(args) > 2 else None
        for inv in self.tree.invocations:
            target, member, _a = invocation_parts(inv)
            if member == "waitone" and var and target.lstrip("$") == var:
                ifn, negated = self.condition_of(inv)
                if ifn is not None:
                    stmts = self.if_branch(ifn, negated)
                    if stmts is not None:
                        acq.busy = self.busy(stmts, inv)
                else:  # $owned = $m.WaitOne(0); if (-not $owned) { ... }
                    acq.busy = self._busy_of_var(self._assigned_var(inv), inv)
                break
        if acq.busy is None and created:
            acq.busy = self._busy_of_var(created, node)
        _tr, catch = self.catch_of(node)
        if catch is not None and not re.search(r"abandonedmutexexception", text(catch).lower()):
            # the construction throws when the name cannot be opened (another user's ACL):
            # a catch that skips like the busy branch reads that as busy
            b = self.busy(syntax.statements(syntax.block_of(catch)), node)
            if self.skips(b) and (
                b.status == 0
                or (acq.busy is not None and b.status is not None and b.status == acq.busy.status)
                or any(w in text(catch).lower() for w in ("busy", "running", "in progress"))
            ):
                acq.open_failure_is_busy = True
                acq.open_span = acq.span
        self.add(acq, node)

    def _busy_of_var(self, var: str | None, after: Any, depth: int = 0) -> BusyBranch | None:
        """The busy branch of the first ``if`` after ``after`` that tests ``var``."""
        if not var:
            return None
        for v in self.tree.nodes:
            if v.type == "variable" and syntax.var_name(v) == var and v.start_byte > after.end_byte:
                ifn, negated = self.condition_of(v)
                if ifn is not None:
                    stmts = self.if_branch(ifn, negated)
                    return self.busy(stmts, v, depth) if stmts is not None else None
        return None

    def _assigned_var(self, node: Any) -> str | None:
        for a in syntax.ancestors(node):
            if a.type == "assignment_expression":
                return syntax.var_name(a.named_children[0])
            if a.type in ("statement_list", "statement_block"):
                return None
        return None


def _own(path: PathExpr | None) -> bool:
    """A per-process name (``LOCK.$PID``): no other run can hold it."""
    return path is not None and path.has_unique


def _join(base: Any, name: Any) -> Any:
    if name is None:
        return base
    return PathExpr(base.parts + (Part(PartKind.LIT, "/"),) + name.parts, base.text)
