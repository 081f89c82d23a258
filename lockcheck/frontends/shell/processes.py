"""PID files and processes: where a PID was read from, liveness tests (``kill -0``, ``ps -p``,
``/proc/$pid``) and whether their result decides anything, kills, and children started in
the background while a lock is held.
"""

from __future__ import annotations

import os
import re

from ...model import Acquire, Background, Kill, LivenessCheck, LockKind, PathExpr
from ...paths import name_words
from .data import Branch, Pos, _txt

_CONSEQUENCE = re.compile(
    r"\b(exit|rm|rmdir|unlink|mkdir|touch|ln)\b|(?<![\d&>])>>?(?![&>])\s*(?!/dev/)"
)

_FILE_CHANGE = re.compile(
    r"\b(rm|rmdir|unlink|mkdir|touch|ln)\b|(?<![\d&>])>>?(?![&>])\s*(?!/dev/)"
)

# functions that stop or report on a service: a liveness test there is not a lock decision
_STOP_WORDS = {"STOP", "STATUS", "KILL", "TERMINATE", "SHUTDOWN", "HALT"}
_PID_WORDS = ("command_substitution", "simple_expansion", "expansion")


class Processes:
    """PID files, liveness tests, kills and background children."""

    def _liveness_output(self, value):
        """`ACTIVE=$(ps -p "$PID" -o cmd | grep job)` or `N=$(ps -Ao pid | grep -w $PID | wc -l)`:
        (the ps command, the pid file, whether the output is a count) when the value is the
        output of a process lookup of a stored PID; tested later with `[ -z "$ACTIVE" ]` or
        `[ "$N" -eq 0 ]`, it decides whether the holder lives."""
        stack = [value]
        while stack:
            n = stack.pop()
            if n.type == "pipeline":
                cmds = [
                    c for c in n.named_children if c.type in ("command", "redirected_statement")
                ]
                bare = [c.child_by_field_name("body") or c for c in cmds]
                wc = bare and bare[-1].type == "command" and self.cmd_name(bare[-1]) == "wc"
                src = self._ps_grep_source(bare[:-1] if wc and self._counts(bare[-1]) else bare)
                if src is not False:
                    counted = any(self._counts(c) for c in bare[1:])
                    return bare[0], src, int(counted)
                if len(bare) == 2 and wc and self._counts(bare[1]):
                    # `ps -p "$(cat F)" | wc -l`: the lines of the process found, and the
                    # header line unless ps is told to leave it out
                    found = self._ps_pid_source(bare[0])
                    if found is not None:
                        return bare[0], found[0], 1 + found[1]
            if n.type == "command" and self.cmd_name(n) == "ps":
                found = self._ps_pid_source(n)
                return (n, found[0], 0) if found is not None else None
            stack.extend(n.named_children)
        return None

    def _ps_pid_source(self, cmd) -> tuple[PathExpr | None, int] | None:
        """`ps -p PID ...` of a stored PID: (its pid file, 1 when ps prints a header line)."""
        if cmd.type != "command" or self.cmd_name(cmd) != "ps":
            return None
        args = self.cmd_args(cmd)
        argt = [_txt(a) for a in args]
        for i, t in enumerate(argt):
            if t in ("-p", "--pid", "-q") and i + 1 < len(args):
                src = self.pid_file_of(args[i + 1])
                if src is not False:
                    quiet = any(
                        w in ("h", "--no-headers", "--no-heading") or re.search(r"=(\s|$)", w)
                        for w in argt
                    )
                    return src, 0 if quiet else 1
        return None

    def _counts(self, c) -> bool:
        """`wc -l` / `grep -c`: the output is a number of lines."""
        if c.type != "command":
            return False
        name, argt = self.cmd_name(c), [_txt(a) for a in self.cmd_args(c)]
        if name == "wc":
            return argt == ["-l"]
        return name == "grep" and any(re.fullmatch(r"-\w*c\w*|--count", t) for t in argt)

    def _liveness_var_test(self, node, op: str, operand, neg: bool, pos: Pos) -> None:
        """`[ -z "$ACTIVE" ]` / `[ -n "$ACTIVE" ]` of a process lookup's output."""
        m = re.fullmatch(r"\"?\$\{?(\w+)\}?\"?", _txt(operand))
        if m is None or m.group(1) not in self.live_vars or op not in ("-z", "-n"):
            return
        ps_cmd, src, _counted = self.live_vars[m.group(1)]
        # true when the holder is dead: an empty lookup (`-z`), unless negated
        self.liveness_file(ps_cmd, src, pos, True, negated=(op == "-z") != neg)

    # a count compared with 0 or 1: true when no process matched (dead) / one did (alive)
    _COUNT_DEAD = {("-eq", 0), ("=", 0), ("==", 0), ("-lt", 1), ("-le", 0), ("-ne", 1), ("!=", 1)}
    _COUNT_ALIVE = {("-ne", 0), ("!=", 0), ("-gt", 0), ("-ge", 1), ("-eq", 1), ("=", 1), ("==", 1)}

    def liveness_count_test(self, node, txt: str, neg: bool, pos: Pos) -> None:
        """`[ "$N" -eq 0 ]` / `[[ $N -gt 0 ]]` of a counted process lookup of a stored PID."""
        m = re.search(
            r"\"?\$\{?(\w+)\}?\"?\s*(-eq|-ne|-gt|-ge|-lt|-le|==?|!=)\s*\"?(\d+)\"?",
            txt,
        )
        if m is None or m.group(1) not in self.live_vars or not self.live_vars[m.group(1)][2]:
            return
        ps_cmd, src, counted = self.live_vars[m.group(1)]
        key = (m.group(2), int(m.group(3)) - (counted - 1))  # less the ps header line
        if key not in self._COUNT_DEAD and key not in self._COUNT_ALIVE:
            return
        self.liveness_file(ps_cmd, src, pos, True, negated=(key in self._COUNT_DEAD) != neg)

    # ------------------------------------------------------------------ processes
    def pid_file_of(self, a) -> PathExpr | None | bool:
        """The pid file an argument's value was read from; False when it is not from a file."""
        node = a
        if node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        src = False
        if node.type == "command_substitution":
            src = self.pid_source(node)
        elif node.type in ("simple_expansion", "expansion"):
            var = _txt(node).strip('${}"')
            if var in self.pidvars:
                src = self.pidvars[var]
        if src and src.key() in self.fifos:
            return False  # read from a pipe the script made and its own child feeds
        return src

    def kill_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if name == "pkill":
            for i, s in enumerate(argt):
                if s in ("-F", "--pidfile") and i + 1 < len(args):
                    sig = "TERM"
                    for t in argt:
                        if re.fullmatch(r"-(\d+|[A-Z]+)", t) and t not in ("-F",):
                            sig = t[1:]
                    path = self.resolve(args[i + 1])
                    if sig == "0":
                        self.liveness_file(cmd, path, pos, True)
                    elif self._dedupe(("kill", cmd.start_byte)):
                        self.facts.kills.append(Kill(self.span(cmd), sig, path))
            return
        sig = "TERM"
        targets = []
        skip = False
        for i, (a, s) in enumerate(zip(args, argt, strict=False)):
            if skip:
                skip = False
                continue
            if s in ("-s", "-n") and i + 1 < len(args):
                sig = argt[i + 1].upper().removeprefix("SIG")
                skip = True
                continue
            if s.startswith("-") and not targets and len(s) > 1:
                if s == "--":
                    continue
                sig = s[1:].upper().removeprefix("SIG")
                continue
            targets.append(a)
        for a in targets:
            src = self.pid_file_of(a)
            if src is False:
                continue
            if sig == "0":
                self.liveness_file(cmd, src, pos, True)
                continue
            if src is not None:
                self.signalled.add((self._frame_name(), src.key()))
            if self._dedupe(("kill", cmd.start_byte)):
                self.facts.kills.append(Kill(self.span(cmd), sig, src))

    def ps_(self, cmd, name, args, pos: Pos) -> None:
        argt = [_txt(a) for a in args]
        if name == "ps":
            for i, s in enumerate(argt):
                target = None
                if s in ("-p", "--pid", "-q") and i + 1 < len(args):
                    target = args[i + 1]
                elif not s.startswith("-") and (i == 0 or argt[i - 1] not in ("-o", "-O")):
                    target = args[i]
                if target is not None:
                    src = self.pid_file_of(target)
                    if src is not False:
                        self.liveness_file(cmd, src, pos, True)
                        break
        elif name == "pgrep":
            for i, s in enumerate(argt):
                if s in ("-F", "--pidfile") and i + 1 < len(args):
                    self.liveness_file(cmd, self.resolve(args[i + 1]), pos, True)

    def ps_grep(self, node, cmds, pos: Pos) -> None:
        """`ps -u "$USER" -opid= | grep -q "^ *$(cat F)$"`: a process listing searched for a PID
        read from a file is a liveness test of that PID, with the last grep's status."""
        bare = [
            c.child_by_field_name("body") or c if c.type == "redirected_statement" else c
            for c in cmds
        ]
        src = self._ps_grep_source(bare)
        if src is not False:
            self.liveness_file(node, src, pos, True)

    def _ps_grep_source(self, bare) -> PathExpr | None | bool:
        """The pid file of `ps ... | grep PID [| grep ...]`, else False."""
        if len(bare) < 2 or any(c.type != "command" for c in bare):
            return False
        if self.cmd_name(bare[0]) != "ps" or self.cmd_name(bare[-1]) != "grep":
            return False
        for c in bare[1:]:
            if self.cmd_name(c) != "grep":
                return False
            stack = [a for a in self.cmd_args(c) if not _txt(a).startswith("-")]
            while stack:
                n = stack.pop()
                src = self.pid_file_of(n) if n.type in _PID_WORDS else False
                if src is not False:
                    return src
                if n.type in ("string", "concatenation"):
                    stack.extend(n.named_children)
        return False

    def _frame_name(self) -> str:
        return self.frames[-1].name if self.frames else ""

    def _liveness_consequential(self, pos: Pos, depth: int, dead: Branch | None = None) -> bool:
        """The result of a liveness test leads to a skip/exit or to creating, removing or
        overwriting a file.  A `return` counts when it skips work of the function, or when the
        caller's use of the function's status does (a status function only reports).  Leaving
        when the process is *dead* (``dead``: that branch) is a check that a daemon is up, not
        a lock decision: there only creating, removing or overwriting counts."""
        for br in (pos.on_fail, pos.on_success):
            if br is None or (br.fallthrough and not br.stmts):
                continue
            t = " ".join(_txt(n) for n, _ in (br.stmts[:3] if br.fallthrough else br.stmts))
            if br is dead:
                if _FILE_CHANGE.search(t):
                    return True
                continue
            if _CONSEQUENCE.search(t):
                return True
            if not re.search(r"\breturn\b", t):
                continue
            other = pos.on_success if br is pos.on_fail else pos.on_fail
            if other is not None and other.fallthrough and other.stmts:
                return True  # the return skips the rest of the function
            fr = br.frame
            if fr is None or fr.pos is None or depth > 3:
                continue
            cpos = fr.pos if fr.pos.tested else self._status_pos(fr.pos)
            if cpos is not None and self._liveness_consequential(cpos, depth + 1):
                return True
        return False

    def liveness(self, node, var: str, pos: Pos, test_true_alive: bool) -> None:
        if var not in self.pidvars:
            return
        self.liveness_file(
            node, self.pidvars[var], pos, test_true_alive, negated=not test_true_alive
        )

    def liveness_file(
        self, node, pid_file, pos: Pos, alive_on_success: bool, negated: bool = False
    ) -> None:
        if not pos.tested:
            # `ps -p "$PID" >/dev/null; if [ $? -eq 0 ]; then exit 1; fi`
            pos = self._status_pos(pos) or pos
        fr = self.frames[-1] if self.frames else None
        if (
            not pos.tested
            and fr is not None
            and fr.last is not None
            and (
                fr.last[0] <= node.start_byte < fr.last[1]
                or (
                    bool(pos.rest)
                    and re.fullmatch(r"return(\s+\"?\$\??\"?)?", _txt(pos.rest[0][0]).strip())
                    is not None
                )
            )
            and fr.pos is not None
            and fr.pos.tested
        ):
            # the check is the function's last command: its status is the function's
            pos = fr.pos
        neg = pos.negated ^ negated
        # the branch taken when the process is dead (`!` already swapped the branches; a test
        # that is true when dead, `[ ! -d /proc/$pid ]`, comes with ``negated``)
        dead = pos.on_success if negated else pos.on_fail
        if pos.tested:
            self.running_service(node, pos.on_fail if negated else pos.on_success)
        consequential = pos.tested and self._liveness_consequential(pos, 0, dead)
        action = self.in_init_action()
        if action and {"status", "stop"} & set(action.split("|")):
            consequential = False  # reporting, or part of stopping the service (LCK108's)
        if any(_STOP_WORDS & set(name_words(f.name)) for f in self.frames):
            consequential = False
        if _STOP_WORDS & set(name_words(os.path.splitext(os.path.basename(self.facts.path))[0])):
            consequential = False  # a stop.sh / kill-job.sh: stopping the holder, LCK108's
        fkey = pid_file.key() if pid_file is not None else None
        if fkey is not None and (self._frame_name(), fkey) in self.signalled:
            consequential = False  # waiting for a process this run has just signalled
        seen = self.live_seen.get(node.start_byte)
        if seen is None:
            chk = LivenessCheck(self.span(node), pid_file, consequential)
            self.live_seen[node.start_byte] = chk
            self.facts.liveness.append(chk)
        elif consequential:
            seen.consequential = True  # a function called from several places
        if pos.tested and consequential and fkey is not None and fkey not in self.alive_busy:
            # the branch taken while the holder lives: the busy branch of a PID-file lock
            alive = pos.on_fail if negated else pos.on_success
            if alive is not None and not alive.fallthrough:
                busy = self.branch_outcome(alive, 1 if neg else 0, node)
                if busy is not None and busy.ends_run:
                    self.alive_busy[fkey] = busy
        if pos.tested:
            key = pid_file.key() if pid_file is not None else None
            # the branch taken when the holder is judged dead
            dead_is_success = neg
            if dead_is_success:
                self._pending_stale_success = ("dead-holder", key)
            else:
                self._pending_stale_fail = ("dead-holder", key)
                # `if kill -0 ...; then exit; fi; rm -f L` : the rest runs only when dead
                if (
                    pos.on_success is not None
                    and self._branch_exits(pos.on_success)
                    and pos.on_fail is not None
                    and pos.on_fail.fallthrough
                    and not pos.chained
                ):
                    # (`[ -f P ] && kill -0 ...` as the condition: what follows also runs
                    # when there is no file at all: the normal acquisition, not a breaker)
                    self.stale_rest = ("dead-holder", key)
            if (
                pos.on_fail is not None
                and not pos.on_fail.fallthrough
                and pos.on_fail.stmts
                and not dead_is_success
            ):
                # `kill -0 $pid || rm -f L`
                self._stale_list_right = ("dead-holder", key)

    def running_service(self, node, alive: Branch | None) -> None:
        """An init script's `start` that finds the service running (`$0 status && exit 0`,
        `kill -0 "$(cat "$PIDFILE")" && exit 0`) and ends the run: the LSB start on a running
        service, whose exit status LCK401/LCK402 judge.  The PID file stays a service record."""
        action = self.in_init_action()
        if alive is None or not action or "start" not in action.split("|"):
            return
        busy = self.branch_outcome(alive, 0, node)
        if busy is None or not busy.ends_run:
            return
        # no path: where the service keeps its PID file is the service's business (a record)
        acq = Acquire(LockKind.PIDFILE, "running-service check", None, self.span(node))
        acq.busy = busy
        acq.service_record = True
        self.add_acquire(acq)

    # ------------------------------------------------------------------ background
    def background_at(self, cmd, how: str) -> None:
        self.last_bg = None
        held = [i for i in self.held]
        for info in self.fds.values():
            held.extend(i for i in info.locks if i not in self.flock_close)
        if not held:
            return
        if self._dedupe(("bg", cmd.start_byte)):
            self.last_bg = Background(self.span(cmd), held[-1], how)
            self.pending_bg.append(self.last_bg)

    def wait_(self, args) -> None:
        """`wait` waits for every child; `wait "$pid"` only for the children whose `$!` was
        kept in the variables named (any other operand: taken as waiting for all)."""
        waited = []
        for a in args:
            m = re.fullmatch(r'"?\$(?:\{(\w+)\}|(\w+|!))"?', _txt(a))
            var = m and (m.group(1) or m.group(2))
            if var == "!":
                waited.append(self.last_bg)
            elif var and var in self.bg_vars:
                waited.append(self.bg_vars[var])
            else:
                self.pending_bg = []
                return
        if not args:
            self.pending_bg = []
        self.pending_bg = [b for b in self.pending_bg if not any(b is w for w in waited)]

    def keep_bg_pid(self, name: str, value) -> None:
        """`KID=$!`: the variable names the last child started in the background."""
        if re.fullmatch(r'"?\$(?:\{!\}|!)"?', _txt(value)):
            self.bg_vars[name] = self.last_bg
        else:
            self.bg_vars.pop(name, None)
