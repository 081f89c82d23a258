"""The per-file part of the definitions layer, run in the bounded workers with the scripts
(:func:`lockcheck.runner.check_target`): read a definition, parse it, analyse its embedded
shell.  The result carries the :class:`~lockcheck.definitions.Definition` and the embedded
shell's findings to the join (:mod:`lockcheck.definitions.join`), which needs every file.  A
definition whose parsing crashes, hangs or eats memory is stopped like a script: one LCK000
on line 1, and the other files go on."""

from __future__ import annotations

import os

from . import Definition, parse
from .embedded import shell_findings


def load(t, r, kind: str, data: bytes | None = None) -> Definition | None:
    """Read one definition file into its result (text, bytes, decoding) and parse it; None
    when it cannot be read (``r.error``) or is binary.  ``data``: its bytes, already read."""
    from ..source import Source, decode, read_regular

    if data is None:
        data, r.error = read_regular(t.path, t.display)
        if data is None:
            return None
    source = decode(data, "python" if kind == "airflow" else None)
    if source is None and kind == "windows":  # UTF-16 without a BOM
        from .windows import decode as wdecode

        source = Source(wdecode(data), "utf-16")
    if source is None:
        if t.explicit:
            r.warning = f"{t.display}: binary file, not checked"
        return None
    if kind == "windows":
        r.warning = None  # UTF-16 is text here
    d = parse_text(kind, t.display, source.text, data)
    if r.text is None:
        r.text, r.data, r.source = source.text, data, source
    return d


def parse_text(kind: str, display: str, text: str, data: bytes | None = None) -> Definition:
    if kind == "windows":
        from .windows import parse as wparse

        return wparse(display, text, data)
    return parse(kind, display, text)


def analyse(t, r, kind: str, codes_of, data: bytes | None = None) -> None:
    """Parse the definition of target ``t`` (its result ``r``; ``codes_of(path)``: the rules
    selected for a file) into ``r.definition``, its embedded shell's findings (before
    suppressions, which the join applies with the LCK6xx findings) into ``r.embedded``; a
    ``.gitlab-ci.yml`` with the files it includes (``r.pipeline``)."""
    d = load(t, r, kind, data)
    if d is None:
        return
    r.skipped = False
    r.definition = d
    if kind == "gitlab" and os.path.basename(t.path) == ".gitlab-ci.yml" and not d.errors:
        if "include" in d.text:
            from .pipeline import read_pipeline

            r.pipeline = read_pipeline(t, r, d, codes_of, load)
            if r.pipeline:
                return
    r.embedded = shell_findings(d, t.settings, codes_of(t.path))


_YAML_KINDS = {"k8s", "github", "gitlab"}


def preload(kinds: set[str]) -> None:
    """Import what reading definitions of ``kinds`` needs before the workers fork (each
    worker then starts with it): the kinds' modules, the YAML grammar, and the shell
    frontend for their embedded shell."""
    import importlib

    for kind in sorted(kinds):
        importlib.import_module(f"{__package__}.{kind}")
    if kinds & _YAML_KINDS:
        from ..frontends.treesitter import parser

        parser("yaml")
    importlib.import_module("lockcheck.frontends.shell")
