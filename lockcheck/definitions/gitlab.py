"""GitLab CI (``.gitlab-ci.yml``): jobs that run for schedules, their ``environment:`` and
``resource_group``, and their ``script:`` lines.  (Local includes are not followed yet.)"""

from __future__ import annotations

import re

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock
from .yamltree import Node, comments, parse_yaml

RESERVED = {
    "stages", "variables", "default", "include", "workflow", "image", "services",
    "before_script", "after_script", "cache", "pages:deploy",
}  # fmt: skip
_IS_SCHEDULE = re.compile(r"\$CI_PIPELINE_SOURCE\s*==\s*[\"']schedule[\"']")
_NOT_SCHEDULE = re.compile(r"\$CI_PIPELINE_SOURCE\s*!=\s*[\"']schedule[\"']")


def _scalars(n: Node | None) -> list[Node]:
    if n is None:
        return []
    if n.kind == "scalar":
        return [n]
    if n.kind == "seq":
        return [i for i in n.items if i.kind == "scalar"]
    return []


def _schedule(job: Node) -> str:
    """'yes' (runs for schedules), 'no' (excluded) or 'open' (no rule about schedules)."""
    rules = job.get("rules")
    for r in rules.items if rules is not None and rules.kind == "seq" else []:
        cond = r.get("if") if r.kind == "map" else None
        when = r.get("when") if r.kind == "map" else None
        never = when is not None and when.kind == "scalar" and when.text == "never"
        if cond is not None and cond.kind == "scalar":
            if _IS_SCHEDULE.search(cond.text):
                return "no" if never else "yes"
            if _NOT_SCHEDULE.search(cond.text) and not never:
                return "no"
    only = [s.text for s in _scalars(job.get("only"))]
    if "schedules" in only:
        return "yes"
    if only or "schedules" in [s.text for s in _scalars(job.get("except"))]:
        return "no"
    return "open"


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "gitlab", text, comments=comments(text))
    docs = parse_yaml(text, templates=False)
    if docs and docs[0].errors:
        d.errors.extend(DefError(*e) for e in docs[0].errors)
        return d
    root = docs[0].root if docs else None
    if root is None or root.kind != "map":
        return d
    jobs = [
        (k, p)
        for k, p in root.pairs.items()
        if k not in RESERVED and not k.startswith(".") and p.value.kind == "map"
    ]
    verdicts = {k: _schedule(p.value) for k, p in jobs}
    gated = "yes" in verdicts.values()
    for k, p in jobs:
        job = p.value
        e = Entry("gitlab-job", k, p.line, p.col)
        e.scheduled = verdicts[k] == "yes" or gated and verdicts[k] == "open"
        for key in ("environment", "resource_group"):
            pair = job.pairs.get(key)
            e.settings[key] = Setting("" if pair else None, pair.line if pair else p.line)
        for item in _scalars(job.get("script")):
            line = item.line + (1 if item.raw[:1] in "|>" else 0)
            e.commands.append(
                Command(item.text, line, item.col, wrapped=wrapper_lock(item.text), shell="sh")
            )
        d.entries.append(e)
    return d
