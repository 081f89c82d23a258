"""GitHub Actions workflows (``.github/workflows/*.yml``): the ``schedule`` trigger, the
concurrency groups of the workflow and its jobs, and the ``run:`` steps."""

from __future__ import annotations

import re

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock
from .yamltree import Node, comments, parse_yaml

WRITES = re.compile(
    r"\bgit\s+push\b|\b(npm|yarn|pnpm|cargo|gem|poetry|twine|helm)\s+(publish|push|upload)\b"
    r"|\bdocker\s+push\b|\bgh\s+release\b|\bdeploy\b|\bpublish\b|\bkubectl\s+apply\b"
)


def concurrency(node: Node | None, line: int) -> tuple[Setting, Setting]:
    """(group, cancel-in-progress) of a ``concurrency:`` value."""
    if node is None:
        return Setting(None, line), Setting(None, line)
    if node.kind == "scalar":
        return Setting(node.text, node.line, node.col), Setting(None, node.line)
    g = node.pairs.get("group")
    c = node.pairs.get("cancel-in-progress")
    group = (
        Setting(g.value.text, g.line, g.col)
        if g and g.value.kind == "scalar"
        else Setting("", node.line)
    )
    cancel = (
        Setting(c.value.text, c.line, c.col)
        if c and c.value.kind == "scalar"
        else Setting(None, node.line)
    )
    return group, cancel


def _scheduled(on: Node) -> bool:
    if on.kind == "map":
        return "schedule" in on.pairs
    if on.kind == "seq":
        return any(i.kind == "scalar" and i.text == "schedule" for i in on.items)
    return on.text == "schedule"


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "github", text, comments=comments(text))
    docs = parse_yaml(text, templates=False)
    for doc in docs:
        if doc.errors:
            d.errors.extend(DefError(*e) for e in doc.errors)
            return d
    root = docs[0].root if docs else None
    if root is None or root.kind != "map":
        return d
    on = root.pairs.get("on") or root.pairs.get("true")
    if on is None:
        return d
    wf = Entry(
        "workflow", str(root.get("name").text if root.get("name") else path), on.line, on.col
    )
    wf.scheduled = _scheduled(on.value)
    p = root.pairs.get("concurrency")
    wf.settings["group"], wf.settings["cancel"] = concurrency(p.value if p else None, on.line)
    default_wd = root.path("defaults", "run", "working-directory")
    jobs = root.get("jobs")
    for name, jp in jobs.pairs.items() if jobs is not None and jobs.kind == "map" else []:
        job = jp.value
        e = Entry("workflow-job", name, jp.line, jp.col)
        cp = job.pairs.get("concurrency") if job.kind == "map" else None
        e.settings["group"], e.settings["cancel"] = concurrency(cp.value if cp else None, jp.line)
        writes = job.kind == "map" and "environment" in job.pairs
        wd = job.path("defaults", "run", "working-directory") or default_wd
        steps = job.get("steps") if job.kind == "map" else None
        for step in steps.items if steps is not None and steps.kind == "seq" else []:
            if step.kind != "map":
                continue
            uses = step.get("uses")
            if (
                uses is not None
                and uses.kind == "scalar"
                and re.search(r"deploy|publish|release|push", uses.text)
            ):
                writes = True
            run = step.pairs.get("run")
            if run is None or run.value.kind != "scalar":
                continue
            v = run.value
            if WRITES.search(v.text):
                writes = True
            shell = step.get("shell")
            if (
                shell is not None
                and shell.kind == "scalar"
                and shell.text.split()[0] not in ("bash", "sh")
            ):
                continue
            swd = step.get("working-directory") or wd
            line = v.line + (1 if v.raw[:1] in "|>" else 0)
            e.commands.append(
                Command(
                    v.text,
                    line,
                    v.col,
                    cwd=swd.text if swd is not None and swd.kind == "scalar" else None,
                    wrapped=wrapper_lock(v.text),
                    # `shell: sh` runs `sh -e`; the default and `bash` run `bash -e`
                    shell="sh -e"
                    if shell is not None and shell.text.split()[0] == "sh"
                    else "bash -e",
                )
            )
        e.settings["writes"] = Setting("yes" if writes else None, jp.line)
        wf.jobs.append(e)
    d.entries.append(wf)
    return d
