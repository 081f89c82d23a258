"""Classes declared like dataclasses, without :mod:`dataclasses`.

``import dataclasses`` costs a one-file run ~8 ms (it imports :mod:`inspect`, which imports
``ast``, ``dis``, ``tokenize``...) and ``@dataclass`` compiles five or six methods per class,
one ``exec`` each.  :func:`record` writes the same methods: ``__init__`` (defaults,
:func:`field` factories, a ``__post_init__`` when the class has one), ``__repr__`` and
``__eq__`` over the fields; for a frozen class ``__hash__`` and a refusing
``__setattr__``/``__delattr__``.  Only ``__init__`` is compiled (for many classes at once with
:func:`build`: it is the hot one); the others are shared and read the fields through an
``operator.attrgetter``.  :func:`replace` is ``dataclasses.replace`` for them.
"""

from __future__ import annotations

from operator import attrgetter


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record (as ``dataclasses``')."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make) -> None:
        self.make = make


def field(*, default_factory):
    """A field whose default is ``default_factory()``, made for each instance."""
    return _Factory(default_factory)


def record(cls=None, *, frozen: bool = False):
    """``@dataclass`` / ``@dataclass(frozen=True)``: the class gets its methods now."""

    def make(c: type) -> type:
        build([(c, frozen)])
        return c

    return make if cls is None else make(cls)


def replace(obj, **changes):
    """A copy of a record (or a dataclass) with ``changes``, through its ``__init__``."""
    fields = getattr(obj.__class__, "_record_fields", None)
    if fields is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)
    values = {f: getattr(obj, f) for f in fields}
    values.update(changes)
    return obj.__class__(**values)


_MISSING = object()


def _eq(self, other):
    if other.__class__ is self.__class__:
        return self._record_key(self) == other._record_key(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(self._record_key(self))


def _repr(self) -> str:
    shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._record_fields)
    return f"{self.__class__.__qualname__}({shown})"


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def build(classes: list[tuple[type, bool]]) -> None:
    """The methods of each ``(class, frozen)``; every ``__init__`` compiled in one ``exec``."""
    src: list[str] = []
    env: dict = {"_MISSING": _MISSING, "_object_setattr": object.__setattr__}
    for k, (cls, frozen) in enumerate(classes):
        fields = [f for b in reversed(cls.__mro__) for f in b.__dict__.get("__annotations__", {})]
        fields = list(dict.fromkeys(fields))
        cls._record_fields = tuple(fields)
        get = attrgetter(*fields)
        cls._record_key = staticmethod(get if len(fields) > 1 else lambda o, get=get: (get(o),))
        cls.__repr__ = _repr
        cls.__eq__ = _eq
        cls.__hash__ = _hash if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        params, body = [], []
        for f in fields:
            default = cls.__dict__.get(f, _MISSING)
            if isinstance(default, _Factory):
                env[f"_f{k}_{f}"] = default.make
                params.append(f"{f}=_MISSING")
                value = f"_f{k}_{f}() if {f} is _MISSING else {f}"
                delattr(cls, f)
            elif default is not _MISSING:
                env[f"_d{k}_{f}"] = default
                params.append(f"{f}=_d{k}_{f}")
                value = f
            else:
                params.append(f)
                value = f
            if frozen:
                body.append(f" _object_setattr(self, {f!r}, {value})")
            else:
                body.append(f" self.{f} = {value}")
        if hasattr(cls, "__post_init__"):
            body.append(" self.__post_init__()")
        if not body:
            body.append(" pass")
        env[f"_C{k}"] = cls
        src += [f"def __init__(self, {', '.join(params)}):", *body, f"_C{k}.__init__ = __init__"]
    exec(compile("\n".join(src), __name__ + ":records", "exec"), env)  # noqa: S102
