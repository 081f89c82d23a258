"""Stage 4: removals (``Remove-Item``, ``[IO.File]::Delete``, ``[IO.Directory]::Delete``) and what runs them (``finally``;
a ``trap``, which runs for terminating errors only, never on ``exit``; a function called from
either), stored-PID checks (``Get-Process -Id``) and kills (``Stop-Process -Id``) on a PID
read from a file, stale-lock breakers after them or after an age test (``LastWriteTime``,
``New-TimeSpan``), release coverage."""

from __future__ import annotations

import re

from ...hints import Any
from ...model import Edit, FileFacts, FixTemplate, Kill, LivenessCheck, ReleaseHook, Removal
from ...paths import lockish_name, same_path
from . import syntax
from .locks import Locks
from .syntax import Tree, invocation_parts, text
from .values import Values

_AGE = re.compile(r"\.(?:lastwritetime|creationtime|lastaccesstime)(?:utc)?\b|new-timespan", re.I)
REMOVES = {"remove-item", "del", "rm", "ri", "erase", "rmdir", "rd"}
OVERWRITES = {"set-content", "out-file", "sc", "new-item"}
WRITES = {"set-content", "sc", "out-file", "add-content", "ac"}


class Cleanup:
    def __init__(self, tree: Tree, values: Values, locks: Locks, facts: FileFacts) -> None:
        self.tree, self.values, self.locks, self.facts = tree, values, locks, facts

    def run(self) -> None:
        for cmd in self.tree.commands:
            if syntax.command_name(cmd) in REMOVES:
                c = self.values.command(cmd)
                self._removal(cmd, self.values.path(c.get("path", "literalpath", position=0)))
        for inv in self.tree.invocations:
            target, member, args = invocation_parts(inv)
            if target in ("io.file", "io.directory") and member == "delete" and args:
                self._removal(inv, self.values.path(args[0]))
        self._own_files()
        self._pids()
        self._coverage()

    def _own_files(self) -> None:
        """What the script writes itself, and names with a per-process part (``$PID``), are
        its own: removing them is no foreign removal."""
        for cmd in self.tree.commands:
            if syntax.command_name(cmd) in WRITES:
                c = self.values.command(cmd)
                p = self.values.path(c.get("path", "literalpath", "filepath", position=0))
                if p is not None:
                    self.facts.created.append(p)
        for r in self.facts.removals:
            if r.path is not None and r.path.has_unique:
                self.facts.created.append(r.path)

    def _context(self, node: Any, depth: int = 0) -> tuple[str, Any]:
        for a in syntax.ancestors(node):
            if a.type == "finally_clause":
                return "finally", a.parent
            if a.type == "trap_statement":
                return "trap", a
            if a.type in syntax.FUNCTIONS:
                if depth < 3:
                    for cmd in syntax.calls(self.tree, a):
                        ctx = self._context(cmd, depth + 1)
                        if ctx[0] != "direct":
                            return ctx
                break
        return "direct", None

    def _removal(self, node: Any, path: Any) -> None:
        via, hook = self._context(node)
        r = Removal(path, self.tree.span(node), via=via)
        r.conditional = any(
            (a.type in ("if_statement", "catch_clause") or a.type in syntax.FUNCTIONS)
            and "test-path" not in text(a).lower()[:200]
            for a in syntax.ancestors(node)
        )
        r.drop_fix = self._drop_fix(node)
        if via == "direct" and self._age_guarded(node) and self._lock_path(path):
            r.stale_guard = "age"
        if hook is not None:
            r.hook_span = self.tree.span(hook.children[0])
            self._hook(path, via, hook)
        self.facts.removals.append(r)

    def _age_guarded(self, node: Any) -> bool:
        """An age test decides whether ``node`` runs: a file time (``LastWriteTime``,
        ``CreationTime``...) or ``New-TimeSpan`` in an enclosing ``if`` condition or in a
        statement before it in an enclosing block."""
        child = node
        for a in syntax.ancestors(node):
            if a.type in syntax.SCOPES:
                return False
            if a.type in ("if_statement", "elseif_clause"):
                cond = next((c for c in a.named_children if c.type == "pipeline"), None)
                if cond is not None and _AGE.search(text(cond)):
                    return True
            if a.type == "statement_list":
                for st in a.named_children:
                    if st.start_byte >= child.start_byte:
                        break
                    if _AGE.search(text(st)):
                        return True
            child = a
        return False

    def _lock_path(self, path: Any) -> bool:
        if path is None:
            return False
        return lockish_name(path) or any(same_path(a.path, path) for a in self.facts.acquires)

    def _drop_fix(self, node: Any) -> FixTemplate | None:
        st = node
        while st.parent is not None and (
            st.parent.type in ("pipeline_chain", "pipeline")
            or (st.parent.type in syntax.WRAPPERS and len(st.parent.named_children) == 1)
        ):  # a command, or a .NET call (`[IO.File]::Delete(p)`) as the whole statement
            st = st.parent
        if st.parent is None or st.parent.type != "statement_list" or "|" in text(st):
            return None
        t = self.tree.text
        s, e = self.tree.char(st.start_byte), self.tree.char(st.end_byte)
        ls = t.rfind("\n", 0, s) + 1
        le = t.find("\n", e)
        if t[ls:s].strip() == "" and le != -1 and t[e:le].strip() == "":
            s, e = ls, le + 1
        return FixTemplate("drop the removal of the locked file", (Edit(s, e, ""),))

    def _hook(self, path: Any, via: str, hook: Any) -> None:
        span = self.tree.span(hook.children[0])
        if any(h.span == span and same_path(h.path, path) for h in self.facts.hooks):
            return
        active = []
        if via == "finally":  # a trap never runs on exit: never active in a busy branch
            body = syntax.block_of(hook)
            for i, acq in enumerate(self.facts.acquires):
                b = acq.busy
                if b is None or not b.ends_run or not same_path(path, acq.path) or body is None:
                    continue
                s, e = self.tree.char(body.start_byte), self.tree.char(body.end_byte)
                if s <= b.span.start and b.span.end <= e:
                    active.append(i)
        self.facts.hooks.append(ReleaseHook(path, span, via, tuple(active)))

    # -- PIDs ------------------------------------------------------------------------------------
    def _pids(self) -> None:
        for cmd in self.tree.commands:
            name = syntax.command_name(cmd)
            if name not in ("get-process", "stop-process", "gps", "ps", "kill", "spps"):
                continue
            c = self.values.command(cmd)
            pid = c.get("id", position=0)
            pid_file = self.values.read_file(pid) if pid is not None else None
            if pid_file is None:
                continue
            if name in ("get-process", "gps", "ps"):
                self.facts.liveness.append(
                    LivenessCheck(self.tree.span(cmd), pid_file, self._consequential(cmd))
                )
                self._stale(cmd, pid_file)
            else:
                self.facts.kills.append(Kill(self.tree.span(cmd), "Stop-Process", pid_file))

    def _consequential(self, cmd: Any) -> bool:
        ifn, _neg = self.locks.condition_of(cmd)
        if ifn is not None:
            return True
        var = self.locks._assigned_var(cmd)
        if var:
            for n in self.tree.nodes:
                if (
                    n.type == "variable"
                    and syntax.var_name(n) == var
                    and n.start_byte > cmd.end_byte
                ):
                    if self.locks.condition_of(n)[0] is not None:
                        return True
        return False

    def _stale(self, check: Any, pid_file: Any) -> None:
        """Removals and overwrites of the PID file after the check, in the block that holds
        it (the branch taken when the holder was judged dead), outside any ``finally``."""
        block = next(
            (a for a in syntax.ancestors(check) if a.type in ("statement_block", "program")), None
        )
        if block is None:
            return
        for cmd in syntax.descendants(block, "command"):
            name = syntax.command_name(cmd)
            if cmd.start_byte <= check.end_byte:
                continue
            if name not in REMOVES and name not in OVERWRITES:
                continue
            if any(
                a.type == "finally_clause" for a in syntax.ancestors(cmd) if syntax.within(a, block)
            ):
                continue
            c = self.values.command(cmd)
            p = self.values.path(c.get("path", "literalpath", "filepath", position=0))
            if p is None or p.key() != pid_file.key():
                continue
            self.facts.removals.append(
                Removal(
                    p, self.tree.span(cmd), stale_guard="dead-holder", overwrite=name in OVERWRITES
                )
            )

    def _coverage(self) -> None:
        breakers = {r.span for r in self.facts.removals if r.stale_guard}  # no releases
        for acq in self.facts.acquires:
            mine = [
                r
                for r in self.facts.removals
                if not r.stale_guard and r.span not in breakers and same_path(r.path, acq.path)
            ]
            if mine:
                acq.released = True
                acq.release_on_every_exit = any(r.via == "finally" for r in mine)
                if not acq.release_on_every_exit and self._handed_out(acq, mine):
                    acq.release_on_every_exit = True  # the caller, not in this file, releases

    def _handed_out(self, acq: Any, removals: list[Removal]) -> bool:
        """A library pair: the lock is taken in a function that nothing in this file calls
        and released in another function: its caller, elsewhere, is the one to judge."""
        if acq.function is None or self._called(acq.function):
            return False
        for r in removals:
            func = self._function_at(r.span.start)
            if func is None or syntax.function_name(func) == acq.function:
                return False
        return True

    def _called(self, name: str) -> bool:
        return any(syntax.command_name(c) == name for c in self.tree.commands)

    def _function_at(self, offset: int) -> Any:
        func = None
        for f in self.values.functions.values():
            s, e = self.tree.char(f.start_byte), self.tree.char(f.end_byte)
            if s <= offset < e and (func is None or f.start_byte > func.start_byte):
                func = f
        return func
