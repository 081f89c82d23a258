"""The documented API: one file through its frontend and the checks (:mod:`lockcheck.analysis`),
then, when it has findings, the fix layer's suggestions added and the checks run again.

This module sits above the analysis and the fix layer; the analysis never imports it nor
anything of ``lockcheck.fix``, and ``lockcheck.fix`` is handed :func:`analyze_text` rather than
importing it, so the imports run one way: frontends -> model -> checks -> analysis -> fix ->
engine."""

from __future__ import annotations

from collections.abc import Iterable

from . import frontends
from .analysis import (  # noqa: F401 - the names callers of this module know it by
    OPT_IN,
    InternalError,
    Suppression,
    analyze_facts,
    file_disabled,
    selected_codes,
    suppressed,
    suppressions,
    unknown_codes_warning,
    unknown_suppression_codes,
)
from .model import FileFacts, Finding
from .settings import Settings


def analyze_text(
    path: str,
    text: str,
    language: str,
    settings: Settings | None = None,
    codes: set[str] | None = None,
    *,
    system_account: bool = False,
    started_by_job: bool = False,
) -> tuple[FileFacts, list[Finding]]:
    """Analyze one file's text (the documented API): frontend, checks, fix suggestions,
    suppression comments.  ``codes`` defaults to what ``settings`` selects;
    ``started_by_job``: a job definition of the scanned tree starts the script (the scan's
    join sets it).  Raises :class:`InternalError` for a bug in any stage, never for bad input.

    Suggestions are built only for a file that has findings: the checks run first, and when
    they find something the facts are enriched (:func:`lockcheck.fix.suggest.enrich`) and the
    checks run again, so that the findings carry the suggestions.  Whether a finding is made
    never depends on a suggestion, so the second run finds the same findings.

    ``system_account``: a Task Scheduler definition runs the script as SYSTEM, LocalService
    or NetworkService (set by the join of definitions to scripts)."""
    settings = settings or Settings()
    try:
        facts = frontends.parse(language, path, text)
    except Exception as exc:
        raise InternalError(f"the {language} frontend", exc) from exc
    facts.system_account = system_account
    facts.started_by_job = started_by_job
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


def fix_text(
    path: str,
    text: str,
    language: str,
    settings: Settings | None = None,
    codes: Iterable[str] | None = None,
    unsafe: bool = False,
):
    """:func:`lockcheck.fix.apply.fix_text` with :func:`analyze_text` as its re-analysis."""
    from .fix.apply import fix_text as apply_fixes

    def analyse(src: str) -> tuple[FileFacts, list[Finding]]:
        return analyze_text(path, src, language, settings)

    return apply_fixes(path, text, language, settings, codes, unsafe, analyse=analyse)
