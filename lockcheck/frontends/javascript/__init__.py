"""The JavaScript/TypeScript frontend (Node.js job scripts): tree-sitter-javascript, and
tree-sitter-typescript for ``.ts .mts .cts``, through the shared tree layer.

Stages, one module each: :mod:`.syntax` (the tree, comments, node helpers) ->
:mod:`.values` (imports, bindings, path expressions) -> :mod:`.busy` (busy branches and
their exit status) -> :mod:`.locks` (acquires) -> :mod:`.cleanup` (removals, hooks, stored
PIDs, release coverage) -> :mod:`.children` (background children, probes).  Knows no
rule codes."""

from __future__ import annotations

from ...model import FileFacts
from .busy import Busy
from .children import Children
from .cleanup import Cleanup
from .locks import Locks
from .syntax import Tree
from .values import Names


def parse(path: str, text: str) -> FileFacts:
    facts = FileFacts(path=path, language="javascript", text=text)
    tree = Tree(path, text)
    facts.parse_errors = tree.parse_errors()
    facts.comments = tree.comments()
    names = Names(tree)
    busy = Busy(tree, names)
    locks = Locks(tree, names, busy, facts)
    locks.run()
    Cleanup(tree, names, busy, facts, locks.nodes).run()
    Children(tree, names, facts, locks.nodes).run()
    return facts
