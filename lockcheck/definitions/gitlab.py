"""GitLab CI (``.gitlab-ci.yml``): jobs that run for schedules, their ``environment:`` and
``resource_group``, and their ``script:`` lines; local ``include:`` files and ``extends:``
are followed (nothing is fetched)."""

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


def _root(d: Definition) -> Node | None:
    docs = parse_yaml(d.text, templates=False)
    if docs and docs[0].errors:
        d.errors.extend(DefError(*e) for e in docs[0].errors)
        return None
    root = docs[0].root if docs else None
    return root if root is not None and root.kind == "map" else None


def includes(text: str, root: str | None = None) -> list[str]:
    """The local files a pipeline file includes (``include: path``, ``- local: path``), as
    written (a leading ``/`` is the repository root); a wildcard path (``ci/*.yml``,
    ``/ci/**.yml``) becomes the files of the tree ``root`` it matches, in order.  Remote,
    project and template includes and templated paths are unknown: not followed."""
    root_node = _root(Definition("", "gitlab", text))
    inc = root_node.get("include") if root_node is not None else None
    items = inc.items if inc is not None and inc.kind == "seq" else [inc] if inc else []
    out = []
    for i in items:
        if i.kind == "map":
            i = i.get("local")
            if i is None:
                continue
        if i.kind != "scalar" or not i.text or i.templated:
            continue
        t = i.text
        if "://" in t or "$" in t or not t.endswith((".yml", ".yaml")):
            continue
        if "*" in t:
            out += wildcard_files(t, root) if root is not None else []
        else:
            out.append(t)
    return out


MAX_STARS = 6  # more wildcards than this in one include: unknown (not followed)


def wildcard_regex(pattern: str) -> re.Pattern[str] | None:
    """GitLab's wildcard path grammar (as its repository search writes it): the pattern
    escaped, then ``**/`` any run of directories or none, ``**`` any characters (``/``
    too), ``*`` any characters but ``/``; matched against the whole path from the
    repository root.  None for a pattern of more than :data:`MAX_STARS` stars."""
    pattern = pattern.lstrip("/")
    if pattern.count("*") > MAX_STARS:
        return None
    rx = re.escape(pattern)
    rx = rx.replace(r"\*\*/", "(.*?/)?").replace(r"\*\*", ".*?").replace(r"\*", "[^/]*?")
    return re.compile(rx)


def wildcard_files(pattern: str, root: str) -> list[str]:
    """The files of the tree under ``root`` (version control and symlinked directories not
    entered) whose root-relative path the wildcard ``pattern`` matches, sorted."""
    import os

    rx = wildcard_regex(pattern)
    if rx is None:
        return []
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", ".hg", ".svn")]
        rel_dir = os.path.relpath(d, root).replace(os.sep, "/")
        for n in names:
            rel = n if rel_dir == "." else f"{rel_dir}/{n}"
            if rx.fullmatch(rel):
                out.append(rel)
    return sorted(out)


class _Job:
    """A job as GitLab reads it: its own keys, else those of the jobs it ``extends`` (a later
    one wins; hidden ``.template`` jobs of any file of the pipeline)."""

    def __init__(self, node: Node, pool: dict[str, Node], depth: int = 0) -> None:
        self.node = node
        self.parents: list[_Job] = []
        ext = node.get("extends")
        names = [n.text for n in _scalars(ext)]
        if depth < 11:  # GitLab's own nesting limit
            self.parents = [_Job(pool[n], pool, depth + 1) for n in reversed(names) if n in pool]
        self.unknown = any(n not in pool for n in names)

    def get(self, key: str) -> Node | None:
        own = self.node.get(key)
        if own is not None:
            return own
        for p in self.parents:
            v = p.get(key)
            if v is not None:
                return v
        return None

    def pair(self, key: str):
        """(pair, the job's own node holds it)."""
        if key in self.node.pairs:
            return self.node.pairs[key], True
        for p in self.parents:
            hit, _own = p.pair(key)
            if hit is not None:
                return hit, False
        return None, False


def parse(path: str, text: str) -> Definition:
    return pipeline([(path, text)])[0]


def pipeline(files: list[tuple[str, str]]) -> list[Definition]:
    """The Definitions of a pipeline's files (``.gitlab-ci.yml`` first, then the files it
    includes): jobs read with ``extends`` resolved over all of them, and the gate on schedules
    ("a file whose jobs are gated on it") taken over the whole pipeline."""
    defs = [Definition(p, "gitlab", t, comments=comments(t)) for p, t in files]
    roots = [_root(d) for d in defs]
    pool: dict[str, Node] = {}
    for root in roots:
        for k, p in root.pairs.items() if root is not None else []:
            if k not in RESERVED and p.value.kind == "map":
                pool[k] = p.value
    jobs = []
    for d, root in zip(defs, roots, strict=True):
        for k, p in root.pairs.items() if root is not None else []:
            if k not in RESERVED and not k.startswith(".") and p.value.kind == "map":
                jobs.append((d, k, p, _Job(p.value, pool)))
    verdicts = {id(p): _schedule(job) for _d, _k, p, job in jobs}
    gated = "yes" in verdicts.values()
    for d, k, p, job in jobs:
        e = Entry("gitlab-job", k, p.line, p.col)
        e.scheduled = verdicts[id(p)] == "yes" or gated and verdicts[id(p)] == "open"
        for key in ("environment", "resource_group"):
            pair, own = job.pair(key)
            line = pair.line if pair is not None and own else p.line
            e.settings[key] = Setting(
                "" if pair else None, line, templated=pair is None and job.unknown
            )
        pair, own = job.pair("script")
        for item in _scalars(pair.value if pair is not None and own else None):
            line = item.line + (1 if item.raw[:1] in "|>" else 0)
            e.commands.append(
                Command(item.text, line, item.col, wrapped=wrapper_lock(item.text), shell="sh")
            )
        d.entries.append(e)
    return defs
