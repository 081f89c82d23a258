"""A ``.gitlab-ci.yml`` read with the local files it includes, in the bounded worker that reads
it (:mod:`lockcheck.definitions.load`): their jobs are reported in them, ``extends:`` resolved
over all.  The pipeline's root is the file's git work tree, else its own directory (where
GitLab reads it); nothing outside it is read, nothing is fetched."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import SimpleNamespace

from . import Definition
from .embedded import shell_findings


def pipeline_root(path: str) -> str:
    from ..discover import _git_root

    d = os.path.dirname(os.path.abspath(path))
    return _git_root(d) or d


def read_pipeline(t, r, d: Definition, codes_of: Callable[[str], set[str]], load) -> list:
    """The files ``.gitlab-ci.yml`` (target ``t``, result ``r``, Definition ``d``) includes,
    each as (real path, target, text, bytes, decoding, Definition, embedded findings), read
    with ``load`` (:func:`lockcheck.definitions.load.load`); ``r`` gets the root's Definition
    as read with them."""
    from ..config import display_path
    from ..discover import Target
    from . import gitlab

    root = pipeline_root(t.path)
    files, seen, todo = [], {os.path.realpath(t.path)}, [d.text]
    while todo:
        for inc in gitlab.includes(todo.pop(), root):
            path = os.path.normpath(os.path.join(root, inc.lstrip("/")))
            real = os.path.realpath(path)
            if real in seen or os.path.commonpath([root, real]) != root:
                continue
            seen.add(real)
            if not os.path.isfile(path):
                continue  # GitLab fails the pipeline; not ours to report
            it = Target(path, display_path(path), None, False, t.settings, None, "gitlab")
            ir = SimpleNamespace(error=None, warning=None, text=None, data=None, source=None)
            if load(it, ir, "gitlab") is None:
                continue
            files.append((real, it, ir))
            todo.append(ir.text or "")
    if not files:
        return []
    parsed = gitlab.pipeline([(t.display, d.text)] + [(it.display, ir.text) for _, it, ir in files])
    r.definition = parsed[0]
    r.embedded = shell_findings(parsed[0], t.settings, codes_of(t.path))
    return [
        (
            real,
            it,
            ir.text,
            ir.data,
            ir.source,
            fd,
            shell_findings(fd, it.settings, codes_of(it.path)),
        )
        for (real, it, ir), fd in zip(files, parsed[1:], strict=True)
    ]
