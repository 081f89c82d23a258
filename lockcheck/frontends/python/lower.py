"""tree-sitter-python's tree -> the analysis tree of :mod:`.nodes`, without recursion.

One pass over the tree-sitter nodes (pre-order, collected with an explicit stack), then the
analysis nodes are built bottom-up from it, so a 10,000-deep ``lambda:`` chain or a
20,000-branch ``elif`` costs time in proportion to its size and no stack.  The same pass
notes the comments, the first ERROR/MISSING node, the deepest bracket and block nesting
(CPython's own limits), and the first Python 2 statement (:mod:`.py2`).
"""

from __future__ import annotations

from ...hints import Any
from ..treesitter import Offsets
from . import nodes as N
from .py2 import PY2_TYPES, py2_evidence

SIMPLE = {
    "expression_statement",
    "return_statement",
    "raise_statement",
    "pass_statement",
    "break_statement",
    "continue_statement",
    "import_statement",
    "import_from_statement",
    "future_import_statement",
    "global_statement",
    "nonlocal_statement",
    "delete_statement",
    "assert_statement",
    "print_statement",
    "exec_statement",
    "type_alias_statement",
}
OPEN = {"(", "[", "{"}
CLOSE = {")", "]", "}"}


class Lowered:
    """The analysis tree of a file and what the pass noticed on the way."""

    def __init__(self) -> None:
        self.module: Any = None
        self.comments: dict[int, str] = {}
        self.error: Any = None  # the first ERROR or MISSING tree-sitter node
        self.max_brackets = 0
        self.max_blocks = 0
        self.py2: tuple[Any, str] | None = None  # (tree-sitter node, what) of the first


def lower(root: Any, src: bytes, offsets: Offsets, build: bool = True) -> Lowered:
    """The analysis tree of ``root`` and the notes of the pass; with ``build`` False only the
    notes (comments, first error, Python 2 evidence, nesting): what a file that is not
    analysed needs for its LCK000, at a fraction of the cost."""
    out = Lowered()
    ch = offsets.char
    # pre-order list of (node, parent index, field name, type, named), with a cursor (a
    # node's field name is cheap there; asking a node for its children's field names is
    # not), the type and whether it is named kept for the build
    order: list[tuple[Any, int, str | None, str, bool]] = []
    cur = root.walk()
    parents: list[int] = []  # indexes of the nodes the cursor is inside
    blocks_at: list[int] = []
    brackets = blocks = 0
    skipped: set[int] = set()
    while True:
        n = cur.node
        t = n.type
        idx = len(order)
        named = n.is_named
        order.append((n, parents[-1] if parents else -1, cur.field_name, t, named))
        if named:
            if (n.is_error or n.is_missing) and out.error is None:
                out.error = n
            if t in PY2_TYPES and out.py2 is None:
                what = py2_evidence(n, t)
                if what is not None:
                    out.py2 = (n, what)
            if t == "comment":
                text = src[n.start_byte : n.end_byte].decode("utf-8", "surrogateescape")
                out.comments.setdefault(n.start_point[0] + 1, text)
        else:
            if t in OPEN:
                brackets += 1
                if brackets > out.max_brackets:
                    out.max_brackets = brackets
            elif t in CLOSE:
                brackets -= 1
            elif t == "<>" and out.py2 is None:
                out.py2 = (n, "the `<>` operator")
            if n.is_missing and out.error is None:
                out.error = n
        if t in _TABLES and n.child_count > 2 * DATA_SIZE and _literal_table(n):
            skipped.add(idx)  # a table of literals (generated data): not entered
        elif n.child_count and t not in ("string_content", "comment") and cur.goto_first_child():
            parents.append(idx)
            blocks_at.append(blocks)
            if t == "block":
                blocks += 1
                if blocks > out.max_blocks:
                    out.max_blocks = blocks
            continue
        while not cur.goto_next_sibling():
            if not parents or not cur.goto_parent():
                break
            parents.pop()
            blocks = blocks_at.pop()
        else:
            continue
        break
    if not build:
        return out
    kidlists: list[list | None] = [None] * len(order)
    b = _Builder(src, ch, out, offsets.text if offsets.ascii else None)
    build = b.build
    r = None
    for idx in range(len(order) - 1, -1, -1):
        n, p, f, t, named = order[idx]
        kl = kidlists[idx]
        if kl is None:
            kl = []
        else:
            kl.reverse()
        if idx in skipped:
            r = N.Other(*b.se(n), kids_=[])
        elif named:
            r = build(n, kl, t)
        else:
            r = None  # punctuation and keywords: their type is all a builder reads
        if p >= 0:
            pl = kidlists[p]
            if pl is None:
                pl = kidlists[p] = []
            pl.append((f, t, r, n))
    out.module = r  # the root's, built last
    _set_parents(out.module)
    return out


def _set_parents(root: Any) -> None:
    stack = [root]
    while stack:
        n = stack.pop()
        for k in n.kids():
            k.parent = n
            stack.append(k)


def _named(kids: list) -> list:
    return [k[2] for k in kids if k[2] is not None]


def _field(kids: list, name: str) -> Any:
    for k in kids:
        if k[0] == name:
            return k[2]
    return None


def _fields(kids: list, name: str) -> list:
    return [k[2] for k in kids if k[0] == name and k[2] is not None]


class _Builder:
    def __init__(self, src: bytes, ch: Any, out: Lowered, text: str | None = None) -> None:
        """``text``: the decoded source when it is ASCII (byte offsets are then character
        offsets, and a node's text is a slice of it)."""
        self.src = src
        self.ch = ch
        self.out = out
        self._methods: dict[str, Any] = {}  # node type -> its b_ method (None: none)
        if text is not None:
            self.se = self._se_ascii
            self.text = lambda n: text[n.start_byte : n.end_byte]

    def text(self, n: Any) -> str:
        return self.src[n.start_byte : n.end_byte].decode("utf-8", "surrogateescape")

    def se(self, n: Any) -> tuple[int, int]:
        return self.ch(n.start_byte), self.ch(n.end_byte)

    @staticmethod
    def _se_ascii(n: Any) -> tuple[int, int]:
        return n.start_byte, n.end_byte

    def build(self, n: Any, kids: list, t: str | None = None) -> Any:
        """The analysis node of the tree-sitter node ``n`` (of type ``t``) from the results
        of its children (None: nothing the analysis reads)."""
        if t is None:
            if not n.is_named:
                return None
            t = n.type
        try:
            m = self._methods[t]
        except KeyError:
            m = self._methods[t] = getattr(self, "b_" + t, None)
        if m is not None:
            return m(n, kids)
        if t == "comment":
            return None  # noted by the first pass
        if t in _PUNCT:
            return None
        s, e = self.se(n)
        return N.Other(s, e, kids_=_named(kids))

    # ---------------------------------------------------------------- statements
    def _stmts(self, kids: list) -> list:
        """Statements of a module or block: consecutive simple statements joined by ``;``
        make one line."""
        body: list = []
        line = None
        joined = False
        for _f, t, r, _n in kids:
            if t == ";":
                joined = True
                continue
            if r is None:
                continue
            if t in SIMPLE or isinstance(r, N.BaseSmallStatement):
                if joined and line is not None:
                    line.body.append(r)
                    line.e = r.e
                else:
                    line = N.SimpleStatementLine(r.s, r.e, body=[r])
                    body.append(line)
            else:
                body.append(r)
                line = None
            joined = False
        return body

    def b_module(self, n: Any, kids: list) -> Any:
        return N.Module(0, self.ch(n.end_byte), body=self._stmts(kids))

    def b_block(self, n: Any, kids: list) -> Any:
        colon = n.prev_sibling
        while colon is not None and colon.type == "comment":
            colon = colon.prev_sibling
        s = self.ch(colon.end_byte) if colon is not None else self.ch(n.start_byte)
        e = self.ch(n.end_byte)
        first = next((k[3] for k in kids if k[2] is not None), None)
        if colon is not None and first is not None and first.start_point[0] == colon.end_point[0]:
            small = [r for r in _named(kids) if isinstance(r, N.BaseSmallStatement)]
            if small and len(small) == len(_named(kids)):
                # `except OSError: sys.exit(0)`: the suite holds one statement line, as an
                # indented block would, so every branch reads the same whatever its layout
                line = N.SimpleStatementLine(small[0].s, small[-1].e, body=small)
                return N.SimpleStatementSuite(s, e, body=[line])
        return N.IndentedBlock(s, e, body=self._stmts(kids))

    def b_expression_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        vals = _named(kids)
        if len(vals) == 1 and isinstance(vals[0], (N.Assign, N.AnnAssign, N.AugAssign)):
            v = vals[0]
            v.s, v.e = s, e
            return v
        if len(vals) == 1:
            return N.Expr(s, e, value=vals[0])
        return N.Expr(
            s, e, value=N.Tuple(s, e, elements=[N.Element(x.s, x.e, value=x) for x in vals])
        )

    def b_assignment(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        left = _field(kids, "left")
        right = _field(kids, "right")
        ann = _field(kids, "type")
        if ann is not None:
            return N.AnnAssign(s, e, target=left, annotation=ann, value=right)
        tgt = N.AssignTarget(left.s, left.e, target=left) if left is not None else None
        if isinstance(right, N.Assign):
            return N.Assign(s, e, targets=[tgt, *right.targets], value=right.value)
        return N.Assign(s, e, targets=[tgt] if tgt is not None else [], value=right)

    def b_augmented_assignment(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.AugAssign(s, e, target=_field(kids, "left"), value=_field(kids, "right"))

    def b_return_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        v = _named(kids)
        return N.Return(s, e, value=v[0] if v else None)

    def b_raise_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        v = _named(kids)
        exc = v[0] if v else None
        if isinstance(exc, N.Tuple) and exc.elements and kids[1][1] == "expression_list":
            exc = exc.elements[0].value  # Python 2: raise E, "why"
        return N.Raise(s, e, exc=exc)

    def b_pass_statement(self, n: Any, kids: list) -> Any:
        return N.Pass(*self.se(n))

    def b_break_statement(self, n: Any, kids: list) -> Any:
        return N.Break(*self.se(n))

    def b_continue_statement(self, n: Any, kids: list) -> Any:
        return N.Continue(*self.se(n))

    def _dotted(self, n: Any) -> Any:
        """A dotted_name node -> Name / Attribute chain."""
        parts = [c for c in n.named_children if c.type == "identifier"]
        if not parts:
            s, e = self.se(n)
            return N.Name(s, e, value=self.text(n))
        cur = None
        for p in parts:
            s, e = self.se(p)
            name = N.Name(s, e, value=self.text(p))
            cur = name if cur is None else N.Attribute(cur.s, e, value=cur, attr=name)
        return cur

    def _alias(self, k: tuple) -> Any:
        _f, t, r, n = k
        if t == "aliased_import":
            name = self._dotted(n.child_by_field_name("name"))
            al = n.child_by_field_name("alias")
            asname = None
            if al is not None:
                s, e = self.se(al)
                asname = N.AsName(s, e, name=N.Name(s, e, value=self.text(al)))
            s, e = self.se(n)
            return N.ImportAlias(s, e, name=name, asname=asname)
        if t == "dotted_name":
            name = self._dotted(n)
            return N.ImportAlias(name.s, name.e, name=name, asname=None)
        return None

    def b_dotted_name(self, n: Any, kids: list) -> Any:
        return self._dotted(n)

    def b_import_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        names = [a for a in (self._alias(k) for k in kids if k[0] == "name") if a is not None]
        return N.Import(s, e, names=names)

    def b_import_from_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        mod = None
        relative: list = []
        mn = n.child_by_field_name("module_name")
        if mn is not None and mn.type == "relative_import":
            relative = ["."]
            dn = next((c for c in mn.named_children if c.type == "dotted_name"), None)
            mod = self._dotted(dn) if dn is not None else None
        elif mn is not None:
            mod = self._dotted(mn)
        if any(k[1] == "wildcard_import" for k in kids):
            names: Any = N.ImportStar(s, e)
        else:
            names = [a for a in (self._alias(k) for k in kids if k[0] == "name") if a is not None]
        return N.ImportFrom(s, e, module=mod, names=names, relative=relative)

    def b_future_import_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        names = [a for a in (self._alias(k) for k in kids if k[0] == "name") if a is not None]
        return N.ImportFrom(s, e, module=N.Name(s, s, value="__future__"), names=names, relative=[])

    def _stmt_call(self, n: Any, kids: list, fname: str) -> Any:
        """``print x, y`` / ``exec code``: the Python 3 call they mean."""
        s, e = self.se(n)
        kw = n.children[0]
        ks, ke = self.se(kw)
        args = []
        for _f, t, r, _k in kids:
            if r is None:
                continue
            if t == "chevron":
                v = _named_of(r)
                kwn = N.Name(r.s, r.s, value="file")
                args.append(N.Arg(r.s, r.e, keyword=kwn, value=v, star=""))
            else:
                args.append(N.Arg(r.s, r.e, keyword=None, value=r, star=""))
        call = N.Call(s, e, func=N.Name(ks, ke, value=fname), args=args)
        return N.Expr(s, e, value=call)

    def b_print_statement(self, n: Any, kids: list) -> Any:
        return self._stmt_call(n, kids, "print")

    def b_exec_statement(self, n: Any, kids: list) -> Any:
        return self._stmt_call(n, kids, "exec")

    def _small_other(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.OtherSmall(s, e, kids_=_named(kids))

    b_global_statement = b_nonlocal_statement = b_delete_statement = _small_other
    b_assert_statement = b_type_alias_statement = _small_other

    # ---------------------------------------------------------------- compound statements
    def b_if_statement(self, n: Any, kids: list) -> Any:
        s, _e = self.se(n)
        body = _field(kids, "consequence")
        top = N.If(s, body.e if body is not None else s, test=_field(kids, "condition"), body=body)
        cur = top
        for alt in _fields(kids, "alternative"):
            cur.orelse = alt
            cur = alt
            if not isinstance(alt, N.If):
                break
        return top

    def b_elif_clause(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.If(s, e, test=_field(kids, "condition"), body=_field(kids, "consequence"))

    def b_else_clause(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Else(s, e, body=_field(kids, "body") or _last_block(kids))

    def b_finally_clause(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Finally(s, e, body=_last_block(kids))

    def b_for_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.For(
            s,
            e,
            target=_field(kids, "left"),
            iter=_field(kids, "right"),
            body=_field(kids, "body"),
            orelse=_field(kids, "alternative"),
        )

    def b_while_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.While(
            s,
            e,
            test=_field(kids, "condition"),
            body=_field(kids, "body"),
            orelse=_field(kids, "alternative"),
        )

    def b_try_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        handlers = [k[2] for k in kids if k[1] in ("except_clause", "except_group_clause")]
        orelse = next((k[2] for k in kids if k[1] == "else_clause"), None)
        fin = next((k[2] for k in kids if k[1] == "finally_clause"), None)
        return N.Try(
            s, e, body=_field(kids, "body"), handlers=handlers, orelse=orelse, finalbody=fin
        )

    def b_except_clause(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        vals = [k for k in kids if k[2] is not None and k[1] != "block"]
        typ = name = None
        if vals and vals[0][1] == "as_pattern":
            ap = vals[0][2]
            typ = ap.kids_[0] if ap.kids_ else None
            if len(ap.kids_) > 1:
                name = ap.kids_[-1]
        elif vals:
            typ = vals[0][2]
            if len(vals) > 1:  # Python 2: except E, e:
                name = vals[1][2]
        asname = N.AsName(name.s, name.e, name=name) if name is not None else None
        return N.ExceptHandler(s, e, type=typ, name=asname, body=_last_block(kids))

    b_except_group_clause = b_except_clause

    def b_as_pattern_target(self, n: Any, kids: list) -> Any:
        v = _named(kids)
        return v[0] if len(v) == 1 else N.Other(*self.se(n), kids_=v)

    def b_with_statement(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        items: list = []
        for k in kids:
            if k[1] == "with_clause":
                items.extend(k[2].kids_)
        return N.With(s, e, items=items, body=_field(kids, "body"))

    def b_with_item(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        v = _field(kids, "value")
        vn = n.child_by_field_name("value")
        if vn is not None and vn.type == "as_pattern" and isinstance(v, N.Other) and v.kids_:
            tgt = v.kids_[-1] if len(v.kids_) > 1 else None
            asname = N.AsName(tgt.s, tgt.e, name=tgt) if tgt is not None else None
            return N.WithItem(s, e, item=v.kids_[0], asname=asname)
        return N.WithItem(s, e, item=v, asname=None)

    def _params(self, n: Any, kids: list) -> Any:
        s, e = self.se(n) if n is not None else (0, 0)
        pos: list = []
        kwonly: list = []
        posonly: list = []
        star = kwstar = None
        for _f, t, r, k in kids:
            if t == "positional_separator":
                posonly, pos = pos, []
                continue
            if t == "keyword_separator":
                star = star or "*"
                continue
            p = self._param(t, k, r)
            if p is None:
                continue
            if t in ("list_splat_pattern",) or (t == "typed_parameter" and _splat(k) == "*"):
                star = p
            elif t == "dictionary_splat_pattern" or (t == "typed_parameter" and _splat(k) == "**"):
                kwstar = p
            elif star is not None:
                kwonly.append(p)
            else:
                pos.append(p)
        return N.Parameters(
            s,
            e,
            posonly_params=posonly,
            params=pos,
            star_arg=star if isinstance(star, N.Node) else None,
            kwonly_params=kwonly,
            star_kwarg=kwstar,
        )

    def _param(self, t: str, k: Any, r: Any) -> Any:
        if t == "identifier":
            return N.Param(r.s, r.e, name=r, default=None)
        if t in ("default_parameter", "typed_default_parameter"):
            nm = k.child_by_field_name("name")
            if nm is None or nm.type != "identifier":
                return None
            s, e = self.se(nm)
            name = N.Name(s, e, value=self.text(nm))
            dv = r.kids_[-1] if isinstance(r, N.Other) and r.kids_ else None
            return N.Param(r.s, r.e, name=name, default=dv)
        if t in ("typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
            ident = next((c for c in _walk_named(k) if c.type == "identifier"), None)
            if ident is None:
                return None
            s, e = self.se(ident)
            return N.Param(r.s, r.e, name=N.Name(s, e, value=self.text(ident)), default=None)
        return None

    def b_parameters(self, n: Any, kids: list) -> Any:
        return self._params(n, kids)

    b_lambda_parameters = b_parameters

    def b_decorator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        v = _named(kids)
        return N.Decorator(s, e, decorator=v[0] if v else None)

    def b_decorated_definition(self, n: Any, kids: list) -> Any:
        d = _field(kids, "definition")
        if d is None:
            return N.OtherCompound(*self.se(n), kids_=_named(kids))
        d.decorators = [k[2] for k in kids if k[1] == "decorator"]
        return d

    def b_function_definition(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        params = _field(kids, "parameters")
        if params is None:
            params = self._params(None, [])
        return N.FunctionDef(
            s, e, decorators=[], name=_field(kids, "name"), params=params, body=_field(kids, "body")
        )

    def b_class_definition(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        sup = _field(kids, "superclasses")
        bases = sup.kids_ if isinstance(sup, N.Other) else []
        return N.ClassDef(
            s, e, decorators=[], name=_field(kids, "name"), bases=bases, body=_field(kids, "body")
        )

    def _compound_other(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.OtherCompound(s, e, kids_=_named(kids))

    b_match_statement = _compound_other

    # ---------------------------------------------------------------- expressions
    def b_identifier(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Name(s, e, value=self.text(n))

    def _const_name(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Name(s, e, value=self.text(n))

    b_true = b_false = b_none = _const_name

    def b_integer(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        v = self.text(n)
        if v[-1:] in "lL":
            v = v[:-1]  # Python 2 long
        if len(v) > 1 and v[0] == "0" and v[1:].isdigit() and v.strip("0"):
            v = "0o" + v[1:]  # Python 2 octal
        return N.Integer(s, e, value=v)

    def b_float(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Float(s, e, value=self.text(n))

    def b_attribute(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Attribute(s, e, value=_field(kids, "object"), attr=_field(kids, "attribute"))

    def b_call(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        a = _field(kids, "arguments")
        args: list
        if isinstance(a, N.GeneratorExp):
            args = [N.Arg(a.s, a.e, keyword=None, value=a, star="")]
        elif isinstance(a, _ArgList):
            args = a.args
        else:
            args = []
        return N.Call(s, e, func=_field(kids, "function"), args=args)

    def b_argument_list(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        args = []
        for _f, t, r, _k in kids:
            if r is None:
                continue
            if t == "keyword_argument":
                args.append(r)
            elif t == "list_splat":
                args.append(N.Arg(r.s, r.e, keyword=None, value=_named_of(r), star="*"))
            elif t == "dictionary_splat":
                args.append(N.Arg(r.s, r.e, keyword=None, value=_named_of(r), star="**"))
            else:
                args.append(N.Arg(r.s, r.e, keyword=None, value=r, star=""))
        al = _ArgList(s, e, kids_=args)
        al.args = args
        return al

    def b_keyword_argument(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.Arg(s, e, keyword=_field(kids, "name"), value=_field(kids, "value"), star="")

    def b_parenthesized_expression(self, n: Any, kids: list) -> Any:
        v = _named(kids)
        if len(v) == 1:
            return v[0]
        return N.Other(*self.se(n), kids_=v)

    def b_string(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        start = n.children[0] if n.child_count else None
        opener = self.text(start) if start is not None and start.type == "string_start" else '"'
        if opener == "`":
            return N.Other(s, e, kids_=_named(kids))  # Python 2 backticks: repr()
        prefix = opener.rstrip("'\"")
        quote = opener[len(prefix) :]
        if "f" in prefix.lower():
            parts: list = []
            pos = start.end_byte if start is not None else n.start_byte
            end_tok = n.children[-1] if n.child_count else None
            stop = end_tok.start_byte if end_tok is not None else n.end_byte
            for _f, t, r, k in kids:
                if t != "interpolation" or r is None:
                    continue
                if k.start_byte > pos:
                    parts.append(self._text_part(pos, k.start_byte))
                parts.append(r)
                pos = k.end_byte
            if stop > pos:
                parts.append(self._text_part(pos, stop))
            return N.FormattedString(s, e, parts=parts, start=opener, end=quote)
        return N.SimpleString(s, e, value=self.text(n), prefix=prefix, quote=quote)

    def _text_part(self, a: int, b: int) -> Any:
        v = self.src[a:b].decode("utf-8", "surrogateescape")
        return N.FormattedStringText(self.ch(a), self.ch(b), value=v)

    def b_interpolation(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        expr = _field(kids, "expression")
        conv = next((self.text(k[3]) for k in kids if k[1] == "type_conversion"), None)
        spec = next((k[2] for k in kids if k[1] == "format_specifier"), None)
        return N.FormattedStringExpression(
            s, e, expression=expr, conversion=conv, format_spec=spec if spec is not None else None
        )

    def b_concatenated_string(self, n: Any, kids: list) -> Any:
        parts = _named(kids)
        if not parts:
            return N.Other(*self.se(n), kids_=[])
        cur = parts[-1]
        for p in reversed(parts[:-1]):
            cur = N.ConcatenatedString(p.s, cur.e, left=p, right=cur)
        return cur

    def b_unary_operator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        op = n.child_by_field_name("operator")
        cls = N.UNARY.get(op.type if op is not None else "", N.Minus)
        os_, oe = self.se(op) if op is not None else (s, s)
        return N.UnaryOperation(s, e, operator=cls(os_, oe), expression=_field(kids, "argument"))

    def b_not_operator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.UnaryOperation(s, e, operator=N.Not(s, s + 3), expression=_field(kids, "argument"))

    def b_binary_operator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        op = n.child_by_field_name("operator")
        cls = N.BINARY.get(op.type if op is not None else "", N.Add)
        os_, oe = self.se(op) if op is not None else (s, s)
        return N.BinaryOperation(
            s, e, left=_field(kids, "left"), operator=cls(os_, oe), right=_field(kids, "right")
        )

    def b_boolean_operator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        op = n.child_by_field_name("operator")
        cls = N.Or if op is not None and op.type == "or" else N.And
        os_, oe = self.se(op) if op is not None else (s, s)
        return N.BooleanOperation(
            s, e, left=_field(kids, "left"), operator=cls(os_, oe), right=_field(kids, "right")
        )

    def b_comparison_operator(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        left = None
        comps = []
        op = None
        for f, _t, r, k in kids:
            if f == "operators":
                os_, oe = self.se(k)
                op = N.COMPARE.get(" ".join(self.text(k).split()), N.Equal)(os_, oe)
            elif r is not None:
                if left is None:
                    left = r
                elif op is not None:
                    comps.append(N.ComparisonTarget(op.s, r.e, operator=op, comparator=r))
                    op = None
        return N.Comparison(s, e, left=left, comparisons=comps)

    def _seq(self, cls: Any) -> Any:
        def build(n: Any, kids: list) -> Any:
            s, e = self.se(n)
            return cls(s, e, elements=[N.Element(x.s, x.e, value=x) for x in _named(kids)])

        return build

    def b_tuple(self, n: Any, kids: list) -> Any:
        return self._seq(N.Tuple)(n, kids)

    b_expression_list = b_pattern_list = b_tuple_pattern = b_tuple

    def b_list(self, n: Any, kids: list) -> Any:
        if len(kids) > DATA_SIZE and _all_data(kids):
            return N.Other(*self.se(n), kids_=[])  # a table of literals: data, no lock fact
        return self._seq(N.List)(n, kids)

    def _container(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        if len(kids) > DATA_SIZE and _all_data(kids):
            return N.Other(s, e, kids_=[])
        return N.Other(s, e, kids_=_named(kids))

    b_dictionary = b_set = _container

    b_list_pattern = b_list

    def _comp(self, cls: Any, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        elt = _field(kids, "body")
        fors = [k[2] for k in kids if k[1] == "for_in_clause"]
        rest = [k[2] for k in kids if k[1] == "if_clause" and k[2] is not None]
        for i in range(len(fors) - 1):
            fors[i].inner_for_in = fors[i + 1]
        if fors and rest:
            fors[-1].rest = rest
        return cls(s, e, elt=elt, for_in=fors[0] if fors else None)

    def b_list_comprehension(self, n: Any, kids: list) -> Any:
        return self._comp(N.ListComp, n, kids)

    def b_set_comprehension(self, n: Any, kids: list) -> Any:
        return self._comp(N.SetComp, n, kids)

    def b_generator_expression(self, n: Any, kids: list) -> Any:
        return self._comp(N.GeneratorExp, n, kids)

    def b_dictionary_comprehension(self, n: Any, kids: list) -> Any:
        return self._comp(N.DictComp, n, kids)

    def b_for_in_clause(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        return N.CompFor(
            s,
            e,
            target=_field(kids, "left"),
            iter=_field(kids, "right"),
            rest=None,
            inner_for_in=None,
        )

    def b_subscript(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        sl = [
            N.SubscriptElement(x.s, x.e, slice=N.Index(x.s, x.e, value=x))
            for x in _fields(kids, "subscript")
        ]
        return N.Subscript(s, e, value=_field(kids, "value"), slice=sl)

    def b_lambda(self, n: Any, kids: list) -> Any:
        s, e = self.se(n)
        params = _field(kids, "parameters")
        if params is None:
            params = self._params(None, [])
        return N.Lambda(s, e, params=params, body=_field(kids, "body"))


class _ArgList(N.Other):
    args: list | None = None


DATA_SIZE = 128  # a literal list, dict or set with more children than this may be data
_DATA = (N.Integer, N.Float, N.SimpleString)
_DATA_TYPES = frozenset(
    {",", ":", "[", "]", "{", "}", "(", ")", "comment", "true", "false", "none"}
)


def _all_data(kids: list) -> bool:
    """Only literals (and pairs and tables of them): no name, call or expression."""
    for _f, t, r, _n in kids:
        if t in _DATA_TYPES or isinstance(r, _DATA):
            continue
        if t in ("pair", "list", "dictionary", "set", "tuple") and isinstance(r, N.Other):
            if not r.kids_ or all(isinstance(x, _DATA) for x in r.kids_):
                continue
        if isinstance(r, (N.List, N.Tuple)) and all(isinstance(x.value, _DATA) for x in r.elements):
            continue
        return False
    return True


_TABLES = frozenset({"list", "dictionary", "set"})
_LEAVES = frozenset(
    {",", ":", "[", "]", "{", "}", "(", ")", "integer", "float", "true", "false", "none", "comment"}
)


def _literal_table(n: Any, depth: int = 0) -> bool:
    """Every child of ``n`` is a literal (a string without interpolation, a number, a pair
    or a small table of them): generated data, where no lock fact can be."""
    for c in n.children:
        t = c.type
        if t in _LEAVES:
            continue
        if t == "string" and c.child_count <= 3:
            continue
        if t in ("pair", "list", "tuple", "dictionary", "set") and depth < 2:
            if _literal_table(c, depth + 1):
                continue
        return False
    return True


_PUNCT = {"import_prefix", "positional_separator", "keyword_separator", "wildcard_import"}


def _named_of(r: Any) -> Any:
    """The single expression inside a wrapper node (splat, chevron)."""
    if isinstance(r, N.Other) and r.kids_:
        return r.kids_[0]
    return r


def _last_block(kids: list) -> Any:
    blocks = [k[2] for k in kids if k[1] == "block"]
    return blocks[-1] if blocks else None


def _splat(n: Any) -> str:
    c = n.named_children[0] if n.named_child_count else None
    if c is not None and c.type == "list_splat_pattern":
        return "*"
    if c is not None and c.type == "dictionary_splat_pattern":
        return "**"
    return ""


def _walk_named(n: Any):
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.named_children))
