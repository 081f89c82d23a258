"""Kubernetes CronJobs in YAML (multi-document files, Helm templates with actions masked)."""

from __future__ import annotations

from . import Command, DefError, Definition, Entry, Setting
from .commands import wrapper_lock
from .yamltree import Node, comments, parse_yaml


def setting(parent: Node | None, key: str, missing_line: int) -> Setting:
    """``parent[key]`` as found; missing at ``missing_line`` (unknown when ``parent`` may get
    keys from a template action, or is itself a template)."""
    if parent is None or parent.kind != "map":
        return Setting(None, missing_line, templated=parent is not None)
    p = parent.pairs.get(key)
    if p is None:
        return Setting(None, missing_line, templated=parent.open)
    v = p.value
    if v.kind != "scalar":
        return Setting("", p.line, p.col)
    return Setting(v.text, p.line, p.col, templated=v.templated)


def container_commands(pod_spec: Node | None) -> list[Command]:
    out = []
    containers = pod_spec.get("containers") if pod_spec and pod_spec.kind == "map" else None
    for c in containers.items if containers and containers.kind == "seq" else []:
        if c.kind != "map":
            continue
        words: list[Node] = []
        for key in ("command", "args"):
            v = c.get(key)
            if v is not None and v.kind == "seq":
                words.extend(w for w in v.items if w.kind == "scalar")
        if not words:
            continue
        texts = [w.text for w in words]
        # sh -c 'script': the literal is the command line
        for i, t in enumerate(texts[:-1]):
            if t in ("-c", "-ec", "-xc", "-exc") and i >= 1:
                lit = words[i + 1]
                line = lit.line + (1 if lit.raw[:1] in "|>" else 0)
                shell = "bash" if texts[i - 1].endswith("bash") else "sh"
                out.append(
                    Command(lit.text, line, lit.col, wrapped=wrapper_lock(lit.text), shell=shell)
                )
                break
        else:
            cmd = " ".join(texts)
            out.append(Command(cmd, words[0].line, words[0].col, wrapped=wrapper_lock(cmd)))
    return out


def parse(path: str, text: str) -> Definition:
    d = Definition(path, "k8s", text, comments=comments(text))
    for doc in parse_yaml(text):
        if doc.errors:
            d.errors.extend(DefError(*e) for e in doc.errors)
            continue
        root = doc.root
        if root is None or root.kind != "map":
            continue
        kind = root.pairs.get("kind")
        if kind is None or kind.value.text != "CronJob":
            continue
        spec = root.get("spec")
        e = Entry("cronjob", _name(root), kind.line, kind.col)
        e.settings["concurrencyPolicy"] = setting(spec, "concurrencyPolicy", kind.line)
        job_spec = spec.path("jobTemplate", "spec") if spec is not None else None
        e.settings["activeDeadlineSeconds"] = setting(job_spec, "activeDeadlineSeconds", kind.line)
        if spec is None or spec.kind == "map" and spec.open and job_spec is None:
            e.settings["activeDeadlineSeconds"].templated = True
        pod = job_spec.path("template", "spec") if job_spec is not None else None
        e.commands = container_commands(pod)
        for keys in (("spec",), ("spec", "jobTemplate", "spec")):
            at = _anchor(root, keys)
            if at is not None:
                e.anchors[".".join(keys)] = at
        d.entries.append(e)
    return d


def _anchor(root: Node, path: tuple[str, ...]) -> tuple[int, int, int] | None:
    """The line of the key at ``path`` and the line and column of the first key of its
    block mapping (None: not a block mapping of its own lines)."""
    node, sp = root, None
    for key in path:
        sp = node.pairs.get(key) if node.kind == "map" else None
        if sp is None:
            return None
        node = sp.value
    if node.kind != "map" or node.line <= sp.line:
        return None
    first = min(node.pairs.values(), key=lambda p: (p.line, p.col), default=None)
    if first is None:
        return None
    return sp.line, first.line, first.col


def _name(root: Node) -> str:
    n = root.path("metadata", "name")
    return n.text if n is not None and n.kind == "scalar" and not n.templated else "CronJob"
