"""Which JavaScript/TypeScript files need the full analysis.

Building the analysis (every node of the tree in Python, the stages' passes) costs far more
than tree-sitter's parse, and the parse itself takes seconds on a megabyte bundle, while only
a small share of the files a repository holds can hold a lock fact.  Two text tests run
first, like the Python frontend's (:mod:`..python.gate`):

- :func:`generated`: a minified or bundled file (``.min.js``, or most of its text in lines
  of thousands of characters) is generated code, not a job script: not parsed at all.
- :func:`may_hold_lock`: a file goes on to the analysis only when its text names the Node
  APIs every lock fact comes from (``fs.``, ``process.kill``, or an import of ``fs``,
  ``fs-extra``, a lock library...) and has what every lock fact of the stages needs: a
  lock-like name part (``lock``, ``pid``, ``lck``,
  ``mutex``, ``running`` as :func:`lockcheck.paths.lockish_text` reads them; the lock
  libraries' names have one), ``EEXIST`` (a create guarded by the clash), a PID read from
  a file and signalled (``kill(`` and ``readFile``), or a removal next to a create (probes,
  test-then-create of a name that is removed).  Otherwise the stages make no fact: a file
  that fails is parsed only to report a syntax error (LCK000), never analysed.

The test over-approximates the stages (``bench/corpus_scan.py`` gives the same findings with
and without it on the fetched repositories; ``tests/test_javascript_gate.py``)."""

from __future__ import annotations

import re

from ...paths import lockish_text

MINIFIED_NAMES = (".min.js", ".min.mjs", ".min.cjs", "-min.js")
LONG_LINE = 1000  # characters: no hand-written script has many lines this long
_LONG = re.compile(r"[^\n]{" + str(LONG_LINE) + ",}")
_LOCK_PART = re.compile(r"(?i)lock|pid|lck|mutex|running")
_FS_DOT = re.compile(r"\bfs\s*\.")
_MODULE = re.compile(
    r"""["'`](?:node:)?(?:fs|fs/promises|fs-extra|graceful-fs|proper-lockfile|lockfile|fs-ext"""
    r"""|os-lock|process)["'`]"""
)
# the removals a probe or a removed test-then-create name is undone by, and the creates
REMOVE_TEXT = ("unlink", "rmdir", "rmSync", "rm(")
CREATE_TEXT = ("mkdir", "writeFile", "open")


def generated(path: str, text: str) -> bool:
    """A minified or bundled file: named ``*.min.js``, or at least half of a text of more
    than 50,000 characters in lines of ``LONG_LINE`` characters or more."""
    if path.lower().endswith(MINIFIED_NAMES):
        return True
    if len(text) < 50_000:
        return False
    return sum(len(m.group()) for m in _LONG.finditer(text)) * 2 >= len(text)


def _node_apis(text: str) -> bool:
    """Every lock fact comes from a call the stages resolve to ``fs``, a lock library or
    ``process.kill``: the text names ``fs.`` or ``process.kill``, or imports one of those
    modules (an alias or a destructured name is only known through its import).  Browser
    bundles with ``isLocked`` or ``running`` names have neither."""
    return (
        "process.kill" in text
        or _FS_DOT.search(text) is not None
        or _MODULE.search(text) is not None
    )


def _lockish_word(text: str) -> bool:
    """A name part that :func:`lockish_text` reads as lock-like, within a word of ``text``
    (``isLocked``, ``LOCK_DIR``, ``app.pid`` yes; ``block``, ``clock``, ``rapid`` no)."""
    seen: set[str] = set()
    n = len(text)
    for m in _LOCK_PART.finditer(text):
        s, e = m.start(), m.end()
        while s > 0 and text[s - 1].isalnum():
            s -= 1
        while e < n and text[e].isalnum():
            e += 1
        word = text[s:e]
        if word in seen:
            continue
        seen.add(word)
        if lockish_text(word):
            return True
    return False


def may_hold_lock(text: str) -> bool:
    """The text test: False means the stages would record no lock fact."""
    if not _node_apis(text):
        return False
    if "EEXIST" in text:
        return True
    if "kill(" in text and "readFile" in text:
        return True
    if any(r in text for r in REMOVE_TEXT) and any(c in text for c in CREATE_TEXT):
        return True
    return _lockish_word(text)
