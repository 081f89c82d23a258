"""Which Python files need the full analysis (tree-sitter, lowering, the passes).

The full analysis costs tens of times as much per file as CPython's parser, and CPython's
parser alone costs more than a whole ruff run, while only a small share of files can hold a
lock fact.  So two tests run first (measured: without the AST test, a scan of the Python
installation takes 17 times as long):

- :func:`may_hold_lock`, on the text (substring scans, C speed): a lock API, ``O_EXCL``, an
  exclusive mode string, ``os.remove``/``os.kill``, a file removal, a create call with a
  ``try``.  A file that fails it is not parsed at all (unless :func:`looks_like_python2`:
  then CPython's parser runs, and tree-sitter only when CPython refuses the file).
- :class:`Gate`, on CPython's AST: the file goes on only with an *anchor* of a lock fact:

  - a lock API: ``flock``/``lockf``, filelock, portalocker, fasteners, django's file locks;
  - an exclusive create: an ``"x"`` mode (also through a variable), ``O_EXCL``, or a create
    call (mkdir, link, ``touch(exist_ok=False)``...) under a handler that catches the clash
    and decides (for a wide ``OSError`` handler: when it exits or the name looks like a lock);
  - ``os.kill`` of a PID that may be read from a file, psutil;
  - a removal (``os.remove``/``unlink``/``rmdir``/``rmtree``, ``Path.unlink``...) that is
    part of a probe (a create right before it), of a check-then-create (an existence test,
    a create and a removal of one name), or whose target may be a lock-like name;
  - a function imported under another name whose calls the tests would look for.

  Names are traced the way the analyser resolves paths: through assignments, parameters
  (call sites), ``self.X`` and the arguments of the path functions it knows.

Both tests over-approximate what the analyser turns into facts: a file that fails them holds
none, so skipping it changes no finding (``bench/corpus_scan.py`` before and after a change,
``tests/test_perf_prefilter.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ... import lazyre
from ...hints import Any
from ...paths import lockish_text

KILL_NAMES = frozenset({"kill", "killpg"})
LIB_NAMES = frozenset(
    {
        "flock",
        "lockf",
        "FileLock",
        "SoftFileLock",
        "UnixFileLock",
        "InterProcessLock",
        "portalocker",
        "fasteners",
        "O_EXCL",
        "pid_exists",
        "psutil",
    }
)
LIB_MODULES = ("filelock", "portalocker", "fasteners", "psutil")
# creating a name; with an exclusive outcome inside a ``try`` (open is judged by its mode)
CREATE_NAMES = frozenset(
    {"mkdir", "makedirs", "link", "symlink", "symlink_to", "hardlink_to", "touch"}
)
# `file` is Python 2's open
WRITE_NAMES = CREATE_NAMES | {"open", "file", "write_text", "write_bytes"}
PLAIN_WRITES = frozenset({"open", "file", "touch", "write_text", "write_bytes"})
OPEN_NAMES = frozenset({"open", "file", "fdopen"})
TEST_NAMES = frozenset({"exists", "isfile", "is_file", "lexists"})
# the analyser's vocabularies (qualified names), and the bare names the gate looks for
REMOVE_CALLS = frozenset({"os.remove", "os.unlink", "os.rmdir", "shutil.rmtree", "os.removedirs"})
REMOVE_METHODS = frozenset({"unlink", "rmdir"})  # Path methods: the receiver is removed
REMOVE_FUNCS = frozenset(q.rsplit(".", 1)[-1] for q in REMOVE_CALLS)
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
OS_MODULES = frozenset({"os", "shutil"})
MODE_X = lazyre.compile(r"[rwabtU+]*x[rwabtU+]*\Z")
REACH_BUDGET = 5000  # nodes visited when tracing removal targets; beyond it: analyse

# the text test: plain substring tests first (C speed), a pattern only to confirm
_STRONG = (
    "flock",
    "FileLock",
    "InterProcessLock",
    "portalocker",
    "fasteners",
    "filelock",
    "fcntl",
    "O_EXCL",
    "pid_exists",
    "psutil",
    "django.core.files",
    "unlink",
    "rmdir",
    "rmtree",
    "removedirs",
)
_CREATE_TEXT = ("mkdir", "makedirs", "symlink", "hardlink_to", "touch(")
_MODE_TEXT = lazyre.compile(r"""(['"])[rwabtU+]*x[rwabtU+]*\1""")  # an exclusive-create mode


def _os_call(text: str, word: str) -> bool:
    """``os.word``, a bare ``word(`` (``from os import word``), or any use of ``word`` in a
    file that imports os under another name."""
    i = text.find(word)
    if i < 0:
        return False
    while i >= 0:
        before = text[max(0, i - 3) : i]
        if before == "os.":
            return True
        prev = before[-1:]
        if not prev or not (prev.isalnum() or prev in "._"):
            rest = text[i + len(word) : i + len(word) + 3].lstrip(" pg")
            if rest.startswith("("):
                return True
        i = text.find(word, i + len(word))
    return "import os as" in text or "from os import" in text or "from posix import" in text


_LOCKF = lazyre.compile(r"\blockf\b")  # not lockfile
_WRITE_OPEN = lazyre.compile(r"""['"][wa]b?\+?['"]|write_text\(""")  # open(p, "w"), write_text
# a command asking whether a PID lives: "ps -p %d", "kill -0 {pid}", ["ps", "-p", pid]
LISTING_CMD = lazyre.compile(r"\s*(?:\S*/)?(?:pgrep|pidof)\b")
PS_CMD = lazyre.compile(r"(?:^|[\s/])(?:ps(?:\s+-\w+)*\s+-\w*p\b|kill\s+-0\b)")
_PS_CMD_TEXT = lazyre.compile(
    r"""['"](?:[^'"\n]*[\s/])?(?:ps(?:\s+-\w+)*\s+-\w*p\b|kill\s+-0\b)"""
    r"""|['"](?:[\w/]*/)?(?:ps['"]\s*,[^\]\n]*['"]-\w*p|kill['"]\s*,\s*['"]-0)"""
)
_PROC_PID = lazyre.compile(r"""['"]/proc/?(?:['"]|%|\{)""")  # "/proc/%d", f"/proc/{pid}", "/proc"


def may_hold_lock(text: str) -> bool:
    """The text test: False means the file holds no lock fact."""
    if any(t in text for t in _STRONG):
        return True
    if "lockf" in text and _LOCKF.search(text):
        return True
    if "open" in text and ("x'" in text or 'x"' in text or "x+" in text or "xb" in text):
        if _MODE_TEXT.search(text):
            return True
    if _os_call(text, "remove") or _os_call(text, "kill"):
        return True
    if _os_call(text, "getpgid") or _os_call(text, "getsid"):
        return True  # os.getpgid(pid) raising for a dead PID: a liveness test (LCK105)
    if ("exists(" in text or "isfile(" in text) and _WRITE_OPEN.search(text):
        low = text.lower()
        if "pid" in low or "lock" in low:
            return True  # a pid or lock file tested, then written (LCK103)
    if "/proc" in text and _PROC_PID.search(text):
        return True  # a liveness test of a PID (LCK105)
    if ("ps" in text or "kill" in text) and _PS_CMD_TEXT.search(text):
        return True  # `ps -p PID` / `kill -0 PID` run as a command (LCK105)
    if "FileExistsError" in text and "try" in text:
        return True  # a create that cannot clash under a clash handler (LCK109)
    return "try" in text and (any(t in text for t in _CREATE_TEXT) or _os_call(text, "link"))


_NOT_NODES = frozenset(
    {
        "ctx",
        "id",
        "attr",
        "arg",
        "name",
        "module",
        "level",
        "kind",
        "type_comment",
        "is_async",
        "conversion",
        "simple",
    }
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _NOT_NODES)
    return fields


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself included), in no set order: ``ast.walk`` without
    its generator layers and without the Load/Store context nodes (three times faster)."""
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        yield n
        for f in _CHILD_FIELDS.get(n.__class__) or _child_fields(n.__class__):
            v = getattr(n, f, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        push(x)
            elif isinstance(v, ast.AST):
                push(v)


def children(n: ast.AST) -> list[ast.AST]:
    """The child nodes of ``n`` (context nodes left out), like ``walk``'s."""
    out: list[ast.AST] = []
    for f in _CHILD_FIELDS.get(n.__class__) or _child_fields(n.__class__):
        v = getattr(n, f, None)
        if v.__class__ is list:
            out.extend(x for x in v if isinstance(x, ast.AST))
        elif isinstance(v, ast.AST):
            out.append(v)
    return out


# anchored at line starts: a search from every `except ` of a long line rescans it each time
_PY2_PRINT = lazyre.compile(r"(?m)^[ \t]*print [\"'a-zA-Z_>%]")
_PY2_EXCEPT = lazyre.compile(r"(?m)^[ \t\f]*except [^:\n()]*,\s*\w+\s*:")
_PY2_RAISE = lazyre.compile(r"raise [\w.]+\s*,\s*\S")


def looks_like_python2(text: str) -> bool:
    """A print statement starting a line, ``except E, e:`` or ``raise E, "why"``: Python 2
    code, which python3 cannot even compile (CPython has the last word)."""
    if "print " in text and _PY2_PRINT.search(text):
        return True
    if "except " in text and _PY2_EXCEPT.search(text):
        return True
    return "raise " in text and _PY2_RAISE.search(text) is not None


# names whose import under another name hides the calls the gate looks for
RENAMED_MATTER = REMOVE_FUNCS | KILL_NAMES | CREATE_NAMES | OPEN_NAMES | TEST_NAMES | {"register"}


def _ps_argv(node: ast.List | ast.Tuple) -> bool:
    """``["ps", "-p", pid]``, ``["kill", "-0", pid]``: a liveness command as a list."""
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if not words or not node.elts or not isinstance(node.elts[0], ast.Constant):
        return False
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "ps":
        return any(w.startswith("-") and "p" in w for w in words[1:])
    return prog == "kill" and "-0" in words[1:]


def _func_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _exclusive_creates(node: ast.AST) -> list[ast.expr]:
    """The targets of calls under ``node`` that fail when the name exists: mkdir/makedirs
    without ``exist_ok=True``, link/symlink, ``touch(exist_ok=False)``."""
    out: list[ast.expr] = []
    for n in walk(node):
        if not isinstance(n, ast.Call) or _func_name(n.func) not in CREATE_NAMES:
            continue
        exist_ok = next((k.value for k in n.keywords if k.arg == "exist_ok"), None)
        if _func_name(n.func) == "touch":
            if not (isinstance(exist_ok, ast.Constant) and exist_ok.value is False):
                continue  # a plain touch() never clashes
        elif isinstance(exist_ok, ast.Constant) and exist_ok.value is True:
            continue
        out.extend(_call_targets(n) or [n])
    return out


# the handlers that catch a clash on create (the analyser's list; qualified names too)
CLASH_ERRORS = (
    "FileExistsError",
    "OSError",
    "IOError",
    "EnvironmentError",
    "Exception",
    "BaseException",
    "os.error",
)
FILE_EXISTS_ERRORS = frozenset(n.rsplit(".", 1)[-1] for n in CLASH_ERRORS)
EXIT_CALLS = frozenset(q.rsplit(".", 1)[-1] for q in EXIT_CALLS_Q)
DECIDING_CALLS = EXIT_CALLS | KILL_NAMES | REMOVE_FUNCS
# names that say nothing about which file an expression names
PATH_PLUMBING = frozenset(
    {
        "self",
        "cls",
        "os",
        "path",
        "join",
        "Path",
        "PurePath",
        "str",
        "shutil",
        "pathlib",
        "abspath",
        "expanduser",
        "dirname",
        "basename",
        "realpath",
        "fspath",
        "format",
        "resolve",
    }
)


def _decides_on_clash(handler: ast.ExceptHandler) -> str | None:
    """How a handler may read a clash as "busy": "exit" (it exits, or it catches
    FileExistsError or tests EEXIST and leaves, skips, retries or takes over), "maybe" (a
    wider error that leaves some other way: a lock only when the name looks like one),
    None (not a clash handler).  A superset of the analyser's busy branches."""
    specific = handler.type is None
    if handler.type is not None:
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names = {_func_name(t) for t in types}
        if not names & FILE_EXISTS_ERRORS:
            return None
        specific = "FileExistsError" in names
    decides = exits = False
    for n in walk(handler):
        if isinstance(n, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            decides = True
        elif isinstance(n, ast.Call) and _func_name(n.func) in DECIDING_CALLS:
            decides = True
            exits = exits or _func_name(n.func) in EXIT_CALLS
        elif (
            isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant)
            and n.value.value in (True, False, None)
        ):
            decides = True  # `locked = False`, returned after the try
        elif isinstance(n, ast.Call) and _func_name(n.func) == "sleep":
            decides = True  # waits, then a loop around the try retries
        elif isinstance(n, (ast.Name, ast.Attribute)) and _func_name(n) == "EEXIST":
            specific = True
    if not decides:
        return None
    return "exit" if specific or exits else "maybe"


def _enter_creates(func: ast.AST) -> bool:
    """An ``__enter__`` whose ``try`` creates a name exclusively under a clash handler that
    decides (re-raising too): with the ``__exit__`` that removes it, a scope lock."""
    for n in walk(func):
        if isinstance(n, ast.Try) and any(_decides_on_clash(h) for h in n.handlers):
            if any(x for st in n.body for x in _exclusive_creates(st)):
                return True
    return False


def _names_file_exists(node: ast.AST) -> bool:
    """A handler of the try names FileExistsError (LCK109's busy branch)."""
    for h in getattr(node, "handlers", ()):
        if h.type is not None:
            types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            if any(_func_name(t) == "FileExistsError" for t in types):
                return True
    return False


def _never_clashes(node: ast.AST) -> bool:
    """A create under ``node`` that succeeds on an existing name: mkdir/makedirs with
    ``exist_ok=True``, a writing open (LCK109)."""
    for n in walk(node):
        if not isinstance(n, ast.Call):
            continue
        name = _func_name(n.func)
        if name in ("mkdir", "makedirs"):
            ek = next((k.value for k in n.keywords if k.arg == "exist_ok"), None)
            if isinstance(ek, ast.Constant) and ek.value is True:
                return True
        elif name in OPEN_NAMES and _created_in(n, plain=True):
            return True
    return False


def _call_targets(call: ast.Call) -> list[ast.expr]:
    out = [*call.args[:2], *(k.value for k in call.keywords)]
    if isinstance(call.func, ast.Attribute):
        out.append(call.func.value)
    return out


def _created_in(node: ast.AST, plain: bool = False) -> list[ast.expr]:
    """The names that calls inside ``node`` may create (opens for reading excluded);
    ``plain``: only creates that do not fail on an existing name (open, touch, write_*)."""
    out: list[ast.expr] = []
    names = PLAIN_WRITES if plain else WRITE_NAMES
    for n in walk(node):
        if not isinstance(n, ast.Call) or _func_name(n.func) not in names:
            continue
        if _func_name(n.func) in OPEN_NAMES:
            modes = [k.value for k in n.keywords if k.arg == "mode"] + n.args[1:2]
            if isinstance(n.func, ast.Attribute):
                modes += n.args[:1]
            if not modes and isinstance(n.func, ast.Name):
                continue  # open(p): reading
            if modes and all(
                isinstance(m, ast.Constant)
                and isinstance(m.value, str)
                and not set("wax+") & set(m.value)
                for m in modes
            ):
                continue
        out.extend(_call_targets(n))
    return out


def _tested_in(node: ast.AST) -> list[ast.expr]:
    """The names that existence tests inside ``node`` test."""
    return [
        a
        for n in walk(node)
        if isinstance(n, ast.Call) and _func_name(n.func) in TEST_NAMES
        for a in _call_targets(n)
    ]


def _tokens(exprs: list[ast.expr]) -> tuple[set[str], set[object]]:
    dumps: set[str] = set()
    words: set[object] = set()
    for e in exprs:
        dumps.add(ast.dump(e))
        for n in walk(e):
            if isinstance(n, ast.Name) and n.id not in PATH_PLUMBING:
                words.add(n.id)
            elif isinstance(n, ast.Attribute) and n.attr not in PATH_PLUMBING:
                words.add(n.attr)
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                words.add(n.value)
    return dumps, words


def _related(*groups: list[ast.expr]) -> bool:
    """Whether groups of path expressions may all name one file: the same expression, or a
    variable, attribute or string they share (path plumbing such as ``os.path.join`` and
    ``self`` aside)."""
    if not all(groups):
        return False
    tokens = [_tokens(g) for g in groups]
    dumps = set.intersection(*(d for d, _w in tokens))
    words = set.intersection(*(w for _d, w in tokens))
    return bool(dumps or words)


def _has_call(node: ast.AST, names: frozenset[str]) -> bool:
    return any(isinstance(n, ast.Call) and _func_name(n.func) in names for n in walk(node))


class _Gate:
    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
        self.module_aliases: dict[str, str] = {}  # local name -> module (os, shutil)
        self.removals: list[tuple[ast.expr, list[ast.expr]]] = []  # (func, target exprs)
        self.exists_ifs: list[ast.If] = []
        self.getpid = False  # os.getpid seen: a PID may be written into a tested name
        self.call_ifs: list[ast.If] = []
        self.defs: dict[str, list[ast.AST]] = {}  # the file's functions by name
        self.blocks: list[list[ast.stmt]] = []
        self.open_aliases: set[str] = set()
        self.bare_calls: dict[str, list[ast.Call]] = {}  # f(...) by name
        # exclusive creates under a wide error handler: a lock only if named like one
        self.generic_creates: list[ast.expr] = []
        self.kills: list[tuple[str, ast.Call]] = []  # (receiver, call) of X.kill(pid, ...)
        self.x_mode_const = False  # an exclusive mode string anywhere
        self.open_modes: list[ast.expr] = []  # open() modes that are not literals

    def anchor(self) -> str | None:
        """The first anchor found, named (None: the file holds no lock fact)."""
        for node in walk(self.tree):
            t = type(node)
            if t is ast.Name:
                if node.id in LIB_NAMES:
                    return node.id
                self.getpid |= node.id == "getpid"
            elif t is ast.Attribute:
                if node.attr in LIB_NAMES:
                    return node.attr
                self.getpid |= node.attr == "getpid"
            elif t is ast.Constant:
                if isinstance(node.value, str) and MODE_X.match(node.value):
                    self.x_mode_const = True
                if isinstance(node.value, str) and (
                    node.value in ("/proc", "/proc/")
                    or node.value.startswith(("/proc/%", "/proc/{"))
                ):
                    return "/proc/<pid> test"
                if isinstance(node.value, str) and PS_CMD.search(node.value):
                    return "ps -p / kill -0 command"
                if isinstance(node.value, str) and LISTING_CMD.match(node.value):
                    return "pgrep / pidof command"  # a stored PID looked up in its output
            elif t in (ast.List, ast.Tuple):
                if _ps_argv(node):
                    return "ps -p / kill -0 command"
            elif t is ast.Call:
                if self._call(node):
                    return "exclusive open"
            elif t is ast.If:
                if _has_call(node.test, TEST_NAMES):
                    self.exists_ifs.append(node)
                elif any(isinstance(n, ast.Call) for n in walk(node.test)):
                    self.call_ifs.append(node)  # maybe a helper's `return exists(P)`
            elif t in (ast.FunctionDef, ast.AsyncFunctionDef):
                self.defs.setdefault(node.name, []).append(node)
                if node.name == "__enter__" and _enter_creates(node):
                    return "create under a clash handler in __enter__"
            elif t is ast.Import:
                self._note_aliases(node)
                for a in node.names:
                    top = a.name.split(".")[0]
                    if top in LIB_MODULES:
                        return top
            elif t is ast.ImportFrom:
                self._note_aliases(node)
                mod = node.module or ""
                top = mod.split(".")[0]
                if (top in LIB_MODULES and top != "filelock") or mod.startswith(
                    "django.core.files"
                ):
                    return mod  # (filelock's lock classes are caught by name)
                for a in node.names:
                    if a.name in LIB_NAMES:
                        return a.name
                    if a.asname and a.asname != a.name and a.name in OPEN_NAMES:
                        self.open_aliases.add(a.asname)  # `from io import open as io_open`
                    elif a.asname and a.name in RENAMED_MATTER and a.asname != a.name:
                        # `from os import remove as rm`: the calls hide behind another name
                        return f"{a.name} imported as {a.asname}"
            elif t is ast.Try or t.__name__ == "TryStar":
                kinds = {_decides_on_clash(h) for h in node.handlers} - {None}
                if kinds:
                    made = [x for st in node.body for x in _exclusive_creates(st)]
                    if made and "exit" in kinds:
                        return "create under a clash handler"
                    if _names_file_exists(node) and any(_never_clashes(st) for st in node.body):
                        return "non-exclusive create under FileExistsError"
                    self.generic_creates.extend(made)
            if t in (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) or (
                isinstance(node, ast.stmt) and hasattr(node, "body")
            ):
                for field in ("body", "orelse", "finalbody"):
                    body = getattr(node, field, None)
                    if isinstance(body, list) and len(body) > 1:
                        self.blocks.append(body)
            elif t is ast.ExceptHandler and len(node.body) > 1:
                self.blocks.append(node.body)
        for alias in self.open_aliases:
            for call in self.bare_calls.get(alias, ()):
                if self._call(call, "open"):
                    return "exclusive open"
        if self.x_mode_const and self.open_modes and self._exclusive_mode():
            return "exclusive mode"  # open(p, mode) with mode = "x" bound somewhere
        if self._kills_stored_pid():
            return "os.kill"
        if self.generic_creates and self._lockish(self.generic_creates):
            return "create under a clash handler"
        self.removals = self.os_removals()
        if not self.removals:
            if self.getpid and self._check_then_create(kept=True):
                return "check then create of a PID file"  # the run's PID kept in it
            return None
        if self._probe():
            return "probe"
        if self._check_then_create():
            return "check then create"
        if self._lockish_removal():
            return "lock-like removal"
        return None

    def _note_aliases(self, node: ast.Import | ast.ImportFrom) -> None:
        """The local names of the os/shutil modules and of os.kill."""
        for a in node.names:
            if a.name in OS_MODULES:
                self.module_aliases[a.asname or a.name] = a.name
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module in ("os", "posix")
                and a.name in KILL_NAMES
            ):
                self.module_aliases[a.asname or a.name] = "os.kill"

    def os_removals(self) -> list[tuple[ast.expr, list[ast.expr]]]:
        """The removals recorded, ``X.remove`` only where X is the os module (a list's
        ``remove`` removes no file)."""
        return [
            (f, targets)
            for f, targets in self.removals
            if not isinstance(f, ast.Attribute)
            or f.attr != "remove"
            or (isinstance(f.value, ast.Name) and f.value.id in self.module_aliases)
        ]

    def _call(self, node: ast.Call, name: str | None = None) -> bool:
        """Records removals; True for an open() with an exclusive mode.  ``name``: the
        function's own name when it is called through an alias."""
        func = node.func
        if name is None:
            name = _func_name(func)
            if func.__class__ is ast.Name:
                self.bare_calls.setdefault(name, []).append(node)
        args = [*node.args, *(k.value for k in node.keywords)]
        if name in OPEN_NAMES:
            modes = [k.value for k in node.keywords if k.arg == "mode"] + node.args[1:2]
            if isinstance(func, ast.Attribute):
                modes += node.args[:1]  # Path.open(mode), os.fdopen(fd, mode)
            for a in modes:
                if isinstance(a, ast.Constant):
                    if isinstance(a.value, str) and MODE_X.match(a.value):
                        return True
                else:
                    self.open_modes.append(a)
        elif name in REMOVE_FUNCS:
            targets = list(args)
            if name in REMOVE_METHODS and isinstance(func, ast.Attribute):
                targets.append(func.value)
            self.removals.append((func, targets))
        elif name in KILL_NAMES and node.args:
            # os.kill(pid, sig); proc.kill() of a subprocess takes no PID
            func_recv = func.value if isinstance(func, ast.Attribute) else func
            if isinstance(func_recv, ast.Name):
                self.kills.append((func_recv.id, node))
        elif name == "register" and node.args and _func_name(node.args[0]) in REMOVE_FUNCS:
            # atexit.register(os.remove, path)
            self.removals.append((node.args[0], args[1:]))
        return False

    def _removed_in(self, node: ast.AST) -> list[ast.expr]:
        """The targets of the removals inside ``node``."""
        funcs = {id(f): targets for f, targets in self.removals}
        return [t for n in walk(node) if id(n) in funcs for t in funcs[id(n)]]

    def _probe(self) -> bool:
        """A create right before a removal of the same name."""
        for body in self.blocks:
            for a, b in zip(body, body[1:], strict=False):
                if hasattr(b, "body"):
                    continue  # the removal is a statement of its own, right after the create
                if isinstance(a, (ast.With, ast.AsyncWith)):
                    created = [t for item in a.items for t in _created_in(item)]
                elif hasattr(a, "body"):
                    continue
                else:
                    created = _created_in(a)
                removed = self._removed_in(b)
                if removed and self._related(created, removed):
                    return True
        return False

    def _check_then_create(self, kept: bool = False) -> bool:
        """A tested name created afterwards and removed somewhere (``kept``: never removed,
        as a PID file handed on to its caller is)."""
        ifs = self.exists_ifs + [
            i for i in self.call_ifs if self._through_helpers(i.test, _tested_in) != []
        ]
        if not ifs:
            return False
        parents: dict[int, list[ast.stmt]] = {}
        for body in self.blocks:
            for st in body:
                parents[id(st)] = body
        removed = [t for _f, targets in self.removals for t in targets]
        for ifn in ifs:
            tested = self._through_helpers(ifn.test, _tested_in)
            region: list[ast.stmt] = list(ifn.body) + list(ifn.orelse)
            body = parents.get(id(ifn))
            if body is not None:
                region += body[body.index(ifn) + 1 :]
            created = [
                t for st in region for t in self._through_helpers(st, _created_in, plain=True)
            ]
            if self._related(tested, created) if kept else self._related(tested, created, removed):
                return True
        return False

    def _through_helpers(self, node: ast.AST, pick: Any, **kw: Any) -> list[ast.expr]:
        """``pick(node)``, and ``pick`` of the body of each function of this file that a call
        in ``node`` runs (the analyser reads tests and creates in small helpers)."""
        out = list(pick(node, **kw))
        for n in walk(node):
            if isinstance(n, ast.Call):
                for fn in self.defs.get(_func_name(n.func), ()):
                    out.extend(t for st in fn.body for t in pick(st, **kw))
        return out

    def _related(self, *groups: list[ast.expr]) -> bool:
        """``_related``, also through what the names are bound to (a cleanup helper's
        parameter names the path its callers pass)."""
        if not all(groups):
            return False
        if _related(*groups):
            return True
        words = [self._words(g) for g in groups]
        if any(w is None for w in words):
            return True  # too tangled to trace cheaply: let the analyser judge
        return bool(set.intersection(*words))  # type: ignore[arg-type]

    def _bfs(self, start: list[ast.AST], step: Any) -> Iterator[ast.AST]:
        """Each node reachable from ``start`` once, ``step(node)`` giving the next ones;
        raises _TooTangled past the budget."""
        if not hasattr(self, "names"):
            self._index()
        work = list(start)
        seen: set[int] = set()
        while work:
            n = work.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            if len(seen) > REACH_BUDGET:
                raise _TooTangled
            yield n
            work.extend(step(n))

    def _path_step(self, n: ast.AST) -> list[ast.AST]:
        """Where the analyser's path resolution goes from ``n``: names, parameters and
        ``self.X`` to their values, the arguments of the path functions it knows; any other
        call or attribute is unknown to it (its spelling alone identifies the path)."""
        if isinstance(n, ast.Call):
            defs = self.defs.get(_func_name(n.func), ())
            if defs:  # a helper of this file building the path: what it returns
                return [
                    r.value
                    for fn in defs
                    for r in walk(fn)
                    if isinstance(r, ast.Return) and r.value is not None
                ] + [*n.args, *(k.value for k in n.keywords)]
            if _func_name(n.func) not in PATH_CALLS:
                return []
            out = [*n.args, *(k.value for k in n.keywords)]
            if isinstance(n.func, ast.Attribute):
                out.append(n.func.value)
            return out
        if isinstance(n, ast.Name):
            return self._values(n)
        if isinstance(n, ast.Attribute):
            if _self_attr(n):
                return list(self.attrs.get(n.attr, ()))
            return [n.value] if n.attr in ("parent", "name", "stem") else []
        if isinstance(n, _COMPOSITE):
            return children(n)
        return []

    def _value_step(self, n: ast.AST) -> list[ast.AST]:
        """Any sub-expression, and names and ``self.X`` to their values (a wider net than
        ``_path_step``, for modes and PIDs)."""
        out = children(n)
        if isinstance(n, ast.Name):
            out.extend(self._values(n))
        elif _self_attr(n):
            out.extend(self.attrs.get(n.attr, ()))
        return out

    def _words(self, exprs: list[ast.expr]) -> set[object] | None:
        """The names and strings the analyser may resolve a path built from ``exprs`` to
        (None: too tangled to trace cheaply)."""
        words: set[object] = set()
        try:
            for n in self._bfs(list(exprs), self._path_step):
                if isinstance(n, ast.Constant):
                    if isinstance(n.value, str) and _PATHISH.search(n.value):
                        if not MODE_X.match(n.value) and not _MODE.fullmatch(n.value):
                            words.add(n.value)
                elif isinstance(n, ast.Name):
                    if n.id not in PATH_PLUMBING:
                        words.add(n.id)
                elif _self_attr(n):
                    words.add(n.attr)  # type: ignore[attr-defined]
        except _TooTangled:
            return None
        return words

    # tracing a removal target to the names and strings its path may be built from -----
    # The analyser resolves a name through its assignments, a parameter through the call
    # sites, ``self.X`` through the class's assignments and a loop variable through a glob;
    # anything else (another object's attribute, a call of the script's own function) stays
    # unknown and is shown as written.  So what can make a removed path look like a lock is:
    # the removal's own expression, and the strings and names reached along those links.
    def _index(self) -> None:
        """Bindings by (scope, name) as the analyser's lookup sees them: a function is a
        scope, a class body is not; parameters with their positions; calls by name."""
        names: dict[tuple[int, str], list[ast.AST]] = {}
        attrs: dict[str, list[ast.AST]] = {}  # self.X / cls.X, whatever the class
        params: dict[tuple[int, str], tuple[str, int | None, ast.AST | None]] = {}
        calls: dict[str, list[ast.Call]] = {}
        scope_of: dict[int, int] = {}  # Name node -> its function (0: the module)
        outer: dict[int, int] = {}

        def bind(target: ast.AST, value: ast.AST | None, scope: int) -> None:
            if value is None:
                return
            for n in walk(target):
                if isinstance(n, ast.Name):
                    names.setdefault((scope, n.id), []).append(value)
                elif _self_attr(n):
                    attrs.setdefault(n.attr, []).append(value)

        stack: list[tuple[ast.AST, int, str | None]] = [(self.tree, 0, None)]
        while stack:
            node, scope, cls = stack.pop()
            t = type(node)
            if t is ast.Name:
                scope_of[id(node)] = scope
                continue
            if t in (ast.FunctionDef, ast.AsyncFunctionDef):
                fid = id(node)
                outer[fid] = scope
                a = node.args
                positional = [*a.posonlyargs, *a.args]
                defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
                defaults += a.defaults
                # __init__ is called by the class's name
                callee = cls if node.name == "__init__" and cls else node.name
                for i, (p, d) in enumerate(zip(positional, defaults, strict=False)):
                    params[(fid, p.arg)] = (callee, i, d)
                for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
                    params[(fid, p.arg)] = (callee, None, d)
                for x in (a.vararg, a.kwarg):
                    if x is not None:
                        params[(fid, x.arg)] = (callee, None, None)
                for d in [*node.decorator_list, *a.defaults, *a.kw_defaults]:
                    if d is not None:
                        stack.append((d, scope, cls))
                stack.extend((st, fid, None) for st in node.body)
                continue
            if t is ast.ClassDef:
                stack.extend((st, scope, node.name) for st in node.body)
                stack.extend((b, scope, cls) for b in [*node.bases, *node.decorator_list])
                continue
            if t is ast.Assign:
                for tg in node.targets:
                    bind(tg, node.value, scope)
            elif t in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
                bind(node.target, node.value, scope)
            elif t in (ast.For, ast.AsyncFor):
                bind(node.target, node.iter, scope)
            elif t is ast.withitem:
                if node.optional_vars is not None:
                    bind(node.optional_vars, node.context_expr, scope)
            elif t is ast.Call:
                name = _func_name(node.func)
                if name:
                    calls.setdefault(name, []).append(node)
            stack.extend((c, scope, cls) for c in children(node))
        self.names, self.attrs, self.params, self.calls = names, attrs, params, calls
        self.scope_of, self.outer = scope_of, outer

    def _values(self, name: ast.Name) -> list[ast.AST]:
        """What the analyser may resolve a name to: its bindings in the nearest scope that
        has any, or the parameter's values at the call sites (and its default)."""
        scope = self.scope_of.get(id(name), 0)
        while True:
            vals = self.names.get((scope, name.id))
            if vals:
                return vals
            p = self.params.get((scope, name.id))
            if p is not None:
                callee, index, default = p
                out: list[ast.AST] = [default] if default is not None else []
                for c in self.calls.get(callee, ()):
                    out.extend(k.value for k in c.keywords if k.arg == name.id)
                    if index is not None:
                        # a method's call sites do not pass self: either position may hold it
                        out.extend(c.args[max(0, index - 1) : index + 1])
                return out
            if scope == 0:
                return []
            scope = self.outer.get(scope, 0)

    def _kills_stored_pid(self) -> bool:
        """``os.kill(pid, ...)`` (or ``from os import kill``) where the PID may be read from a
        file: a liveness check or a kill of a stored PID."""
        pids = [
            call.args[0]
            for recv, call in self.kills
            if recv == "os"
            or self.module_aliases.get(recv) == "os"
            or self.module_aliases.get(recv) == "os.kill"
        ]
        return bool(pids) and self._reaches(pids, calls=PID_READS)

    def _lockish_removal(self) -> bool:
        return self._lockish([t for _f, targets in self.removals for t in targets])

    def _lockish(self, exprs: list[ast.AST]) -> bool:
        """Whether a path built from ``exprs`` may look like a lock's name."""
        for t in exprs:
            # the expression itself is what a message shows when its value stays unknown
            for n in walk(t):
                ident = n.id if isinstance(n, ast.Name) else getattr(n, "attr", None)
                if isinstance(ident, str) and lockish_text(ident):
                    return True
        words = self._words(list(exprs))
        if words is None:
            return True  # too tangled to trace cheaply: let the analyser judge
        strings = [w for w in words if isinstance(w, str)]
        return any(lockish_text(w) for w in strings) or lockish_text("".join(strings))

    def _exclusive_mode(self) -> bool:
        """An open() whose mode is an expression that may hold an exclusive mode string."""
        return self._reaches(list(self.open_modes), MODE_X.match)

    def _reaches(
        self, start: list[ast.AST], hit: Any = None, calls: frozenset[str] = frozenset()
    ) -> bool:
        """Whether a string ``hit`` accepts, or a call of one of ``calls``, is reachable from
        the expressions through their parts, assignments, parameters and ``self.X``."""
        try:
            for n in self._bfs(start, self._value_step):
                if hit and isinstance(n, ast.Constant) and isinstance(n.value, str):
                    if hit(n.value):
                        return True
                if calls and isinstance(n, ast.Call) and _func_name(n.func) in calls:
                    return True
        except _TooTangled:
            return True  # let the analyser judge
        return False


class _TooTangled(Exception):
    """A trace went past REACH_BUDGET nodes."""


_COMPOSITE = (
    ast.Subscript,
    ast.BinOp,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.BoolOp,
    ast.IfExp,
    ast.Tuple,
    ast.List,
    ast.Starred,
)


# how the analyser sees a PID read from a file
PID_READS = frozenset({"read", "read_text", "readline", "readlines", "read_bytes", "load"})


# the calls whose arguments the analyser resolves into a path
PATH_CALLS = frozenset(
    {
        "join",
        "Path",
        "PurePath",
        "PosixPath",
        "PurePosixPath",
        "expanduser",
        "expandvars",
        "abspath",
        "realpath",
        "normpath",
        "dirname",
        "basename",
        "str",
        "fspath",
        "format",
        "joinpath",
        "with_name",
        "with_suffix",
        "resolve",
        "absolute",
        "strip",
        "rstrip",
        "get",
        "getenv",
        "setdefault",
        "glob",  # `for p in glob.glob(pattern): os.remove(p)` removes what the pattern names
        "iglob",
        "rglob",
    }
)
_MODE = lazyre.compile(r"[rwabtU+]{1,4}")
# a string that can be (part of) a file name: not a mode, not bare punctuation
_PATHISH = lazyre.compile(r"[A-Za-z0-9_]{2}|[A-Za-z0-9_][./]|[./][A-Za-z0-9_]")


def _self_attr(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


class Gate:
    """The AST test's verdict on one file."""

    def __init__(self, tree: ast.AST) -> None:
        self._gate = _Gate(tree)
        self.anchor = self._gate.anchor()  # None: the file holds no lock fact

    def lock_like_removal(self) -> bool:
        """A removal whose target may be a lock-like name (then what the file creates
        decides whether it removes another job's lock: LCK107)."""
        g = self._gate
        if self.anchor is not None:
            # the anchor search stopped at the first anchor: collect every removal
            g = _Gate(g.tree)
            for node in walk(g.tree):
                if isinstance(node, ast.Call):
                    g._call(node)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    g._note_aliases(node)
            g.removals = g.os_removals()
        return bool(g.removals) and g._lockish_removal()
