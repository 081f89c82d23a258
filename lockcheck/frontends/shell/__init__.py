"""Shell frontend: tree-sitter-bash -> :class:`FileFacts`.

A file goes through these stages:

1. :mod:`.read`: the bytes tree-sitter-bash is given (:func:`tree_sitter_source`), the parse,
   and the prescan: comments, functions and their callers, init-script marks, and the broken
   regions (LCK000 at the first, unless ``bash -n`` reads the file; facts after the point where
   bash stops reading are dropped);
2. :mod:`.walk` follows the script in execution order: the top level first, a function's body
   where it is called (positional parameters bound from that call site, so a helper called with
   two paths yields one fact per path), then functions never called (their facts are
   conditional).  Every command is seen with a :class:`~.data.Pos` saying how its exit status
   is used (tested by ``if``/``while``/``!``/``&&``/``||``, by ``$?`` on the next line, or not) and
   which statements run when it fails or succeeds;
3. each command is read by the stage its name belongs to (:mod:`.commands` dispatches):
   words resolve to paths in :mod:`.values`, acquires come from :mod:`.locks`, removals,
   writes and file tests from :mod:`.files`, PID files and liveness tests from
   :mod:`.processes`, handlers from :mod:`.traps`; :mod:`.branches` reads what runs when an
   acquire fails (the busy branch) and how a status is tested;
4. :mod:`.finish` runs the final lock-semantics passes over what the walk recorded.

:class:`.analyzer.Analyzer` holds the state these stages share (one mixin class per stage
module); :mod:`.data` has the small data classes and node helpers.

Approximations (kept on purpose, see the tests): one environment of variables for the whole
walk (no ``local`` scoping, branch assignments visible afterwards); a dead-holder guard covers
only the statement right after ``if alive; then exit; fi``; code run by ``eval``/``sh -c``/``ssh``,
``flock -c`` strings and here-doc bodies is never read.  tree-sitter-bash 0.25 gaps handled
here: ``exec 9<>F`` (an ERROR holding ``>`` or ``<``), ``exec {fd}>F``, destinations and
``X=/tmp/`cmd`.lock`` assignments split in two, ``-$1.lock`` split after ``$``, and valid code
it reads as an ERROR region (read again line by line).
"""

from __future__ import annotations

from ...model import FileFacts, ParseError, Span
from .analyzer import Analyzer
from .read import _bash_accepts, tree_sitter_source

_Analyzer = Analyzer

__all__ = ["Analyzer", "_bash_accepts", "parse", "tree_sitter_source"]


def parse(path: str, text: str) -> FileFacts:
    try:
        return Analyzer(path, text).run()
    except RecursionError:
        facts = FileFacts(path=path, language="shell", text=text)
        facts.parse_errors.append(
            ParseError(Span(1, 1, 1, 1, 0, 0), "the file is nested too deeply to analyse")
        )
        return facts
    except Exception as exc:  # noqa: BLE001 - no exception may escape a frontend
        facts = FileFacts(path=path, language="shell", text=text)
        msg = f"internal error while reading the file as shell: {type(exc).__name__}: {exc}".splitlines()[
            0
        ]
        facts.parse_errors.append(ParseError(Span(1, 1, 1, 1, 0, 0), msg[:200]))
        return facts
