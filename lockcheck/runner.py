"""Reading files and running the engine over many of them.

Every file is handled on its own: an unreadable file or an internal error of a frontend
becomes one error line (exit status 2 at the end) and the run goes on.  Frontends are imported
only when a file of their language is analysed, so a shell-only run never imports libcst.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .discover import Target
from .model import Finding
from .settings import Settings

BINARY_SNIFF = 8192
# A process pool costs ~0.1-0.2 s to start; it pays only for a run that takes longer than
# that.  Work is counted in Python-file equivalents: libcst takes ~10 ms for a job script,
# tree-sitter-bash about a tenth of that (measured on 2 cores).
POOL_THRESHOLD = 200
WORK_WEIGHT = {"python": 1.0, "shell": 0.1}


@dataclass
class FileResult:
    path: str  # absolute
    display: str
    language: str | None
    findings: list[Finding] = field(default_factory=list)
    text: str | None = None  # kept when there are findings (source lines, fixes)
    data: bytes | None = None  # the bytes read (for atomic fix writes)
    error: str | None = None  # one line, printed as "lockcheck: error: ..."
    warning: str | None = None  # one line, printed as "lockcheck: warning: ..."
    skipped: bool = False  # not analysed (binary, unknown language)


def decode(data: bytes) -> str:
    """UTF-8, undecodable bytes kept as surrogates, no newline translation (fix offsets)."""
    return data.decode("utf-8", errors="surrogateescape")


def source_lines(text: str) -> list[str]:
    """Lines as the frontends count them (LF-separated; a trailing CR dropped)."""
    return [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]


def ignored_by_per_file(settings: Settings, path: str) -> set[str]:
    """Rule selectors that ``per-file-ignores`` switch off for ``path``.

    Globs are relative to the configuration file's directory, with gitignore semantics (a
    glob without ``/`` matches the file name at any depth); a leading ``!`` negates."""
    if not settings.per_file_ignores:
        return set()
    import pathspec

    root = os.path.abspath(settings.project_root or os.getcwd())
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    out: set[str] = set()
    for glob, codes in settings.per_file_ignores.items():
        negate = glob.startswith("!")
        pattern = glob[1:] if negate else glob
        if rel.startswith("../"):
            hit = pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(os.path.basename(path))
        else:
            hit = pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(rel)
        if hit != negate:
            out.update(c.upper() for c in codes)
    return out


def codes_for(settings: Settings, path: str) -> set[str]:
    from .engine import selected_codes

    return selected_codes(settings, ignored_by_per_file(settings, path))


def check_target(target: Target) -> FileResult:
    """Read and analyse one file; never raises for bad input."""
    res = FileResult(target.path, target.display, target.language)
    if target.data is not None:
        return check_bytes(target, target.data, res)
    try:
        if not stat.S_ISREG(os.stat(target.path).st_mode):  # a FIFO would block the run
            res.error = f"{target.display}: not a regular file"
            return res
        with open(target.path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        res.error = f"{target.display}: No such file or directory"
        return res
    except IsADirectoryError:
        res.error = f"{target.display}: Is a directory"
        return res
    except OSError as exc:
        res.error = f"{target.display}: {exc.strerror or exc}"
        return res
    return check_bytes(target, data, res)


def check_bytes(target: Target, data: bytes, res: FileResult) -> FileResult:
    if b"\0" in data[:BINARY_SNIFF]:
        res.skipped = True
        if target.explicit:
            res.warning = f"{target.display}: binary file, not checked"
        return res
    language = target.language
    if language is not None and data.startswith(b"#!"):
        # discovery may have decided by extension alone: the shebang has the last word
        from .frontends import language_of

        language = res.language = language_of(target.display, data[:256])
    if language is None:
        res.skipped = True
        return res
    text = decode(data)
    from .engine import InternalError, analyze_text

    try:
        _facts, findings = analyze_text(
            target.display,
            text,
            language,
            target.settings,
            codes_for(target.settings, target.path),
        )
    except InternalError as exc:  # a bug must not stop the run
        res.error = f"{target.display}: {exc}"
        return res
    from .engine import unknown_codes_warning

    res.warning = unknown_codes_warning(_facts)  # `# noqa: LCK999`
    res.findings = findings
    if findings:
        res.text = text
        res.data = data
    return res


def _pool_size() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 4))


def run(
    targets: list[Target],
    progress: Callable[[int, int], None] | None = None,
    parallel: bool | None = None,
) -> list[FileResult]:
    """Results in the order of ``targets``."""
    total = len(targets)
    workers = _pool_size()
    if parallel is None:
        work = sum(WORK_WEIGHT.get(t.language or "", 0.0) for t in targets)
        parallel = work > POOL_THRESHOLD and workers > 1
    results: Iterable[FileResult]
    out: list[FileResult] = []
    if parallel:
        from concurrent.futures import ProcessPoolExecutor

        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                results = pool.map(check_target, targets, chunksize=8)
                for i, r in enumerate(results, 1):
                    out.append(r)
                    if progress:
                        progress(i, total)
            return out
        except (OSError, ImportError, NotImplementedError):
            out = []  # no process pool available here (sandbox): run in this process
    for i, t in enumerate(targets, 1):
        out.append(check_target(t))
        if progress:
            progress(i, total)
    return out
