"""Suggestions and fixes the frontends leave empty, built from the facts and the source text.

:func:`enrich` fills, where it is None and the shape is simple enough to be sure of:

* ``Acquire.suggestion`` for existence and check-then-create locks (LCK101/102/103/202): the
  reference flock pattern written with the script's own lock path, indentation and busy
  branch (shell: ``exec 9>>"$LOCK"`` + ``flock -n 9``; Python: ``os.open`` +
  ``fcntl.flock(..., LOCK_EX | LOCK_NB)`` with ``except BlockingIOError``), the removals of the
  lock dropped, and the lock moved to ``${XDG_STATE_HOME:-$HOME/.local/state}/JOB`` when it
  was in a synced or script-relative place;
* ``ReleaseHook.move_fix`` (LCK203): a one-line shell ``trap`` or Python
  ``atexit.register`` moved to just after the statement that acquires the lock; a Python
  ``try``/``finally`` gets the acquire and its busy exit moved before the ``try``;
* ``StatusOverride.keep_status_fix`` (LCK404): ``exit N`` / ``exit $?`` in an EXIT trap
  replaced by a bare ``exit``, which keeps the status the script was ending with;
* ``LivenessCheck.suggestion``, ``Kill.suggestion``, ``Removal.suggestion`` (LCK105, LCK108,
  LCK106): rewrites of the script's own text (the kill dropped, the stale-lock breaker
  dropped, the liveness test replaced by the same file's flock rewrite or its simple ``if``
  dropped), advice without edits where no such rewrite is sure; and ``Acquire.placement_suggestion`` (LCK502: the lock moved
  to the runtime directory; shell ``exec 9>`` turned into ``exec 9<>``, Python ``open(p, "w")``
  into ``os.fdopen(os.open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600), "r+")``).

Edit contents are final text (the checks use these templates' edits as they are, without
``FixTemplate.render``): the skip exit code written is the one passed to :func:`enrich`
(``settings.skip_exit_code``, 75 by default), and a frontend's ``{code}`` status fix embedded
in a suggestion is rendered here.
Nothing here raises: a shape that is not understood gets no suggestion.
"""

from __future__ import annotations

import ast
import re

from ..collector import paused
from ..model import (
    Acquire,
    Edit,
    FileFacts,
    FixTemplate,
    LockKind,
    PartKind,
    PathExpr,
)
from ..paths import (
    predictable_name,
    private_first,
    same_path,
    script_relative,
    shared_tmp_dir,
    synced_reason,
)
from . import takeover
from .apply import apply_edits

FD = 9
EX_NO_LOCK = 3  # the lock file cannot be opened: loud, never read as "busy" (LCK406)
# The root of a lock moved out of a synced or script-relative place: a private directory under
# the user's state home, which exists for cron, systemd units and CI alike, and is the same
# for every way the job is started.  Not the session's runtime directory: cron has no
# XDG_RUNTIME_DIR and /run/user/UID exists only while the user has a session, so a manual
# run and a cron run would lock in two places and not exclude each other.  ``{job}`` is a
# private subdirectory made with mode 0700.
LOCK_DIR_SH = "lock_dir=${{XDG_STATE_HOME:-$HOME/.local/state}}/{job}"
LOCK_DIR_PY = (
    'lock_dir = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")',
    'lock_dir = os.path.join(lock_dir, "{job}")',
    "os.makedirs(lock_dir, 0o700, exist_ok=True)",
)


def job_name(facts: FileFacts) -> str:
    """The private lock directory's name: the script's file name without its extension."""
    base = re.sub(r"\.(sh|bash|ksh|dash|py)$", "", facts.path.replace("\\", "/").rsplit("/", 1)[-1])
    base = re.sub(r"[^A-Za-z0-9._-]", "-", base).strip(".-")
    return base or "lockcheck"


def sh_lock_dir_line(facts: FileFacts, ind: str, nl: str) -> str:
    """``lock_dir=...; (umask 077 && mkdir -p "$lock_dir")`` as one line (``set -u`` safe)."""
    return (
        f'{ind}{LOCK_DIR_SH.format(job=job_name(facts))}; (umask 077 && mkdir -p "$lock_dir"){nl}'
    )


def py_lock_dir_lines(facts: FileFacts, ind: str, nl: str) -> str:
    return "".join(f"{ind}{line.format(job=job_name(facts))}{nl}" for line in LOCK_DIR_PY)


def enrich(facts: FileFacts, skip_code: int = 75) -> None:
    """Fill the suggestion/fix fields the frontend left None (in place); ``skip_code`` is the
    configured skip exit code written by the suggestions."""
    try:
        if facts.language == "shell":
            _Shell(facts, skip_code).run()
        elif facts.language == "python":
            with paused():  # each rewrite checked is a parse of the whole file
                _Python(facts, skip_code).run()
        elif facts.language == "javascript":
            from .suggest_js import enrich as enrich_js

            enrich_js(facts, skip_code)
        elif facts.language == "powershell":
            from .suggest_ps import enrich as enrich_ps

            enrich_ps(facts, skip_code)
    except Exception:  # a suggestion is a courtesy: never break the analysis
        return
    finally:
        _TOP_LEVEL[:] = [None, None]  # the file's tree is not kept past its suggestions


# --------------------------------------------------------------------------- text helpers


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def line_end(text: str, pos: int) -> int:
    """Offset just past the newline of the line holding ``pos`` (or the end of text)."""
    i = text.find("\n", pos)
    return len(text) if i < 0 else i + 1


def indent_at(text: str, pos: int) -> str:
    s = line_start(text, pos)
    m = re.match(r"[ \t]*", text[s:])
    return m.group(0) if m else ""


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _ok_span(text: str, span) -> bool:
    return span is not None and 0 <= span.start < span.end <= len(text)


_REDIRS = re.compile(
    r"""(?:[ \t]*[0-9]*(?:>>|>\||&>|>&|<>|<|>)[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[^\s;&|]+))+"""
)


def delete_statement(text: str, start: int, end: int) -> Edit | None:
    """An edit removing the statement ``text[start:end]`` and its separator: the whole line
    when it stands alone, else the ``;``/``&&`` joining it to its neighbour."""
    ls, le = line_start(text, start), line_end(text, end)
    m = _REDIRS.match(text, end, le)
    if m:  # the command's own redirections (echo $$ > "$PIDFILE") go with it
        end = m.end()
    before, after = text[ls:start], text[end:le]
    after_s = after.strip()
    if not before.strip() and after_s in ("", ";"):
        return Edit(ls, le, "")
    m = re.search(r"\s*(;|&&)\s*$", before)
    if m and after_s in ("", ";", "}", "fi", "done") or (m and after_s.startswith(";")):
        return Edit(ls + m.start(), end, "")
    m2 = re.match(r"\s*;\s*", after)
    if m2 and not before.strip():
        return Edit(start, end + m2.end(), "")
    return None


# --------------------------------------------------------------------------- shell


def sh_quote_path(expr: str) -> str:
    """Quote a shell word for use after a redirection."""
    e = expr.strip()
    if not e:
        return e
    if e[0] in "'\"" or re.fullmatch(r"[A-Za-z0-9_./~:+-]+", e):
        return e
    return f'"{e}"'


def sh_name(path: PathExpr) -> str | None:
    """The entry name in shell syntax (for moving the lock to another directory)."""
    out = []
    for p in path.basename_parts():
        if p.kind is PartKind.LIT:
            if not re.fullmatch(r"[A-Za-z0-9_.+,@%-]*", p.value):
                return None
            out.append(p.value)
        elif p.kind is PartKind.VAR and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p.value):
            out.append("${" + p.value + "}")
        elif p.kind is PartKind.SCRIPT_NAME:
            out.append("${0##*/}")
        elif p.kind is PartKind.USER:
            out.append("$(id -un)")
        else:
            return None
    name = "".join(out).strip("/")
    return name or None


_SH_STATUS = re.compile(r"exit(?:\s+(\S+))?")


def _hooked_acquire(text: str, facts, hook):
    """The acquire whose busy path ``hook`` (a release trap, ``finally`` or ``atexit``) is
    active in, when both spans are usable."""
    if not hook.active_in_busy_of or not _ok_span(text, hook.span):
        return None
    idx = hook.active_in_busy_of[0]
    if idx >= len(facts.acquires):
        return None
    acq = facts.acquires[idx]
    return acq if _ok_span(text, acq.span) else None


class _Shell:
    def __init__(self, facts: FileFacts, code: int = 75) -> None:
        self.code = code
        self.facts = facts
        self.text = facts.text
        self.nl = newline_of(facts.text)
        # take-overs the acquires' rewrites replace whole, with that rewrite
        self.takeovers: list[tuple[takeover.Takeover, FixTemplate]] = []
        self._ts_tree = None  # the original's tree-sitter tree, parsed on first use

    def run(self) -> None:
        f = self.facts
        _safe_breaker_drops(f, self)
        for acq in f.acquires:
            if acq.suggestion is None and acq.kind is LockKind.EXISTENCE:
                acq.suggestion = self._covering(acq.span) or self._guard(acq)
            if acq.placement_suggestion is None:
                acq.placement_suggestion = self._placement(acq)
        for hook in f.hooks:
            if hook.move_fix is None:
                hook.move_fix = self._move_hook(hook)
        for ov in f.overrides:
            if ov.keep_status_fix is None:
                ov.keep_status_fix = self._keep_status(ov)
        for nx in f.non_exclusive:
            if nx.suggestion is None:
                nx.suggestion = self._mkdir_p(nx)
        # the parts of a take-over (the PID test, the kill, the removal) get its rewrite: each
        # dropped alone would leave the rest of the take-over, which breaks the flock
        for part in (*f.liveness, *f.kills, *(r for r in f.removals if r.stale_guard)):
            fix = self._covering(part.span)
            if fix is not None:
                part.suggestion = fix
        self._advice()
        for acq in f.acquires:
            self._open_check_without_takeover(acq)

    def _covering(self, span) -> FixTemplate | None:
        return next((fix for tk, fix in self.takeovers if takeover.covers(tk, span)), None)

    # -- LCK406 -----------------------------------------------------------------------
    def _open_check_without_takeover(self, acq: Acquire) -> None:
        """The frontend's LCK406 edit (``|| exit 3`` after the open) with the kills of a
        stored PID that come before the lock dropped too (their LCK108 rewrites): once the
        lock works, a second copy that first kills the stored PID stops the holder."""
        fix = acq.open_check_fix
        if fix is None or not fix.edits or acq.kind is LockKind.EXISTENCE:
            return
        extra: list[Edit] = []
        for k in self.facts.kills:
            if k.pid_file is None or k.signal in ("0", "SIG0") or k.span.start > acq.span.start:
                continue
            if k.suggestion is None or not k.suggestion.edits:
                return  # a take-over that cannot be dropped: the frontend's edit stands
            extra.extend(k.suggestion.edits)
        if not extra:
            return
        edits = _dedupe(list(fix.edits) + extra)
        if edits is None or not _shell_ok(self.text, edits):
            return
        acq.open_check_fix = FixTemplate(
            f"{fix.message}; drop the kill of the stored PID, which would stop the holder",
            tuple(edits),
        )

    # -- the lock path for the rewrite ---------------------------------------------------
    def lock_path(self, acq: Acquire) -> tuple[str, str, bool] | None:
        """(shell word for the lock file, note, moved) or None; a moved lock is in
        ``$lock_dir`` (:func:`sh_lock_dir_line`)."""
        path = acq.path
        if path is None:
            return None
        moved = synced_reason(path) or script_relative(path)
        if moved:
            name = sh_name(path)
            if name is None:
                return None
            return f'"$lock_dir/{name}"', f"moved to local run-private storage ({moved})", True
        written = path.text or ""
        if not written or "\n" in written or "`" in written:
            return None
        return sh_quote_path(written), "", False

    # -- LCK101/102/103/202 ------------------------------------------------------------
    def _guard(self, acq: Acquire) -> FixTemplate | None:
        text = self.text
        if acq.service_record or not _ok_span(text, acq.span):
            return None
        lp = self.lock_path(acq)
        if lp is None:
            return None
        lock, note, moved = lp
        edits: list[Edit] = []
        # where the guard statement begins: the test of a check-then-create, else the acquire
        first = acq.test_span if acq.check_then_create and acq.test_span else acq.span
        if not _ok_span(text, first):
            return None
        ls = line_start(text, first.start)
        head = text[ls : first.start].strip()
        if re.match(r"(elif|else|then|do|\||&&)\b", head):
            return None  # not at the start of a statement we can put a line before
        ind = indent_at(text, first.start)
        # the open is checked on its own: a lock file that cannot be opened is not "busy"
        open_line = f"{ind}exec {FD}>>{lock} || exit {EX_NO_LOCK}{self.nl}"
        if moved:
            open_line = sh_lock_dir_line(self.facts, ind, self.nl) + open_line
        if acq.check_then_create:
            t = acq.test_span
            if t is None or not _ok_span(text, t):
                return None
            test_text = text[t.start : t.end]
            negated = bool(re.match(r"(\[\[?|test)\s+!\s", test_text))
            before = text[ls : t.start]
            bang = re.search(r"!\s*$", before)
            if bang:  # `! [ -e L ]`: drop the negation too
                negated = not negated
                t_start = ls + bang.start()
            else:
                t_start = t.start
            # the test said "lock exists -> busy"; the flock says "got it"
            repl = f"flock -n {FD}" if negated else f"! flock -n {FD}"
            edits.append(_E(t_start, t.end, repl))
            d = delete_statement(text, acq.span.start, acq.span.end)
            if d is None or d.start < t.end:
                return None
            edits.append(d)
            for chk in self.facts.liveness:  # `[ -f P ] && kill -0 "$(cat P)"`: it goes too
                if chk.pid_file is not None and same_path(chk.pid_file, acq.path):
                    part = self.drop_test_part(chk.span)
                    if part is not None:
                        edits.append(part)
        else:
            a_start, a_end = acq.span.start, acq.span.end
            m = re.match(r"\{\s*", text[a_start:a_end])
            if m:  # a span that takes in the brace of `{ echo $$ > L; }`
                a_start += m.end()
            m = _REDIRS.match(text, a_end, line_end(text, a_end))
            if m and re.search(r"(?<![0-9&])>(?!&)", m.group(0)):
                a_end = m.end()  # the noclobber `> L` is the acquire itself
            edits.append(_E(a_start, a_end, f"flock -n {FD}"))
        open_edit = _E(ls, ls, open_line)
        edits.insert(0, open_edit)
        busy = acq.busy
        edits.extend(self._busy_edits(busy))
        if acq.check_then_create and (busy is None or not busy.ends_run):
            # a take-over branch (stop the old run, then go on): with flock the holder is
            # alive, so the branch ends the run; the kill of the stored PID goes
            ends = self._end_busy_if(first.start)
            if ends is None:
                return None
            edits.append(ends)
            for k in self.facts.kills:
                if k.pid_file is not None and same_path(k.pid_file, acq.path):
                    d = self.drop_kill(k.span, whole=False)  # the test is rewritten
                    if d is None:
                        return None
                    edits.append(d)
                    nxt = line_end(text, d.end - 1) if d.end > d.start else d.end
                    dropped = text[d.start : d.end].lstrip()
                    if (
                        d.content == ""
                        and dropped.startswith("kill")
                        and re.match(r"[ \t]*sleep\s+\S+[ \t]*\n", text[nxt:])
                    ):
                        # "give the old run time to stop": no old run is stopped any more
                        edits.append(Edit(nxt, line_end(text, nxt), ""))
        edits.extend(self._drop_removals(acq.path))
        tk = None if acq.check_then_create else takeover.find(self, acq)
        if tk is not None:  # the holder of a flock is alive: only its "alive" branch stays
            edits = takeover.replace_body(text, tk, edits)
        if not moved and acq.kind is LockKind.EXISTENCE and acq.mechanism == "mkdir":
            # a lock directory that also holds files ("$LOCK_DIR/pid"): it stays a directory,
            # the lock file goes inside it
            word = lock[1:-1] if lock.startswith('"') else lock
            probe = _dedupe(edits)
            if probe is not None and (word + "/") in apply_edits(text, probe):
                k = edits.index(open_edit)
                edits[k] = _E(
                    ls,
                    ls,
                    f"{ind}mkdir -p {lock} || exit {EX_NO_LOCK}{self.nl}"
                    f'{ind}exec {FD}>>"{word}/.lock" || exit {EX_NO_LOCK}{self.nl}',
                )
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _sh_unused_assignments(text, edits))
        if edits is None or not _shell_ok(text, edits):
            return None
        msg = f"Hold a flock on fd {FD} instead of the {acq.mechanism} lock; keep the lock file"
        if note:
            msg += f"; {note}"
        if tk is not None:
            msg += "; drop the take-over (a failed flock means the holder is alive)"
        fix = FixTemplate(msg, tuple(edits))
        if tk is not None:
            self.takeovers.append((tk, fix))
        return fix

    def _busy_edits(self, busy) -> list[Edit]:
        """The busy branch with the configured skip code and a durable record."""
        text = self.text
        edits: list[Edit] = []
        if busy is not None and busy.status_fix is not None:
            edits.extend(busy.status_fix.render(code=self.code))
        if busy is not None and not busy.durable and _ok_span(text, busy.span):
            bs = busy.span
            cmd = text[bs.start : bs.end]
            if cmd.startswith("exit") and not text[line_start(text, bs.start) : bs.start].strip():
                bind = indent_at(text, bs.start)
                rec = f'{bind}logger -t "${{0##*/}}" "lock busy, run skipped"{self.nl}'
                edits.append(_E(line_start(text, bs.start), line_start(text, bs.start), rec))
            elif cmd.startswith("exit"):
                rec = 'logger -t "${0##*/}" "lock busy"; '
                if re.search(r"(\|\||&&)\s*$", text[line_start(text, bs.start) : bs.start]):
                    # `... || exit 75`: grouped, or the exit would run whatever the test said
                    edits += [_E(bs.start, bs.start, "{ " + rec), _E(bs.end, bs.end, "; }")]
                else:
                    edits.append(_E(bs.start, bs.start, rec))
        return edits

    # -- LCK109 -----------------------------------------------------------------------
    def _mkdir_p(self, nx) -> FixTemplate | None:
        """``mkdir -p D || busy`` (or ``if ! mkdir -p D``, ``until mkdir -p D``): the
        directory kept and made on a line of its own, a flock on a file inside it opened on
        the next, each checked apart from the busy branch (LCK406), and the test becomes
        ``flock -n 9``; the removals of the directory go (the lock file is inside it)."""
        text = self.text
        if nx.path is None or not _ok_span(text, nx.span):
            return None
        m = re.fullmatch(
            r"mkdir\s+(?:-p|--parents)\s+(\"[^\"`\\\n]*\"|[\w./${}-]+)",
            text[nx.span.start : nx.span.end],
        )
        if not m:
            return None
        q = m.group(1)
        inner = q[1:-1] if q.startswith('"') else q
        ls = line_start(text, nx.span.start)
        if not re.fullmatch(
            r"[ \t]*(?:(?:if|while|until)[ \t]+(?:![ \t]*)?)?", text[ls : nx.span.start]
        ):
            return None
        ind, nl = indent_at(text, ls), self.nl
        head = (
            f"{ind}mkdir -p {q} || exit {EX_NO_LOCK}{nl}"
            f'{ind}exec {FD}<>"{inner}/.lock" || exit {EX_NO_LOCK}{nl}'
        )
        edits = [_E(ls, ls, head), _E(nx.span.start, nx.span.end, f"flock -n {FD}")]
        edits += self._busy_edits(nx.busy)
        edits += self._drop_removals(nx.path)
        edits = _dedupe(edits)
        if edits is None or not _shell_ok(text, edits):
            return None
        return FixTemplate(
            f"Keep the directory and hold a flock on fd {FD} on a file inside it; the open "
            "checked apart from the busy branch",
            tuple(edits),
        )

    def _end_busy_if(self, pos: int) -> Edit | None:
        """``exit {code}`` (with a record) put before the ``fi`` of the ``if`` at ``pos``
        whose ``then`` is the busy branch; None for another shape."""
        text = self.text
        head = text[line_start(text, pos) : line_end(text, pos)].rstrip()
        if not re.match(r"\s*if\b", head) or not head.endswith("then"):
            return None
        end = self._statement_end(pos)
        if end is None:
            return None
        fi = line_start(text, end - 1)
        if not re.match(r"\s*fi\s*$", text[fi:end]):
            return None
        first = line_end(text, pos)
        bind = indent_at(text, first) if first < fi else indent_at(text, pos) + "    "
        rec = f'{bind}logger -t "${{0##*/}}" "lock busy, run skipped"{self.nl}'
        return Edit(fi, fi, f"{rec}{bind}exit {self.code}{self.nl}")

    def _drop_removals(self, path: PathExpr | None) -> list[Edit]:
        """The lock file of a flock is never deleted: the removals of the lock ``path`` and
        the cleanup traps that only remove, dropped."""
        text = self.text
        edits: list[Edit] = []
        for rm in self.facts.removals:
            if not same_path(rm.path, path):
                continue
            if rm.stale_guard:  # it would delete the flock file under a long run
                if rm.suggestion is not None:
                    edits.extend(rm.suggestion.edits)
                continue
            if rm.drop_fix is not None and rm.drop_fix.edits:
                edits.extend(rm.drop_fix.render(code=self.code))
                continue
            if rm.via == "trap":
                hook = rm.hook_span
                if hook is None or not _ok_span(text, hook) or not self._trap_only_removes(hook):
                    continue
                d = delete_statement(text, hook.start, hook.end)
            elif _ok_span(text, rm.span):
                d = delete_statement(text, rm.span.start, rm.span.end)
            else:
                d = None
            if d is not None:
                edits.append(d)
        return edits

    def _trap_only_removes(self, hook) -> bool:
        """The trap's action does nothing but remove lock paths (and maybe exit)."""
        src = self.text[hook.start : hook.end]
        m = re.match(r"trap\s+(['\"])(.*)\1\s+[A-Z0-9 ]+$", src, re.S)
        if not m:
            return False
        for part in re.split(r";|&&|\|\||\n", m.group(2)):
            p = part.strip()
            if not p or p in ("true", ":") or re.fullmatch(r"exit(\s+\S+)?", p):
                continue
            if re.match(r"(rm|rmdir|unlink)\b", p):
                continue
            return False
        return True

    # -- LCK203 -----------------------------------------------------------------------
    def _move_hook(self, hook) -> FixTemplate | None:
        text = self.text
        if not hook.active_in_busy_of or not _ok_span(text, hook.span):
            return None
        src = text[hook.span.start : hook.span.end]
        if not src.startswith("trap") or "\n" in src:
            return None
        ls, le = line_start(text, hook.span.start), line_end(text, hook.span.end)
        if text[ls : hook.span.start].strip() or text[hook.span.end : le].strip():
            return None
        acq = _hooked_acquire(text, self.facts, hook)
        if acq is None or acq.span.start < le:
            return None
        # after the statement that acquires: the end of its busy branch, or its own line
        after = self._statement_end(acq.span.end)
        if after is None:
            return None
        ind = indent_at(text, acq.span.start)
        line = f"{ind}{src}{newline_of(text)}"
        edits = (Edit(ls, le, ""), Edit(after, after, line))
        return FixTemplate(
            "Install the release only after the lock is acquired",
            tuple(edits),
        )

    def _statement_end(self, pos: int) -> int | None:
        """Offset just past the line closing the statement holding ``pos``: the line itself
        when it ends the statement, else the next `fi`/`}`/`done` line at its indentation."""
        text = self.text
        le = line_end(text, pos)
        line = text[line_start(text, pos) : le].rstrip()
        if line.endswith(("then", "{", "do", "\\", "||", "&&", "|")):
            ind = len(indent_at(text, pos))
            i = le
            while i < len(text):
                j = line_end(text, i)
                cur = text[i:j]
                stripped = cur.strip()
                cur_ind = len(cur) - len(cur.lstrip(" \t"))
                if stripped and cur_ind <= ind:
                    if re.match(r"(fi|}|done)\b", stripped):
                        return j
                    if not re.match(r"(else|elif)\b", stripped):
                        return None
                i = j
            return None
        return le

    # -- LCK404 -----------------------------------------------------------------------
    def _keep_status(self, ov) -> FixTemplate | None:
        text = self.text
        if not _ok_span(text, ov.span):
            return None
        src = text[ov.span.start : ov.span.end]
        if not re.fullmatch(r"exit\s+\S+", src):
            return None
        return FixTemplate(
            "End the trap with a bare `exit`, which keeps the status the script was ending with",
            (Edit(ov.span.start, ov.span.end, "exit"),),
        )

    # -- LCK502 -----------------------------------------------------------------------
    def _placement(self, acq: Acquire) -> FixTemplate | None:
        text = self.text
        path = acq.path
        if path is None or private_first(path) or not predictable_name(path):
            return None
        if shared_tmp_dir(path) is None:
            return None
        span = acq.open_span or acq.span
        if not _ok_span(text, span):
            return None
        name = sh_name(path)
        written = path.text
        if name is None or not written:
            return None
        src = text[span.start : span.end]
        i = src.find(written)
        if i < 0 or src.find(written, i + 1) >= 0:
            return None
        ls = line_start(text, span.start)
        if text[ls : span.start].strip():
            return None  # not at the start of a line we can put the directory's line before
        edits = [
            Edit(ls, ls, sh_lock_dir_line(self.facts, indent_at(text, span.start), self.nl)),
            Edit(span.start + i, span.start + i + len(written), f'"$lock_dir/{name}"'),
        ]
        rest = text[span.end : line_end(text, span.end)]
        if src.startswith("exec") and not re.match(r"\s*(\|\||&&)", rest):
            # the open checked on its own: a lock file that cannot be opened is not "busy"
            edits.append(Edit(span.end, span.end, f" || exit {EX_NO_LOCK}"))
        edits.extend(self._drop_removals(acq.path))  # a removal of the old path would be foreign
        m = re.search(r"(\d?)>(?!>|&)(\s*)$", src[:i])
        if m and acq.truncating:  # exec 9>FILE: open without truncating
            edits.append(
                Edit(
                    span.start + m.start(),
                    span.start + m.end() - len(m.group(2)),
                    f"{m.group(1)}<>",
                )
            )
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _sh_unused_assignments(text, edits))
        if edits is None or not _shell_ok(text, edits):
            return None
        return FixTemplate(
            "Lock in a private directory that exists for cron and systemd too, open without "
            "truncating, and check the open apart from the busy branch",
            tuple(edits),
        )

    # -- LCK105/106/108 -----------------------------------------------------------------
    def _advice(self) -> None:
        _safe_drop_rewrites(self.facts, self)
        _advice_fields(self.facts, self.code)

    def ok(self, edits) -> bool:
        return _shell_ok(self.text, edits)

    def fill(self, edits) -> list[Edit]:
        """Line deletions that would leave a ``then``/``do``/``else``/``{`` body empty (a
        syntax error bash reports and tree-sitter lets pass) leave a ``:`` instead."""
        text = self.text
        out = []
        for e in edits:
            if (
                e.content
                or e.start != line_start(text, e.start)
                or e.end != line_start(text, e.end)
            ):
                out.append(e)
                continue
            prev = ""
            i = e.start
            while i > 0 and not prev:
                j = line_start(text, i - 1)
                prev = re.sub(r"\s#.*$", "", text[j:i]).strip()
                i = j
            nxt = ""
            i = e.end
            while i < len(text) and not nxt:
                j = line_end(text, i)
                cur = text[i:j].strip()
                nxt = "" if cur.startswith("#") else cur
                i = j
            opens = re.search(r"(?:^|[\s;])(then|do|else)$|\{$", prev)
            closes = re.match(r"(fi|done|else|elif|esac)\b|}", nxt) or not nxt
            if opens and closes:
                kept = text[e.start : e.end]
                ind = re.match(r"[ \t]*", kept).group(0)
                out.append(Edit(e.start, e.end, f"{ind}:{self.nl}"))
            else:
                out.append(e)
        return out

    def drop_statement(self, span) -> Edit | None:
        e = delete_statement(self.text, span.start, span.end)
        if e is None:
            return None
        (e,) = self.fill([e])
        return e if self.ok([e]) else None

    def drop_kill(self, span, whole: bool = True) -> Edit | None:
        """LCK108: the ``kill`` command gone (the whole statement, or its part of a
        ``&&``/``;`` list); None when it is a condition or nothing parses.  With ``whole``,
        an ``if`` that only stops the old run (:meth:`_takeover_if`) goes whole."""
        text = self.text
        if not _ok_span(text, span):
            return None
        kill = next((k for k in self.facts.kills if k.span == span), None)
        if whole and kill is not None and _stops_a_run(kill.signal):
            done = self._takeover_if(span)
            if done is not None:
                return done
        ls, le = line_start(text, span.start), line_end(text, span.end)
        before = text[ls : span.start]
        if re.search(r"(?:^|[\s;])(if|elif|while|until|!)\s*$", before) or re.search(
            r"\|\|\s*$", before
        ):
            return None  # the kill's status decides something: no plain drop
        m = _REDIRS.match(text, span.end, le)
        end = m.end() if m else span.end
        nxt = text[end : line_end(text, le)] if le < len(text) else ""
        if "$?" in text[end:le] or "$?" in nxt:
            return None  # the kill's status is read next: dropping it changes what is tested
        cands = []
        d = delete_statement(text, span.start, span.end)
        if d is not None:
            cands.append(d)
        m2 = re.match(r"[ \t]*(&&|;)[ \t]*", text[end:le])
        if m2 and not re.search(r"(\|\||&&|\|)\s*$", before):
            cands.append(Edit(span.start, end + m2.end(), ""))
        m3 = re.match(r"[ \t]*\|\|[ \t]*(?:true|:)\b", text[end:le])
        if m3:  # `kill ... || true`: the guard of the kill goes with it
            d = delete_statement(text, span.start, end + m3.end())
            if d is not None:
                cands.append(d)
        if not text[end:le].lstrip().startswith("||"):
            cands.append(Edit(span.start, end, ":"))
        for c in cands:
            (c,) = self.fill([c])
            if self.ok([c]):
                return c
        return None

    def drop_test_part(self, span) -> Edit | None:
        """``&& <liveness test>`` at the end of an ``if``/``while`` condition, removed."""
        text = self.text
        if not _ok_span(text, span):
            return None
        ls, le = line_start(text, span.start), line_end(text, span.end)
        m = re.search(r"[ \t]*&&[ \t]*$", text[ls : span.start])
        if not m or not re.match(r"[ \t]*(if|elif|while)\b.*\S", text[ls : ls + m.start()]):
            return None
        r = _REDIRS.match(text, span.end, le)
        end = r.end() if r else span.end
        if not re.match(r"[ \t]*;?[ \t]*(then|do)\b", text[end:le]):
            return None
        return Edit(ls + m.start(), end, "")

    def drop_liveness_if(self, span) -> Edit | None:
        """LCK105: ``if <liveness test>; then ...; fi`` (no elif/else, the test alone in the
        condition) removed whole; None for any other shape."""
        text = self.text
        if not _ok_span(text, span) or not text.isascii():
            return None
        node = self._enclosing_if(span)
        if node is None:
            return None
        kids = node.children
        if any(k.type in ("elif_clause", "else_clause") for k in kids):
            return None
        then = next((k for k in kids if k.type == "then"), None)
        if then is None or kids[0].type != "if":
            return None
        cond = text[kids[0].end_byte : then.start_byte].strip().rstrip(";").strip()
        test = text[span.start : span.end]
        if not cond.startswith(test) or not (span.start < then.start_byte):
            return None
        rest = cond[len(test) :]
        if rest.strip() and not (_REDIRS.fullmatch(rest)):
            return None
        return self._drop_if(node)

    def _enclosing_if(self, span):
        """The innermost tree-sitter ``if_statement`` around ``span`` (an ASCII text that
        parses), else None."""
        text = self.text
        if not _ok_span(text, span) or not text.isascii():
            return None
        if self._ts_tree is None:  # parsed once per file: one query per fact is no re-parse
            from ..frontends.shell import tree_sitter_source

            if not self.ok([]) or _BASH_PARSER is None:
                return None
            src = tree_sitter_source(text)
            if len(src) != len(text):
                return None
            self._ts_tree = _BASH_PARSER.parse(src)
        node = self._ts_tree.root_node.descendant_for_byte_range(span.start, span.end)
        while node is not None and node.type != "if_statement":
            node = node.parent
        return node

    def _drop_if(self, node) -> Edit | None:
        """The lines of the ``if`` statement ``node`` removed (``:`` where a body would be
        left empty); None when it shares a line with other code or nothing parses."""
        text = self.text
        s, e = node.start_byte, node.end_byte
        ls, le = line_start(text, s), line_end(text, e)
        if text[ls:s].strip() or text[e:le].strip():
            return None
        after = line_end(text, le)
        if ls > 0 and not text[line_start(text, ls - 1) : ls].strip() and le < len(text):
            if not text[le:after].strip():  # blank lines both sides: one is left
                le = after
        (edit,) = self.fill([Edit(ls, le, "")])
        if not self.ok([edit]):
            edit = Edit(s, e, ":")
            if not self.ok([edit]):
                return None
        return edit

    def _takeover_if(self, span) -> Edit | None:
        """``if <test>; then [echo ...;] kill <stored PID>; [sleep N;] fi`` (no elif/else,
        nothing else in the branch) removed whole: with a flock there is no old run to stop,
        nor to wait for."""
        node = self._enclosing_if(span)
        if node is None or any(k.type in ("elif_clause", "else_clause") for k in node.children):
            return None
        kids = node.children
        then = next((i for i, k in enumerate(kids) if k.type == "then"), None)
        if then is None or kids[-1].type != "fi":
            return None
        body = [k for k in kids[then + 1 : -1] if k.type != "comment"]
        if not body or not any(k.start_byte <= span.start and span.end <= k.end_byte for k in body):
            return None
        for k in body:
            word = re.match(r"[\w:.-]+", self.text[k.start_byte : k.end_byte])
            cmd = word.group(0) if word else ""
            if k.start_byte <= span.start and span.end <= k.end_byte:
                if cmd != "kill":
                    return None  # the kill decides something (`if kill ...`): not a plain drop
            elif cmd not in ("echo", "printf", "logger", "sleep", ":", "true"):
                return None
        return self._drop_if(node)


def _stops_a_run(signal: str) -> bool:
    """A signal that ends the process it is sent to (by default): a take-over, not a
    message to a service such as ``kill -USR1`` (reopen logs) or ``-HUP`` (reload)."""
    sig = signal.upper().removeprefix("SIG")
    return sig in ("", "TERM", "KILL", "INT", "QUIT", "15", "9", "2", "3")


_PURE = {"dirname", "basename", "id", "cd", "pwd", "hostname", "whoami", "realpath"}


def _sh_unused_assignments(text: str, edits) -> list[Edit]:
    """Deletions of plain ``NAME=value`` lines whose variable the rewrite stopped using (a
    lock path replaced by one in ``$lock_dir``), so that no unused variable is left."""
    out: list[Edit] = []
    for _round in range(3):  # a variable used only by a dropped one goes too
        more = _sh_unused_round(text, list(edits) + out)
        if not more:
            break
        out += more
    return out


def _sh_unused_round(text: str, edits) -> list[Edit]:
    new = apply_edits(text, edits)
    out = []
    for m in re.finditer(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)=([^\n;&|`]*)\n", text, re.M):
        name, value = m.group(1), m.group(2)
        subst = re.findall(r"\$\(\s*(\w+)", value)
        if any(c not in _PURE for c in subst) or any(
            e.start < m.end() and m.start() < e.end for e in edits
        ):
            continue  # a command substitution may have effects; an edited line stays
        use = re.compile(r"\$\{?" + name + r"\b")
        if (
            use.search(text)
            and not use.search(new)
            and not re.search(rf"\bexport\s+{name}\b", text)
        ):
            out.append(Edit(m.start(), m.end(), ""))
    return out


# --------------------------------------------------------------------------- python


def _import_edits(text: str, tree: ast.Module, names: list[str]) -> list[Edit]:
    """Insertions of ``import NAME`` for the standard modules ``names`` not imported at top
    level, where isort (ruff I001) wants them: among the standard-library ``import`` lines in
    name order, before its ``from`` lines, or as a section of their own."""
    import sys

    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    have: set[str] = set()
    block = []  # the leading import statements
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                have.update(a.asname or a.name for a in node.names)
            block.append(node)
        elif not block and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        elif block:
            break
    missing = sorted(n for n in set(names) if n not in have)
    if not missing:
        return []
    nl = newline_of(text)

    def top(node) -> str:
        if isinstance(node, ast.Import):
            return node.names[0].name.split(".")[0]
        return (node.module or "").split(".")[0] if not node.level else ""

    plain = [n for n in block if isinstance(n, ast.Import) and top(n) in stdlib]
    froms = [n for n in block if isinstance(n, ast.ImportFrom) and top(n) in stdlib]
    if plain or froms:
        out = []
        for name in missing:
            after = next((n for n in plain if top(n).lower() > name.lower()), None)
            if after is not None:
                pos = _offset(text, after.lineno, 0)
            elif plain:
                pos = _offset(text, plain[-1].end_lineno + 1, 0)
            else:
                pos = _offset(text, froms[0].lineno, 0)
            out.append(Edit(pos, pos, f"import {name}{nl}"))
        return out
    # no standard-library import yet: a section of its own, after any __future__ import
    lines = "".join(f"import {name}{nl}" for name in missing)
    future = [n for n in block if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    rest = [n for n in block if n not in future]
    if rest:
        pos = _offset(text, rest[0].lineno, 0)
        return [Edit(pos, pos, lines + nl)]
    if future:
        pos = _offset(text, future[-1].end_lineno + 1, 0)
        return [Edit(pos, pos, nl + lines)]
    pos = line_end(text, 0) if text.startswith("#!") else 0
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        pos = _offset(text, first.end_lineno + 1, 0)
        lines = nl + lines
    if text[pos : pos + len(nl)] != nl:
        lines += nl
    return [Edit(pos, pos, lines)]


def _used_names(tree: ast.AST) -> set[str]:
    """The names ``tree`` reads: every ``Name``, and the base name of every attribute chain."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            base = n
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                out.add(base.id)
    return out


def _stmt_span(text: str, stmt: ast.stmt) -> tuple[int, int]:
    """From the start of the line of a top-level statement's first part (its decorators
    included) to its end."""
    first = min((stmt, *getattr(stmt, "decorator_list", ())), key=lambda n: n.lineno)
    s, e = _node_span(text, stmt)
    return line_start(text, min(s, _node_span(text, first)[0])), e


class _TopLevel:
    """A text's tree as :func:`_unused_import_edits` reads it, for all the rewrites of one
    file: each top-level statement's span and the names it uses (a rewrite changes a few
    statements; the names of the others are the same in the rewritten text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree = ast.parse(text)
        self.stmts = [(*_stmt_span(text, st), _used_names(st)) for st in self.tree.body]
        self.used = set().union(*(u for _s, _e, u in self.stmts))
        # a future import may change how the rest is read: a rewrite touching one is read
        # whole
        self.futures = [
            (s, e)
            for (s, e, _u), st in zip(self.stmts, self.tree.body, strict=True)
            if isinstance(st, ast.ImportFrom) and st.module == "__future__"
        ]

    def used_after(self, new_text: str, new_tree: ast.Module, edits) -> set[str]:
        """:func:`_used_names` of ``new_tree``, the parse of ``new_text`` (``self.text`` with
        ``edits`` applied): a statement no edit reaches keeps its text, so its names are
        taken from the original's."""
        ordered = sorted(edits, key=lambda x: (x.start, x.end))
        if any(s <= x.end and x.start <= e for x in ordered for s, e in self.futures) or any(
            "__future__" in x.content for x in ordered
        ):
            return _used_names(new_tree)
        kept: dict[tuple[int, int], set[str]] = {}
        for s, e, used in self.stmts:
            if any(x.start <= e and s <= x.end for x in ordered):
                continue  # reached (or touched) by an edit: read from the new tree
            shift = sum(len(x.content) - (x.end - x.start) for x in ordered if x.end < s)
            kept[(s + shift, e + shift)] = used
        out: set[str] = set()
        for st in new_tree.body:
            used = kept.get(_stmt_span(new_text, st))
            out |= used if used is not None else _used_names(st)
        return out


_TOP_LEVEL: list = [None, None]  # the last text and its _TopLevel (None: it does not parse)


def _top_level(text: str) -> _TopLevel | None:
    if _TOP_LEVEL[0] is not text:
        try:
            top = _TopLevel(text)
        except (SyntaxError, ValueError):
            top = None
        _TOP_LEVEL[:] = [text, top]
    return _TOP_LEVEL[1]


def _unused_import_edits(text: str, edits) -> list[Edit]:
    """Deletions of top-level one-name ``import X`` / ``from M import X`` lines whose name the
    rewrite stopped using (ruff F401), e.g. ``signal`` after the kill is dropped."""
    if not _budget_left(text):
        return []  # the rewrite's own check is refused too: see MAX_REWRITE_CHECKS
    top = _top_level(text)
    if top is None:
        return []
    old_tree, before = top.tree, top.used
    candidates = []  # (node, name, line start, line end): what the rewrite may leave unused
    for node in old_tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or len(node.names) != 1:
            continue
        alias = node.names[0]
        name = (alias.asname or alias.name).split(".")[0]
        if name == "*" or name not in before:
            continue
        s, e = _node_span(text, node)
        ls, le = line_start(text, s), line_end(text, e)
        if text[ls:s].strip() or text[e:le].strip():
            continue
        if any(x.start < le and ls < x.end for x in edits):
            continue
        candidates.append((name, ls, le))
    try:
        new_text = apply_edits(text, edits)
        if not candidates:
            return []  # (the rewritten text need not be parsed: nothing could be dropped)
        new_tree = ast.parse(new_text)
    except (SyntaxError, ValueError):
        return []
    after = top.used_after(new_text, new_tree, edits)
    out = []
    for name, ls, le in candidates:
        if name in after:
            continue
        prev = text[line_start(text, ls - 1) : ls] if ls else "x"
        if not prev.strip() and le < len(text) and not text[le : line_end(text, le)].strip():
            le = line_end(text, le)  # the import was its section: the blank line after goes too
        out.append(Edit(ls, le, ""))
    return out


_OFFSETS: tuple[str, list[int]] | None = None  # the last text's line starts


def _line_offsets(text: str) -> list[int]:
    """Offsets of the line starts of ``text``, computed once per text (the last one is kept:
    a file's suggestions ask for many positions in the same text)."""
    global _OFFSETS
    cached = _OFFSETS
    if cached is not None and cached[0] is text:
        return cached[1]
    offs = [0]
    offs.extend(m.end() for m in re.finditer("\n", text))
    _OFFSETS = (text, offs)
    return offs


def _offset(text: str, line: int, col_bytes: int) -> int:
    offs = _line_offsets(text)
    if line - 1 >= len(offs):
        return len(text)
    start = offs[line - 1]
    end = offs[line] if line < len(offs) else len(text)
    if col_bytes <= end - start and text[start : start + col_bytes].isascii():
        return start + col_bytes  # ASCII before the column: bytes are characters
    raw = text[start:end].encode("utf-8", "surrogateescape")
    return start + len(raw[:col_bytes].decode("utf-8", "surrogateescape"))


def _node_span(text: str, node: ast.AST) -> tuple[int, int]:
    return (
        _offset(text, node.lineno, node.col_offset),
        _offset(text, node.end_lineno, node.end_col_offset),
    )


def py_path_expr(path: PathExpr) -> str | None:
    """A Python expression for the lock path moved to ``lock_dir`` (:data:`LOCK_DIR_PY`)."""
    out = []
    for p in path.basename_parts():
        if p.kind is PartKind.LIT:
            out.append(p.value.replace("\\", "\\\\").replace('"', '\\"'))
        elif p.kind is PartKind.SCRIPT_NAME:
            out.append("{os.path.splitext(os.path.basename(__file__))[0]}")
        else:
            return None
    name = "".join(out).strip("/")
    if not name:
        return None
    lit = f'f"{name}"' if "{" in name else f'"{name}"'
    return f"os.path.join(lock_dir, {lit})"  # lock_dir: LOCK_DIR_PY, written before


class _Python:
    def __init__(self, facts: FileFacts, code: int = 75) -> None:
        self.code = code
        self.facts = facts
        self.text = facts.text
        self.nl = newline_of(facts.text)
        self.tree: ast.Module | None = None
        self._block_cache: dict[int, list] = {}

    def run(self) -> None:
        f = self.facts
        if not (f.acquires or f.hooks or f.liveness or f.kills or f.removals):
            return  # nothing to suggest for: the source is not parsed again
        try:
            self.tree = ast.parse(self.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        _safe_breaker_drops(self.facts, self)
        for k in self.facts.kills:
            if k.suggestion is None:
                k.suggestion = self._takeover(k)
        for acq in self.facts.acquires:
            if acq.suggestion is None and acq.kind is LockKind.EXISTENCE:
                if acq.check_then_create:
                    # `if P.exists(): os.kill(old, SIGTERM)`, then P written: the take-over's
                    # rewrite is this lock's too (a second rewrite of the same lines would keep
                    # the kill in the busy branch)
                    acq.suggestion = self._takeover_of(acq) or self._test_then_create(acq)
                else:
                    acq.suggestion = self._guard(acq)
            if acq.placement_suggestion is None:
                acq.placement_suggestion = self._placement(acq)
        for hook in self.facts.hooks:
            if hook.move_fix is None:
                hook.move_fix = self._move_hook(hook)
        _safe_drop_rewrites(self.facts, self)
        _advice_fields(self.facts, self.code)
        self._drop_unused_imports()

    # -- LCK108: a take-over of a PID file --------------------------------------------
    def _takeover_of(self, acq: Acquire) -> FixTemplate | None:
        """The take-over rewrite of the kill whose PID file is the lock ``acq`` creates."""
        for k in self.facts.kills:
            if k.suggestion is not None and same_path(k.pid_file, acq.path):
                return k.suggestion
        return None

    def _takeover(self, k) -> FixTemplate | None:
        """``if P.exists(): <read the PID>; <say so>; os.kill(old, SIGTERM)``, then the
        holder's PID written to P (stop the old run, then go on): the ``if`` becomes a flock
        of P whose busy branch ends the run; the PID record stays, P's removals go (the lock
        file of a flock is kept)."""
        text, path = self.text, k.pid_file
        if path is None or not path.text or not _stops_a_run(k.signal) or self.tree is None:
            return None
        name = path.text
        guard = None
        for st, (s, e), node, field in self._chain(k.span.start):
            if isinstance(st, ast.If) and any(
                _node_span(text, b)[0] <= k.span.start < _node_span(text, b)[1] for b in st.body
            ):
                guard = (st, s, e, node, field)
        if guard is None:
            return None
        st, gs, ge, gnode, gfield = guard
        if st.orelse or name not in ast.unparse(st.test) or st.body[0].lineno <= st.test.end_lineno:
            return None
        for b in st.body:  # nothing but the take-over: the PID read, messages, the kill, a wait
            src = ast.unparse(b)
            if isinstance(b, ast.Assign) and name in src:
                continue
            if isinstance(b, ast.Expr) and isinstance(b.value, ast.Call):
                fn = ast.unparse(b.value.func)
                if fn in ("os.kill", "print", "time.sleep") or fn.startswith(("log", "logging.")):
                    continue
            if isinstance(b, ast.Pass):
                continue
            return None
        block = getattr(gnode, gfield)
        later = block[block.index(st) + 1 :]
        if not any(name in ast.unparse(x) and "getpid" in ast.unparse(x) for x in later):
            return None  # no PID record of the holder follows: not a PID-file lock
        ls = line_start(text, gs)
        if text[ls:gs].strip() or text[ge : line_end(text, ge)].strip():
            return None
        moved = synced_reason(path) or script_relative(path)
        lock = py_path_expr(path) if moved else name
        if lock is None:
            return None
        ind = indent_at(text, gs)
        body_ind = indent_at(text, _node_span(text, st.body[0])[0])
        nl = self.nl
        block_text = (py_lock_dir_lines(self.facts, ind, nl) if moved else "") + (
            f"{ind}lock_fd = os.open({lock}, os.O_RDWR | os.O_CREAT, 0o600){nl}"
            f"{ind}try:{nl}"
            f"{body_ind}fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB){nl}"
            f"{ind}except BlockingIOError:{nl}"
            f'{body_ind}print("a previous run still holds the lock: run skipped", file=sys.stderr){nl}'
            f"{body_ind}sys.exit({self.code}){nl}"
        )
        edits = [Edit(ls, line_end(text, ge), block_text)]
        for rm in self.facts.removals:
            if not same_path(rm.path, path) or not _ok_span(text, rm.span):
                continue
            d = self._drop_stmt(rm.span.start)
            if d is None and rm.drop_fix is not None and rm.drop_fix.edits:
                edits.extend(rm.drop_fix.render(code=self.code))
            elif d is not None:
                edits.append(d)
        edits.extend(_import_edits(text, self.tree, ["fcntl", "os", "sys"]))
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _unused_import_edits(text, edits))
        if edits is None or not _python_ok(text, edits):
            return None
        return FixTemplate(
            "Hold an fcntl.flock on the PID file instead of stopping the run recorded in it: "
            "a failed flock means that run is alive, and this one is skipped",
            tuple(edits),
        )

    def _drop_unused_imports(self) -> None:
        """The frontend's removal drops (LCK201: ``atexit.register(os.remove, L)``) and the
        drop rewrites (LCK108: ``os.kill``) also drop an import they leave unused (F401)."""
        f = self.facts
        for holder, attr in (
            *((rm, "drop_fix") for rm in f.removals),
            *((rm, "suggestion") for rm in f.removals),
            *((k, "suggestion") for k in f.kills),
            *((c, "suggestion") for c in f.liveness),
        ):
            fix = getattr(holder, attr)
            if fix is None or not fix.edits:
                continue
            extra = _unused_import_edits(self.text, list(fix.render(code=self.code)))
            both = _dedupe(list(fix.edits) + extra) if extra else None
            if both is not None and _python_ok(self.text, both):
                setattr(holder, attr, FixTemplate(fix.message, tuple(both)))

    # -- LCK105/106/108 -----------------------------------------------------------------
    def ok(self, edits) -> bool:
        return _python_ok(self.text, edits)

    def fill(self, edits) -> list[Edit]:
        return list(edits)  # the Python frontend's drop edits already leave `pass`

    def drop_statement(self, span) -> Edit | None:
        """The expression statement that is exactly ``span`` removed (``pass`` when its
        block would be empty)."""
        found = self._stmt_at(span.start)
        if found is None:
            return None
        stmt, (ss, se), parent, field = found
        text = self.text
        if not isinstance(stmt, ast.Expr) or text[ss:se].strip() != text[span.start : span.end]:
            return None
        return self._drop_lines(stmt, ss, se, parent, field)

    def _drop_lines(self, stmt, ss: int, se: int, parent, field) -> Edit | None:
        text = self.text
        ls, le = line_start(text, ss), line_end(text, se)
        tail = text[se:le].strip()
        if text[ls:ss].strip() or (tail and not tail.startswith("#")):
            return None
        block = getattr(parent, field)
        if len(block) == 1:
            edit = self._unwrap_try(parent, field) or _E(
                ls, le, f"{indent_at(text, ss)}pass{self.nl}"
            )
        else:
            edit = Edit(ls, le, "")
        return edit if self.ok([edit]) else None

    def drop_test_part(self, span) -> Edit | None:
        return None  # the Python rewrites replace whole statements

    def drop_kill(self, span) -> Edit | None:
        if not _ok_span(self.text, span):
            return None
        return self.drop_statement(span)

    def drop_liveness_if(self, span) -> Edit | None:
        """``if <liveness call>:`` (the call alone as the test, no else) removed whole."""
        text = self.text
        if not _ok_span(text, span):
            return None
        for st, (s, e), node, field in reversed(self._chain(span.start)):
            if not isinstance(st, ast.If):
                continue
            ts, te = _node_span(text, st.test)
            if not (ts <= span.start and span.end <= te):
                continue
            if st.orelse or (ts, te) != (span.start, span.end):
                return None
            return self._drop_lines(st, s, e, node, field)
        return None

    def _chain(self, pos: int) -> list:
        """The statements containing offset ``pos``, outermost first, each with its block.

        Descends from the module through the blocks that contain ``pos`` only (statement
        spans nest), so a query costs the blocks on one path, not the whole tree."""
        out = []
        todo: list[ast.AST] = [self.tree]
        while todo:
            node = todo.pop()
            for field, entries in self._blocks(node):
                for st, s, e in entries:
                    if s <= pos < e:
                        out.append((st, (s, e), node, field))
                        todo.append(st)
            # the blocks of a statement's except handlers and match cases
            for child_field in ("handlers", "cases"):
                for child in getattr(node, child_field, None) or ():
                    if not isinstance(child, ast.stmt):
                        todo.append(child)
        out.sort(key=lambda x: (x[1][0], -x[1][1]))
        return out

    def _blocks(self, node: ast.AST) -> list:
        """``[(field, [(stmt, start, end), ...]), ...]`` for the statement blocks of
        ``node`` (computed once per node)."""
        key = id(node)
        got = self._block_cache.get(key)
        if got is None:
            got = []
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if not isinstance(block, list):
                    continue
                spans = [
                    (st, *_node_span(self.text, st)) for st in block if isinstance(st, ast.stmt)
                ]
                got.append((field, spans))
            self._block_cache[key] = got
        return got

    def _move_hook(self, hook) -> FixTemplate | None:
        """LCK203: move a one-line ``atexit.register(...)`` to just after the statement that
        acquires the lock (in the same block); a ``try``/``finally`` gets the acquire moved
        before it (:meth:`_move_finally`)."""
        text = self.text
        if hook.mechanism == "finally" and hook.active_in_busy_of:
            return self._move_finally(hook)
        if hook.mechanism != "atexit" or not hook.active_in_busy_of:
            return None
        acq = _hooked_acquire(self.text, self.facts, hook)
        if acq is None or acq.span.start < hook.span.end:
            return None
        hchain = self._chain(hook.span.start)
        if not hchain:
            return None
        hst, (hs, he), hnode, hfield = hchain[-1]
        if not isinstance(hst, ast.Expr) or hst.lineno != hst.end_lineno:
            return None
        ls, le = line_start(text, hs), line_end(text, he)
        if text[ls:hs].strip() or text[he:le].strip():
            return None
        for _st, (_s, e), node, field in self._chain(acq.span.start):
            if node is hnode and field == hfield:
                at = line_end(text, e)
                if at <= le:
                    return None
                line = text[ls:le] if text[ls:le].endswith("\n") else text[ls:le] + self.nl
                return FixTemplate(
                    "Register the release only after the lock is acquired",
                    (Edit(ls, le, ""), Edit(at, at, line)),
                )
        return None

    def _move_finally(self, hook) -> FixTemplate | None:
        """LCK203: ``try: <acquire>; <work> ... finally: <remove>`` with the busy exit before
        the work: the acquire (and its busy handling) moved before the ``try``, so that the
        ``finally`` is installed only after the lock is held.  Two simple shapes:

        * the busy exit is within the leading statements of the ``try`` body (a nested
          ``try``/``except`` or an ``if`` around the acquire): those statements move out,
          dedented;
        * the busy exit is an ``except`` of this very ``try``: the acquire statements and that
          handler become a ``try``/``except`` of their own before it.
        """
        text = self.text
        acq = _hooked_acquire(self.text, self.facts, hook)
        if acq is None:
            return None
        busy = acq.busy
        if busy is None or not busy.ends_run:
            return None
        if not _ok_span(text, busy.span):
            return None
        found = None
        for st, (s, e), _node, _field in self._chain(hook.span.start):
            if isinstance(st, ast.Try) and s == hook.span.start:
                found = (st, s, e)
        if found is None:
            return None
        tr, ts, _te = found
        if not tr.finalbody or not tr.body:
            return None
        spans = [_node_span(text, st) for st in tr.body]

        def index_of(pos: int) -> int | None:
            return next((i for i, (a, b) in enumerate(spans) if a <= pos < b), None)

        k_acq = index_of(acq.span.start)
        if k_acq is None:
            return None
        nl = self.nl
        try_ls = line_start(text, ts)
        if text[try_ls:ts].strip():
            return None
        ind = text[try_ls:ts]
        body_ind = indent_at(text, spans[0][0])
        if not body_ind.startswith(ind) or len(body_ind) <= len(ind):
            return None
        k_busy = index_of(busy.span.start)
        if k_busy is not None:  # the busy exit is in the leading statements
            k = max(k_acq, k_busy)
            if k + 1 >= len(tr.body):
                return None  # nothing left to protect
            a, b = line_start(text, spans[0][0]), line_end(text, spans[k][1])
            if text[a : spans[0][0]].strip() or text[spans[k][1] : b].strip():
                return None
            moved = self._dedent(text[a:b], len(body_ind) - len(ind), tr.body[: k + 1])
            if moved is None:
                return None
            edits = [Edit(try_ls, try_ls, moved), Edit(a, b, "")]
        else:  # the busy exit is an except of this try
            handler = next(
                (
                    h
                    for h in tr.handlers
                    if _node_span(text, h)[0] <= busy.span.start < _node_span(text, h)[1]
                ),
                None,
            )
            if handler is None or tr.orelse or k_acq + 1 >= len(tr.body):
                return None
            a, b = line_start(text, spans[0][0]), line_end(text, spans[k_acq][1])
            if text[a : spans[0][0]].strip() or text[spans[k_acq][1] : b].strip():
                return None
            hs, he = _node_span(text, handler)
            hls, hle = line_start(text, hs), line_end(text, he)
            if text[hls:hs] != ind or text[he:hle].strip():
                return None
            block = f"{ind}try:{nl}" + text[a:b] + text[hls:hle]
            if not block.endswith("\n"):
                block += nl
            edits = [Edit(try_ls, try_ls, block), Edit(a, b, ""), Edit(hls, hle, "")]
        if not _python_ok(text, edits):
            return None
        return FixTemplate(
            "Acquire the lock before the try, so that its finally runs only for the holder",
            tuple(edits),
        )

    def _dedent(self, chunk: str, width: int, stmts) -> str | None:
        """``chunk`` with ``width`` leading columns removed from every line; None when a line
        is not indented that far or a string spans lines (its text would change)."""
        for st in stmts:
            for n in ast.walk(st):
                if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)):
                    if n.lineno != n.end_lineno:
                        return None
        out = []
        for line in chunk.splitlines(keepends=True):
            if not line.strip():
                out.append(line)
            elif line[:width].strip() or len(line) < width:
                return None
            else:
                out.append(line[width:])
        return "".join(out)

    def _placement(self, acq: Acquire) -> FixTemplate | None:
        """LCK502: the lock in the runtime directory, opened without truncating or following
        a planted link (``os.open(..., O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)``)."""
        text = self.text
        path = acq.path
        if path is None or private_first(path) or not predictable_name(path):
            return None
        if shared_tmp_dir(path) is None:
            return None
        span = acq.open_span or acq.span
        if not _ok_span(text, span) or not path.text:
            return None
        new_path = py_path_expr(path)
        if new_path is None:
            return None
        src = text[span.start : span.end]
        flags = "os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600"
        if re.match(r"open\s*\(", src):
            edit = _E(span.start, span.end, f'os.fdopen(os.open({new_path}, {flags}), "r+")')
        elif re.match(r"os\.open\s*\(", src):
            edit = _E(span.start, span.end, f"os.open({new_path}, {flags})")
        else:
            i = src.find(path.text)
            if i < 0 or src.find(path.text, i + 1) >= 0:
                return None
            edit = _E(span.start + i, span.start + i + len(path.text), new_path)
        found = self._stmt_at(span.start)
        if found is None:
            return None
        ss = found[1][0]
        ls = line_start(text, ss)
        if text[ls:ss].strip():
            return None
        edits = [_E(ls, ls, py_lock_dir_lines(self.facts, indent_at(text, ss), self.nl)), edit]
        edits += _import_edits(text, self.tree, ["os"])
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _unused_import_edits(text, edits))
        if edits is None or not _python_ok(text, edits):
            return None
        return FixTemplate(
            "Lock in a private directory that exists for cron and systemd too; open without "
            "truncating or following links",
            tuple(edits),
        )

    def _stmt_at(self, pos: int):
        """The innermost statement containing offset ``pos`` and its parent's body list."""
        chain = self._chain(pos)
        return chain[-1] if chain else None

    def lock_path(self, acq: Acquire) -> tuple[str, str] | None:
        path = acq.path
        if path is None:
            return None
        moved = synced_reason(path) or script_relative(path)
        if moved:
            expr = py_path_expr(path)
            note = f"moved to local run-private storage ({moved})"
            return (expr, note, True) if expr else None
        if not path.text or "\n" in path.text:
            return None
        return path.text, "", False

    def _guard(self, acq: Acquire) -> FixTemplate | None:
        text = self.text
        if acq.service_record or not _ok_span(text, acq.span):
            return None
        found = self._stmt_at(acq.span.start)
        if found is None:
            return None
        stmt, (ss, se), parent, field = found
        call_src = text[acq.span.start : acq.span.end]
        stmt_src = text[ss:se]
        lp = self.lock_path(acq)
        if lp is None:
            return None
        lock, note, moved = lp
        edits: list[Edit] = []
        var = "lock_fd"
        opener = f"os.open({lock}, os.O_RDWR | os.O_CREAT, 0o600)"
        if isinstance(stmt, ast.Expr) and stmt_src.strip() == call_src.strip():
            edits.append(_E(ss, se, f"fcntl.flock({var}, fcntl.LOCK_EX | fcntl.LOCK_NB)"))
        elif (  # fd = os.open(L, O_CREAT | O_EXCL ...) / f = open(L, "x"): the same name
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and _node_span(text, stmt.value) == (acq.span.start, acq.span.end)
            and re.match(r"(os\.)?open\s*\(", call_src)
        ):
            var = stmt.targets[0].id
            if not call_src.startswith("os."):
                opener = f'os.fdopen({opener}, "r+")'
            edits.append(_E(ss, se, f"fcntl.flock({var}, fcntl.LOCK_EX | fcntl.LOCK_NB)"))
            # the flock lives on the open file: a close right after the acquire (the
            # existence lock's `fh.close()`) would release it before the work
            edits.extend(self._drop_closes(getattr(parent, field), stmt, var))
        elif (  # with open(L, "x") as f: the held descriptor opened first, flocked, wrapped
            isinstance(stmt, ast.With)
            and len(stmt.items) == 1
            and _node_span(text, stmt.items[0].context_expr) == (acq.span.start, acq.span.end)
            and re.match(r"open\s*\(", call_src)
            and isinstance(parent, ast.Try)
            and field == "body"
        ):
            wls = line_start(text, ss)
            if text[wls:ss].strip():
                return None
            wind = indent_at(text, ss)
            edits.append(
                _E(wls, wls, f"{wind}fcntl.flock({var}, fcntl.LOCK_EX | fcntl.LOCK_NB){self.nl}")
            )
            edits.append(_E(acq.span.start, acq.span.end, f'os.fdopen({var}, "r+")'))
        else:
            return None  # the acquire's value is used some other way: no simple rewrite
        # open the lock file before the try that guards the acquire (or before the acquire)
        anchor = ss
        if isinstance(parent, ast.Try) and field == "body":
            anchor = _node_span(text, parent)[0]
            for h in parent.handlers:
                if h.type is None:
                    continue
                for name_node in ast.walk(h.type):
                    if isinstance(name_node, ast.Name) and name_node.id == "FileExistsError":
                        a, b = _node_span(text, name_node)
                        edits.append(_E(a, b, "BlockingIOError"))
        ind = indent_at(text, anchor)
        ls = line_start(text, anchor)
        if text[ls:anchor].strip():
            return None
        open_line = f"{ind}{var} = {opener}{self.nl}"
        if moved:
            open_line = py_lock_dir_lines(self.facts, ind, self.nl) + open_line
        edits.append(_E(ls, ls, open_line))
        busy = acq.busy
        modules = ["fcntl", "os"]
        if busy is not None and busy.status_fix is not None:
            edits.extend(busy.status_fix.render(code=self.code))
        if busy is not None and not busy.durable and _ok_span(text, busy.span):
            bl = line_start(text, busy.span.start)
            if not text[bl : busy.span.start].strip():
                bind = indent_at(text, busy.span.start)
                rec = f'{bind}syslog.syslog(syslog.LOG_NOTICE, "lock busy, run skipped"){self.nl}'
                edits.append(_E(bl, bl, rec))
                modules.append("syslog")
        for rm in self.facts.removals:
            if rm.stale_guard and same_path(rm.path, acq.path) and rm.suggestion is not None:
                edits.extend(rm.suggestion.edits)  # it would delete the flock file
                continue
            if not same_path(rm.path, acq.path) or rm.stale_guard or not _ok_span(text, rm.span):
                continue
            d = self._drop_stmt(rm.span.start)
            if d is not None:
                edits.append(d)
            elif rm.drop_fix is not None and rm.drop_fix.edits:
                edits.extend(rm.drop_fix.render(code=self.code))
        edits.extend(_import_edits(text, self.tree, modules))
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _unused_import_edits(text, edits))
        if edits is None or not _python_ok(text, edits):
            return None
        msg = f"Hold an fcntl.flock instead of the {acq.mechanism} lock; keep the lock file"
        if note:
            msg += f"; {note}"
        return FixTemplate(msg, tuple(edits))

    def _liveness_in_busy(self, acq: Acquire, st: ast.If, body_ind: str, status: list[Edit]):
        """``if exists(P): pid = read(P); if pid_exists(pid): <busy>``: the body of the inner
        ``if`` dedented in place of both (the PID reads before it dropped), as (edit, the
        status edits left outside it); None for any other shape."""
        text = self.text
        live = [
            c
            for c in self.facts.liveness
            if c.pid_file is not None and same_path(c.pid_file, acq.path) and _ok_span(text, c.span)
        ]
        body = st.body
        if not live or not isinstance(body[-1], ast.If) or body[-1].orelse:
            return None
        inner = body[-1]
        ts, te = _node_span(text, inner.test)
        if not any(ts <= c.span.start and c.span.end <= te for c in live):
            return None
        if not all(isinstance(b, ast.Assign) for b in body[:-1]):
            return None
        a = line_start(text, _node_span(text, body[0])[0])
        b = line_end(text, _node_span(text, inner)[1])
        ib0 = _node_span(text, inner.body[0])[0]
        cs = line_start(text, ib0)
        width = len(indent_at(text, ib0)) - len(body_ind)
        if width <= 0 or text[a : _node_span(text, body[0])[0]].strip():
            return None
        within = [e for e in status if cs <= e.start and e.end <= b]
        outside = [e for e in status if e not in within]
        if any(a <= e.start < b for e in outside):
            return None
        chunk = apply_edits(text[cs:b], [Edit(e.start - cs, e.end - cs, e.content) for e in within])
        moved = self._dedent(chunk, width, inner.body)
        if moved is None:
            return None
        return Edit(a, b, moved), outside

    def _drop_closes(self, block, stmt, var: str) -> list[Edit]:
        """Deletions of ``var.close()`` / ``os.close(var)`` statements after ``stmt`` in its
        block."""
        text = self.text
        out = []
        for later in block[block.index(stmt) + 1 :]:
            if not (isinstance(later, ast.Expr) and isinstance(later.value, ast.Call)):
                continue
            call = later.value
            src = ast.unparse(call)
            if src not in (f"{var}.close()", f"os.close({var})"):
                continue
            s, e = _node_span(text, later)
            ls, le = line_start(text, s), line_end(text, e)
            if not text[ls:s].strip() and not text[e:le].strip():
                out.append(Edit(ls, le, ""))
        return out

    def _test_then_create(self, acq: Acquire) -> FixTemplate | None:
        """LCK103: ``if os.path.exists(P): <busy>`` then a creation of P becomes
        ``try: fcntl.flock(...) except BlockingIOError: <busy>``; the creation goes."""
        text = self.text
        t = acq.test_span
        if acq.service_record or t is None or not _ok_span(text, t):
            return None
        if not _ok_span(text, acq.span):
            return None
        guard = None
        for st, (s, _e), node, field in self._chain(t.start):
            if isinstance(st, ast.If):
                ts, te = _node_span(text, st.test)
                if ts <= t.start and t.end <= te:
                    guard = (st, s, node, field)
        if guard is None:
            return None
        st, gs, gnode, gfield = guard
        if st.orelse or isinstance(st.test, ast.UnaryOp) or not st.body:
            return None
        if st.body[0].lineno <= st.test.end_lineno:
            return None  # `if x: exit()` on one line
        ls = line_start(text, gs)
        if text[ls:gs].strip():
            return None
        header_end = line_end(text, _offset(text, st.test.end_lineno, st.test.end_col_offset))
        lp = self.lock_path(acq)
        if lp is None:
            return None
        lock, note, moved = lp
        ind = indent_at(text, gs)
        body_ind = indent_at(text, _node_span(text, st.body[0])[0])
        nl = self.nl
        new_header = (py_lock_dir_lines(self.facts, ind, nl) if moved else "") + (
            f"{ind}lock_fd = os.open({lock}, os.O_RDWR | os.O_CREAT, 0o600){nl}"
            f"{ind}try:{nl}"
            f"{body_ind}fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB){nl}"
            f"{ind}except BlockingIOError:{nl}"
        )
        edits = [_E(ls, header_end, new_header)]
        busy = acq.busy
        status = list(busy.status_fix.render(code=self.code)) if busy and busy.status_fix else []
        inner = self._liveness_in_busy(acq, st, body_ind, status)
        if inner is not None:  # the PID test inside the busy branch goes: busy is busy
            edits.append(inner[0])
            status = inner[1]
        edits.extend(status)
        # the creation (and what writes into it) goes: the lock file is the flock's
        chain = self._chain(acq.span.start)
        created = next(
            ((x, sp) for x, sp, node, field in chain if node is gnode and field == gfield),
            None,
        )
        if created is None:
            return None
        cst, (cs, ce) = created
        cls, cle = line_start(text, cs), line_end(text, ce)
        if text[cls:cs].strip() or text[ce:cle].strip() or cs < header_end:
            return None
        edits.append(Edit(cls, cle, ""))
        for rm in self.facts.removals:
            if rm.stale_guard and same_path(rm.path, acq.path) and rm.suggestion is not None:
                edits.extend(rm.suggestion.edits)  # it would delete the flock file
                continue
            if not same_path(rm.path, acq.path) or rm.stale_guard or not _ok_span(text, rm.span):
                continue
            d = self._drop_stmt(rm.span.start)
            if d is not None:
                edits.append(d)
            elif rm.drop_fix is not None and rm.drop_fix.edits:
                edits.extend(rm.drop_fix.render(code=self.code))
        edits.extend(_import_edits(text, self.tree, ["fcntl", "os"]))
        edits = _dedupe(edits)
        if edits is not None:
            edits = _dedupe(edits + _unused_import_edits(text, edits))
        if edits is None or not _python_ok(text, edits):
            return None
        msg = "Hold an fcntl.flock instead of testing for the file and creating it"
        if note:
            msg += f"; {note}"
        return FixTemplate(msg, tuple(edits))

    def _drop_stmt(self, pos: int) -> Edit | None:
        found = self._stmt_at(pos)
        if found is None:
            return None
        stmt, (ss, se), parent, field = found
        if not isinstance(stmt, ast.Expr):
            return None
        block = getattr(parent, field)
        text = self.text
        ls, le = line_start(text, ss), line_end(text, se)
        if text[ls:ss].strip() or text[se:le].strip().lstrip(";").strip():
            return None
        if len(block) == 1:  # keep the block valid
            return self._unwrap_try(parent, field) or _E(ss, se, "pass  # the lock file is kept")
        return Edit(ls, le, "")

    def _unwrap_try(self, parent, field) -> Edit | None:
        """``try: BODY finally: <the one statement dropped>`` (no ``except``/``else``) becomes
        BODY, dedented: a ``finally: pass`` is noise."""
        if field != "finalbody" or not isinstance(parent, ast.Try):
            return None
        if parent.handlers or parent.orelse or not parent.body:
            return None
        text = self.text
        ts, te = _node_span(text, parent)
        tls, tle = line_start(text, ts), line_end(text, te)
        b0 = _node_span(text, parent.body[0])[0]
        bls, ble = line_start(text, b0), line_end(text, _node_span(text, parent.body[-1])[1])
        if text[tls:ts].strip() or text[bls:b0].strip() or text[te:tle].strip():
            return None
        ind, body_ind = text[tls:ts], indent_at(text, b0)
        if not body_ind.startswith(ind) or len(body_ind) <= len(ind):
            return None
        body = self._dedent(text[bls:ble], len(body_ind) - len(ind), parent.body)
        if body is None:
            return None
        if not body.endswith("\n"):
            body += self.nl
        return Edit(tls, tle, body)


# --------------------------------------------------------------------------- drop rewrites


def _safe_drop_rewrites(facts: FileFacts, lang) -> None:
    """:func:`_drop_rewrites`; a shape it trips on leaves the advice-only suggestions."""
    try:
        _drop_rewrites(facts, lang)
    except Exception:
        return


def _breaker_drops(facts: FileFacts, lang) -> None:
    """LCK106: ``Removal.suggestion`` of a stale-lock breaker, the breaker dropped.  Run
    before the acquires' rewrites, which drop the breakers of their lock too."""
    text = facts.text
    hint = _flock_hint(facts.language == "shell", lang.code)
    for rm in facts.removals:
        if not rm.stale_guard or rm.suggestion is not None:
            continue
        if rm.overwrite and any(
            a.span.start <= rm.span.start and rm.span.end <= a.span.end for a in facts.acquires
        ):
            continue  # the overwrite is the run's own acquire: its rewrite, not a drop
        edits = None
        if rm.drop_fix is not None and rm.drop_fix.edits:
            edits = lang.fill(list(rm.drop_fix.render(code=lang.code)))
        elif _ok_span(text, rm.span):
            e = lang.drop_statement(rm.span)
            edits = [e] if e is not None else None
        if edits and lang.ok(edits):
            rm.suggestion = FixTemplate(
                f"Drop the stale-lock breaker: hold a flock ({hint}) instead, which is "
                "released when its holder dies",
                tuple(edits),
            )


def _safe_breaker_drops(facts: FileFacts, lang) -> None:
    try:
        _breaker_drops(facts, lang)
    except Exception:
        return


def _drop_rewrites(facts: FileFacts, lang) -> None:
    """LCK105/106/108 as real rewrites from the script's own text: the kill of the stored PID
    dropped, the stale-lock breaker dropped, the liveness test replaced by the flock rewrite
    of the same file's acquire (or its ``if`` dropped when that is the whole shape).  ``lang``
    is the language's suggester (``drop_kill``, ``drop_liveness_if``, ``ok``, ``code``)."""
    hint = _flock_hint(facts.language == "shell", lang.code)
    for k in facts.kills:
        covering = next(
            (
                a.suggestion
                for a in facts.acquires
                if a.suggestion is not None
                and any(e.start <= k.span.start and k.span.end <= e.end for e in a.suggestion.edits)
            ),
            None,
        )
        if k.suggestion is None and covering is not None:
            k.suggestion = covering  # the flock rewrite of the PID file drops the kill too
            continue
        if k.suggestion is None and k.signal not in ("0", "SIG0"):
            e = lang.drop_kill(k.span)
            if e is not None:
                k.suggestion = FixTemplate(
                    f"Drop the kill of a PID read from a file: hold a flock ({hint}) instead, "
                    "whose holder never needs killing",
                    (e,),
                )
    _breaker_drops(facts, lang)
    for chk in facts.liveness:
        if chk.suggestion is not None:
            continue
        acq = next(
            (
                a
                for a in facts.acquires
                if a.suggestion is not None
                and a.suggestion.edits
                and chk.pid_file is not None
                and same_path(a.path, chk.pid_file)
            ),
            None,
        )
        if acq is not None:
            edits = list(acq.suggestion.edits)
            part = lang.drop_test_part(chk.span)
            if part is not None:  # `<test> && kill -0 ...`: the liveness part goes too
                both = _dedupe(edits + [part])
                if both is not None and lang.ok(both):
                    edits = both
            chk.suggestion = FixTemplate(
                "Drop the PID liveness check with the PID-file lock: "
                + acq.suggestion.message[:1].lower()
                + acq.suggestion.message[1:],
                tuple(edits),
            )
            continue
        e = lang.drop_liveness_if(chk.span)
        if e is not None:
            chk.suggestion = FixTemplate(
                f"Drop the PID liveness check and hold a flock ({hint}) instead, which dies "
                "with its holder, so no PID has to be judged",
                (e,),
            )


# --------------------------------------------------------------------------- advice


def _flock_hint(shell: bool, code: int) -> str:
    return (
        f'exec {FD}>>"$LOCK"; flock -n {FD} || exit {code}'
        if shell
        else "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)"
    )


def _advice_fields(facts: FileFacts, code: int = 75) -> None:
    """Shown-only advice (no edits) for LCK105/106/108 where no rewrite could be built."""
    flock_hint = _flock_hint(facts.language == "shell", code)
    for chk in facts.liveness:
        if chk.suggestion is None:
            chk.suggestion = FixTemplate(
                f"Drop the PID liveness check: hold a flock ({flock_hint}), which dies with "
                "its holder, so no PID has to be judged",
                (),
            )
    for k in facts.kills:
        if k.suggestion is None:
            k.suggestion = FixTemplate(
                "Do not signal a PID read from a file: with a flock the holder needs no killing",
                (),
            )
    for rm in facts.removals:
        if rm.stale_guard and rm.suggestion is None:
            rm.suggestion = FixTemplate(
                f"Drop the stale-lock breaker and hold a flock ({flock_hint}) instead",
                (),
            )


# --------------------------------------------------------------------------- edit helpers


def _E(start: int, end: int, content: str) -> Edit:  # noqa: N802
    return Edit(start, end, content)


_BASH_PARSER = None  # one tree-sitter parser for every suggestion of the run


def _shell_ok(text: str, edits) -> bool:
    """The rewritten script parses (as well as the original did)."""
    global _BASH_PARSER
    parser = _BASH_PARSER
    if parser is None:
        try:
            import tree_sitter_bash
            from tree_sitter import Language, Parser
        except ImportError:  # pragma: no cover - tree-sitter is a dependency
            return True
        parser = _BASH_PARSER = Parser(Language(tree_sitter_bash.language()))

    # tree_sitter_source avoids tree-sitter-bash's crashers; where tree-sitter-bash errs (it
    # does not know `exec 9<>F`), bash -n has the last word, as in the frontend
    from ..frontends.shell import _bash_accepts, tree_sitter_source

    def broken(src: str) -> bool:
        raw = tree_sitter_source(src)
        return parser.parse(raw).root_node.has_error and not _bash_accepts(raw)

    if not _spend(text):
        return False  # no more rewrites for this file: each check parses all of it
    st = _CHECKED
    try:
        if st["broken"] is None:
            st["broken"] = broken(text)
        return st["broken"] or not broken(apply_edits(text, edits))
    except ValueError:
        return False


# Each rewrite is checked by parsing the whole rewritten file (and a Python one for the imports
# it leaves unused).  A file with many locks would make that quadratic (#9), so one text gets
# at most this many checked rewrites; the findings past them carry advice only.  The shell
# original's verdict is parsed once per text.
MAX_REWRITE_CHECKS = 32
_CHECKED: dict = {"text": None, "broken": None, "count": 0}


def _budget_left(text: str) -> bool:
    st = _CHECKED
    if st["text"] is not text:
        st.update(text=text, broken=None, count=0)
    return st["count"] < MAX_REWRITE_CHECKS


def _spend(text: str) -> bool:
    """Count one whole-file check of a rewrite of ``text``: False once its budget is spent."""
    if not _budget_left(text):
        return False
    _CHECKED["count"] += 1
    return True


def _python_ok(text: str, edits) -> bool:
    if not _spend(text):
        return False  # no more rewrites for this file: each check parses all of it
    try:
        ast.parse(apply_edits(text, edits))
    except (SyntaxError, ValueError):
        return False
    return True


def _dedupe(edits: list[Edit]) -> list[Edit] | None:
    """Sorted, duplicate-free edits; None when two overlap (no suggestion then)."""
    out: list[Edit] = []
    for e in sorted(set(edits), key=lambda e: (e.start, e.end, e.content)):
        if out:
            p = out[-1]
            if e.start < p.end or (e.start == p.start and p.start == p.end == e.end):
                if e.start == e.end == p.start == p.end:
                    out[-1] = Edit(p.start, p.end, p.content + e.content)
                    continue
                return None
        out.append(e)
    return out
