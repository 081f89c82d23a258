"""Walking the script in execution order: statements and the :class:`Pos` each command is
seen with (tested by ``if``/``while``/``!``/``&&``/``||`` or not, which statements run when it fails
or succeeds), compound statements, the ERROR regions read again line by line, and function
bodies walked at their call sites.
"""

from __future__ import annotations

import re

from ...model import ParseError
from .data import STATEMENT_SKIP, Branch, FdInfo, Frame, Pos, Rest, _txt
from .read import _parser

# statements walked inside each other: Python's stack holds a few frames per level
_MAX_NESTING = 150

# compound commands that `&` puts in the background as one child
_COMPOUND = frozenset(
    {
        "while_statement",
        "until_statement",
        "for_statement",
        "c_style_for_statement",
        "select_statement",
        "compound_statement",
        "subshell",
        "if_statement",
        "case_statement",
    }
)


class Walk:
    """Statements in execution order, each with the :class:`Pos` of its status."""

    # ------------------------------------------------------------------ structure
    def statements(self, node) -> list:
        """Named statement children of a block, with '&' recorded."""
        out = []
        for c in node.children:
            if c.type == "&" and out:
                out[-1] = (out[-1][0], True)
                continue
            if not c.is_named or c.type in STATEMENT_SKIP:
                continue
            if c.type in ("do", "done", "then", "fi", "else"):
                continue
            out.append((c, False))
        return out

    def _fn_body(self, fn):
        return fn.child_by_field_name("body") or fn

    def walk_seq(self, stmts, tail: bool) -> None:
        n = len(stmts)
        i = 0
        applied = False
        saved_stale = self.stale
        while i < n:
            node, bg = stmts[i]
            rest = Rest(stmts, i + 1)
            pos = Pos(
                tail=tail and i == n - 1,
                rest=rest,
                background="&" if bg else None,
                seq_tail=tail,
            )
            if bg:
                self.cond_depth += 1
            if not self.frames and self.offmap is None and self.cond_depth == 0:
                self.top_stmt = node
            self.cur_stmt = node
            self.stmt(node, pos)
            if bg:
                self.cond_depth -= 1
            if applied and self.classify_busy_stmt(node)[0] not in ("zero", "durable"):
                # `if alive; then exit; fi` guards what follows up to the first real work
                # (messages do not end it)
                self.stale = saved_stale
                applied = False
            if self.stale_rest is not None:
                self.stale = self.stale_rest
                self.stale_rest = None
                applied = True
            i += 1
        if applied:
            self.stale = saved_stale

    def stmt(self, node, pos: Pos, redirects=()) -> None:
        """One statement (:meth:`_stmt`), at most ``_MAX_NESTING`` statements deep: what is
        nested deeper is not read (its facts stay unknown, a parse error says so) instead of
        overflowing Python's stack and losing the whole file."""
        if self.nesting >= _MAX_NESTING:
            if not self.too_deep:
                self.too_deep = True
                self.facts.parse_errors.append(
                    ParseError(
                        self.span(node),
                        f"the file nests statements more than {_MAX_NESTING} deep here; "
                        "what is deeper is not read",
                    )
                )
            return
        self.nesting += 1
        try:
            self._stmt(node, pos, redirects)
        finally:
            self.nesting -= 1

    def _stmt(self, node, pos: Pos, redirects=()) -> None:
        t = node.type
        self.order += 1
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            reds = [
                c
                for c in node.children
                if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")
            ]
            reds = list(redirects) + reds
            if body is None:
                self.command(None, pos, reds, node)
                return
            stdin = None
            if body.type in _COMPOUND:
                # `while read pid; do ...; done < F`, `( read pid; ... ) <>F`: what `read`
                # reads inside comes from F
                prev = None
                for r in node.children:
                    info = self.redirect_info(r)
                    # (`<>F` without a space reads as an ERROR `<`, then a `>F` redirect)
                    gap = prev is not None and prev.type == "ERROR" and _txt(prev) == "<"
                    op = "<>" if gap and info and info[1] == ">" else info[1] if info else ""
                    if info and info[0] in (None, "0") and op in ("<", "<>") and info[2]:
                        stdin = self.resolve(info[2])
                    prev = r
            if stdin is not None:
                self.stdin.append(stdin)
            self.stmt(body, pos, reds)
            if stdin is not None:
                self.stdin.pop()
            return
        if t == "command":
            self.command(node, pos, list(redirects), node)
            return
        if pos.background and t in _COMPOUND:
            # `while ...; done &`, `{ ...; } &`, `( ... ) &`: the whole compound is the child
            closes = any(
                (self.redirect_info(r) or (None, ""))[1] in (">&-", "<&-") for r in redirects
            )
            if not closes:
                self.background_at(node, pos.background)
        if t == "list":
            self.list_(node, pos)
            return
        if t == "negated_command":
            inner = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if inner:
                p2 = Pos(
                    tested=True,
                    on_fail=pos.on_success,
                    on_success=pos.on_fail,
                    tail=pos.tail,
                    rest=pos.rest,
                    retry=pos.retry,
                    negated=not pos.negated,
                )
                if not pos.tested:
                    # `! acquire` alone: the status is dropped
                    p2.on_fail = None
                self.stmt(inner[0], p2, redirects)
            return
        if t == "pipeline":
            cmds = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            if pos.background and any(c.type in _COMPOUND for c in cmds):
                # `tail -f L | while read ...; done &`: one background child, the pipeline
                self.background_at(node, pos.background)
                pos = Pos(
                    tested=pos.tested,
                    on_fail=pos.on_fail,
                    on_success=pos.on_success,
                    tail=pos.tail,
                    rest=pos.rest,
                )
            self.ps_grep(node, cmds, pos)
            for j, c in enumerate(cmds):
                last = j == len(cmds) - 1
                self.stmt(c, pos if last else Pos(rest=[], background=pos.background))
            return
        if t == "if_statement":
            self.if_(node, pos)
            return
        if t in ("while_statement", "until_statement"):
            self.loop_(node, pos, until=t == "until_statement")
            return
        if t in ("for_statement", "c_style_for_statement", "select_statement"):
            var = node.child_by_field_name("variable")
            if var is not None:
                self.env[_txt(var)] = None
            body = node.child_by_field_name("body")
            if body is not None:
                self.cond_depth += 1
                self.walk_seq(self.statements(body), tail=False)
                self.cond_depth -= 1
            return
        if t == "case_statement":
            self.case_(node, pos)
            return
        if t in ("compound_statement", "subshell"):
            self.group_(node, pos, redirects)
            return
        if t == "function_definition":
            return
        if t == "variable_assignment":
            self.assign(node, pos=pos)
            return
        if t == "variable_assignments":
            for c in node.named_children:
                if c.type == "variable_assignment":
                    self.assign(c)
            return
        if t == "declaration_command":
            self.declare(node)
            return
        if t == "test_command":
            self.test_cmd(node, pos)
            return
        if t == "ERROR" and self.offmap is None and self.cut is None:
            self._walk_error_region(node)
            return
        if t in ("ERROR", "program", "do_group"):
            self.walk_seq(self.statements(node), tail=False)
            return
        # unknown statement kinds: look for nested statements
        for c in node.named_children:
            if c.type in ("command", "list", "redirected_statement", "if_statement"):
                self.stmt(c, Pos())

    _SEGMENT = re.compile(rb"^;?\s*(?:(?:if|then|else|elif|do|while|until)\s+)*")

    def _walk_error_region(self, node) -> None:
        """A region tree-sitter-bash could not read (valid code it does not know, e.g.
        `[ "$a" \\< "$b" ]`): read its lines, and the `;`-separated pieces of lines that do
        not read alone, as separate commands at their own positions."""
        src = self.src
        start = src.rfind(b"\n", 0, node.start_byte) + 1
        end = node.end_byte
        pos = start
        self.cond_depth += 1
        try:
            while pos < end:
                nl = src.find(b"\n", pos, end)
                stop = end if nl < 0 else nl
                self._walk_piece(pos, stop, split=True)
                pos = stop + 1
        finally:
            self.cond_depth -= 1
            self.offmap = None

    def _walk_piece(self, a: int, b: int, split: bool) -> None:
        piece = self.src[a:b]
        if not piece.strip() or piece.lstrip().startswith(b"#"):
            return
        tree = _parser().parse(piece)
        if not tree.root_node.has_error:
            self.offmap = list(range(a, b + 1))
            self._sub_src = piece
            self.walk_seq(self.statements(tree.root_node), tail=False)
            self.offmap = None
            return
        if not split:
            return
        # split at separators outside quotes (roughly) and drop leading keywords
        bounds = []
        quote = None
        i = 0
        while i < len(piece):
            ch = piece[i : i + 1]
            if quote:
                if ch == b"\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in (b"'", b'"'):
                quote = ch
            elif ch == b";":
                bounds.append(i)
            i += 1
        cuts = [0] + [x for x in bounds] + [len(piece)]
        for x, y in zip(cuts, cuts[1:], strict=False):
            seg = piece[x:y]
            m = self._SEGMENT.match(seg)
            off = m.end() if m else 0
            if seg[off:].strip() in (b"fi", b"done", b"esac", b"then", b"else", b"do", b""):
                continue
            self._walk_piece(a + x + off, a + y, split=False)

    # ------------------------------------------------------------------ compound statements
    def list_(self, node, pos: Pos) -> None:
        kids = [c for c in node.children if c.type not in STATEMENT_SKIP]
        if len(kids) < 3:
            for c in node.named_children:
                self.stmt(c, Pos())
            return
        left, op, right = kids[0], kids[1].type, kids[2]
        fr = self.frames[-1] if self.frames else None
        if op == "||" and not pos.tested and self._status_var(right) is not None:
            # `cmd || rc=$?`: the status is carried in rc and tested later, like `cmd; rc=$?`
            # (rc keeps its earlier value when cmd succeeds)
            self.stmt(left, Pos(rest=Rest(pos.rest, 0, ((right, False),))))
            self._list_right(right, pos, self.stale)
            return
        if op == "||":
            lp = Pos(
                tested=True,
                on_fail=Branch([(right, False)], 1, frame=fr, tail=pos.tail),
                on_success=pos.on_success
                or Branch(pos.rest, None, fallthrough=True, tail=pos.tail, frame=fr),
                tail=False,
                rest=Rest(pos.rest, 0, ((right, False),)),
            )
            self.stmt(left, lp)
            self._pending_stale_success = None
            self._pending_stale_fail = None
            saved = self.stale
            if self._stale_list_right is not None:
                self.stale = self._stale_list_right
                self._stale_list_right = None
            self._list_right(right, pos, saved)
        elif op == "&&":
            lp = Pos(
                tested=True,
                on_fail=pos.on_fail
                or Branch(pos.rest, 1, fallthrough=True, tail=pos.tail, frame=fr),
                on_success=Branch([(right, False)], 0, frame=fr, tail=pos.tail),
                tail=False,
                rest=Rest(pos.rest, 0, ((right, False),)),
                chain_success=pos.on_success if pos.tested else None,
            )
            self.stmt(left, lp)
            saved = self.stale
            if self._pending_stale_success is not None:
                self.stale = self._pending_stale_success
            self._pending_stale_success = None
            self._pending_stale_fail = None
            self._stale_list_right = None
            relock = self.in_trap and self.takes_flock(left)
            self.relocking += relock
            self._list_right(right, pos, saved)
            self.relocking -= relock
        else:
            for c in node.named_children:
                self.stmt(c, Pos())

    def _list_right(self, right, pos: Pos, saved) -> None:
        """The right side of `&&`/`||`: run conditionally, in the list's own position; then
        the stale-holder state from before the list comes back."""
        self.cond_depth += 1
        chained = Pos(
            tested=pos.tested,
            on_fail=pos.on_fail,
            on_success=pos.on_success,
            tail=pos.tail,
            rest=pos.rest,
            chained=True,
        )
        self.stmt(right, chained)
        self.cond_depth -= 1
        self.stale = saved

    def _if_parts(self, node):
        """(condition nodes, then stmts, else-part) where else-part is a list of statements or
        an elif_clause node."""
        conds, body, other = [], [], None
        state = "cond"
        for i, c in enumerate(node.children):
            ft = node.field_name_for_child(i)
            if c.type == "then":
                state = "then"
                continue
            if c.type in ("elif_clause", "else_clause"):
                other = other or c
                continue
            if not c.is_named or c.type in STATEMENT_SKIP:
                continue
            if state == "cond" or ft == "condition":
                conds.append(c)
            else:
                body.append(c)
        return conds, body, other

    def _else_stmts(self, other):
        if other is None:
            return None
        if other.type == "else_clause":
            return self.statements(other)
        return [(other, False)]

    def if_(self, node, pos: Pos) -> None:
        conds, body, other = self._if_parts(node)
        self._if_chain(node, conds, body, other, pos)

    def _if_chain(self, node, conds, body, other, pos: Pos) -> None:
        then_stmts = [(c, False) for c in body]
        fr = self.frames[-1] if self.frames else None
        else_stmts = self._else_stmts(other)
        if else_stmts is None:
            on_fail = Branch(pos.rest, 0, fallthrough=True, tail=pos.tail, frame=fr)
        else:
            on_fail = Branch(else_stmts, 1, tail=pos.tail, frame=fr)
        on_success = Branch(then_stmts, 0, tail=pos.tail, frame=fr)
        for j, c in enumerate(conds):
            if j == len(conds) - 1:
                self.stmt(
                    c, Pos(tested=True, on_fail=on_fail, on_success=on_success, rest=then_stmts)
                )
            else:
                self.stmt(c, Pos())
        saved = self.stale
        rest_stale, self.stale_rest = self.stale_rest, None
        self.cond_depth += 1
        if self._pending_stale_success is not None:
            self.stale = self._pending_stale_success
        self._pending_stale_success = None
        relock = self.in_trap and bool(conds) and self.takes_flock(conds[-1])
        self.relocking += relock
        self.walk_seq(then_stmts, tail=pos.tail)
        self.relocking -= relock
        self.stale = saved
        if self._pending_stale_fail is not None:
            self.stale = self._pending_stale_fail
        self._pending_stale_fail = None
        if other is not None:
            if other.type == "else_clause":
                # `if [ -z "$1" ]; then usage; exit 1; else rm "$1.lock"; fi`: with the other
                # branch leaving, the else runs whenever the script goes on, like the rest
                guard = self._ends_by_exit(then_stmts)
                self.cond_depth -= guard
                self.walk_seq(self.statements(other), tail=pos.tail)
                self.cond_depth += guard
            else:
                c2, b2, o2 = self._if_parts(other)
                self._if_chain(other, c2, b2, o2, pos)
        self.stale = saved
        self.cond_depth -= 1
        if rest_stale is not None:
            self.stale_rest = rest_stale

    def _ends_by_exit(self, stmts) -> bool:
        """The block's last statement is `exit` (`return` in a function): it never falls
        through."""
        if not stmts or stmts[-1][1]:
            return False
        last = stmts[-1][0]
        return last.type == "command" and self.cmd_name(last) in ("exit", "return")

    def loop_(self, node, pos: Pos, until: bool) -> None:
        conds = node.children_by_field_name("condition")
        conds = [c for c in conds if c.is_named and c.type not in STATEMENT_SKIP]
        body = node.child_by_field_name("body")
        fr = self.frames[-1] if self.frames else None
        body_stmts = self.statements(body) if body is not None else []
        for j, c in enumerate(conds):
            if j == len(conds) - 1:
                # the body runs while the condition is true (until: false)
                br_body = Branch(body_stmts, 0, frame=fr)
                br_out = Branch(pos.rest, 1, fallthrough=True, tail=pos.tail, frame=fr)
                p = Pos(tested=True, retry=True)
                if until:
                    p.on_fail, p.on_success = br_body, br_out
                else:
                    p.on_fail, p.on_success = br_out, br_body
                self.stmt(c, p)
            else:
                self.stmt(c, Pos())
        if body is not None:
            self.cond_depth += 1
            self.walk_seq(body_stmts, tail=False)
            self.cond_depth -= 1

    def case_(self, node, pos: Pos) -> None:
        value = _txt(node.child_by_field_name("value"))
        dispatch = value in ('"$1"', "$1", '"${1:-}"', "${1:-}", '"${1}"', "${1}")
        self.cond_depth += 1
        for it in node.named_children:
            if it.type != "case_item":
                continue
            vals = [_txt(c).strip("'\"") for c in it.children_by_field_name("value")]
            stmts = [
                (c, False)
                for i, c in enumerate(it.children)
                if c.is_named
                and c.type not in STATEMENT_SKIP
                and it.field_name_for_child(i) != "value"
            ]
            if dispatch:
                self.actions.append("|".join(vals))
            self.walk_seq(stmts, tail=pos.tail)
            if dispatch:
                self.actions.pop()
        self.cond_depth -= 1

    def group_(self, node, pos: Pos, redirects) -> None:
        saved_fds = dict(self.fds)
        opened = []
        for r in redirects:
            info = self.redirect_info(r)
            if (
                info
                and info[0] is not None
                and info[0] not in ("0", "1", "2")
                and info[2] is not None
            ):
                fd, op, dest = info
                if op in (">&-", "<&-"):
                    continue
                path = self.resolve(dest)
                self.fds[fd] = FdInfo(path, self.span(r), op in (">", ">|"))
                opened.append(fd)
                if op in (">", ">|", ">>", "<>"):
                    self.check_then_create(path, r)  # `( flock -n 9; ... ) 9>L`, as exec's
        for r in redirects:
            self.check_write_redirect(r, Pos())
        stmts = self.statements(node)
        subshell = node.type == "subshell"
        env_saved = dict(self.env) if subshell else None
        flags = (self.set_e, self.noclobber)
        if subshell:
            self.subshells.append(pos)
        cond = pos if pos.tested else self._status_pos(pos)
        if cond is not None and stmts:
            # ( mkdir L ) 2>/dev/null as a condition, or followed by `if [ $? ...`: the group's
            # status is its last command's
            self.walk_seq(stmts[:-1], tail=False)
            last, bg = stmts[-1]
            self.order += 1
            if subshell:
                self.subshells.pop()  # the branches taken on its status are outside it
            self.stmt(last, cond)
            if subshell:
                self.subshells.append(pos)
        else:
            self.walk_seq(stmts, tail=pos.tail)
        if subshell:
            self.subshells.pop()
            self.set_e, self.noclobber = flags
        if env_saved is not None:
            self.env = env_saved
        for fd in opened:
            if fd in saved_fds:
                self.fds[fd] = saved_fds[fd]
            else:
                self.fds.pop(fd, None)

    # ------------------------------------------------------------------ functions
    def call(self, name: str, cmd, args, pos: Pos) -> None:
        self.called.add(name)
        if (
            any(f.name == name for f in self.frames)
            or len(self.frames) > 6
            or self.inlines > 400
            or self.inlined > 16 * len(self.src) + 65536  # a big helper called 400 times
        ):
            return
        self.inlines += 1
        fn = self.functions[name]
        self.inlined += fn.end_byte - fn.start_byte
        params = {}
        for i, a in enumerate(args[:9], start=1):
            params[str(i)] = self.resolve(a).parts
        params["#"] = ()
        frame = Frame(
            name, params, pos.tail, pos.on_fail if pos.tested else None, len(self.frames) + 1
        )
        frame.pos = pos
        self.frames.append(frame)
        body = self._fn_body(fn)
        stmts = (
            self.statements(body)
            if body.type in ("compound_statement", "subshell")
            else [(body, False)]
        )
        frame.last = (stmts[-1][0].start_byte, stmts[-1][0].end_byte) if stmts else None
        cond = pos if pos.tested else self._status_pos(pos)
        # a call from a re-read piece (an ERROR region's line): the body is main-tree code,
        # at main-tree offsets, whatever piece the call came from
        saved_map, self.offmap = self.offmap, None
        try:
            self._walk_body(stmts, pos, cond)
        finally:
            self.offmap = saved_map
        self.frames.pop()

    def _walk_body(self, stmts, pos: Pos, cond) -> None:
        last_node = stmts[-1][0] if stmts else None
        if (
            cond is not None
            and last_node is not None
            and last_node.type not in ("if_statement", "case_statement", "while_statement")
            and not re.match(r"\s*(return|exit)\b", _txt(last_node))
        ):
            # the function's status is its last command's: that command is what the caller tests
            self.walk_seq(stmts[:-1], tail=False)
            self.order += 1
            self.stmt(last_node, cond)
        else:
            self.walk_seq(stmts, tail=pos.tail)
