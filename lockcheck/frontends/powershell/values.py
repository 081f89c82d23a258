"""Stage 2: what variables hold and what paths expressions name: assignments and ``param()``
defaults (innermost function first, then the script), ``$PSScriptRoot``,
``$MyInvocation.MyCommand.Path``, ``Join-Path``, ``Split-Path``, ``[IO.Path]::Combine``,
expandable strings, ``$env:`` variables (``USERPROFILE`` is home; ``OneDrive*`` are sync
roots; ``TEMP`` stays a variable: private unless the task runs as SYSTEM)."""

from __future__ import annotations

import re

from ...hints import Any
from ...model import Part, PartKind, PathExpr
from . import syntax
from .syntax import Command, Tree, invocation_parts, text, unwrap, var_name

MAX_DEPTH = 8
_EXPAND = re.compile(r"\$\{(?P<b>[^}]+)\}|\$(?P<v>(?:env:)?[A-Za-z_][\w]*)(?P<m>(?:\.\w+)*)|\$\(")
_CLASS = re.compile(r"^[ \t]*class[ \t]", re.I | re.M)
HOME_VARS = {"home", "env:userprofile", "env:home"}
SCRIPT_VARS = {"pscommandpath", "myinvocation.mycommand.path", "myinvocation.mycommand.definition"}


class Values:
    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.bindings: dict[str, list[tuple[Any, Any]]] = {}  # name -> [(value, scope)]
        self.hashes: dict[str, Any] = {}  # name -> hash_literal_expression
        self.functions: dict[str, Any] = {}
        self.params: dict[int, list[str]] = {}  # function start -> its parameters, in order
        self._passed: dict[tuple[int, str], list[Any]] = {}
        for n in tree.nodes:
            if n.type == "assignment_expression":
                left = n.child_by_field_name("left") or n.named_children[0]
                name = var_name(left)
                value = n.child_by_field_name("value") or n.named_children[-1]
                if name:
                    self.bindings.setdefault(name, []).append((value, syntax.scope_of(n)))
                    u = unwrap(value)
                    if u is not None and u.type == "hash_literal_expression":
                        self.hashes[name] = u
            elif n.type == "script_parameter":
                vs = [c for c in n.named_children if c.type == "variable"]
                func = syntax.scope_of(n)
                if vs and func is not None:
                    self.params.setdefault(func.start_byte, []).append(var_name(vs[0]) or "")
                dflt = [c for c in n.named_children if c.type == "script_parameter_default"]
                if vs and dflt and dflt[0].named_children:
                    value = dflt[0].named_children[-1]
                    self.bindings.setdefault(var_name(vs[0]) or "", []).append(
                        (value, syntax.scope_of(n))
                    )
            elif n.type == "function_statement":
                name = syntax.function_name(n)
                if name:
                    self.functions[name] = n
            elif n.type == "class_method_parameter":
                vs = [c for c in n.named_children if c.type == "variable"]
                func = syntax.scope_of(n)
                if vs and func is not None:
                    self.params.setdefault(func.start_byte, []).append(var_name(vs[0]) or "")
        self.members: dict[tuple[int, str], list[Any]] = {}  # (class, property) -> values
        has_class = _CLASS.search(tree.text) is not None and any(
            n.type == "class_statement" for n in tree.nodes
        )
        for n in tree.nodes if has_class else ():
            if n.type not in ("assignment_expression", "class_property_definition"):
                continue
            cls = _class_of(n)
            if cls is None:
                continue
            if n.type == "assignment_expression":
                left = text(n.named_children[0]).strip().lower()
                if left.startswith("$this.") and "." not in left[6:]:
                    value = n.child_by_field_name("value") or n.named_children[-1]
                    self.members.setdefault((cls.start_byte, left[6:]), []).append(value)
            elif n.type == "class_property_definition":
                vs = [c for c in n.named_children if c.type == "variable"]
                if vs and n.named_children[-1] is not vs[0]:
                    key = (cls.start_byte, var_name(vs[0]) or "")
                    self.members.setdefault(key, []).append(n.named_children[-1])

    # -- variables -------------------------------------------------------------------------------
    def values(self, name: str, at: Any) -> list[Any]:
        """A variable's values in the innermost scope that binds it; a function's parameter
        holds the arguments of the function's call sites in this file (else its default)."""
        scope = syntax.scope_of(at)
        while True:
            if scope is not None and name in self.params.get(scope.start_byte, []):
                passed = self.param_values(scope, name)
                if passed:
                    return passed
            vals = [v for v, s in self.bindings.get(name, []) if s == scope]
            if vals or scope is None:
                return vals
            scope = syntax.scope_of(scope)

    def param_values(self, func: Any, name: str) -> list[Any]:
        """The values the call sites outside ``func`` pass for its parameter ``name``
        (``Wait-OnMutex -MutexId 'X'``, an unambiguous prefix ``-Mutex``, or by position)."""
        key = (func.start_byte, name)
        if key in self._passed:
            return self._passed[key]
        fname = syntax.function_name(func)
        params = self.params.get(func.start_byte, [])
        out: list[Any] = self._passed.setdefault(key, [])
        if func.type == "class_method_definition":
            self._method_arguments(func, name, params, out)
            return out
        for cmd in self.tree.commands:
            if (syntax.command_name(cmd) or "").lower() != fname or syntax.within(cmd, func):
                continue
            c = Command(cmd)
            keys = [k for k in c.params if name.startswith(k)]
            v = (
                c.params[name]
                if name in c.params
                else c.params[keys[0]]
                if len(keys) == 1
                else None
            )
            if v is None:
                named = [p for p in params if p in c.params]
                free = [p for p in params if p not in named]
                i = free.index(name)
                v = c.positional[i] if i < len(c.positional) else None
            if v is not None and v is not True and not isinstance(v, str):
                out.append(v)
        return out

    def _method_arguments(self, method: Any, name: str, params: list[str], out: list[Any]) -> None:
        """A class method's parameter: the positional arguments of ``[Class]::new(...)`` (a
        constructor) or ``.Method(...)`` calls in this file."""
        cls = _class_of(method)
        mname = syntax.function_name(method)
        cname = syntax.function_name(cls) if cls is not None else None
        if mname is None or name not in params:
            return
        i = params.index(name)
        ctor = mname == cname
        for inv in self.tree.invocations:
            target, member, args = invocation_parts(inv)
            if syntax.within(inv, method):
                continue
            if (ctor and member == "new" and target == cname) or (not ctor and member == mname):
                if i < len(args):
                    out.append(args[i])

    def command(self, cmd: Any) -> Command:
        """The command with its splatted literal hashtables read as parameters."""
        c = Command(cmd)
        for name in c.splats:
            h = self.hashes.get(name)
            if h is None:
                continue
            for entry in syntax.descendants(h, "hash_entry"):
                key = [k for k in entry.named_children if k.type == "key_expression"]
                vals = [v for v in entry.named_children if v.type != "key_expression"]
                if key and vals:
                    k = text(key[0]).strip("'\"").lower()
                    v = unwrap(vals[-1])
                    c.params.setdefault(k, True if text(v).lower() == "$true" else v)
        return c

    def literal(self, node: Any, at: Any = None, depth: int = 0) -> str | None:
        """A string value, through variables."""
        s = syntax.string_value(node)
        if s is not None or depth > MAX_DEPTH:
            return s
        name = var_name(node)
        if name:
            vals = self.values(name, at if at is not None else node)
            if len(vals) == 1:
                return self.literal(vals[0], vals[0], depth + 1)
        return None

    # -- paths -----------------------------------------------------------------------------------
    def path(self, node: Any) -> PathExpr | None:
        if node is None or node is True:
            return None
        if isinstance(node, str):
            return PathExpr.literal(node.replace("\\", "/"))
        parts = _merge(self._parts(node, 0))
        return PathExpr(tuple(parts), text(node))

    def _parts(self, node: Any, depth: int) -> list[Part]:
        node = unwrap(node)
        if node is None or depth > MAX_DEPTH:
            return [Part(PartKind.UNKNOWN)]
        t = node.type
        if t == "string_literal":
            inner = node.named_children
            if inner:
                return self._parts(inner[0], depth)
        if t == "verbatim_string_characters":
            return [_lit(text(node)[1:-1].replace("''", "'"))]
        if t == "expandable_string_literal":
            return self._expand(node, depth)
        if t in ("generic_token", "command_argument"):
            if "$" in text(node):  # a bare word expands its variables: LOCK.$PID
                return self._expand_raw(text(node), node, depth)
            return [_lit(text(node))]
        if t == "variable":
            return self._var(var_name(node) or "", node, depth)
        if t == "member_access":
            name = text(node).lstrip("$").lower()
            root = node
            while root is not None and root.type == "member_access":
                root = root.named_children[0] if root.named_children else None
            if name.startswith("this.") and "." not in name[5:]:
                return self._member(name[5:], node, depth)
            if name.startswith("this.") or root is None or root.type != "variable":
                # a member of an expression's value (`(Resolve-Path $p).Path`): not followed
                return [Part(PartKind.UNKNOWN, text(node)[:60])]
            return self._var(name, node, depth)
        if t == "command":
            return self._command_parts(node, depth)
        if t == "invokation_expression":
            target, member, args = invocation_parts(node)
            if target in ("io.path", "io.path") and member == "combine":
                out: list[Part] = []
                for i, a in enumerate(args):
                    if i:
                        out.append(Part(PartKind.LIT, "/"))
                    out += self._parts(a, depth + 1)
                return out
            if target == "io.path" and member == "gettemppath":
                return [Part(PartKind.VAR, "TEMP"), Part(PartKind.LIT, "/")]
        if t == "additive_expression":
            kids = node.named_children
            op = operator(node)
            if len(kids) == 2 and op == "??":
                return self._coalesce(kids[0], kids[1], depth)
            if len(kids) == 2 and op == "+":
                return self._parts(kids[0], depth + 1) + self._parts(kids[1], depth + 1)
        return [Part(PartKind.UNKNOWN, text(node)[:60])]

    def _member(self, prop: str, node: Any, depth: int) -> list[Part]:
        """``$this.Path`` in a class: what the class assigns to it (a constructor's
        ``$this.Path = $path``, through the ``[Class]::new(...)`` arguments) or its declared
        default; unknown unless every one of them names the same path."""
        cls = _class_of(node)
        vals = self.members.get((cls.start_byte, prop), []) if cls is not None else []
        alts = [self._parts(v, depth + 1) for v in vals]
        if alts and all(a == alts[0] for a in alts):
            return alts[0]
        return [Part(PartKind.UNKNOWN, text(node)[:60])]

    def _coalesce(self, left: Any, right: Any, depth: int) -> list[Part]:
        """``$env:X ?? 'd'`` is X with the default d (like ``${X:-d}``); a variable the file
        assigns is its value; one it never assigns is ``$null``: the default."""
        dflt = self._parts(right, depth + 1)
        name = var_name(left)
        if name is not None and name.startswith("env:"):
            (p,) = self._var(name, left, depth + 1)
            if p.kind is PartKind.VAR:
                return [Part(PartKind.VAR, p.value, default=PathExpr(tuple(_merge(dflt))))]
            return [p]
        if name is not None and not self.values(name, left):
            return dflt
        return [Part(PartKind.UNKNOWN, text(left)[:60])]

    def _var(self, name: str, at: Any, depth: int) -> list[Part]:
        if name == "psscriptroot":
            return [Part(PartKind.SCRIPT_DIR)]
        if name in SCRIPT_VARS:
            return [Part(PartKind.SCRIPT)]
        if name in HOME_VARS:
            return [Part(PartKind.HOME)]
        if name == "pid":
            return [Part(PartKind.UNIQUE)]
        if name in ("pwd", "pwd.path"):
            return [Part(PartKind.CWD)]
        if name in ("env:username", "env:user"):
            return [Part(PartKind.USER)]
        if name.startswith("env:"):
            env = name[4:]
            spelled = {"temp": "TEMP", "tmp": "TMP", "onedrive": "OneDrive"}
            return [Part(PartKind.VAR, spelled.get(env, env.upper()))]
        vals = self.values(name, at)
        if vals:
            alts = [self._parts(v, depth + 1) for v in vals]
            if all(a == alts[0] for a in alts):
                return alts[0]
            return [Part(PartKind.UNKNOWN, "$" + name)]
        return [Part(PartKind.VAR, name)]

    def _expand(self, node: Any, depth: int) -> list[Part]:
        return self._expand_raw(text(node)[1:-1], node, depth)

    def _expand_raw(self, raw: str, node: Any, depth: int) -> list[Part]:
        out: list[Part] = []
        pos = 0
        for m in _EXPAND.finditer(raw):
            if m.start() > pos:
                out.append(_lit(raw[pos : m.start()]))
            if m.group(0) == "$(":
                out.append(Part(PartKind.UNKNOWN, "$(...)"))
                pos = len(raw)
                break
            name = (m.group("b") or m.group("v") or "").lower()
            if m.group("m") and m.group("v") and name == "myinvocation":
                name += m.group("m").lower()
                out += self._var(name, node, depth + 1)
            else:
                out += self._var(name, node, depth + 1)
                if m.group("m"):
                    out.append(_lit(m.group("m")))
            pos = m.end()
        if pos < len(raw):
            out.append(_lit(raw[pos:]))
        return out or [Part(PartKind.LIT, "")]

    def _command_parts(self, node: Any, depth: int) -> list[Part]:
        c = self.command(node)
        if c.name == "join-path":
            base = c.get("path", position=0)
            child = c.get("childpath", position=1)
            if base is None or child is None:
                return [Part(PartKind.UNKNOWN, text(node)[:60])]
            return (
                self._parts(base, depth + 1)
                + [Part(PartKind.LIT, "/")]
                + self._parts(child, depth + 1)
            )
        if c.name == "split-path" and not c.has("leaf"):
            inner = self._parts(c.get("path", position=0), depth + 1)
            if inner == [Part(PartKind.SCRIPT)]:
                return [Part(PartKind.SCRIPT_DIR)]
            d = PathExpr(tuple(_merge(inner))).dirname()
            if d is not None:
                return list(d.parts)
        if c.name in ("new-item", "ni"):  # $lock = New-Item P: the item at P
            return self._parts(c.get("path", "literalpath", position=0), depth + 1)
        if c.name in ("get-location", "pwd"):
            return [Part(PartKind.CWD)]
        return [Part(PartKind.UNKNOWN, text(node)[:60])]

    # -- stored PIDs -------------------------------------------------------------------------------
    def read_file(self, node: Any, depth: int = 0) -> PathExpr | None:
        """The file a value was read from: ``(Get-Content F)``, ``[IO.File]::ReadAllText(F)``,
        through variables."""
        if node is None or node is True or isinstance(node, str) or depth > MAX_DEPTH:
            return None
        for n in syntax.descendants(node, "command", "invokation_expression", "variable"):
            if n.type == "command":
                c = self.command(n)
                if c.name in ("get-content", "gc", "cat", "type"):
                    return self.path(c.get("path", "literalpath", position=0))
            elif n.type == "invokation_expression":
                target, member, args = invocation_parts(n)
                if target == "io.file" and member.startswith("readall") and args:
                    return self.path(args[0])
            else:
                name = var_name(n)
                for v in self.values(name or "", n):
                    p = self.read_file(v, depth + 1)
                    if p is not None:
                        return p
        return None


def _class_of(node: Any) -> Any:
    for a in syntax.ancestors(node):
        if a.type == "class_statement":
            return a
    return None


def operator(node: Any) -> str:
    """The operator between a binary expression's two operands, as the file writes it
    (``??`` and the ternary are parsed as ``+``: :mod:`.premask`)."""
    kids = node.named_children
    if len(kids) < 2:
        return ""
    raw = syntax.raw(node)
    a, b = kids[0].end_byte - node.start_byte, kids[1].start_byte - node.start_byte
    return raw[a:b].decode("utf-8", "replace").strip()


def _lit(s: str) -> Part:
    return Part(PartKind.LIT, s.replace("\\", "/"))


def _merge(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for p in parts:
        if out and p.kind is PartKind.LIT and out[-1].kind is PartKind.LIT:
            out[-1] = Part(PartKind.LIT, out[-1].value + p.value)
        else:
            out.append(p)
    return out or [Part(PartKind.UNKNOWN)]
