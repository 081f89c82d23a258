"""Applying fixes: rounds of non-overlapping edits, verification with rollback, atomic writes
and unified diffs.

Used by the CLI for ``--fix``, ``--unsafe-fixes``, ``--diff`` and ``--show-fixes``.  Edits are
offsets into the decoded text (``str``); text must be decoded without newline translation
(:func:`read_source`) so that CRLF files keep their line endings.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .. import source
from ..model import Applicability, Edit, FileFacts, Finding, Fix
from ..settings import Settings

MAX_ROUNDS = 10

# text -> (facts, findings): what analyses the file's text and each fixed text
Analyser = Callable[[str], tuple[FileFacts, list[Finding]]]
ENCODING = "utf-8"


class FixWriteError(OSError):
    """A fixed file could not be written safely (the CLI prints the message)."""


@dataclass
class FileFixResult:
    path: str
    original: str
    fixed: str
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)
    rolled_back: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


# --------------------------------------------------------------------------- reading


def read_source(path: str, language: str | None = None) -> tuple[str, bytes]:
    """The file's text (no newline translation, undecodable bytes kept as surrogates) and its
    raw bytes, to be handed back to :func:`write_atomic` (decoded by :mod:`lockcheck.source`)."""
    with open(path, "rb") as fh:
        data = fh.read()
    return decode(data, language), data


def decode(data: bytes, language: str | None = None) -> str:
    src = source.decode(data, language)
    if src is None:  # binary: what the analysis would not read, kept byte for byte
        return data.decode(ENCODING, errors="surrogateescape")
    return src.text


def encode(text: str, src: source.Source | None = None) -> bytes:
    """``text`` as the bytes :func:`write_atomic` writes (UTF-8 unless ``src`` says otherwise;
    :func:`lockcheck.source.encode`)."""
    return source.encode(text, src)


# --------------------------------------------------------------------------- edits


def _valid(edits: Iterable[Edit], length: int) -> bool:
    return all(0 <= e.start <= e.end <= length for e in edits)


def _overlap(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one point: order would be ambiguous
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


class _Counts:
    """Counts at indices 0..n-1: add one, sum over a range, both in O(log n) (Fenwick)."""

    def __init__(self, n: int) -> None:
        self.tree = [0] * (n + 1)

    def add(self, i: int) -> None:
        i += 1
        while i < len(self.tree):
            self.tree[i] += 1
            i += i & -i

    def _prefix(self, i: int) -> int:  # indices < i
        total = 0
        while i > 0:
            total += self.tree[i]
            i -= i & -i
        return total

    def any_in(self, lo: int, hi: int) -> bool:  # indices lo..hi-1
        return hi > lo and self._prefix(hi) > self._prefix(lo)


class _Taken:
    """The edits taken so far in a round, non-overlapping: whether an edit overlaps one of
    them (:func:`_overlap`) in O(log n), not by comparing it with each.  Offsets are those of
    every edit the round may take; the gaps between consecutive offsets are the segments a
    replacement covers (taken replacements are disjoint, so each segment is covered once)."""

    def __init__(self, edits: Iterable[Edit]) -> None:
        self.xs = sorted({x for e in edits for x in (e.start, e.end)})
        self.owner: list[int | None] = [None] * len(self.xs)  # segment i: xs[i]..xs[i+1]
        self.covered = _Counts(len(self.xs))
        self.insertions = _Counts(len(self.xs))
        self.points: set[int] = set()

    def conflicts(self, edits: Iterable[Edit]) -> bool:
        return any(self._hits(e) for e in edits)

    def _hits(self, e: Edit) -> bool:
        s = bisect.bisect_left(self.xs, e.start)
        f = bisect.bisect_left(self.xs, e.end)
        if s == f:  # an insertion: at a taken insertion's point, or inside a replacement
            return e.start in self.points or (
                s > 0 and self.owner[s - 1] is not None and self.owner[s - 1] == self.owner[s]
            )
        return self.covered.any_in(s, f) or self.insertions.any_in(s + 1, f)

    def add(self, edits: Iterable[Edit]) -> None:
        for e in edits:
            s = bisect.bisect_left(self.xs, e.start)
            f = bisect.bisect_left(self.xs, e.end)
            if s == f:
                self.points.add(e.start)
                self.insertions.add(s)
            for i in range(s, f):
                self.owner[i] = id(e)
                self.covered.add(i)


def _ordered(edits: Iterable[Edit], length: int) -> list[Edit]:
    """``edits`` sorted; ValueError when two overlap or one lies outside a text of
    ``length`` characters."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for a, b in zip(ordered, ordered[1:], strict=False):
        if _overlap(a, b):
            raise ValueError(f"overlapping edits {a} and {b}")
    pos = 0
    for e in ordered:
        if not 0 <= pos <= e.start <= e.end <= length:
            raise ValueError(f"edit {e} outside the text")
        pos = e.end
    return ordered


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (offsets into ``text``); bytes outside them are kept."""
    ordered = _ordered(edits, len(text))
    out = []
    pos = 0
    for e in ordered:
        out.append(text[pos : e.start])
        out.append(e.content)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------- fix_text


def _wanted(f: Finding, codes: set[str] | None, unsafe: bool) -> bool:
    if f.fix is None or not f.fix.edits:
        return False
    if codes is not None and f.code not in codes:
        return False
    if f.fix.applicability is Applicability.SAFE:
        return True
    return unsafe and f.fix.applicability is Applicability.UNSAFE


def _ident(f: Finding) -> tuple:
    """A finding's identity in the current text: code, fix message, where its fix starts."""
    start = min(e.start for e in f.fix.edits) if f.fix and f.fix.edits else f.span.start
    return (f.code, f.fix.message if f.fix else "", start)


def _remap(refused: set[tuple], edits: list[Edit]) -> set[tuple]:
    """Each identity's offset moved to where it lands after ``edits`` (non-overlapping): past
    the edits that end at or before it (an insertion right at it excluded), or to the start of
    the edit that replaces it."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    ends = [e.end for e in ordered]  # non-decreasing: the edits do not overlap
    shift = [0]
    for e in ordered:
        shift.append(shift[-1] + len(e.content) - (e.end - e.start))

    def moved(pos: int) -> int:
        k = bisect.bisect_right(ends, pos)  # edits ending at or before pos
        if k < len(ordered) and ordered[k].start < pos:
            return ordered[k].start + shift[k]  # pos lies inside that edit
        if k and ordered[k - 1].start == ordered[k - 1].end == pos:
            k -= 1  # an insertion at pos goes before it: pos stays in front
        return pos + shift[k]

    return {(code, msg, moved(pos)) for code, msg, pos in refused}


def _parse_errors(facts, findings: list[Finding]) -> int:
    return max(len(facts.parse_errors), sum(1 for f in findings if f.code == "LCK000"))


def _verify(analyse, src: str, facts, findings: list[Finding], fixes):
    """Re-analyse ``src``: (facts, findings) when the fixes removed their findings and the file
    still parses, else (None, why)."""
    new_facts, new_findings = analyse(src)
    if _parse_errors(new_facts, new_findings) > _parse_errors(facts, findings):
        return None, "the fixed file no longer parses"
    before = Counter(f.code for f in findings)
    after = Counter(f.code for f in new_findings)
    gone: Counter = Counter()
    for _fix, fs in fixes:
        gone.update(f.code for f in fs)
    # a finding in text that a fix of another rule wrote is new, not a survivor
    introduced: Counter = Counter()
    regions = [r for r in _new_regions(fixes) if r[0] < r[1]]  # disjoint, in order
    starts = [r[0] for r in regions]
    for g in new_findings:
        i = bisect.bisect_right(starts, g.span.start) - 1
        if i >= 0 and g.span.start < regions[i][1] and g.code not in regions[i][2]:
            introduced[g.code] += 1
    for code, n in gone.items():
        if after[code] > before[code] - n + introduced[code]:
            return None, f"the fix did not remove the {code} finding"
    return (new_facts, new_findings), ""


def _new_regions(fixes) -> list[tuple[int, int, set[str]]]:
    """Where each edit's content lands in the new text, with the codes its fix fixes."""
    tagged = sorted(
        ((e, {f.code for f in fs}) for fix, fs in fixes for e in fix.edits),
        key=lambda x: (x[0].start, x[0].end),
    )
    out = []
    shift = 0
    for e, fix_codes in tagged:
        start = e.start + shift
        out.append((start, start + len(e.content), fix_codes))
        shift += len(e.content) - (e.end - e.start)
    return out


def _passing(analysed, current: str, facts, findings, batch, why: str, refused, result) -> list:
    """The fixes of ``batch`` (which fails, for ``why``) that pass, found by halving: a half
    that passes is kept whole, a failing half is halved again, a failing single fix is rolled
    back.  With k failing fixes among n this is at most 2 k log2 n analyses (each fix checked
    on its own was n: quadratic in a file with thousands of fixes)."""
    if len(batch) == 1:
        for f in batch[0][1]:
            refused.add(_ident(f))
            result.rolled_back.append((f, why))
        return []
    good = []
    mid = len(batch) // 2
    for half in (batch[:mid], batch[mid:]):  # in order: the rollbacks are reported so
        edits = [e for fix, _fs in half for e in fix.edits]
        outcome, half_why = _verify(analysed, apply_edits(current, edits), facts, findings, half)
        if outcome is not None:
            good.extend(half)
        else:
            good.extend(
                _passing(analysed, current, facts, findings, half, half_why, refused, result)
            )
    return good


def fix_text(
    path: str,
    text: str,
    language: str,
    settings: Settings | None = None,
    codes: Iterable[str] | None = None,
    unsafe: bool = False,
    on_analysis: Callable[[], None] | None = None,
    *,
    analyse: Analyser,
) -> FileFixResult:
    """Apply the safe (and, with ``unsafe``, the unsafe) fixes of ``text`` in rounds.

    Each round applies the non-overlapping fixes of the current findings (an overlapping one
    waits for the next round), re-analyses and keeps a fix only when its finding is gone and
    the file did not become unreadable; otherwise the fix is rolled back and reported.
    ``codes`` limits the rules whose fixes are applied (None: every reported rule).
    ``on_analysis`` is called after each analysis (:func:`lockcheck.workers.heartbeat`: each
    one is bounded like the file's own analysis).  ``analyse`` (text -> (facts, findings))
    finds them: :func:`lockcheck.engine.fix_text` passes :func:`lockcheck.engine.analyze_text`
    for a script, and a job definition is analysed in its tree
    (:func:`lockcheck.definitions.join.analyze_tree`); the fix layer does not import the
    analysis.
    """
    settings = settings or Settings()
    code_set = {c.upper() for c in codes} if codes is not None else None
    result = FileFixResult(path=path, original=text, fixed=text)
    refused: set[tuple] = set()  # identities of findings whose fix was rolled back

    def analysed(src: str):
        out = analyse(src)
        if on_analysis is not None:
            on_analysis()
        return out

    current = text
    facts, findings = analysed(current)
    for _round in range(MAX_ROUNDS):
        candidates = [
            f for f in findings if _wanted(f, code_set, unsafe) and _ident(f) not in refused
        ]
        if not candidates:
            break
        candidates.sort(key=lambda f: (min(e.start for e in f.fix.edits), f.sort_key))
        # sorted by offset, each fix checked against the taken edits in O(log n): the round
        # stays n log n in fixes (a file can carry thousands)
        batch: list[tuple[Fix, list[Finding]]] = []
        by_edits: dict[tuple, list[Finding]] = {}
        taken: list[Edit] = []
        index = _Taken(e for f in candidates for e in f.fix.edits if _valid([e], len(current)))
        for f in candidates:
            edits = f.fix.edits
            same = by_edits.get(tuple(edits))
            if same is not None:  # one fix offered for several findings: apply it once
                same.append(f)
                continue
            if not _valid(edits, len(current)):
                refused.add(_ident(f))
                result.rolled_back.append((f, "the fix's edits lie outside the file"))
                continue
            if index.conflicts(edits):
                continue  # waits for the next round
            try:
                _ordered(edits, len(current))  # edits of one fix must not overlap each other
            except ValueError as exc:
                refused.add(_ident(f))
                result.rolled_back.append((f, f"the fix is malformed: {exc}"))
                continue
            batch.append((f.fix, [f]))
            by_edits[tuple(edits)] = batch[-1][1]
            index.add(edits)
            taken.extend(edits)
        if not batch:
            continue  # every candidate was refused: the next round finds none

        new_text = apply_edits(current, taken)
        outcome, _why = _verify(analysed, new_text, facts, findings, batch)
        if outcome is not None:
            refused = _remap(refused, taken)
            current = new_text
            facts, findings = outcome
            for _fix, fs in batch:
                result.applied.extend(fs)
            continue
        # the batch failed: roll back the fixes that fail, keep the others
        good = _passing(analysed, current, facts, findings, batch, _why, refused, result)
        if not good:
            continue
        together = apply_edits(current, [e for fix, _fs in good for e in fix.edits])
        outcome, _why = _verify(analysed, together, facts, findings, good)
        if outcome is None:  # they interfere: keep the first, the rest wait a round
            good = good[:1]
            together = apply_edits(current, good[0][0].edits)
            outcome, _why = _verify(analysed, together, facts, findings, good)
        if outcome is not None:
            refused = _remap(refused, [e for fix, _fs in good for e in fix.edits])
            current = together
            facts, findings = outcome
            for _fix, fs in good:
                result.applied.extend(fs)
    result.fixed = current
    result.remaining = findings
    return result


# --------------------------------------------------------------------------- diffs


def unified_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """A unified diff with ``--- a/path`` / ``+++ b/path`` headers ('' when equal)."""
    if old == new:
        return ""
    name = path.replace(os.sep, "/").lstrip("/")
    a = _lines(old)
    b = _lines(new)
    out = []
    for line in difflib.unified_diff(a, b, f"a/{name}", f"b/{name}", n=context):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines as the frontends count them, ends kept: split at LF only (``splitlines`` also
    splits at a lone CR, a form feed, U+2028..., which would misnumber the hunks)."""
    lines = [ln + "\n" for ln in text.split("\n")]
    last = lines.pop()
    if last != "\n":
        lines.append(last[:-1])
    return lines


def fix_diff(path: str, text: str, fix: Fix) -> str:
    """The diff a single fix or suggestion would make (for ``--show-fixes``)."""
    return unified_diff(path, text, apply_edits(text, fix.edits))


# --------------------------------------------------------------------------- writing


def _crlf(data: bytes) -> bool:
    """The file's lines end in CRLF (every LF is preceded by CR)."""
    n = data.count(b"\n")
    return n > 0 and data.count(b"\r\n") == n


def _newline_bytes(data: bytes, src: source.Source | None) -> bytes:
    """The bytes whose line ends tell CRLF from LF (UTF-16/32 text re-encoded as UTF-8)."""
    if src is None or not src.bom:
        return data
    return src.text.encode("utf-8", "surrogateescape")


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def _identity(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _copy_owner(fd: int, st: os.stat_result, path: str) -> None:
    """Give the new file the old one's owner and group (before the mode: chown clears
    setuid/setgid).  Only root can give a file away; anyone can keep their own group."""
    if not hasattr(os, "fchown"):  # pragma: no cover - not on POSIX
        return
    if os.geteuid() == 0:
        uid, gid = st.st_uid, st.st_gid
    elif st.st_uid != os.geteuid():
        raise FixWriteError(f"{path}: owned by another user; a fix would change its owner")
    else:
        uid, gid = -1, st.st_gid
    try:
        os.fchown(fd, uid, gid)
    except OSError as exc:
        raise FixWriteError(f"{path}: cannot keep its owner and group ({exc.strerror})") from exc


def _copy_xattrs(src: str, fd: int, path: str) -> None:
    """Extended attributes (ACLs among them) of the old file onto the new one, where the
    filesystem has them."""
    if not hasattr(os, "listxattr"):  # pragma: no cover - not on Linux
        return
    try:
        names = os.listxattr(src)
    except OSError:  # the filesystem has none
        return
    for name in names:
        try:
            os.setxattr(fd, name, os.getxattr(src, name))
        except OSError as exc:
            raise FixWriteError(
                f"{path}: cannot keep its extended attribute {name} ({exc.strerror})"
            ) from exc


def real_root(path: str) -> str:
    """The real location of a scanned path: a directory's real path; for a file, its
    directory's real path and its own name (a symlink named on the command line is not
    written through to a file elsewhere)."""
    if os.path.isdir(path):
        return os.path.realpath(path)
    ap = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(ap)), os.path.basename(ap))


def _inside_any(path: str, roots: list[str]) -> bool:
    return any(_inside(path, r) for r in roots)


def write_atomic(
    path: str,
    text: str,
    original_bytes: bytes | None = None,
    root: str | list[str] | None = None,
    src: source.Source | None = None,
) -> None:
    """Replace ``path`` with ``text`` atomically.

    Writes a new file in the same directory, gives it the old file's owner, group, extended
    attributes (ACLs) and mode bits (setuid/setgid too), fsyncs it and renames it over the
    target.  A file whose lines ended in CRLF keeps CRLF endings; ``src`` (how the file was
    decoded, :mod:`lockcheck.source`) gives the encoding to write back (default UTF-8;
    undecodable bytes survive).

    The file is written only when its real path lies inside ``root`` (one path or several:
    the scanned paths; default: the working directory or the link's own directory), so a
    symlink is written through only to a target inside them; it is refused when it has
    several hard links (a fix would split them).  When ``original_bytes`` is given, the file
    must still hold them when the fix is written and again right before the rename (with the
    same inode, size and modification time): a change by another process is refused, never
    overwritten.  Every refusal is a :class:`FixWriteError`.
    """
    if root is None:  # the working directory, or the link's own directory
        roots = [
            os.path.realpath(os.getcwd()),
            os.path.realpath(os.path.dirname(os.path.abspath(path))),
        ]
    else:
        roots = [real_root(r) for r in ([root] if isinstance(root, str) else root)]
    target = os.path.realpath(path)
    if not _inside_any(target, roots):
        what = "through a symlink to" if os.path.islink(path) else "to"
        raise FixWriteError(f"{path}: refusing to write {what} {target}, outside the scanned paths")
    try:
        st = os.lstat(target)
    except FileNotFoundError as exc:
        raise FixWriteError(f"{path}: file vanished before the fix was written") from exc
    if not stat.S_ISREG(st.st_mode):
        raise FixWriteError(f"{path}: not a regular file")
    if st.st_nlink > 1:
        raise FixWriteError(
            f"{path}: has {st.st_nlink} hard links; a fix would split them, not fixed"
        )

    def unchanged() -> bool:
        if original_bytes is None:
            return True
        try:
            with open(target, "rb") as fh:
                now = os.fstat(fh.fileno())
                return _identity(now) == _identity(st) and fh.read() == original_bytes
        except OSError:
            return False

    if not unchanged():
        raise FixWriteError(f"{path}: changed on disk since it was read; not fixed")
    if original_bytes is not None and _crlf(_newline_bytes(original_bytes, src)):
        text = re.sub(r"(?<!\r)\n", "\r\n", text)
    try:
        data = source.encode(text, src)
    except UnicodeEncodeError as exc:
        raise FixWriteError(f"{path}: the fix cannot be written in {exc.encoding}") from exc
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix=".lockcheck-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            _copy_owner(fh.fileno(), st, path)
            _copy_xattrs(target, fh.fileno(), path)
            os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
            os.fsync(fh.fileno())
        if not unchanged():  # another process wrote the file meanwhile: theirs wins
            raise FixWriteError(f"{path}: changed on disk while the fix was written; not fixed")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
