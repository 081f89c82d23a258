"""Stage 3, test then create: ``Test-Path L`` deciding whether ``New-Item``/``Set-Content``/
``Out-File``/``Add-Content`` of the same ``L`` runs (or a ``Move-Item``/``Copy-Item`` of a file
written aside onto ``L``).  The test is an ``if`` condition, or the
condition of a loop that waits while ``L`` exists (``while (Test-Path L) { sleep }``,
``do { sleep } until (-not (Test-Path L))``) before the create.  The same variable is the
same path even when its value is unknown (a ``param()`` without default).  One lock per
create: a second test of a name already taken, and the rewrite of a created lock
(``Set-Content L $PID`` after ``New-Item L``), add none."""

from __future__ import annotations

from ...hints import Any
from ...model import Acquire, LockKind
from ...paths import is_dependency_lockfile, lockish_name
from . import retry, syntax
from .syntax import invocation_parts, text

CREATES = {"new-item", "set-content", "out-file", "add-content", "ni", "sc"}
# a file written aside and moved (or copied) onto the name: the name is created by the move
MOVES = {"move-item", "mi", "move", "copy-item", "cpi", "copy"}
TESTS = {"test-path"}
REMOVES = ("remove-item", "del", "rm", "ri", "erase")


class TestThenCreate:
    """Mixin of :class:`~.locks.Locks` (its ``values``, ``tree``, busy-branch helpers)."""

    def _test_then_create(self) -> None:
        taken = {n.start_byte for n in self.nodes}
        made: list[tuple[Any, str]] = []  # (create, path key) of each test-then-create
        for test in self.tree.commands:
            if syntax.command_name(test) not in TESTS:
                continue
            tpath = self.values.path(
                self.values.command(test).get("path", "literalpath", position=0)
            )
            if tpath is None:
                continue
            ifn, negated = self.condition_of(test)
            loop = None if ifn is not None else _wait_loop(test)
            if loop is not None and _renames(loop, test):
                continue  # `while (Test-Path $p) { $p = <next name> }`: a free name sought
            if (ifn is None and loop is None) or self._held_before(test):
                continue
            for cmd in self.tree.commands:
                name = syntax.command_name(cmd)
                if name not in CREATES | MOVES or cmd.start_byte < test.end_byte:
                    continue
                if syntax.scope_of(cmd) != syntax.scope_of(test):
                    continue
                c = self.values.command(cmd)
                if name in MOVES:
                    cpath = self.values.path(c.get("destination", position=1))
                else:
                    cpath = self.values.path(c.get("path", "literalpath", "filepath", position=0))
                if cpath is None or cpath.key() != tpath.key() or is_dependency_lockfile(cpath):
                    continue  # (package-lock.json and its kin are never locks)
                if cpath.has_unique:  # a per-process side file (LOCK.$PID): no lock
                    self.facts.created.append(cpath)
                    break
                if cmd.start_byte in taken or self._rewrite(cmd, cpath, made):
                    break  # the lock this test guards is read already
                if loop is not None and cmd.start_byte < loop.end_byte:
                    continue  # created while still waiting
                acq = Acquire(
                    LockKind.EXISTENCE,
                    "Test-Path then create",
                    cpath,
                    self.tree.span(cmd),
                    check_then_create=True,
                    test_span=self.tree.span(test),
                )
                waits = loop is not None
                if ifn is not None:
                    stmts = self.if_branch(ifn, not negated)
                    if any(syntax.within(cmd, st) for st in stmts or []):
                        # written where the name exists: a rewrite (a takeover), not the
                        # create; that may follow in the other branch
                        continue
                    if stmts is not None:
                        acq.busy = self.busy(stmts, test)
                    waits = self._waits_in(stmts or [], tpath) or self._retried(test, ifn)
                if waits:
                    acq.busy = None  # a retry loop: the busy run waits
                elif not (lockish_name(cpath) or (self._removed(cpath) and self.skips(acq.busy))):
                    break  # "create it if missing", not a guard
                elif acq.busy is None and not self._removed(cpath):
                    break  # nothing runs when it exists and it is kept: a `.locks` folder made
                    # if missing, not a lock
                self.add(acq, cmd)
                taken.add(cmd.start_byte)
                made.append((cmd, cpath.key()))
                break

    def _held_before(self, test: Any) -> bool:
        """A held-handle lock (a named mutex, a ``FileShare.None`` handle) is taken earlier in
        the same function or script and its busy branch ends the run: a test then create
        after it records the holder (a PID file) under that lock, and races with no one."""
        scope = syntax.scope_of(test)
        for acq, node in zip(self.facts.acquires, self.nodes, strict=True):
            if acq.kind is not LockKind.FLOCK or node.end_byte > test.start_byte:
                continue
            if syntax.scope_of(node) == scope and self.skips(acq.busy):
                return True
        return False

    def _rewrite(self, cmd: Any, path: Any, made: list[tuple[Any, str]]) -> bool:
        """An earlier create of the same name in the same scope runs before ``cmd`` on the
        same path (not in the other branch of an ``if``): ``cmd`` rewrites the held lock."""
        for prev, key in made:
            if key != path.key() or syntax.scope_of(prev) != syntax.scope_of(cmd):
                continue
            if _common(prev, cmd).type not in ("if_statement", "elseif_clause"):
                return True
        return False

    def _waits_in(self, stmts: list[Any], path: Any) -> bool:
        """The branch waits in a loop until ``path`` is gone."""
        for st in stmts:
            for t in syntax.descendants(st, "command"):
                if syntax.command_name(t) not in TESTS or _wait_loop(t) is None:
                    continue
                p = self.values.path(self.values.command(t).get("path", "literalpath", position=0))
                if p is not None and p.key() == path.key():
                    return True
        return False

    def _retried(self, test: Any, ifn: Any) -> bool:
        """The ``if`` sits in a loop that its create-branch leaves and whose busy pass goes
        round (``while ($true) { if (Test-Path L) { sleep } else { New-Item L; break } }``)."""
        loop = retry.loop_of(ifn)
        if loop is None or retry.per_attempt(loop, test):
            return False
        return retry.leaves_loop(ifn, loop, test) and retry.goes_round(loop, ifn)

    def _removed(self, path: Any) -> bool:
        """The file removes ``path`` somewhere (``Remove-Item``, ``[IO.File]::Delete``)."""
        for cmd in self.tree.commands:
            if syntax.command_name(cmd) in REMOVES:
                c = self.values.command(cmd)
                p = self.values.path(c.get("path", "literalpath", position=0))
                if p is not None and p.key() == path.key():
                    return True
        for inv in self.tree.invocations:
            target, member, args = invocation_parts(inv)
            if target in ("io.file", "io.directory") and member == "delete" and args:
                p = self.values.path(args[0])
                if p is not None and p.key() == path.key():
                    return True
        return False


def _common(a: Any, b: Any) -> Any:
    """The lowest common ancestor of two nodes."""
    up = {(n.start_byte, n.end_byte, n.type) for n in syntax.ancestors(a)}
    return next(n for n in syntax.ancestors(b) if (n.start_byte, n.end_byte, n.type) in up)


def _renames(loop: Any, test: Any) -> bool:
    """The loop assigns the variable ``test`` tests: each pass tests another name."""
    words = [text(w).lower() for w in syntax.descendants(test, "variable")]
    if not words:
        return False
    for a in syntax.descendants(loop, "assignment_expression"):
        left = a.named_children[0] if a.named_children else None
        if left is not None and text(left).strip().lower() in words:
            return True
    return False


def _wait_loop(test: Any) -> Any:
    """The ``while``/``do`` loop whose condition is ``test`` and which goes round while the
    tested path exists, sleeping; else None."""
    negated = False
    for a in syntax.ancestors(test):
        if a.type == "expression_with_unary_operator" and text(a).lower().startswith(("-not", "!")):
            negated = not negated
        if a.type == "while_condition":
            loop = a.parent
            if loop is None or loop.type not in ("while_statement", "do_statement"):
                return None
            until = any(c.type == "until" for c in loop.children)
            if negated == until and retry.goes_round(loop, loop):
                return loop
            return None
        if a.type in ("statement_list", "statement_block", "function_statement"):
            return None
    return None
