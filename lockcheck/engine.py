"""One file through the pipeline: frontend -> lock facts -> checks -> suppressions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import checks, frontends
from .model import FileFacts, Finding
from .settings import Settings

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)
_DISABLE = re.compile(r"#\s*lockcheck:\s*disable=(?P<codes>[A-Z0-9,\s]+)", re.I)
_DISABLE_FILE = re.compile(r"#\s*lockcheck:\s*disable-file=(?P<codes>[A-Z0-9,\s]+)", re.I)


def selected_codes(settings: Settings, extra_ignore: Iterable[str] = ()) -> set[str]:
    """Codes enabled by select/extend-select/ignore (prefixes allowed, 'ALL' for all)."""

    def expand(items: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for item in items:
            item = item.strip().upper()
            if item == "ALL":
                out.update(checks.RULES)
            else:
                out.update(c for c in checks.RULES if c.startswith(item))
        return out

    codes = expand(settings.select) | expand(settings.extend_select)
    return codes - expand(list(settings.ignore) + list(extra_ignore))


def _codes(text: str | None) -> set[str] | None:
    if not text:
        return None
    return {c.upper() for c in re.split(r"[\s,]+", text.strip()) if c}


def suppressed(facts: FileFacts, finding: Finding, disabled: set[str] | None = None) -> bool:
    """noqa at the end of the flagged line; ``lockcheck: disable=`` on the line before;
    ``lockcheck: disable-file=`` in the first comment block (``disabled``: those codes, when
    the caller has read them already with :func:`file_disabled`)."""
    comments = facts.comments
    line = finding.span.line
    own = comments.get(line)
    if own:
        m = _NOQA.search(own)
        if m:
            codes = _codes(m.group("codes"))
            if codes is None or finding.code in codes:
                return True
    prev = comments.get(line - 1)
    if prev:
        m = _DISABLE.search(prev)
        if m and finding.code in (_codes(m.group("codes")) or set()):
            return True
    if disabled is None:
        disabled = file_disabled(facts)
    return finding.code in disabled


def file_disabled(facts: FileFacts) -> set[str]:
    """Codes disabled by ``# lockcheck: disable-file=`` in the file's first comment block."""
    out: set[str] = set()
    for i, raw in enumerate(_lines(facts.text), start=1):
        s = raw.strip()
        if not s:
            continue
        if not s.startswith("#"):
            break
        m = _DISABLE_FILE.search(facts.comments.get(i, s))
        if m:
            out |= _codes(m.group("codes")) or set()
    return out


def _lines(text: str):
    """The lines of ``text`` one at a time (as ``str.splitlines`` cuts them), without
    splitting the whole file: the first comment block is all that is read."""
    start, n = 0, len(text)
    while start < n:
        m = _LINE_BREAK.search(text, start)
        if m is None:
            yield text[start:]
            return
        yield text[start : m.start()]
        start = m.end()


_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def analyze_facts(facts: FileFacts, settings: Settings, codes: set[str]) -> list[Finding]:
    findings = []
    seen: set[tuple] = set()
    disabled: set[str] | None = None
    for f in checks.run_checks(facts, settings, codes):
        # one lock reached from several call sites can describe the same finding twice
        key = (f.code, f.span.line, f.span.col, f.message)
        if key in seen:
            continue
        if disabled is None:
            disabled = file_disabled(facts)
        if suppressed(facts, f, disabled):
            continue
        seen.add(key)
        findings.append(f)
    findings.sort(key=lambda f: f.sort_key)
    return findings


class InternalError(Exception):
    """A bug met while analysing one file; ``stage`` says where."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(f"internal error in {stage}: {type(exc).__name__}: {exc}".rstrip())
        self.stage = stage


def analyze_text(
    path: str,
    text: str,
    language: str,
    settings: Settings | None = None,
    codes: set[str] | None = None,
) -> tuple[FileFacts, list[Finding]]:
    """Analyze one file's text (the documented API): frontend, checks, fix suggestions,
    suppression comments.  ``codes`` defaults to what ``settings`` selects.  Raises
    :class:`InternalError` for a bug in any stage, never for bad input.

    Suggestions are built only for a file that has findings: the checks run first, and when
    they find something the facts are enriched (:func:`lockcheck.fix.suggest.enrich`) and the
    checks run again, so that the findings carry the suggestions.  Whether a finding is made
    never depends on a suggestion, so the second run finds the same findings."""
    settings = settings or Settings()
    try:
        facts = frontends.parse(language, path, text)
    except Exception as exc:
        raise InternalError(f"the {language} frontend", exc) from exc
    if codes is None:
        codes = selected_codes(settings)
    try:
        findings = analyze_facts(facts, settings, codes)
    except Exception as exc:
        raise InternalError("the checks", exc) from exc
    if not findings:
        return facts, findings
    try:
        from .fix.suggest import enrich  # fills suggestions the frontend left empty

        enrich(facts, settings.skip_exit_code)
    except Exception as exc:
        raise InternalError("the fix suggestions", exc) from exc
    try:
        return facts, analyze_facts(facts, settings, codes)
    except Exception as exc:
        raise InternalError("the checks", exc) from exc
