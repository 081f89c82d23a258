"""Stage 6: child processes started while a lock is held and not waited for, and probes
(a throw-away entry created and removed again at once).

Node opens files close-on-exec, so a child never holds the locked descriptor; what goes
wrong is that the child outlives the lock: ``detached: true`` or ``.unref()`` lets the parent
exit (releasing the lock) while the child still works, and a ``finally`` that releases runs
as soon as ``spawn`` returns unless the child is awaited."""

from __future__ import annotations

from ...hints import Any
from ...model import Background, Edit, FileFacts, FixTemplate, PartKind, Probe
from . import syntax
from .syntax import Tree, arg, object_entries, text, unwrap
from .values import Names

SPAWNS = {
    "child_process.spawn",
    "child_process.exec",
    "child_process.execFile",
    "child_process.fork",
}
WAIT_EVENTS = ('"exit"', '"close"', "'exit'", "'close'")
# a creation and the removal that undoes it (probe vocabulary)
PROBE_CREATES = {"fs.mkdirSync", "fs.mkdir", "fs.writeFileSync", "fs.writeFile", "fs.openSync"}
PROBE_CREATES |= {"fs.open", "fs.closeSync"}
PROBE_REMOVES = {"fs.rmdirSync", "fs.rmdir", "fs.unlinkSync", "fs.unlink", "fs.rmSync", "fs.rm"}


class Children:
    def __init__(self, tree: Tree, names: Names, facts: FileFacts, nodes: list[Any]) -> None:
        self.tree, self.names, self.facts, self.acq_nodes = tree, names, facts, nodes

    def run(self) -> None:
        self._backgrounds()
        self._probes()

    # -- background children ---------------------------------------------------------------------
    def _backgrounds(self) -> None:
        for call in self.tree.calls:
            q = self.names.callee(call)
            if q not in SPAWNS:
                continue
            how = self._how(call, q)
            if how is None:
                continue
            lock = self._held(call)
            if lock is not None:
                self.facts.backgrounds.append(
                    Background(self.tree.span(call), lock, how, inherits_lock=False)
                )

    def _how(self, call: Any, q: str) -> str | None:
        """Why the child runs on unwaited: detached, unref'd, or released by a ``finally``
        while it runs; None when the script waits for it (or cannot be told to)."""
        name = q.split(".")[-1]
        for a in syntax.args(call):
            opts = object_entries(a)
            if "detached" in opts and text(opts["detached"]) == "true":
                return f"{name}(..., {{detached: true}})"
        var = self._result_var(call)
        if self._unref(call, var):
            return f"{name}(...).unref()"
        if self._awaited(call) or self._waited(var):
            return None
        for a in syntax.ancestors(call):
            if a.type in syntax.FUNCTIONS:
                return None
            if a.type == "try_statement" and a.child_by_field_name("finalizer") is not None:
                body = a.child_by_field_name("body")
                if body is not None and syntax.within(call, body):
                    return f"{name}(...) not awaited"
        return None

    def _result_var(self, call: Any) -> str | None:
        p = call.parent
        while p is not None and p.type in syntax.WRAPPERS:
            p = p.parent
        if p is not None and p.type == "variable_declarator":
            n = p.child_by_field_name("name")
            return text(n) if n is not None and n.type == "identifier" else None
        if p is not None and p.type == "assignment_expression":
            left = p.child_by_field_name("left")
            return text(left) if left is not None and left.type == "identifier" else None
        return None

    def _unref(self, call: Any, var: str | None) -> bool:
        p = call.parent
        if p is not None and p.type == "member_expression":
            prop = p.child_by_field_name("property")
            if prop is not None and text(prop) == "unref":
                return True
        if var is None:
            return False
        return any(
            text(c.child_by_field_name("function") or c) == f"{var}.unref" for c in self.tree.calls
        )

    def _awaited(self, call: Any) -> bool:
        """``await`` on it (or on a promise built around it), or ``execSync``-style use."""
        for a in syntax.ancestors(call):
            if a.type == "await_expression":
                return True
            if a.type == "new_expression" and text(a).startswith("new Promise"):
                return True
            if a.type in ("statement_block", "program"):
                break
        return False

    def _waited(self, var: str | None) -> bool:
        if var is None:
            return False
        for c in self.tree.calls:
            fn = c.child_by_field_name("function")
            if fn is None or fn.type != "member_expression":
                continue
            obj, prop = fn.child_by_field_name("object"), fn.child_by_field_name("property")
            if obj is None or prop is None or text(obj) != var:
                continue
            if text(prop) in ("on", "once") and text(arg(c, 0) or c) in WAIT_EVENTS:
                return True
        return any(
            self.names.callee(c) in ("events.once", "once") and text(arg(c, 0) or c) == var
            for c in self.tree.calls
        )

    def _held(self, call: Any) -> int | None:
        """The lock taken before ``call`` and not in its busy branch, if any."""
        s = self.tree.offsets.char(call.start_byte)
        func = syntax.function_of(call)
        for i, (acq, node) in enumerate(zip(self.facts.acquires, self.acq_nodes, strict=True)):
            if node.start_byte >= call.start_byte or syntax.function_of(node) != func:
                continue
            b = acq.busy
            if b is not None and b.span.start <= s < b.span.end:
                continue
            return i
        return None

    # -- probes ------------------------------------------------------------------------------------
    def _probes(self) -> None:
        taken = {n.start_byte for n in self.acq_nodes}
        for call in self.tree.calls:
            q = self.names.callee(call)
            if q not in PROBE_CREATES or call.start_byte in taken:
                continue
            target = arg(call, 0)
            if q == "fs.closeSync":  # closeSync(openSync(P, "w"))
                if target is None or self.names.callee(target) not in ("fs.openSync",):
                    continue
                target = arg(target, 0)
            if q in ("fs.mkdirSync", "fs.mkdir"):
                opts = object_entries(arg(call, 1))
                if "recursive" in opts and text(opts["recursive"]) == "true":
                    continue
            path = self.names.path(target)
            if path is None or not path.key():
                continue
            rm = self._removed_next(call, path)
            if rm is None:
                continue
            if any(
                p.kind in (PartKind.ARG, PartKind.VAR, PartKind.UNKNOWN)
                for p in path.basename_parts()
            ):
                continue  # the name comes from elsewhere: it may be per-run
            fix = self._pid_fix(target, arg(rm, 0))
            self.facts.probes.append(Probe(path, self.tree.span(call), fix))

    def _removed_next(self, call: Any, path: Any) -> Any:
        st = syntax.statement_of(call)
        nxt = syntax.following(st)
        if not nxt:
            return None
        for c in syntax.descendants(nxt[0], "call_expression"):
            if self.names.callee(c) not in PROBE_REMOVES:
                continue
            if (
                syntax.function_of(c) != syntax.function_of(call)
                or syntax.statement_of(c) != nxt[0]
            ):
                continue  # a callback or a nested block: runs later, if at all
            p = self.names.path(arg(c, 0))
            if p is not None and p.key() == path.key():
                return c
        return None

    def _pid_fix(self, create: Any, remove: Any) -> FixTemplate | None:
        """``"/x/probe"`` -> `` `/x/probe.${process.pid}` `` at both the create and the
        removal, when both are the same literal (a constant shared by both is left alone)."""
        create, remove = unwrap(create), unwrap(remove)
        if create is None or remove is None or text(create) != text(remove):
            return None
        edits = []
        for n in (create, remove):
            e = self._append_pid(n)
            if e is None:
                return None
            edits.append(e)
        return FixTemplate("add the process id to the probe name", tuple(edits))

    def _append_pid(self, node: Any) -> Edit | None:
        src = text(node)
        s = self.tree.offsets.char(node.start_byte)
        e = self.tree.offsets.char(node.end_byte)
        if node.type == "template_string":
            return Edit(e - 1, e - 1, ".${process.pid}")
        if node.type != "string" or "`" in src or "${" in src:
            return None
        return Edit(s, e, "`" + src[1:-1] + ".${process.pid}`")
