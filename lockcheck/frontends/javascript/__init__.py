"""The JavaScript/TypeScript frontend (Node.js job scripts): tree-sitter-javascript, and
tree-sitter-typescript for ``.ts .mts .cts``, through the shared tree layer.

Stages, one module each: :mod:`.gate` (the text tests: a generated file is not read, a file
that cannot hold a lock fact is not parsed) -> :mod:`.syntax` (the tree,
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
    if not may_hold_lock(text):
        # nothing here can take, test, break or remove a lock: not even parsed, so a syntax
        # error in such a file is left to the JavaScript tooling (as for Python; the
        # grammars lag the language: import attributes, `accessor`, `import defer`)
        return facts
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
