"""Removals (``rm``, ``find -delete``) with their drop fixes, writes and creation (a redirect,
``touch``; a test of the same path before it makes a check-then-create), and file tests.
"""

from __future__ import annotations

import re

from ...model import Acquire, Edit, FixTemplate, LockKind, Part, PartKind, PathExpr, Removal
from ...paths import lockish_text
from .data import AGE_TEST, STATEMENT_SKIP, Branch, Pos, _covers, _merge, _txt

# `stat ... %Y` is tried from the first `stat` of a line only: a later one has less of the line
# after it, and trying each would rescan the line once per `stat` (quadratic)


class Files:
    """Removals, writes and creation, file tests."""

    # ------------------------------------------------------------------ removals
    def remove_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = [
            (a, s) for a, s in zip(args, argt, strict=False) if not s.startswith("-") or s == "-"
        ]
        for a, s in ops:
            path = self.resolve(a)
            is_glob = (
                bool(re.search(r"(?<!\\)[*?\[]", s))
                and a.type not in ("raw_string",)
                and not (a.type == "string" and "*" not in _txt(a).replace('"', ""))
            )
            if is_glob:
                path = PathExpr(path.parts, path.text)
            self.add_removal(cmd, path, a, len(ops), pos, is_glob)

    def add_removal(
        self, cmd, path: PathExpr, operand, nops: int, pos: Pos, is_glob=False, overwrite=False
    ) -> None:
        key = path.key()
        via = "trap" if self.in_trap else "direct"
        # functions are walked where they are called (cond_depth counts the branches there);
        # functions never called are walked afterwards with cond_depth raised
        conditional = self.cond_depth > 0 or pos.tested
        stale = None
        if self.stale is not None:
            guard, skey = self.stale
            if (
                skey is None
                or skey == key
                or skey.startswith(key.rstrip("/") + "/")
                or key in self.acq_keys
                or guard == "age"
            ):
                stale = guard
        if self.in_trap:
            # a trap runs on every exit: only a test inside the trap makes it conditional
            conditional = pos.tested or self.cond_depth > self.trap_depth
        elif conditional and not pos.tested and not self.frames and self.offmap is None:
            # `if [ -f L ]; then rm L; fi`, `[ -e L ] && rm -f L`: a test of the name's
            # existence only, so the removal runs whenever there is something to remove
            guards = self._existence_guards(cmd, key)
            if guards and guards == self.cond_depth:
                conditional = False
        drop = self.drop_fix(cmd, operand, nops)
        rm = Removal(
            path,
            self.span(cmd),
            via=via,
            hook_span=self.trap_span if self.in_trap else None,
            conditional=conditional,
            stale_guard=stale,
            overwrite=overwrite,
            is_glob=is_glob,
            drop_fix=None if overwrite else drop,
        )
        if self.in_trap:
            self.trap_keys.add(key)
            if self.relocking:
                self.trap_relocked.add(key)
        dk = ("rm", cmd.start_byte, key, via, self.offmap is not None)
        if not self._dedupe(dk):
            return
        self.facts.removals.append(rm)
        if self.in_trap:
            self.trap_keys.add(key)
        else:
            self.direct_removals.append((self.order, key))
            if not conditional and not stale:
                self.clearing.append((self.order, key))
            # an existence lock released: background children after this are fine
            released = {i for i in self.held if self.acq_keys[i] == key}
            if released:
                self.held = [i for i in self.held if i not in released]
                keep = []
                for b in self.pending_bg:
                    (self.facts.backgrounds if b.lock in released else keep).append(b)
                self.pending_bg = keep

    def _existence_guards(self, cmd, key: str) -> int:
        """How many enclosing conditions of ``cmd`` there are when every one is a plain test
        that ``key`` exists (`if [ -f L ]; then`, `[ -e L ] &&`); 0 when any other condition
        or loop encloses it."""
        guards = 0
        n = cmd
        while n.parent is not None:
            p = n.parent
            t = p.type
            if t == "if_statement":
                conds, body, _other = self._if_parts(p)
                if not any(b.start_byte <= n.start_byte and n.end_byte <= b.end_byte for b in body):
                    return 0  # in the else part, or the condition itself
                if len(conds) != 1 or not self._tests_existence_of(conds[0], key):
                    return 0
                guards += 1
            elif t == "list":
                kids = [c for c in p.children if c.is_named]
                ops = [c.type for c in p.children if not c.is_named]
                if len(kids) != 2 or ops != ["&&"] or n.start_byte != kids[1].start_byte:
                    return 0
                if not self._tests_existence_of(kids[0], key):
                    return 0
                guards += 1
            elif t in (
                "while_statement", "until_statement", "for_statement", "c_style_for_statement",
                "case_statement", "else_clause", "elif_clause", "function_definition",
                "subshell", "pipeline", "negated_command",
            ):  # fmt: skip
                return 0
            n = p
        return guards

    def _tests_existence_of(self, node, key: str) -> bool:
        if node.type != "test_command":
            return False
        ops = self.test_text_ops(node)
        return (
            len(ops) == 1
            and ops[0][0] in ("-e", "-f", "-d", "-s", "-L", "-h")
            and not ops[0][2]
            and self.resolve(ops[0][1]).key() == key
        )

    def drop_fix(self, cmd, operand, nops: int) -> FixTemplate | None:
        if nops > 1 and operand is not None:
            s = self._c(operand.start_byte)
            e = self._c(operand.end_byte)
            # take the space before the operand
            while s > 0 and self.text[s - 1] in " \t":
                s -= 1
            return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))
        node = cmd
        if node.parent is not None and node.parent.type == "redirected_statement":
            node = node.parent
        parent = node.parent
        if parent is not None and parent.type == "list":
            kids = [c for c in parent.children if c.type not in STATEMENT_SKIP]
            if len(kids) == 3:
                left, op, right = kids
                if left.id == node.id:
                    s, e = self._c(left.start_byte), self._c(right.start_byte)
                else:
                    s, e = self._c(left.end_byte), self._c(right.end_byte)
                if op.type == "||" and left.id == node.id:
                    return None
                return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))
            return None
        s, e = self._c(node.start_byte), self._c(node.end_byte)
        # a whole statement: swallow a following ';' and its line if alone on it
        t = self.text
        j = e
        while j < len(t) and t[j] in " \t":
            j += 1
        if j < len(t) and t[j] == ";" and (j + 1 >= len(t) or t[j + 1] != ";"):
            j += 1
            while j < len(t) and t[j] in " \t":
                j += 1
            e2 = j
        else:
            e2 = e
        ls = t.rfind("\n", 0, s) + 1
        le = t.find("\n", e2)
        le = len(t) if le < 0 else le
        if self.offmap is None and t[ls:s].strip() == "" and t[e2:le].strip() == "":
            return FixTemplate(
                "drop the removal of the lock file", (Edit(ls, min(le + 1, len(t)), ""),)
            )
        if e2 > e:
            return FixTemplate("drop the removal of the lock file", (Edit(s, e2, ""),))
        # preceded by a separator: take "; " before it
        k = s
        while k > 0 and t[k - 1] in " \t":
            k -= 1
        if k > 0 and t[k - 1] == ";":
            return FixTemplate("drop the removal of the lock file", (Edit(k - 1, e, ""),))
        return FixTemplate("drop the removal of the lock file", (Edit(s, e, ""),))

    def find_(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if not any(a in ("-delete",) for a in argt) and not (
            "-exec" in argt and any(a in ("rm", "rmdir") for a in argt)
        ):
            return
        start = [a for a in args[:1] if not _txt(a).startswith("-")]
        age = any(
            a in ("-mmin", "-mtime", "-amin", "-atime", "-newer", "-cmin", "-ctime") for a in argt
        )
        if not start:
            return
        path = self.resolve(start[0])
        name = None
        for i, s in enumerate(argt):
            if s in ("-name", "-iname") and i + 1 < len(args):
                name = self.resolve(args[i + 1])
        if name is not None:
            path = PathExpr(
                _merge(list(path.parts) + [Part(PartKind.LIT, "/")] + list(name.parts)), path.text
            )
        # an age test breaks a lock only when the find aims at one (the lock itself, a
        # lock-like name or directory): a job's own pruning of its tree is not a breaker
        if age and path.key() not in self.acq_keys and not lockish_text(path.render()):
            age = False
        saved = self.stale
        if age:
            self.stale = ("age", None)
        is_glob = name is not None and "*" in name.render()
        self.add_removal(cmd, path, None, 1, pos, is_glob=is_glob)
        self.stale = saved

    # ------------------------------------------------------------------ writes / creation
    def redirect_writes(self, redirects, pos: Pos, cmd, name: str = "") -> None:
        for r in redirects:
            self.check_write_redirect(r, pos, cmd, name)

    def check_write_redirect(self, r, pos: Pos, cmd=None, name: str = "") -> None:
        info = self.redirect_info(r)
        if not info:
            return
        fd, op, dest = info
        if dest is None or fd not in (None, "1", "2") or op not in (">", ">|", "&>", ">>", "&>>"):
            return
        d = _txt(dest)
        if d.startswith("/dev/") or d.startswith("&") or dest.type == "process_substitution":
            return
        path = self.resolve(dest)
        node = cmd if cmd is not None else r
        key = path.key()
        if (
            self.stale is not None
            and op in (">", ">|", "&>")
            and (self.stale[1] is None or self.stale[1] == key)
            and lockish_text(path.render())
        ):
            self.add_removal(node, path, None, 1, pos, overwrite=True)
            if op != "&>":
                self.pid_file_acquire(path, node, key)  # ... and taken over with `echo $$ >`
            return
        if (
            op in (">", "&>")
            and self.noclobber
            and (pos.tested or self._status_pos(pos) is not None)
        ):
            if self.maybe_probe(node, path, pos, None):
                return
            p = pos if pos.tested else self._status_pos(pos)
            self.existence(node, "noclobber >", path, p)
            return
        if op in (">", ">|", "&>") and name == ":" and self.maybe_probe(node, path, pos, None):
            return
        # an append adds to a file that may well exist: not the creation half of a lock
        if op in (">>", "&>>"):
            self.created_path(path, node, pos, guard=False)
        else:
            self.created_path(path, node, pos, child=self._records_child(cmd, name))

    def _records_child(self, cmd, name: str) -> bool:
        if cmd is None or name not in ("echo", "printf"):
            return False
        words = [_txt(a).strip("\"'") for a in self.cmd_args(cmd)]
        words = [w for w in words if w not in ("-n", "%s", "%s\\n", "%d", "%d\\n")]
        return words in (["$!"], ["${!}"])

    def created_path(
        self,
        path: PathExpr,
        node,
        pos: Pos,
        guard: bool = True,
        directory: bool = False,
        child: bool = False,
    ) -> None:
        if name_probe := self.maybe_probe(node, path, pos, None):
            return name_probe
        self.facts.created.append(path)
        if not guard:
            return
        if not self.check_then_create(path, node, directory, child):
            self.pid_file_acquire(path, node, path.key())

    _ORDERED_VAR = re.compile(r"\$\{?(\w+)\}?\"?\s*(?:-gt|-ge|>)\s")

    def _age_var_test(self, txt: str) -> bool:
        """`[ "$AGE" -gt "$TIMEOUT" ]` of a variable computed from a file's time."""
        return any(m.group(1) in self.age_vars for m in self._ORDERED_VAR.finditer(txt))

    def check_then_create(self, path: PathExpr, node, directory=False, child=False) -> bool:
        """A creation of ``path`` that a test of it leading to a skip/exit came before (a
        directory test `-d` guards only a directory's creation, `[ -d D ] && exit; mkdir D`):
        the acquire of a test-then-create lock.  True when it is one.  ``child``: the file
        records the PID of a child just started (`echo $! > F`); a test that only stops the
        old one first (`[ -f F ] && kill "$(cat F)"`, a restart) decides nothing then."""
        key = path.key()
        for c in self.cte:
            tkey, tnode, order, done = c[0], c[1], c[2], c[3]
            if (c[6] == "-d") != directory and c[6] != "-e":
                continue
            if child and c[4] is None:
                continue
            if tkey == key and not done[0]:
                done[0] = True
                busy = c[4]
                acq = Acquire(
                    LockKind.EXISTENCE,
                    "test-then-create",
                    path,
                    self.span(node),
                    check_then_create=True,
                    test_span=self.span(tnode),
                )
                acq.busy = busy
                self.loser_exits[id(acq)] = c[5]
                if re.search(r"\$(?:\$|!|\{[$!]\}|\{?BASHPID\b)", _txt(node)):
                    self.pid_written.add(id(acq))  # `echo $$ > F`: a PID record, no marker
                if self.facts.init_script and "pid" in path.render().lower():
                    acq.service_record = True
                idx = self.add_acquire(acq)
                if idx is not None:
                    self.held.append(idx)
                    self.cte_acqs.append(idx)
                    self.acq_order[idx] = order  # the busy branch runs at the test
                    self.made_at[id(acq)] = self.order
                return True
        return False

    def pid_file_acquire(self, path: PathExpr, node, key: str) -> None:
        """`kill -0 "$(cat F)" && exit 1` (or a `while kill -0 ...` wait), then `echo $$ > F`:
        the PID written after a liveness test of the PID stored in the same file decided the
        run is a PID-file lock."""
        if node.type != "command" or self.cmd_name(node) not in ("echo", "printf"):
            return
        if not re.search(r"\$(\$|\{\$\}|BASHPID\b|\{BASHPID\})", _txt(node)):
            return
        span = self.span(node)
        if not any(
            c.consequential
            and c.pid_file is not None
            and c.pid_file.key() == key
            and c.span.start < span.start
            for c in self.facts.liveness
        ):
            return
        if any(a.path is not None and _covers(a.path.key(), key) for a in self.facts.acquires):
            return  # the lock itself, or the PID kept inside a lock directory (`mkdir L`)
        test = self.file_tests.get(key)
        if test is not None and not self.in_trap:
            # `[ -f F ]` is part of the same guard (`is_lock() { [ ! -f F ] && return 1;
            # pgrep -F F; }`): the name is tested, then created
            acq = Acquire(
                LockKind.EXISTENCE,
                "test-then-create",
                path,
                span,
                check_then_create=True,
                test_span=self.span(test),
            )
        else:
            acq = Acquire(LockKind.PIDFILE, "pid file", path, span, truncating=True)
        if acq.busy is None and key in self.alive_busy:
            acq.busy = self.alive_busy[key]  # `kill -0 "$(cat F)" && exit 0`: the skip
            self.loser_exits[id(acq)] = True
        acq.service_record = self.facts.init_script
        self.pid_made.add(id(acq))
        self.add_acquire(acq)

    # ------------------------------------------------------------------ tests
    def test_text_ops(self, node) -> list[tuple[str, object, bool]]:
        """(operator, operand node, negated) of unary file tests in a test command; negated
        when an odd number of `!` wrap the test (`[ ! -e F ]`, `[[ ! -f F ]]`)."""
        out = []
        # (node, negation, the negation outside the `!`s that lead to it)
        stack = [(node, False, False)]
        while stack:
            n, neg, base = stack.pop()
            if n.type == "unary_expression":
                op = n.child_by_field_name("operator")
                kids = [c for c in n.named_children if c.type != "test_operator"]
                if op is None and n.children and n.children[0].type == "!":
                    stack.extend((k, not neg, base) for k in kids)
                elif op is not None and _txt(op) == "!":
                    stack.extend((k, not neg, base) for k in kids)
                elif op is not None and kids:
                    arg = kids[-1]
                    logical = self._logical_parts(arg)
                    if logical is not None:
                        # tree-sitter-bash reads `! -z X -a -d Y` as `!(-z (X -a -d Y))`;
                        # test(1) binds `!` and `-z` tighter: `(! -z X) -a (-d Y)`
                        left, right = logical
                        out.append((_txt(op), left, neg))
                        stack.append((right, base, base))
                    else:
                        out.append((_txt(op), arg, neg))
                continue
            if n.type == "parenthesized_expression":
                stack.extend((k, neg, neg) for k in n.named_children)
                continue
            stack.extend((k, neg, neg) for k in n.named_children)
        return out

    @staticmethod
    def _logical_parts(node):
        """(left, right) of a binary test joined by `-a`/`-o`/`&&`/`||`, else None."""
        if node.type != "binary_expression":
            return None
        kids = node.children
        ops = [c for c in kids if _txt(c) in ("-a", "-o", "&&", "||")]
        named = [c for c in node.named_children if c.type != "test_operator"]
        if not ops or len(named) < 2:
            return None
        return named[0], named[-1]

    def test_cmd(self, node, pos: Pos) -> None:
        ops = self.test_text_ops(node)
        txt = _txt(node)
        negated = txt.lstrip("[ ").startswith("!") or pos.negated
        found = [(o, self.resolve(a), a, neg) for o, a, neg in ops]
        for o, a, neg in ops:
            self._liveness_var_test(node, o, a, neg, pos)
        self.liveness_count_test(node, txt, txt.lstrip("[ ").startswith("!"), pos)
        self._file_test(node, found, txt, pos, negated)

    def bracket_test(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        txt = _txt(cmd)
        neg = "!" in argt[:1] or pos.negated
        found = []
        for i, s in enumerate(argt):
            if s in ("-e", "-f", "-d", "-s", "-L", "-h", "-r") and i + 1 < len(args):
                inner = (argt[i - 1] == "!") if i > 0 else False
                found.append((s, self.resolve(args[i + 1]), args[i + 1], inner))
            elif s in ("-z", "-n") and i + 1 < len(args):
                inner = (argt[i - 1] == "!") if i > 0 else False
                self._liveness_var_test(cmd, s, args[i + 1], inner, pos)
        self.liveness_count_test(cmd, " ".join(argt), "!" in argt[:1], pos)
        self._file_test(cmd, found, txt, pos, neg)

    def _file_test(self, node, found, txt: str, pos: Pos, negated: bool) -> None:
        # liveness: [ -d /proc/$pid ]
        m = re.search(r"/proc/\$\{?(\w+)\}?", txt)
        if m and re.search(r"-[de]\b", txt) and "/fd/" not in txt:
            # the `!` of the /proc test itself: `[ ! -z "$pid" -a -d /proc/$pid ]` negates
            # only the -z
            own = [neg for o, _p, a, neg in found if o in ("-d", "-e") and "/proc/" in _txt(a)]
            if own:
                negated = own[0]
            self.liveness(node, m.group(1), pos, test_true_alive=not negated)
        elif "/proc/$(" in txt or "/proc/`" in txt:
            for op, _path, a, _neg in found:
                if op not in ("-d", "-e") or "/proc/" not in _txt(a):
                    continue
                stack = [a]
                while stack:
                    n = stack.pop()
                    if n.type == "command_substitution":
                        src = self.pid_source(n)
                        if src is not False:
                            self.liveness_file(node, src, pos, True, negated=negated)
                        break
                    stack.extend(n.named_children)
        if re.search(r"-ef\b", txt) or re.search(r"%i", txt):
            self.inode_recheck = True
        if (AGE_TEST.search(txt) or self._age_var_test(txt)) and pos.tested:
            br = pos.on_success
            if br is not None:
                self._pending_stale_success = ("age", None)
        for op, path, _a, negated in found:
            if op not in ("-e", "-f", "-s", "-L", "-h", "-d"):
                continue
            if op in ("-e", "-f"):
                self.file_tests.setdefault(path.key(), node)
            if not pos.tested:
                continue
            # the branch taken when the file exists (a `!` outside the test, `! [ -e F ]`,
            # has already swapped the branches of ``pos``; only the test's own `!` counts)
            exists_br = pos.on_fail if negated else pos.on_success
            if exists_br is None:
                continue
            # $? when that branch starts: `test ! -f L || exit` exits 1, `[ -f L ] && exit` 0.
            # A branch that falls through to the rest of the script shares it with the run
            # that creates: an `if ...; then exit; fi` there is another decision
            busy = self.branch_outcome(
                exists_br,
                int(negated) ^ int(pos.negated),
                node,
                nested=not exists_br.fallthrough,
            )
            if (
                (busy is None or not busy.ends_run)
                and not negated
                and pos.chain_success is not None
                and exists_br.stmts
                and re.match(r"\s*(!\s*)?(kill|ps|pgrep|\[|test)\b", _txt(exists_br.stmts[0][0]))
            ):
                # `[ -e L ] && kill -0 "$(cat L)"` as a condition: the branch is the `then`
                exists_br = pos.chain_success
                busy = self.branch_outcome(exists_br, 0, node)
            elif (
                (busy is None or not busy.ends_run)
                and not negated
                and pos.chain_success is not None
                and exists_br.stmts
                and all(
                    self.classify_busy_stmt(n)[0] in ("zero", "durable") for n, _ in exists_br.stmts
                )
            ):
                # `[ -e L ] && echo running && exit 0`: the message succeeds, so the chain
                # goes on to the exit
                exists_br = Branch(
                    exists_br.stmts + pos.chain_success.stmts,
                    0,
                    pos.chain_success.fallthrough,
                    pos.chain_success.tail,
                    pos.chain_success.frame,
                )
                busy = self.branch_outcome(exists_br, 0, node)
            if exists_br.fallthrough:
                if busy is None or not busy.ends_run:
                    continue
            elif exists_br.stmts and busy is None:
                # a retry loop or a takeover (a liveness or age test, a kill, then remove) is
                # still a guard; removing the old file and going on (`[ -f F ] && rm -f F`)
                # decides nothing
                t = " ".join(_txt(n) for n, _ in exists_br.stmts[:20])
                if not re.search(r"\b(sleep|continue|exit|return|kill|ps|pgrep)\b|/proc/", t):
                    if not AGE_TEST.search(t):
                        continue
            elif busy is None or (not busy.ends_run and not self._branch_exits(exists_br)):
                continue
            exits = busy is not None or bool(
                re.search(r"\b(exit|return)\b", " ".join(_txt(n) for n, _ in exists_br.stmts[:20]))
            )
            self.cte.append((path.key(), node, self.order, [False], busy, exits, op))
