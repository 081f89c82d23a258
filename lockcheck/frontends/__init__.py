"""Frontends: one per language, each turning source text into :class:`FileFacts`.

A frontend module exposes ``parse(path: str, text: str) -> FileFacts``.  Frontends are
imported lazily so that a run pays only for the grammars of the languages it reads.
"""

from __future__ import annotations

import importlib

from .. import lazyre
from ..model import FileFacts

SHELL_EXTENSIONS = (".sh", ".bash", ".ksh", ".dash", ".bats")
PYTHON_EXTENSIONS = (".py", ".pyw")
JAVASCRIPT_EXTENSIONS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")  # .tsx: not a job script
POWERSHELL_EXTENSIONS = (".ps1", ".psm1")
# TypeScript declaration files hold types only: never a job script
DECLARATION_EXTENSIONS = (".d.ts", ".d.mts", ".d.cts")
# every extension that decides the language without reading the file's head
KNOWN_EXTENSIONS = (
    SHELL_EXTENSIONS + PYTHON_EXTENSIONS + JAVASCRIPT_EXTENSIONS + POWERSHELL_EXTENSIONS
)
_SHEBANG = lazyre.compile(rb"^#!\s*(\S+)(?:\s+(?:-\S+\s+)*(\S+))?")
SHELLS = {"sh", "bash", "dash", "ksh", "mksh", "ash", "busybox"}
JAVASCRIPT_RUNNERS = {"node", "nodejs", "deno", "bun", "ts-node", "tsx"}
POWERSHELLS = {"pwsh", "powershell", "pwsh-preview"}
# programs that set up the environment and then run the interpreter named after them, like env:
# s6-overlay's `#!/usr/bin/with-contenv bash` (`/command/with-contenv` in s6-overlay v3)
CHAIN_LOADERS = {"env", "with-contenv"}


def _shebang_language(head: bytes) -> str | None:
    """'shell', 'python', 'javascript', 'powershell', 'other' (an interpreter we do not read: zsh, fish, perl, tclsh...)
    or None when there is no shebang."""
    m = _SHEBANG.match(head)
    if not m:
        return None
    prog = m.group(1).rsplit(b"/", 1)[-1].decode("latin-1")
    if prog in CHAIN_LOADERS:
        words = head.split(b"\n", 1)[0][2:].split()[1:]
        words = [w for w in words if not w.startswith(b"-") and b"=" not in w]
        if not words:
            return "other"
        prog = words[0].rsplit(b"/", 1)[-1].decode("latin-1")
    if prog.startswith("python") or prog.startswith("pypy"):
        return "python"
    if prog in SHELLS:
        return "shell"
    if prog in JAVASCRIPT_RUNNERS:
        return "javascript"
    if prog.removesuffix(".exe") in POWERSHELLS:
        return "powershell"
    return "other"


def language_of(path: str, head: bytes) -> str | None:
    """'shell', 'python', 'javascript', 'powershell' or None.  A shebang naming an interpreter decides (a zsh script
    named ``x.sh`` is not sh); without one, the extension does."""
    by_shebang = _shebang_language(head)
    if by_shebang == "other":
        return None
    if by_shebang is not None:
        return by_shebang
    lower = path.lower()
    if lower.endswith(DECLARATION_EXTENSIONS):
        return None
    if lower.endswith(SHELL_EXTENSIONS):
        return "shell"
    if lower.endswith(PYTHON_EXTENSIONS):
        return "python"
    if lower.endswith(JAVASCRIPT_EXTENSIONS):
        return "javascript"
    if lower.endswith(POWERSHELL_EXTENSIONS):
        return "powershell"
    return None


def parse(language: str, path: str, text: str) -> FileFacts:
    module = importlib.import_module(f"{__name__}.{language}")
    return module.parse(path, text)
