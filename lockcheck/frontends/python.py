"""Python frontend: libcst -> :class:`FileFacts`.

A file goes through four steps, each only when the one before lets it through: the text test
and the AST test of ``python_gate`` (a file that cannot hold a lock returns empty facts
without importing libcst; CPython's parser also refuses pathological nesting with an
exception where libcst could hang or overflow the C stack), the slicer of ``python_slice``
(functions no lock fact can involve are left out), and libcst with the analyser below, whose
character positions, mapped back onto the file, give the spans.

The analysis is deliberately static and conservative: a path part that cannot be resolved stays
unknown, a branch whose end cannot be computed has an unknown status.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import os
import re
import tokenize
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from ..model import (
    Acquire,
    Background,
    BusyBranch,
    Edit,
    FileFacts,
    FixTemplate,
    Kill,
    LivenessCheck,
    LockKind,
    ParseError,
    Part,
    PartKind,
    PathExpr,
    Probe,
    ReleaseHook,
    Removal,
    Span,
)
from ..paths import lockish_name
from .python_gate import (
    CLASH_ERRORS,
    EXIT_CALLS_Q,
    LOG_HANDLERS,
    REMOVE_CALLS,
    REMOVE_METHODS,
    Gate,
    looks_like_python2,
    may_hold_lock,
)
from .python_slice import Sliced, line_starts, slice_text

MAX_CHARS = 2_000_000  # larger files (generated data) are not analysed
WORK_BUDGET = 4000  # resolution steps for one path or pid (call-site fan-out is bounded)

LIBRARY_MODULES = ("fcntl", "filelock", "portalocker", "fasteners")


def parse(path: str, text: str) -> FileFacts:
    facts = FileFacts(path=path, language="python", text=text)
    try:
        if len(text) > MAX_CHARS:
            return facts
        _analyse(facts)
    except Exception:  # noqa: BLE001 - no exception may escape a frontend
        return _fallback(path, text, facts)
    return facts


def _fallback(path: str, text: str, facts: FileFacts) -> FileFacts:
    out = FileFacts(path=path, language="python", text=text)
    out.parse_errors = list(facts.parse_errors)
    out.comments = dict(facts.comments)
    return out


class _Comments(Mapping):
    """Line -> comment, tokenized on first use: only a file with findings reads them."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._map: dict[int, str] | None = None

    def _get(self) -> dict[int, str]:
        if self._map is None:
            self._map = _comments(self._text)
        return self._map

    def __getitem__(self, line: int) -> str:
        return self._get()[line]

    def __iter__(self) -> Iterator[int]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _comments(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError):
        pass
    return out


def _one_line(msg: str) -> str:
    return (msg or "syntax error").strip().splitlines()[0][:200]


def _analyse(facts: FileFacts) -> None:
    text = facts.text
    ast_error: tuple[int, str] | None = None
    tree: ast.Module | None = None
    gate: Gate | None = None
    lockish = may_hold_lock(text)
    if not lockish and not looks_like_python2(text):
        # Nothing in the text can take, test, break or remove a lock.  Not even CPython's
        # parser runs: on ordinary code that parse alone costs more than a full ruff run,
        # so a syntax error in such a file is left to the Python tooling.  Python 2 code
        # (print statements, `except E, e:`) is the exception: a legacy job that no longer
        # runs at all under python3, cheap to spot, and CPython gives the verdict.
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning/DeprecationWarning on stderr
            tree = _parse_ast(text)  # LCK000 is CPython's verdict
        if not lockish:
            return  # it parses: the Python 2 look was a false alarm
        gate = Gate(tree)
        if gate.anchor is None:
            return  # nothing that can take, test, break or remove a lock: no libcst
        facts.comments = _Comments(text)
    except SyntaxError as e:
        ast_error = (e.lineno or 1, _one_line(e.msg))
    except (ValueError, MemoryError) as e:
        ast_error = (1, _one_line(str(e)))
    except RecursionError:
        # too deep for the Python-level AST (and for libcst, which would hang or overflow
        # the C stack): not analysed.  LCK000 only when CPython cannot compile it either.
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(text, facts.path or "<script>", "exec", dont_inherit=True)
        except (SyntaxError, RecursionError, ValueError, MemoryError):
            facts.parse_errors.append(
                ParseError(Span(1, 1, 1, 1, 0, 0), "expressions nested too deeply to compile")
            )
        return

    if ast_error is not None and "null bytes" in ast_error[1] and "PK\x03\x04" in text:
        return  # a zip application (shebang + zip archive): Python runs it; it is not source
    if ast_error is not None:
        facts.comments = _Comments(text)
    if ast_error is not None and (not lockish or not _libcst_safe(text, ast_error[1])):
        facts.parse_errors.append(_error_at(text, ast_error[0], f"syntax error: {ast_error[1]}"))
        return

    import libcst as cst  # lazily: only files that may hold a lock pay for it

    try:
        module, sliced = _parse_cst(cst, text, tree, gate)
    except cst.ParserSyntaxError as e:
        if ast_error is not None:
            # CPython's line: libcst's points one token later (often the next line)
            m = re.search(r"error at (\d+):(\d+)", str(e))
            line = min(ast_error[0], int(m.group(1))) if m else ast_error[0]
            facts.parse_errors.append(_error_at(text, line, f"syntax error: {ast_error[1]}"))
        return  # else: a limitation of libcst on valid Python: no facts
    except RecursionError:
        return
    _Analyzer(facts, module, sliced).run()


def _parse_cst(cst: Any, text: str, tree: ast.Module | None, gate: Gate | None) -> tuple:
    """libcst's module of the text with the functions no lock fact can involve dropped (see
    ``python_slice``), and the slice; the whole text when nothing is dropped or the sliced
    text does not parse."""
    if tree is not None and gate is not None:
        try:
            sliced = slice_text(tree, text, file_writes=gate.lock_like_removal())
        except (RecursionError, ValueError, AttributeError, IndexError):
            sliced = None
        if sliced is not None:
            try:
                return cst.parse_module(sliced.text), sliced
            except (cst.ParserSyntaxError, RecursionError):
                pass
    return cst.parse_module(text), None


@functools.lru_cache(maxsize=4096)
def _literal(code: str) -> Any:
    try:
        return ast.literal_eval(code)
    except Exception:  # noqa: BLE001 - any literal CPython refuses is no value
        return _NOVALUE


def _parse_ast(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except UnicodeEncodeError:
        # undecodable bytes kept as surrogates: a file in the legacy encoding its coding
        # comment declares, which CPython reads from the bytes
        return ast.parse(text.encode("utf-8", "surrogateescape"))


def _libcst_safe(text: str, message: str) -> bool:
    """Whether libcst may be given a file CPython rejected: not when the rejection is about
    nesting (libcst overflows the C stack on deep brackets)."""
    if "too many" in message or "nested" in message:
        return False
    depth = top = 0
    for m in re.finditer(r"[\[({]|[\])}]", text):
        if m.group(0) in "[({":
            depth += 1
            top = max(top, depth)
            if top > 100:
                return False
        else:
            depth = max(0, depth - 1)
    return True


def _error_at(text: str, line: int, msg: str) -> ParseError:
    lines = text.splitlines()
    line = max(1, min(line, max(1, len(lines))))
    starts = line_starts(text)
    start = starts[line - 1] if line - 1 < len(starts) else len(text)
    length = len(lines[line - 1]) if line - 1 < len(lines) else 0
    return ParseError(Span(line, 1, line, length + 1, start, start + length), msg)


# --------------------------------------------------------------------------- the analyser

FILE_EXISTS_ERRORS = set(CLASH_ERRORS)
# what a failed non-blocking flock raises: the same wide errors, not FileExistsError
BUSY_ERRORS = FILE_EXISTS_ERRORS - {"FileExistsError"} | {"BlockingIOError", "PermissionError"}
LIB_BUSY_ERRORS_SUFFIX = ("Timeout", "AlreadyLocked", "LockException", "LockError")
OS_EX = {"EX_OK": 0, "EX_TEMPFAIL": 75, "EX_SOFTWARE": 70, "EX_UNAVAILABLE": 69}
LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}


class _Entry:
    """Where a busy branch ends, as found in the code."""

    def __init__(self, node: Any, kind: str, via: list[Any] | None = None) -> None:
        self.node = node  # the small statement / call that ends it
        self.kind = kind  # exit | raise | return | loop | falls
        self.via = via  # exit through a helper: the helper's body


class _Analyzer:
    def __init__(self, facts: FileFacts, module: Any, sliced: Sliced | None = None) -> None:
        import libcst as cst

        self.cst = cst
        self.facts = facts
        self.text = facts.text
        self.module = module
        if sliced is None:
            self.pos = _positions(module, facts.text)
        else:  # offsets in the sliced text, mapped back to the file's when asked for
            self.pos = _MappedPositions(_positions(module, sliced.text), sliced.original)
        self.starts = line_starts(self.text)
        self.parent: dict[int, Any] = {}
        self.calls: list[Any] = []
        self.ifs: list[Any] = []
        self.tries: list[Any] = []
        self.fors: list[Any] = []
        self.withs: list[Any] = []
        self.funcs: dict[str, list[Any]] = {}
        self.classes: dict[str, Any] = {}
        self.imports: dict[str, str] = {}
        self.assigns: dict[tuple[int, str], list[tuple[int, Any]]] = {}
        self.attr_assigns: dict[tuple[int, str], list[Any]] = {}
        self._walk(self.module, None)
        self.shadowed = self._shadowed_modules()
        self.entry = self._entry_points()
        self.durable_everywhere = self._script_wide_durable()
        self.handled_creates: set[int] = set()
        self._multi: dict[int, int] = {}
        self._work = 0
        self._param_cache: dict[int, list[list[Part]]] = {}
        self._resolving: set[int] = set()
        self._choice: dict[int, int] = {}
        self._variants: dict[int, tuple[PathExpr, list[PathExpr]]] = {}
        self._keep: list[Any] = []

    # ------------------------------------------------------------------ tree plumbing
    def _walk(self, node: Any, parent: Any) -> None:
        cst = self.cst
        kinds = _kinds(cst)
        stack = [(node, parent)]
        while stack:
            n, p = stack.pop()
            self.parent[id(n)] = p
            kind = kinds.get(n.__class__)
            if kind is None:
                pass
            elif kind == "call":
                self.calls.append(n)
            elif kind == "if":
                self.ifs.append(n)
            elif kind == "try":
                self.tries.append(n)
            elif kind == "for":
                self.fors.append(n)
            elif kind == "with":
                self.withs.append(n)
            elif kind == "def":
                self.funcs.setdefault(n.name.value, []).append(n)
            elif kind == "class":
                self.classes[n.name.value] = n
            elif kind == "import":
                for a in n.names:
                    full = self._dotted(a.name)
                    if a.asname is not None and isinstance(a.asname.name, cst.Name):
                        self.imports[a.asname.name.value] = full
                    else:
                        top = full.split(".")[0]
                        self.imports[top] = top
            elif kind == "from":
                mod = self._dotted(n.module) if n.module is not None else ""
                if n.relative:
                    mod = "local." + mod
                if not isinstance(n.names, cst.ImportStar):
                    for a in n.names:
                        name = self._dotted(a.name)
                        local = name
                        if a.asname is not None and isinstance(a.asname.name, cst.Name):
                            local = a.asname.name.value
                        self.imports[local] = f"{mod}.{name}"
            elif kind == "assign":
                for t in n.targets:
                    self._bind(t.target, n.value, n)
            elif kind == "annassign":
                if n.value is not None:
                    self._bind(n.target, n.value, n)
            elif kind == "withitem":
                if n.asname is not None:
                    self._bind(n.asname.name, n.item, n)
            for c in reversed(_kids(n)):
                stack.append((c, n))
        self.calls.sort(key=self.off)

    def _bind(self, target: Any, value: Any, stmt: Any) -> None:
        cst = self.cst
        if isinstance(target, cst.Name):
            self._pending.append((target.value, value, stmt))
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            if target.value.value == "self":
                self._pending_attr.append((target.attr.value, value, stmt))
        elif isinstance(target, (cst.Tuple, cst.List)):
            vals = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, el in enumerate(target.elements):
                v = vals[i].value if vals is not None and i < len(vals) else None
                if v is not None:
                    self._bind(el.value, v, stmt)
                elif isinstance(el.value, cst.Name):
                    self._pending.append((el.value.value, None, stmt))

    def _dotted(self, node: Any) -> str:
        cst = self.cst
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            return self._dotted(node.value) + "." + node.attr.value
        return ""

    def __getattr__(self, name: str) -> Any:
        # lazily created binding queues (filled during the walk, indexed afterwards)
        if name in ("_pending", "_pending_attr"):
            v: list = []
            object.__setattr__(self, name, v)
            return v
        raise AttributeError(name)

    def _index_bindings(self) -> None:
        for name, value, stmt in self._pending:
            scope = self.func_of(stmt)
            key = (id(scope) if scope is not None else 0, name)
            sp = self.span(stmt)
            self.assigns.setdefault(key, []).append((sp.start, sp.end, value))
        for name, value, stmt in self._pending_attr:
            cls = self.class_of(stmt)
            key = (id(cls) if cls is not None else 0, name)
            self.attr_assigns.setdefault(key, []).append(value)

    def off(self, node: Any) -> int:
        r = self.pos.get(id(node))
        return -1 if r is None else r[0]

    def span(self, node: Any) -> Span:
        s, e = self.pos[id(node)]
        line = bisect.bisect_right(self.starts, s)
        end_line = bisect.bisect_right(self.starts, e)
        col = s - self.starts[line - 1]
        end_col = e - self.starts[end_line - 1]
        return Span(line, col + 1, end_line, end_col + 1, s, e)

    def code(self, node: Any) -> str:
        sp = self.span(node)
        return self.text[sp.start : sp.end]

    def up(self, node: Any) -> Any:
        return self.parent.get(id(node))

    def ancestors(self, node: Any):
        p = self.up(node)
        while p is not None:
            yield p
            p = self.up(p)

    def func_of(self, node: Any) -> Any:
        for a in self.ancestors(node):
            if isinstance(a, (self.cst.FunctionDef, self.cst.Lambda)):
                return a
        return None

    def class_of(self, node: Any) -> Any:
        for a in self.ancestors(node):
            if isinstance(a, self.cst.ClassDef):
                return a
        return None

    def stmt_of(self, node: Any) -> Any:
        """The statement (simple line or compound) holding ``node``."""
        cst = self.cst
        n = node
        while n is not None:
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return n
            n = self.up(n)
        return None

    def small_of(self, node: Any) -> Any:
        cst = self.cst
        n = node
        while n is not None:
            if isinstance(n, cst.BaseSmallStatement):
                return n
            if isinstance(n, cst.BaseStatement):
                return None
            n = self.up(n)
        return None

    def block_siblings(self, stmt: Any) -> tuple[list[Any], int]:
        blk = self.up(stmt)
        body = getattr(blk, "body", None)
        if isinstance(body, (list, tuple)):
            for i, s in enumerate(body):
                if s is stmt:
                    return list(body), i
        return [stmt], 0

    def within(self, node: Any, container: Any) -> bool:
        if node is container:
            return True
        a = self.pos.get(id(node))
        b = self.pos.get(id(container))
        if a is not None and b is not None:
            if not (b[0] <= a[0] and a[1] <= b[1]):
                return False  # disjoint or larger: cheap answer from offsets
            if a != b and (b[0] < a[0] or a[1] < b[1]):
                # strictly inside the container's text: inside the container (all nodes of
                # a container's text belong to it, except its own whitespace owners)
                return any(x is container for x in self.ancestors(node))
        return any(x is container for x in self.ancestors(node))

    def descendants(self, node: Any, kind: Any = None):
        stack = [node]
        while stack:
            n = stack.pop()
            if kind is None or isinstance(n, kind):
                yield n
            stack.extend(reversed(_kids(n)))

    # ------------------------------------------------------------------ names
    def _shadowed_modules(self) -> set[str]:
        out: set[str] = set()
        d = os.path.dirname(os.path.abspath(self.facts.path)) if self.facts.path else ""
        for mod in LIBRARY_MODULES:
            try:
                if d and (
                    os.path.isfile(os.path.join(d, mod + ".py"))
                    or os.path.isfile(os.path.join(d, mod, "__init__.py"))
                ):
                    out.add(mod)
            except OSError:
                pass
        return out

    def qname(self, node: Any) -> str | None:
        cst = self.cst
        if isinstance(node, cst.Name):
            n = node.value
            if n in self.imports:
                q = self.imports[n]
                if q.split(".")[0] in self.shadowed:
                    return "local." + q
                return q
            if n in self.funcs or n in self.classes:
                return "local." + n
            return n
        if isinstance(node, cst.Attribute):
            base = self.qname(node.value)
            if base is None:
                return None
            return base + "." + node.attr.value
        return None

    def call_q(self, call: Any) -> str:
        return self.qname(call.func) or ""

    def is_q(self, call: Any, *names: str) -> bool:
        q = self.call_q(call)
        return q in names

    def method(self, call: Any) -> str | None:
        if isinstance(call.func, self.cst.Attribute):
            return call.func.attr.value
        return None

    def arg(self, call: Any, index: int, keyword: str | None = None) -> Any:
        if keyword is not None:
            for a in call.args:
                if a.keyword is not None and a.keyword.value == keyword:
                    return a.value
        pos = [a for a in call.args if a.keyword is None and not a.star]
        if index is not None and 0 <= index < len(pos):
            return pos[index].value
        return None

    def kw(self, call: Any, keyword: str) -> Any:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value
        return None

    def const(self, node: Any, depth: int = 0) -> Any:
        """A literal value (str, int, bool, None) or the _NOVALUE marker."""
        cst = self.cst
        if node is None or depth > 5:
            return _NOVALUE
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return _literal(self.code(node))
        if isinstance(node, cst.Integer):
            try:
                return int(node.value.replace("_", ""), 0)
            except ValueError:
                return _NOVALUE
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            v = self.const(node.expression, depth + 1)
            return -v if isinstance(v, int) else _NOVALUE
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[node.value]
            v = self.lookup(node)
            if v is not None and not isinstance(v, tuple):
                return self.const(v, depth + 1)
            return _NOVALUE
        if isinstance(node, cst.Attribute):
            q = self.qname(node) or ""
            if q.startswith("os.") and q[3:] in OS_EX:
                return OS_EX[q[3:]]
        return _NOVALUE

    def lookup(self, name_node: Any) -> Any:
        """The value bound to a name at this point: a node, ('param', func, param),
        ('for', for_node) or None."""
        cst = self.cst
        name = name_node.value
        at = self.off(name_node)
        scope = self.func_of(name_node)
        while True:
            key = (id(scope) if scope is not None else 0, name)
            cands = [
                (c[0], c[2])
                for c in self.assigns.get(key, [])
                if c[2] is not None and not c[0] <= at < c[1]
            ]
            before = [c for c in cands if c[0] <= at]
            if before:
                return before[-1][1]
            if scope is not None:
                if cands:
                    return cands[-1][1]
                if isinstance(scope, cst.FunctionDef):
                    for p in self._params(scope):
                        if p.name.value == name:
                            return ("param", scope, p)
                for f in self.fors:
                    if self.within(name_node, f) and self._for_binds(f, name):
                        return ("for", f)
                scope = self.func_of(scope)
                at = 1 << 60
                continue
            for f in self.fors:
                if self.within(name_node, f) and self._for_binds(f, name):
                    return ("for", f)
            if cands:
                return cands[-1][1]
            return None

    def _bindings_before(self, name_node: Any) -> list[Any]:
        """Every value bound to the name in its own scope before this use (``lookup`` gives
        only the last one)."""
        scope = self.func_of(name_node)
        key = (id(scope) if scope is not None else 0, name_node.value)
        at = self.off(name_node)
        return [c[2] for c in self.assigns.get(key, []) if c[2] is not None and c[0] <= at]

    def _for_binds(self, f: Any, name: str) -> bool:
        return isinstance(f.target, self.cst.Name) and f.target.value == name

    def _params(self, func: Any) -> list[Any]:
        p = func.params
        return list(p.posonly_params) + list(p.params) + list(p.kwonly_params)

    def call_sites(self, func: Any) -> list[tuple[Any, bool]]:
        """Calls of ``func`` in this file: (call, is_method_call)."""
        cache = self.__dict__.setdefault("_sites_cache", {})
        key = id(func)
        if key not in cache:
            cache[key] = self._call_sites(func)
        return cache[key]

    def _call_sites(self, func: Any) -> list[tuple[Any, bool]]:
        cst = self.cst
        name = func.name.value
        cls = self.class_of(func)
        out = []
        if "_calls_by_name" not in self.__dict__:
            index: dict[str, list[Any]] = {}
            for c in self.calls:
                f = c.func
                n = f.value if isinstance(f, cst.Name) else None
                if isinstance(f, cst.Attribute):
                    n = f.attr.value
                if n is not None:
                    index.setdefault(n, []).append(c)
            self.__dict__["_calls_by_name"] = index
        wanted = cls.name.value if cls is not None and name == "__init__" else name
        for c in self.__dict__["_calls_by_name"].get(wanted, []):
            if cls is not None and name == "__init__":
                if isinstance(c.func, cst.Name) and c.func.value == cls.name.value:
                    out.append((c, True))
            elif isinstance(c.func, cst.Name) and c.func.value == name and cls is None:
                out.append((c, False))
            elif isinstance(c.func, cst.Attribute) and c.func.attr.value == name:
                if cls is not None:
                    out.append((c, True))
        return out

    def param_values(self, func: Any, param: Any) -> list[Any]:
        params = self._params(func)
        idx = None
        for i, p in enumerate(func.params.params):
            if p is param:
                idx = i
        is_method = (
            self.class_of(func) is not None
            and params
            and params[0].name.value
            in (
                "self",
                "cls",
            )
        )
        vals = []
        for c, _m in self.call_sites(func):
            if self.within(c, func):
                continue
            v = self.arg(c, None, param.name.value)
            if v is None and idx is not None:
                i = idx - 1 if is_method else idx
                v = self.arg(c, i)
            if v is None:
                v = param.default
            if v is not None:
                vals.append(v)
        if not vals and param.default is not None:
            vals.append(param.default)
        return vals

    # ------------------------------------------------------------------ path resolution
    def path(self, node: Any) -> PathExpr | None:
        """The resolved path of an expression.  When it goes through a parameter whose call
        sites pass different values, the result is VAR and the values are kept as variants
        (each judged on its own, see :meth:`_expand`)."""
        if node is None:
            return None
        text = self.code(node)
        self._multi = {}
        self._choice = {}
        self._work = 0
        try:
            parts = self._parts(node, 0)
        except RecursionError:
            parts = [Part(PartKind.UNKNOWN)]
        p = PathExpr(tuple(_merge(parts)), text)
        if self._multi:
            pid, n = next(iter(self._multi.items()))
            seen: dict[str, PathExpr] = {}
            for i in range(min(n, 4)):
                self._choice = {pid: i}
                self._multi = {}
                self._work = 0
                try:
                    v = PathExpr(tuple(_merge(self._parts(node, 0))), text)
                except RecursionError:
                    continue
                seen.setdefault(v.key(), v)
            self._choice = {}
            self._multi = {}
            if len(seen) > 1:
                self._variants[id(p)] = (p, list(seen.values()))
        return p

    def _expand(self, items: list[Any]) -> list[Any]:
        """One fact per variant of its path (several call-site values)."""
        import dataclasses

        out = []
        for it in items:
            var = self._variants.get(id(it.path)) if it.path is not None else None
            if var is None or var[0] is not it.path:
                out.append(it)
                continue
            self._keep.append(it)
            for v in var[1]:
                cp = dataclasses.replace(it, path=v)
                if id(it) in self._acq_nodes:
                    self._acq_nodes[id(cp)] = self._acq_nodes[id(it)]
                out.append(cp)
        return out

    def _parts(self, node: Any, depth: int) -> list[Part]:
        cst = self.cst
        unknown = [Part(PartKind.UNKNOWN)]
        self._work += 1
        if node is None or depth > 12 or self._work > WORK_BUDGET:
            return unknown
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            v = self.const(node)
            if isinstance(v, bytes):
                v = v.decode("utf-8", "replace")
            return [Part(PartKind.LIT, v)] if isinstance(v, str) else unknown
        if isinstance(node, cst.FormattedString):
            out: list[Part] = []
            for p in node.parts:
                if isinstance(p, cst.FormattedStringText):
                    out.append(Part(PartKind.LIT, p.value))
                elif p.format_spec or p.conversion:
                    out.extend(
                        self._parts(p.expression, depth + 1) if not p.format_spec else unknown
                    )
                else:
                    out.extend(self._parts(p.expression, depth + 1))
            return out
        if isinstance(node, cst.Integer):
            return [Part(PartKind.LIT, str(self.const(node)))]
        if isinstance(node, cst.Name):
            if node.value == "__file__":
                return [Part(PartKind.SCRIPT)]
            v = self.lookup(node)
            if v is None:
                return [Part(PartKind.VAR, node.value)]
            if isinstance(v, tuple):
                if v[0] == "param":
                    pkey = id(v[2])
                    resolved = self._param_cache.get(pkey) if not self._choice else None
                    if resolved is None:
                        if pkey in self._resolving:
                            return [Part(PartKind.VAR, node.value)]  # recursion
                        self._resolving.add(pkey)
                        try:
                            vals = self.param_values(v[1], v[2])
                            resolved = [self._parts(x, depth + 1) for x in vals]
                        finally:
                            self._resolving.discard(pkey)
                        if not self._choice:
                            self._param_cache[pkey] = resolved
                    keys = {tuple(r) for r in resolved}
                    if len(keys) == 1:
                        return resolved[0]
                    pid = id(v[2])
                    if pid in self._choice and self._choice[pid] < len(resolved):
                        return resolved[self._choice[pid]]
                    if resolved:
                        self._multi.setdefault(pid, len(resolved))
                    return [Part(PartKind.VAR, node.value)]
                if v[0] == "for":
                    return [Part(PartKind.VAR, node.value)]
                return unknown
            return self._parts(v, depth + 1)
        if isinstance(node, cst.Attribute):
            return self._attr_parts(node, depth)
        if isinstance(node, cst.Call):
            return self._call_parts(node, depth)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Divide):
                return _join(self._parts(node.left, depth + 1), self._parts(node.right, depth + 1))
            if isinstance(node.operator, cst.Add):
                return self._parts(node.left, depth + 1) + self._parts(node.right, depth + 1)
            if isinstance(node.operator, cst.Modulo):
                fmt = self.const(node.left)
                if isinstance(fmt, str):
                    r = node.right
                    args = [e.value for e in r.elements] if isinstance(r, cst.Tuple) else [r]
                    return self._format(fmt, args, {}, depth, percent=True)
            return unknown
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            left = self._parts(node.left, depth + 1)
            if len(left) == 1 and left[0].kind is PartKind.VAR and left[0].default is None:
                right = self._parts(node.right, depth + 1)
                return [Part(PartKind.VAR, left[0].value, PathExpr(tuple(_merge(right))))]
            return unknown
        if isinstance(node, cst.Subscript):
            q = self.qname(node.value)
            if q == "sys.argv":
                index = self.const(node.slice[0].slice.value) if node.slice else None
                return [Part(PartKind.SCRIPT if index == 0 else PartKind.ARG)]
            if q == "os.environ" and node.slice:
                key = self.const(node.slice[0].slice.value)
                if isinstance(key, str):
                    return self._env(key, None, depth)
            return unknown
        return unknown

    def _env(self, key: str, default: Any, depth: int) -> list[Part]:
        if key == "HOME":
            return [Part(PartKind.HOME)]
        if key in ("USER", "LOGNAME"):
            return [Part(PartKind.USER)]
        d = None
        if default is not None and not (
            isinstance(default, self.cst.Name) and default.value == "None"
        ):
            d = PathExpr(tuple(_merge(self._parts(default, depth + 1))), self.code(default))
        return [Part(PartKind.VAR, key, d)]

    def _attr_parts(self, node: Any, depth: int) -> list[Part]:
        cst = self.cst
        attr = node.attr.value
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            cls = self.class_of(node)
            vals = self.attr_assigns.get((id(cls) if cls is not None else 0, attr), [])
            if vals:
                resolved = [self._parts(v, depth + 1) for v in vals]
                if len({tuple(r) for r in resolved}) == 1:
                    return resolved[0]
            return [Part(PartKind.UNKNOWN)]
        q = self.qname(node) or ""
        if q in ("os.curdir",):
            return [Part(PartKind.CWD)]
        if q.startswith("os.") and q[3:] in ("sep",):
            return [Part(PartKind.LIT, "/")]
        base = self._parts(node.value, depth + 1)
        if attr == "parent":
            return _dirname(base)
        if attr in ("stem", "name"):
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [Part(PartKind.SCRIPT_NAME)]
            return _basename(base) if attr == "name" else [Part(PartKind.UNKNOWN)]
        # args.lock from argparse
        if isinstance(node.value, cst.Name):
            v = self.lookup(node.value)
            if isinstance(v, cst.Call) and self.method(v) in ("parse_args", "parse_known_args"):
                return [Part(PartKind.ARG)]
        return [Part(PartKind.UNKNOWN)]

    def _format(
        self, fmt: str, args: list[Any], kwargs: dict[str, Any], depth: int, percent: bool = False
    ) -> list[Part]:
        out: list[Part] = []
        pat = r"%[-#0 +]*\d*(?:\.\d+)?[sdriu]|%%" if percent else r"\{([^{}]*)\}|\{\{|\}\}"
        i = 0
        auto = 0
        for m in re.finditer(pat, fmt):
            out.append(Part(PartKind.LIT, fmt[i : m.start()]))
            tok = m.group(0)
            if tok in ("%%", "{{", "}}"):
                out.append(Part(PartKind.LIT, tok[0]))
            else:
                if percent:
                    v = args[auto] if auto < len(args) else None
                    auto += 1
                else:
                    field = m.group(1).split(":")[0].split("!")[0]
                    if field == "":
                        v = args[auto] if auto < len(args) else None
                        auto += 1
                    elif field.isdigit():
                        v = args[int(field)] if int(field) < len(args) else None
                    else:
                        v = kwargs.get(field)
                out.extend(self._parts(v, depth + 1) if v is not None else [Part(PartKind.UNKNOWN)])
            i = m.end()
        out.append(Part(PartKind.LIT, fmt[i:]))
        return out

    def _call_parts(self, node: Any, depth: int) -> list[Part]:
        cst = self.cst
        unknown = [Part(PartKind.UNKNOWN)]
        q = self.call_q(node)
        m = self.method(node)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if q in ("os.path.join", "posixpath.join"):
            out: list[Part] = []
            for a in args:
                p = self._parts(a, depth + 1)
                if p and p[0].kind is PartKind.LIT and p[0].value.startswith("/"):
                    out = p
                else:
                    out = _join(out, p) if out else p
            return out or unknown
        if q in ("os.path.expanduser", "os.path.expandvars"):
            p = self._parts(args[0], depth + 1) if args else unknown
            return _expanduser(p)
        if q in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "str", "os.fspath"):
            return self._parts(args[0], depth + 1) if args else unknown
        if q == "os.path.dirname":
            return _dirname(self._parts(args[0], depth + 1)) if args else unknown
        if q == "os.path.basename":
            return _basename(self._parts(args[0], depth + 1)) if args else unknown
        if q in ("os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "Path.cwd"):
            return [Part(PartKind.CWD)]
        if q.endswith("Path.home") or q == "pathlib.Path.home":
            return [Part(PartKind.HOME)]
        if q.endswith(".cwd") and "Path" in q:
            return [Part(PartKind.CWD)]
        if q in ("tempfile.gettempdir", "tempfile.gettempdirb"):
            return [Part(PartKind.TMPDIR)]
        if q.startswith(("tempfile.", "uuid.", "secrets.")) or q in ("os.getpid", "os.getppid"):
            return [Part(PartKind.UNIQUE)]
        if q in ("getpass.getuser", "os.getuid", "os.geteuid", "os.getlogin"):
            return [Part(PartKind.USER)]
        if q in ("os.environ.get", "os.getenv", "os.environ.setdefault"):
            key = self.const(args[0]) if args else _NOVALUE
            if isinstance(key, str):
                d = args[1] if len(args) > 1 else self.kw(node, "default")
                return self._env(key, d, depth)
            return unknown
        if q.split(".")[-1] in ("Path", "PurePath", "PosixPath", "PurePosixPath") and (
            q.startswith("pathlib.") or q in ("Path", "PurePath", "PosixPath")
        ):
            out = []
            for a in args:
                p = self._parts(a, depth + 1)
                if p and p[0].kind is PartKind.LIT and p[0].value.startswith("/"):
                    out = p
                else:
                    out = _join(out, p) if out else p
            return out or [Part(PartKind.CWD)]
        if m == "format" and isinstance(node.func, cst.Attribute):
            fmt = self.const(node.func.value)
            if isinstance(fmt, str):
                kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
                return self._format(fmt, args, kwargs, depth)
            return unknown
        if m in ("resolve", "absolute", "expanduser") and isinstance(node.func, cst.Attribute):
            base = self._parts(node.func.value, depth + 1)
            return _expanduser(base) if m == "expanduser" else base
        if m == "joinpath" and isinstance(node.func, cst.Attribute):
            out = self._parts(node.func.value, depth + 1)
            for a in args:
                out = _join(out, self._parts(a, depth + 1))
            return out
        if m == "with_suffix" and isinstance(node.func, cst.Attribute) and args:
            base = self._parts(node.func.value, depth + 1)
            suf = self._parts(args[0], depth + 1)
            if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
                return [
                    Part(PartKind.SCRIPT_DIR),
                    Part(PartKind.LIT, "/"),
                    Part(PartKind.SCRIPT_NAME),
                ] + suf
            return unknown
        if m == "with_name" and isinstance(node.func, cst.Attribute) and args:
            base = self._parts(node.func.value, depth + 1)
            return _join(_dirname(base), self._parts(args[0], depth + 1))
        if m in ("strip", "rstrip") and isinstance(node.func, cst.Attribute) and not args:
            return self._parts(node.func.value, depth + 1)
        return unknown

    # ------------------------------------------------------------------ entry point & status
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

    def _script_wide_durable(self) -> bool:
        cst = self.cst
        for c in self.calls:
            q = self.call_q(c)
            last = q.split(".")[-1]
            if q == "logging.basicConfig" and (self.kw(c, "filename") or self.kw(c, "handlers")):
                return True
            if last in LOG_HANDLERS or q in (
                "logging.config.dictConfig",
                "logging.config.fileConfig",
            ):
                return True
            if q in ("os.dup2",):
                return True
        for a in self.descendants(self.module, cst.Assign):
            for t in a.targets:
                if self.qname(t.target) in ("sys.stdout", "sys.stderr"):
                    return True
        return False

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

    # ------------------------------------------------------------------ branches
    def find_end(self, stmts: list[Any]) -> _Entry | None:
        """The first statement that ends or leaves a branch, depth first."""
        cst = self.cst
        for st in stmts:
            if isinstance(st, cst.SimpleStatementLine):
                for sm in st.body:
                    if isinstance(sm, cst.Return):
                        return _Entry(sm, "return")
                    if isinstance(sm, cst.Raise):
                        return _Entry(sm, "raise")
                    if isinstance(sm, (cst.Continue, cst.Break)):
                        return _Entry(sm, "loop")
                    if isinstance(sm, cst.Expr) and self.exit_call(sm.value) is not None:
                        return _Entry(sm, "exit")
                    if isinstance(sm, cst.Expr):
                        body = self._exiting_helper(sm.value)
                        if body is not None:
                            return _Entry(sm, "exit", via=body)
            elif isinstance(st, cst.If):
                e = self.find_end(list(st.body.body))
                if e is not None:
                    return e
                if st.orelse is not None:
                    body = st.orelse.body
                    e = self.find_end([body] if isinstance(body, cst.If) else list(body.body))
                    if e is not None:
                        return e
            elif isinstance(st, cst.With):
                e = self.find_end(list(st.body.body))
                if e is not None:
                    return e
            elif isinstance(st, cst.Try):
                blocks = [st.body] + [h.body for h in st.handlers]
                if st.orelse is not None:
                    blocks.append(st.orelse.body)
                for b in blocks:
                    e = self.find_end(list(b.body))
                    if e is not None:
                        return e
        return None

    def falls_off(self, stmt: Any) -> bool:
        """After ``stmt`` the run ends (nothing follows up to the module or entry function)."""
        cst = self.cst
        n = stmt
        while True:
            sibs, i = self.block_siblings(n)
            rest = sibs[i + 1 :]
            if any(not self._is_trivial(s) for s in rest):
                return False
            blk = self.up(n)
            owner = self.up(blk)
            if owner is None or isinstance(owner, cst.Module) or isinstance(blk, cst.Module):
                return True
            if isinstance(owner, cst.FunctionDef):
                return self.entry.get(owner.name.value) is not None and self.class_of(owner) is None
            if isinstance(owner, (cst.For, cst.While)):
                return False
            if isinstance(owner, (cst.Else, cst.ExceptHandler, cst.Finally)):
                owner = self.up(owner)
                if isinstance(owner, (cst.For, cst.While)):
                    return False
                if isinstance(owner, cst.If):
                    while isinstance(self.up(owner), cst.If) and self.up(owner).orelse is owner:
                        owner = self.up(owner)
            elif isinstance(owner, cst.If):
                while isinstance(self.up(owner), cst.If) and self.up(owner).orelse is owner:
                    owner = self.up(owner)
            if not isinstance(owner, cst.BaseCompoundStatement):
                return False
            n = owner

    def _is_trivial(self, st: Any) -> bool:
        cst = self.cst
        return isinstance(st, cst.SimpleStatementLine) and all(
            isinstance(s, cst.Pass) for s in st.body
        )

    def busy_branch(self, stmts: list[Any], anchor: Any, owner: Any, depth: int = 0) -> BusyBranch:
        """Busy branch of ``stmts`` (a handler, an if-branch).  ``owner``: the compound
        statement the branch belongs to (for falling off its end)."""
        cst = self.cst
        end = self.find_end(stmts)
        if end is None:
            first = stmts[0] if stmts else anchor
            sp_node = first.body[0] if isinstance(first, cst.SimpleStatementLine) else first
            if owner is not None and self.falls_off(owner):
                return BusyBranch(self.span(sp_node), True, 0, durable=self.durable_in(stmts))
            return BusyBranch(self.span(sp_node), False, None)
        node = end.node
        durable = self.durable_in(stmts, before=self.off(node))
        if end.kind == "loop":
            return BusyBranch(self.span(node), False, None, durable=durable)
        if end.kind == "exit" and end.via is not None:
            # through the script's own helper: its exit decides the status; the helper is
            # shared, so no fix edits it
            inner = self.busy_branch(end.via, anchor, None, depth + 1)
            return BusyBranch(self.span(node), True, inner.status, durable=durable or inner.durable)
        if end.kind == "exit":
            call = node.value
            status = self.exit_status(
                self.arg(call, 0, "code") if self.call_q(call) != "os._exit" else self.arg(call, 0)
            )
            return BusyBranch(
                self.span(node), True, status, durable=durable, status_fix=self._exit_fix(call)
            )
        if end.kind == "raise":
            exc = node.exc
            if exc is None:
                return BusyBranch(self.span(node), True, 1, durable=durable)
            call = exc if isinstance(exc, cst.Call) else None
            q = self.qname(call.func if call is not None else exc)
            if q == "SystemExit":
                arg = self.arg(call, 0, "code") if call is not None else None
                fix = None
                if call is None:
                    sp = self.span(exc)
                    fix = FixTemplate(
                        "exit with the skip code", (Edit(sp.start, sp.end, "SystemExit({code})"),)
                    )
                elif status_literal(self, arg):
                    sp = self.span(call)
                    fix = FixTemplate(
                        "exit with the skip code", (Edit(sp.start, sp.end, "SystemExit({code})"),)
                    )
                return BusyBranch(
                    self.span(node), True, self.exit_status(arg), durable=durable, status_fix=fix
                )
            return BusyBranch(self.span(node), True, 1, durable=durable)
        # return
        func = self.func_of(node)
        if func is None:
            return BusyBranch(self.span(node), False, None, durable=durable)
        mode = self.entry.get(func.name.value) if self.class_of(func) is None else None
        if mode == "ignored":
            return BusyBranch(self.span(node), True, 0, durable=durable)
        if mode == "sysexit":
            status = self.exit_status(node.value)
            fix = None
            if status == 0 and (node.value is None or status_literal(self, node.value)):
                sp = self.span(node)
                fix = FixTemplate(
                    "return the skip code", (Edit(sp.start, sp.end, "return {code}"),)
                )
            return BusyBranch(self.span(node), True, status, durable=durable, status_fix=fix)
        if depth < 2:
            prop = self._propagate(func, node, depth)
            if prop is not None:
                if durable and not prop.durable:
                    prop.durable = True
                return prop
        return BusyBranch(self.span(node), False, None, durable=durable)

    def _propagate(self, func: Any, ret: Any, depth: int) -> BusyBranch | None:
        """A helper returned a value on its busy path: follow it to the caller's test."""
        cst = self.cst
        val = self.const(ret.value) if ret.value is not None else None
        if val is _NOVALUE:
            return None
        truthy = bool(val)
        for call, _m in self.call_sites(func):
            if self.within(call, func):
                continue
            test_node = call
            par = self.up(call)
            # x = helper(); if not x:
            if isinstance(par, cst.Assign) and len(par.targets) == 1:
                tgt = par.targets[0].target
                st = self.stmt_of(par)
                sibs, i = self.block_siblings(st)
                if (
                    isinstance(tgt, cst.Name)
                    and i + 1 < len(sibs)
                    and isinstance(sibs[i + 1], cst.If)
                ):
                    nxt = sibs[i + 1]
                    for n in self.descendants(nxt.test, cst.Name):
                        if n.value == tgt.value:
                            test_node = n
                            par = self.up(n)
                            break
                    else:
                        continue
                else:
                    continue
            node = test_node
            negate = False
            while True:
                par = self.up(node)
                if isinstance(par, cst.UnaryOperation) and isinstance(par.operator, cst.Not):
                    negate = not negate
                    node = par
                    continue
                if isinstance(par, cst.Comparison) and len(par.comparisons) == 1:
                    op = par.comparisons[0].operator
                    other = self.const(par.comparisons[0].comparator)
                    if other is _NOVALUE:
                        break
                    eq = val == other if not isinstance(op, (cst.Is, cst.IsNot)) else val is other
                    if isinstance(op, (cst.IsNot, cst.NotEqual)):
                        eq = not eq
                    truthy_here = eq
                    node = par
                    if isinstance(self.up(node), cst.If) and self.up(node).test is node:
                        return self._if_branch(self.up(node), truthy_here != negate, depth)
                    break
                if isinstance(par, cst.If) and par.test is node:
                    return self._if_branch(par, truthy != negate, depth)
                break
        return None

    def _if_branch(self, ifnode: Any, body_taken: bool, depth: int) -> BusyBranch:
        cst = self.cst
        if body_taken:
            return self.busy_branch(list(ifnode.body.body), ifnode, ifnode, depth + 1)
        if ifnode.orelse is not None:
            body = ifnode.orelse.body
            stmts = [body] if isinstance(body, cst.If) else list(body.body)
            return self.busy_branch(stmts, ifnode, ifnode, depth + 1)
        if self.falls_off(ifnode):
            return BusyBranch(self.span(ifnode.test), True, 0)
        return BusyBranch(self.span(ifnode.test), False, None)

    def _exit_fix(self, call: Any) -> FixTemplate | None:
        q = self.call_q(call)
        arg = self.arg(call, 0, "code")
        if arg is not None and not status_literal(self, arg):
            return None
        sp = self.span(call)
        if q in ("sys.exit", "os._exit"):
            func = self.code(call.func)
            return FixTemplate(
                "exit with the skip code", (Edit(sp.start, sp.end, f"{func}({{code}})"),)
            )
        if q in ("exit", "quit"):
            sysname = next((k for k, v in self.imports.items() if v == "sys"), None)
            if sysname is None:
                return None
            return FixTemplate(
                "exit with the skip code", (Edit(sp.start, sp.end, f"{sysname}.exit({{code}})"),)
            )
        return None

    def durable_in(self, stmts: list[Any], before: int | None = None) -> bool:
        cst = self.cst
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                if before is not None and self.off(c) > before:
                    continue
                q = self.call_q(c)
                m = self.method(c)
                if q.startswith("syslog.") or q in ("systemd.journal.send",):
                    return True
                if q in ("open", "io.open") and "a" in str(self.mode_of(c) or ""):
                    return True
                if m in ("write_text", "write_bytes"):
                    return True
                if q in ("open", "io.open") and "w" in str(self.mode_of(c) or ""):
                    return True
                if self.durable_everywhere and (
                    m in LOG_METHODS or q in ("print",) or m == "write"
                ):
                    return True
        return False

    def mode_of(self, call: Any) -> str | None:
        m = self.arg(call, 1, "mode")
        if m is None:
            return "r"
        v = self.const(m)
        return v if isinstance(v, str) else None

    # ------------------------------------------------------------------ guards
    def enclosing_try(self, node: Any) -> Any:
        """The nearest try whose body holds ``node`` (not its handlers), within one function."""
        cst = self.cst
        prev = node
        for a in self.ancestors(node):
            if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(a, cst.Try) and prev is a.body:
                return a
            prev = a
        return None

    def handler_names(self, h: Any) -> set[str]:
        cst = self.cst
        if h.type is None:
            return {"BaseException"}
        types = [e.value for e in h.type.elements] if isinstance(h.type, cst.Tuple) else [h.type]
        out = set()
        for t in types:
            q = self.qname(t) or ""
            out.add(q)
            out.add(q.split(".")[-1])
        return out

    def catching_handler(self, node: Any, names: set[str], suffixes: tuple = ()) -> tuple[Any, Any]:
        t = self.enclosing_try(node)
        while t is not None:
            for h in t.handlers:
                hn = self.handler_names(h)
                if hn & names or any(n.endswith(suffixes) for n in hn if suffixes):
                    return t, h
            t = self.enclosing_try(t)
        return None, None

    def decides(self, stmts: list[Any]) -> bool:
        """The branch skips, exits, returns, retries or takes over."""
        cst = self.cst
        if self.find_end(stmts) is not None:
            return True
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                q = self.call_q(c)
                if (
                    q in REMOVE_CALLS
                    or q in ("os.kill", "os.killpg")
                    or self.method(c) in REMOVE_METHODS
                ):
                    return True
        return False

    # ------------------------------------------------------------------ run
    def run(self) -> None:
        self._index_bindings()
        self.entry = self._entry_points()
        facts = self.facts
        self.removal_calls = self._removals()
        self._probes()
        self._existence_locks()
        self._fd_locks()
        self._object_locks()
        self._check_then_create()
        facts.acquires[:] = self._expand(facts.acquires)
        expanded = []
        for c, r in self.removal_calls:
            expanded.extend((c, x) for x in self._expand([r]))
        before = {id(r) for _c, r in self.removal_calls}
        self.removal_calls = expanded
        facts.removals[:] = [r for _c, r in expanded] + [
            r for r in facts.removals if id(r) not in before
        ]
        self._liveness_and_kills()
        self._release_coverage()
        self._hooks()
        self._backgrounds()
        self._created()
        facts.acquires.sort(key=lambda a: a.span.start)  # stable indexes are assigned after
        self._hooks_reindex()

    # removal helpers -------------------------------------------------------------------
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

    def _removals(self) -> list[tuple[Any, Removal]]:
        out = []
        for c in self.calls:
            tgt = self.removal_target(c)
            if tgt is not None:
                path, is_glob = tgt
                r = Removal(path, self.span(c), is_glob=is_glob)
                self._removal_context(c, r)
                r.drop_fix = self.drop_fix(c)
                out.append((c, r))
            elif self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                fq = self.qname(fn) or ""
                if fq in REMOVE_CALLS and len(c.args) > 1:
                    r = Removal(self.path(c.args[1].value), self.span(c), via="atexit")
                    r.hook_span = self.span(c)
                    r.drop_fix = self.drop_fix(c)
                    out.append((c, r))
        for _c, r in out:
            self.facts.removals.append(r)
        return out

    def _atexit_funcs(self) -> dict[int, Any]:
        cst = self.cst
        out: dict[int, Any] = {}
        for c in self.calls:
            if self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                if isinstance(fn, cst.Name) and fn.value in self.funcs:
                    for f in self.funcs[fn.value]:
                        out[id(f)] = c
                elif isinstance(fn, cst.Attribute):
                    for f in self.funcs.get(fn.attr.value, []):
                        out[id(f)] = c
        for fl in self.funcs.values():
            for f in fl:
                for d in f.decorators:
                    if self.qname(d.decorator) == "atexit.register":
                        out[id(f)] = f
        return out

    def _signal_handlers(self) -> dict[int, Any]:
        """Functions (and lambdas) installed with ``signal.signal(SIG..., handler)`` -> the
        installing call."""
        cst = self.cst
        out: dict[int, Any] = {}
        for c in self.calls:
            if not self.is_q(c, "signal.signal") or len(c.args) < 2:
                continue
            fn = c.args[1].value
            if isinstance(fn, cst.Lambda):
                out[id(fn)] = c
            elif isinstance(fn, cst.Name) and fn.value in self.funcs:
                for f in self.funcs[fn.value]:
                    out[id(f)] = c
            elif isinstance(fn, cst.Attribute) and not (self.qname(fn) or "").startswith("signal."):
                for f in self.funcs.get(fn.attr.value, []):
                    out[id(f)] = c
        return out

    def _removal_context(self, call: Any, r: Removal) -> None:
        cst = self.cst
        if not hasattr(self, "_atexit_map"):
            self._atexit_map = self._atexit_funcs()
        if not hasattr(self, "_signal_map"):
            self._signal_map = self._signal_handlers()
        prev = call
        conditional = False
        for a in self.ancestors(call):
            if isinstance(a, cst.Lambda):
                reg = self._signal_map.get(id(a))
                arg = self.up(a)
                owner = self.up(arg) if isinstance(arg, cst.Arg) else None
                if reg is not None:
                    r.via = "trap"
                    r.hook_span = self.span(reg)
                elif owner is not None and self.is_q(owner, "atexit.register"):
                    r.via = "atexit"  # atexit.register(lambda: os.remove(L))
                    r.hook_span = self.span(owner)
                    break
                conditional = True  # runs when (if ever) the lambda is called
                break
            if isinstance(a, cst.Finally):
                r.via = "finally"
                r.hook_span = self.span(self.up(a))
                break
            if isinstance(a, (cst.If, cst.ExceptHandler, cst.While, cst.Else)):
                conditional = True
            if isinstance(a, cst.Try) and prev is a.body:
                conditional = conditional or False
            if isinstance(a, cst.For):
                if not r.is_glob:
                    conditional = True
            if isinstance(a, cst.FunctionDef):
                reg = self._atexit_map.get(id(a))
                cls = self.class_of(a)
                name = a.name.value
                sig = self._signal_map.get(id(a))
                if reg is not None:
                    r.via = "atexit"
                    r.hook_span = self.span(reg)
                elif sig is not None:
                    r.via = "trap"
                    r.hook_span = self.span(sig)
                elif name == "__exit__" and cls is not None:
                    r.via = "exit-method"
                elif (
                    name in ("release", "unlock", "close", "__del__", "cleanup", "remove")
                    and cls is not None
                ):
                    r.via = "release-method"
                if reg is None and not self._runs_unconditionally(a):
                    conditional = True  # a function or method this file may never run
                break
            prev = a
        r.conditional = conditional

    def _runs_unconditionally(self, func: Any, depth: int = 0) -> bool:
        """A plain function that the run always calls: the entry point, or a function the
        entry point (or module code) calls outside any branch."""
        cst = self.cst
        if self.class_of(func) is not None or depth > 3:
            return False
        if self.entry.get(func.name.value) is not None:
            return True
        for call, _m in self.call_sites(func):
            caller = self.func_of(call)
            branchy = False
            for a in self.ancestors(call):
                if a is caller:
                    break
                if isinstance(a, (cst.If, cst.For, cst.While, cst.ExceptHandler, cst.Else)):
                    if not (isinstance(a, cst.If) and "__name__" in self.code(a.test)):
                        branchy = True
                        break
            if branchy:
                continue
            if caller is None or (
                isinstance(caller, cst.FunctionDef)
                and self._runs_unconditionally(caller, depth + 1)
            ):
                return True
        return False

    def drop_fix(self, call: Any) -> FixTemplate | None:
        cst = self.cst
        par = self.up(call)
        if not isinstance(par, cst.Expr):
            return None
        line = self.up(par)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        sibs, _i = self.block_siblings(line)
        sp = self.span(line)
        # delete the whole physical line(s)
        start = self.starts[sp.line - 1]
        end = self.starts[sp.end_line] if sp.end_line < len(self.starts) else len(self.text)
        if len(sibs) == 1:
            indent = self.text[start : sp.start]
            nl = "\n" if self.text[start:end].endswith("\n") else ""
            return FixTemplate(
                "remove the deletion of the lock file", (Edit(start, end, f"{indent}pass{nl}"),)
            )
        return FixTemplate("remove the deletion of the lock file", (Edit(start, end, ""),))

    def removals_of(self, path: PathExpr | None) -> list[tuple[Any, Removal]]:
        if path is None:
            return []
        key = self.key(path)
        return [
            (c, r) for c, r in self.removal_calls if r.path is not None and self.key(r.path) == key
        ]

    def key(self, path: PathExpr) -> str:
        cache = self.__dict__.setdefault("_key_cache", {})
        k = cache.get(id(path))
        if k is None or k[0] is not path:
            k = cache[id(path)] = (path, path.key())
        return k[1]

    # creations ----------------------------------------------------------------------------
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

    def is_pathlike(self, node: Any, depth: int = 0) -> bool:
        cst = self.cst
        if depth > 5:
            return False
        if isinstance(node, cst.Call):
            q = self.call_q(node)
            return q.split(".")[-1] in ("Path", "PurePath", "PosixPath") or self.method(node) in (
                "joinpath",
                "with_suffix",
                "with_name",
                "resolve",
                "expanduser",
                "home",
                "cwd",
            )
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "parent":
            return True
        if isinstance(node, cst.Name):
            v = self.lookup(node)
            return v is not None and not isinstance(v, tuple) and self.is_pathlike(v, depth + 1)
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
        ):
            cls = self.class_of(node)
            vals = self.attr_assigns.get((id(cls) if cls is not None else 0, node.attr.value), [])
            return any(self.is_pathlike(v, depth + 1) for v in vals)
        return False

    def flag_names(self, node: Any, depth: int = 0) -> set[str]:
        cst = self.cst
        out: set[str] = set()
        if node is None or depth > 6:
            return out
        if isinstance(node, cst.BinaryOperation):
            return self.flag_names(node.left, depth + 1) | self.flag_names(node.right, depth + 1)
        if isinstance(node, cst.Attribute):
            out.add(node.attr.value)
            return out
        if isinstance(node, cst.Name):
            q = self.imports.get(node.value)
            if q is not None:
                out.add(q.split(".")[-1])
                return out
            if node.value.startswith(("O_", "LOCK_")):
                out.add(node.value)
            v = self.lookup(node)
            if v is not None and not isinstance(v, tuple):
                out |= self.flag_names(v, depth + 1)
        return out

    # probes -------------------------------------------------------------------------------
    def _probes(self) -> None:
        cst = self.cst
        self.probe_calls: set[int] = set()
        for c in self.calls:
            cr = self.creation(c)
            if cr is None:
                continue
            mech, pnode, how = cr
            path = self.path(pnode)
            if path is None or not path.key():
                continue
            st = self.stmt_of(c)
            # the statement right after (the with block's body counts as no work when empty)
            if isinstance(st, cst.With) and not all(
                self._is_trivial(s) or self._closes(s) for s in st.body.body
            ):
                continue
            sibs, i = self.block_siblings(st)
            if i + 1 >= len(sibs):
                continue
            nxt = sibs[i + 1]
            rm = None
            for rc, r in self.removal_calls:
                if (
                    self.within(rc, nxt)
                    and self.stmt_of(rc) is nxt
                    and r.path is not None
                    and r.path.key() == path.key()
                    and not self._deferred(rc, nxt)
                ):
                    rm = rc
                    break
            if rm is None:
                continue
            self.probe_calls.add(id(c))
            if any(
                p.kind in (PartKind.ARG, PartKind.VAR, PartKind.UNKNOWN)
                for p in path.basename_parts()
            ):
                # the name comes from the caller or the environment: it may be per-run
                # (unknown stays unknown), so this is a probe but not a fixed-name one
                self.facts.created.append(path)
                continue
            fix = self._probe_fix(pnode, rm)
            self.facts.probes.append(Probe(path, self.span(c), fix))

    def _deferred(self, call: Any, stmt: Any) -> bool:
        """``call`` sits in a lambda or nested function inside ``stmt``: it runs later
        (``addCleanup(lambda: rmtree(p))``), not at once."""
        cst = self.cst
        for a in self.ancestors(call):
            if a is stmt:
                return False
            if isinstance(a, (cst.Lambda, cst.FunctionDef)):
                return True
        return False

    def _closes(self, st: Any) -> bool:
        return self.code(st).strip().endswith((".close()", "pass"))

    def _probe_fix(self, create_arg: Any, rm_call: Any) -> FixTemplate | None:
        cst = self.cst
        osname = next((k for k, v in self.imports.items() if v == "os"), None)
        if osname is None:
            return None
        rm_arg = self.arg(rm_call, 0) if self.call_q(rm_call) in REMOVE_CALLS else None
        if rm_arg is None and isinstance(rm_call.func, cst.Attribute):
            rm_arg = rm_call.func.value
        edits = []
        for node in (create_arg, rm_arg):
            e = self._append_pid(node, osname)
            if e is None:
                return None
            edits.append(e)
        if self.code(create_arg) != self.code(rm_arg):
            return None
        if self.span(create_arg).start == self.span(rm_arg).start:
            return None
        return FixTemplate("add the process id to the probe name", tuple(edits))

    def _append_pid(self, node: Any, osname: str) -> Edit | None:
        cst = self.cst
        if isinstance(node, cst.Call) and self.call_q(node) == "os.path.join" and node.args:
            return self._append_pid(node.args[-1].value, osname)
        sp = self.span(node)
        src = self.text[sp.start : sp.end]
        if isinstance(node, cst.SimpleString):
            prefix = node.prefix.lower()
            if (
                prefix not in ("",)
                or "{" in src
                or "}" in src
                or node.value.startswith(('"""', "'''"))
            ):
                return None
            q = node.quote
            return Edit(sp.start, sp.end, f"f{src[: -len(q)]}.{{{osname}.getpid()}}{q}")
        if isinstance(node, cst.FormattedString):
            q = node.end
            return Edit(sp.end - len(q), sp.end - len(q), f".{{{osname}.getpid()}}")
        return None

    # existence locks ---------------------------------------------------------------------
    def _existence_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            if id(c) in self.probe_calls:
                continue
            cr = self.creation(c)
            if cr is None:
                continue
            mech, pnode, how = cr
            if how == "plain":
                continue
            t, h = self.catching_handler(c, FILE_EXISTS_ERRORS)
            if h is None:
                continue
            stmts = list(h.body.body)
            if not self.decides(stmts):
                continue
            path = self.path(pnode)
            end = self.find_end(stmts)
            if end is not None and self._tolerates_eexist(h, end):
                continue
            if end is not None and end.kind == "return" and self._result_ignored(end.node):
                continue  # make-if-missing helper: no caller decides anything on the clash
            if end is None and self._recreates(stmts, path):
                continue  # except FileExistsError: rmtree(d); mkdir(d): the run always goes on
            if end is not None and end.kind == "loop" and self._renamed_each_pass(pnode, end):
                continue  # a search for a free name (name recomputed each pass), not a lock
            eexist = any(n.value == "EEXIST" for n in self.descendants(h, cst.Name)) or any(
                a.attr.value == "EEXIST" for a in self.descendants(h, cst.Attribute)
            )
            if "FileExistsError" not in self.handler_names(h) and not eexist:
                # a generic OSError handler is error handling unless the name or an exit
                # says lock
                if not lockish_name(path) and not (end is not None and end.kind == "exit"):
                    continue
                if not lockish_name(path) and self._guarded_by_absence(c, path):
                    continue  # `if not isdir(d): makedirs(d)` under a broad error handler
            if (
                end is not None
                and end.kind == "raise"
                and not lockish_name(path)
                and "SystemExit" not in self.code(end.node)
            ):
                continue  # an error raised on a clash: exclusive create of output
            if end is not None and end.kind == "loop" and not lockish_name(path):
                # `continue` in a for loop over items: a lock only when named like one;
                # in a while loop: a retry
                loop = next(
                    (a for a in self.ancestors(end.node) if isinstance(a, (cst.For, cst.While))),
                    None,
                )
                if isinstance(loop, cst.For):
                    continue
            busy = self.busy_branch(stmts, h, t)
            acq = Acquire(LockKind.EXISTENCE, mech, path, self.span(c), busy=busy)
            acq.function = self._fname(c)
            self.handled_creates.add(id(c))
            self._acq_nodes[id(acq)] = c
            self.facts.acquires.append(acq)

    def _result_ignored(self, ret: Any) -> bool:
        """``ret`` returns from a function (not the entry point) that every caller in this
        file calls as a statement (the result is dropped), and there is at least one."""
        func = self.func_of(ret)
        if func is None or (self.class_of(func) is None and func.name.value in self.entry):
            return False  # returning from the entry point ends the run
        sites = self.call_sites(func)
        return bool(sites) and all(isinstance(self.up(c), self.cst.Expr) for c, _m in sites)

    def _removes_on_normal_path(self, stmts: list[Any], path: PathExpr | None) -> bool:
        """The statements remove ``path`` other than in an ``except`` handler."""
        cst = self.cst
        if path is None:
            return False
        key = self.key(path)
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                tgt = self.removal_target(c)
                if tgt is None or tgt[0] is None or self.key(tgt[0]) != key:
                    continue
                if not any(isinstance(a, cst.ExceptHandler) for a in self.ancestors(c)):
                    return True
        return False

    def _leaves_on_normal_path(self, stmts: list[Any]) -> bool:
        """A return, raise, loop jump or exit call in the statements, other than in an
        ``except`` handler (where only an error leads)."""
        cst = self.cst
        leaving = (cst.Return, cst.Raise, cst.Continue, cst.Break)
        for st in stmts:
            for n in [st, *self.descendants(st)]:
                if isinstance(n, leaving) or self.exit_call(n) is not None:
                    if not any(isinstance(a, cst.ExceptHandler) for a in self.ancestors(n)):
                        return True
        return False

    def _recreates(self, stmts: list[Any], path: PathExpr | None) -> bool:
        """The handler removes the existing name unconditionally (no test, no exit) and goes
        on: the old entry never stops the run, so nothing is excluded."""
        cst = self.cst
        if path is None:
            return False
        key = self.key(path)
        removed = False
        for st in stmts:
            if not isinstance(st, cst.SimpleStatementLine):
                return False  # a test or loop in the handler: a judgement, maybe a takeover
            for c in self.descendants(st, cst.Call):
                tgt = self.removal_target(c)
                if tgt is not None and tgt[0] is not None and self.key(tgt[0]) == key:
                    removed = True
                elif self.call_q(c) in ("os.kill", "os.killpg"):
                    return False
        return removed

    def _renamed_each_pass(self, pnode: Any, end: _Entry) -> bool:
        """``while True: name = ...; try: create(name) except ...: continue``: the name is
        assigned anew inside the retried loop."""
        cst = self.cst
        if not isinstance(pnode, cst.Name):
            return False
        loop = next(
            (a for a in self.ancestors(end.node) if isinstance(a, (cst.For, cst.While))), None
        )
        if loop is None:
            return False
        for t in self.descendants(loop.body, cst.AssignTarget):
            if isinstance(t.target, cst.Name) and t.target.value == pnode.value:
                return True
        if isinstance(loop, cst.For):
            return any(
                isinstance(n, cst.Name) and n.value == pnode.value
                for n in self.descendants(loop.target, cst.Name)
            )
        return False

    def _guarded_by_absence(self, call: Any, path: PathExpr | None) -> bool:
        """``call`` runs only when an ``if not exists(P)`` (isdir, is_dir...) of its own path
        found the name absent: it makes what is missing, it does not test for a holder."""
        cst = self.cst
        if path is None:
            return False
        key = self.key(path)
        for a in self.ancestors(call):
            if isinstance(a, (cst.FunctionDef, cst.Try)):
                return False
            if isinstance(a, cst.If) and self.within(call, a.body):
                et = self._exists_test(a.test)
                if et is not None and not et[1]:
                    p = self._exists_path(et[0])
                    if p is not None and self.key(p) == key:
                        return True
        return False

    @property
    def _acq_nodes(self) -> dict[int, Any]:
        if "_acq_nodes_d" not in self.__dict__:
            self.__dict__["_acq_nodes_d"] = {}
        return self.__dict__["_acq_nodes_d"]

    def _tolerates_eexist(self, handler: Any, end: _Entry) -> bool:
        """``if not (e.errno == EEXIST ...): raise``: the existing name is accepted."""
        cst = self.cst
        taken = ""  # the tests of the enclosing ifs whose body leads to the end
        for a in self.ancestors(end.node):
            if a is handler:
                return False
            if isinstance(a, cst.If) and not self.within(end.node, a.test):
                test = self.code(a.test)
                if "EEXIST" in test and ("not" in test or "!=" in test):
                    return self.within(end.node, a.body)
                if self.within(end.node, a.body):
                    taken += " " + test
                if (
                    "EEXIST" in taken
                    and re.search(r"\b(isdir|is_dir|exists)\(", taken)
                    and end.kind == "return"
                ):
                    # `if e.errno == EEXIST and isdir(p): return p` (or the two tests
                    # nested): an ensure-dir helper that accepts the existing directory
                    return True
        return False

    def _fname(self, node: Any) -> str | None:
        f = self.func_of(node)
        return f.name.value if isinstance(f, self.cst.FunctionDef) else None

    # fd-based locks (fcntl.flock, lockf, portalocker.lock, django locks) ----------------
    def _fd_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            q = self.call_q(c)
            if q in (
                "fcntl.flock",
                "django.core.files.locks.lock",
                "portalocker.lock",
                "portalocker.portalocker.lock",
            ):
                kind = LockKind.FLOCK
            elif q == "fcntl.lockf":
                kind = LockKind.LOCKF
            else:
                continue
            flags = self.flag_names(self.arg(c, 1))
            if "LOCK_UN" in flags or not (
                {"LOCK_EX", "LOCK_SH", "EXCLUSIVE", "SHARED"} & flags or not flags
            ):
                continue
            mech = "portalocker.lock" if q.startswith("portalocker") else q
            fd = self.arg(c, 0)
            opener = self.trace_open(fd)
            acq = Acquire(kind, mech, None, self.span(c))
            acq.nonblocking = bool({"LOCK_NB", "NON_BLOCKING"} & flags)
            acq.function = self._fname(c)
            self._fill_open(acq, opener)
            t, h = self.catching_handler(c, BUSY_ERRORS, LIB_BUSY_ERRORS_SUFFIX)
            if h is not None and acq.nonblocking:
                acq.busy = self.busy_branch(list(h.body.body), h, t)
            acq.inode_recheck = self._inode_recheck(c)
            self._acq_nodes[id(acq)] = c
            self.facts.acquires.append(acq)
            _ = cst

    def _inode_recheck(self, call: Any) -> bool:
        scope = self.func_of(call) or self.module
        src = self.code(scope) if scope is not self.module else self.text
        return "st_ino" in src and ("fstat" in src or "samestat" in src or "samefile" in src)

    def trace_open(self, node: Any, depth: int = 0) -> Any:
        """The open()/os.open() call that produced a file object or descriptor."""
        cst = self.cst
        if node is None or depth > 6:
            return None
        if isinstance(node, cst.Call):
            q = self.call_q(node)
            if q in ("open", "io.open", "os.open", "builtins.open", "codecs.open"):
                return node
            if self.method(node) == "open" and isinstance(node.func, cst.Attribute):
                return node
            if self.method(node) == "fileno" and isinstance(node.func, cst.Attribute):
                return self.trace_open(node.func.value, depth + 1)
            return None
        if isinstance(node, cst.Name):
            v = self.lookup(node)
            if v is not None and not isinstance(v, tuple):
                return self.trace_open(v, depth + 1)
            return None
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
        ):
            cls = self.class_of(node)
            for v in self.attr_assigns.get(
                (id(cls) if cls is not None else 0, node.attr.value), []
            ):
                r = self.trace_open(v, depth + 1)
                if r is not None:
                    return r
        return None

    def _fill_open(self, acq: Acquire, opener: Any) -> None:
        cst = self.cst
        if opener is None:
            return
        q = self.call_q(opener)
        if q == "os.open":
            acq.path = self.path(self.arg(opener, 0, "path"))
            flags = self.flag_names(self.arg(opener, 1, "flags"))
            acq.truncating = "O_TRUNC" in flags
        elif (
            self.method(opener) == "open"
            and isinstance(opener.func, cst.Attribute)
            and q not in ("io.open", "codecs.open")
        ):
            acq.path = self.path(opener.func.value)
            mv = self.arg(opener, 0, "mode")
            mode = self.const(mv) if mv is not None else "r"
            acq.truncating = isinstance(mode, str) and "w" in mode
        else:
            acq.path = self.path(self.arg(opener, 0, "file"))
            mode = self.mode_of(opener)
            acq.truncating = isinstance(mode, str) and "w" in mode
            if isinstance(mode, str) and "a" in mode and self._truncated_later(opener):
                acq.truncating = True
        acq.open_span = self.span(opener)

    def _truncated_later(self, opener: Any) -> bool:
        cst = self.cst
        names = set()
        par = self.up(opener)
        if isinstance(par, cst.Assign):
            for t in par.targets:
                if isinstance(t.target, cst.Name):
                    names.add(t.target.value)
        if (
            isinstance(par, cst.WithItem)
            and par.asname is not None
            and isinstance(par.asname.name, cst.Name)
        ):
            names.add(par.asname.name.value)
        for c in self.calls:
            if (
                self.method(c) == "truncate"
                and isinstance(c.func.value, cst.Name)
                and c.func.value.value in names
            ):
                return True
        return False

    # object locks: filelock, portalocker.Lock, fasteners ---------------------------------
    OBJECT_LOCKS = {
        "filelock.FileLock": (LockKind.FLOCK, "FileLock"),
        "filelock.UnixFileLock": (LockKind.FLOCK, "UnixFileLock"),
        "filelock.SoftFileLock": (LockKind.EXISTENCE, "SoftFileLock"),
        "portalocker.Lock": (LockKind.FLOCK, "portalocker.Lock"),
        "portalocker.RLock": (LockKind.FLOCK, "portalocker.RLock"),
        "portalocker.utils.Lock": (LockKind.FLOCK, "portalocker.Lock"),
        "fasteners.InterProcessLock": (LockKind.LOCKF, "fasteners.InterProcessLock"),
        "fasteners.process_lock.InterProcessLock": (LockKind.LOCKF, "fasteners.InterProcessLock"),
    }

    def _object_locks(self) -> None:
        cst = self.cst
        for c in self.calls:
            info = self.OBJECT_LOCKS.get(self.call_q(c))
            if info is None:
                continue
            kind, mech = info
            pnode = (
                self.arg(c, 0, "lock_file") or self.arg(c, 0, "filename") or self.arg(c, 0, "path")
            )
            acq = Acquire(kind, mech, self.path(pnode), self.span(c))
            acq.function = self._fname(c)
            nb = self._nonblocking_kw(c)
            par = self.up(c)
            uses: list[Any] = []  # acquire calls / with items
            if isinstance(par, cst.WithItem):
                uses.append(par)
            else:
                var = None
                if isinstance(par, cst.Assign) and len(par.targets) == 1:
                    var = par.targets[0].target
                if var is not None:
                    for u in self.calls:
                        if (
                            self.method(u) == "acquire"
                            and self._same_ref(u.func.value, var)
                            and self._same_scope(u, c, var)
                        ):
                            uses.append(u)
                    for w in self.withs:
                        if not self._same_scope(w, c, var):
                            continue
                        for item in w.items:
                            it = item.item
                            if self._same_ref(it, var):
                                uses.append(item)
                            elif (
                                isinstance(it, cst.Call)
                                and self.method(it) == "acquire"
                                and self._same_ref(it.func.value, var)
                            ):
                                if item not in uses and it not in uses:
                                    uses.append(item)
                if kind is LockKind.EXISTENCE and not uses and not self._escapes(c, var):
                    # constructing a SoftFileLock creates nothing: only its acquire is a lock
                    continue
            if uses:
                u = uses[0]
                acq.open_span = self.span(c)
                node = u.item if isinstance(u, cst.WithItem) else u
                acq.span = self.span(node)
                if isinstance(node, cst.Call) and node is not c:
                    nb = nb or self._nonblocking_kw(node)
                acq.busy = self._object_busy(node, nb)
                if isinstance(u, cst.WithItem) or kind is LockKind.EXISTENCE:
                    anchor = u
                else:
                    anchor = u
                self._acq_nodes[id(acq)] = (
                    anchor if not isinstance(anchor, cst.WithItem) else anchor.item
                )
                acq.released = kind is LockKind.EXISTENCE
                if kind is LockKind.EXISTENCE:
                    acq.release_on_every_exit = isinstance(
                        u, cst.WithItem
                    ) or self._released_in_finally(par)
            else:
                self._acq_nodes[id(acq)] = c
            acq.nonblocking = nb
            self.facts.acquires.append(acq)

    def _same_scope(self, use: Any, ctor: Any, var: Any) -> bool:
        """``use`` can refer to the object bound at ``ctor``: the same function for a local
        name, the same class for ``self.x``, anywhere for a module-level name."""
        cst = self.cst
        if isinstance(var, cst.Attribute):
            return self.class_of(use) is self.class_of(ctor)
        f = self.func_of(ctor)
        return f is None or self.func_of(use) is f

    def _escapes(self, ctor: Any, var: Any) -> bool:
        """The lock object leaves the place it is made (returned, yielded, a lambda's value,
        passed to a call, stored in a container or attribute), so it may be acquired
        elsewhere."""
        cst = self.cst
        par = self.up(ctor)
        if isinstance(par, cst.Expr):
            return False  # the value is dropped
        if var is None:
            if isinstance(par, cst.Attribute):
                return par.attr.value == "acquire"  # SoftFileLock(p).acquire()
            return not isinstance(par, (cst.Comparison, cst.ComparisonTarget))
        if not isinstance(var, cst.Name):
            return True  # self.lock = ...: used by other methods
        f = self.func_of(ctor)
        scope = f if f is not None else self.module
        for n in self.descendants(scope, cst.Name):
            if n.value != var.value or n is var or self.off(n) < self.off(ctor):
                continue
            up = self.up(n)
            if isinstance(up, cst.Attribute) and up.value is n:
                continue  # lock.lifetime, lock.is_locked
            if isinstance(up, cst.Comparison):
                continue  # lock1 is lock2
            if isinstance(up, cst.ComparisonTarget):
                continue
            return True
        return False

    def _released_in_finally(self, assign: Any) -> bool:
        cst = self.cst
        if not isinstance(assign, cst.Assign):
            return False
        var = assign.targets[0].target
        for u in self.calls:
            if self.method(u) == "release" and self._same_ref(u.func.value, var):
                if any(isinstance(a, cst.Finally) for a in self.ancestors(u)):
                    return True
        return False

    def _same_ref(self, a: Any, b: Any) -> bool:
        cst = self.cst
        if isinstance(a, cst.Name) and isinstance(b, cst.Name):
            return a.value == b.value
        if isinstance(a, cst.Attribute) and isinstance(b, cst.Attribute):
            return a.attr.value == b.attr.value and self._same_ref(a.value, b.value)
        return False

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

    def _object_busy(self, node: Any, nb: bool) -> BusyBranch | None:
        cst = self.cst
        # if not lock.acquire(blocking=False): / if lock.acquire(...): ... else:
        if isinstance(node, cst.Call):
            n = node
            negate = False
            par = self.up(n)
            if isinstance(par, cst.UnaryOperation) and isinstance(par.operator, cst.Not):
                negate = True
                n = par
                par = self.up(n)
            if isinstance(par, cst.If) and par.test is n:
                return self._if_branch(par, negate, 0)
            if (
                isinstance(par, cst.Assign)
                and len(par.targets) == 1
                and isinstance(par.targets[0].target, cst.Name)
            ):
                st = self.stmt_of(par)
                sibs, i = self.block_siblings(st)
                if i + 1 < len(sibs) and isinstance(sibs[i + 1], cst.If):
                    nxt = sibs[i + 1]
                    name = par.targets[0].target.value
                    t = nxt.test
                    if (
                        isinstance(t, cst.UnaryOperation)
                        and isinstance(t.operator, cst.Not)
                        and isinstance(t.expression, cst.Name)
                        and t.expression.value == name
                    ):
                        return self._if_branch(nxt, True, 0)
                    if isinstance(t, cst.Name) and t.value == name:
                        return self._if_branch(nxt, False, 0)
        t, h = self.catching_handler(node, BUSY_ERRORS, LIB_BUSY_ERRORS_SUFFIX)
        if h is not None and nb:
            return self.busy_branch(list(h.body.body), h, t)
        if h is not None:
            hn = self.handler_names(h)
            if any(x.endswith(LIB_BUSY_ERRORS_SUFFIX) for x in hn):
                return self.busy_branch(list(h.body.body), h, t)
        return None

    # check-then-create --------------------------------------------------------------------
    def _exists_test(self, test: Any) -> tuple[Any, bool] | None:
        """(exists call, positive) when an if test is exists(P) / not exists(P)."""
        cst = self.cst
        negate = False
        n = test
        if isinstance(n, cst.BooleanOperation):
            n = n.left
        while isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            negate = not negate
            n = n.expression
        if not isinstance(n, cst.Call):
            return None
        q = self.call_q(n)
        m = self.method(n)
        if q in ("os.path.exists", "os.path.isfile", "os.path.lexists", "os.path.isdir"):
            return n, not negate
        if (
            m in ("exists", "is_file", "is_dir")
            and isinstance(n.func, cst.Attribute)
            and not q.startswith("os.")
        ):
            return n, not negate
        return None

    def _exists_path(self, call: Any) -> PathExpr | None:
        if self.call_q(call).startswith("os.path."):
            return self.path(self.arg(call, 0))
        return self.path(call.func.value)

    def _check_then_create(self) -> None:
        cst = self.cst
        flocked = {
            a.path.key()
            for a in self.facts.acquires
            if a.kind is not LockKind.EXISTENCE and a.path is not None
        }
        for ifn in self.ifs:
            et = self._exists_test(ifn.test)
            if et is None:
                continue
            test_call, positive = et
            path = self._exists_path(test_call)
            if path is None or not path.key() or path.key() in flocked:
                continue
            creator = None
            if positive:
                sibs, i = self.block_siblings(ifn)
                region = sibs[i + 1 :]
                busy_stmts = list(ifn.body.body)
            else:
                region = list(ifn.body.body)
                busy_stmts = None
            for st in region:
                for c in self.descendants(st, cst.Call):
                    cr = self.creation(c)
                    if cr is None or id(c) in self.probe_calls or id(c) in self.handled_creates:
                        continue
                    if cr[2] != "plain":
                        continue  # mkdir/link after a test: making a directory, not a lock
                    p = self.path(cr[1])
                    if p is not None and p.key() == path.key():
                        creator = c
                        break
                if creator is not None:
                    break
            if creator is None:
                continue
            released = [
                c for c, _r in self.removals_of(path) if not (positive and self.within(c, ifn))
            ]
            if not released:
                continue  # a run-once marker, never removed (or removed only as a takeover)
            if (
                positive
                and self._removes_on_normal_path(busy_stmts, path)
                and not self._leaves_on_normal_path(busy_stmts)
            ):
                continue  # `if exists(P): remove(P)`, then create: an overwrite, not a guard
            if positive:
                end = self.find_end(busy_stmts)
                if end is None:
                    continue
                if not lockish_name(path) and self._ends_on_content(end, ifn):
                    continue  # the file's contents decide, not its existence
                busy = self.busy_branch(busy_stmts, ifn, ifn)
            else:
                busy = self._if_branch(ifn, False, 0)
                if not busy.ends_run and not any(self.within(c, ifn) for c in released):
                    # `if not exists(F): create(F)` and the run goes on either way, the name
                    # kept: making what is missing, nothing is excluded
                    continue
            acq = Acquire(
                LockKind.EXISTENCE,
                "exists() then " + self.creation(creator)[0],
                path,
                self.span(creator),
                check_then_create=True,
                test_span=self.span(test_call),
                busy=busy,
            )
            acq.truncating = True
            acq.function = self._fname(creator)
            self.handled_creates.add(id(creator))
            self._acq_nodes[id(acq)] = creator
            self.facts.acquires.append(acq)

    _LIVENESS_WORDS = re.compile(r"kill|pid|/proc|psutil|alive|running|lock")

    def _ends_on_content(self, end: _Entry, ifn: Any) -> bool:
        """The branch under ``if exists(P)`` ends only under a further test that is not about
        a live holder (``if f.readlines() == lines: return``): the file's contents decide."""
        cst = self.cst
        for a in self.ancestors(end.node):
            if a is ifn:
                return False
            if isinstance(a, cst.If) and not self._LIVENESS_WORDS.search(self.code(a.test)):
                return True
        return False

    # pid files -----------------------------------------------------------------------------
    def pid_source(self, node: Any, depth: int = 0) -> tuple[bool, PathExpr | None]:
        """Whether the value comes from reading a file, and that file."""
        cst = self.cst
        if depth == 0:
            self._pid_work = 0
        self._pid_work = getattr(self, "_pid_work", 0) + 1
        if node is None or depth > 6 or self._pid_work > WORK_BUDGET:
            return False, None
        if isinstance(node, cst.Name):
            v = self.lookup(node)
            # `try: pid = int(f.read()) except ...: pid = None`: any binding read from a file
            for other in self._bindings_before(node):
                if other is not v and not isinstance(other, tuple):
                    r = self.pid_source(other, depth + 1)
                    if r[0]:
                        return r
            if isinstance(v, tuple) and v[0] == "param":
                for val in self.param_values(v[1], v[2]):
                    r = self.pid_source(val, depth + 1)
                    if r[0]:
                        return r
                return False, None
            if v is None or isinstance(v, tuple):
                return False, None
            return self.pid_source(v, depth + 1)
        for c in self.descendants(node, cst.Call):
            m = self.method(c)
            q = self.call_q(c)
            if m in ("read", "read_text", "readline", "readlines", "read_bytes") and isinstance(
                c.func, cst.Attribute
            ):
                recv = c.func.value
                op = self.trace_open(recv)
                if op is not None:
                    return True, self._open_path(op)
                if self.is_pathlike(recv) or m in ("read_text", "read_bytes"):
                    return True, self.path(recv)
                return True, None
            if q in ("json.load", "pickle.load"):
                return True, None
        for n in self.descendants(node, cst.Name):
            if n is not node and n.value != "int":
                v = self.lookup(n)
                if v is not None and not isinstance(v, tuple) and depth < 4:
                    r = self.pid_source(v, depth + 1)
                    if r[0]:
                        return r
        return False, None

    def _open_path(self, opener: Any) -> PathExpr | None:
        cst = self.cst
        if (
            self.method(opener) == "open"
            and isinstance(opener.func, cst.Attribute)
            and self.call_q(opener) not in ("io.open", "codecs.open")
        ):
            return self.path(opener.func.value)
        return self.path(self.arg(opener, 0, "file"))

    def _liveness_and_kills(self) -> None:
        self.dead_regions: list[tuple[Any, PathExpr | None]] = []
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
                    name = name.split(".")[-1]
                    self.facts.kills.append(Kill(self.span(c), name, pid_file))
            elif q == "psutil.pid_exists":
                from_file, pid_file = self.pid_source(self.arg(c, 0))
                if from_file:
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

    def _liveness(self, call: Any, pid_file: PathExpr | None) -> None:
        cst = self.cst
        region: list[Any] = []
        dead: list[Any] = []
        owner = None
        # in an if test
        negate = False
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
                    sibs, i = self.block_siblings(a)
                    dead = dead + self._until_takeover(sibs[i + 1 :], pid_file)
                break
            if isinstance(a, (cst.BaseStatement)):
                break
        if owner is None:
            t = self.enclosing_try(call)
            if t is not None:
                owner = t
                handlers = [s for h in t.handlers for s in h.body.body]
                els = list(t.orelse.body.body) if t.orelse is not None else []
                region = handlers + els + list(t.body.body)
                dead = handlers
        consequential = False
        if owner is not None:
            end = self.find_end(region)
            func = self.func_of(call)
            helper = (
                isinstance(func, cst.FunctionDef)
                and self.entry.get(func.name.value) is None
                and end is not None
                and end.kind == "return"
            )
            if (end is not None and not helper) or self._creates_or_removes(region):
                consequential = True
            elif helper:
                consequential = self._helper_consequential(func)
            for st in dead:
                self.dead_regions.append((st, pid_file))
        else:
            consequential = self._returned_to_decider(call)
        self.facts.liveness.append(LivenessCheck(self.span(call), pid_file, consequential))

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

    def _helper_consequential(self, func: Any) -> bool:
        cst = self.cst
        for call, _m in self.call_sites(func):
            for a in self.ancestors(call):
                if isinstance(a, cst.If) and self.within(call, a.test):
                    stmts = list(a.body.body)
                    if a.orelse is not None:
                        ob = a.orelse.body
                        stmts += [ob] if isinstance(ob, cst.If) else list(ob.body)
                    if self.decides(stmts) or self._creates_or_removes(stmts):
                        for st in stmts:
                            self.dead_regions.append((st, None))
                        return True
                if isinstance(a, cst.BaseStatement) and not isinstance(a, cst.If):
                    break
        return False

    def _creates_or_removes(self, stmts: list[Any]) -> bool:
        cst = self.cst
        for st in stmts:
            for c in self.descendants(st, cst.Call):
                if self.creation(c) is not None or self.removal_target(c) is not None:
                    return True
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

    def _is_lock_path(self, path: PathExpr | None) -> bool:
        """Acquired in this file, or named like a lock or pid file."""
        if path is None:
            return False
        if lockish_name(path):
            return True
        key = self.key(path)
        return any(a.path is not None and self.key(a.path) == key for a in self.facts.acquires)

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

    # release coverage ----------------------------------------------------------------------
    def _release_coverage(self) -> None:
        for acq in self.facts.acquires:
            if acq.kind is not LockKind.EXISTENCE or acq.mechanism == "SoftFileLock":
                continue
            rms = [
                (c, r)
                for c, r in self.removals_of(acq.path)
                if not r.stale_guard and not r.overwrite
            ]
            if not rms:
                continue
            acq.released = True
            acq.release_on_every_exit = any(self._every_exit(c, r) for c, r in rms)

    def _every_exit(self, call: Any, r: Removal) -> bool:
        cst = self.cst
        if r.via in ("finally", "atexit", "exit-method"):
            return True
        func = self.func_of(call)
        if not isinstance(func, cst.FunctionDef):
            return False
        # a helper / release method: called from finally, __exit__ or atexit?
        for site, _m in self.call_sites(func):
            if any(isinstance(a, cst.Finally) for a in self.ancestors(site)):
                return True
            f = self.func_of(site)
            if isinstance(f, cst.FunctionDef) and f.name.value == "__exit__":
                return True
        for c in self.calls:
            if self.is_q(c, "atexit.register") and c.args:
                fn = c.args[0].value
                name = (
                    fn.value
                    if isinstance(fn, cst.Name)
                    else fn.attr.value
                    if isinstance(fn, cst.Attribute)
                    else None
                )
                if name == func.name.value:
                    return True
        return False

    # hooks ---------------------------------------------------------------------------------
    def _hooks(self) -> None:
        cst = self.cst
        self._hook_pending: list[tuple[ReleaseHook, list[Any]]] = []
        for c, r in self.removal_calls:
            if r.via == "finally":
                tr = None
                for a in self.ancestors(c):
                    if (
                        isinstance(a, cst.Try)
                        and a.finalbody is not None
                        and self.within(c, a.finalbody)
                    ):
                        tr = a
                        break
                if tr is None:
                    continue
                active = [acq for acq in self.facts.acquires if self._busy_inside(acq, tr)]
                hook = ReleaseHook(r.path, Span(*self._try_kw_span(tr)), "finally")
                self._hook_pending.append((hook, active))
            elif r.via == "atexit" and r.hook_span is not None:
                reg_off = r.hook_span.start
                active = []
                for acq in self.facts.acquires:
                    if acq.busy is None or not acq.busy.ends_run:
                        continue
                    if reg_off < acq.span.start:
                        active.append(acq)
                hook = ReleaseHook(r.path, r.hook_span, "atexit")
                self._hook_pending.append((hook, active))
        # finally that calls a local release function
        for tr in self.tries:
            if tr.finalbody is None:
                continue
            for c in self.descendants(tr.finalbody, cst.Call):
                fname = None
                if isinstance(c.func, cst.Name):
                    fname = c.func.value
                elif isinstance(c.func, cst.Attribute):
                    fname = c.func.attr.value  # lock.release(): a method of this file
                if fname in self.funcs:
                    for f in self.funcs[fname]:
                        if isinstance(c.func, cst.Attribute) and self.class_of(f) is None:
                            continue
                        for rc, r in self.removal_calls:
                            if self.func_of(rc) is f:
                                active = [
                                    a for a in self.facts.acquires if self._busy_inside(a, tr)
                                ]
                                self._hook_pending.append(
                                    (
                                        ReleaseHook(
                                            r.path, Span(*self._try_kw_span(tr)), "finally"
                                        ),
                                        active,
                                    )
                                )

    def _try_kw_span(self, tr: Any) -> tuple:
        sp = self.span(tr)
        return (sp.line, sp.col, sp.line, sp.col + 3, sp.start, sp.start + 3)

    def _busy_inside(self, acq: Acquire, tr: Any) -> bool:
        node = self._acq_nodes.get(id(acq))
        if node is None or acq.busy is None:
            return False
        if not (acq.busy.ends_run or self._leaves(acq)):
            return False
        if self.within(node, tr.body):
            return True
        # the acquire is elsewhere (a method, a helper) but its busy branch runs in the try
        b0 = self.off(tr.body)
        b1 = self.off(tr.finalbody)
        return b0 <= acq.busy.span.start < b1

    def _leaves(self, acq: Acquire) -> bool:
        b = acq.busy
        txt = self.text[b.span.start : b.span.end].lstrip()
        return txt.startswith(("return", "raise"))

    def _hooks_reindex(self) -> None:
        index = {id(a): i for i, a in enumerate(self.facts.acquires)}
        for hook, active in getattr(self, "_hook_pending", []):
            hook.active_in_busy_of = tuple(sorted(index[id(a)] for a in active if id(a) in index))
            self.facts.hooks.append(hook)
        for bg, acq in getattr(self, "_bg_pending", []):
            if id(acq) in index:
                bg.lock = index[id(acq)]
                self.facts.backgrounds.append(bg)

    # background children -------------------------------------------------------------------
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

    def _kw_true(self, call: Any, name: str) -> bool:
        v = self.kw(call, name)
        return v is not None and self.const(v) is True

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

    # other files ---------------------------------------------------------------------------
    def _created(self) -> None:
        cst = self.cst
        locked = {a.path.key() for a in self.facts.acquires if a.path is not None}
        for c in self.calls:
            q = self.call_q(c)
            if q == "os.makedirs":
                ek = self.kw(c, "exist_ok")
                if ek is not None and self.const(ek) is True:
                    p = self.path(self.arg(c, 0, "name"))
                    if p is not None:
                        self.facts.dirs_made.append(p)
                continue
            if self.method(c) == "mkdir" and isinstance(c.func, cst.Attribute):
                ek = self.kw(c, "exist_ok")
                if ek is not None and self.const(ek) is True:
                    p = self.path(c.func.value)
                    if p is not None:
                        self.facts.dirs_made.append(p)
                continue
            dst = None
            if q in ("os.rename", "os.replace", "shutil.move", "os.renames"):
                dst = self.arg(c, 1, "dst")
            elif self.method(c) in ("rename", "replace") and isinstance(c.func, cst.Attribute):
                if self.is_pathlike(c.func.value) and c.args:
                    dst = self.arg(c, 0, "target")
            if dst is not None:
                p = self.path(dst)  # a rename makes its destination
                if p is not None and p.key() not in locked:
                    self.facts.created.append(p)
                continue
            cr = self.creation(c)
            if cr is None or id(c) in self.handled_creates:
                continue
            p = self.path(cr[1])
            if p is not None and p.key() not in locked:
                self.facts.created.append(p)
        # a name with a per-process part (pid, uuid, tempfile) is this process's own
        for r in self.facts.removals:
            if r.path is not None and r.path.has_unique:
                self.facts.created.append(r.path)


_NOVALUE = object()


class _MappedPositions:
    """``_positions`` of a sliced text, each mapped back to the file on first use."""

    def __init__(self, raw: dict[int, tuple[int, int]], back: Any) -> None:
        self._raw = raw
        self._back = back
        self._done: dict[int, tuple[int, int]] = {}

    def get(self, key: int, default: Any = None) -> Any:
        r = self._done.get(key)
        if r is None:
            raw = self._raw.get(key)
            if raw is None:
                return default
            r = self._done[key] = (self._back(raw[0]), self._back(raw[1]))
        return r

    def __getitem__(self, key: int) -> tuple[int, int]:
        r = self.get(key)
        if r is None:
            raise KeyError(key)
        return r


def _positions(module: Any, text: str) -> dict[int, tuple[int, int]]:
    """Start and end ``str`` offsets of every node, by id.

    libcst's PositionProvider computes lines and columns through its metadata machinery, ten
    times slower than generating the code; this state only counts characters while the module
    regenerates its own (identical) text, following the same syntactic-position rules."""
    from contextlib import contextmanager

    from libcst._nodes.internal import CodegenState

    computed: dict[int, tuple[int, int]] = {}
    stack: list[int] = []
    pos = [1 if text.startswith("\ufeff") else 0]  # libcst drops a byte-order mark
    last = [0]

    class _State(CodegenState):
        def add_indent_tokens(self) -> None:
            for t in self.indent_tokens:
                pos[0] += len(t)
                last[0] = len(t)

        def add_token(self, value: str) -> None:
            pos[0] += len(value)
            last[0] = len(value)
            if not self.tokens:
                self.tokens.append(value)  # Module codegen asks whether anything was emitted

        def pop_trailing_newline(self) -> None:
            pos[0] -= last[0]
            last[0] = 0

        def before_codegen(self, node: Any) -> None:
            stack.append(pos[0])

        def after_codegen(self, node: Any) -> None:
            start = stack.pop()
            computed.setdefault(id(node), (start, pos[0]))

        @contextmanager
        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            start = pos[0]
            try:
                yield
            finally:
                end = pos[0]
                if start_node is not None:
                    start = computed[id(start_node)][0]
                if end_node is not None:
                    end = computed[id(end_node)][1]
                computed[id(node)] = (start, end)

    state = _State(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    if pos[0] != len(text):
        # libcst regenerated a slightly different text (it drops the blank in
        # `except E :`): align the two and move every offset onto the source
        bom = 1 if text.startswith("\ufeff") else 0
        shift = _align(module.code, text[bom:])
        if shift is None:
            raise ValueError("libcst did not reproduce the source text")
        return {k: (bom + shift[a - bom], bom + shift[b - bom]) for k, (a, b) in computed.items()}
    return computed


def _align(code: str, text: str) -> list[int] | None:
    """For each offset of ``code``, the offset of the same character in ``text``, when the
    two differ only in whitespace and line continuations; None otherwise."""
    out = [0] * (len(code) + 1)
    i = j = 0
    n, m = len(code), len(text)
    while i < n:
        if j < m and code[i] == text[j]:
            out[i] = j
            i += 1
            j += 1
        elif j < m and text[j] in " \t\f\\\r\n":
            j += 1  # in the source only
        elif code[i] in " \t\f\\\r\n":
            out[i] = j  # in the regenerated text only
            i += 1
        else:
            return None
    out[n] = m
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}
_SKIP_FIELDS = {
    "whitespace",
    "whitespace_before",
    "whitespace_after",
    "leading_lines",
    "lines_after_decorators",
    "lpar",
    "rpar",
    "semicolon",
    "comma",
    "header",
    "footer",
    "trailing_whitespace",
    "newline",
    "indent",
}


_KINDS: dict[type, str] = {}


def _kinds(cst: Any) -> dict[type, str]:
    """The node classes the walk indexes (exact classes: a dict lookup is far cheaper than
    isinstance on libcst's ABC-based classes)."""
    if not _KINDS:
        _KINDS.update(
            {
                cst.Call: "call",
                cst.If: "if",
                cst.Try: "try",
                cst.For: "for",
                cst.With: "with",
                cst.FunctionDef: "def",
                cst.ClassDef: "class",
                cst.Import: "import",
                cst.ImportFrom: "from",
                cst.Assign: "assign",
                cst.AnnAssign: "annassign",
                cst.WithItem: "withitem",
            }
        )
    return _KINDS


_IS_NODE: dict[type, bool] = {}


def _kids(node: Any) -> list[Any]:
    """The child nodes of a libcst node, in field order, without whitespace and punctuation
    (much cheaper than ``node.children``, which runs a visitor)."""
    t = node.__class__
    names = _FIELDS.get(t)
    if names is None:
        import dataclasses

        names = tuple(
            f.name
            for f in dataclasses.fields(t)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
        _FIELDS[t] = names
    out = []
    for name in names:
        v = getattr(node, name, None)
        if v is None or v.__class__ is str:
            continue
        if v.__class__ is list or v.__class__ is tuple:
            out.extend(x for x in v if _is_node(x))
        elif _is_node(v):
            out.append(v)
    return out


def _is_node(v: Any) -> bool:
    t = v.__class__
    r = _IS_NODE.get(t)
    if r is None:
        from libcst import CSTNode

        r = _IS_NODE[t] = issubclass(t, CSTNode)
    return r


def status_literal(an: _Analyzer, node: Any) -> bool:
    return node is None or an.const(node) is not _NOVALUE


# --------------------------------------------------------------------------- part helpers


def _merge(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for p in parts:
        if p.kind is PartKind.LIT:
            if not p.value:
                continue
            if out and out[-1].kind is PartKind.LIT:
                out[-1] = Part(PartKind.LIT, out[-1].value + p.value)
                continue
        out.append(p)
    return out


def _join(a: list[Part], b: list[Part]) -> list[Part]:
    if b and b[0].kind is PartKind.LIT and b[0].value.startswith("/"):
        return list(b)
    if not a:
        return list(b)
    a = _merge(a)
    if a and a[-1].kind is PartKind.LIT and a[-1].value.endswith("/"):
        return a + list(b)
    return a + [Part(PartKind.LIT, "/")] + list(b)


def _dirname(parts: list[Part]) -> list[Part]:
    parts = _merge(parts)
    if len(parts) == 1 and parts[0].kind is PartKind.SCRIPT:
        return [Part(PartKind.SCRIPT_DIR)]
    if parts and parts[-1].kind is PartKind.LIT and "/" in parts[-1].value.rstrip("/"):
        head = parts[-1].value.rstrip("/").rsplit("/", 1)[0]
        return parts[:-1] + ([Part(PartKind.LIT, head or "/")])
    return [Part(PartKind.UNKNOWN)]


def _basename(parts: list[Part]) -> list[Part]:
    parts = _merge(parts)
    if len(parts) == 1 and parts[0].kind is PartKind.SCRIPT:
        return [Part(PartKind.SCRIPT_NAME)]
    if len(parts) == 1 and parts[0].kind in (PartKind.ARG, PartKind.USER, PartKind.SCRIPT_NAME):
        return parts  # the base name of a predictable value stays predictable
    if parts and parts[-1].kind is PartKind.LIT and "/" in parts[-1].value:
        return [Part(PartKind.LIT, parts[-1].value.rsplit("/", 1)[1])]
    if len(parts) == 1 and parts[0].kind is PartKind.LIT:
        return parts
    return [Part(PartKind.UNKNOWN)]


def _expanduser(parts: list[Part]) -> list[Part]:
    if (
        parts
        and parts[0].kind is PartKind.LIT
        and (parts[0].value == "~" or parts[0].value.startswith("~/"))
    ):
        rest = parts[0].value[1:]
        return [Part(PartKind.HOME)] + ([Part(PartKind.LIT, rest)] if rest else []) + parts[1:]
    return parts
