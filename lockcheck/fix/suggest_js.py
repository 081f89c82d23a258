"""Suggestions toward Node.js's correct pattern, for the fields the JavaScript frontend left
empty (called by :func:`lockcheck.fix.suggest.enrich`).

The correct pattern is a flock held on an open descriptor, which dies with the process and
never has to be deleted: ``fs-ext``'s ``flockSync(fd, "exnb")`` (a maintained package), or no
lock code at all and the job run under ``flock -n -E 75 LOCK node job.js``.

* ``Acquire.suggestion`` (LCK101/102/202) for a CommonJS exclusive create (``openSync(L,
  "wx")``, ``writeFileSync(L, ..., {flag: "wx"})``) that is alone in a ``try``: the ``try``
  replaced by an untruncated open and ``flockSync`` whose ``catch`` tells contention
  (``EAGAIN``/``EWOULDBLOCK``) apart and exits with the skip code, and the lock file's
  removals dropped; advice without edits for every other shape;
* advice for LCK105/106/108/109 and LCK502.
Nothing here raises; an edit whose result does not parse is not offered."""

from __future__ import annotations

import os
import re

from ..frontends import treesitter
from ..frontends.javascript import syntax
from ..hints import Any
from ..model import Edit, FileFacts, FixTemplate, LockKind
from ..paths import same_path
from .advice import advise_the_rest
from .apply import apply_edits

FLOCK_ADVICE = (
    'hold a flock on an open descriptor (fs-ext: flockSync(fd, "exnb")), or run the job as '
    "`flock -n -E {code} LOCK node {script}`"
)


def _script(facts: FileFacts) -> str:
    return os.path.basename(facts.path.replace("\\", "/")) or "job.js"


def _advice(facts: FileFacts, what: str, code: int) -> FixTemplate:
    return FixTemplate(
        f"{what}: {FLOCK_ADVICE.format(code=code, script=_script(facts))}, which dies with its "
        "holder and is never deleted",
        (),
    )


def enrich(facts: FileFacts, code: int) -> None:
    tree = None
    for acq in facts.acquires:
        if acq.suggestion is not None:
            continue
        if acq.kind is LockKind.EXISTENCE:
            if tree is None:
                tree = syntax.Tree(facts.path, facts.text)
            acq.suggestion = _flock_rewrite(facts, tree, acq, code) or _advice(
                facts, "Replace the existence lock", code
            )
        if acq.placement_suggestion is None and acq.path is not None:
            acq.placement_suggestion = FixTemplate(
                "Lock in a private directory, the same for every run: "
                'path.join(os.homedir(), ".local", "state", JOB) made with mode 0o700',
                (),
            )
    advise_the_rest(facts, lambda what: _advice(facts, what, code))


def _call_at(tree: Any, start: int) -> Any:
    for c in tree.calls:
        if tree.offsets.char(c.start_byte) == start:
            return c
    return None


def _flock_rewrite(facts: FileFacts, tree: Any, acq: Any, code: int) -> FixTemplate | None:
    flags = acq.mechanism.partition('(..., "')[2]
    if acq.check_then_create or "x" not in flags or acq.path is None:
        return None
    if any(n.type == "import_statement" for n in tree.root.named_children):
        return None  # ESM: the rewrite would need an import; advice only
    call = _call_at(tree, acq.span.start)
    if call is None:
        return None
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "member_expression" or not syntax.text(fn).endswith("Sync"):
        return None
    fs_name = syntax.text(fn.child_by_field_name("object"))
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", fs_name):
        return None
    tr = next((a for a in syntax.ancestors(call) if a.type == "try_statement"), None)
    if tr is None or tr.child_by_field_name("finalizer") is not None:
        return None
    body = syntax.block_statements(tr.child_by_field_name("body"))
    if len(body) != 1 or syntax.statement_of(call) != body[0]:
        return None
    if body[0].type != "expression_statement" or syntax.function_of(tr) is not None:
        return None  # the value of the create is used, or the lock is taken in a function
    text, off = facts.text, tree.offsets
    s, e = off.char(tr.start_byte), off.char(tr.end_byte)
    ls = text.rfind("\n", 0, s) + 1
    ind = text[ls:s]
    if ind.strip():
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    lock = syntax.text(syntax.arg(call, 0))
    step = "  " if not ind or ind.startswith(" ") else "\t"
    lines = [
        f"const lockFd = {fs_name}.openSync({lock}, {fs_name}.constants.O_RDWR | "
        f"{fs_name}.constants.O_CREAT, 0o600);",
        "try {",
        f'{step}require("fs-ext").flockSync(lockFd, "exnb"); // held until this process ends',
        "} catch (e) {",
        f'{step}if (e.code !== "EAGAIN" && e.code !== "EWOULDBLOCK") throw e;',
        f'{step}console.error("another run holds the lock");',
        f"{step}process.exit({code});",
        "}",
    ]
    edits = [Edit(s, e, (nl + ind).join(lines))]
    for rm in facts.removals:
        if rm.stale_guard or not same_path(rm.path, acq.path):
            continue
        if rm.drop_fix is None:
            return None
        edits += rm.drop_fix.edits
    edits.sort(key=lambda x: x.start)
    if any(a.end > b.start for a, b in zip(edits, edits[1:], strict=False)):
        return None
    out = apply_edits(text, edits)
    lang = (
        "typescript" if facts.path.lower().endswith(syntax.TYPESCRIPT_EXTENSIONS) else "javascript"
    )
    root = treesitter.parser(lang).parse(treesitter.source_bytes(out)).root_node
    if treesitter.first_error(root) is not None:
        return None
    return FixTemplate(
        "hold a flock (fs-ext) on an untruncated open: it dies with the process, busy exits "
        f"{code}, the file is never deleted",
        tuple(edits),
    )
