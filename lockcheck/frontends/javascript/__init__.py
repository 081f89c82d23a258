"""The JavaScript/TypeScript frontend (Node.js job scripts): tree-sitter-javascript, and
tree-sitter-typescript for ``.ts .mts .cts``, through the shared tree layer.

Stages, one module each: :mod:`.gate` (the text tests: a generated file is not read, a file
that cannot hold a lock fact is parsed only for LCK000) -> :mod:`.syntax` (the tree,
comments, node helpers) -> :mod:`.values` (imports, bindings, path expressions) ->
:mod:`.busy` (busy branches and their exit status) -> :mod:`.locks` (acquires) ->
:mod:`.cleanup` (removals, hooks, stored PIDs, release coverage) -> :mod:`.children`
(background children, probes).  Knows no rule codes."""

from __future__ import annotations

from ...model import FileFacts
from .busy import Busy
from .children import Children
from .cleanup import Cleanup
from .gate import generated, may_hold_lock
from .locks import Locks
from .syntax import Tree
from .values import Names


def parse(path: str, text: str) -> FileFacts:
    facts = FileFacts(path=path, language="javascript", text=text)
    if generated(path, text):
        return facts  # minified or bundled: generated code, not a job script
    analyse = may_hold_lock(text)
    tree = Tree(path, text)
    facts.parse_errors = tree.parse_errors()
    if not analyse and not facts.parse_errors:
        return facts  # nothing here can take, test, break or remove a lock
    facts.comments = tree.comments()
    if not analyse:
        return facts  # only its LCK000 (and the comments that may suppress it)
    names = Names(tree)
    busy = Busy(tree, names)
    locks = Locks(tree, names, busy, facts)
    locks.run()
    Cleanup(tree, names, busy, facts, locks.nodes).run()
    Children(tree, names, facts, locks.nodes).run()
    return facts
