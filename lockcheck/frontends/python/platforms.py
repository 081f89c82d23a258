"""Platform branches: the platforms a statement runs on when an ``if`` tests the platform
(``os.name == "nt"``, ``sys.platform.startswith("win")``, ``platform.system() == "Windows"``,
or a module flag such as ``OS_WIN`` set from one).  A Windows branch and a POSIX branch never
run in the same process, so a removal in one says nothing about a flock in the other."""

from __future__ import annotations

from ...hints import Any

WINDOWS = frozenset({"windows"})
POSIX = frozenset({"posix"})
ANY = WINDOWS | POSIX

_PLATFORM_VALUES = ("os.name", "sys.platform", "platform.system", "platform.platform")


def _platform_word(word: Any) -> frozenset[str] | None:
    """What a platform name compared with ``os.name``/``sys.platform``/``platform.system()``
    means."""
    if not isinstance(word, str) or not word:
        return None
    w = word.lower()
    if w in ("nt", "windows", "cygwin", "msys") or w.startswith("win"):
        return WINDOWS
    if w in ("posix", "java") or w.startswith(("linux", "darwin", "freebsd", "openbsd", "sun")):
        return POSIX
    return None


class Platforms:
    """Mixin of the Analyzer: the platforms a node runs on (None: any)."""

    def platforms_of(self, node: Any) -> frozenset[str] | None:
        cst = self.cst
        out = ANY
        child = node
        for a in self.ancestors(node):
            if isinstance(a, cst.If) and child is not a.test:
                p = self.platform_test(a.test)
                if p is not None:
                    out &= p if child is a.body else ANY - p
            child = a
        return None if out == ANY else out

    def platform_test(self, test: Any, depth: int = 0) -> frozenset[str] | None:
        """The platforms on which ``test`` is true, when it tests only the platform."""
        cst = self.cst
        if test is None or depth > 3:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            p = self.platform_test(test.expression, depth + 1)
            return None if p is None else ANY - p
        if isinstance(test, cst.BooleanOperation):
            left = self.platform_test(test.left, depth + 1)
            right = self.platform_test(test.right, depth + 1)
            if left is None or right is None:
                return None
            return left | right if isinstance(test.operator, cst.Or) else left & right
        if isinstance(test, cst.Call) and self.method(test) == "startswith":
            recv = test.func.value
            if self._platform_value(recv) and test.args:
                return _platform_word(self.const(test.args[0].value))
            return None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op = test.comparisons[0].operator
            right = test.comparisons[0].comparator
            if isinstance(op, (cst.Equal, cst.NotEqual)):
                for val, word in ((test.left, right), (right, test.left)):
                    if self._platform_value(val):
                        p = _platform_word(self.const(word))
                        if p is not None:
                            return p if isinstance(op, cst.Equal) else ANY - p
            if isinstance(op, (cst.In, cst.NotIn)):
                if self._platform_value(right):
                    p = _platform_word(self.const(test.left))  # `"win32" in sys.platform`
                elif self._platform_value(test.left):
                    p = self._platform_words(right)  # `sys.platform in ("win32", "cygwin")`
                else:
                    p = None
                if p is not None:
                    return p if isinstance(op, cst.In) else ANY - p
            return None
        if isinstance(test, cst.Name):
            return self._platform_flag(test, depth)
        return None

    def _platform_words(self, node: Any) -> frozenset[str] | None:
        """A tuple or list of platform names, all of one kind."""
        cst = self.cst
        if not isinstance(node, (cst.Tuple, cst.List)) or not node.elements:
            return None
        kinds = {_platform_word(self.const(el.value)) for el in node.elements}
        return kinds.pop() if len(kinds) == 1 else None

    def _platform_value(self, node: Any) -> bool:
        """``os.name``, ``sys.platform``, ``platform.system()``, ``sys.platform.lower()``."""
        cst = self.cst
        if isinstance(node, cst.Call):
            if self.method(node) in ("lower", "upper", "casefold", "strip"):
                return self._platform_value(node.func.value)
            return self.call_q(node) in _PLATFORM_VALUES
        if isinstance(node, cst.Attribute):
            return self.qname(node) in _PLATFORM_VALUES
        return False

    def _platform_flag(self, name: Any, depth: int) -> frozenset[str] | None:
        """A module name bound only to constants and platform tests (``OS_WIN = False`` then
        ``if "win32" in sys.platform: OS_WIN = True``, or ``IS_WIN = os.name == "nt"``): the
        platforms on which it is true."""
        cst = self.cst
        binds = self.assigns.get((0, name.value), [])
        if not binds:
            return None
        when_true: frozenset[str] | None = None
        for _s, _e, value in binds:
            v = self.const(value)
            if v is True or v is False:
                if self.func_of(value) is not None:
                    return None
                guard = next((a for a in self.ancestors(value) if isinstance(a, cst.If)), None)
                if guard is None:
                    continue  # the default
                p = self.platform_test(guard.test, depth + 1)
                if p is None:
                    return None
                if not any(x is guard.body for x in self.ancestors(value)):
                    p = ANY - p
                mine = p if v is True else ANY - p
            else:
                mine = self.platform_test(value, depth + 1)
                if mine is None:
                    return None
            if when_true is not None and when_true != mine:
                return None
            when_true = mine
        return when_true
