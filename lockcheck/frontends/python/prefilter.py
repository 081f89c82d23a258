"""The text test that runs before any parse: can this file hold a lock fact at all?

Plain substring scans (C speed): a lock API, ``O_EXCL``, an exclusive mode string,
``os.remove``/``os.kill``, a file removal, a create call with a ``try``.  A file that fails
it is not parsed (on ordinary code about 95% of files), unless :func:`looks_like_python2`:
then it is parsed for LCK000 only.  The test over-approximates the analysis: a file it turns
away holds no lock fact (``tests/test_perf_prefilter.py``).
"""

from __future__ import annotations

import re

# the text test: plain substring tests first (C speed), a pattern only to confirm
_STRONG = (
    "flock",
    "FileLock",
    "InterProcessLock",
    "portalocker",
    "fasteners",
    "filelock",
    "fcntl",
    "O_EXCL",
    "pid_exists",
    "psutil",
    "django.core.files",
    "unlink",
    "rmdir",
    "rmtree",
    "removedirs",
)
_CREATE_TEXT = ("mkdir", "makedirs", "symlink", "hardlink_to", "touch(")
_MODE_TEXT = re.compile(r"""(['"])[rwabtU+]*x[rwabtU+]*\1""")  # an exclusive-create mode


def _os_call(text: str, word: str) -> bool:
    """``os.word``, a bare ``word(`` (``from os import word``), or any use of ``word`` in a
    file that imports os under another name."""
    i = text.find(word)
    if i < 0:
        return False
    while i >= 0:
        before = text[max(0, i - 3) : i]
        if before == "os.":
            return True
        prev = before[-1:]
        if not prev or not (prev.isalnum() or prev in "._"):
            rest = text[i + len(word) : i + len(word) + 3].lstrip(" pg")
            if rest.startswith("("):
                return True
        i = text.find(word, i + len(word))
    return "import os as" in text or "from os import" in text or "from posix import" in text


_LOCKF = re.compile(r"\blockf\b")  # not lockfile


def may_hold_lock(text: str) -> bool:
    """The text test: False means the file holds no lock fact."""
    if any(t in text for t in _STRONG):
        return True
    if "lockf" in text and _LOCKF.search(text):
        return True
    if "open" in text and ("x'" in text or 'x"' in text or "x+" in text or "xb" in text):
        if _MODE_TEXT.search(text):
            return True
    if _os_call(text, "remove") or _os_call(text, "kill"):
        return True
    return "try" in text and (any(t in text for t in _CREATE_TEXT) or _os_call(text, "link"))


_PY2_PRINT = re.compile(r"print [\"'a-zA-Z_>%]")
_PY2_EXCEPT = re.compile(r"except [^:\n()]*,\s*\w+\s*:")
_PY2_RAISE = re.compile(r"raise [\w.]+\s*,\s*\S")


def looks_like_python2(text: str) -> bool:
    """A print statement starting a line, ``except E, e:`` or ``raise E, "why"``: Python 2
    code, which python3 cannot even compile (the parse has the last word: :mod:`.py2`)."""
    if "print " in text:
        for m in _PY2_PRINT.finditer(text):
            i = m.start()
            if not text[text.rfind("\n", 0, i) + 1 : i].strip(" \t"):
                return True
    if "except " in text and _PY2_EXCEPT.search(text):
        return True
    return "raise " in text and _PY2_RAISE.search(text) is not None
