"""The final lock-semantics passes, after the walk: which acquires stay locks (markers, work
directories and outputs dropped), their releases, the release hooks in effect on a losing
run's exit, ``set -e`` mkdirs, ``mkdir -p`` guards and service records.
"""

from __future__ import annotations

import re

from ...model import Acquire, BusyBranch, Edit, FixTemplate, LockKind, PathExpr, ReleaseHook
from ...paths import lockish_text
from ..treesitter import descendants
from .data import TrapEvent, _covers, _txt


def _lines_after(text: str, start: int, count: int, limit: int = 1 << 16) -> list[str]:
    """The ``count`` lines after the one holding ``start`` (``text[start:].split("\n")
    [1:count + 1]`` without splitting the rest of the file), at most ``limit`` characters."""
    begin = text.find("\n", start)
    if begin < 0 or count < 1:
        return []
    end = begin
    for _ in range(count):
        end = text.find("\n", end + 1, begin + 1 + limit)
        if end < 0:
            end = min(len(text), begin + 1 + limit)
            break
    return text[begin + 1 : end].split("\n")


# words before the command of a line that tests it (`if ! cd D; then`)
_CONDITION_WORDS = frozenset({"if", "!", "then", "elif", "while", "until", "do", "else"})


class Finish:
    """The passes after the walk (:meth:`finish`)."""

    # ------------------------------------------------------------------ finishing
    def finish(self) -> None:
        acqs = self.facts.acquires
        # an EXIT trap the script disarms on its way out (`trap - EXIT` other than right
        # before a busy exit) runs on the failure paths only: a fixed non-zero status there
        # still reports the failure (no LCK404); `exit 0` or `exit $?` after a cleanup
        # command would report a failed run as done, and stays
        disarmed = [t.order for t in self.traps if t.disarm and not t.before_exit]
        if disarmed:
            last = max(disarmed)
            self.facts.overrides = [
                o
                for o in self.facts.overrides
                if self.override_order.get(id(o), last) >= last or not o.status
            ]
        self._mkdir_p_guards()
        # plain mkdir under set -e: a lock only when removed on exit or named like a lock
        self._service_records()
        removed_keys = {
            r.path.key() for r in self.facts.removals if r.path is not None and not r.overwrite
        }
        for cmd, path, _pos, order in self.sete_mkdirs:
            if path.has_unique:
                continue  # inside this run's own mktemp -d (or named with $$): no other run
            key = path.key()
            # removed again after it is made (a removal before it clears the way for a fresh
            # output directory: `rm -rf out; mkdir out`)
            lockish = lockish_text(path.render().rsplit("/", 1)[-1])
            if not lockish and self._cleared_before(key, order):
                continue
            if not lockish and self._work_dir(path, self._c(cmd.end_byte)):
                continue
            if self._removed_after(key, order) or lockish:
                acq = Acquire(LockKind.EXISTENCE, "mkdir", path, self.span(cmd))
                acq.busy = BusyBranch(self.span(cmd), True, 1, self.durable_global)
                idx = self.add_acquire(acq)
                if idx is not None:
                    self.acq_order[idx] = order
        flocked = {a.path.key() for a in acqs if a.kind is LockKind.FLOCK and a.path is not None}
        # a stale-guarded removal is a lock breaker only for a lock, a pid file or a lock name
        lockish = set(self.acq_keys) | {
            c.pid_file.key() for c in self.facts.liveness if c.pid_file is not None
        }
        for r in self.facts.removals:
            if r.stale_guard and r.path is not None:
                k = r.path.key()
                if k not in lockish and not lockish_text(k.rsplit("/", 1)[-1]):
                    if not any(x.startswith(k.rstrip("/") + "/") for x in lockish):
                        r.stale_guard = None
        # check-then-create: not for pre-created flock files nor never-removed markers
        keep = []
        for i, a in enumerate(acqs):
            if id(a) in self.pid_made and a.path and self._pid_lock_taken_otherwise(i):
                continue
            if i in self.weak:
                k = a.path.key() if a.path else ""
                removed = self._removed_after(k, self.acq_order[i])
                lockish = lockish_text(k.rsplit("/", 1)[-1])
                if not lockish and self._cleared_before(k, self.acq_order[i]):
                    continue
                if (
                    not lockish
                    and a.mechanism == "mkdir"
                    and a.path is not None
                    and self._work_dir(a.path, a.span.end)
                ):
                    continue
                if not removed and not lockish:
                    continue
            elif (
                a.mechanism == "mkdir"
                and a.path is not None
                and not a.check_then_create
                and not lockish_text(a.path.render().rstrip("/").rsplit("/", 1)[-1])
                and not self._removed_after(a.path.key(), self.acq_order[i])
                and self._work_dir(a.path, a.span.end)
            ):
                # `mkdir "$home/.gnupg" || { error; return; }`, then cd into it and fill it,
                # never removed: a directory being provisioned, not a lock
                continue
            if i in self.gates and a.path is not None:
                k = a.path.key()
                if not any(_covers(r, k) for r in removed_keys):
                    # `if mkdir M; then work; fi` and M never removed: a run-once (or
                    # once-per-boot) marker, like a never-removed test-then-create marker
                    continue
            if a.check_then_create:
                k = a.path.key() if a.path else ""
                # a marker removed only by a signal trap (a build stamp cleared on abort) is
                # never removed by a run that ends normally: a run-once marker, not a lock
                # ... but a flock file whose name is removed again after it is made is an
                # existence lock as well (`[ -f L ] && exit; ( flock 9; ... ) 9>L; rm -f L`)
                made = self.made_at.get(id(a), self.acq_order[i])
                if k in flocked and not self._removed_after(k, made):
                    continue
                # ... nor is a PID file whose stored PID is tested for liveness first
                # (`[ -f F ] && kill -0 "$(cat F)" && exit 0; echo $$ > F`): a PID-file lock,
                # nor one a PID is written into (`echo $! > F`, removed by a stop action)
                written = id(a) in self.pid_written and not self._under_flock(i, made)
                held_pid = (
                    id(a) in self.pid_made
                    or written
                    or any(
                        c.consequential and c.pid_file is not None and c.pid_file.key() == k
                        for c in self.facts.liveness
                    )
                )
                if (
                    not held_pid
                    and not self._removed_after(k, self.acq_order[i])
                    and not (lockish_text(k.rsplit("/", 1)[-1]) and self._busy_fails(a))
                ):
                    continue
            keep.append(i)
        if len(keep) != len(acqs):
            remap = {old: new for new, old in enumerate(keep)}
            self.facts.acquires = [acqs[i] for i in keep]
            self.acq_order = [self.acq_order[i] for i in keep]
            self.acq_keys = [self.acq_keys[i] for i in keep]
            self.acq_top = [self.acq_top[i] for i in keep]
            for lst in (self.pending_bg, self.facts.backgrounds):
                bgs = []
                for b in lst:
                    if b.lock in remap:
                        b.lock = remap[b.lock]
                        bgs.append(b)
                lst[:] = bgs
            acqs = self.facts.acquires
        # releases
        for i, a in enumerate(acqs):
            if a.kind is not LockKind.EXISTENCE or a.path is None:
                continue
            key = a.path.key()
            a.released = any(_covers(k, key) for k in removed_keys)
            a.release_on_every_exit = True
            if a.released:
                # a run that ends right after creating the lock hands it on: the removal is
                # another run's (`lock.sh -l` / `lock.sh -u`), like a separate stop action's
                a.release_on_every_exit = id(a) in self.handed_off or self._released_on_exit(i, key)
            if self.facts.init_script and a.busy is None and "pid" in key.lower():
                a.service_record = True
        # hooks
        hooks_seen: dict = {}
        for ev in self.traps:
            if not ev.keys:
                continue
            for key in sorted(ev.keys - ev.relocked):
                active = []
                for i, a in enumerate(acqs):
                    if a.path is None or a.path.key() != key:
                        continue
                    if a.path.has_unique:
                        continue
                    # a signal-only trap installed before the test runs too when the losing
                    # run is signalled during its busy branch (a stop, a Ctrl-C)
                    if a.busy is None and not self.loser_exits.get(id(a), False):
                        continue  # a waiting loop or a takeover: no losing run exits here
                    if a.busy is not None and id(a.busy) in self.untrapping:
                        continue
                    if ev.order < self.acq_order[i] and self._trap_in_effect(ev, self.acq_order[i]):
                        active.append(i)
                path = next(
                    (r.path for r in ev.removals if r.path is not None and r.path.key() == key),
                    None,
                )
                if path is None:
                    path = next(
                        (
                            r.path
                            for r in self.facts.removals
                            if r.path is not None
                            and r.via == "trap"
                            and r.hook_span == ev.span
                            and r.path.key() == key
                        ),
                        None,
                    )
                old = hooks_seen.get((ev.span.start, key))
                if old is not None:
                    # the same trap installed again (a function called twice)
                    old.active_in_busy_of = tuple(sorted(set(old.active_in_busy_of) | set(active)))
                    if old.move_fix is None:
                        old.move_fix = self._move_fix(ev, active)
                    continue
                hook = ReleaseHook(path, ev.span, "trap", tuple(active), self._move_fix(ev, active))
                hooks_seen[(ev.span.start, key)] = hook
                self.facts.hooks.append(hook)
        self.facts.backgrounds.extend(self.pending_bg)

    _TRIVIAL = {
        "rm", "rmdir", "unlink", "echo", "printf", "trap", "[", "[[", "test", "mkdir", "cat",
        "kill", "read", "if", "elif", "while", "until", "local", "export", "return", "exit",
        "logger", "log", ":", "true", "false", "chmod", "chown", "touch",
    }  # fmt: skip

    def _makes_instead(self, br, path: PathExpr) -> bool:
        """A command of the failure branch copies or links to the same name, and the
        branch never leaves: a fallback (`ln -s A D || cp A D`), not a busy branch (a
        takeover re-makes the name too, but after a test that exits)."""
        spelled = path.text.strip("\"'").rstrip("/")
        if not spelled:
            return False
        if any(re.search(r"\b(?:exit|return)\b", _txt(n)) for n, _ in br.stmts):
            return False
        for n, _ in br.stmts:
            for c in descendants(n, "command"):
                name = self.cmd_name(c)
                if name not in ("cp", "install", "ln"):
                    continue
                ops = [_txt(a).strip("\"'").rstrip("/") for a in self.cmd_args(c)]
                ops = [o for o in ops if o and not o.startswith("-")]
                if ops and ops[-1] == spelled:
                    return True
        return False

    def _mkdir_p_guards(self) -> None:
        """LCK109 candidates: not a directory that holds the script's locks or files (`mkdir
        -p /var/lock/app || exit 1` before `exec 9>/var/lock/app/job.lock`) or that later
        commands fill or enter."""
        inner = [a.path.key() for a in self.facts.acquires if a.path is not None]
        inner += [p.key() for p in self.facts.created]
        seen = set()
        for nx, end in self.mkdir_p_guards:
            key = nx.path.key() if nx.path is not None else ""
            if (nx.span.start, key) in seen:
                continue
            seen.add((nx.span.start, key))
            if any(k.startswith(key.rstrip("/") + "/") for k in inner):
                continue
            if nx.path is not None and self._work_dir(nx.path, end):
                continue
            self.facts.non_exclusive.append(nx)
            if nx.path is not None:
                self.facts.created.append(nx.path)  # its own name: removing it is no LCK107

    def _work_dir(self, path: PathExpr, start: int) -> bool:
        """The directory made at ``start`` is filled or entered by later commands (`cd D`,
        `cp x D`, `tar -C D`, `tool -p ./D`, `touch D/__init__.py`): a work directory, not a
        lock (a lock directory is only tested, written a PID into and removed)."""
        t = path.text.strip("\"'").rstrip("/")
        # (?!\w): a name is read whole, else `$aa$aa...!` is split every way (exponential)
        if not t or not re.fullmatch(r"(?:\$\{?\w+(?!\w)\}?|[\w./-])+", t):
            return False
        pat = "".join(
            r"\$\{?" + re.escape(part.strip("${}")) + r"\}?"
            if part.startswith("$")
            else re.escape(part)
            for part in re.split(r"(\$\{?\w+\}?)", t.removeprefix("./"))
            if part
        )
        if not t.startswith("$"):
            pat = r"(?<![\w/.-])(?:\./)?" + pat
        whole = re.compile(pat + r"(?![\w-])(?!/[\w.-]*pid)")
        # a file put inside it (not its PID file)
        inside = re.compile(pat + r"/(?![\w.-]*pid\b)[\w.-]")
        for line in _lines_after(self.text, start, 199):
            code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
            hit_inside = inside.search(code)
            if not hit_inside and not whole.search(code):
                continue
            words = re.findall(r"[^\s;&|()]+", code)
            first = next(
                (w for w in words if "=" not in w and w not in _CONDITION_WORDS), ""
            ).rsplit("/", 1)[-1]
            if hit_inside and first not in ("rm", "rmdir", "unlink"):
                return True
            if first not in self._TRIVIAL:
                return True
        return False

    @staticmethod
    def _busy_fails(a: Acquire) -> bool:
        """The busy branch ends the run with a failure (or a status not known): with a lock-like
        name, a test-then-create never removed here is a lock released elsewhere (a sourced
        lock header, a cleanup include), not a run-once marker."""
        return a.busy is not None and a.busy.ends_run and a.busy.status != 0

    def _pid_lock_taken_otherwise(self, idx: int) -> bool:
        """A PID-file lock whose file (or a lock directory holding it) another acquire takes
        too (`[ -f F ]` ... `echo $$ > F` in both branches): one lock, reported once."""
        key = self.facts.acquires[idx].path.key()
        return any(
            j != idx
            and b.path is not None
            and _covers(b.path.key(), key)
            and (id(b) not in self.pid_made or j < idx)
            for j, b in enumerate(self.facts.acquires)
        )

    def _under_flock(self, idx: int, made: int) -> bool:
        """A flock taken between the test of acquire ``idx`` and its creation (at ``made``)
        whose busy branch ends the run: the file written then records the holder under that
        lock (`flock -n 9 || exit 75; echo $$ > F`)."""
        acqs = self.facts.acquires
        return any(
            b.kind in (LockKind.FLOCK, LockKind.LOCKF)
            and self.acq_order[idx] < self.acq_order[j] < made
            and b.busy is not None
            and b.busy.ends_run
            for j, b in enumerate(acqs)
        )

    def _cleared_before(self, key: str, order: int) -> bool:
        """The script removes the name unconditionally before making it (`rm -rf out; mkdir
        out`): a fresh work directory; a lock is never cleared by the run that takes it."""
        return any(o < order and _covers(k, key) for o, k in self.clearing)

    def _removed_after(self, key: str, order: int) -> bool:
        """The name is removed again after it is made: later in the run or by an EXIT trap (a
        removal before it only clears the way: `rm -rf out; mkdir out`)."""
        return any(o > order and _covers(k, key) for o, k in self.direct_removals) or any(
            t.exit_trap and any(_covers(k, key) for k in t.keys) for t in self.traps
        )

    def _service_records(self) -> None:
        if not self.facts.init_script:
            return
        keep = []
        for r in self.facts.removals:
            if r.stale_guard and r.path is not None:
                if "pid" in r.path.key().rsplit("/", 1)[-1].lower():
                    if r.overwrite:
                        # the service's PID file written again: a record, not a lock breaker
                        self.facts.created.append(r.path)
                        continue
                    r.stale_guard = None
            keep.append(r)
        self.facts.removals[:] = keep

    def _move_fix(self, ev: TrapEvent, active) -> FixTemplate | None:
        """Move a top-level trap to just after the top-level statement that acquires."""
        if not active or ev.top is None:
            return None
        target = self.acq_top[active[0]] if active[0] < len(self.acq_top) else None
        if target is None or target.start_byte <= ev.top.start_byte:
            return None
        busy = self.facts.acquires[active[0]].busy
        if busy is None:
            return None
        # after the busy branch too: `mkdir L; if [ $? -ne 0 ]; then exit; fi` tests the status
        # of the command before it, so the trap cannot go between the two
        for top in self.root.named_children:
            if self._c(top.start_byte) <= busy.span.start < self._c(top.end_byte):
                if top.start_byte <= ev.top.start_byte:
                    return None  # the busy branch is not after the trap at top level
                if top.end_byte > target.end_byte:
                    target = top
                break
        else:
            return None
        t = self.text
        s, e = self._c(ev.top.start_byte), self._c(ev.top.end_byte)
        ls = t.rfind("\n", 0, s) + 1
        le = t.find("\n", e)
        if t[ls:s].strip() or (le >= 0 and t[e:le].strip()):
            return None
        le = len(t) if le < 0 else le + 1
        end = self._c(target.end_byte)
        indent = t[ls:s]
        return FixTemplate(
            "install the release only after the lock is acquired",
            (Edit(ls, le, ""), Edit(end, end, "\n" + indent + t[s:e])),
        )

    def _trap_in_effect(self, ev: TrapEvent, order: int) -> bool:
        for other in self.traps:
            if other is ev or other.before_exit:
                continue
            if (
                ev.order < other.order < order
                and other.exit_trap == ev.exit_trap
                and other.exit_trap
            ):
                if not (ev.keys & other.keys):
                    return False
        return True

    def _released_on_exit(self, idx: int, key: str) -> bool:
        order = self.acq_order[idx]
        exits = [t for t in self.traps if t.exit_trap and not t.before_exit]
        for t in exits:
            if not any(_covers(k, key) for k in t.keys):
                continue
            # in effect at or after the acquire, and not dropped later without a release first
            if t.order > order or self._trap_in_effect(t, order):
                dropped = False
                for t2 in exits:
                    if t2.order > max(t.order, order) and not any(_covers(k, key) for k in t2.keys):
                        released_before = any(
                            t.order < o < t2.order and _covers(k, key)
                            for o, k in self.direct_removals
                        )
                        if not released_before:
                            dropped = True
                if not dropped:
                    return True
        return False
