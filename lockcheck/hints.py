"""Names for annotations only, without importing :mod:`typing` (~3 ms of a one-file run).

Every module of the package has ``from __future__ import annotations``: its annotations are
strings that nothing evaluates, so at run time ``Any`` only has to exist; a type checker
sees :data:`typing.Any`."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value at run time
if TYPE_CHECKING:
    from typing import Any
else:
    Any = object

__all__ = ["TYPE_CHECKING", "Any"]
