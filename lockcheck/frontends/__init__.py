"""Frontends: one per language, each turning source text into :class:`FileFacts`.

A frontend module exposes ``parse(path: str, text: str) -> FileFacts``.  Frontends are
imported lazily so that a shell-only run never pays for libcst.
"""

from __future__ import annotations

import importlib
import re

from ..model import FileFacts

SHELL_EXTENSIONS = (".sh", ".bash", ".ksh", ".dash", ".bats")
PYTHON_EXTENSIONS = (".py", ".pyw")
_SHEBANG = re.compile(rb"^#!\s*(\S+)(?:\s+(?:-\S+\s+)*(\S+))?")
SHELLS = {"sh", "bash", "dash", "ksh", "mksh", "ash", "busybox"}


def language_of(path: str, head: bytes) -> str | None:
    """'shell', 'python' or None, from the extension first, then the shebang."""
    lower = path.lower()
    if lower.endswith(SHELL_EXTENSIONS):
        return "shell"
    if lower.endswith(PYTHON_EXTENSIONS):
        return "python"
    m = _SHEBANG.match(head)
    if not m:
        return None
    prog = m.group(1).rsplit(b"/", 1)[-1].decode("latin-1")
    if prog == "env" and m.group(2):
        prog = m.group(2).rsplit(b"/", 1)[-1].decode("latin-1")
    prog = re.sub(r"[0-9.]+$", "", prog) if prog.startswith("python") else prog
    if prog in SHELLS:
        return "shell"
    if prog in ("python", "pypy", "pypy3"):
        return "python"
    return None


def parse(language: str, path: str, text: str) -> FileFacts:
    module = importlib.import_module(f"{__name__}.{language}")
    return module.parse(path, text)
