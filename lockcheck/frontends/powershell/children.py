"""Stage 5: processes started while a lock is held and not waited for, and probes (a
throw-away item created and removed again at once).

``Start-Process`` without ``-Wait`` and ``[Diagnostics.Process]::Start`` return at once;
.NET handles and mutexes are not inherited, so the child does not hold the lock: it outlives
it, and works on unlocked after the script's ``finally`` has released it or the script has
exited.  ``Start-Job`` children end with the session and are not counted."""

from __future__ import annotations

from ...hints import Any
from ...model import Background, Edit, FileFacts, FixTemplate, PartKind, Probe
from . import syntax
from .syntax import Tree, invocation_parts, text, unwrap
from .values import Values

CREATES = {"new-item", "ni", "set-content", "sc", "out-file", "add-content", "ac"}
REMOVES = {"remove-item", "del", "rm", "ri", "erase", "rmdir", "rd"}
WAITS = ("wait-process", "waitforexit")


class Children:
    def __init__(self, tree: Tree, values: Values, facts: FileFacts, nodes: list[Any]) -> None:
        self.tree, self.values, self.facts, self.acq_nodes = tree, values, facts, nodes

    def run(self) -> None:
        self._backgrounds()
        self._probes()

    # -- background processes --------------------------------------------------------------------
    def _backgrounds(self) -> None:
        for cmd in self.tree.commands:
            if syntax.command_name(cmd) not in ("start-process", "saps", "start"):
                continue
            c = self.values.command(cmd)
            if c.has("wait") or self._waited(cmd):
                continue
            self._add(cmd, "`Start-Process` (no `-Wait`)")
        for inv in self.tree.invocations:
            target, member, _a = invocation_parts(inv)
            if target == "diagnostics.process" and member == "start" and not self._waited(inv):
                self._add(inv, "`Process::Start()` not waited for")

    def _waited(self, node: Any) -> bool:
        """The started process is waited for: piped to ``Wait-Process``, or its variable gets
        ``Wait-Process``/``.WaitForExit()`` later."""
        stmt = _statement(node)
        if stmt is not None and "wait-process" in text(stmt).lower():
            return True
        var = None
        for a in syntax.ancestors(node):
            if a.type == "assignment_expression":
                var = syntax.var_name(a.named_children[0])
                break
            if a.type in ("statement_list", "statement_block"):
                break
        if var is None:
            return False
        for n in self.tree.nodes:
            if n.start_byte <= node.end_byte or n.type not in ("command", "invokation_expression"):
                continue
            src = text(n).lower()
            if any(w in src for w in WAITS) and f"${var}" in src:
                return True
        return False

    def _add(self, node: Any, how: str) -> None:
        s = self.tree.char(node.start_byte)
        scope = syntax.scope_of(node)
        for i, (acq, an) in enumerate(zip(self.facts.acquires, self.acq_nodes, strict=True)):
            if an.start_byte >= node.start_byte or syntax.scope_of(an) != scope:
                continue
            b = acq.busy
            if b is not None and b.span.start <= s < b.span.end:
                continue
            self.facts.backgrounds.append(
                Background(self.tree.span(node), i, how, inherits_lock=False)
            )
            return

    # -- probes ------------------------------------------------------------------------------------
    def _probes(self) -> None:
        taken = {n.start_byte for n in self.acq_nodes}
        for cmd in self.tree.commands:
            if syntax.command_name(cmd) not in CREATES or cmd.start_byte in taken:
                continue
            c = self.values.command(cmd)
            target = c.get("path", "literalpath", "filepath", position=0)
            if target is None or target is True or isinstance(target, str):
                continue
            path = self.values.path(target)
            if c.get("name") is not None or path is None or not path.key():
                continue
            rm = self._removed_next(cmd, path)
            if rm is None:
                continue
            if any(
                p.kind in (PartKind.ARG, PartKind.VAR, PartKind.UNKNOWN)
                for p in path.basename_parts()
            ):
                continue  # the name comes from elsewhere: it may be per-run
            rtarget = self.values.command(rm).get("path", "literalpath", position=0)
            fix = self._pid_fix(target, rtarget)
            self.facts.probes.append(Probe(path, self.tree.span(cmd), fix))

    def _removed_next(self, cmd: Any, path: Any) -> Any:
        stmt = _statement(cmd)
        if stmt is None:
            return None
        sibs = [c for c in stmt.parent.named_children if c.type not in ("comment",)]
        i = next((k for k, s in enumerate(sibs) if s == stmt), -1)
        if i < 0 or i + 1 >= len(sibs):
            return None
        for rm in syntax.descendants(sibs[i + 1], "command"):
            if syntax.command_name(rm) not in REMOVES or _statement(rm) != sibs[i + 1]:
                continue  # a removal inside a script block or a try runs later, if at all
            c = self.values.command(rm)
            p = self.values.path(c.get("path", "literalpath", position=0))
            if p is not None and p.key() == path.key():
                return rm
        return None

    def _pid_fix(self, create: Any, remove: Any) -> FixTemplate | None:
        """``'C:\\x\\probe'`` -> ``"C:\\x\\probe.$PID"`` at the create and the removal, when
        both are the same literal."""
        if remove is None or remove is True or isinstance(remove, str):
            return None
        create, remove = unwrap(create), unwrap(remove)
        if text(create) != text(remove):
            return None
        edits = []
        for n in (create, remove):
            e = self._append_pid(n)
            if e is None:
                return None
            edits.append(e)
        return FixTemplate("add the process id to the probe name", tuple(edits))

    def _append_pid(self, node: Any) -> Edit | None:
        if node.type == "string_literal" and node.named_children:
            node = node.named_children[0]
        src = text(node)
        s, e = self.tree.char(node.start_byte), self.tree.char(node.end_byte)
        if node.type == "expandable_string_literal" and src.endswith('"'):
            return Edit(e - 1, e - 1, ".$PID")
        if node.type == "verbatim_string_characters" and not any(ch in src for ch in '$`"'):
            return Edit(s, e, '"' + src[1:-1].replace("''", "'") + '.$PID"')
        if node.type == "generic_token" and not any(ch in src for ch in "$`\"'"):
            return Edit(s, e, '"' + src + '.$PID"')
        return None


def _statement(node: Any) -> Any:
    """The statement (a direct child of a ``statement_list``) that holds ``node``."""
    n = node
    while n.parent is not None and n.parent.type != "statement_list":
        n = n.parent
    return n if n.parent is not None else None
