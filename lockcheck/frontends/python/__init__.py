"""Python frontend: tree-sitter-python -> :class:`FileFacts`.

A file goes through these stages, each only when the one before lets it through:

1. :mod:`.gate`: the text test (a file whose text cannot hold a lock fact returns empty facts
   without being parsed), then CPython's parser and the AST test for a lock anchor; a file
   CPython refuses (Python 2, a syntax error) goes on to tree-sitter, which reads it anyway;
2. tree-sitter-python parses the bytes (:mod:`..treesitter`), and :mod:`.lower` turns the
   tree into the analysis tree of :mod:`.nodes` in one iterative pass, noting the comments,
   the first ERROR/MISSING node and the first Python 2 statement (:mod:`.py2`);
3. the analysis (:class:`.locks.Analyzer`, built from :mod:`.walk`, :mod:`.values`,
   :mod:`.calls`, :mod:`.handlers`, :mod:`.processes`) records the lock facts.

A syntax error gets LCK000 at the first broken node and the intact parts are still
analysed; Python 2 code gets LCK000 at its first Python 2 statement unless the shebang names
python2, and is analysed like Python 3 either way.

The analysis is deliberately static and conservative: a path part that cannot be resolved stays
unknown, a branch whose end cannot be computed has an unknown status.
"""

from __future__ import annotations

import ast
import re
import warnings

from ... import lazyre
from ...collector import paused
from ...model import FileFacts, ParseError, Span
from ..treesitter import Offsets, parser, source_bytes
from . import py2
from .gate import Gate, looks_like_python2, may_hold_lock
from .locks import Analyzer
from .lower import lower

MAX_CHARS = 2_000_000  # larger files (generated data) are not analysed
# CPython's own limits, which tree-sitter does not have: deeper code does not compile
MAX_BRACKETS = 200  # "too many nested parentheses"
MAX_BLOCKS = 100  # "too many levels of indentation"

_Analyzer = Analyzer

__all__ = ["MAX_CHARS", "Analyzer", "parse"]


def parse(path: str, text: str) -> FileFacts:
    """The file's lock facts.  An exception here is a bug of the frontend: it reaches the
    engine, which reports it as the file's internal error (the run goes on with the other
    files), never an empty result that reads as "nothing found"."""
    facts = FileFacts(path=path, language="python", text=text)
    if len(text) > MAX_CHARS:
        return facts
    try:
        with paused():  # its trees live until the file is done: nothing to collect
            _analyse(facts)
    except RecursionError:
        out = FileFacts(path=path, language="python", text=text)
        out.parse_errors = list(facts.parse_errors) or [
            ParseError(Span(1, 1, 1, 1, 0, 0), "the file is nested too deeply to analyse")
        ]
        return out
    return facts


def _analyse(facts: FileFacts) -> None:
    text = facts.text
    lockish = may_hold_lock(text)
    if not lockish and not looks_like_python2(text):
        # Nothing in the text can take, test, break or remove a lock: not even parsed, so a
        # syntax error in such a file is left to the Python tooling.  Python 2 code is the
        # exception: a legacy job that no longer runs at all under python3, cheap to spot.
        return
    if "\x00" in text and "PK\x03\x04" in text:
        return  # a zip application (shebang + zip archive): Python runs it; it is not source
    refused, tree = _cpython_read(facts)
    if refused is None:
        return  # too deep or complex for CPython: LCK000 already, nothing runs
    if not refused:
        # CPython reads it: no LCK000, and only a file with a lock anchor is analysed
        if not lockish or Gate(tree if tree is not None else _ast(text)).anchor is None:
            return
    del tree  # CPython's tree is not needed past the gate (tree-sitter's is analysed)
    src = source_bytes(text)
    offsets = Offsets(text, src)
    tree = parser("python").parse(src)
    if tree.root_node.has_error and _MIXED_INDENT.search(src):
        # Python 2 reads a tab as "to the next multiple of 8 columns", tree-sitter-python as
        # 8 more: a file that mixes them (legacy cron jobs do) is re-read with each mixed
        # indentation written as the same columns in as many bytes (form feeds reset the
        # count), so offsets, lines and columns stay the file's
        src2 = _MIXED_INDENT.sub(_py2_columns, src)
        tree2 = parser("python").parse(src2)
        if not tree2.root_node.has_error:
            src, tree = src2, tree2
    low = lower(tree.root_node, src, offsets, build=lockish)  # else: LCK000 is all it can get
    facts.comments = low.comments
    error = None
    if refused:
        error = _parse_error(text, offsets, low)
        if error is not None:
            facts.parse_errors.append(error)
    is_py2 = refused and low.py2 is not None
    if is_py2 and error is None and not py2.asks_for_python2(text):
        node, what = low.py2
        span = offsets.line_span(node.start_point[0] + 1)
        facts.parse_errors.append(ParseError(span, py2.message(what)))
    if refused and error is None and low.py2 is None:
        # CPython refuses what tree-sitter reads (a limit of CPython's, an encoding): its
        # verdict stands
        facts.parse_errors.append(_cpython_error(text, offsets))
    if not lockish:
        return
    if low.max_brackets > MAX_BRACKETS or low.max_blocks >= MAX_BLOCKS:
        return  # CPython refuses it (LCK000 above): nothing runs, nothing to analyse
    an = Analyzer(facts, low.module, offsets.line_starts, is_py2)
    an.run()


_MIXED_INDENT = lazyre.compile(rb"(?m)^(?:[ ]+\t|\t+[ ]+\t?)[ \t]*")


def _py2_columns(m: re.Match) -> bytes:
    """The leading whitespace ``m`` as Python 2 counts it (a tab advances to the next multiple
    of 8), in the same number of bytes for tree-sitter-python (form feeds, then tabs of 8
    and spaces)."""
    ws = m.group(0)
    col = 0
    for ch in ws:
        col = (col // 8 + 1) * 8 if ch == 9 else col + 1
    tabs, spaces = divmod(col, 8)
    return b"\f" * (len(ws) - tabs - spaces) + b"\t" * tabs + b" " * spaces


def _ast(text: str) -> ast.Module:
    text = text[1:] if text.startswith("\ufeff") else text  # CPython reads the bytes' BOM
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning/DeprecationWarning on stderr
        try:
            return ast.parse(text)
        except UnicodeEncodeError:
            # undecodable bytes kept as surrogates: a file in the legacy encoding its coding
            # comment declares, which CPython reads from the bytes
            return ast.parse(text.encode("utf-8", "surrogateescape"))


def _cpython_read(facts: FileFacts) -> tuple[bool | None, ast.Module | None]:
    """Whether CPython's parser refuses the text (None: too deeply nested even to compile,
    LCK000 recorded), and the tree it read (None when it refused or recursed too deep)."""
    try:
        return False, _ast(facts.text)
    except (SyntaxError, ValueError):
        return True, None
    except MemoryError:  # "source too complex to parse": CPython's parser stack
        facts.parse_errors.append(
            ParseError(Span(1, 1, 1, 1, 0, 0), "source too complex for CPython's parser")
        )
        return None, None
    except RecursionError:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(facts.text, facts.path or "<script>", "exec", dont_inherit=True)
        except (SyntaxError, RecursionError, ValueError, MemoryError):
            facts.parse_errors.append(
                ParseError(Span(1, 1, 1, 1, 0, 0), "expressions nested too deeply to compile")
            )
            return None, None
        return False, None


def _cpython_error(text: str, offsets: Offsets) -> ParseError:
    try:
        _ast(text)
    except SyntaxError as e:
        msg = (e.msg or "syntax error").strip().splitlines()[0][:200]
        return ParseError(offsets.line_span(e.lineno or 1), f"syntax error: {msg}")
    except (ValueError, MemoryError, RecursionError) as e:
        msg = (str(e) or "syntax error").strip().splitlines()[0][:200]
        return ParseError(offsets.line_span(1), f"syntax error: {msg}")
    return ParseError(offsets.line_span(1), "syntax error")


def _parse_error(text: str, offsets: Offsets, low) -> ParseError | None:
    if low.max_brackets > MAX_BRACKETS:
        return ParseError(Span(1, 1, 1, 1, 0, 0), "syntax error: too many nested parentheses")
    if low.max_blocks >= MAX_BLOCKS:
        return ParseError(Span(1, 1, 1, 1, 0, 0), "syntax error: too many levels of indentation")
    node = low.error
    if node is None:
        return None
    line = node.start_point[0] + 1
    if node.is_missing:
        msg = f"syntax error: missing `{node.type}`" if node.type else "syntax error"
    elif "\x00" in text:
        msg = "syntax error: source code cannot contain null bytes"
    else:
        first = node.children[0] if node.child_count else node
        tok = first.text.decode("utf-8", "replace").split("\n", 1)[0][:40]
        msg = f"syntax error: unexpected `{tok}`" if tok.strip() else "syntax error: invalid syntax"
    return ParseError(offsets.line_span(line), msg)
