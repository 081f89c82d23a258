"""Fixes for the job-definition rules (RULES.md, "Job definitions"): a key added or a value
replaced in the definition's own syntax, indentation and quoting.  Every edit touches one
value or inserts whole lines; every other byte of the file stays as it was.

LCK601 (unsafe): ``concurrencyPolicy: Forbid``, ``prohibit_overlap = true``,
``max_active_runs=1``, ``IgnoreNew``.  LCK602 (suggestion): a workflow-level ``concurrency``
group, ``resource_group: <job>``.  LCK603 (suggestion): a crontab command wrapped in
``flock -n -E <code> <lock>``.  Nothing here reads anything but the definition's text."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from ..definitions import Command, Definition, Entry, Setting
from ..model import Applicability, Edit, Fix

UNSAFE = Applicability.UNSAFE
SUGGESTION = Applicability.SUGGESTION


_NEWLINE = re.compile("\n")


class _Text:
    """Line offsets of a decoded text (1-based lines)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def line(self, no: int) -> str:
        if not 1 <= no <= len(self.starts):
            return ""
        start = self.starts[no - 1]
        end = self.starts[no] - 1 if no < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def offset(self, no: int, col: int = 1) -> int:
        return self.starts[no - 1] + col - 1

    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"


@lru_cache(maxsize=64)
def _lines(text: str) -> _Text:
    return _Text(text)


def _replace_on_line(t: _Text, no: int, pattern: str, new: str) -> Edit | None:
    """An edit replacing group ``v`` of ``pattern`` (searched on line ``no``) with ``new``."""
    m = re.search(pattern, t.line(no))
    if m is None:
        return None
    return Edit(t.offset(no, m.start("v") + 1), t.offset(no, m.end("v") + 1), new)


def _insert_line(t: _Text, before: int, content: str) -> Edit:
    """Whole lines inserted before line ``before`` (``content`` without its last newline)."""
    nl = t.newline()
    if before > len(t.starts):  # at the end: the file may lack its last newline
        pre = "" if t.text.endswith("\n") or not t.text else nl
        return Edit(len(t.text), len(t.text), pre + content.replace("\n", nl) + nl)
    at = t.offset(before)
    return Edit(at, at, content.replace("\n", nl) + nl)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


# --------------------------------------------------------------------------- LCK601


def overlap_fix(d: Definition, e: Entry, s: Setting) -> Fix | None:
    t = _lines(d.text)
    if e.kind == "cronjob":
        edit = _cronjob_policy(d, t, e, s)
        what = "set `concurrencyPolicy: Forbid`"
    elif e.kind == "nomad-job":
        edit = _nomad_overlap(t, e, s)
        what = "set `prohibit_overlap = true`"
    elif e.kind == "airflow-dag":
        edit = _airflow_runs(t, e, s)
        what = "set `max_active_runs=1`"
    elif e.kind == "windows-task":
        pattern = r"<MultipleInstancesPolicy>\s*(?P<v>Parallel)\s*</"
        edit = _replace_on_line(t, s.line, pattern, "IgnoreNew")
        what = "set `MultipleInstancesPolicy` to `IgnoreNew`"
    else:
        return None
    return Fix(UNSAFE, what, (edit,)) if edit is not None else None


def _yaml_value(key: str) -> str:
    """A pattern for ``key: value`` on one line; group ``v`` is the value inside any quotes."""
    return rf"(?:^|[\s{{,-]){re.escape(key)}\s*:\s*(?P<q>[\"']?)(?P<v>[^\s\"'#,}}]+)(?P=q)"


def _cronjob_policy(d: Definition, t: _Text, e: Entry, s: Setting) -> Edit | None:
    if s.value is not None:
        return _replace_on_line(t, s.line, _yaml_value("concurrencyPolicy"), "Forbid")
    spec = e.anchors.get("spec")  # read with the file (lockcheck.definitions.k8s)
    if spec is None:
        return None
    key_line, first_line, first_col = spec
    pad = t.line(first_line)[: first_col - 1]
    if pad.strip():  # `spec: {schedule: ...}` or keys after a `-`: no line of its own
        return None
    return _insert_line(t, key_line + 1, pad + "concurrencyPolicy: Forbid")


def _nomad_overlap(t: _Text, e: Entry, s: Setting) -> Edit | None:
    if s.value is not None:
        return _replace_on_line(t, s.line, r"prohibit_overlap\s*=\s*\"?(?P<v>\w+)", "true")
    head = t.line(e.line)
    if not head.rstrip().endswith("{"):
        return None
    inner = _indent(head) + "  "
    nxt = t.line(e.line + 1)
    if nxt.strip() and not nxt.strip().startswith("}") and len(_indent(nxt)) > len(_indent(head)):
        inner = _indent(nxt)
    return _insert_line(t, e.line + 1, inner + "prohibit_overlap = true")


def _airflow_runs(t: _Text, e: Entry, s: Setting) -> Edit | None:
    if s.value is not None:
        return _replace_on_line(t, s.line, rf"^.{{{s.col - 1}}}(?P<v>[^\s,)]+)", "1")
    call = _dag_call(t.text, e.line, e.col)
    if call is None or any(k.arg is None for k in call.keywords):
        return None  # `DAG(**kwargs)` may set it already
    args = [*call.args, *call.keywords]
    if not args:
        end = _col(t, call.end_lineno, call.end_col_offset) - 1  # before `)`
        return Edit(t.offset(call.end_lineno, end), t.offset(call.end_lineno, end), _KW)
    last = max(args, key=lambda a: (a.end_lineno, a.end_col_offset))
    last_end = t.offset(last.end_lineno, _col(t, last.end_lineno, last.end_col_offset))
    if last.end_lineno == call.lineno or call.end_lineno == last.end_lineno:
        return Edit(last_end, last_end, ", " + _KW)  # `DAG("id", schedule="@daily")`
    # one argument a line: a new line with the last argument's indentation
    pad = _indent(t.line(last.lineno))
    rest = t.text[last_end : t.offset(call.end_lineno)]
    comma = "" if rest.lstrip(" \t").startswith(",") else ","
    line_end = t.text.find("\n", last_end)
    line_end = len(t.text) if line_end < 0 else line_end + 1
    if comma:
        return Edit(last_end, last_end, "," + t.newline() + pad + _KW + ",")
    return Edit(line_end, line_end, pad + _KW + "," + t.newline())


_KW = "max_active_runs=1"


def _col(t: _Text, line: int, byte_col: int) -> int:
    """The 1-based character column of ``ast``'s UTF-8 byte offset on ``line``."""
    raw = t.line(line).encode("utf-8", "surrogateescape")
    return len(raw[:byte_col].decode("utf-8", "surrogateescape")) + 1


def _dag_call(text: str, line: int, col: int) -> ast.Call | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == line and node.col_offset + 1 == col:
            return node
    return None


# --------------------------------------------------------------------------- LCK602


def workflow_group_fix(d: Definition) -> Fix | None:
    """A workflow-level group before ``jobs:``, indented as the file indents its jobs."""
    t = _lines(d.text)
    jobs = next((n for n in range(1, len(t.starts) + 1) if re.match(r"jobs\s*:", t.line(n))), 0)
    if not jobs:
        return None
    step = "  "
    for n in range(jobs + 1, len(t.starts) + 1):
        line = t.line(n)
        if line.strip() and not line.lstrip().startswith("#"):
            step = _indent(line) or "  "
            break
    block = (
        f"concurrency:\n{step}group: ${{{{ github.workflow }}}}\n{step}cancel-in-progress: false"
    )
    if jobs > 1 and not t.line(jobs - 1).strip():
        block += "\n"  # the file separates its top-level keys with a blank line
    return Fix(
        SUGGESTION,
        "add a workflow-level `concurrency` group (runs wait for the last one)",
        (_insert_line(t, jobs, block),),
    )


def resource_group_fix(d: Definition, e: Entry) -> Fix | None:
    """``resource_group: <job>`` as the first key of a GitLab job."""
    t = _lines(d.text)
    head = t.line(e.line)
    for n in range(e.line + 1, len(t.starts) + 1):
        line = t.line(n)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if len(_indent(line)) <= len(_indent(head)):
            return None  # a job without a block of keys
        name = e.name if re.fullmatch(r"[\w./-]+", e.name) else '"' + e.name.replace('"', "") + '"'
        return Fix(
            SUGGESTION,
            "add `resource_group:` (one run of the job at a time)",
            (_insert_line(t, e.line + 1, f"{_indent(line)}resource_group: {name}"),),
        )
    return None


# --------------------------------------------------------------------------- LCK603


def wrap_fix(d: Definition, c: Command, script: str, code: int) -> Fix | None:
    """A crontab command wrapped in ``flock -n -E <code>`` on a lock named after the script."""
    if d.kind != "crontab":
        return None
    t = _lines(d.text)
    line = t.line(c.line)
    at = c.col - 1
    if not line[at:].startswith(c.text.split("\n", 1)[0][:20]):
        return None
    stem = re.sub(r"[^\w.-]", "_", script.rsplit("/", 1)[-1].rsplit(".", 1)[0]) or "job"
    wrap = f"flock -n -E {code} /var/lock/{stem}.lock "
    return Fix(
        SUGGESTION,
        "wrap the command in `flock -n` (a run that finds the lock taken skips)",
        (Edit(t.offset(c.line, c.col), t.offset(c.line, c.col), wrap),),
    )


# --------------------------------------------------------------------------- LCK604, LCK605


def bound_fix(d: Definition, e: Entry) -> Fix | None:
    """A bound on a run: ``activeDeadlineSeconds`` in a CronJob's job template, a
    ``TimeoutStartSec=`` in a oneshot service (the value is the owner's to choose)."""
    t = _lines(d.text)
    if e.kind == "cronjob":
        at = e.anchors.get("spec.jobTemplate.spec")
        if at is None:
            return None
        key_line, first_line, first_col = at
        pad = t.line(first_line)[: first_col - 1]
        if pad.strip():
            return None
        edit = _insert_line(t, key_line + 1, pad + "activeDeadlineSeconds: 3600")
        what = "bound a run: `activeDeadlineSeconds` (an hour here: above the longest run)"
    elif e.kind == "service":
        s = e.get("TimeoutStartSec")
        if s.value is not None:
            edit = _replace_on_line(t, s.line, r"TimeoutStartSec\s*=\s*(?P<v>\S+)", "1h")
        elif e.get("TimeoutSec").value is not None:
            edit = _replace_on_line(t, e.get("TimeoutSec").line, r"=\s*(?P<v>\S+)", "1h")
        elif t.line(e.line).strip() == "[Service]":
            edit = _insert_line(t, e.line + 1, "TimeoutStartSec=1h")
        else:
            return None
        what = "bound a run: `TimeoutStartSec=` (an hour here: above the longest run)"
    else:
        return None
    return Fix(SUGGESTION, what, (edit,)) if edit is not None else None


def remain_fix(d: Definition, s: Setting) -> Fix:
    """The ``RemainAfterExit=yes`` line removed (the timer can start the unit again)."""
    t = _lines(d.text)
    start = t.offset(s.line)
    end = t.starts[s.line] if s.line < len(t.starts) else len(t.text)
    return Fix(SUGGESTION, "remove `RemainAfterExit=yes`", (Edit(start, end, ""),))
