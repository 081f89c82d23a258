"""The acquires: existence locks (``mkdir``, ``ln``, noclobber ``>``, ``lockfile``-style tools),
probes (create then remove at once), ``mkdir -p`` guards, ``flock`` in both its forms and
OpenWrt's ``lock``.
"""

from __future__ import annotations

import re

from ...model import (
    Acquire,
    BusyBranch,
    Edit,
    FixTemplate,
    LockKind,
    NonExclusiveCreate,
    Part,
    PartKind,
    PathExpr,
    Probe,
)
from ...paths import lockish_text
from ...records import replace
from .data import REMOVERS, Pos, _merge, _txt

# `stat` then `%i` / `-c` later on the line, tried from the line's first `stat` only (see AGE_TEST)
_INODE_TEST = re.compile(
    r"(?m)-ef\b|/proc/\$\$/fd|/dev/fd/|^(?:(?!stat\b)[^\n])*stat\b[^\n]*%i"
    r"|^(?:(?!stat\s+-L\b)[^\n])*stat\s+-L\b.*-c"
)


class Locks:
    """Acquires and probes."""

    def _removes(self, node, key: str) -> bool:
        if node is None:
            return False
        if node.type == "redirected_statement":
            node = node.child_by_field_name("body") or node
        if node.type != "command":
            return False
        name, args, _ = self.unwrap(node)
        if name not in REMOVERS:
            return False
        return any(self.resolve(a).key() == key for a in args if not _txt(a).startswith("-"))

    def maybe_probe(self, cmd, path: PathExpr, pos: Pos, create_text_span) -> bool:
        nxt = self._first_success_cmd(pos)
        if nxt is None or not self._removes(nxt, path.key()):
            return False
        if self._dedupe(("probe", cmd.start_byte, path.key())):
            fix = self._probe_fix(cmd, nxt, path)
            self.facts.probes.append(Probe(path, self.span(cmd), fix))
        return True

    def _probe_fix(self, create, remove, path: PathExpr) -> FixTemplate | None:
        edits = []
        for c in (create, remove):
            if c.type == "redirected_statement":
                c = c.child_by_field_name("body") or c
            args = []
            if c.type == "command":
                args = self.cmd_args(c)
            hit = None
            for a in args:
                if self.resolve(a).key() == path.key():
                    hit = a
            if hit is None and create.parent is not None:
                for r in create.parent.children if create.parent else []:
                    if r.type == "file_redirect":
                        info = self.redirect_info(r)
                        if (
                            info
                            and info[2] is not None
                            and self.resolve(info[2]).key() == path.key()
                        ):
                            hit = info[2]
            if hit is None:
                return None
            e = self._c(hit.end_byte)
            if hit.type == "string":
                e -= 1
            edits.append(Edit(e, e, ".$$"))
        return FixTemplate("append `.$$` to the probe's name", tuple(edits))

    def existence(
        self, cmd, mechanism: str, path: PathExpr, pos: Pos, fail_status: int = 1
    ) -> int | None:
        acq = Acquire(LockKind.EXISTENCE, mechanism, path, self.span(cmd))
        acq.busy = self.busy_of(pos, cmd, fail_status)
        self.loser_exits[id(acq)] = acq.busy is not None or (
            pos.on_fail is not None and not pos.retry and self._branch_exits(pos.on_fail)
        )
        br = pos.on_fail
        # a skip (status 0 or EX_TEMPFAIL), a retry loop or a takeover reads as a lock; an
        # error exit (`mkdir "$OUT" || exit 1`) only with a lock-like name or a later removal
        skipping = (
            br is not None
            and not br.fallthrough
            and (acq.busy is None or (acq.busy.status in (0, 75) and self._branch_exits(br)))
        )
        if (
            br is not None
            and not br.fallthrough
            and br.stmts
            and all(_txt(n).strip() in (":", "true") for n, _ in br.stmts)
        ):
            self.facts.created.append(path)  # `mkdir D ||:`: the failure is ignored
            return None
        if br is not None and br.stmts and self._makes_instead(br, path):
            # `ln -s A D || cp A D`: the failure branch makes the same name another way
            self.facts.created.append(path)
            return None
        ret = (
            re.match(r"\s*(?:\{\s*)?return(?:\s+(\d+))?\s*(?:[;}]|$)", _txt(br.stmts[0][0]))
            if br is not None and not br.fallthrough and br.stmts
            else None
        )
        if (
            ret is not None
            and (ret.group(1) is None or int(ret.group(1)) not in (0, 75))
            and (acq.busy is None or not acq.busy.ends_run)
            and mechanism in ("mkdir", "ln", "noclobber >")
            and not lockish_text(path.render().rsplit("/", 1)[-1])
        ):
            # `ln -s "$cached" "$f" || return 1` in a helper whose caller falls back to other
            # work: an error return, not a busy branch
            self.facts.created.append(path)
            return None
        strong = pos.retry or skipping
        weak = not strong and mechanism in ("mkdir", "ln", "noclobber >")
        if (
            self.facts.init_script
            and lockish_text(path.render())
            and "pid" in path.render().lower()
        ):
            acq.service_record = True
        idx = self.add_acquire(acq)
        if idx is not None and weak:
            self.weak.add(idx)
        if (
            idx is not None
            and br is not None
            and br.fallthrough
            and not pos.retry
            and mechanism in ("mkdir", "ln", "noclobber >")
        ):
            self.gates.add(idx)
        if idx is not None:
            self.held.append(idx)
        return idx

    def mkdir_(self, cmd, args, pos: Pos, redirects) -> None:
        argt = [_txt(a) for a in args]
        parents = (
            any(a.startswith("-") and not a.startswith("--") and "p" in a for a in argt)
            or "--parents" in argt
        )
        ops = []
        skip = False
        for a, s in zip(args, argt, strict=False):
            if skip:
                skip = False
                continue
            if s in ("-m", "--mode"):
                skip = True
                continue
            if s.startswith("-"):
                continue
            ops.append(a)
        for a in ops:
            path = self.resolve(a)
            if parents:
                self.facts.dirs_made.append(path)
                if len(ops) == 1 and (pos.tested or pos.retry or self._status_tested_next(pos)):
                    self.mkdir_p_guard(cmd, a, path, pos if pos.tested else self._status_pos(pos))
                continue
            if self.maybe_probe(cmd, path, pos, None):
                continue
            if pos.tested or pos.retry or self._status_tested_next(pos):
                p = pos if pos.tested else self._status_pos(pos)
                self.existence(cmd, "mkdir", path, p)
            elif self.set_e:
                n = len(self.facts.acquires)
                self.created_path(path, cmd, pos, directory=True)
                self.facts.created.pop()
                if len(self.facts.acquires) == n:
                    self.sete_mkdirs.append((cmd, path, pos, self.order))
            else:
                self.created_path(path, cmd, pos, directory=True)

    def mkdir_p_guard(self, cmd, operand, path: PathExpr, pos: Pos) -> None:
        """`mkdir -p L || exit`, `if ! mkdir -p L; then ...`: `-p` succeeds on an existing
        directory, so the branch its failure leads to never runs (LCK109) - when that branch
        reads as a busy branch (a skip, a retry, or an exit with a lock-like name); finish()
        drops the directories that hold other files or locks."""
        if path.has_unique:
            return
        br = pos.on_fail
        busy = self.busy_of(pos, cmd, 1)
        if not pos.retry:
            if br is None or br.fallthrough or not br.stmts:
                return
            if busy is None or not busy.ends_run:
                return
            skip = busy.status in (0, 75)
            if not skip and not lockish_text(path.render().rstrip("/").rsplit("/", 1)[-1]):
                return  # `mkdir -p "$OUT" || exit 1`: an output directory that cannot be made
        self.mkdir_p_guards.append(
            (
                NonExclusiveCreate(
                    path,
                    self.span(cmd),
                    "mkdir -p",
                    "-p",
                    busy=busy,
                    function=self._frame_name() or None,
                ),
                self._c(cmd.end_byte),
            )
        )

    def ln_(self, cmd, args, pos: Pos) -> None:
        ops = [a for a in args if not _txt(a).startswith("-")]
        if len(ops) < 2:
            return
        path = self.resolve(ops[-1])
        if any(re.fullmatch(r"-\w*f\w*|--force", _txt(a)) for a in args):
            self.facts.created.append(path)  # ln -f replaces the name: it never fails on it
            return
        if self.maybe_probe(cmd, path, pos, None):
            return
        if pos.tested or self._status_tested_next(pos):
            p = pos if pos.tested else self._status_pos(pos)
            self.existence(cmd, "ln", path, p)

    def lockfile_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = []
        age = False
        skip = False
        for i, (a, s) in enumerate(zip(args, argt, strict=False)):
            if skip:
                skip = False
                continue
            if name == "lockfile" and s.startswith("-l"):
                age = True
                if s == "-l":
                    skip = True
                continue
            if name == "lockfile" and s in ("-r", "-s"):
                skip = True
                continue
            if name == "lockfile-create" and s in ("-r", "--retry", "-p", "--use-pid"):
                skip = s in ("-r", "--retry")
                continue
            if name == "shlock":
                if s == "-f" and i + 1 < len(args):
                    ops.append(args[i + 1])
                    skip = True
                elif s == "-p":
                    skip = True
                continue
            if name == "dotlockfile" and s in ("-r", "-p"):
                skip = s == "-r"
                continue
            if s.startswith("-"):
                continue
            ops.append(a)
        for a in ops[:1]:
            p = pos
            if not pos.tested and self._status_pos(pos) is not None:
                p = self._status_pos(pos)
            if name == "lockfile" and "-!" in argt and p.tested:
                # `lockfile -!` inverts its status: `if lockfile -! -r0 L; then <busy>; fi`
                p = replace(p, on_fail=p.on_success, on_success=p.on_fail)
            path = self.resolve(a)
            if name == "lockfile-create" and not path.key().endswith(".lock"):
                path = PathExpr(_merge([*path.parts, Part(PartKind.LIT, ".lock")]), path.text)
            idx = self.existence(cmd, name, path, p, 1)
            if idx is not None and age:
                self.facts.acquires[idx].age_breaker = self.span(cmd)

    # ------------------------------------------------------------------ flock
    def flock_(self, cmd, args, pos: Pos, prefixes, redirects) -> None:
        argt = [self._arg_text(a) for a in args]
        nonblocking = False
        conflict = None
        conflict_node = None
        close = False
        unlock = False
        has_c = False
        i = 0
        operands = []
        while i < len(args):
            s = argt[i]
            if operands:
                operands.append(args[i])
                i += 1
                continue
            if s in ("-n", "--nb", "--nonblock"):
                nonblocking = True
            elif s in ("-w", "--wait", "--timeout"):
                nonblocking = True
                i += 1
            elif s.startswith("--timeout=") or s.startswith("--wait="):
                nonblocking = True
            elif s in ("-E", "--conflict-exit-code"):
                if i + 1 < len(args):
                    conflict_node = args[i + 1]
                    conflict = self.number_of(argt[i + 1])
                i += 1
            elif s.startswith("--conflict-exit-code="):
                conflict = self.number_of(s.split("=", 1)[1])
            elif s in ("-c", "--command"):
                has_c = True
                i += 1
            elif s in ("-o", "--close"):
                close = True
            elif s in ("-u", "--unlock"):
                unlock = True
            elif (
                s.startswith("-") and not s.startswith("--") and len(s) > 1 and not s[1:].isdigit()
            ):
                flags = s[1:]
                j = 0
                while j < len(flags):
                    f = flags[j]
                    if f == "n":
                        nonblocking = True
                    elif f == "u":
                        unlock = True
                    elif f == "o":
                        close = True
                    elif f == "c":
                        has_c = True
                        if j == len(flags) - 1:
                            i += 1
                        break
                    elif f in ("w", "E"):
                        rest = flags[j + 1 :]
                        if f == "w":
                            nonblocking = True
                        if rest:
                            if f == "E":
                                conflict = self.number_of(rest)
                        else:
                            if f == "E" and i + 1 < len(args):
                                conflict_node = args[i + 1]
                                conflict = self.number_of(argt[i + 1])
                            i += 1
                        break
                    j += 1
            elif s.startswith("--"):
                pass
            else:
                operands.append(args[i])
            i += 1
        if not operands:
            return
        if unlock:
            m = re.fullmatch(r"\"?\$?\{?(\w+)\}?\"?", _txt(operands[0]))
            if m:
                key = m.group(1) if m.group(1).isdigit() else "$" + m.group(1)
                if key in self.fds:
                    self.fds[key].locks.clear()
            return
        first = operands[0]
        ft = argt[args.index(first)] if first in args else _txt(first)
        fdkey = None
        m = re.fullmatch(r"\"?\$\{?(\w+)\}?\"?", ft)
        if ft.isdigit():
            fdkey = ft
        elif m and m.group(1) in self.fdvars:
            fdkey = "$" + m.group(1)
        fd_form = fdkey is not None and len(operands) == 1 and not has_c
        name_node = cmd.child_by_field_name("name")
        ins = self._c(name_node.end_byte) if name_node is not None else self._c(cmd.start_byte)
        if "exec" in prefixes or "command" in prefixes or "sudo" in prefixes:
            # the flock word is an argument: insert after it
            for a in self.cmd_args(cmd):
                if self.cmd_name_word(a) == "flock":
                    ins = self._c(a.end_byte)
                    break
        cfix = FixTemplate("add -E {code}", (Edit(ins, ins, " -E {code}"),))
        if fd_form:
            info = self.fds.get(fdkey)
            acq = Acquire(
                LockKind.FLOCK,
                "flock",
                info.path if info else None,
                self.span(cmd),
                open_span=info.span if info else None,
                truncating=info.truncating if info else False,
                nonblocking=nonblocking,
                conflict_code=conflict,
            )
            acq.inode_recheck = self._inode_recheck_after(pos)
            st = conflict if conflict is not None else 1
            if pos.tested or self._status_pos(pos) is not None:
                p = pos if pos.tested else self._status_pos(pos)
                acq.busy = self.busy_of(p, cmd, st)
                acq.status_handled = True
            else:
                acq.busy = self.busy_of(pos, cmd, st)
                acq.status_handled = not (pos.tail or self.set_e)
            if (
                info is not None
                and info.unchecked
                and nonblocking
                and acq.busy is not None
                and not self._failed_exec_is_loud()
            ):
                # a failed `exec 9>L` leaves 9 closed: flock fails too, and the busy branch runs
                acq.open_failure_is_busy = True
                e = info.span.end
                acq.open_check_fix = FixTemplate(
                    "check the open on its own", (Edit(e, e, " || exit 3"),)
                )
            idx = self.add_acquire(acq)
            if idx is not None and info is not None and not close:
                info.locks.append(idx)
            if idx is not None and close:
                self.flock_close.add(idx)
            return
        # command form: flock [opts] FILE CMD... / flock FILE -c CMD
        path = self.resolve(first)
        acq = Acquire(
            LockKind.FLOCK,
            "flock",
            path,
            self.span(cmd),
            nonblocking=nonblocking,
            command_form=True,
            conflict_code=conflict,
            conflict_code_fix=cfix,
        )
        st = conflict if conflict is not None else 1
        status_fix = None
        if conflict_node is not None:
            status_fix = FixTemplate(
                "exit with {code}",
                (
                    Edit(
                        self._c(conflict_node.start_byte), self._c(conflict_node.end_byte), "{code}"
                    ),
                ),
            )
        if pos.tested or self._status_pos(pos) is not None:
            p = pos if pos.tested else self._status_pos(pos)
            acq.status_handled = True
            if nonblocking:
                acq.busy = self.busy_of(p, cmd, st)
        else:
            propagates = (
                pos.tail or "exec" in prefixes or self.set_e or self._exits_with_status(pos)
            )
            acq.status_handled = not propagates
            if propagates and nonblocking:
                acq.busy = BusyBranch(
                    self.span(cmd), True, st, self.durable_global, False, status_fix
                )
        self.add_acquire(acq)

    def _failed_exec_is_loud(self) -> bool:
        """A failed `exec 9>L` ends the script rather than going on with 9 closed: under sh,
        dash, ksh and other POSIX shells (exec is a special built-in) and in bash's POSIX mode
        (`--posix`, `set -o posix`, POSIXLY_CORRECT).  Only bash goes on; a file without a
        shebang counts as bash only when named `.bash`.  (`set -e` in effect at the `exec`
        is read where the descriptor is opened.)"""
        if self._loud_exec is None:
            text = self.text
            first = text.split("\n", 1)[0]
            m = re.match(r"#!\s*(\S+)((?:\s+\S+)*)", first)
            words = m.group(2).split() if m else []
            interp = m.group(1).rsplit("/", 1)[-1] if m else ""
            if interp == "env":
                rest = [w for w in words if not w.startswith("-") and "=" not in w]
                interp = rest[0].rsplit("/", 1)[-1] if rest else ""
                words = rest[1:]
            if not m:
                interp = "bash" if self.facts.path.endswith(".bash") else ""
            self._loud_exec = (
                interp != "bash"
                or "--posix" in words
                or bool(re.search(r"\bset\s+-o\s+posix\b|\bPOSIXLY_CORRECT\b", text))
            )
        return self._loud_exec

    def _openwrt_lock(self) -> bool:
        """The script uses OpenWrt's (busybox) flock-based `lock F` ... `lock -u F`."""
        if self._openwrt is None:
            # blanks before `lock` stop at a newline: a run of blank lines is read once, not once
            # per line (a newline in them is a line start the `^` branch takes)
            self._openwrt = bool(
                re.search(r"(?m)(?:^|[;&|({]|then|do)[^\S\n]*lock\s+-u\s", self.text)
            )
        return self._openwrt

    def openwrt_lock_(self, cmd, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        ops = [a for a, t in zip(args, argt, strict=False) if not t.startswith("-")]
        if not ops or "-u" in argt:
            return
        nonblocking = "-n" in argt
        acq = Acquire(
            LockKind.FLOCK, "lock", self.resolve(ops[-1]), self.span(cmd), nonblocking=nonblocking
        )
        if nonblocking:
            p = pos if pos.tested else self._status_pos(pos)
            if p is not None:
                acq.busy = self.busy_of(p, cmd, 1)
            else:
                acq.busy = self.busy_of(pos, cmd, 1)
        self.add_acquire(acq)

    def _inode_recheck_after(self, pos: Pos) -> bool:
        txt = " ".join(_txt(n) for n, _ in pos.rest[:6])
        if pos.on_success is not None:
            txt += " " + " ".join(_txt(n) for n, _ in pos.on_success.stmts[:6])
        return bool(_INODE_TEST.search(txt)) or self.inode_recheck
