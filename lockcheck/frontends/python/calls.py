"""The call vocabulary: which calls exit, create, remove or lock, and what status an exit gives."""

from __future__ import annotations

from ...hints import Any
from ...model import (
    LockKind,
    PathExpr,
)
from .values import _NOVALUE, _join, _merge

# the analyser's vocabularies (qualified names)
REMOVE_CALLS = frozenset({"os.remove", "os.unlink", "os.rmdir", "shutil.rmtree", "os.removedirs"})
REMOVE_METHODS = frozenset({"unlink", "rmdir"})  # Path methods: the receiver is removed
EXIT_CALLS_Q = frozenset({"sys.exit", "exit", "quit", "os._exit", "builtins.exit"})
LOG_HANDLERS = frozenset(
    {
        "FileHandler",
        "RotatingFileHandler",
        "TimedRotatingFileHandler",
        "WatchedFileHandler",
        "SysLogHandler",
    }
)
# the handlers that catch a clash on create (qualified names too)
CLASH_ERRORS = (
    "FileExistsError",
    "OSError",
    "IOError",
    "EnvironmentError",
    "Exception",
    "BaseException",
    "os.error",
)
FILE_EXISTS_ERRORS = set(CLASH_ERRORS)
# what a failed non-blocking flock raises: the same wide errors, not FileExistsError
BUSY_ERRORS = FILE_EXISTS_ERRORS - {"FileExistsError"} | {"BlockingIOError", "PermissionError"}
# calls that test a stored PID (os.getpgid/os.getsid raise ProcessLookupError for a dead one)
PID_PROBES = ("psutil.pid_exists", "os.getpgid", "os.getsid")
SLEEP_CALLS = ("time.sleep", "asyncio.sleep")
LIB_BUSY_ERRORS_SUFFIX = ("Timeout", "AlreadyLocked", "LockException", "LockError")
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}


class Calls:
    """Methods of :class:`.locks.Analyzer`."""

    def _entry_points(self) -> dict[str, str]:
        """function name -> 'ignored' | 'sysexit' for module-level calls of it."""
        cst = self.cst
        out: dict[str, str] = {}
        for c in self.calls:
            if self.func_of(c) is not None or self.class_of(c) is not None:
                continue
            if not isinstance(c.func, cst.Name) or c.func.value not in self.funcs:
                continue
            par = self.up(c)
            if isinstance(par, cst.Expr):
                out.setdefault(c.func.value, "ignored")
            elif isinstance(par, cst.Arg):
                outer = self.up(par)
                if isinstance(outer, cst.Call) and self.call_q(outer) in EXIT_CALLS_Q:
                    out[c.func.value] = "sysexit"
                elif isinstance(outer, cst.Call) and self.call_q(outer) == "SystemExit":
                    out[c.func.value] = "sysexit"
        return out

    def exit_status(self, arg: Any) -> int | None:
        if arg is None:
            return 0
        v = self.const(arg)
        if v is _NOVALUE:
            return None
        if v is None:
            return 0
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int):
            return v & 0xFF
        return 1

    def _script_wide_durable(self) -> int | None:
        """Where the script's prints and log calls start to leave a record (a log file, a
        handler, stdout redirected): the offset of the first module-level setup, 0 when one
        lives in a function (its call order is unknown), None when there is none."""
        cst = self.cst
        starts: list[int] = []
        for c in self.calls:
            q = self.call_q(c)
            last = q.split(".")[-1]
            if (
                (q == "logging.basicConfig" and (self.kw(c, "filename") or self.kw(c, "handlers")))
                or last in LOG_HANDLERS
                or q in ("logging.config.dictConfig", "logging.config.fileConfig", "os.dup2")
            ):
                starts.append(0 if self.func_of(c) is not None else self.off(c))
        for a in self.descendants(self.module, cst.Assign):
            for t in a.targets:
                if self.qname(t.target) in ("sys.stdout", "sys.stderr"):
                    starts.append(0 if self.func_of(a) is not None else self.off(a))
        return min(starts) if starts else None

    def _exiting_helper(self, call: Any) -> list[Any] | None:
        """The body of the script's own function ``call`` runs when that body always ends
        the run (an exit call or ``raise SystemExit`` among its top-level statements, before
        any return): ``die("busy")``."""
        cst = self.cst
        if not isinstance(call, cst.Call):
            return None
        f = call.func
        if isinstance(f, cst.Name):
            cands = [d for d in self.funcs.get(f.value, []) if self.class_of(d) is None]
        elif (
            isinstance(f, cst.Attribute)
            and isinstance(f.value, cst.Name)
            and f.value.value in ("self", "cls")
        ):
            cands = [d for d in self.funcs.get(f.attr.value, []) if self.class_of(d) is not None]
        else:
            return None
        if len(cands) != 1 or not isinstance(cands[0].body, cst.IndentedBlock):
            return None
        body = list(cands[0].body.body)
        for st in body:
            if not isinstance(st, cst.SimpleStatementLine):
                continue
            for sm in st.body:
                if isinstance(sm, cst.Return):
                    return None
                if isinstance(sm, cst.Expr) and self.exit_call(sm.value) is not None:
                    return body
                if isinstance(sm, cst.Raise) and sm.exc is not None:
                    exc = sm.exc.func if isinstance(sm.exc, cst.Call) else sm.exc
                    if self.qname(exc) == "SystemExit":
                        return body
        return None

    def exit_call(self, node: Any) -> Any:
        """The exit call (sys.exit(...), exit(), os._exit) if ``node`` is one."""
        if isinstance(node, self.cst.Call) and self.call_q(node) in EXIT_CALLS_Q:
            return node
        return None

    def removal_target(self, call: Any) -> tuple[Any, bool] | None:
        """(path node or PathExpr, is_glob) for a removal call, else None."""
        cst = self.cst
        q = self.call_q(call)
        m = self.method(call)
        node = None
        if q in REMOVE_CALLS:
            node = self.arg(call, 0, "path")
        elif m in REMOVE_METHODS and isinstance(call.func, cst.Attribute) and q not in REMOVE_CALLS:
            if q.startswith(("os.", "shutil.")):
                return None
            node = call.func.value
        if node is None:
            return None
        # glob-driven: the removed name is the loop variable of a glob loop
        name = node
        if (
            isinstance(name, cst.Call)
            and name.args
            and self.call_q(name).split(".")[-1] in ("Path", "str")
        ):
            name = name.args[0].value
        if isinstance(name, cst.Name):
            v = self.lookup(name)
            if isinstance(v, tuple) and v[0] == "for":
                it = v[1].iter
                if isinstance(it, cst.Call):
                    iq = self.call_q(it)
                    im = self.method(it)
                    if iq in ("glob.glob", "glob.iglob") and it.args:
                        return self.path(it.args[0].value), True
                    if im in ("glob", "rglob") and isinstance(it.func, cst.Attribute) and it.args:
                        base = self._parts(it.func.value, 0)
                        pat = self._parts(it.args[0].value, 0)
                        return PathExpr(tuple(_merge(_join(base, pat))), self.code(it)), True
        return self.path(node), False

    def creation(self, call: Any) -> tuple[str, Any, str] | None:
        """(mechanism, path node, how) for calls that create a name.  how: exclusive |
        mkdir | plain (open "w"/touch())."""
        cst = self.cst
        q = self.call_q(call)
        m = self.method(call)
        if q in ("open", "io.open", "builtins.open", "codecs.open"):
            mode = self.mode_of(call)
            p = self.arg(call, 0, "file")
            if mode is None:
                return None
            if "x" in mode:
                return (f'open(..., "{mode}")', p, "exclusive")
            if "w" in mode or "a" in mode:
                return (f'open(..., "{mode}")', p, "plain")
            return None
        if q == "os.open":
            flags = self.flag_names(self.arg(call, 1, "flags"))
            p = self.arg(call, 0, "path")
            if "O_CREAT" in flags and "O_EXCL" in flags:
                return ("os.open(O_CREAT|O_EXCL)", p, "exclusive")
            if "O_CREAT" in flags:
                return ("os.open(O_CREAT)", p, "plain")
            return None
        if q in ("os.mkdir", "os.makedirs"):
            ek = self.kw(call, "exist_ok")
            if ek is not None and self.const(ek) is not False:
                return None
            if q == "os.makedirs" and len([a for a in call.args if a.keyword is None]) >= 3:
                return None
            return (q, self.arg(call, 0, "path" if q == "os.mkdir" else "name"), "mkdir")
        if q in ("os.link", "os.symlink"):
            return (q, self.arg(call, 1, "dst"), "exclusive")
        if not isinstance(call.func, cst.Attribute) or q.startswith(("os.", "shutil.", "sys.")):
            return None
        recv = call.func.value
        if isinstance(recv, cst.Name) and (
            recv.value in self.imports or recv.value in ("os", "_os", "posix", "nt", "shutil")
        ):
            return None  # a module function we do not know, not a Path method
        if m == "touch":
            ek = self.kw(call, "exist_ok")
            if ek is not None and self.const(ek) is False:
                return ("Path.touch(exist_ok=False)", recv, "exclusive")
            return ("Path.touch()", recv, "plain")
        if m == "mkdir":
            ek = self.kw(call, "exist_ok")
            if ek is not None and self.const(ek) is not False:
                return None
            return ("Path.mkdir()", recv, "mkdir")
        if m in ("write_text", "write_bytes"):
            return (f"Path.{m}()", recv, "plain")
        if m == "open" and self.is_pathlike(recv):
            mv = self.arg(call, 0, "mode")
            mode = self.const(mv) if mv is not None else "r"
            if isinstance(mode, str) and "x" in mode:
                return (f'Path.open("{mode}")', recv, "exclusive")
            if isinstance(mode, str) and ("w" in mode or "a" in mode):
                return (f'Path.open("{mode}")', recv, "plain")
        if m in ("symlink_to", "hardlink_to"):
            return (f"Path.{m}()", recv, "exclusive")
        return None

    def _nonblocking_kw(self, call: Any) -> bool:
        b = self.kw(call, "blocking")
        if b is not None and self.const(b) is False:
            return True
        if self.method(call) == "acquire" and call.args and call.args[0].keyword is None:
            if self.const(call.args[0].value) is False:
                return True
        t = self.kw(call, "timeout")
        if t is not None and self.const(t) in (0, 0.0):
            return True
        f = self.kw(call, "fail_when_locked")
        if f is not None and self.const(f) is True:
            return True
        flags = self.flag_names(self.kw(call, "flags"))
        return bool({"NON_BLOCKING", "LOCK_NB"} & flags)

    def _kw_true(self, call: Any, name: str) -> bool:
        v = self.kw(call, name)
        return v is not None and self.const(v) is True

    OBJECT_LOCKS = {
        "filelock.FileLock": (LockKind.FLOCK, "FileLock"),
        "filelock.UnixFileLock": (LockKind.FLOCK, "UnixFileLock"),
        "filelock.SoftFileLock": (LockKind.EXISTENCE, "SoftFileLock"),
        "portalocker.Lock": (LockKind.FLOCK, "portalocker.Lock"),
        "portalocker.RLock": (LockKind.FLOCK, "portalocker.RLock"),
        "portalocker.utils.Lock": (LockKind.FLOCK, "portalocker.Lock"),
        "fasteners.InterProcessLock": (LockKind.LOCKF, "fasteners.InterProcessLock"),
        "fasteners.process_lock.InterProcessLock": (LockKind.LOCKF, "fasteners.InterProcessLock"),
        # decorators that hold the lock around each call of the function
        "fasteners.interprocess_locked": (LockKind.LOCKF, "fasteners.interprocess_locked"),
        "fasteners.process_lock.interprocess_locked": (
            LockKind.LOCKF,
            "fasteners.interprocess_locked",
        ),
        "fasteners.InterProcessReaderWriterLock": (
            LockKind.LOCKF,
            "fasteners.InterProcessReaderWriterLock",
        ),
        "fasteners.interprocess_read_locked": (
            LockKind.LOCKF,
            "fasteners.interprocess_read_locked",
        ),
        "fasteners.interprocess_write_locked": (
            LockKind.LOCKF,
            "fasteners.interprocess_write_locked",
        ),
    }
