"""The language-neutral lock model.

Frontends (``lockcheck.frontends.shell``, ``lockcheck.frontends.python``) read one source file
and describe what it does with locks as a :class:`FileFacts`: the locks it acquires, the paths
it removes, the hooks (traps, ``finally``, ``atexit``) that remove them, busy branches and their
exit status, probes, PID liveness checks, kills, background children.  Frontends do the
language-specific interpretation (what the shell's exit status is, which ``except`` is the busy
branch); they know nothing of rule codes.

Checks (``lockcheck.checks``) read only this model and produce :class:`Finding` objects;
reporters (``lockcheck.report``) print findings and know nothing of languages.

Positions: lines and columns are 1-based, columns count characters; ``start``/``end`` are
offsets into the decoded source text (``str`` indexes), used by fixes.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from .records import build, field, replace  # noqa: F401 - replace: a copy of a fact

# --------------------------------------------------------------------------- records
# The fact classes are declared like dataclasses (:mod:`lockcheck.records`): :func:`record`
# marks a class and :func:`lockcheck.records.build` writes the methods of all of them, their
# ``__init__`` compiled in one ``exec``, at the end of the module.

_RECORDS: list[tuple[type, bool]] = []


def record(cls=None, *, frozen: bool = False):
    """``@dataclass`` / ``@dataclass(frozen=True)`` for the classes of this module."""

    def mark(c: type) -> type:
        _RECORDS.append((c, frozen))
        return c

    return mark if cls is None else mark(cls)


# --------------------------------------------------------------------------- positions, edits


@record(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int
    start: int = -1
    end: int = -1


@record(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``content`` (offsets into the decoded source)."""

    start: int
    end: int
    content: str


class Applicability(str, Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    SUGGESTION = "suggestion"  # shown (--diff/--show-fixes), never applied


@record(frozen=True)
class FixTemplate:
    """An edit a frontend knows how to make; checks decide whether and how to offer it.

    ``content`` of an edit may hold ``{code}``, filled in with the configured skip exit code.
    """

    message: str
    edits: tuple[Edit, ...]

    def render(self, **values: object) -> tuple[Edit, ...]:
        """The edits with ``{name}`` placeholders replaced (no other brace is touched)."""
        out = []
        for e in self.edits:
            content = e.content
            for name, value in values.items():
                content = content.replace("{" + name + "}", str(value))
            out.append(Edit(e.start, e.end, content))
        return tuple(out)


@record(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


# --------------------------------------------------------------------------- path expressions


class PartKind(str, Enum):
    LIT = "lit"  # literal text
    HOME = "home"  # $HOME, ~, Path.home(), os.path.expanduser("~"), os.homedir(), $env:USERPROFILE
    SCRIPT_DIR = "script_dir"  # $(dirname "$0"), ${BASH_SOURCE%/*}, Path(__file__).parent
    SCRIPT_NAME = "script_name"  # $(basename "$0"), ${0##*/}, Path(__file__).stem
    SCRIPT = "script"  # "$0" / __file__ itself
    CWD = "cwd"  # $PWD, $(pwd), os.getcwd(), Path.cwd()
    TMPDIR = "tmpdir"  # tempfile.gettempdir() (a shared, world-writable directory)
    USER = "user"  # $USER, $LOGNAME, $(id -u), $UID, getpass.getuser(), os.getuid()
    ARG = "arg"  # $1, "$@", sys.argv[1], a CLI argument
    UNIQUE = "unique"  # $$, $BASHPID, $(mktemp), os.getpid(), uuid.*, tempfile.mk*
    VAR = "var"  # an unresolved variable (environment, loop var...): value = its name
    UNKNOWN = "unknown"  # anything that cannot be resolved statically


@record(frozen=True)
class Part:
    kind: PartKind
    value: str = ""  # literal text (LIT) or variable name (VAR)
    default: PathExpr | None = None  # ${VAR:-default}, os.environ.get("VAR", default)


@record(frozen=True)
class PathExpr:
    """A path after static resolution.  Unresolved parts stay unknown, never guessed."""

    parts: tuple[Part, ...]
    text: str = ""  # the expression as written in the source

    # -- rendering -------------------------------------------------------------------------
    def render(self) -> str:
        """For messages: the resolved path, with ~ for home and ${VAR} for unresolved
        variables; a path with an anonymous unknown part is shown as written."""
        if self.text and any(p.kind is PartKind.UNKNOWN and not p.value for p in self.parts):
            return self.text.replace('"', "").replace("'", "")
        out = []
        for p in self.parts:
            if p.kind is PartKind.LIT:
                out.append(p.value)
            elif p.kind is PartKind.HOME:
                out.append("~")
            elif p.kind in (PartKind.VAR, PartKind.ARG) and p.default is not None:
                out.append("${" + p.value + ":-" + p.default.render() + "}")
            elif p.kind is PartKind.VAR:
                out.append("${" + p.value + "}")
            elif p.kind is PartKind.UNKNOWN:
                out.append(p.value)  # the source text of the unknown part
            else:
                out.append("<" + p.kind.value + ">")
        return "".join(out)

    def key(self) -> str:
        """Identity for comparing two paths of one file (acquire vs removal)."""
        s = self.render()
        while "//" in s:
            s = s.replace("//", "/")
        if s.startswith("./"):
            s = s[2:]
        return s.rstrip("/") or s

    @property
    def is_literal(self) -> bool:
        return all(p.kind is PartKind.LIT for p in self.parts)

    @property
    def has_unique(self) -> bool:
        """Has a per-process part ($$, os.getpid(), mktemp, uuid...)."""
        return any(p.kind is PartKind.UNIQUE for p in self.parts)

    def basename_parts(self) -> tuple[Part, ...]:
        """Parts after the last literal '/' (the entry's own name)."""
        for i in range(len(self.parts) - 1, -1, -1):
            p = self.parts[i]
            if p.kind is PartKind.LIT and "/" in p.value:
                tail = p.value.rsplit("/", 1)[1]
                rest = self.parts[i + 1 :]
                return ((Part(PartKind.LIT, tail),) if tail else ()) + rest
        return self.parts

    def dirname(self) -> PathExpr | None:
        """The directory part, when the path has a literal '/' separating it from its name."""
        for i in range(len(self.parts) - 1, -1, -1):
            p = self.parts[i]
            if p.kind is PartKind.LIT and "/" in p.value:
                head = p.value.rsplit("/", 1)[0]
                parts = self.parts[:i] + ((Part(PartKind.LIT, head),) if head else ())
                if not parts:
                    parts = (Part(PartKind.LIT, "/"),)
                return PathExpr(parts, "")
        return None

    @staticmethod
    def literal(text: str) -> PathExpr:
        return PathExpr((Part(PartKind.LIT, text),), text)


# --------------------------------------------------------------------------- lock facts


class LockKind(str, Enum):
    EXISTENCE = "existence"  # held while a name exists: mkdir, noclobber, ln, O_EXCL, ...
    FLOCK = "flock"  # flock(1)/flock(2)/fcntl.flock/filelock.FileLock/portalocker
    LOCKF = "lockf"  # POSIX record locks: fcntl.lockf, fasteners
    # held while the process whose PID the file stores lives: a liveness test of the stored
    # PID decides the skip (or a wait), then the script writes its own PID (`echo $$ > F`)
    PIDFILE = "pidfile"


@record
class BusyBranch:
    """The code path taken when the lock is not acquired."""

    span: Span  # LCK401/402 point here: the exit/return, or the branch's first command
    ends_run: bool  # the branch ends the run (exit, entry-point return, falls off the end)
    status: int | None  # exit status the run ends with there (None: unknown)
    durable: bool = False  # the skip is recorded somewhere durable
    lsb_start: bool = False  # init/control script 'start' on a running service
    # replaces the exit status by "{code}"; None when no such edit is possible
    status_fix: FixTemplate | None = None


@record
class Acquire:
    kind: LockKind
    mechanism: str  # words for messages: "mkdir", "flock", 'open(..., "x")', "SoftFileLock"...
    path: PathExpr | None
    span: Span  # the acquiring command/call
    open_span: Span | None = None  # where the lock file is opened, if elsewhere (exec 9>F)
    # existence lock made by a non-atomic test then create (LCK103); span = the creation
    check_then_create: bool = False
    test_span: Span | None = None
    truncating: bool = False  # the open truncates or follows symlinks (exec 9>F, open(p, "w"))
    nonblocking: bool = False  # flock -n / -w N / LOCK_NB / acquire(blocking=False)
    command_form: bool = False  # flock [opts] LOCK CMD... / flock -c CMD
    conflict_code: int | None = None  # flock -E N
    status_handled: bool = True  # the conflict status is tested/does not leave the script
    conflict_code_fix: FixTemplate | None = None  # inserts "-E {code}" (LCK403)
    age_breaker: Span | None = None  # lockfile -l N: breaks old locks by age (LCK106)
    inode_recheck: bool = False  # re-checks fstat(fd).st_ino == stat(path).st_ino after locking
    service_record: bool = False  # an init script's service PID file, not a lock
    released: bool = False  # an existence lock's name is removed somewhere (release)
    release_on_every_exit: bool = True  # ... and that removal runs on every exit path
    busy: BusyBranch | None = None
    suggestion: FixTemplate | None = None  # the reference-pattern rewrite, when one can be built
    function: str | None = None  # enclosing function, if any
    # LCK502: the lock moved to a private directory, opened without truncating (shown only)
    placement_suggestion: FixTemplate | None = None
    # LCK406: a descriptor/handle lock whose busy branch is also taken when the lock file
    # cannot be opened or created (shell: an `exec 9>L` nothing checks, in bash outside POSIX
    # mode and without `set -e`; Python, Node, PowerShell: the handler that is the busy branch
    # also catches the open's errors - `except OSError` around both the open and the
    # acquire, `catch (e)` without a test of `e.code`).  ``open_span`` is then the open: the
    # `exec`, or the open call inside the `try`.  Frontends leave it False when the handler
    # tells contention apart (`except BlockingIOError`, `EWOULDBLOCK`/`EAGAIN`, `ELOCKED`).
    open_failure_is_busy: bool = False
    # LCK406's line when the open is neither ``open_span`` nor ``span`` (a lock object's
    # acquire, which opens the file, apart from its construction)
    open_failure_span: Span | None = None
    open_check_fix: FixTemplate | None = None  # LCK406: checks the open on its own (shown only)
    # a named OS mutex (no file: path is None): its name as written, when it is a literal
    mutex_name: str | None = None
    # the platforms it runs on when a platform test guards it ("windows", "posix"); None: any
    platforms: frozenset[str] | None = None
    # LCK202: released on every exit one way, but another caller takes it and releases it as
    # a plain later statement (a decorator's lock(); func(); release()): that call
    unreleased_route: Span | None = None


@record
class NonExclusiveCreate:
    """A creation used as a lock - its failure (or the test before it) leads to a busy branch,
    as "Deciding what is a lock" says - that does not fail when the name already exists, so
    the busy branch never runs and every run goes ahead (LCK109): shell `mkdir -p L || exit`;
    Python `os.makedirs(L, exist_ok=True)`, `Path.mkdir(exist_ok=True)`, `open(L, "w"/"a")` in
    a `try` whose `except FileExistsError` is the busy branch; Node `mkdirSync(L, {recursive:
    true})` or a `"w"` open whose `catch` tests `EEXIST`; PowerShell `New-Item -Force`,
    `-ErrorAction SilentlyContinue`/`Ignore`, or `New-Item` in `try` without `-ErrorAction
    Stop` (not when `$ErrorActionPreference = 'Stop'` is in effect)."""

    path: PathExpr | None
    span: Span  # the creating command or call (LCK109 points here)
    mechanism: str  # words for messages: "mkdir -p", "os.makedirs(..., exist_ok=True)"
    why: str  # what lets it succeed on an existing name: "-p", "exist_ok=True", "-Force"
    busy: BusyBranch | None = None  # the branch that never runs (None: a retry loop)
    # an edit that makes the creation fail on an existing name (PowerShell: drop -Force, set
    # -ErrorAction Stop): offered as an unsafe fix
    exclusive_fix: FixTemplate | None = None
    suggestion: FixTemplate | None = None  # toward the flock pattern (shown only)
    function: str | None = None


@record
class Removal:
    """A delete (or overwrite) of a path: rm, rmdir, unlink, os.remove, Path.unlink..."""

    path: PathExpr | None
    span: Span  # the removing command or call
    via: str = "direct"  # direct | trap | finally | atexit | exit-method | release-method
    hook_span: Span | None = None  # the trap/atexit that runs it
    conditional: bool = False  # inside a test/branch/function not unconditionally run
    stale_guard: str | None = None  # "dead-holder" | "age": removal of a lock judged stale
    overwrite: bool = False  # overwrites rather than deletes (echo $$ > L)
    is_glob: bool = False
    drop_fix: FixTemplate | None = None  # removes the removal, keeping the rest intact
    suggestion: FixTemplate | None = None  # LCK106: drop the breaker in favour of flock
    platforms: frozenset[str] | None = None  # as Acquire.platforms


@record
class ReleaseHook:
    """A trap / finally / atexit that removes ``path`` when it runs."""

    path: PathExpr | None
    span: Span  # the trap/try/atexit.register
    mechanism: str  # trap | finally | atexit
    # ids (indexes into FileFacts.acquires) of locks whose busy branch runs with this active
    active_in_busy_of: tuple[int, ...] = ()
    move_fix: FixTemplate | None = None  # moves the hook to just after the successful acquire


@record
class LivenessCheck:
    span: Span  # the liveness test (kill -0, ps -p, os.kill(pid, 0), psutil.pid_exists)
    pid_file: PathExpr | None
    consequential: bool  # its result leads to skip/exit or to create/remove/overwrite
    suggestion: FixTemplate | None = None  # LCK105: drop the check in favour of flock


@record
class Kill:
    span: Span  # the kill / os.kill
    signal: str
    pid_file: PathExpr | None
    suggestion: FixTemplate | None = None  # LCK108: no holder to kill with flock


@record
class Probe:
    """A throw-away entry created and at once removed again (a location test)."""

    path: PathExpr | None
    span: Span  # the creating command
    per_process_fix: FixTemplate | None = None  # appends a per-process part at create and remove


@record
class StatusOverride:
    """An EXIT trap (or its function) ending with a fixed status."""

    span: Span  # the exit N run by the trap
    detail: str  # e.g. "exit 0", "exit $? after another command"
    keep_status_fix: FixTemplate | None = None
    status: int | None = None  # the fixed status, when it is a known number


@record
class Background:
    """A child started in the background while a lock is held and not waited for."""

    span: Span
    lock: int  # index into FileFacts.acquires
    how: str  # "&", "nohup", "setsid", "disown", "subprocess.Popen", "os.fork"...
    # the child holds a copy of the locked descriptor (False: a detached child that does not)
    inherits_lock: bool = True


@record
class ParseError:
    span: Span
    message: str


@record
class FileFacts:
    path: str
    language: str  # "shell" | "python" | "javascript" | "powershell"
    text: str
    acquires: list[Acquire] = field(default_factory=list)
    removals: list[Removal] = field(default_factory=list)
    hooks: list[ReleaseHook] = field(default_factory=list)
    liveness: list[LivenessCheck] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    overrides: list[StatusOverride] = field(default_factory=list)
    backgrounds: list[Background] = field(default_factory=list)
    non_exclusive: list[NonExclusiveCreate] = field(default_factory=list)  # LCK109
    dirs_made: list[PathExpr] = field(default_factory=list)  # mkdir -p / makedirs(exist_ok)
    # files the script creates or writes for other purposes (pid files, markers, outputs)
    created: list[PathExpr] = field(default_factory=list)
    parse_errors: list[ParseError] = field(default_factory=list)
    comments: Mapping[int, str] = field(default_factory=dict)  # line -> comment (real ones)
    init_script: bool = False  # LSB header or a case "$1" in start) dispatcher
    # a job definition of the scanned tree (crontab, timer, CronJob...) starts this script;
    # set by whatever joins definitions to scripts, never by a frontend
    started_by_job: bool = False
    # a Windows Task Scheduler definition of the scanned tree runs this script as SYSTEM,
    # LocalService or NetworkService: its %TEMP% is the shared C:\Windows\Temp; set by the
    # join of definitions to scripts, never by a frontend
    system_account: bool = False


# --------------------------------------------------------------------------- findings


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@record
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    span: Span
    fix: Fix | None = None
    suggestion: Fix | None = None  # a shown-only rewrite in addition to / instead of fix
    noqa_row: int | None = None

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.col, self.code)


build(_RECORDS)
