"""Busy branches and exit status: what runs when an acquire fails and the status the run
leaves with, and ``$?`` / ``rc=$?`` tested by the statement after a command.
"""

from __future__ import annotations

import re

from ...model import BusyBranch, Edit, FixTemplate
from .data import REMOVERS, SIGNALS_EXIT, STATEMENT_SKIP, Branch, Pos, _txt

ZERO_CMDS = {"echo", "printf", ":", "true", "logger", "log", "warn", "info", "say", "msg"}
# notices sent to someone: read, like a message, as succeeding
ZERO_CMDS |= {"mail", "mailx", "sendmail", "notify-send", "wall"}
# helpers that exit by their very name, defined in a file this one is sourced with
# (`die 1 "exists"` in an include): the run ends, with a status not known here
EXIT_HELPERS = {"die", "fatal", "abort", "bail", "error_exit"}


class Branches:
    """Busy branches, and how the status of a command is tested."""

    # ------------------------------------------------------------------ busy branches
    def busy_of(self, pos: Pos, acq_node, fail_status: int) -> BusyBranch | None:
        """The busy branch of an acquire whose status is used as ``pos`` says."""
        if pos.retry:
            return None
        br = pos.on_fail
        if br is None:
            if self.set_e and not pos.tested:
                return BusyBranch(
                    self.span(acq_node), True, fail_status, durable=self.durable_global
                )
            return None
        status = br.status if br.status is not None else fail_status
        if br.fallthrough and br.status == 1:
            status = fail_status
        if pos.negated and br.status is not None:
            status = 0
        return self.branch_outcome(br, status, acq_node)

    def branch_outcome(
        self, br: Branch, status, acq_node, depth: int = 0, nested: bool = True
    ) -> BusyBranch | None:
        busy = self._branch_outcome(br, status, acq_node, depth, nested)
        if busy is not None:
            for node, _ in self._flatten(br.stmts[:60] if br.fallthrough else br.stmts):
                if node.type == "command" and self.cmd_name(node) == "trap":
                    a = [_txt(x).upper() for x in self.cmd_args(node)]
                    if a and a[0] in ("-", "''", '""') and any(x in SIGNALS_EXIT for x in a[1:]):
                        self.untrapping.add(id(busy))
        return busy

    def _branch_outcome(
        self, br: Branch, status, acq_node, depth: int = 0, nested: bool = True
    ) -> BusyBranch | None:
        last = status
        durable = self.durable_global
        first = None
        last_simple = None
        stmts = self._flatten(br.stmts[:60] if br.fallthrough else br.stmts)
        action = self.in_init_action() if self.facts.init_script else None
        lsb = bool(action and "start" in action.split("|"))
        for node, _bg in stmts:
            if first is None:
                first = node
            if node.type == "if_statement" and depth < 3 and nested:
                # `if holder_alive; then echo running; exit 0; fi; <takeover>`: the skip is the
                # nested exit
                nested = self._nested_exit(node, acq_node, depth)
                if nested is not None:
                    return nested
            kind, info = self.classify_busy_stmt(node)
            if kind == "durable":
                durable = True
                last = 0
                last_simple = node
                continue
            if kind == "zero":
                last = 0
                last_simple = node
                continue
            if kind == "status":
                last = info
                last_simple = node
                continue
            if kind == "retry":
                gone = self._removal_then_exit(node, stmts)
                if gone is None:
                    return None
                # the lock removed, then the branch exits without trying again: a skip
                last = gone
                last_simple = node
                continue
            if kind == "exit":
                exit_node, arg, fix = info
                if exit_node is not node or self._helper_durable(self.unwrap(node)[0]):
                    durable = True  # the helper records before it exits (`die` that logs)
                st = last if arg == "" else self.number_of(arg)
                ends = True
                if self.subshells and not self.in_trap:
                    # exit leaves only the subshell: the run ends if the subshell is last or
                    # its failure stops the script
                    sp = self.subshells[-1]
                    ends = sp.tail or (self.set_e and st != 0 and not sp.tested)
                return BusyBranch(self.span(exit_node), ends, st, durable, lsb, fix)
            if kind == "return":
                exit_node, arg, _fix = info
                st = last if arg == "" else self.number_of(arg)
                fr = br.frame
                if fr is not None and depth < 4:
                    cpos = fr.pos
                    if cpos is not None and cpos.tested and cpos.on_fail is not None and st != 0:
                        return self.branch_outcome(cpos.on_fail, st, acq_node, depth + 1)
                    if fr.tail or (
                        self.set_e and st not in (0, None) and cpos is not None and not cpos.tested
                    ):
                        return BusyBranch(self.span(exit_node), True, st, durable, lsb, _fix)
                    if cpos is not None and not cpos.tested and cpos.rest and st == 0:
                        nb = Branch(cpos.rest, 0, fallthrough=True, tail=cpos.tail)
                        return self.branch_outcome(nb, 0, acq_node, depth + 1)
                return BusyBranch(self.span(exit_node), False, st, durable, lsb, _fix)
            # other work
            if br.fallthrough:
                return BusyBranch(self.span(first or acq_node), False, None, durable, lsb)
            last = None
            last_simple = None
        # falls off the end of the branch
        if br.fallthrough or br.tail:
            if br.tail or (br.fallthrough and not br.stmts):
                fix = None
                holder = last_simple.parent if last_simple is not None else None
                if holder is not None and holder.type == "redirected_statement":
                    last_simple, holder = holder, holder.parent
                if (
                    last_simple is not None
                    and holder is not None
                    and holder.type
                    in ("else_clause", "if_statement", "compound_statement", "program")
                    and self.offmap is None
                ):
                    e = self._c(last_simple.end_byte)
                    s0 = self._c(last_simple.start_byte)
                    ls = self.text.rfind("\n", 0, s0) + 1
                    indent = self.text[ls:s0] if not self.text[ls:s0].strip() else ""
                    fix = FixTemplate(
                        "exit with {code}", (Edit(e, e, "\n" + indent + "exit {code}"),)
                    )
                span = self.span(first) if first is not None else self.span(acq_node)
                ends = br.tail
                return BusyBranch(span, ends, last, durable, lsb, fix)
        return BusyBranch(self.span(first or acq_node), False, last, durable, lsb)

    _RETAKE = re.compile(
        r"\b(?:mkdir|ln|touch|flock|lockfile|lockfile-create|dotlockfile|shlock|exec|sleep"
        r"|continue|kill|pkill)\b|\$\$\s*>|\$\{?0\b"
    )

    def _removal_then_exit(self, node, stmts) -> int | None:
        """`rm -f L; exit 0` in a busy branch: a removal that the branch follows with an exit
        and no new attempt (no re-create, retry, kill or re-run of the script) is no
        takeover.  The status the removal leaves ($? for a bare exit; None when unknown)."""
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return None
        name, args, _p = self.unwrap(node)
        if name not in REMOVERS:
            return None
        after = []
        for k, (n, _) in enumerate(stmts):
            if n.start_byte <= node.start_byte < n.end_byte:
                after = [m for m, _ in stmts[k + 1 :]]
                break
        for n in after:
            if self._RETAKE.search(_txt(n)):
                return None
            kind, _info = self.classify_busy_stmt(n)
            if kind == "exit":
                break
            if kind in ("retry", "return", "other"):
                return None
        else:
            return None
        forced = any(re.fullmatch(r"-\w*f\w*|--force", _txt(a)) for a in args)
        return 0 if forced else None

    def _nested_exit(self, node, acq_node, depth: int) -> BusyBranch | None:
        _conds, body, other = self._if_parts(node)
        # $? is 0 where the then-body starts (its condition held); unknown in the else
        branches = [([(c, False) for c in body], 0)]
        if other is not None and other.type == "else_clause":
            branches.append((self.statements(other), None))
        for stmts, start in branches:
            if not stmts or re.search(r"\b(sleep|continue)\b", " ".join(_txt(n) for n, _ in stmts)):
                continue
            last = stmts[-1][0]
            if last.type == "command" and self.cmd_name(last) == "exit":
                busy = self._branch_outcome(Branch(stmts, start), start, acq_node, depth + 1)
                if busy is not None and busy.ends_run:
                    return busy
        return None

    def _flatten(self, stmts) -> list:
        out = []
        for node, bg in stmts:
            if node.type == "compound_statement":
                out.extend(self._flatten(self.statements(node)))
            elif node.type == "list":
                kids = [c for c in node.children if c.type not in STATEMENT_SKIP]
                if len(kids) == 3 and kids[1].type == "&&":
                    out.extend(self._flatten([(kids[0], False), (kids[2], False)]))
                else:
                    out.append((node, bg))
            elif node.type == "redirected_statement":
                body = node.child_by_field_name("body")
                reds = [c for c in node.children if c.type == "file_redirect"]
                if body is not None and body.type == "compound_statement":
                    if any(self._durable_redirect(r) for r in reds):
                        out.append((node, bg))
                    out.extend(self._flatten(self.statements(body)))
                else:
                    out.append((node, bg))
            else:
                out.append((node, bg))
        return out

    def classify_busy_stmt(self, node):
        t = node.type
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            reds = [c for c in node.children if c.type == "file_redirect"]
            d = any(self._durable_redirect(r) for r in reds)
            if body is None:
                return ("durable" if d else "zero", None)
            k, info = self.classify_busy_stmt(body)
            if d and k in ("zero", "status", "other"):
                return ("durable", None)
            return k, info
        if t in ("compound_statement",):
            # classify the last meaningful command; durable if any is durable
            kids = [c for c, _ in self.statements(node)]
            res = ("zero", None)
            dur = False
            for k in kids:
                res = self.classify_busy_stmt(k)
                if res[0] == "durable":
                    dur = True
                if res[0] in ("exit", "return", "retry"):
                    return res
            if dur:
                return ("durable", None)
            return res
        if t == "list":
            res = ("zero", None)
            dur = False
            prev, op = None, None
            for k in node.children:
                if not k.is_named:
                    op = k.type
                    continue
                if k.type in STATEMENT_SKIP:
                    continue
                if op == "||" and prev is not None and _txt(prev).strip() != "false":
                    # `cd "$D" || exit 1`: what follows `||` runs only when that command
                    # fails, which is not how the branch goes on
                    return ("durable", None) if dur else ("other", None)
                res = self.classify_busy_stmt(k)
                if res[0] == "durable":
                    dur = True
                if res[0] in ("exit", "return", "retry"):
                    return res
                prev = k
            return ("durable", None) if dur else res
        if t == "pipeline":
            kids = [c for c in node.named_children if c.type not in STATEMENT_SKIP]
            dur = any(self.classify_busy_stmt(k)[0] == "durable" for k in kids)
            return (
                ("durable", None)
                if dur
                else self.classify_busy_stmt(kids[-1])
                if kids
                else ("zero", None)
            )
        if t in ("while_statement", "until_statement", "for_statement"):
            return ("other", None)
        if t == "if_statement":
            txt = _txt(node)
            if re.search(r"\b(sleep|continue|rm|rmdir|unlink|kill)\b", txt):
                return ("retry", None)  # a retry, or a takeover (remove/kill, then retry)
            if re.search(r">>|\blogger\b|tee\s+-a|systemd-cat", txt):
                return ("durable", None)
            return ("status", None)
        if t == "variable_assignment" or t == "declaration_command":
            return ("status", None)
        if t == "test_command":
            return ("status", None)
        if t != "command":
            return ("other", None)
        name, args, _p = self.unwrap(node)
        argt = [_txt(a) for a in args]
        if name in ("exit", "return"):
            arg = argt[0] if argt else ""
            if arg:
                num = args[0]
                fix = FixTemplate(
                    "exit with {code}",
                    (Edit(self._c(num.start_byte), self._c(num.end_byte), "{code}"),),
                )
            else:
                e = self._c(node.end_byte)
                fix = FixTemplate("exit with {code}", (Edit(e, e, " {code}"),))
            return (name, (node, arg, fix))
        if name in ("sleep", "continue", "usleep"):
            return ("retry", None)
        if name in ("kill", "pkill") or name in REMOVERS:
            return ("retry", None)
        if name in ("logger", "systemd-cat"):
            return ("durable", None)
        if name == "tee" and any(
            a in ("-a", "--append") or (a.startswith("-") and "a" in a and not a.startswith("--"))
            for a in argt
        ):
            return ("durable", None)
        if name in self.functions:
            ex = self._helper_exit(name)
            if ex is not None:
                return ("exit", (node, ex, None))
            if self._helper_durable(name):
                return ("durable", None)
            return ("zero", None)
        if name in ZERO_CMDS:
            return ("zero", None)
        if name in EXIT_HELPERS:
            return ("exit", (node, "?", None))
        if name == "false":
            return ("status", 1)
        return ("status", None)

    def _helper_durable(self, name: str) -> bool:
        fn = self.functions.get(name)
        return fn is not None and bool(
            re.search(r">>|\blogger\b|tee\s+(-\w*a|--append)|systemd-cat", _txt(fn))
        )

    def _helper_exit(self, name: str) -> str | None:
        """The status a helper that exits (`die`, `fail`) ends the run with, as an argument
        for :meth:`number_of`: `exit 3` -> "3"; `exit ${FAIL_CODE:=1}` -> the variable's value
        when the script sets it, else the default; a bare `exit` after a message -> "0";
        "" when the status is the caller's last; None when the helper does not exit."""
        m = re.search(
            r"\bexit\b(?:[ \t]+(\"?\$\{[^}]*\}\"?|[^;\s}&|]+))?", _txt(self.functions[name])
        )
        if m is None:
            return None
        arg = (m.group(1) or "").strip().strip('"')
        d = re.fullmatch(r"\$\{(\w+):?[-=](\d+)\}", arg)
        if d:
            known = self.number_of("$" + d.group(1))
            return str(known) if known is not None else d.group(2)
        if arg:
            return arg
        stmts = self.statements(self._fn_body(self.functions[name]))
        for k, (n, _) in enumerate(stmts):
            if re.match(r"exit\s*$", _txt(n).strip()) and k > 0:
                if self.classify_busy_stmt(stmts[k - 1][0])[0] in ("zero", "durable"):
                    return "0"  # `echo "$*" >&2; exit`: the message's status
        return ""

    def _durable_redirect(self, r) -> bool:
        info = self.redirect_info(r)
        if not info:
            return False
        fd, op, dest = info
        d = _txt(dest)
        if dest is None or d.startswith("/dev/") or d.startswith("&") or d.isdigit():
            return False
        if op in (">>", "&>>"):
            return True
        if op in (">", "&>", ">|") and fd in (None, "1", "2"):
            return True
        return False

    # ------------------------------------------------------------------ lock kinds
    def _first_success_cmd(self, pos: Pos):
        br = pos.on_success
        if br is None:
            if not pos.tested and pos.rest:
                return pos.rest[0][0]
            return None
        if not br.stmts:
            return None
        n = br.stmts[0][0]
        for _ in range(6):
            if n.type == "list" and n.named_children:
                n = n.named_children[0]
            elif n.type == "if_statement":
                conds = self._if_parts(n)[0]
                if not conds:
                    break
                n = conds[-1]
            elif n.type in ("negated_command", "redirected_statement"):
                kids = [c for c in n.named_children if c.type not in STATEMENT_SKIP]
                body = n.child_by_field_name("body") if n.type == "redirected_statement" else None
                n = body or (kids[0] if kids else n)
                if n.type == "redirected_statement" or not kids:
                    break
            else:
                break
        return n

    def _status_tested_next(self, pos: Pos) -> bool:
        return self._status_pos(pos) is not None

    def _status_pos(self, pos: Pos) -> Pos | None:
        """``cmd; if [ $? -ne 0 ]; then ...`` / ``cmd; rc=$?; ...``: a Pos for the command."""
        if pos.tested or not pos.rest:
            return None
        nxt = pos.rest[0][0]
        rest = pos.rest[1:]
        var = self._status_var(nxt)
        if var is not None:
            # `rc=$?`, then commands that leave rc alone (`echo "flock: $rc"`), then its test
            nxt = None
            for k, (n, _) in enumerate(rest[:6]):
                if not self._keeps_var(n, var):
                    nxt, rest = n, rest[k + 1 :]
                    break
            if nxt is None:
                return None
        pat = r"\$\?|\$\{\?\}" if var is None else r"\$\{?" + re.escape(var) + r"\b"
        if var is not None:
            # `(( rc == 75 ))`: a bare name inside arithmetic
            pat += r"|\(\(.*\b" + re.escape(var) + r"\b.*\)\)"
        fr = self.frames[-1] if self.frames else None
        # the test is the sequence's last statement: what follows it is what follows the sequence
        ends = pos.seq_tail and not rest
        if nxt.type == "if_statement":
            conds, body, other = self._if_parts(nxt)
            ctext = " ".join(_txt(c) for c in conds)
            if not re.search(pat, ctext):
                return None
            failing = self._status_test_true_when_failed(ctext)
            if failing is None:
                return None
            then_b = Branch([(c, False) for c in body], 0, tail=ends, frame=fr)
            els = self._else_stmts(other)
            else_b = (
                Branch(els, 1, tail=ends, frame=fr)
                if els is not None
                else Branch(rest, 0, fallthrough=True, tail=ends, frame=fr)
            )
            if failing:
                return Pos(tested=True, on_fail=then_b, on_success=else_b)
            return Pos(tested=True, on_fail=else_b, on_success=then_b)
        if nxt.type == "list":
            kids = [c for c in nxt.children if c.type not in STATEMENT_SKIP]
            if len(kids) == 3 and re.search(pat, _txt(kids[0])):
                failing = self._status_test_true_when_failed(_txt(kids[0]))
                if failing is None:
                    return None
                rb = Branch([(kids[2], False)], 0, tail=ends, frame=fr)
                if (kids[1].type == "&&") == failing:
                    return Pos(tested=True, on_fail=rb)
                return Pos(
                    tested=True,
                    on_success=rb,
                    on_fail=Branch(rest, 0, fallthrough=True, tail=ends),
                )
        return None

    def _exits_with_status(self, pos: Pos) -> bool:
        """The command's status leaves the script right after it: `exit`, `exit $?`, or
        `rc=$?` (then commands that keep rc) and `exit "$rc"`."""
        if pos.tested or not pos.rest:
            return False
        stmts = list(pos.rest[:8])
        ref = r"\$\?|\$\{\?\}"
        var = self._status_var(stmts[0][0])
        if var is not None:
            ref = r"\$\{?" + re.escape(var) + r"\}?"
            stmts = stmts[1:]
            while stmts and self._keeps_var(stmts[0][0], var):
                stmts = stmts[1:]
        if not stmts:
            return False
        t = _txt(stmts[0][0]).strip().rstrip(";").strip()
        if t == "exit":
            return var is None  # a bare exit: the status of the last command
        m = re.fullmatch(r"exit\s+(\S+)", t)
        return m is not None and re.fullmatch(r"\"?(?:" + ref + r")\"?", m.group(1)) is not None

    @staticmethod
    def _status_var(node) -> str | None:
        """The name in `rc=$?` / `local rc=$?` / `declare -i rc=$?`, else None."""
        if node.type == "declaration_command":
            kids = [c for c in node.named_children if c.type == "variable_assignment"]
            if len(kids) != 1:
                return None
            node = kids[0]
        if node.type == "variable_assignment" and re.fullmatch(
            r"\w+=(\"?)\$(\?|\{\?\})\1", _txt(node)
        ):
            return _txt(node.child_by_field_name("name"))
        return None

    def _keeps_var(self, node, var: str) -> bool:
        """A statement between `rc=$?` and its test that cannot change rc: a message, or an
        assignment of another name."""
        t = _txt(node)
        if re.search(r"\b" + re.escape(var) + r"\s*(?:\+|-)?=|\bread\b|\$\(|`", t):
            return False
        if node.type in ("variable_assignment", "declaration_command"):
            return True
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type == "command":
            return self.cmd_name(node) in ZERO_CMDS and "exit" not in t
        return False

    def _status_test_true_when_failed(self, ctext: str) -> bool | None:
        if re.search(r"-ne\s+\"?0|!=\s*\"?0|-gt\s+\"?0", ctext):  # (( x != 0 )) too
            return True
        if re.search(r"\(\(\s*\$?\{?[\w?]+\}?\s*\)\)|\(\(.*>\s*0\s*\)\)", ctext):
            return True  # (( rc )), (( $? )), (( rc > 0 ))
        if re.search(r"-eq\s+\"?0|==?\s*\"?0\b", ctext):
            return False
        if re.search(r"-eq\s+\"?[1-9]|==?\s*\"?[1-9]", ctext):
            return True
        return None

    # ------------------------------------------------------------------ handing the lock on
    _QUIET = ZERO_CMDS | {"[", "[[", "test", "sleep"}
    _BODY_PARENTS = ("program", "if_statement", "elif_clause", "else_clause", "case_item")

    def ends_holding(self, stmt) -> bool:
        """After this statement (the creation of a lock) the run ends holding the lock: only
        messages, tests and exits follow it (`touch L; [ -e L ] && exit 0 || exit 1`): a lock
        helper whose acquire hands the lock to whoever invoked it, released by a separate run
        (`lock.sh -u`).  Not inside a function (its caller is judged) or a loop."""
        if stmt.type not in ("command", "redirected_statement", "list"):
            return False
        node = stmt
        while node.parent is not None:
            parent = node.parent
            if parent.type not in self._BODY_PARENTS:
                return False
            sib = node.next_named_sibling
            while sib is not None:
                if sib.type in ("elif_clause", "else_clause", "case_item"):
                    break  # another branch: not run after this one
                quiet = self._quiet_or_exits(sib)
                if quiet is None:
                    return False
                if quiet:
                    return True
                sib = sib.next_named_sibling
            if parent.type == "case_item":
                parent = parent.parent  # the case_statement
            node = parent.parent if parent.type in ("elif_clause", "else_clause") else parent
            if node.type == "program":
                return True  # falls off the end of the script
        return False

    def _quiet_or_exits(self, node, depth: int = 0) -> bool | None:
        """True: the statement ends the run (an exit, on every branch); False: it only tests or
        tells (the run goes on); None: it does other work."""
        if node.type in STATEMENT_SKIP or node.type == "test_command":
            return False
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            return None if body is None else self._quiet_or_exits(body, depth)
        if node.type == "command":
            name = self.cmd_name(node)
            if name == "exit":
                return True
            return False if name in self._QUIET and "$(" not in _txt(node) else None
        if node.type in ("list", "negated_command"):
            # `[ -e L ] && echo ok`: quiet when every part is; an exit in it may not run
            parts = [self._quiet_or_exits(c, depth) for c in node.named_children]
            return None if None in parts else False
        if node.type != "if_statement" or depth > 3:
            return None
        conds, body, _other = self._if_parts(node)
        branches, has_else = [body], False
        for kid in node.named_children:
            if kid.type == "elif_clause":
                more, elif_body, _ = self._if_parts(kid)
                conds, branches = conds + more, [*branches, elif_body]
            elif kid.type == "else_clause":
                has_else = True
                branches.append([n for n, _ in self.statements(kid)])
        if any(self._quiet_or_exits(c, depth + 1) is None for c in conds):
            return None
        ends = []
        for stmts in branches:
            r = False
            for n in stmts:
                r = self._quiet_or_exits(n, depth + 1)
                if r is None:
                    return None
                if r:
                    break
            ends.append(r)
        return has_else and all(ends)

    def _branch_exits(self, br: Branch) -> bool:
        for n, _ in br.stmts[:20] if br.fallthrough else br.stmts:
            if re.search(r"\b(exit|return)\b", _txt(n)):
                return True
        return False
