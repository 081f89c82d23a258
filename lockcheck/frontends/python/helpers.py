"""Small helper functions of the same file, seen through their call sites: a test, a create or
a removal of a lock path written once in a function with a simple body (``def exists(self):
return os.path.exists(self.path)``, ``def write_pid(path): open(path, "w")...``) counts at
the call that runs it, with the call's arguments in place of the parameters."""

from __future__ import annotations

from ...hints import Any
from ...model import PathExpr
from .calls import REMOVE_CALLS

MAX_HELPER_STMTS = 8  # statements in a helper's body (nested blocks included)


class Helpers:
    """Methods of :class:`.locks.Analyzer`."""

    def local_callee(self, call: Any) -> Any:
        """The function of this file that ``call`` runs: ``f(...)`` for a module function,
        ``self.f(...)``/``cls.f(...)`` for a method of the enclosing class, ``C.f(...)`` for
        a class ``C`` of this file; None when unknown or ambiguous."""
        cst = self.cst
        f = call.func
        if isinstance(f, cst.Name):
            if f.value in self.imports:
                return None
            cands = [fn for fn in self.funcs.get(f.value, ()) if self.class_of(fn) is None]
        elif isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name):
            recv = f.value.value
            cls = self.class_of(call) if recv in ("self", "cls") else self.classes.get(recv)
            if cls is None:
                cls = self._instance_class(f.value)
            if cls is None:
                return None
            cands = [fn for fn in self.funcs.get(f.attr.value, ()) if self.class_of(fn) is cls]
        else:
            return None
        return cands[0] if len(cands) == 1 else None

    def _instance_class(self, name: Any) -> Any:
        """The class of this file a name is an instance of (``lock = PidLock()``)."""
        cst = self.cst
        v = self.lookup(name)
        if (
            isinstance(v, cst.Call)
            and isinstance(v.func, cst.Name)
            and v.func.value in self.classes
        ):
            if v.func.value not in self.imports:
                return self.classes[v.func.value]
        return None

    def simple_helper(self, call: Any) -> Any:
        """:meth:`local_callee` when its body is simple: a few statements, no nested
        function or class, and it is not the function the call is in (recursion)."""
        fn = self.local_callee(call)
        if fn is None or self.within(call, fn):
            return None
        cache = self.__dict__.setdefault("_simple_fns", {})
        if id(fn) not in cache:
            cache[id(fn)] = self._is_simple(fn)
        return fn if cache[id(fn)] else None

    def _is_simple(self, fn: Any) -> bool:
        cst = self.cst
        count = 0
        for st in self.descendants(fn.body):
            if isinstance(st, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(st, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                count += 1
                if count > MAX_HELPER_STMTS:
                    return False
        return True

    def helper_arg(self, call: Any, fn: Any, node: Any) -> Any:
        """``node`` as the call passes it: a parameter of ``fn`` becomes the call's argument
        (or the parameter's default); any other expression stays itself."""
        cst = self.cst
        if not isinstance(node, cst.Name):
            return node
        v = self.lookup(node)
        if not (isinstance(v, tuple) and v[0] == "param" and v[1] is fn):
            return node
        return self.param_arg(call, fn, v[2])

    def param_arg(self, call: Any, fn: Any, param: Any) -> Any:
        """What ``call`` passes for ``param`` of ``fn`` (or the parameter's default)."""
        params = list(fn.params.params)
        val = self.arg(call, None, param.name.value)
        if val is None and param in params:
            idx = params.index(param)
            if params and params[0].name.value in ("self", "cls") and not self._explicit_self(call):
                idx -= 1
            val = self.arg(call, idx) if idx >= 0 else None
        return val if val is not None else param.default

    def _explicit_self(self, call: Any) -> bool:
        """``C.method(obj, ...)``: the instance is passed as the first argument."""
        cst = self.cst
        f = call.func
        return (
            isinstance(f, cst.Attribute)
            and isinstance(f.value, cst.Name)
            and f.value.value in self.classes
        )

    def _returned(self, fn: Any) -> Any:
        """The expression of a body that is one ``return X`` (after a docstring)."""
        cst = self.cst
        body = [s for s in fn.body.body if not self._is_docstring(s)]
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
            return None
        small = body[0].body
        if len(small) == 1 and isinstance(small[0], cst.Return):
            return small[0].value
        return None

    def _is_docstring(self, st: Any) -> bool:
        cst = self.cst
        return (
            isinstance(st, cst.SimpleStatementLine)
            and len(st.body) == 1
            and isinstance(st.body[0], cst.Expr)
            and isinstance(st.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        )

    def returned_parts(self, call: Any, depth: int) -> list[Any] | None:
        """The path parts a simple helper returns (``def lock_path(name): return
        os.path.join(RUN_DIR, name + ".lock")``), its parameters read as this call passes
        them; None unless every ``return`` gives the same."""
        cst = self.cst
        fn = self.simple_helper(call)
        if fn is None or id(fn) in self._resolving:
            return None
        rets = [
            r.value
            for r in self.descendants(fn.body, cst.Return)
            if r.value is not None and self.func_of(r) is fn
        ]
        if not rets:
            return None
        bound = {}
        for p in self._params(fn):
            a = self.param_arg(call, fn, p)
            if a is not None:
                bound[id(p)] = a
        saved = self._bound_params
        self._bound_params = {**saved, **bound}
        self._resolving.add(id(fn))
        try:
            resolved = {tuple(self._parts(r, depth + 1)) for r in rets}
        finally:
            self._resolving.discard(id(fn))
            self._bound_params = saved
        return list(next(iter(resolved))) if len(resolved) == 1 else None

    def helper_test(self, call: Any) -> tuple[Any, Any] | None:
        """(fn, returned expression) for a call of a helper whose body is ``return X``."""
        fn = self.simple_helper(call)
        if fn is None:
            return None
        ret = self._returned(fn)
        return (fn, ret) if ret is not None else None

    def helper_creation(self, call: Any) -> tuple[str, Any, str] | None:
        """``creation`` for a call of a simple helper that creates a name, with the path as
        the call passes it."""
        fn = self.simple_helper(call)
        if fn is None:
            return None
        for c in self.descendants(fn.body, self.cst.Call):
            cr = self.creation(c)
            if cr is not None and cr[1] is not None:
                self.created_in_helper[id(call)] = c
                return (cr[0], self.helper_arg(call, fn, cr[1]), cr[2])
        return None

    @property
    def created_in_helper(self) -> dict[int, Any]:
        """helper call -> the creating call inside the helper (where a finding points)"""
        return self.__dict__.setdefault("_created_in_helper_d", {})

    def helper_removal(self, call: Any) -> PathExpr | None:
        """The path a simple helper removes (``def remove(self): os.remove(self.path)``), as
        the call passes it."""
        fn = self.simple_helper(call)
        if fn is None:
            return None
        for c in self.descendants(fn.body, self.cst.Call):
            tgt = self.removal_target(c)
            if tgt is None or tgt[1]:
                continue
            node = self.arg(c, 0, "path") if self.call_q(c) in REMOVE_CALLS else c.func.value
            return self.path(self.helper_arg(call, fn, node))
        return None
