"""Suggestions toward PowerShell's correct pattern, for the fields the PowerShell frontend left
empty (called by :func:`lockcheck.fix.suggest.enrich`).

The correct pattern is a named mutex whose name starts with ``Global\\`` (every logon
session sees it), taken with ``WaitOne(0)``, a distinct busy exit code, released in
``finally``; an ``AbandonedMutexException`` means the previous holder died and the mutex is
ours.  It leaves no file, so nothing can seal the slot.

* ``Acquire.suggestion`` (LCK101/102/202) for a ``New-Item``/``[IO.File]::Open(...,
  CreateNew)`` lock alone in a ``try`` with ``catch`` and no ``finally``: the ``try`` replaced
  by the mutex, the removal in ``finally`` replaced by ``ReleaseMutex()`` and the other
  removals of the lock file dropped; advice without edits for every other shape;
* advice for LCK105/106/108/109, LCK406 and LCK502.
Nothing here raises; an edit whose result does not parse is not offered."""

from __future__ import annotations

import os
import re

from ..frontends import treesitter
from ..frontends.powershell import syntax
from ..hints import Any
from ..model import Edit, FileFacts, FixTemplate, LockKind
from ..paths import same_path
from .advice import advise_the_rest
from .apply import apply_edits

MUTEX_ADVICE = (
    "a named mutex: [System.Threading.Mutex]::new($false, 'Global\\{job}') with WaitOne(0), "
    "exit {code} when busy, ReleaseMutex() in finally"
)


def _job(facts: FileFacts) -> str:
    base = os.path.splitext(os.path.basename(facts.path.replace("\\", "/")))[0]
    return re.sub(r"[^A-Za-z0-9._-]", "-", base).strip(".-") or "job"


def _advice(facts: FileFacts, what: str, code: int) -> FixTemplate:
    return FixTemplate(
        f"{what}: hold {MUTEX_ADVICE.format(job=_job(facts), code=code)}; it dies with its "
        "holder and leaves no file",
        (),
    )


def enrich(facts: FileFacts, code: int) -> None:
    tree = None
    for acq in facts.acquires:
        if acq.suggestion is None and acq.kind is LockKind.EXISTENCE:
            if tree is None:
                tree = syntax.Tree(facts.text)
            acq.suggestion = _mutex_rewrite(facts, tree, acq, code) or _advice(
                facts, "Replace the existence lock", code
            )
        if acq.open_failure_is_busy and acq.open_check_fix is None:
            acq.open_check_fix = FixTemplate(
                "Tell contention apart: catch only AbandonedMutexException around WaitOne"
                if acq.mechanism == "named mutex"
                else "Tell contention apart: catch [System.IO.IOException] and test "
                "($_.Exception.HResult -band 0xFFFF) -in 32, 33; exit 3 on any other error",
                (),
            )
        if acq.placement_suggestion is None and acq.path is not None:
            acq.placement_suggestion = _advice(facts, "Use no lock file", code)
    advise_the_rest(
        facts, lambda what: _advice(facts, what, code), "Do not stop a PID read from a file"
    )


def _node_at(tree: Any, start: int) -> Any:
    for n in tree.nodes:
        if n.type in ("command", "invokation_expression") and tree.char(n.start_byte) == start:
            return n
    return None


def _mutex_rewrite(facts: FileFacts, tree: Any, acq: Any, code: int) -> FixTemplate | None:
    if acq.check_then_create or acq.path is None or acq.busy is None:
        return None
    node = _node_at(tree, acq.span.start)
    if node is None or syntax.scope_of(node) is not None:
        return None
    tr = next((a for a in syntax.ancestors(node) if a.type == "try_statement"), None)
    if tr is None or any(c.type == "finally_clause" for c in tr.named_children):
        return None
    if len(syntax.statements(syntax.block_of(tr))) != 1:
        return None
    if treesitter.first_error(tree.root) is not None:
        return None  # the result could not be checked
    text = facts.text
    s, e = tree.char(tr.start_byte), tree.char(tr.end_byte)
    ls = text.rfind("\n", 0, s) + 1
    ind = text[ls:s]
    if ind.strip():
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    job = _job(facts)
    lines = [
        f"$lockMutex = [System.Threading.Mutex]::new($false, 'Global\\{job}')",
        "try { $lockOwned = $lockMutex.WaitOne(0) }",
        "catch [System.Threading.AbandonedMutexException] { $lockOwned = $true }",
        "if (-not $lockOwned) {",
        f"    Write-Host '{job}: another run holds the lock'",
        f"    exit {code}",
        "}",
    ]
    edits = [Edit(s, e, (nl + ind).join(lines))]
    released = False
    for rm in facts.removals:
        if rm.stale_guard or not same_path(rm.path, acq.path):
            continue
        if rm.drop_fix is None or len(rm.drop_fix.edits) != 1:
            return None
        d = rm.drop_fix.edits[0]
        if rm.via == "finally" and not released:
            region = text[d.start : d.end]
            cmd = text[rm.span.start : rm.span.end]
            if cmd not in region:
                return None
            edits.append(Edit(d.start, d.end, region.replace(cmd, "$lockMutex.ReleaseMutex()", 1)))
            released = True
        else:
            edits.append(d)
    edits.sort(key=lambda x: x.start)
    if any(a.end > b.start for a, b in zip(edits, edits[1:], strict=False)):
        return None
    out = apply_edits(text, edits)
    root = treesitter.parser("powershell").parse(treesitter.source_bytes(out)).root_node
    if treesitter.first_error(root) is not None:
        return None
    return FixTemplate(
        f"hold a Global\\ named mutex instead: no file to seal the slot, busy exits {code}, "
        "released in finally",
        tuple(edits),
    )
