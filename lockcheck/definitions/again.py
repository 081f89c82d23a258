"""A script analysed again with what the join learned about how it is started
(:attr:`~lockcheck.model.FileFacts.started_by_job`, :attr:`~lockcheck.model.FileFacts.
system_account`): its new findings replace those of the first analysis."""

from __future__ import annotations


def analyse_again(t, r, **flags: bool) -> None:
    """Analyse the script of target ``t`` (result ``r``) again with ``flags`` set.  A script
    that cannot be read or decoded keeps its findings; an internal error becomes the file's
    error, as in the first analysis."""
    from ..engine import InternalError, analyze_text
    from ..runner import codes_for
    from ..source import decode

    text, data, source = r.text, r.data, r.source
    if text is None:
        try:
            with open(t.path, "rb") as fh:
                data = fh.read()
        except OSError:
            return
        source = decode(data, r.language)
        if source is None:
            return
        text = source.text
    try:
        _facts, found = analyze_text(
            t.display, text, r.language, t.settings, codes_for(t.settings, t.path), **flags
        )
    except InternalError as exc:
        r.error = f"{t.display}: {exc}"
        return
    r.findings = found
    if found:
        r.text, r.data, r.source = text, data, source
