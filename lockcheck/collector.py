"""The cyclic garbage collector paused around work that builds big object graphs.

A Python file's analysis builds trees of up to millions of objects (CPython's AST, the
lowered tree) that stay alive until the file is done, and its suggestions parse the file
again for each rewrite they check; the collector would traverse those objects over and over
(a tenth of a scan of the Python installation, half of the suggestions of a large file).
Once the file is done they are garbage together, and the first collection after it frees
them while they are still young, so peak memory goes down rather than up."""

from __future__ import annotations

import gc


class paused:  # lower case: it reads as a function, ``with paused():``
    """``with paused():`` runs its block with the collector off, then gives it back as it
    was (an embedding program that turned it off keeps it off)."""

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was:
            gc.enable()
