"""Values and paths: names, imports, constants, bindings, call-site arguments, and the
resolution of path expressions (``os.path``, pathlib, f-strings, ``%``/``format``, the
environment, ``sys.argv``, ``self.X``)."""

from __future__ import annotations

import ast
import functools
import os
import re

from ... import lazyre
from ...hints import Any
from ...model import (
    Part,
    PartKind,
    PathExpr,
    replace,
)

WORK_BUDGET = 4000  # resolution steps for one path or pid (call-site fan-out is bounded)
LIBRARY_MODULES = ("fcntl", "filelock", "portalocker", "fasteners")
OS_EX = {"EX_OK": 0, "EX_TEMPFAIL": 75, "EX_SOFTWARE": 70, "EX_UNAVAILABLE": 69}
_NOVALUE = object()
_PY2_PREFIX = lazyre.compile(r"(?i)(?<![\w'\"])u(r['\"])")


@functools.lru_cache(maxsize=4096)
def _literal(code: str) -> Any:
    try:
        return ast.literal_eval(code)
    except Exception:  # noqa: BLE001 - any literal CPython refuses is no value
        return _NOVALUE


def status_literal(an: Any, node: Any) -> bool:
    return node is None or an.const(node) is not _NOVALUE


class Values:
    """Methods of :class:`.locks.Analyzer`."""

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
            if n == "file" and (self.py2 or self.lookup(node) is None):
                return "open"  # Python 2's file() opens (unbound in Python 3: the same code)
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
            code = self.code(node)
            if self.py2:
                code = _PY2_PREFIX.sub(r"\1", code)  # Python 2 `ur"..."`: a raw string
            return _literal(code)
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
            if scope is not None and name in self.globals_declared.get(id(scope), ()):
                scope = None  # `global X`: the module's binding, its last one before here
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

    def path(self, node: Any) -> PathExpr | None:
        """The resolved path of an expression.  When it goes through a parameter whose call
        sites pass different values, the result is VAR and the values are kept as variants
        (each judged on its own, see :meth:`_expand`)."""
        if node is None:
            return None
        cst = self.cst
        while (
            isinstance(node, cst.Call)
            and len(node.args) == 1
            and self.call_q(node) in ("str", "os.fspath", "bytes")
        ):
            node = node.args[0].value  # `str(self._path)` names what `self._path` names
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

        out = []
        for it in items:
            var = self._variants.get(id(it.path)) if it.path is not None else None
            if var is None or var[0] is not it.path:
                out.append(it)
                continue
            self._keep.append(it)
            for v in var[1]:
                cp = replace(it, path=v)
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
                if v[0] == "param" and id(v[2]) in self._bound_params:
                    # inside a helper read for one call: the argument that call passes
                    arg = self._bound_params[id(v[2])]
                    saved, self._bound_params = self._bound_params, {}
                    try:
                        return self._parts(arg, depth + 1)
                    finally:
                        self._bound_params = saved
                if v[0] == "param":
                    return self._param_parts(node, v[1], v[2], depth)
                if v[0] == "for":
                    return self._loop_parts(node, v[1], depth)
                return unknown
            alt = self._env_or_literal(node, v, depth)
            if alt is not None:
                return alt
            filled = self._default_fill(node, v)
            if filled is not None:
                # `if not path: path = X`: the callers' values that are set, and X
                return self._param_parts(node, filled[0], filled[1], depth, extra=v)
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
            split = self._split_parts(node, depth)
            if split is not None:
                return split
            cut = self._cut_parts(node, depth)
            if cut is not None:
                return cut
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

    def _param_parts(
        self, node: Any, func: Any, param: Any, depth: int, extra: Any = None
    ) -> list[Part]:
        """A parameter's value from the call sites (and its default); several different
        values: VAR, with each value kept as a variant (see :meth:`path`).  ``extra`` is the
        value a default fill binds (:meth:`_default_fill`): it replaces the call-site values
        that are ``None``."""
        pkey = id(param) if extra is None else id(extra)
        resolved = self._param_cache.get(pkey) if not self._choice else None
        if resolved is None:
            if pkey in self._resolving:
                return [Part(PartKind.VAR, node.value)]  # recursion
            self._resolving.add(pkey)
            try:
                vals = self.param_values(func, param)
                if extra is not None:
                    # `None` (passed, or the default of a call that passes nothing) is filled
                    vals = [extra if self._is_none(x) else x for x in vals] or [extra]
                resolved = [self._parts(x, depth + 1) for x in vals]
            finally:
                self._resolving.discard(pkey)
            if not self._choice:
                self._param_cache[pkey] = resolved
        keys = {tuple(r) for r in resolved}
        if len(keys) == 1:
            return resolved[0]
        if pkey in self._choice and self._choice[pkey] < len(resolved):
            return resolved[self._choice[pkey]]
        if resolved:
            self._multi.setdefault(pkey, len(resolved))
        return [Part(PartKind.VAR, node.value)]

    def _loop_parts(self, node: Any, loop: Any, depth: int) -> list[Part]:
        """The variable of ``for f in ["bot.lock", "app.pid"]:``: each literal is a variant
        (judged on its own, as several call-site values are); another iterable is VAR."""
        cst = self.cst
        it = loop.iter
        if not isinstance(it, (cst.List, cst.Tuple)) or not 1 <= len(it.elements) <= 8:
            return [Part(PartKind.VAR, node.value)]
        values = [e.value for e in it.elements]
        if any(not isinstance(self.const(v), str) for v in values):
            return [Part(PartKind.VAR, node.value)]
        key = id(loop)
        if key in self._choice and self._choice[key] < len(values):
            return self._parts(values[self._choice[key]], depth + 1)
        if len(values) == 1:
            return self._parts(values[0], depth + 1)
        self._multi.setdefault(key, len(values))
        return [Part(PartKind.VAR, node.value)]

    def _is_none(self, node: Any) -> bool:
        return isinstance(node, self.cst.Name) and node.value == "None"

    def _default_fill(self, node: Any, v: Any) -> tuple[Any, Any] | None:
        """``v`` is bound in the body of ``if not NAME:`` / ``if NAME is None:`` where NAME
        is a parameter of the enclosing function: (function, parameter), else None."""
        cst = self.cst
        br = self._branch_of(v)
        func = self.func_of(v)
        if br is None or not br[1] or func is None or not isinstance(func, cst.FunctionDef):
            return None
        test, name = br[0].test, node.value
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            subject = test.expression
        elif (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.Equal))
            and self._is_none(test.comparisons[0].comparator)
        ):
            subject = test.left
        else:
            return None
        if not (isinstance(subject, cst.Name) and subject.value == name):
            return None
        if self.func_of(node) is not func:
            return None
        param = next((p for p in self._params(func) if p.name.value == name), None)
        return (func, param) if param is not None else None

    def _split_parts(self, node: Any, depth: int) -> list[Part] | None:
        """``os.path.split(p)[-1]`` (the base name), ``[0]`` (the directory), and
        ``os.path.splitext(p)[0]`` (the name without its extension)."""
        cst = self.cst
        call = node.value
        if not isinstance(call, cst.Call) or not node.slice or len(node.slice) != 1:
            return None
        q = self.call_q(call)
        if q not in ("os.path.split", "posixpath.split") and self.method(call) in (
            "split",
            "rsplit",
            "partition",
            "rpartition",
        ):
            return self._dot_cut(node, call, depth)  # `name.split(".")[0]`
        if q not in ("os.path.split", "os.path.splitext") or not call.args:
            return None
        sl = node.slice[0].slice
        index = self.const(sl.value) if isinstance(sl, cst.Index) else _NOVALUE
        if index not in (0, 1, -1):
            return None
        base = self._parts(call.args[0].value, depth + 1)
        if q == "os.path.split":
            return _dirname(base) if index == 0 else _basename(base)
        return _strip_ext(base) if index == 0 else [Part(PartKind.UNKNOWN)]

    def _dot_cut(self, node: Any, call: Any, depth: int) -> list[Part] | None:
        """``name.split(".")[0]`` (``rsplit(".", 1)[0]``, ``partition(".")[0]``): the name
        without its extension."""
        cst = self.cst
        sl = node.slice[0].slice
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if (
            not isinstance(call.func, cst.Attribute)
            or not isinstance(sl, cst.Index)
            or self.const(sl.value) != 0
            or not args
            or self.const(args[0]) != "."
        ):
            return None
        base = _merge(self._parts(call.func.value, depth + 1))
        if len(base) == 1 and base[0].kind is PartKind.LIT:
            text = base[0].value
            cut = text.split(".")[0] if self.method(call) in ("split", "partition") else None
            return [Part(PartKind.LIT, cut if cut is not None else text.rsplit(".", 1)[0])]
        return _strip_ext(base)

    _CUT_END = lazyre.compile(r"\s*:\s*(?:-\s*(\d+)|len\(\s*(\w+)\s*\)\s*-\s*(\d+))\s*")

    def _cut_parts(self, node: Any, depth: int) -> list[Part] | None:
        """``name[:-3]`` / ``name[:len(name) - 3]`` (a ``.py`` cut off): a literal loses its
        last characters; the script's name, a user or an argument stays what it is."""
        if len(node.slice) != 1:
            return None
        m = self._CUT_END.fullmatch(self.code(node.slice[0]))
        if m is None or (m[2] is not None and m[2] != self.code(node.value)):
            return None
        n = int(m[1] or m[3])
        base = _merge(self._parts(node.value, depth + 1))
        if len(base) == 1 and base[0].kind is PartKind.LIT and n:
            return [Part(PartKind.LIT, base[0].value[:-n])]
        if len(base) == 1 and base[0].kind is PartKind.SCRIPT:
            return _strip_ext(base)
        if len(base) == 1 and base[0].kind in (PartKind.ARG, PartKind.USER, PartKind.SCRIPT_NAME):
            return base
        return [Part(PartKind.UNKNOWN)]

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
            default = self._class_attr(cls, attr)
            if default is not None and not self._sentinel(default):
                # `path = "/var/tmp"` in the class body, `self.path = path` only when a
                # caller gives one (`path=False` / `None` means "not given")
                vals = [default] + [v for v in vals if not self._sentinel(v)]
            if not vals:
                vals = self._property_returns(cls, attr)  # `@property def lock_path(self):`
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
        if attr == "name":
            opened = self._opened_path(node.value, depth)
            if opened is not None:
                return opened  # `fh.name` of `fh = open(P, ...)`: P as it was passed
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

    def _opened_path(self, handle: Any, depth: int) -> list[Part] | None:
        """The path a file object was opened with, when ``handle`` is bound to an
        ``open(P, ...)`` call (also through ``global H`` assigned in another function)."""
        if not isinstance(handle, self.cst.Name):
            return None
        v = self.lookup(handle)
        opens = ("open", "io.open")
        if not isinstance(v, self.cst.Call) or self.call_q(v) not in opens:
            # a global set by another function, wherever it stands in the file
            vals = [c[2] for c in self.assigns.get((0, handle.value), []) if c[2] is not None]
            calls = [c for c in vals if isinstance(c, self.cst.Call)]
            if len(calls) != 1 or self.call_q(calls[0]) not in opens:
                return None
            v = calls[0]
        return self._parts(self.arg(v, 0, "file"), depth + 1)

    def _branch_of(self, node: Any) -> tuple[Any, bool] | None:
        """The innermost ``if`` holding ``node`` in a branch, and whether in its body."""
        cst = self.cst
        child = node
        for a in self.ancestors(node):
            if isinstance(a, cst.If) and child is not a.test:
                return a, child is a.body
            if isinstance(a, (cst.FunctionDef, cst.ClassDef)):
                return None
            child = a
        return None

    def _env_or_literal(self, node: Any, v: Any, depth: int) -> list[Part] | None:
        """``if xdg is not None: d = xdg`` / ``else: d = "/tmp"`` (either order): the two
        branches bind the name to an environment value and a literal, which reads as
        ``os.environ.get("XDG_RUNTIME_DIR", "/tmp")``."""
        binds = self._bindings_before(node)
        if len(binds) < 2 or binds[-1] is not v:
            return None
        here, other = self._branch_of(v), self._branch_of(binds[-2])
        if here is None or other is None or here[0] is not other[0] or here[1] == other[1]:
            return None
        a, b = _merge(self._parts(binds[-2], depth + 1)), _merge(self._parts(v, depth + 1))
        for env, lit in ((a, b), (b, a)):
            if (
                len(env) == 1
                and env[0].kind is PartKind.VAR
                and env[0].default is None
                and all(p.kind is PartKind.LIT for p in lit)
            ):
                return [Part(PartKind.VAR, env[0].value, PathExpr(tuple(lit)))]
        return None

    def _class_attr(self, cls: Any, attr: str) -> Any:
        """The value a class body binds to ``attr`` (a class attribute), or None."""
        cst = self.cst
        if not isinstance(cls, cst.ClassDef):
            return None
        for st in cls.body.body:
            if isinstance(st, cst.SimpleStatementLine):
                for sm in st.body:
                    target = (
                        sm.targets[0].target
                        if isinstance(sm, cst.Assign) and len(sm.targets) == 1
                        else sm.target
                        if isinstance(sm, cst.AnnAssign)
                        else None
                    )
                    if isinstance(target, cst.Name) and target.value == attr:
                        return sm.value
        return None

    def _property_returns(self, cls: Any, attr: str) -> list[Any]:
        """What a ``@property`` method ``attr`` of ``cls`` returns, ``return None`` aside."""
        cst = self.cst
        out: list[Any] = []
        for fn in self.funcs.get(attr, ()):
            if self.class_of(fn) is not cls or not any(
                self.code(d.decorator) in ("property", "functools.cached_property")
                or self.code(d.decorator) == "cached_property"
                for d in fn.decorators
            ):
                continue
            for r in self.descendants(fn.body, cst.Return):
                if (
                    r.value is not None
                    and self.func_of(r) is fn
                    and self.const(r.value) is not None
                ):
                    out.append(r.value)
        return out

    def _sentinel(self, node: Any) -> bool:
        """``None``/``False``, or a parameter whose every value is one: no path given."""
        if self.const(node) in (None, False):
            return True
        v = self.lookup(node) if isinstance(node, self.cst.Name) else None
        if isinstance(v, tuple) and v[0] == "param":
            vals = self.param_values(v[1], v[2])
            return bool(vals) and all(self.const(x) in (None, False) for x in vals)
        return False

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
        if (
            m == "rstrip"
            and isinstance(node.func, cst.Attribute)
            and len(args) == 1
            and (self.const(args[0]) == "/" or self.qname(args[0]) == "os.sep")
        ):
            # `gettempdir().rstrip("/")`: the directory without its trailing slash
            base = self._parts(node.func.value, depth + 1)
            if base and base[-1].kind is PartKind.LIT:
                base = [*base[:-1], Part(PartKind.LIT, base[-1].value.rstrip("/") or "/")]
            return base
        if m == "hexdigest" and isinstance(node.func, cst.Attribute) and not args:
            return self._digest_parts(node.func.value, depth)
        ret = self.returned_parts(node, depth)  # a helper of this file building the path
        return ret if ret is not None else unknown

    _PREDICTABLE = frozenset(
        {PartKind.LIT, PartKind.ARG, PartKind.SCRIPT, PartKind.SCRIPT_NAME, PartKind.USER}
    )

    def _digest_parts(self, obj: Any, depth: int) -> list[Part]:
        """``hashlib.md5(X).hexdigest()``, or ``h = hashlib.sha1(); h.update(X)`` in the same
        function: a name derived from X alone, so as predictable as X (an argument, the
        script's name, a literal: ARG; anything else: UNKNOWN)."""
        cst = self.cst
        unknown = [Part(PartKind.UNKNOWN)]
        ctor, inputs = obj, []
        if isinstance(obj, cst.Name):
            ctor = self.lookup(obj)
            scope = self.func_of(obj) or self.module
            for c in self.descendants(scope, cst.Call):
                f = c.func
                if (
                    self.method(c) == "update"
                    and isinstance(f, cst.Attribute)
                    and isinstance(f.value, cst.Name)
                    and f.value.value == obj.value
                ):
                    inputs.extend(a.value for a in c.args)
        if not isinstance(ctor, cst.Call) or not self.call_q(ctor).startswith("hashlib."):
            return unknown
        inputs.extend(a.value for a in ctor.args if a.keyword is None)
        if not inputs:
            return unknown
        for x in inputs:
            parts = self._hashed_parts(x, depth)
            if not parts or any(p.kind not in self._PREDICTABLE for p in parts):
                return unknown
        return [Part(PartKind.ARG)]

    def _hashed_parts(self, x: Any, depth: int) -> list[Part]:
        """The parts of a hashed value, through ``.encode()``, ``json.dumps``, ``str``/
        ``repr``; the function's own ``*args``/``**kwargs`` are its arguments."""
        cst = self.cst
        while isinstance(x, cst.Call):
            q, m = self.call_q(x), self.method(x)
            if m == "encode" and isinstance(x.func, cst.Attribute):
                x = x.func.value
            elif q in ("json.dumps", "str", "repr", "bytes") and x.args:
                x = x.args[0].value
            else:
                break
        if isinstance(x, cst.Name):
            func = self.func_of(x)
            ps = func.params if isinstance(func, cst.FunctionDef) else None
            stars = [ps.star_arg, ps.star_kwarg] if ps is not None else []
            if any(
                getattr(st, "name", None) is not None and st.name.value == x.value for st in stars
            ):
                return [Part(PartKind.ARG)]
        return _merge(self._parts(x, depth + 1))

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
            vals = self.attr_assigns.get((id(cls) if cls is not None else 0, node.attr.value), [])
            # `self.fh = os.open(...)` in one branch, `self.fh = open(...)` in another: the
            # assignment before this use in the same method first, the nearest one first
            func, at = self.func_of(node), self.off(node)
            here = sorted(
                (v for v in vals if self.func_of(v) is func and self.off(v) < at),
                key=self.off,
                reverse=True,
            )
            for v in here + [v for v in vals if v not in here]:
                r = self.trace_open(v, depth + 1)
                if r is not None:
                    return r
        return None

    def _same_ref(self, a: Any, b: Any) -> bool:
        cst = self.cst
        if isinstance(a, cst.Name) and isinstance(b, cst.Name):
            return a.value == b.value
        if isinstance(a, cst.Attribute) and isinstance(b, cst.Attribute):
            return a.attr.value == b.attr.value and self._same_ref(a.value, b.value)
        return False

    def pid_source(self, node: Any, depth: int = 0) -> tuple[bool, PathExpr | None]:
        """Whether the value comes from reading a file, and that file."""
        cst = self.cst
        if depth == 0:
            self._pid_work = 0
        self._pid_work = getattr(self, "_pid_work", 0) + 1
        if node is None or depth > 10 or self._pid_work > WORK_BUDGET:
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
            if v is None:
                return self._unpacked_pid(node, depth)
            if isinstance(v, tuple):
                return False, None
            return self.pid_source(v, depth + 1)
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == "self"
        ):
            # `self.lockpid`, a property that reads the file: what it returns
            for ret in self._property_returns(self.class_of(node), node.attr.value):
                r = self.pid_source(ret, depth + 1)
                if r[0]:
                    return r
        for c in self.descendants(node, cst.Call):
            m = self.method(c)
            q = self.call_q(c)
            if (
                m in ("read", "read_text", "readline", "readlines", "read_bytes")
                and isinstance(c.func, cst.Attribute)
                and q != "os.read"
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
            if q == "os.readlink":  # a symlink lock keeps its holder's PID as the target
                return True, self.path(self.arg(c, 0, "path"))
            if q == "os.read":  # `old_pid = os.read(fd, 20)`
                op = self.trace_open(self.arg(c, 0))
                return True, self._open_path(op) if op is not None else None
            if q.startswith(("local.", "self.")) and depth < 8:  # `pid = get_pid(pid_path)`
                for fn in self.funcs.get(q.rsplit(".", 1)[-1], ()):
                    for ret in self.descendants(fn, cst.Return):
                        if ret.value is not None and self.func_of(ret) is fn:
                            r = self.pid_source(ret.value, depth + 1)
                            if r[0]:
                                return r
        for a in self.descendants(node, cst.Attribute):
            if a is not node and isinstance(a.value, cst.Name) and a.value.value == "self":
                r = self.pid_source(a, depth + 1)  # `"/proc/%s" % self.lockpid`
                if r[0]:
                    return r
        for n in self.descendants(node, cst.Name):
            if n is not node and n.value != "int" and depth < 10:
                # `"/proc/%s" % pid` in a helper whose callers pass the pid read; `int(pid)`
                # with pid unpacked; `status.get("pid")` with status bound in a try and
                # again in its handler: every binding before, as for a bare name
                r = self.pid_source(n, depth + 1)
                if r[0]:
                    return r
        return False, None

    def _unpacked_pid(self, name: Any, depth: int) -> tuple[bool, PathExpr | None]:
        """``pid_source`` of a name bound by unpacking: ``procname, pid = f.read().split()``
        (read from f), ``ok, pid = take(path)`` (element i of the tuples ``take`` returns)."""
        cst = self.cst
        scope = self.func_of(name)
        before = [
            (stmt, value, i)
            for stmt, value, i in self._unpacked.get(name.value, ())
            if stmt.s < name.s and self.func_of(stmt) is scope
        ]
        if not before:
            return False, None
        _stmt, value, i = before[-1]
        q = self.call_q(value) if isinstance(value, cst.Call) else ""
        if q.startswith(("local.", "self.")) and depth < 8:
            for fn in self.funcs.get(q.rsplit(".", 1)[-1], ()):
                for ret in self.descendants(fn, cst.Return):
                    tup = ret.value
                    if (
                        isinstance(tup, cst.Tuple)
                        and self.func_of(ret) is fn
                        and i < len(tup.elements)
                    ):
                        r = self.pid_source(tup.elements[i].value, depth + 1)
                        if r[0]:
                            return r
            return False, None
        return self.pid_source(value, depth + 1)

    def _open_path(self, opener: Any) -> PathExpr | None:
        cst = self.cst
        if (
            self.method(opener) == "open"
            and isinstance(opener.func, cst.Attribute)
            and self.call_q(opener) not in ("io.open", "codecs.open", "os.open")
        ):
            return self.path(opener.func.value)
        return self.path(
            self.arg(opener, 0, "path" if self.call_q(opener) == "os.open" else "file")
        )

    def key(self, path: PathExpr) -> str:
        cache = self.__dict__.setdefault("_key_cache", {})
        k = cache.get(id(path))
        if k is None or k[0] is not path:
            k = cache[id(path)] = (path, path.key())
        return k[1]


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


def _strip_ext(parts: list[Part]) -> list[Part]:
    """``os.path.splitext(p)[0]``: a literal tail loses its extension; the script's name
    (or another predictable single part) stays what it is."""
    parts = _merge(parts)
    if len(parts) == 1 and parts[0].kind is PartKind.SCRIPT:
        return [Part(PartKind.SCRIPT_DIR), Part(PartKind.LIT, "/"), Part(PartKind.SCRIPT_NAME)]
    if parts and parts[-1].kind is PartKind.LIT:
        head, sep, tail = parts[-1].value.rpartition("/")
        stem = tail.rsplit(".", 1)[0] if "." in tail.lstrip(".") else tail
        return parts[:-1] + [Part(PartKind.LIT, head + sep + stem)]
    if len(parts) == 1 and parts[0].kind in (PartKind.ARG, PartKind.USER, PartKind.SCRIPT_NAME):
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
