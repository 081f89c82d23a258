"""Processes: pid files read and signalled (liveness tests, kills), stale-lock breakers, and
children started while a lock is held."""

from __future__ import annotations

from ... import lazyre
from ...hints import Any
from ...model import (
    Acquire,
    Background,
    Kill,
    LivenessCheck,
    LockKind,
    PartKind,
    PathExpr,
    Removal,
)
from ...paths import lockish_name
from .calls import PID_PROBES
from .gate import PS_CMD

_SIGNAL_NAMES = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 9: "SIGKILL", 15: "SIGTERM"}


class Processes:
    """Methods of :class:`.locks.Analyzer`."""

    _LISTING = lazyre.compile(r"^\s*(?:\S*/)?(?:pgrep|pidof|ps)\b")

    def _listed_pid_tests(self) -> None:
        """``if pid in subprocess.getoutput("pgrep job").split()``: the stored PID looked up
        in a process listing (pgrep, pidof, ps) is a liveness test."""
        cst = self.cst
        for ifn in self.ifs:
            test = ifn.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test = test.expression
            if not (
                isinstance(test, cst.Comparison)
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn))
            ):
                continue
            if not self._process_listing(test.comparisons[0].comparator):
                continue
            from_file, pid_file = self.pid_source(test.left)
            if from_file:
                # `pid not in listing`: the body is the dead side
                self._liveness(test, pid_file, isinstance(test.comparisons[0].operator, cst.NotIn))

    def _process_listing(self, node: Any, depth: int = 0) -> bool:
        """The output of a command that lists processes (or ``psutil.pids()``), through names
        and method calls."""
        cst = self.cst
        if depth > 3 or node is None:
            return False
        if isinstance(node, cst.Name):
            v = self.lookup(node)
            return (
                v is not None and not isinstance(v, tuple) and self._process_listing(v, depth + 1)
            )
        for c in self.descendants(node, cst.Call):
            if self.call_q(c) in ("psutil.pids", "psutil.process_iter"):
                return True  # the process table itself
            if self.call_q(c) in self._COMMAND_CALLS:
                cmd = self.arg(c, 0, "args")
                if isinstance(cmd, (cst.List, cst.Tuple)) and cmd.elements:
                    cmd = cmd.elements[0].value
                while isinstance(cmd, cst.Call) and isinstance(cmd.func, cst.Attribute):
                    cmd = cmd.func.value  # `"pgrep {0}".format(name)`
                if isinstance(cmd, cst.BinaryOperation):
                    cmd = cmd.left  # `"pgrep %s" % name`
                text = self.const(cmd) if cmd is not None else None
                if isinstance(text, str) and self._LISTING.match(text):
                    return True
        return False

    def _liveness_and_kills(self) -> None:
        self.dead_regions: list[tuple[Any, PathExpr | None]] = []
        self._listed_pid_tests()
        for c in self.calls:
            q = self.call_q(c)
            if q in ("os.kill", "os.killpg"):
                sig = self.arg(c, 1)
                from_file, pid_file = self.pid_source(self.arg(c, 0))
                if not from_file:
                    continue
                sigv = self.const(sig)
                if sigv == 0:
                    self._liveness(c, pid_file)
                else:
                    name = self.code(sig) if sig is not None else "?"
                    name = _SIGNAL_NAMES.get(sigv, name.split(".")[-1])  # `os.kill(pid, 9)`
                    self.facts.kills.append(Kill(self.span(c), name, pid_file))
            elif self._proc_probe(c):
                # os.path.exists(f"/proc/{pid}"), os.access("/proc/%d/stat" % pid, F_OK)
                arg = self.arg(c, 0) if q.startswith("os.") else c.func.value
                from_file, pid_file = self.pid_source(arg)
                if from_file:
                    self._liveness(c, pid_file)
            elif q in self._COMMAND_CALLS and self._ps_command(self.arg(c, 0, "args")):
                # `ps -p PID` / `kill -0 PID` run as a command: the process table asked
                from_file, pid_file = self.pid_source(self.arg(c, 0, "args"))
                if from_file:
                    self._liveness(c, pid_file)
            elif q in PID_PROBES:
                # os.getpgid(pid) / os.getsid(pid) raise ProcessLookupError for a dead PID
                from_file, pid_file = self.pid_source(self.arg(c, 0))
                if from_file and (q == "psutil.pid_exists" or self.enclosing_try(c) is not None):
                    self._liveness(c, pid_file)
            elif q == "psutil.Process":
                from_file, pid_file = self.pid_source(self.arg(c, 0, "pid"))
                if not from_file:
                    continue
                sig = self._psutil_signal(c)
                if sig is not None:
                    self.facts.kills.append(Kill(self.span(sig[0]), sig[1], pid_file))
                elif self.enclosing_try(c) is not None:
                    # psutil.Process(pid) raising NoSuchProcess: a liveness test
                    self._liveness(c, pid_file)
        self._stale_removals()

    _COMMAND_CALLS = (
        "os.popen",
        "os.system",
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "commands.getoutput",
        "commands.getstatusoutput",
    )

    def _ps_command(self, node: Any) -> bool:
        """A command that asks whether a PID lives: ``ps -p PID`` (``ps -o comm= -p``) or
        ``kill -0 PID``, as one string (``%``, ``format``, f-string, a variable) or a list."""
        cst = self.cst
        if isinstance(node, cst.Name):
            v = self.lookup(node)
            return v is not None and not isinstance(v, tuple) and self._ps_command(v)
        if isinstance(node, (cst.List, cst.Tuple)):
            words = [self.const(e.value) for e in node.elements]
            words = [w for w in words if isinstance(w, str)]
            if not words or not node.elements or self.const(node.elements[0].value) != words[0]:
                return False
            prog = words[0].rsplit("/", 1)[-1]
            return (prog == "ps" and any(w.startswith("-") and "p" in w for w in words[1:])) or (
                prog == "kill" and "-0" in words[1:]
            )
        lits = [self.const(n) for n in [node, *self.descendants(node)] if self._is_str(n)] + [
            n.value for n in self.descendants(node, cst.FormattedStringText)
        ]
        return any(isinstance(t, str) and PS_CMD.search(t) for t in lits)

    def _is_str(self, node: Any) -> bool:
        return isinstance(node, (self.cst.SimpleString, self.cst.ConcatenatedString))

    _PROC_TESTS = ("os.path.exists", "os.path.isdir", "os.path.lexists", "os.access", "os.stat")

    def _proc_probe(self, call: Any) -> bool:
        """A test of ``/proc/<pid>`` (or a file in it): the process's liveness."""
        cst = self.cst
        q = self.call_q(call)
        if q in self._PROC_TESTS:
            arg = self.arg(call, 0)
        elif self.method(call) in ("exists", "is_dir") and isinstance(call.func, cst.Attribute):
            arg = call.func.value
        else:
            return False
        if arg is None:
            return False
        if "/proc" in self.code(arg):
            return True
        p = self.path(arg)
        return p is not None and self.key(p).startswith("/proc/")

    def _psutil_signal(self, proc: Any) -> tuple[Any, str] | None:
        """``psutil.Process(pid).terminate()`` (directly or through a variable)."""
        cst = self.cst
        names = {"terminate": "SIGTERM", "kill": "SIGKILL", "send_signal": None}
        targets = [proc]
        par = self.up(proc)
        if isinstance(par, cst.Assign) and len(par.targets) == 1:
            targets.append(par.targets[0].target)
        for c in self.calls:
            m = self.method(c)
            if m not in names or not isinstance(c.func, cst.Attribute):
                continue
            recv = c.func.value
            if recv is proc or any(self._same_ref(recv, t) for t in targets[1:]):
                sig = names[m]
                if sig is None:
                    a = self.arg(c, 0)
                    if a is None or self.const(a) == 0:
                        continue
                    sig = self.code(a).split(".")[-1]
                return c, sig
        return None

    def _liveness(self, call: Any, pid_file: PathExpr | None, negate: bool = False) -> None:
        """``negate``: ``call`` is true when the holder is dead (``pid not in pgrep``)."""
        cst = self.cst
        region: list[Any] = []
        dead: list[Any] = []
        owner = None
        # in an if test
        for a in self.ancestors(call):
            if isinstance(a, cst.UnaryOperation) and isinstance(a.operator, cst.Not):
                negate = not negate
            if isinstance(a, cst.If) and self.within(call, a.test):
                owner = a
                body = list(a.body.body)
                other = []
                if a.orelse is not None:
                    ob = a.orelse.body
                    other = [ob] if isinstance(ob, cst.If) else list(ob.body)
                region = body + other
                dead = body if negate else other
                if not negate and self.find_end(body) is not None:
                    dead = dead + self._after_leaving_test(a, pid_file)
                break
            if isinstance(a, (cst.BaseStatement)):
                break
        if owner is None:
            later = self._tested_later(call)
            if later is not None:
                # `out = os.popen("ps -p %d" % pid).readlines()`, then `if len(out) > 1:`
                owner = later
                region = self._if_region(later)
        if owner is None:
            t = self.enclosing_try(call)
            if t is not None:
                owner = t
                handlers = [s for h in t.handlers for s in h.body.body]
                els = list(t.orelse.body.body) if t.orelse is not None else []
                body = list(t.body.body)
                region = handlers + els + body
                dead = handlers
                # `try: os.kill(pid, 0); os.kill(pid, SIGKILL) / except OSError: pass`: what
                # follows the probe in the try body runs only on a live holder
                k = next((i for i, b in enumerate(body) if self.within(call, b)), len(body))
                alive_part = body[k + 1 :]
                els = alive_part + els
                # `try: os.kill(pid, 0) / except OSError: pass / else: exit()`: the holder
                # judged dead falls through to what follows the try; so it does when the
                # live holder is killed (a takeover either way)
                if (self.find_end(els) is not None or self._signals_in(alive_part)) and not any(
                    self.find_end(list(h.body.body)) is not None for h in t.handlers
                ):
                    dead = dead + self._after_leaving_test(t, pid_file)
        # the statements that run on one outcome only (not a try body the check is part of)
        region_branches = region if not isinstance(owner, cst.Try) else dead + els
        consequential = False
        decision = None
        if owner is not None:
            end = self.find_end(region)
            func = self.func_of(call)
            helper = (
                isinstance(func, cst.FunctionDef)
                and self.entry.get(func.name.value) is None
                and end is not None
                and end.kind == "return"
            )
            if (
                (end is not None and not helper)
                or self._creates_or_removes(region)
                or self._signals_in(region_branches)
            ):
                consequential = True  # it leaves, creates, removes, or kills the holder
            elif helper:
                self._decision = None
                consequential = self._helper_consequential(func)
                decision = self._decision
            for st in dead:
                self.dead_regions.append((st, pid_file))
            if isinstance(owner, cst.Try) and isinstance(func, cst.FunctionDef):
                self._dead_after_raising_helper(owner, func, pid_file)
        else:
            self._decision = None
            consequential = self._returned_to_decider(call)
            decision = self._decision
        # one finding per function and pid file: `pid_exists(pid)` then `Process(pid)` in one
        # helper, or its POSIX and Windows branches, are one judgement of the holder
        func = self.func_of(call)
        seen = self.__dict__.setdefault("_live_by_func", {})
        # helpers tested in one `if`/`elif` chain of their caller are one judgement too
        k = (id(decision or func), self.key(pid_file) if pid_file is not None else None)
        if func is not None and k in seen:
            seen[k].consequential = seen[k].consequential or consequential
            return
        chk = LivenessCheck(self.span(call), pid_file, consequential)
        if func is not None:
            seen[k] = chk
        self.facts.liveness.append(chk)

    def _dead_after_raising_helper(self, t: Any, func: Any, pid_file: PathExpr | None) -> None:
        """``def check(): try: os.kill(pid, 0); raise Locked() / except OSError: ...`` called
        as a statement: the holder judged dead returns, and what the caller does next (up to
        the takeover) runs on a dead holder."""
        end = self.find_end(list(t.body.body))
        if end is None or end.kind not in ("raise", "exit"):
            return
        if self.class_of(func) is None and self.entry.get(func.name.value) is not None:
            return
        for c, _m in self.call_sites(func):
            if self.within(c, func) or not isinstance(self.up(c), self.cst.Expr):
                continue
            sibs, i = self.block_siblings(self.stmt_of(c))
            for st in self._until_takeover(sibs[i + 1 :], pid_file):
                self.dead_regions.append((st, pid_file))

    def _if_region(self, ifn: Any) -> list[Any]:
        """The statements of an ``if``'s body and its ``else``/``elif``."""
        stmts = list(ifn.body.body)
        if ifn.orelse is not None:
            ob = ifn.orelse.body
            stmts += [ob] if isinstance(ob, self.cst.If) else list(ob.body)
        return stmts

    def _tested_later(self, node: Any) -> Any:
        """The ``if`` that tests the name ``node``'s value is assigned to (``v = ...node...``),
        among the next statements of the same block, before ``v`` is bound again."""
        cst = self.cst
        par = node
        while par is not None and not isinstance(par, cst.BaseSmallStatement):
            par = self.up(par)
        if not isinstance(par, cst.Assign) or len(par.targets) != 1:
            return None
        tgt = par.targets[0].target
        if not isinstance(tgt, cst.Name):
            return None
        stmt = self.stmt_of(par)
        for _ in range(2):
            sibs, i = self.block_siblings(stmt)
            for st in sibs[i + 1 : i + 4]:
                if isinstance(st, cst.If):
                    if any(n.value == tgt.value for n in self.descendants(st.test, cst.Name)):
                        return st
                elif any(
                    isinstance(t.target, cst.Name) and t.target.value == tgt.value
                    for t in self.descendants(st, cst.AssignTarget)
                ):
                    return None
            if i + 1 < len(sibs):
                return None
            # `if same_host: alive = check(pid) / else: alive = True`, then `if alive:`
            owner = self.up(self.up(stmt))
            if isinstance(owner, cst.Else):
                owner = self.up(owner)
            if not isinstance(owner, cst.If):
                return None
            while isinstance(self.up(owner), cst.If) and self.up(owner).orelse is owner:
                owner = self.up(owner)
            stmt = owner
        return None

    def _returned_to_decider(self, call: Any) -> bool:
        """``return psutil.pid_exists(pid)`` in a helper whose caller's ``if`` then leaves or
        takes the file over."""
        cst = self.cst
        for a in self.ancestors(call):
            if isinstance(a, cst.Return):
                func = self.func_of(call)
                if isinstance(func, cst.FunctionDef) and self.entry.get(func.name.value) is None:
                    return self._helper_consequential(func)
                return False
            if isinstance(a, cst.BaseStatement):
                return False
        return False

    def _until_takeover(self, stmts: list[Any], pid_file: PathExpr | None) -> list[Any]:
        """The statements after a 'holder alive: leave' test up to the one that writes the
        pid file again (the takeover); after it the run holds the file, and removing it then
        is the normal release, not a stale-lock breaker."""
        if pid_file is None:
            return stmts
        out = []
        for st in stmts:
            out.append(st)
            for c in self.descendants(st, self.cst.Call):
                cr = self.creation(c)
                p = self.path(cr[1]) if cr is not None else None
                if p is not None and p.key() == pid_file.key():
                    return out
        return out

    def _after_leaving_test(self, owner: Any, pid_file: PathExpr | None) -> list[Any]:
        """What runs after a liveness test whose 'alive' branch leaves: the statements after
        ``owner`` up to the takeover.  When nothing follows ``owner`` in the body of an ``if``
        (``if isfile(P): ...test...``), the statements after that ``if`` up to the takeover,
        if one follows there (else the rest is the run's own work, not a judgement)."""
        cst = self.cst
        sibs, i = self.block_siblings(owner)
        out = self._until_takeover(sibs[i + 1 :], pid_file)
        n = owner
        for _ in range(3):
            sibs, i = self.block_siblings(n)
            if pid_file is None or any(not self._is_trivial(st) for st in sibs[i + 1 :]):
                return out
            par = self.up(self.up(n))
            if not isinstance(par, cst.If) or self.up(n) is not par.body:
                return out
            n = par
            sibs, i = self.block_siblings(n)
            rest = sibs[i + 1 :]
            upto = self._until_takeover(rest, pid_file)
            if upto and (len(upto) < len(rest) or self._takes_over(upto[-1], pid_file)):
                return out + upto
        return out

    def _takes_over(self, st: Any, pid_file: PathExpr) -> bool:
        """``st`` writes ``pid_file`` again."""
        for c in self.descendants(st, self.cst.Call):
            cr = self.creation(c)
            p = self.path(cr[1]) if cr is not None else None
            if p is not None and p.key() == pid_file.key():
                return True
        return False

    def _helper_consequential(self, func: Any) -> bool:
        cst = self.cst
        for call, _m in self.call_sites(func):
            later = self._tested_later(call)  # `flag = lock.test(p)`, then `if flag:`
            if later is not None:
                stmts = self._if_region(later)
                if self.decides(stmts) or self._creates_or_removes(stmts):
                    for st in stmts:
                        self.dead_regions.append((st, None))
                    if self.find_end(list(later.body.body)) is not None:
                        # `if alive: raise Busy(...)`, then `if not alive: remove(P)`
                        sibs, i = self.block_siblings(later)
                        for st in sibs[i + 1 : i + 4]:
                            self.dead_regions.append((st, None))
                    return True
            for a in self.ancestors(call):
                if isinstance(a, cst.If) and self.within(call, a.test):
                    top = a
                    while isinstance(self.up(top), cst.If) and self.up(top).orelse is top:
                        top = self.up(top)
                    self._decision = top
                    stmts = list(a.body.body)
                    # `if self.is_locked() and self.own_lock(): release()`: the body runs for
                    # a live holder; only the other branch is the dead one
                    alive = self._alive_when_true(func) and self._plainly_true(call, a.test)
                    dead = [] if alive else list(stmts)
                    if a.orelse is not None:
                        ob = a.orelse.body
                        other = [ob] if isinstance(ob, cst.If) else list(ob.body)
                        stmts += other
                        dead += other
                    dead += self._raised_into(dead)
                    if (
                        self.decides(stmts)
                        or self._creates_or_removes(stmts)
                        or self._creates_or_removes(dead)
                    ):
                        for st in dead:
                            self.dead_regions.append((st, None))
                        if self.find_end(list(a.body.body)) is not None:
                            # `if alive(pid): sys.exit(75)`, then the takeover
                            sibs, i = self.block_siblings(a)
                            for st in sibs[i + 1 : i + 4]:
                                self.dead_regions.append((st, None))
                        return True
                if isinstance(a, cst.BaseStatement) and not isinstance(a, cst.If):
                    break
        return False

    _OS_ERRORS = frozenset(
        ("ProcessLookupError", "PermissionError", "FileExistsError", "FileNotFoundError")
    )

    def _raised_into(self, stmts: list[Any]) -> list[Any]:
        """The handler bodies that the ``raise`` statements of ``stmts`` land in, when a try
        around them in the same function catches what they raise (``if not alive(pid): raise
        ProcessLookupError("stale")`` inside ``try: ... / except ProcessLookupError: <dead>``)."""
        cst = self.cst
        out: list[Any] = []
        for st in stmts:
            for r in self.descendants(st, cst.Raise):
                exc = r.exc
                if exc is None:
                    continue
                q = self.qname(exc.func if isinstance(exc, cst.Call) else exc) or ""
                names = {q, q.split(".")[-1], "Exception", "BaseException"}
                if q.split(".")[-1] in self._OS_ERRORS:
                    names |= {"OSError", "IOError", "EnvironmentError"}
                _t, h = self.catching_handler(r, names)
                if h is not None:
                    out.extend(h.body.body)
        return out

    def _alive_when_true(self, func: Any) -> bool:
        """Every value ``func`` returns is the probe itself (``return os.path.exists("/proc/"
        + pid)``, ``psutil.pid_exists(pid)``) or a false constant: true means alive."""
        cst = self.cst
        probes = 0
        for r in self.descendants(func.body, cst.Return):
            if self.func_of(r) is not func:
                continue
            v = r.value
            if v is None or self.const(v) in (False, None, 0):
                continue
            if isinstance(v, cst.Call) and (self._proc_probe(v) or self.call_q(v) in PID_PROBES):
                probes += 1
                continue
            return False
        return probes > 0

    def _plainly_true(self, call: Any, test: Any) -> bool:
        """``call`` holds when ``test`` does: the test itself or a term of an ``and``."""
        cst = self.cst
        node = call
        while node is not test:
            up = self.up(node)
            if up is None:
                return False
            if isinstance(up, cst.BooleanOperation) and not isinstance(up.operator, cst.And):
                return False
            if not isinstance(up, (cst.BooleanOperation, cst.Call, cst.Attribute)):
                return False  # `not`, a comparison...
            if isinstance(up, cst.Call) and up is not call and node is not up.func:
                return False  # an argument of another call
            node = up
        return True

    def _signals_in(self, stmts: list[Any]) -> bool:
        """An ``os.kill``/``os.killpg`` with a signal other than 0 (killing the holder)."""
        return any(
            self.call_q(c) in ("os.kill", "os.killpg")
            and self.const(self.arg(c, 1, "sig")) not in (0, "0")
            for st in stmts
            for c in self.descendants(st, self.cst.Call)
        )

    def _creates_or_removes(self, stmts: list[Any]) -> bool:
        cst = self.cst
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                if self.creation(c) is not None or self.removal_target(c) is not None:
                    return True
                if self.helper_creation(c) is not None or self.helper_removal(c) is not None:
                    return True  # `write_lock(path)`: a helper of this file makes it
                if self.call_q(c) in ("os.ftruncate", "os.truncate") or (
                    self.method(c) == "truncate" and isinstance(c.func, cst.Attribute)
                ):
                    return True  # the file emptied to be taken over
        return False

    def _stale_removals(self) -> None:
        cst = self.cst
        for c, r in self.removal_calls:
            for st, _pf in self.dead_regions:
                if self.within(c, st):
                    r.stale_guard = "dead-holder"
                    break
            if r.stale_guard is None and self._is_lock_path(r.path):
                # an age test breaks a lock only when what it removes is a lock (cache and
                # retention expiry remove old files too)
                for a in self.ancestors(c):
                    if isinstance(a, (cst.If, cst.While)) and self._age_test(a.test):
                        r.stale_guard = "age"
                        break
                    if isinstance(a, cst.FunctionDef):
                        break
                if r.stale_guard is None and self._after_young_exit(c):
                    r.stale_guard = "age"
        self._contents_not_breakers()
        self._stale_helper_removals()
        self._stale_truncations()
        # overwrite of the pid file where the holder was judged dead
        for c in self.calls:
            cr = self.creation(c)
            if cr is None or cr[2] != "plain":
                continue
            for st, pf in self.dead_regions:
                if self.within(c, st):
                    p = self.path(cr[1])
                    if pf is not None and p is not None and p.key() == pf.key():
                        self.facts.removals.append(
                            Removal(
                                p,
                                self.span(c),
                                conditional=True,
                                stale_guard="dead-holder",
                                overwrite=True,
                            )
                        )
                    break

    def _contents_not_breakers(self) -> None:
        """A stale lock directory emptied before its ``rmdir``: the files removed inside it
        (``(d / "status.json").unlink()``, each of ``d.glob("*")``) are the breaker's
        housekeeping; the breaker is the removal of the directory itself."""

        def sig(path: PathExpr) -> str:
            # the parts as resolved (an unknown root stays one token), not as spelled
            return "".join(
                p.value if p.kind is PartKind.LIT else f"\0{p.kind.value}:{p.value}\0"
                for p in path.parts
            )

        marked = [(c, r) for c, r in self.removal_calls if r.stale_guard and r.path is not None]
        dirs = {
            self.key(a.path)
            for a in self.facts.acquires
            if a.kind is LockKind.EXISTENCE and a.path is not None
        }
        for c, r in marked:
            k, ks = self.key(r.path), sig(r.path)
            for oc, other in marked:
                ok, os_ = self.key(other.path), sig(other.path)
                if (
                    other is not r
                    and ok in dirs
                    and (k.startswith((ok + "/", ok + ".")) or ks.startswith(os_ + "/"))
                    and self.func_of(oc) is self.func_of(c)
                ):
                    r.stale_guard = None
                    break

    def _truncated_path(self, call: Any) -> PathExpr | None:
        """The file a truncation empties: ``os.ftruncate(fd, 0)``, ``f.truncate()`` (the file
        or descriptor traced to its open), ``os.truncate(path, 0)``."""
        cst = self.cst
        q = self.call_q(call)
        if q == "os.truncate":
            return self.path(self.arg(call, 0, "path"))
        if q == "os.ftruncate":
            fd = self.arg(call, 0, "fd")
        elif self.method(call) == "truncate" and isinstance(call.func, cst.Attribute):
            fd = call.func.value
        else:
            return None
        op = self.trace_open(fd)
        return self._open_path(op) if op is not None else None

    def _stale_truncations(self) -> None:
        """The pid file emptied to be written again where its holder was judged dead (the
        file kept open and truncated in place): an overwrite of a lock judged stale."""
        for c in self.calls:
            for st, pf in self.dead_regions:
                if not self.within(c, st):
                    continue
                p = self._truncated_path(c)
                if p is not None and pf is not None and self.key(p) == self.key(pf):
                    self.facts.removals.append(
                        Removal(
                            p,
                            self.span(c),
                            conditional=True,
                            stale_guard="dead-holder",
                            overwrite=True,
                        )
                    )
                break

    def _stale_helper_removals(self) -> None:
        """``self.remove()`` where the holder was judged dead: a simple helper of this file
        that removes the lock path breaks the lock at that call."""
        for c in self.calls:
            for st, pf in self.dead_regions:
                if not self.within(c, st):
                    continue
                p = self.helper_removal(c)
                if p is not None and (
                    (pf is not None and self.key(p) == self.key(pf)) or self._is_lock_path(p)
                ):
                    self.facts.removals.append(
                        Removal(p, self.span(c), conditional=True, stale_guard="dead-holder")
                    )
                break

    def _is_lock_path(self, path: PathExpr | None) -> bool:
        """Acquired in this file, or named like a lock or pid file."""
        if path is None:
            return False
        if lockish_name(path):
            return True
        key = self.key(path)
        return any(a.path is not None and self.key(a.path) == key for a in self.facts.acquires)

    def _after_young_exit(self, call: Any) -> bool:
        """``if time.time() - st.st_mtime < MAX_AGE: return False``, then the removal: what
        follows that test runs only for an old lock."""
        cst = self.cst
        st = self.stmt_of(call)
        for _ in range(4):
            if st is None or isinstance(st, cst.FunctionDef):
                return False
            sibs, i = self.block_siblings(st)
            for prev in sibs[max(0, i - 3) : i]:
                if (
                    isinstance(prev, cst.If)
                    and self._age_test(prev.test)
                    and self.find_end(list(prev.body.body)) is not None
                ):
                    return True
            st = next((a for a in self.ancestors(st) if isinstance(a, cst.BaseStatement)), None)
        return False

    def _age_test(self, test: Any) -> bool:
        """An ordering comparison involving a modification/change time (or a value computed
        from one): ``time.time() - os.path.getmtime(L) > 3600``, ``age > MAX_AGE``."""
        cst = self.cst
        ordering = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)
        words = ("getmtime", "getctime", "st_mtime", "st_ctime")
        for cmp in self.descendants(test, cst.Comparison):
            if not any(isinstance(t.operator, ordering) for t in cmp.comparisons):
                continue
            src = self.code(cmp)
            if any(w in src for w in words):
                return True
            for n in self.descendants(cmp, cst.Name):
                v = self.lookup(n)
                if v is not None and not isinstance(v, tuple) and not self.within(v, cmp):
                    if any(w in self.code(v) for w in words):
                        return True
        return False

    def _backgrounds(self) -> None:
        self._bg_pending: list[tuple[Background, Acquire]] = []
        for c in self.calls:
            q = self.call_q(c)
            if q in ("subprocess.Popen",):
                how = "subprocess.Popen"
            elif q in ("os.fork", "os.forkpty"):
                how = q
            elif q in ("multiprocessing.Process", "multiprocessing.context.Process"):
                how = "multiprocessing.Process"
            else:
                continue
            for acq in self.facts.acquires:
                node = self._acq_nodes.get(id(acq))
                if node is None or self.off(c) <= self.off(node):
                    continue
                if self.func_of(c) is not self.func_of(node):
                    continue
                if not self._in_scope(acq, node, c):
                    continue
                if self._waited(c):
                    continue
                detached = self._kw_true(c, "start_new_session")
                cf = self.kw(c, "close_fds")
                inherits = (
                    how in ("os.fork", "os.forkpty", "multiprocessing.Process")
                    or (cf is not None and self.const(cf) is False)
                    or self.kw(c, "pass_fds") is not None
                )
                if acq.kind is not LockKind.EXISTENCE and not (inherits or detached):
                    continue
                sp = self.span(c)
                if detached:
                    how += "(start_new_session=True)"
                self._bg_pending.append((Background(sp, -1, how, inherits), acq))
                break

    def _in_scope(self, acq: Acquire, node: Any, child: Any) -> bool:
        """The child starts while the lock is held: inside the with block of a with-lock, or
        before the removal of an existence lock / anywhere after an fd lock."""
        cst = self.cst
        for a in self.ancestors(node):
            if isinstance(a, cst.With):
                return self.within(child, a)
            if isinstance(a, cst.BaseStatement):
                break
        if acq.kind is LockKind.EXISTENCE:
            # after the release (the removal of the name) the lock is no longer held
            start = self.off(child)
            for c, r in self.removals_of(acq.path):
                if not r.stale_guard and self.func_of(c) is self.func_of(child):
                    if self.off(c) < start:
                        return False
        return True

    def _waited(self, call: Any) -> bool:
        cst = self.cst
        par = self.up(call)
        if isinstance(par, cst.WithItem):
            return True
        if self.method(call) is None and self.call_q(call) in ("os.fork", "os.forkpty"):
            # waited when waitpid follows in the same function
            scope = self.func_of(call)
            src = self.code(scope) if scope is not None else self.text
            return "waitpid" in src or "os.wait(" in src
        var = None
        if isinstance(par, cst.Assign) and len(par.targets) == 1:
            var = par.targets[0].target
        box = self._container_of(call, var)
        if var is None and box is None:
            return False
        for c in self.calls:
            if self.off(c) <= self.off(call):
                continue
            m = self.method(c)
            if m in ("wait", "communicate", "join") and var is not None:
                if self._same_ref(c.func.value, var):
                    return True
            if m in ("wait", "communicate", "join") and box is not None:
                # procs = [Process(...) ...]; for p in procs: p.join()
                recv = c.func.value
                if isinstance(recv, cst.Name) and self._iterates(c, recv.value, box):
                    return True
            if var is None:
                continue
            # `while p.poll() is None: sleep()` (or a poll in a loop's body) waits too
            if (
                m == "poll"
                and self._same_ref(c.func.value, var)
                and any(isinstance(a, cst.While) for a in self.ancestors(c))
            ):
                return True
        return False

    def _container_of(self, call: Any, var: Any) -> str | None:
        """The name of the list the child is kept in: ``procs = [Popen(...) for ...]``,
        ``procs.append(Popen(...))`` or ``p = Popen(...); procs.append(p)``."""
        cst = self.cst
        node = call
        for _ in range(4):
            par = self.up(node)
            if isinstance(par, (cst.ListComp, cst.List, cst.Tuple, cst.Element, cst.GeneratorExp)):
                node = par
                continue
            if isinstance(par, cst.Assign) and node is not call and len(par.targets) == 1:
                t = par.targets[0].target
                return t.value if isinstance(t, cst.Name) else None
            if isinstance(par, cst.Arg):
                owner = self.up(par)
                if isinstance(owner, cst.Call) and self.method(owner) == "append":
                    recv = owner.func.value
                    return recv.value if isinstance(recv, cst.Name) else None
            break
        if isinstance(var, cst.Name):
            for c in self.calls:
                if (
                    self.off(c) > self.off(call)
                    and self.method(c) == "append"
                    and c.args
                    and isinstance(c.args[0].value, cst.Name)
                    and c.args[0].value.value == var.value
                    and isinstance(c.func.value, cst.Name)
                ):
                    return c.func.value.value
        return None

    def _iterates(self, node: Any, name: str, box: str) -> bool:
        """``node`` runs in a loop (or comprehension) whose target ``name`` walks ``box``."""
        cst = self.cst
        for a in self.ancestors(node):
            loops = []
            if isinstance(a, cst.For):
                loops = [a]
            elif isinstance(a, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                f = a.for_in
                while f is not None:
                    loops.append(f)
                    f = f.inner_for_in
            for lp in loops:
                if (
                    isinstance(lp.target, cst.Name)
                    and lp.target.value == name
                    and isinstance(lp.iter, cst.Name)
                    and lp.iter.value == box
                ):
                    return True
        return False
