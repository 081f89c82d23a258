"""A file's lock facts through the checks and its suppression comments: the findings.

Nothing here imports the fix layer: :mod:`lockcheck.engine` runs the frontend, this, and the
fix suggestions above both."""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import checks, lazyre
from .model import Applicability, Edit, FileFacts, Finding, Fix, Span
from .records import field, record
from .settings import Settings

# a frontend hands over ``#`` comments as written, and comments of other syntaxes (``//``)
# already stripped of their prefix: a directive is then at the start of the text
_NOQA = lazyre.compile(
    r"(?:^|#)\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I
)
_DISABLE = lazyre.compile(r"(?:^|#)\s*lockcheck:\s*disable=(?P<codes>[A-Z0-9,\s]+)", re.I)
_DISABLE_FILE = lazyre.compile(r"(?:^|#)\s*lockcheck:\s*disable-file=(?P<codes>[A-Z0-9,\s]+)", re.I)


def _may_hold_directive(lowered: str) -> bool:
    """Whether an ASCII comment (lower-cased) may hold a directive: the patterns above need
    ``noqa`` or ``lockcheck``, in any case.  A comment with other characters goes to the
    patterns as it is: ``re.I`` also folds the Kelvin sign into ``k``, a dotless ``i`` into
    ``i`` and a long ``s`` into ``s``."""
    return "noqa" in lowered or "lockcheck" in lowered


# codes that only a code or prefix selects, never "ALL" (the default): like ruff's RUF100
OPT_IN = frozenset({"LCK001"})


def selected_codes(settings: Settings, extra_ignore: Iterable[str] = ()) -> set[str]:
    """Codes enabled by select/extend-select/ignore (prefixes allowed, 'ALL' for all but the
    opt-in codes)."""

    def expand(items: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for item in items:
            item = item.strip().upper()
            if item == "ALL":
                out.update(c for c in checks.RULES if c not in OPT_IN)
            else:
                out.update(c for c in checks.RULES if c.startswith(item))
        return out

    codes = expand(settings.select) | expand(settings.extend_select)
    return codes - expand(list(settings.ignore) + list(extra_ignore))


def _codes(text: str | None) -> set[str] | None:
    if not text:
        return None
    return {c.upper() for c in re.split(r"[\s,]+", text.strip()) if c}


@record
class Suppression:
    """One suppression comment: ``# noqa[: CODES]`` (``kind`` "noqa"), ``# lockcheck:
    disable=CODES`` ("disable", for the next line) or ``disable-file=CODES``."""

    kind: str
    line: int  # the comment's line
    codes: list[str] | None  # None: a bare noqa (every code on the line)
    used: set[str] = field(default_factory=set)  # codes that silenced a finding ("*": bare)


def suppressions(facts: FileFacts) -> list[Suppression]:
    """Every suppression comment of the file (disable-file only in the first comment block)."""
    out = []
    header = _header_lines(facts)
    for line, comment in sorted(facts.comments.items()):
        if comment.isascii() and not _may_hold_directive(comment.lower()):
            continue  # none of the three can match (nor be compiled for a file without any)
        m = _NOQA.search(comment)
        if m:
            codes = _codes(m.group("codes"))
            out.append(Suppression("noqa", line, sorted(codes) if codes is not None else None))
        m = _DISABLE.search(comment)
        if m:
            out.append(Suppression("disable", line, sorted(_codes(m.group("codes")) or ())))
        m = _DISABLE_FILE.search(comment)
        if m and line in header:
            out.append(Suppression("disable-file", line, sorted(_codes(m.group("codes")) or ())))
    return out


def _silencer(sups: list[Suppression], finding: Finding) -> tuple[Suppression, str] | None:
    line = finding.span.line
    for sup in sups:
        if sup.kind == "noqa" and sup.line == line:
            if sup.codes is None:
                return sup, "*"
            if finding.code in sup.codes:
                return sup, finding.code
    for sup in sups:
        if sup.kind == "disable" and sup.line == line - 1 and finding.code in sup.codes:
            return sup, finding.code
    for sup in sups:
        if sup.kind == "disable-file" and finding.code in sup.codes:
            return sup, finding.code
    return None


def suppressed(facts: FileFacts, finding: Finding, disabled: set[str] | None = None) -> bool:
    """noqa at the end of the flagged line; ``lockcheck: disable=`` on the line before;
    ``lockcheck: disable-file=`` in the first comment block (``disabled`` is accepted for
    callers of the earlier signature and not needed)."""
    return _silencer(suppressions(facts), finding) is not None


def unknown_suppression_codes(facts: FileFacts) -> list[tuple[int, str]]:
    """(line, code) of each code a suppression comment names that lockcheck does not have."""
    return [
        (sup.line, code)
        for sup in suppressions(facts)
        for code in sup.codes or ()
        if _ours(code) and code not in checks.RULES
    ]


def unknown_codes_warning(facts: FileFacts) -> str | None:
    """One line for stderr naming the unknown codes of suppression comments, or None."""
    unknown = unknown_suppression_codes(facts)
    if not unknown:
        return None
    where = ", ".join(f"{code} (line {line})" for line, code in unknown)
    return f"{facts.path}: suppression comment names unknown rule code {where}"


def _ours(code: str) -> bool:
    """``E501`` in ``# noqa: E501`` is another linter's (ruff, flake8): never judged here."""
    return code.startswith("LCK")


def file_disabled(facts: FileFacts) -> set[str]:
    """Codes disabled by ``# lockcheck: disable-file=`` in the file's first comment block."""
    out: set[str] = set()
    for sup in suppressions(facts):
        if sup.kind == "disable-file":
            out |= set(sup.codes or ())
    return out


def _header_lines(facts: FileFacts) -> set[int]:
    """The lines of the file's first comment block (blank lines allowed, shebang included)."""
    out = set()
    for i, raw in enumerate(_lines(facts.text), start=1):
        s = raw.strip()
        if not s:
            continue
        if not s.startswith(_LINE_COMMENT):
            break
        out.add(i)
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


_LINE_COMMENT = ("#", "//")  # the line comments that can open a file's first comment block
_LINE_BREAK = lazyre.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def analyze_facts(facts: FileFacts, settings: Settings, codes: set[str]) -> list[Finding]:
    findings = []
    seen: set[tuple] = set()
    sups: list[Suppression] | None = None
    for f in checks.run_checks(facts, settings, codes):
        # one lock reached from several call sites can describe the same finding twice
        key = (f.code, f.span.line, f.span.col, f.message)
        if key in seen:
            continue
        if sups is None:
            sups = suppressions(facts)
        hit = _silencer(sups, f)
        if hit is not None:
            hit[0].used.add(hit[1])
            continue
        seen.add(key)
        findings.append(f)
    if "LCK001" in codes:
        findings.extend(_unused_suppressions(facts, suppressions(facts) if sups is None else sups))
    findings.sort(key=lambda f: f.sort_key)
    return findings


def _unused_suppressions(facts: FileFacts, sups: list[Suppression]) -> list[Finding]:
    """LCK001: a suppression comment, or some of its codes, that silenced nothing this run."""
    ctx = checks.Context(facts, Settings())
    out = []
    lines = None
    for sup in sups:
        if sup.codes is None:
            # a bare noqa in Python is as much ruff's or flake8's as ours
            if sup.used or facts.language != "shell":
                continue
            unused, keep = ["(all codes)"], []
        else:
            unused = [c for c in sup.codes if _ours(c) and c not in sup.used]
            keep = [c for c in sup.codes if not _ours(c) or c in sup.used]
        if not unused:
            continue
        if lines is None:
            lines = _line_starts(facts.text)
        span, fix = _comment_fix(facts, sup, keep, lines)
        unknown = [c for c in unused if c not in checks.RULES and c != "(all codes)"]
        what = {"noqa": "`noqa`", "disable": "`disable=`", "disable-file": "`disable-file=`"}
        if sup.codes is None:
            msg = "unused `noqa`: no finding on this line"
        elif unknown and len(unknown) == len(unused):
            msg = f"{what[sup.kind]} names unknown code{'s' if len(unknown) > 1 else ''} "
            msg += ", ".join(unknown)
        else:
            msg = f"unused {what[sup.kind]} for {', '.join(unused)}: no such finding here"
        out.append(ctx.finding("LCK001", span, msg, fix=fix))
    return out


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def _comment_fix(
    facts: FileFacts, sup: Suppression, keep: list[str], starts: list[int]
) -> tuple[Span, Fix | None]:
    """The comment's span, and the safe fix: the unused codes dropped, or the whole comment
    (and its line, when nothing else is on it) when none is left."""
    line = sup.line
    begin = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(facts.text)
    text = facts.text[begin:end]
    if text.endswith("\r"):
        text, end = text[:-1], end - 1
    comment = facts.comments.get(line, "")
    col = text.rfind(comment) if comment else -1
    if col < 0:
        return Span(line, 1, line, len(text) + 1, begin, end), None
    c_start, c_end = begin + col, begin + col + len(comment)
    span = Span(line, col + 1, line, col + len(comment) + 1, c_start, c_end)
    pattern = {"noqa": _NOQA, "disable": _DISABLE, "disable-file": _DISABLE_FILE}[sup.kind]
    m = pattern.search(comment)
    if m is None:
        return span, None
    if keep and m.group("codes"):
        lo, hi = m.span("codes")
        edit = Edit(c_start + lo, c_start + hi, ", ".join(keep))
        return span, Fix(Applicability.SAFE, f"Keep only {', '.join(keep)}", (edit,))
    rest = (comment[: m.start()] + comment[m.end() :]).strip(" \t#")
    if rest:  # the comment says more: drop the directive only
        edit = Edit(c_start + m.start(), c_start + m.end(), "#" if m.start() == 0 else "")
        return span, Fix(Applicability.SAFE, "Remove the unused suppression", (edit,))
    before = text[:col]
    if before.strip():  # code before the comment: drop the comment and the blanks before it
        edit = Edit(begin + len(before.rstrip(" \t")), c_end, "")
    else:  # a line of its own: drop the line
        edit = Edit(begin, min(end + 1, len(facts.text)), "")
    return span, Fix(Applicability.SAFE, "Remove the unused suppression comment", (edit,))


class InternalError(Exception):
    """A bug met while analysing one file; ``stage`` says where."""

    def __init__(self, stage: str, exc: BaseException) -> None:
        super().__init__(f"internal error in {stage}: {type(exc).__name__}: {exc}".rstrip())
        self.stage = stage
