"""The PowerShell frontend (tree-sitter-powershell) on the shared tree layer.

Stages, one module each: :mod:`.syntax` (the tree, comments, commands and parameters) ->
:mod:`.values` (variables, ``param()`` defaults, path expressions) -> :mod:`.locks`
(acquires and busy branches) -> :mod:`.cleanup` (removals, ``finally``/``trap``, stored
PIDs, release coverage) -> :mod:`.children` (unwaited processes, probes).  Knows no rule
codes."""

from __future__ import annotations

from ...model import FileFacts
from .children import Children
from .cleanup import Cleanup
from .locks import Locks
from .syntax import Tree
from .values import Values


def parse(path: str, text: str) -> FileFacts:
    facts = FileFacts(path=path, language="powershell", text=text)
    tree = Tree(text)
    facts.parse_errors = tree.parse_errors()
    facts.comments = tree.comments()
    values = Values(tree)
    locks = Locks(tree, values, facts)
    locks.run()
    Cleanup(tree, values, locks, facts).run()
    Children(tree, values, facts, locks.nodes).run()
    return facts
