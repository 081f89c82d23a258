"""Rule registry.  Each rule is a function over :class:`lockcheck.model.FileFacts` that yields
findings; it is written once for every language.  The rule pages (``rules/LCKnnn.md``) carry
the prose and the examples."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..model import Applicability, FileFacts, Finding, Fix, Severity, Span
from ..records import record
from ..settings import Settings


@record(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    fix: Applicability | None  # the strongest fix the rule offers, for docs and SARIF
    check: Callable[..., Iterable[Finding]]
    help: str = ""  # the remedy, shown as `help:` where a finding has no fix of its own
    # "script": run on every script's FileFacts; "definitions": on job definitions
    # (lockcheck.checks.jobs, over lockcheck.definitions)
    layer: str = "script"


class Context:
    """What a check gets: the facts of one file and the run's settings."""

    def __init__(self, facts: FileFacts, settings: Settings) -> None:
        self.facts = facts
        self.settings = settings

    def finding(
        self,
        code: str,
        span: Span,
        message: str,
        fix: Fix | None = None,
        suggestion: Fix | None = None,
    ) -> Finding:
        rule = RULES[code]
        return Finding(
            code=code,
            name=rule.name,
            severity=rule.severity,
            message=message,
            path=self.facts.path,
            span=span,
            fix=fix,
            suggestion=suggestion,
        )


RULES: dict[str, Rule] = {}


def rule(
    code: str,
    name: str,
    severity: str,
    summary: str,
    fix: str | None = None,
    help: str = "",
    layer: str = "script",
):
    def register(func: Callable[..., Iterable[Finding]]):
        RULES[code] = Rule(
            code,
            name,
            Severity(severity),
            summary,
            Applicability(fix) if fix else None,
            func,
            help,
            layer,
        )
        return func

    return register


def run_checks(facts: FileFacts, settings: Settings, codes: set[str]) -> Iterator[Finding]:
    ctx = Context(facts, settings)
    for code, r in RULES.items():
        if code in codes and r.layer == "script":
            yield from r.check(ctx)


def shown(template) -> Fix | None:
    """A frontend's or enricher's FixTemplate offered as a suggestion (never applied)."""
    if template is None:
        return None
    return Fix(Applicability.SUGGESTION, template.message, template.edits)


def rule_url(code: str) -> str:
    return f"https://github.com/lockcheck/lockcheck/blob/main/rules/{code}.md"


# import the rule modules so that they register themselves
from . import existence, exits, jobs, mutex, placement, processes, removal, suppression  # noqa: E402,F401
