"""Which files to check and in which language.

Directories are walked respecting ``.gitignore`` files (nested ones too, and those above the
walked directory up to the repository root) and the configured ``exclude`` /
``extend-exclude`` patterns; version-control directories, virtualenvs (any directory holding
``pyvenv.cfg``) and caches are skipped.  Files named on the command line are always checked
(pre-commit passes them one by one), except that ``--force-exclude`` makes the exclude
patterns apply to them too.  The language comes from the extension, then the shebang.
"""

from __future__ import annotations

import os
import stat

from .config import Resolver, display_path
from .frontends import KNOWN_EXTENSIONS, language_of
from .globs import compile_spec
from .hints import TYPE_CHECKING
from .records import record
from .settings import Settings

if TYPE_CHECKING:  # pathspec costs ~30 ms to import: only walks and excludes need it
    import pathspec

HEAD_BYTES = 256


@record
class Target:
    path: str  # absolute path
    display: str  # path shown in reports
    language: str | None
    explicit: bool
    settings: Settings
    data: bytes | None = None  # content read from standard input (path "-")
    definition: str | None = None  # a job definition's kind (lockcheck.definitions.KINDS)


_HEAD_OPEN = os.O_RDONLY
for _flag in ("O_CLOEXEC", "O_NONBLOCK", "O_BINARY"):
    _HEAD_OPEN |= getattr(os, _flag, 0)


def read_head(path: str, n: int = HEAD_BYTES) -> bytes:
    """The first ``n`` bytes of a regular file (b"" for anything else or an error): one
    ``read(2)`` on a bare descriptor, a third cheaper than a buffered file object over the
    thousands of files of a walk; non-blocking, should the file become a FIFO meanwhile."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # never open a FIFO or a device
            return b""
        fd = os.open(path, _HEAD_OPEN)
    except OSError:
        return b""
    try:
        # no more than the file holds: os.read allocates the whole ``n`` before it shrinks
        # the buffer (a tenth of the 64 KiB definition sniff's cost); a size of 0 may be a
        # file that lies about it (procfs): ``n`` then
        return os.read(fd, min(n, st.st_size) or n)
    except OSError:
        return b""
    finally:
        os.close(fd)


def detect_language(path: str) -> str | None:
    return classify(path, None)[0]


def classify(path: str, settings: Settings | None) -> tuple[str | None, str | None]:
    """The language of a file, else its job-definition kind when ``settings`` read
    definitions.  The file is opened once: a definition sniffed by content gets the bytes it
    needs in the same read."""
    lower = path.lower()
    if lower.endswith(KNOWN_EXTENSIONS):
        return language_of(path, b""), None
    definitions = settings is not None and settings.definitions
    if not definitions:
        return language_of(path, read_head(path)), None
    from .definitions import discover as sniff  # imported once: a lookup after that

    head = read_head(path, sniff.head_size(lower))
    lang = language_of(path, head[:HEAD_BYTES])
    if lang is not None:
        return lang, None
    return None, sniff.kind_of(path, head)


# --------------------------------------------------------------------------- ignore rules


class _Excludes:
    """exclude + extend-exclude of one Settings, matched relative to its project root."""

    def __init__(self, settings: Settings, warnings: list[str] | None = None) -> None:
        self.root = os.path.abspath(settings.project_root or os.getcwd())
        invalid: list[str] = []
        self.spec = compile_spec(list(settings.exclude) + list(settings.extend_exclude), invalid)
        where = display_path(settings.config_file) + ": " if settings.config_file else ""
        for line in invalid if warnings is not None else ():
            warnings.append(f"{where}exclude pattern {line!r} is not a valid glob; ignored")

    def _rel(self, path: str) -> str:
        rel = os.path.relpath(path, self.root)
        if rel.startswith(".."):
            rel = os.path.basename(path)  # outside the project: match the name only
        return rel.replace(os.sep, "/")

    def match(self, path: str, is_dir: bool, own_only: bool = False) -> bool:
        """``path`` (or, unless ``own_only``, one of its directories) is excluded.

        While walking, ``own_only`` is used: a directory named on the command line is walked
        even when excluded (as in ruff), so a match inherited from it does not count."""
        rel = self._rel(path)
        if rel == ".":
            return False
        rel = rel + "/" if is_dir else rel
        if own_only:
            return bool(own_match(self.spec, rel))
        return self.spec.match_file(rel)


def own_match(spec: pathspec.PathSpec, rel: str) -> bool | None:
    """The last pattern of ``spec`` that matches ``rel`` itself, not through one of its
    directories: True (ignored), False (re-included by ``!``) or None (no pattern matches).
    pathspec's patterns match a prefix ending at a directory; a match of the whole path is
    the entry's own."""
    result = None
    for pattern in spec.patterns:
        if pattern.include is None or pattern.regex is None:
            continue
        m = pattern.regex.match(rel)
        if m is not None and m.end() == len(rel):
            result = bool(pattern.include)
    return result


def _load_gitignore(directory: str, name: str = ".gitignore") -> pathspec.GitIgnoreSpec | None:
    p = os.path.join(directory, name)
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    spec = compile_spec(lines)
    return spec if len(spec) else None


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


# directory -> its git work tree (None: none), for the directories of one discovery: a run
# over thousands of files named one by one asks for each directory, and for the same parents
_GIT_ROOTS: dict[str, str | None] = {}


def _git_root(directory: str) -> str | None:
    seen: list[str] = []
    d = directory
    while True:
        if d in _GIT_ROOTS:
            found = _GIT_ROOTS[d]
            break
        seen.append(d)
        if os.path.exists(os.path.join(d, ".git")):
            found = d
            break
        parent = os.path.dirname(d)
        if parent == d:
            found = None
            break
        d = parent
    for s in seen:
        _GIT_ROOTS[s] = found
    return found


class _GitIgnores:
    """A chain of (directory, spec) from the outermost to the innermost."""

    def __init__(self, chain: list[tuple[str, pathspec.GitIgnoreSpec]]) -> None:
        self.chain = chain

    @classmethod
    def above(cls, directory: str) -> _GitIgnores:
        """The ignore files that apply to ``directory`` itself (excluding its own): those of
        the directories above it up to the repository root, or, outside a repository, up to
        the working directory (so `scan sub` and `scan .` agree)."""
        root = _git_root(directory)
        chain: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        if root is None:
            cwd = os.getcwd()
            if os.path.commonpath([cwd, directory]) != cwd:
                return cls(chain)
            root = cwd
        info = os.path.join(root, ".git", "info")
        spec = _load_gitignore(info, "exclude") if os.path.isdir(info) else None
        if spec is not None:
            chain.append((root, spec))
        dirs = []
        d = os.path.dirname(directory) if directory != root else None
        while d is not None:
            dirs.append(d)
            if d == root:
                break
            parent = os.path.dirname(d)
            d = None if parent == d else parent
        for d in reversed(dirs):
            spec = _load_gitignore(d)
            if spec is not None:
                chain.append((d, spec))
        return cls(chain)

    def enter(self, directory: str) -> _GitIgnores:
        spec = _load_gitignore(directory)
        if spec is None:
            return self
        return _GitIgnores(self.chain + [(directory, spec)])

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Ignored by a pattern matching the entry itself; the innermost ignore file that has
        a matching pattern decides.  (Ignored directories are not entered, except one named on
        the command line, whose contents are then checked as git's walkers and ruff do.)"""
        for base, spec in reversed(self.chain):
            rel = os.path.relpath(path, base)
            if rel.startswith("..") or rel == ".":
                continue
            rel = rel.replace(os.sep, "/") + ("/" if is_dir else "")
            decision = own_match(spec, rel)
            if decision is not None:
                return decision
        return False


# --------------------------------------------------------------------------- walking


class Discovery:
    def __init__(self, resolver: Resolver, force_exclude: bool = False) -> None:
        self.resolver = resolver
        self.force_exclude = force_exclude
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self._excludes: dict[int, _Excludes] = {}
        self.roots: list[str] = []  # real paths of the directories asked for
        self.ticks = False  # walk() yields None after each directory

    def _ex(self, settings: Settings) -> _Excludes:
        key = id(settings)
        if key not in self._excludes:
            self._excludes[key] = _Excludes(settings, self.warnings)
        return self._excludes[key]

    def _reachable(self, path: str, explicit: bool) -> bool:
        """A file is read only when its real path lies inside a directory that was asked for
        (or, for a file named on the command line, inside the working directory): a symlink
        out of the tree is not followed."""
        real = os.path.realpath(path)
        if explicit and real == os.path.realpath(os.path.dirname(path)) + os.sep + os.path.basename(
            path
        ):
            return True  # not a symlink: named, so asked for
        roots = self.roots + ([os.path.realpath(os.getcwd())] if explicit else [])
        if any(_inside(real, r) for r in roots):
            return True
        if explicit:
            self.warnings.append(
                f"{display_path(path)}: a symlink to {real}, outside the scanned paths; not read"
            )
        return False

    def run(self, paths: list[str]) -> list[Target]:
        return list(self.walk(paths))

    def walk(self, paths: list[str]):
        """The targets one at a time, as the walk finds them (and, with ``ticks``, None
        after each directory)."""
        seen: set[str] = set()  # real paths: each file is analysed once
        self.roots = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
        for given in paths:
            ap = os.path.abspath(given)
            try:
                st = os.stat(ap)
            except FileNotFoundError:
                self.errors.append(f"{given}: No such file or directory")
                continue
            except OSError as exc:
                self.errors.append(f"{given}: {exc.strerror or exc}")
                continue
            if stat.S_ISDIR(st.st_mode):
                settings = self.resolver.for_dir(ap)
                if self.force_exclude and self._ex(settings).match(ap, True):
                    continue
                for t in self._walk(ap):
                    if t is None:
                        yield t
                        continue
                    real = os.path.realpath(t.path)
                    if real not in seen:
                        seen.add(real)
                        yield t
            else:
                settings = self.resolver.for_file(ap)
                if self.force_exclude and self._ex(settings).match(ap, False):
                    continue
                real = os.path.realpath(ap)
                if real in seen or not self._reachable(ap, True):
                    continue
                seen.add(real)
                lang, kind = classify(ap, settings)
                yield Target(ap, display_path(ap), lang, True, settings, definition=kind)

    def _walk(self, top: str):
        stack: list[tuple[str, _GitIgnores]] = [(top, _GitIgnores.above(top).enter(top))]
        while stack:
            directory, ignores = stack.pop()
            try:
                with os.scandir(directory) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                self.errors.append(f"{display_path(directory)}: {exc.strerror or exc}")
                continue
            settings = self.resolver.for_dir(directory)
            ex = self._ex(settings)
            subdirs = []
            for e in entries:
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if e.name == ".git" or ex.match(e.path, True, own_only=True):
                        continue
                    if ignores.ignored(e.path, True):
                        continue
                    if os.path.exists(os.path.join(e.path, "pyvenv.cfg")):
                        continue
                    subdirs.append(e.path)
                    continue
                try:
                    if not e.is_file():  # follows symlinks: a link to a file is checked...
                        continue
                except OSError:
                    continue
                if e.is_symlink() and not self._reachable(e.path, False):
                    continue  # ...when it stays inside the scanned paths
                if ex.match(e.path, False, own_only=True) or ignores.ignored(e.path, False):
                    continue
                lang, kind = classify(e.path, settings)
                if lang is None and kind is None:
                    continue
                yield Target(e.path, display_path(e.path), lang, False, settings, definition=kind)
            for sub in reversed(subdirs):
                stack.append((sub, ignores.enter(sub)))
            if self.ticks:
                yield None  # a directory done: the caller may look after its workers


def discover(
    paths: list[str],
    resolver: Resolver,
    force_exclude: bool = False,
    warnings: list[str] | None = None,
) -> tuple[list[Target], list[str]]:
    """The targets and the error lines; warning lines are added to ``warnings``."""
    errors: list[str] = []
    targets = list(walk(paths, resolver, force_exclude, warnings, errors))
    return targets, errors


def walk(
    paths: list[str],
    resolver: Resolver,
    force_exclude: bool = False,
    warnings: list[str] | None = None,
    errors: list[str] | None = None,
    ticks: bool = False,
):
    """:func:`discover` one target at a time, as the walk finds them (each can be analysed
    while the walk goes on); with ``ticks``, None after each directory too (a long walk
    between two targets lets the caller look after its workers meanwhile).  Its error and
    warning lines are added to ``errors`` and ``warnings`` when the walk ends."""
    _GIT_ROOTS.clear()  # a repository made since the last discovery of this process counts
    d = Discovery(resolver, force_exclude)
    d.ticks = ticks
    yield from d.walk(paths)
    if warnings is not None:
        warnings.extend(d.warnings)
    if errors is not None:
        errors.extend(d.errors)


# --------------------------------------------------------------------------- --diff-base


class GitError(Exception):
    pass


def _git(args: list[str], cwd: str) -> str:
    import subprocess

    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, errors="surrogateescape"
        )
    except FileNotFoundError as exc:
        raise GitError("--diff-base needs git, which was not found") from exc
    if proc.returncode != 0:
        raise GitError(
            proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "git failed"
        )
    return proc.stdout


def changed_files(ref: str, cwd: str | None = None) -> set[str]:
    """Real paths of files changed since ``ref``: committed (``ref...HEAD``), uncommitted and
    untracked-but-not-ignored."""
    cwd = cwd or os.getcwd()
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd).strip()
    except GitError as exc:
        if "not found" in str(exc):
            raise
        raise GitError(f"--diff-base: {display_path(cwd)} is not in a git repository") from exc
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    except GitError as exc:
        raise GitError(f"--diff-base: unknown git ref '{ref}'") from exc
    names: set[str] = set()
    out = _git(["diff", "--name-only", "-z", "--diff-filter=ACMR", f"{ref}...HEAD"], top)
    names.update(n for n in out.split("\0") if n)
    try:
        out = _git(["diff", "--name-only", "-z", "--diff-filter=ACMR", "HEAD"], top)
        names.update(n for n in out.split("\0") if n)
    except GitError:
        pass  # no HEAD yet
    out = _git(["ls-files", "--others", "--exclude-standard", "-z"], top)
    names.update(n for n in out.split("\0") if n)
    return {os.path.realpath(os.path.join(top, n)) for n in names}
