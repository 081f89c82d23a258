"""Traps: the handler's code read as shell (a quoted string sub-parsed, a function walked),
its removals as release hooks, and the ``exit`` at its end that overrides the run's status.
"""

from __future__ import annotations

import re

from ...model import FixTemplate, StatusOverride
from .data import REMOVERS, SIGNALS_EXIT, STATEMENT_SKIP, Frame, Pos, TrapEvent, _txt
from .read import _parser


class Traps:
    """Trap handlers and the status overrides at their end."""

    # ------------------------------------------------------------------ traps
    def trap_(self, cmd, args, pos: Pos) -> None:
        if not args or self.in_trap:
            return
        argt = [_txt(a) for a in args]
        if argt[0] in ("-p", "-l"):
            return
        action = args[0]
        # a signal list held in a variable (`SIGNALS='EXIT'; trap "..." $SIGNALS`) is read
        # through its value
        sigs = [
            s.upper()
            for a, t in zip(args[1:], argt[1:], strict=True)
            for s in (self.resolve(a).render().split() if "$" in t else [t])
        ]
        if argt[0] == "-" or argt[0] in ("''", '""'):
            if any(s in SIGNALS_EXIT for s in sigs):
                ev = TrapEvent(self.order, True, set(), cmd, self.span(cmd), disarm=True)
                ev.before_exit = any(  # an exit command, not a `(exit N)` subshell setting $?
                    re.search(r"(?<![(\w])exit\b", _txt(n)) for n, _ in pos.rest[:3]
                )
                self.traps.append(ev)
            return
        if not sigs:
            return
        is_exit = any(s.removeprefix("SIG") in SIGNALS_EXIT for s in sigs)
        self.trap_span = self.span(cmd)
        self.trap_keys = set()
        self.trap_relocked = set()
        saved = (self.in_trap, self.cond_depth, self.stale, self.offmap)
        self.in_trap = True
        self.trap_depth = self.cond_depth
        self.stale = None
        removals_before = len(self.facts.removals)
        self._trap_only_removal = False
        try:
            self.walk_trap_body(action, cmd, is_exit)
        finally:
            self.in_trap, self.cond_depth, self.stale, self.offmap = saved
        keys = set(self.trap_keys)
        ev = TrapEvent(self.order, is_exit, keys, cmd, self.span(cmd))
        ev.relocked = set(self.trap_relocked)
        ev.before_exit = False
        top = self.top_stmt
        ev.top = (
            top
            if top is not None
            and not self.frames
            and self.cond_depth == 0
            and self.offmap is None
            and top.start_byte <= cmd.start_byte
            and cmd.end_byte <= top.end_byte
            and top.type in ("command", "redirected_statement")
            else None
        )
        ev.removals = self.facts.removals[removals_before:]
        if self._trap_only_removal and len(ev.removals) == 1:
            whole = self.drop_fix(cmd, None, 1)
            if whole is not None:
                ev.removals[0].drop_fix = FixTemplate(
                    "drop the trap that removes the lock file", whole.edits
                )
        self.traps.append(ev)

    def takes_flock(self, node) -> bool:
        """``node`` (the left side of ``&&`` in a trap) succeeds only holding the flock:
        `flock -xn 9`, or a helper whose body runs flock (`_lock xn`)."""
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return False
        name = self.cmd_name(node)
        if name == "flock":
            return True
        fn = self.functions.get(name)
        return fn is not None and re.search(r"(?<![\w-])flock\b", _txt(fn)) is not None

    def walk_trap_body(self, action, cmd, is_exit: bool) -> None:
        self._trap_dquoted = action.type == "string"
        if action.type == "raw_string":
            inner = action.start_byte + 1
            body = self.src[inner : action.end_byte - 1]
            bmap = list(range(inner, action.end_byte - 1)) + [action.end_byte - 1]
        elif action.type == "string":
            body, bmap = self._dquoted_body(action)
            bmap.append(action.end_byte - 1)
        elif action.type == "concatenation" and all(
            c.type in ("raw_string", "string", "word") for c in action.children
        ):
            # `'rm -f "'"${FILE}"'"'`: quoted pieces side by side make one string
            out, bmap = bytearray(), []
            for c in action.children:
                if c.type == "raw_string":
                    out += self.src[c.start_byte + 1 : c.end_byte - 1]
                    bmap.extend(range(c.start_byte + 1, c.end_byte - 1))
                elif c.type == "string":
                    piece, pmap = self._dquoted_body(c)
                    out += piece
                    bmap.extend(pmap)
                else:
                    out += self.src[c.start_byte : c.end_byte]
                    bmap.extend(range(c.start_byte, c.end_byte))
            bmap.append(action.end_byte - 1)
            body = bytes(out)
        elif action.type == "word":
            name = _txt(action)
            if name in self.functions:
                fn = self.functions[name]
                self.called.add(name)
                stmts = self.statements(self._fn_body(fn))
                self.frames.append(Frame(name, {}, False, None, 1))
                self.walk_seq(stmts, tail=False)
                self.frames.pop()
                if is_exit:
                    self.status_override(stmts)
                return
            body = self.src[action.start_byte : action.end_byte]
            bmap = list(range(action.start_byte, action.end_byte + 1))
        else:
            return
        if self.offmap is not None:
            bmap = [self.offmap[min(b, len(self.offmap) - 1)] for b in bmap]
        tree = _parser().parse(body)
        # traps that only call functions: walk the function bodies
        self.offmap = bmap
        self._sub_src = body
        stmts = self.statements(tree.root_node)
        names = []
        for n, _ in stmts:
            if n.type == "command" and self.cmd_name(n) in self.functions:
                names.append(self.cmd_name(n))
        self.walk_seq(stmts, tail=False)
        if is_exit:
            self.status_override(stmts)
        self.offmap = None
        for name in names:
            fn = self.functions[name]
            self.called.add(name)
            fst = self.statements(self._fn_body(fn))
            self.frames.append(Frame(name, {}, False, None, 1))
            self.walk_seq(fst, tail=False)
            self.frames.pop()
            if (
                is_exit
                and (name,)
                and len(stmts)
                and stmts[-1][0].type == "command"
                and self.cmd_name(stmts[-1][0]) == name
            ):
                self.status_override(fst)
        self._trap_remove_fixes(tree, action, cmd, stmts)

    def eval_exec(self, args, pos: Pos) -> bool:
        """`eval "exec $LOCKFD>\\"$LOCKFILE\\""`: a descriptor named by a variable, opened
        through eval.  The string is expanded as eval gets it and read as the `exec` it holds,
        with the status of the eval."""
        if len(args) != 1 or args[0].type != "string" or self.offmap is not None:
            return False
        body, bmap = self._dquoted_body(args[0])
        if not re.match(rb"\s*exec\s+\d+\s*[<>]", body) or re.search(rb"[;&|\n`]|\$\(", body):
            return False
        bmap.append(args[0].end_byte - 1)
        stmts = self.statements(_parser().parse(body).root_node)
        if len(stmts) != 1:
            return False
        self.offmap, self._sub_src = bmap, body
        try:
            self.stmt(stmts[0][0], pos)
        finally:
            self.offmap = None
        return True

    def _dquoted_body(self, action) -> tuple[bytes, list[int]]:
        """The text of a "..." trap action and the source byte of each of its bytes: it is
        expanded when the trap is set, so known literal values are put in place."""
        raw = self.src[action.start_byte + 1 : action.end_byte - 1]
        subs = {}
        swap: set[int] = set()  # single quotes read as double quotes
        for c in action.named_children:
            if c.type in ("simple_expansion", "expansion"):
                pe = self.resolve(c)
                val = pe.render()
                if pe.is_literal and re.fullmatch(r"[\w./~@%+=:,-]+", val):
                    subs[c.start_byte] = (c.end_byte, val.encode())
                else:
                    swap.update(self._quoted_value(action, c))
        out = bytearray()
        bmap = []
        i = 0
        while i < len(raw):
            absb = action.start_byte + 1 + i
            if absb in subs:
                end_b, lit = subs[absb]
                out += lit
                bmap.extend([absb] * len(lit))
                i += end_b - absb
                continue
            ch = b'"' if absb in swap else raw[i : i + 1]
            if (
                ch == b"\\"
                and i + 1 < len(raw)
                and raw[i + 1 : i + 2] in (b'"', b"\\", b"$", b"`", b"\n")
            ):
                out += raw[i + 1 : i + 2]
                bmap.append(action.start_byte + 1 + i + 1)
                i += 2
                continue
            out += ch
            bmap.append(action.start_byte + 1 + i)
            i += 1
        return bytes(out), bmap

    def _quoted_value(self, action, c) -> tuple[int, ...]:
        """`trap "rm -f -- '$pidfile'" EXIT`: the value is put in place when the trap is set and
        the single quotes only keep it one word.  The bytes of the quotes around an expansion
        whose value stays unresolved, so that the handler read again still expands it."""
        src = self.src
        if c.start_byte <= action.start_byte + 1 or src[c.start_byte - 1 : c.start_byte] != b"'":
            return ()
        end = src.find(b"'", c.end_byte, action.end_byte - 1)
        if end < 0 or re.search(rb'["`\\]|\$\(', src[c.end_byte : end]):
            return ()
        return (c.start_byte - 1, end)

    def _trap_remove_fixes(self, tree, action, cmd, stmts) -> None:
        """A trap whose whole string is one removal of one path: the fix drops the trap."""
        if len(stmts) != 1:
            return
        node = stmts[0][0]
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return
        name, args, _ = self.unwrap(node)
        ops = [a for a in args if not _txt(a).startswith("-")]
        self._trap_only_removal = name in REMOVERS and len(ops) == 1

    def status_override(self, stmts) -> None:
        if not stmts:
            return
        last = stmts[-1][0]
        node = last
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "list":
            kids = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if kids:
                node = kids[-1]
        if node.type != "command" or self.cmd_name(node) != "exit":
            return
        args = self.cmd_args(node)
        if not args:
            return
        a = _txt(args[0]).strip("\"'")
        status = None
        if a.isdigit() or (self.number_of(a) is not None and self._fixed_var(a)):
            detail = f"exit {a}"
            status = (self.number_of(a) or 0) & 0xFF
        elif a in ("$?", "${?}"):
            # exit $? right at the start is fine; after another command it is that status
            if len(stmts) == 1 and last.type == "command":
                return
            detail = "exit $? after another command"
        else:
            return
        # keep_status_fix is left to lockcheck.fix.suggest (a bare `exit`)
        if self._dedupe(("ov", node.start_byte)):
            ov = StatusOverride(self.span(node), detail, status=status)
            self.override_order[id(ov)] = self.order
            self.facts.overrides.append(ov)

    def _fixed_var(self, ref: str) -> bool:
        """`$RC` holds one fixed number everywhere in the file (assigned only that literal,
        never read, counted or set from a status)."""
        m = re.fullmatch(r"\$\{?(\w+)\}?", ref)
        if not m:
            return False
        name = re.escape(m.group(1))
        values = set()
        for a in re.finditer(r"(?<![\w$])" + name + r"(\+=|=|\+\+|--)(\S*)", self.text):
            if a.group(1) != "=":
                return False
            values.add(a.group(2).strip("\"';"))
        if re.search(
            r"\b(read|for|let|getopts|printf\s+-v)\b[^\n;|]*\b" + name + r"\b|\(\([^)]*\b" + name,
            self.text,
        ):
            return False
        return len(values) == 1 and next(iter(values)).isdigit()
