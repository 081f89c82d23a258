"""The shell analysis of one file: the state shared by the stages, positions, the walk's
order (top level, then functions never called) and the facts it records.
"""

from __future__ import annotations

from ...model import Acquire, Background, FileFacts, LockKind, Part, PathExpr, Span
from ..treesitter import Offsets
from .branches import Branches
from .commands import Commands
from .data import FdInfo, Frame, Pos, TrapEvent, _NamesSet
from .files import Files
from .finish import Finish
from .locks import Locks
from .processes import Processes
from .read import Reading, parse_bash, tree_sitter_source
from .traps import Traps
from .values import Values
from .walk import Walk


class Analyzer(Reading, Walk, Values, Commands, Branches, Locks, Files, Processes, Traps, Finish):
    """One file's analysis: the stages' mixins over one state; :meth:`run` walks the file."""

    def __init__(self, path: str, text: str) -> None:
        self.text = text
        self.facts = FileFacts(path=path, language="shell", text=text)
        self.src = tree_sitter_source(text)
        self.offsets = Offsets(text, self.src)
        self.offmap: list[int] | None = None  # byte map for a sub-parsed trap string
        self._sub_src = b""
        self.functions: dict[str, object] = {}
        self.called = _NamesSet()
        self.env: dict[str, tuple[Part, ...] | None] = {}
        self.cmdvars: dict[str, str] = {}  # VAR -> command it names (FLOCK=$(command -v flock))
        self.pidvars: dict[str, PathExpr | None] = {}  # pid var -> file it was read from
        self.live_vars: dict[
            str, tuple
        ] = {}  # var -> (ps command, pid file, counted) of its output
        self.fdvars: set[str] = set()
        self.age_vars: set[str] = set()  # variables holding a file's age (values.py)
        self.fds: dict[str, FdInfo] = {}
        self.set_e = False
        self.noclobber = False
        self.durable_global = False
        self.frames: list[Frame] = []
        self.cond_depth = 0
        self.order = 0
        self.traps: list[TrapEvent] = []
        self.acq_order: list[int] = []
        self.acq_keys: list[str] = []
        self.direct_removals: list[tuple[int, str]] = []
        self.pending_bg: list[Background] = []
        # the last child started with `&` (None when no lock was held) and `V=$!` captures
        self.last_bg: Background | None = None
        self.bg_vars: dict[str, Background | None] = {}
        self.held: list[int] = []  # existence locks held (index)
        self.stale: tuple[str, str | None] | None = None  # (guard, key)
        self.actions: list[str] = []  # case "$1" in <action>) being walked
        self.cte: list[tuple] = []  # check-then-create candidates
        self.file_tests: dict[str, object] = {}  # path key -> first `-e`/`-f` test of it
        self.alive_busy: dict[str, object] = {}  # pid file key -> busy branch when alive
        self.pid_written: set[int] = set()  # ids of test-then-create acquires writing a PID
        self.pid_made: set[int] = (
            set()
        )  # ids of the acquires a PID write after a liveness test made
        self.stdin: list[PathExpr] = []  # files compound commands read their stdin from
        self.fifos: set[str] = set()  # named pipes the script makes (mkfifo, mknod P p)
        self.sete_mkdirs: list[tuple] = []
        self.mkdir_p_guards: list[tuple] = []  # (NonExclusiveCreate, end offset)
        self.seen_acq: dict[tuple, int] = {}
        self.seen_other: set[tuple] = set()
        self.inlines = 0
        self.in_trap = False
        self._late: dict | None = None  # top-level assignments a trap may read (values.py)
        self.inode_recheck = False
        self.flock_close: set[int] = set()
        self.weak: set[int] = set()
        self.override_order: dict[int, int] = {}  # StatusOverride -> order of its trap
        self.top_stmt = None
        self.root = None
        self.untrapping: set[int] = set()  # busy branches that reset the EXIT trap
        self.loser_exits: dict[int, bool] = {}  # acquires whose losing run can exit
        self.referenced: dict[str, set[str]] = {}  # function -> functions ("" = top) calling it
        self.cut: int | None = None
        self.live_seen: dict = {}
        self._openwrt: bool | None = None
        self._loud_exec: bool | None = None
        self.trap_depth = 0  # cond_depth where the trap being walked was installed
        self.rc_common = False
        self.gates: set[int] = set()  # existence locks whose failure just goes on
        self.clearing: list[tuple[int, str]] = []  # unconditional removals (order, key)
        self.signalled: set[tuple[str, str]] = set()  # (function, pid file) sent a signal
        self._trap_dquoted = False
        self.subshells: list[Pos] = []
        self.acq_top: list = []
        self.cur_stmt = None  # the innermost statement being walked
        self.handed_off: set[int] = set()  # id() of acquires after which the run just ends
        self.made_at: dict[int, int] = {}  # id() of a test-then-create acquire -> its creation
        self.cte_acqs: list[int] = []
        self.trap_keys: set[str] = set()
        self.trap_relocked: set[str] = set()  # trap keys removed only under a flock (traps.py)
        self.relocking = 0  # walking what runs only after a trap's `flock ... &&`
        self.trap_span: Span | None = None
        self.stale_rest = None
        self._stale_list_right = None
        self._pending_stale_success = None
        self._pending_stale_fail = None
        self._budget = float("inf")  # work left to the resolution under way (see resolve())
        self.nesting = 0  # statements being walked inside each other (see stmt())
        self.inlined = 0  # bytes of function bodies walked at call sites (see call())
        self.too_deep = False

    # ------------------------------------------------------------------ positions
    def _c(self, b: int) -> int:
        if self.offmap is not None:
            b = self.offmap[min(b, len(self.offmap) - 1)]
        return self.offsets.char(b)

    def _lc(self, c: int) -> tuple[int, int]:
        return self.offsets.line_col(c)

    def span(self, node) -> Span:
        s, e = self._c(node.start_byte), self._c(node.end_byte)
        return self.span_of(s, e)

    def span_of(self, s: int, e: int) -> Span:
        l1, c1 = self._lc(s)
        l2, c2 = self._lc(e)
        return Span(l1, c1, l2, c2, s, e)

    # ------------------------------------------------------------------ entry
    def run(self) -> FileFacts:
        self.src, tree = parse_bash(self.src)
        root = tree.root_node
        self.root = root
        self._prescan(root)
        self.walk_seq(self.statements(root), tail=True)
        self.offmap = None
        # functions never called from the top level: those no other function calls first, so
        # that the others are reached through their call sites
        for name in self._uncalled_in_order():
            fn = self.functions[name]
            self.called.add(name)
            self.cond_depth += 1
            self.frames.append(Frame(name, {}, False, None, 1))
            self.walk_seq(self.statements(self._fn_body(fn)), tail=False)
            self.frames.pop()
            self.cond_depth -= 1
        self.finish()
        if self.cut is not None:
            self._drop_after(self.cut)
        return self.facts

    def _uncalled_in_order(self):
        """The functions not called yet, one at a time: the first (in definition order) that
        no other uncalled function calls, else the first uncalled one.  Callers are counted
        once and the count kept as functions get called (``self.called.added``), so the whole
        pass is linear in functions and call sites."""
        import heapq

        order = list(self.functions)
        index = {n: i for i, n in enumerate(order)}
        callees: dict[str, list[str]] = {}
        waiting = dict.fromkeys(order, 0)  # uncalled callers other than itself
        for n, callers in self.referenced.items():
            if n not in index:
                continue
            for c in callers:
                if c != n and c in index:
                    callees.setdefault(c, []).append(n)
                    if c not in self.called:
                        waiting[n] += 1
        ready = [i for i, n in enumerate(order) if not waiting[n]]  # sorted: a heap already
        seen = len(self.called.added)
        first = 0
        while True:
            for m in self.called.added[seen:]:
                for n in callees.get(m, ()):
                    waiting[n] -= 1
                    if not waiting[n]:
                        heapq.heappush(ready, index[n])
            seen = len(self.called.added)
            while ready and order[ready[0]] in self.called:
                heapq.heappop(ready)
            while first < len(order) and order[first] in self.called:
                first += 1
            if first == len(order):
                return
            yield order[ready[0]] if ready else order[first]

    def _drop_after(self, cut: int) -> None:
        f = self.facts
        keep = [i for i, a in enumerate(f.acquires) if a.span.start < cut]
        remap = {old: new for new, old in enumerate(keep)}
        f.acquires = [f.acquires[i] for i in keep]
        f.removals = [r for r in f.removals if r.span.start < cut]
        f.liveness = [x for x in f.liveness if x.span.start < cut]
        f.kills = [x for x in f.kills if x.span.start < cut]
        f.probes = [x for x in f.probes if x.span.start < cut]
        f.overrides = [x for x in f.overrides if x.span.start < cut]
        f.non_exclusive = [x for x in f.non_exclusive if x.span.start < cut]
        f.backgrounds = [b for b in f.backgrounds if b.span.start < cut and b.lock in remap]
        for b in f.backgrounds:
            b.lock = remap[b.lock]
        hooks = []
        for h in f.hooks:
            if h.span.start < cut:
                h.active_in_busy_of = tuple(remap[i] for i in h.active_in_busy_of if i in remap)
                hooks.append(h)
        f.hooks = hooks

    # ------------------------------------------------------------------ facts helpers
    def _dedupe(self, key) -> bool:
        if key in self.seen_other:
            return False
        self.seen_other.add(key)
        return True

    def add_acquire(self, acq: Acquire) -> int | None:
        if self.in_trap:
            return None  # a trap that locks: not an acquisition of the run
        if acq.kind is LockKind.EXISTENCE and acq.path is not None and acq.path.has_unique:
            return None  # a per-process name ($$, $(mktemp)) excludes no other run
        key = (acq.kind, acq.span.start, acq.path.key() if acq.path else None)
        if key in self.seen_acq:
            old = self.facts.acquires[self.seen_acq[key]]
            if old.busy is None and acq.busy is not None:
                # the same command reached again (a helper called from several places): keep
                # the call whose status decides the run
                old.busy = acq.busy
                old.status_handled = acq.status_handled and old.status_handled
                old.nonblocking = old.nonblocking or acq.nonblocking
            elif not acq.status_handled:
                old.status_handled = False
            return None
        if self.frames:
            acq.function = self.frames[-1].name
        idx = len(self.facts.acquires)
        self.seen_acq[key] = idx
        self.facts.acquires.append(acq)
        self.acq_order.append(self.order)
        self.acq_keys.append(acq.path.key() if acq.path else "")
        self.acq_top.append(self.top_stmt if self.offmap is None else None)
        stmt = self.cur_stmt
        if (
            self.offmap is None
            and stmt is not None
            and self._c(stmt.start_byte) <= acq.span.start < self._c(stmt.end_byte)
            and self.ends_holding(stmt)
        ):
            # (an acquire made after the walk, by the final passes, is no statement's)
            self.handed_off.add(id(acq))
        return idx

    def in_init_action(self) -> str | None:
        if self.actions:
            return self.actions[-1]
        if self.rc_common:
            # OpenWrt's /etc/rc.common calls the script's start()/stop()/start_service()...
            for f in reversed(self.frames):
                name = f.name.removesuffix("_service")
                if name in ("start", "stop", "restart", "reload", "status", "boot", "shutdown"):
                    return name
        return None
