"""Stage 2: what names mean.  Imports (``require``/``import`` with aliases) give qualified
names (``fs.openSync``, ``fs.promises.open``, ``path.join``); bindings and call sites give
values, and path expressions are resolved from them (``path.join(__dirname, ...)``, template
literals, ``os.tmpdir()``, ``process.env.X || "..."``, function arguments)."""

from __future__ import annotations

import functools
import json
import os

from ...hints import Any
from ...model import Part, PartKind, PathExpr
from . import syntax
from .syntax import Tree, arg, args, string_value, text, unwrap

MAX_DEPTH = 8
# the modules whose names matter, by the specifier they are imported with
MODULES = {
    "fs": "fs",
    "fs/promises": "fs.promises",
    "path": "path",
    "os": "os",
    "url": "url",
    "child_process": "child_process",
    "proper-lockfile": "proper-lockfile",
    "lockfile": "lockfile",
    "fs-ext": "fs-ext",
    "os-lock": "os-lock",
    "fs-extra": "fs",
    "graceful-fs": "fs",
    "process": "process",
    # exit-hook libraries: their callbacks run when the process exits (like process.on("exit"))
    "when-exit": "when-exit",
    "signal-exit": "signal-exit",
    "exit-hook": "exit-hook",
    "async-exit-hook": "async-exit-hook",
    "node-cleanup": "node-cleanup",
}
GLOBALS = {"process", "__dirname", "__filename", "require", "Number", "parseInt", "String"}


def module_name(spec: str, importer: str = "") -> str | None:
    spec = spec.removeprefix("node:")
    if spec.startswith(".") and importer:
        d = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(importer)), spec))
        return _package_root(d)
    return MODULES.get(spec)


@functools.lru_cache(maxsize=256)
def _package_root(d: str) -> str | None:
    """A relative import of a package's own root is that package (a library's tests and
    fixtures: ``require('../..')`` in proper-lockfile's ``test/fixtures``), when its
    ``package.json`` names one of :data:`MODULES`."""
    try:
        with open(os.path.join(d, "package.json"), encoding="utf-8") as f:
            name = json.load(f).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return MODULES.get(name) if isinstance(name, str) else None


class Names:
    """Imports, bindings and call sites of one file."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.bindings: dict[str, list[tuple[Any, Any]]] = {}  # name -> [(value, scope)]
        self.functions: dict[str, Any] = {}  # name -> function node
        self.calls_by_name: dict[str, list[Any]] = {}  # callee's last name -> calls
        self.members: dict[str, list[Any]] = {}  # this.X = value (constructors, methods)
        self.methods: dict[str, list[Any]] = {}  # class methods and arrow fields by name
        self._paths: dict[tuple[int, int], PathExpr | None] = {}
        self._callees: dict[tuple[int, int], str] = {}
        self._memo: dict[tuple[int, int, str], list[Part]] = {}
        self._index()
        for c in tree.calls:
            fn = c.child_by_field_name("function")
            fn = unwrap(fn) if fn is not None else None
            if fn is None:
                continue
            if fn.type == "member_expression":
                fn = fn.child_by_field_name("property")
            if fn is not None and fn.type in ("identifier", "property_identifier"):
                self.calls_by_name.setdefault(text(fn), []).append(c)

    # -- indexing ----------------------------------------------------------------------------
    def _index(self) -> None:
        for n in self.tree.nodes:
            t = n.type
            if t == "import_statement":
                self._import(n)
            elif t == "variable_declarator":
                name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
                if name is None or value is None:
                    continue
                value = unwrap(value)
                mod = self._required(value)
                if name.type == "identifier":
                    if mod is not None:
                        self.imports[text(name)] = mod
                    elif value.type in syntax.FUNCTIONS:
                        self.functions[text(name)] = value
                    else:
                        self._bind(text(name), value, n)
                elif name.type == "object_pattern" and mod is not None:
                    self._destructure(name, mod)
            elif t == "assignment_expression":
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and right is not None and left.type == "member_expression":
                    obj, prop = (
                        left.child_by_field_name("object"),
                        left.child_by_field_name("property"),
                    )
                    if obj is not None and obj.type == "this" and prop is not None:
                        self.members.setdefault(text(prop), []).append(unwrap(right))
                if left is not None and right is not None and left.type == "identifier":
                    right = unwrap(right)
                    if right.type in syntax.FUNCTIONS:
                        self.functions[text(left)] = right
                    else:
                        self._bind(text(left), right, n)
            elif t == "method_definition" or t in ("field_definition", "public_field_definition"):
                name = n.child_by_field_name("name") or n.child_by_field_name("property")
                value = n if t == "method_definition" else n.child_by_field_name("value")
                if name is not None and value is not None and value.type in syntax.FUNCTIONS:
                    self.methods.setdefault(text(name), []).append(value)
            elif t in ("function_declaration", "generator_function_declaration"):
                name = n.child_by_field_name("name")
                if name is not None:
                    self.functions[text(name)] = n

    def _bind(self, name: str, value: Any, where: Any) -> None:
        self.bindings.setdefault(name, []).append((value, syntax.function_of(where)))

    def _required(self, value: Any) -> str | None:
        """The module a ``require("m")`` (or ``require("m").x``) expression names."""
        value = unwrap(value)
        if value is None:
            return None
        if value.type == "member_expression":
            inner = self._required(value.child_by_field_name("object"))
            prop = value.child_by_field_name("property")
            return f"{inner}.{text(prop)}" if inner and prop is not None else None
        if value.type == "call_expression":
            fn = value.child_by_field_name("function")
            if fn is not None and text(fn) == "require":
                spec = string_value(arg(value, 0))
                return module_name(spec, self.tree.path) if spec else None
        if value.type == "identifier" and text(value) in self.imports:
            return self.imports[text(value)]
        return None

    def _destructure(self, pattern: Any, mod: str) -> None:
        for c in pattern.named_children:
            if c.type == "shorthand_property_identifier_pattern":
                self.imports[text(c)] = f"{mod}.{text(c)}"
            elif c.type == "pair_pattern":
                k, v = c.child_by_field_name("key"), c.child_by_field_name("value")
                if k is not None and v is not None and v.type == "identifier":
                    self.imports[text(v)] = f"{mod}.{text(k)}"

    def _import(self, node: Any) -> None:
        src = node.child_by_field_name("source")
        mod = module_name(string_value(src) or "", self.tree.path) if src is not None else None
        if mod is None:
            return
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for c in clause.named_children:
                if c.type == "identifier":  # import fs from "fs"
                    self.imports[text(c)] = mod
                elif c.type == "namespace_import":
                    ids = [i for i in c.named_children if i.type == "identifier"]
                    if ids:
                        self.imports[text(ids[-1])] = mod
                elif c.type == "named_imports":
                    for spec in c.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or name
                        if name is not None:
                            self.imports[text(alias)] = f"{mod}.{text(name)}"

    # -- qualified names ---------------------------------------------------------------------
    def qname(self, node: Any, depth: int = 0) -> str | None:
        """``fs.openSync``, ``fs.promises.open``, ``process.kill``... for a callee or value."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "identifier":
            name = text(node)
            if name in self.imports:
                return self.imports[name]
            vals = self.bindings.get(name)
            if vals:  # a local value, not a module: only an alias of one counts
                if len(vals) == 1 and vals[0][0].type in ("member_expression", "identifier"):
                    return self.qname(vals[0][0], depth + 1)
                return None
            return name
        if node.type == "member_expression":
            obj = self.qname(node.child_by_field_name("object"), depth + 1)
            prop = node.child_by_field_name("property")
            if obj is None or prop is None:
                return None
            return f"{obj}.{text(prop)}"
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and text(fn) == "require":
                spec = string_value(arg(node, 0))
                return module_name(spec, self.tree.path) if spec else None
        return None

    def callee(self, call: Any) -> str:
        """Memoised per call: every stage asks it of every call."""
        key = (call.start_byte, call.end_byte)
        q = self._callees.get(key)
        if q is None:
            fn = call.child_by_field_name("function") or call.child_by_field_name("constructor")
            q = (self.qname(fn) if fn is not None else None) or ""
            # fs.promises.x / fsp.x / fs-extra: one vocabulary
            q = self._callees[key] = q.replace("fs.promises.", "fs.").replace("fs.default.", "fs.")
        return q

    # -- values ------------------------------------------------------------------------------
    def values(self, ident: Any) -> list[Any]:
        """What an identifier may hold at its use: its bindings in the innermost scope that
        has one, or the argument values at the call sites of the function whose parameter it
        is."""
        name = text(ident)
        func = syntax.function_of(ident)
        while func is not None:
            if self._is_param(func, name):
                return self.param_values(func, name)
            local = [v for v, scope in self.bindings.get(name, []) if scope == func]
            if local:
                return local
            func = syntax.function_of(func)
        return [v for v, scope in self.bindings.get(name, []) if scope is None]

    @staticmethod
    def params(func: Any) -> list[Any]:
        ps = func.child_by_field_name("parameters") or func.child_by_field_name("parameter")
        if ps is None:
            return []
        if ps.type == "identifier":
            return [ps]
        out = []
        for p in ps.named_children:
            if p.type in ("required_parameter", "optional_parameter"):
                p = p.child_by_field_name("pattern") or p
            if p.type == "assignment_pattern":
                p = p.child_by_field_name("left") or p
            out.append(p)
        return out

    def _is_param(self, func: Any, name: str) -> bool:
        return any(p.type == "identifier" and text(p) == name for p in self.params(func))

    def param_index(self, func: Any, name: str) -> int:
        for i, p in enumerate(self.params(func)):
            if p.type == "identifier" and text(p) == name:
                return i
        return -1

    def local_function(self, call: Any) -> Any:
        """The function of this file a call runs: ``f()`` (a declaration or ``const f = ...``)
        or ``this.m()`` (the class's one method or arrow field named ``m``), or None."""
        fn = call.child_by_field_name("function")
        fn = unwrap(fn) if fn is not None else None
        if fn is None:
            return None
        if fn.type == "identifier":
            return self.functions.get(text(fn))
        if fn.type == "member_expression":
            obj, prop = unwrap(fn.child_by_field_name("object")), fn.child_by_field_name("property")
            if obj is not None and obj.type == "this" and prop is not None:
                found = self.methods.get(text(prop), [])
                return found[0] if len(found) == 1 else None
        return None

    def call_sites(self, func: Any) -> list[Any]:
        name = syntax.function_name(func)
        return list(self.calls_by_name.get(name, [])) if name else []

    def param_values(self, func: Any, name: str) -> list[Any]:
        i = self.param_index(func, name)
        out = []
        for site in self.call_sites(func):
            a = arg(site, i)
            if a is not None:
                out.append(a)
        if not out:  # a default value
            for p in (func.child_by_field_name("parameters") or func).named_children:
                if p.type == "assignment_pattern":
                    left = p.child_by_field_name("left")
                    if left is not None and text(left) == name:
                        out.append(unwrap(p.child_by_field_name("right")))
        return out

    # -- paths -------------------------------------------------------------------------------
    def path(self, node: Any) -> PathExpr | None:
        node = unwrap(node)
        if node is None:
            return None
        key = (node.start_byte, node.end_byte)
        if key not in self._paths:
            self._paths[key] = PathExpr(tuple(_merge(self._parts(node, 0))), text(node))
        return self._paths[key]

    def _parts(self, node: Any, depth: int) -> list[Part]:
        """Memoised per node (a name used in many places is resolved once); a node met again
        while it is being resolved (``x = x + "/a"``) is unknown."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return [Part(PartKind.UNKNOWN)]
        key = (node.start_byte, node.end_byte, node.type)
        memo = self._memo.get(key)
        if memo is None:
            self._memo[key] = [_unknown(node)]
            memo = self._memo[key] = self._parts_of(node, depth)
        return memo

    def _parts_of(self, node: Any, depth: int) -> list[Part]:
        t = node.type
        if t == "string":
            return [Part(PartKind.LIT, string_value(node) or "")]
        if t == "template_string":
            out: list[Part] = []
            for c in node.named_children:
                if c.type == "string_fragment":
                    out.append(Part(PartKind.LIT, text(c)))
                elif c.type == "template_substitution":
                    inner = c.named_children
                    out += self._parts(inner[0], depth + 1) if inner else []
            return out
        if t == "number":
            return [Part(PartKind.LIT, text(node))]
        if t == "identifier":
            return self._ident_parts(node, depth)
        if t == "member_expression":
            return self._member_parts(node, depth)
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op is not None and text(op) == "+":
                return self._parts(left, depth + 1) + self._parts(right, depth + 1)
            if op is not None and text(op) in ("||", "??"):
                lp = self._parts(left, depth + 1)
                if len(lp) == 1 and lp[0].kind is PartKind.VAR:
                    default = PathExpr(tuple(_merge(self._parts(right, depth + 1))))
                    return [Part(PartKind.VAR, lp[0].value, default)]
        if t in ("call_expression", "new_expression"):
            return self._call_parts(node, depth)
        return [_unknown(node)]

    def _ident_parts(self, node: Any, depth: int) -> list[Part]:
        name = text(node)
        if name == "__dirname":
            return [Part(PartKind.SCRIPT_DIR)]
        if name == "__filename":
            return [Part(PartKind.SCRIPT)]
        vals = self.values(node)
        if len(vals) > 4:
            return [_unknown(node)]
        if vals:
            alts = [self._parts(v, depth + 1) for v in vals]
            if all(a == alts[0] for a in alts):
                return alts[0]
            return alts[0] if len(vals) == 1 else [_unknown(node)]
        return [Part(PartKind.VAR, name)]

    def _member_parts(self, node: Any, depth: int) -> list[Part]:
        q = self.qname(node) or text(node)
        if q.startswith("process.env."):
            var = q[len("process.env.") :]
            return (
                [Part(PartKind.HOME)]
                if var in ("HOME", "USERPROFILE")
                else [Part(PartKind.VAR, var)]
            )
        if q == "process.pid":
            return [Part(PartKind.UNIQUE)]
        if q == "import.meta.dirname":
            return [Part(PartKind.SCRIPT_DIR)]
        if q in ("import.meta.url", "import.meta.filename"):
            return [Part(PartKind.SCRIPT)]
        found = self._member_value(node, depth)
        if found is not None:
            return self._parts(found, depth + 1)
        if node.child_by_field_name("object") is not None:
            obj = unwrap(node.child_by_field_name("object"))
            if obj.type == "subscript_expression" or q.startswith("process.argv"):
                return [Part(PartKind.ARG)]
        return [_unknown(node)]

    def _member_value(self, node: Any, depth: int) -> Any:
        """The value of ``this.X`` (its one assignment in the file) or of ``obj.X`` where
        ``obj`` holds an object literal (``{...defaults, ...options}``: the last literal
        entry for X, spreads read right to left; a spread of an unknown value is skipped,
        as the defaults are judged)."""
        obj, prop = unwrap(node.child_by_field_name("object")), node.child_by_field_name("property")
        if obj is None or prop is None or prop.type != "property_identifier":
            return None
        name = text(prop)
        if obj.type == "this":
            vals = self.members.get(name, [])
            return vals[0] if len(vals) == 1 else None
        if obj.type != "identifier":
            return None
        vals = self.values(obj)
        return self._entry(vals[0], name, depth) if len(vals) == 1 else None

    def _entry(self, value: Any, name: str, depth: int) -> Any:
        value = unwrap(value)
        if value is None or depth > MAX_DEPTH:
            return None
        if value.type == "identifier":
            vals = self.values(value)
            return self._entry(vals[0], name, depth + 1) if len(vals) == 1 else None
        if value.type != "object":
            return None
        for c in reversed(value.named_children):
            if c.type == "pair":
                k = c.child_by_field_name("key")
                if k is not None and (string_value(k) or text(k)) == name:
                    return unwrap(c.child_by_field_name("value"))
            elif c.type == "shorthand_property_identifier" and text(c) == name:
                return c
            elif c.type == "spread_element" and c.named_children:
                found = self._entry(c.named_children[0], name, depth + 1)
                if found is not None:
                    return found
        return None

    def _call_parts(self, node: Any, depth: int) -> list[Part]:
        q = self.callee(node)
        a = args(node)
        if q in ("path.join", "path.resolve", "path.posix.join", "path.win32.join"):
            out: list[Part] = []
            for i, x in enumerate(a):
                p = self._parts(x, depth + 1)
                if (
                    q == "path.resolve"
                    and p
                    and p[0].kind is PartKind.LIT
                    and p[0].value.startswith("/")
                ):
                    out = []
                if out and i:
                    if p and p[0].kind is PartKind.LIT and p[0].value.startswith("/"):
                        p = [Part(PartKind.LIT, p[0].value.lstrip("/"))] + p[1:]
                    if not (out[-1].kind is PartKind.LIT and out[-1].value.endswith("/")):
                        out.append(Part(PartKind.LIT, "/"))
                out += p
            if q == "path.resolve" and out and out[0].kind is PartKind.LIT:
                if not out[0].value.startswith("/"):
                    out = [Part(PartKind.CWD), Part(PartKind.LIT, "/")] + out
            return out or [Part(PartKind.CWD)]
        if q == "path.dirname" and a:
            inner = self._parts(a[0], depth + 1)
            if inner == [Part(PartKind.SCRIPT)]:
                return [Part(PartKind.SCRIPT_DIR)]
            d = PathExpr(tuple(_merge(inner))).dirname()
            return list(d.parts) if d is not None else [_unknown(node)]
        if q in ("url.fileURLToPath", "fileURLToPath") and a:
            return self._parts(a[0], depth + 1)
        if q == "os.tmpdir":
            return [Part(PartKind.TMPDIR)]
        if q == "os.homedir":
            return [Part(PartKind.HOME)]
        if q == "process.cwd":
            return [Part(PartKind.CWD)]
        if q in ("os.userInfo", "os.userInfo.username"):
            return [Part(PartKind.USER)]
        if q in ("String", "Number", "String.prototype.toString") and a:
            return self._parts(a[0], depth + 1)
        if q.endswith(".toString") or q.endswith(".trim"):
            fn = node.child_by_field_name("function")
            return self._parts(fn.child_by_field_name("object"), depth + 1)
        if q.startswith(("crypto.", "Math.random")) or q in ("randomUUID", "uuid.v4", "v4"):
            return [Part(PartKind.UNIQUE)]
        if q == "URL" and len(a) == 2:  # new URL("x.lock", import.meta.url)
            rel = string_value(a[0])
            base = self._parts(a[1], depth + 1)
            if rel is not None and base == [Part(PartKind.SCRIPT)]:
                return [Part(PartKind.SCRIPT_DIR), Part(PartKind.LIT, "/" + rel.removeprefix("./"))]
        return [_unknown(node)]

    # -- stored PIDs ---------------------------------------------------------------------------
    def read_file(self, node: Any, depth: int = 0) -> PathExpr | None:
        """The file a value was read from (``fs.readFileSync(F)`` inside ``Number(...)``,
        ``parseInt``, ``.trim()``, through variables and function arguments), or None."""
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return None
        if node.type == "identifier":
            p = self.callback_read(node)
            if p is not None:
                return p
            for v in self.values(node):
                p = self.read_file(v, depth + 1)
                if p is not None:
                    return p
            return None
        for c in syntax.descendants(node, "call_expression"):
            q = self.callee(c)
            if q in ("fs.readFileSync", "fs.readFile"):
                return self.path(arg(c, 0))
            p = self._helper_read(c, depth)
            if p is not None:
                return p
        for c in syntax.descendants(node, "identifier"):
            if c != node and text(c) not in GLOBALS:
                p = self.read_file(c, depth + 1)
                if p is not None:
                    return p
        return None

    def _helper_read(self, call: Any, depth: int) -> PathExpr | None:
        """The file a local function returns a value of (``parseLockPid(lockPath)`` whose
        body parses ``fs.readFileSync(lockPath)``); a parameter named there is this call's
        argument."""
        helper = self.local_function(call)
        if helper is None or depth > MAX_DEPTH or syntax.within(call, helper):
            return None
        body = helper.child_by_field_name("body")
        if (body is None or body.type == "statement_block") and not any(
            syntax.function_of(r) == helper and r.named_children
            for r in syntax.descendants(helper, "return_statement")
        ):
            return None  # it returns no value
        for c in syntax.descendants(helper, "call_expression"):
            if self.callee(c) not in ("fs.readFileSync", "fs.readFile"):
                continue
            target = unwrap(arg(c, 0))
            if target is not None and target.type == "identifier":
                i = self.param_index(helper, text(target))
                if i >= 0 and arg(call, i) is not None:
                    return self.path(arg(call, i))
            return self.path(target)
        return None

    def callback_read(self, ident: Any) -> PathExpr | None:
        """The file whose contents a callback parameter holds: the second parameter of
        ``fs.readFile(F, [opts], (err, data) => ...)``, the first of
        ``fs.promises.readFile(F).then((data) => ...)``."""
        name = text(ident)
        func = syntax.function_of(ident)
        while func is not None:
            i = self.param_index(func, name)
            if i >= 0:
                break
            func = syntax.function_of(func)
        if func is None or func.parent is None or func.parent.type != "arguments":
            return None
        call = func.parent.parent
        if call is None or call.type != "call_expression":
            return None
        if self.callee(call) == "fs.readFile" and i == 1:
            return self.path(arg(call, 0))
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type == "member_expression" and i == 0:
            prop, obj = fn.child_by_field_name("property"), unwrap(fn.child_by_field_name("object"))
            if prop is not None and text(prop) == "then" and obj is not None:
                if obj.type == "call_expression" and self.callee(obj) == "fs.readFile":
                    return self.path(arg(obj, 0))
        return None


def _unknown(node: Any) -> Part:
    """An expression that cannot be resolved: its source text, shown as ``${expr}`` in
    messages (a member or call is not the name text it is spelled with)."""
    return Part(PartKind.UNKNOWN, "${" + text(node)[:60] + "}")


def _merge(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for p in parts:
        if out and p.kind is PartKind.LIT and out[-1].kind is PartKind.LIT:
            out[-1] = Part(PartKind.LIT, out[-1].value + p.value)
        else:
            out.append(p)
    return out or [Part(PartKind.UNKNOWN)]
