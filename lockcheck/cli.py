"""The command line: ``lockcheck scan``, ``lockcheck rule``, ``lockcheck init``.

Exit status: 0 nothing at or above ``--fail-on``; 1 findings at or above it (or ``--diff``
with a diff); 2 a usage or configuration error, or a file that could not be read (the other
files are still checked and reported).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence

from . import __version__
from .config import (
    FAIL_ON,
    ConfigError,
    Overrides,
    Resolver,
    fail_threshold,
    parse_size,
    parse_timeout,
    validate_selector,
)
from .report import FORMATS, HUMAN_FORMATS, SEVERITY_ORDER, ReportContext, one_line

PROG = "lockcheck"
COMMANDS = ("scan", "check", "rule", "init", "probe", "race", "version")


class UsageError(Exception):
    pass


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing ``shutil`` (with its
    compression modules, ~3 ms of a one-file scan): ``COLUMNS``, else the terminal of
    standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter with the width it would ask ``shutil`` for: ``add_argument``
    makes one for every argument (to check its metavar)."""

    def __init__(self, prog, *args, **kwargs) -> None:
        if len(args) < 3 and kwargs.get("width") is None:
            kwargs["width"] = _columns() - 2  # as HelpFormatter computes it
        super().__init__(prog, *args, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


# --------------------------------------------------------------------------- output


def _write(stream, text: str) -> None:
    if not text:
        return
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        stream.flush()
        buf.write(text.encode("utf-8", "surrogateescape"))
        buf.flush()
    else:
        stream.write(text)


def out(text: str) -> None:
    _write(sys.stdout, text)


def err(text: str) -> None:
    _write(sys.stderr, text if text.endswith("\n") else text + "\n")


def error_line(message: str) -> None:
    from .report import printable  # file names in the message never reach the terminal raw

    err(f"{PROG}: error: {printable(message)}")


def warning_line(message: str) -> None:
    from .report import printable

    err(f"{PROG}: warning: {printable(message)}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --------------------------------------------------------------------------- arguments


def _codes_list(value: str) -> list[str]:
    out_ = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        sel = validate_selector(item)
        if sel is None:
            raise argparse.ArgumentTypeError(f"unknown rule selector '{item}'")
        out_.append(sel)
    return out_


def _patterns(value: str) -> list[str]:
    return [p.strip() for p in value.split(",") if p.strip()]


def _exit_code(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer 1..255, got '{value}'") from None
    if not 1 <= n <= 255:
        raise argparse.ArgumentTypeError(f"expected an integer 1..255, got '{value}'")
    return n


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'")
    return n


def _bound(parse):
    def convert(value: str):
        try:
            return parse(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _extend(values: list[list[str]] | None) -> list[str]:
    return [v for group in values or [] for v in group]


def build_parser(command: str | None = None) -> Parser:
    """The parser of every subcommand; with ``command``, the other subcommands get their name
    and help line only (building them all costs a one-file scan a few milliseconds)."""
    p = Parser(prog=PROG, description="Find broken single-instance locks in job scripts.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    # prog given: argparse would format the usage to find it (what it finds is PROG)
    sub = p.add_subparsers(dest="command", parser_class=Parser, prog=PROG)

    s = sub.add_parser("scan", aliases=["check"], help="check files and directories")
    if command in (None, "scan", "check"):
        _scan_arguments(s)
    r = sub.add_parser("rule", help="explain a rule")
    if command in (None, "rule"):
        r.add_argument("code", nargs="?", help="a rule code, e.g. LCK401")
        r.add_argument("--all", action="store_true", help="list every rule")
        r.add_argument("--output-format", choices=("text", "json"), default="text")

    i = sub.add_parser(
        "init",
        help="print a lock wrapper template",
        description="Print a wrapper that runs a command under the reference flock pattern "
        "(a private lock directory, an untruncated open, exit 75 when busy). Save it and make "
        "it executable: lockcheck init --slot backup > backup-lock.sh && chmod +x "
        "backup-lock.sh, then run ./backup-lock.sh CMD...",
    )
    if command in (None, "init"):
        _init_arguments(i)

    from . import runtime

    runtime.add_parsers(sub, fill=command in (None, *runtime.COMMANDS))
    sub.add_parser("version", help="print the version")
    return p


def _scan_arguments(s: Parser) -> None:
    s.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or directories (default: .); '-': stdin"
    )
    sel = s.add_argument_group("rule selection")
    sel.add_argument(
        "--select",
        type=_codes_list,
        action="append",
        metavar="CODES",
        help="comma-separated codes or prefixes to enable (replaces the configured list; ALL)",
    )
    sel.add_argument(
        "--extend-select",
        type=_codes_list,
        action="append",
        metavar="CODES",
        help="codes or prefixes to enable in addition",
    )
    sel.add_argument(
        "--ignore",
        type=_codes_list,
        action="append",
        metavar="CODES",
        help="codes or prefixes to disable",
    )
    files = s.add_argument_group("file selection")
    files.add_argument(
        "--exclude",
        type=_patterns,
        action="append",
        metavar="PATTERNS",
        help="comma-separated gitignore-style patterns (replaces the default list)",
    )
    files.add_argument(
        "--extend-exclude",
        type=_patterns,
        action="append",
        metavar="PATTERNS",
        help="patterns to exclude in addition to the default list",
    )
    files.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude patterns to files named on the command line too",
    )
    files.add_argument(
        "--diff-base",
        metavar="REF",
        help="check only files changed since the git ref (plus uncommitted and untracked)",
    )
    files.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="the name of the file read from standard input (PATH '-')",
    )
    files.add_argument(
        "--show-files", action="store_true", help="list the files that would be checked"
    )
    cfg = s.add_argument_group("configuration")
    cfg.add_argument("--config", metavar="FILE", help="use this configuration file only")
    cfg.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    cfg.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="lowest severity that fails the run (default: warning; strict = true: info)",
    )
    cfg.add_argument(
        "--skip-exit-code",
        type=_exit_code,
        metavar="N",
        help="status a run that could not get the lock should exit with (default: 75)",
    )
    cfg.add_argument(
        "--synced-path",
        action="append",
        default=[],
        metavar="DIR",
        help="treat DIR as a synced or network location (repeatable)",
    )
    lim = s.add_argument_group("resources")
    lim.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        metavar="N",
        help="analyse up to N files at once (default: the machine's cores)",
    )
    lim.add_argument(
        "--file-timeout",
        type=_bound(parse_timeout),
        metavar="SECONDS",
        help="stop analysing a file after this long: one LCK000 (default: 20; 0: no bound)",
    )
    lim.add_argument(
        "--file-memory",
        type=_bound(parse_size),
        metavar="SIZE",
        help="memory bound of one file's analysis, e.g. 512MiB (default: 1GiB; 0: no bound)",
    )
    output = s.add_argument_group("output")
    output.add_argument(
        "--output-format",
        choices=list(FORMATS),
        metavar="FORMAT",
        help=f"{', '.join(FORMATS)} (default: full; env LOCKCHECK_OUTPUT_FORMAT)",
    )
    output.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    output.add_argument(
        "--sarif-file",
        metavar="FILE",
        help="also write the same findings as SARIF to FILE (beside the main format)",
    )
    output.add_argument("--statistics", action="store_true", help="count findings per rule")
    output.add_argument("-q", "--quiet", action="store_true", help="print findings only")
    output.add_argument("-s", "--silent", action="store_true", help="print nothing")
    output.add_argument("--no-color", action="store_true", help="never use colors")
    output.add_argument(
        "-e",
        "--exit-zero",
        action="store_true",
        help="exit 0 even with findings (errors still exit 2)",
    )
    output.add_argument("--version", action="store_true", help="print the version and exit")
    fixes = s.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes")
    fixes.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply (with --fix) or show as available the unsafe fixes",
    )
    fixes.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as diffs and write nothing (exit 1 when there is one)",
    )
    fixes.add_argument(
        "--show-fixes", action="store_true", help="list fixes and suggestions per finding"
    )
    base = s.add_argument_group("baselines")
    base.add_argument("--baseline", metavar="FILE", help="report only findings not in FILE")
    base.add_argument("--write-baseline", metavar="FILE", help="record today's findings in FILE")


def _init_arguments(i: Parser) -> None:
    g = i.add_mutually_exclusive_group()
    g.add_argument(
        "--shell",
        dest="language",
        action="store_const",
        const="shell",
        help="a bash wrapper (the default)",
    )
    g.add_argument(
        "--python",
        dest="language",
        action="store_const",
        const="python",
        help="a Python wrapper (fcntl.flock)",
    )
    g.add_argument(
        "--node",
        dest="language",
        action="store_const",
        const="node",
        help="a Node.js wrapper (flock on its own descriptor: fs-ext, else util-linux flock)",
    )
    g.add_argument(
        "--powershell",
        dest="language",
        action="store_const",
        const="powershell",
        help="a PowerShell wrapper (a Global\\ named mutex, WaitOne(0), released in finally)",
    )
    i.add_argument(
        "--slot",
        default="job",
        metavar="NAME",
        help="the lock's name: runs with the same slot exclude each other (default: job)",
    )


# --------------------------------------------------------------------------- entry point


def _mistyped_command(word: str) -> str | None:
    """The subcommand ``word`` looks like a typo of, when it names no existing path."""
    import difflib

    if word.startswith("-") or os.path.lexists(word):
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list:  # bare `lockcheck`: what it can do, not a scan of whatever is here
        _write(sys.stderr, build_parser().format_help())
        return 2
    if args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version"):
        typo = _mistyped_command(args_list[0])
        if typo is not None:
            error_line(f"unrecognized subcommand '{args_list[0]}' (did you mean '{typo}'?)")
            return 2
        args_list.insert(0, "scan")
    # the top level has no option that takes a value: the first word is the subcommand
    command = next((a for a in args_list if not a.startswith("-")), None)
    parser = build_parser(command if command in COMMANDS else None)
    try:
        args = parser.parse_args(args_list)
    except UsageError as exc:
        error_line(str(exc))
        return 2
    try:
        if args.version or args.command == "version":
            out(f"{PROG} {__version__}\n")
            return 0
        if args.command == "rule":
            return cmd_rule(args)
        if args.command == "init":
            return cmd_init(args)
        if args.command in ("probe", "race"):
            from . import runtime

            return runtime.run(args, out, UsageError)
        return cmd_scan(args)
    except (ConfigError, UsageError) as exc:
        error_line(str(exc))
        return 2
    except KeyboardInterrupt:
        err("")
        return 130
    except BrokenPipeError:  # `lockcheck ... | head`: stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except Exception as exc:  # a bug must not end in a bare traceback for the user
        if os.environ.get("LOCKCHECK_DEBUG"):
            raise
        error_line(
            f"internal error: {type(exc).__name__}: {exc} (set LOCKCHECK_DEBUG=1 for a traceback)"
        )
        return 2


# --------------------------------------------------------------------------- rule, init


def _rule_json(code: str) -> dict:
    from .checks import RULES, rule_url

    r = RULES[code]
    return {
        "code": code,
        "name": r.name,
        "severity": r.severity.value,
        "summary": r.summary,
        "fix": r.fix.value if r.fix is not None else None,
        "url": rule_url(code),
    }


def _page(code: str) -> str:
    from .checks import RULES, rule_url

    try:
        from .docs import rule_page
    except ImportError:
        rule_page = None
    if rule_page is not None:
        try:
            return rule_page(code)
        except KeyError:
            pass
    r = RULES[code]
    fix = r.fix.value if r.fix is not None else "none"
    return (
        f"# {code}: {r.name}\n\nSeverity: {r.severity.value} · Fix: {fix}\n\n{r.summary}\n\n"
        f"See {rule_url(code)}\n"
    )


def cmd_rule(args) -> int:
    import json

    from .checks import RULES

    if args.all:
        codes = sorted(RULES)
        if args.output_format == "json":
            data = [{**_rule_json(c), "explanation": _page(c)} for c in codes]
            out(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        else:
            w = max(len(RULES[c].name) for c in codes)
            for c in codes:
                r = RULES[c]
                fix = r.fix.value if r.fix is not None else "-"
                out(f"{c}  {r.name:<{w}}  {r.severity.value:<7}  {fix}\n")
        return 0
    if not args.code:
        raise UsageError("rule: give a rule code (e.g. LCK401) or --all")
    code = args.code.strip().upper()
    if code not in RULES:
        raise UsageError(f"unknown rule code '{args.code}'")
    page = _page(code)
    if args.output_format == "json":
        data = _rule_json(code)
        data["explanation"] = page
        out(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out(page if page.endswith("\n") else page + "\n")
    return 0


def cmd_init(args) -> int:
    try:
        from .fix.templates import render_init
    except ImportError as exc:
        error_line(f"init is not available in this build (lockcheck.fix.templates: {exc})")
        return 2
    language = args.language or "shell"
    try:
        text = render_init(language, args.slot)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"init: {exc}") from exc
    out(text if text.endswith("\n") else text + "\n")
    return 0


# --------------------------------------------------------------------------- scan


class Progress:
    """A one-line progress display on stderr, only on a terminal, never in CI, and only once
    a scan has taken longer than a moment."""

    DELAY = 0.75

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.DELAY or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\r{PROG}: checked {done}/{total} files")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _stdin_target(args, resolver: Resolver):
    from .discover import Target
    from .frontends import language_of

    data = sys.stdin.buffer.read()
    name = args.stdin_filename
    display = name or "-"
    path = os.path.abspath(name) if name else "-"
    settings = resolver.for_file(path if name else os.path.join(os.getcwd(), "-"))
    language = language_of(display, data[:256])
    if language is None:
        raise UsageError(
            f"{display}: cannot tell shell from Python: give --stdin-filename NAME.sh or NAME.py"
        )
    return Target(path, display, language, True, settings, data=data)


def _use_color(args, fmt: str) -> bool:
    if fmt not in HUMAN_FORMATS or args.no_color or args.output_file:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _load_fix_module():
    import importlib

    try:
        apply = importlib.import_module(f"{__package__}.fix.apply")
    except ImportError as exc:
        raise UsageError(
            f"fixes are not available in this build (lockcheck.fix.apply: {exc})"
        ) from exc
    return apply


def cmd_scan(args) -> int:
    from .discover import GitError, changed_files, walk

    fmt = args.output_format or os.environ.get("LOCKCHECK_OUTPUT_FORMAT") or "full"
    if fmt not in FORMATS:
        raise UsageError(
            f"LOCKCHECK_OUTPUT_FORMAT: invalid output format '{fmt}' "
            f"(choose from {', '.join(FORMATS)})"
        )
    if args.baseline and args.write_baseline:
        raise UsageError("--baseline and --write-baseline cannot be used together")
    if args.fix or args.diff:
        _load_fix_module()  # a build without the fix modules fails before any file is read
    overrides = Overrides(
        select=_extend(args.select) if args.select else None,
        extend_select=_extend(args.extend_select),
        ignore=_extend(args.ignore),
        exclude=_extend(args.exclude) if args.exclude else None,
        extend_exclude=_extend(args.extend_exclude),
        synced_paths=list(args.synced_path),
        skip_exit_code=args.skip_exit_code,
        fail_on=args.fail_on,
        file_timeout=args.file_timeout,
        file_memory=args.file_memory,
    )
    resolver = Resolver(overrides, config=args.config, isolated=args.isolated)
    paths = args.paths or (["-"] if args.stdin_filename else ["."])
    stdin = paths == ["-"]
    if "-" in paths and not stdin:
        raise UsageError("'-' (standard input) cannot be combined with other paths")
    changed = None
    if args.diff_base:
        try:
            changed = changed_files(args.diff_base)
        except GitError as exc:
            raise UsageError(str(exc)) from exc

    machine = fmt not in HUMAN_FORMATS
    progress = Progress(
        sys.stderr.isatty()
        and not os.environ.get("CI")
        and not machine
        and not (args.quiet or args.silent)
        and not args.show_files
    )
    from .runner import codes_for, run, run_walk

    errors: list[str] = []
    warnings: list[str] = []
    if stdin:
        targets = [_stdin_target(args, resolver)]
        if changed is not None:
            targets = [t for t in targets if os.path.realpath(t.path) in changed]
    else:
        found = walk(paths, resolver, args.force_exclude, warnings, errors, ticks=True)
        if changed is not None:
            found = (t for t in found if t is None or os.path.realpath(t.path) in changed)
        if args.show_files:
            targets = [t for t in found if t is not None]
        else:  # each file is analysed while the walk goes on
            targets, results = run_walk(found, progress=progress, jobs=args.jobs)
        for w in resolver.warnings + warnings:
            warning_line(w)
    for e in errors:
        error_line(e)
    status_error = bool(errors)

    if args.show_files:
        for t in sorted(targets, key=lambda t: t.display):
            if t.language is not None or t.definition is not None:
                out(f"{t.display}\n")
        return 2 if status_error else 0

    if stdin:
        results = run(targets, progress=progress, jobs=args.jobs)
    progress.done()
    definitions: dict = {}  # display path -> how to re-analyse a definition (fixes)
    if not stdin and any(r.definition is not None for r in results):
        # the join of job definitions to scripts: only when the workers parsed one (a scan
        # of scripts alone never imports the definitions layer)
        from .definitions.join import analyze_tree

        definitions = analyze_tree(targets, results, paths, args.jobs)

    sources: dict[str, str] = {}
    absolute: dict[str, str] = {}
    settings_of: dict[str, object] = {}
    findings = []
    checked = 0
    for t, r in zip(targets, results, strict=True):
        if r.warning:
            warning_line(r.warning)
        if r.error:
            error_line(r.error)
            status_error = True
            continue
        if r.skipped:
            if t.explicit and not r.warning:  # named on the command line, yet not read
                warning_line(f"{r.display}: not checked: not a shell or Python script")
            continue
        checked += 1
        absolute[r.display] = r.path
        settings_of[r.display] = t.settings
        if r.findings:
            sources[r.display] = r.text or ""
            findings.extend(r.findings)

    # ---- fixes
    fixed: list = []
    diffs: list[str] = []
    stdin_fixed: str | None = None
    if args.fix or args.diff:
        apply = _load_fix_module()
        by_file: dict[str, list] = {}
        for f in findings:
            by_file.setdefault(f.path, []).append(f)
        ctx0 = ReportContext(unsafe_fixes=args.unsafe_fixes)
        fix_roots = list(paths)  # a fix never leaves them (apply.real_root)
        new_findings = []
        from .engine import analyze_text
        from .fix.bounded import Failed, FixTask, Stopped, fix_definitions, fix_files
        from .runner import default_jobs, stopped_finding

        todo = []  # (target, result, its findings, codes), each fixed in a bounded worker
        for t, r in zip(targets, results, strict=True):
            fs = by_file.get(r.display)
            if not fs:
                continue
            if not any(ctx0.applicable(f) for f in fs):
                new_findings.extend(fs)
                continue
            todo.append((t, r, fs, codes_for(t.settings, t.path)))
        # each file's fixes checked in a bounded worker; a job definition's in its tree (its
        # re-analysis needs the scan's join, which the forked worker shares)
        scripts = [x for x in todo if x[1].display not in definitions]
        if todo:  # the workers forked for the fixes share what this process imports
            from .runner import preload

            preload([t for t, _r, _fs, _codes in todo])
        done = iter(
            fix_files(
                [
                    FixTask(
                        r.path,
                        r.display,
                        r.text or "",
                        t.language,
                        t.settings,
                        codes,
                        args.unsafe_fixes,
                    )
                    for t, r, _fs, codes in scripts
                ],
                args.jobs or default_jobs(),
                analyze_text,  # what analyses each fixed text
            )
        )
        defs_done = iter(
            fix_definitions(
                [
                    (t, r, codes, definitions[r.display])
                    for t, r, _fs, codes in todo
                    if r.display in definitions
                ],
                args.unsafe_fixes,
                args.jobs or default_jobs(),
            )
        )
        outcomes = [
            next(defs_done) if r.display in definitions else next(done)
            for _t, r, _fs, _codes in todo
        ]
        for (_t, r, fs, codes), res in zip(todo, outcomes, strict=True):
            if isinstance(res, Stopped):  # the fixed text tripped a bound: the file stays
                if args.diff:  # which prints no findings: say why this file has no diff
                    warning_line(f"{r.display}: fixes not checked: {res.reason}; no diff")
                new_findings.extend(fs)
                new_findings.append(
                    stopped_finding(
                        r.display, f"{res.reason}, while checking its fixes (not fixed)"
                    )
                )
                continue
            if isinstance(res, Failed):  # a fixer bug must not lose the findings
                error_line(f"{r.display}: internal error while fixing: {res.message}")
                status_error = True
                new_findings.extend(fs)
                continue
            for f, why in res.rolled_back:
                warning_line(
                    f"{r.display}:{f.span.line}:{f.span.col}: {f.code} fix not applied: {why}"
                )
            remaining = [f for f in res.remaining if f.code in codes]
            if res.fixed != res.original:
                if args.diff:
                    diffs.append(apply.unified_diff(r.display, res.original, res.fixed))
                    new_findings.extend(fs)  # nothing written: the findings stay
                    fixed.extend(res.applied)
                    continue
                if stdin:  # the fixed text goes to stdout, the findings to stderr (as ruff)
                    stdin_fixed = res.fixed
                    sources[r.display] = res.fixed
                    fixed.extend(res.applied)
                    new_findings.extend(remaining)
                    continue
                try:
                    apply.write_atomic(r.path, res.fixed, r.data, fix_roots, r.source)
                except OSError as exc:
                    error_line(str(exc))
                    status_error = True
                    new_findings.extend(fs)
                    continue
                sources[r.display] = res.fixed
                fixed.extend(res.applied)
                new_findings.extend(remaining)
            else:
                new_findings.extend(fs)
        findings = new_findings

    ctx = ReportContext(
        sources=sources,
        color=_use_color(args, fmt),
        unsafe_fixes=args.unsafe_fixes,
        show_fixes=args.show_fixes,
        absolute=lambda p: absolute.get(p) or os.path.abspath(p),
    )

    def line_of(f):
        return ctx.line(f.path, f.span.line)

    # ---- baselines
    if args.write_baseline:
        from .baseline import write

        try:
            n = write(args.write_baseline, findings, line_of, ctx.abspath)
        except OSError as exc:
            raise UsageError(_os_error(args.write_baseline, exc)) from exc
        if not args.silent:
            entries = "entry" if n == 1 else "entries"
            err(f"{PROG}: wrote {n} baseline {entries} to {args.write_baseline}")
        return 2 if status_error else 0
    if args.baseline:
        from .baseline import BaselineError, filter_new

        try:
            findings, stale = filter_new(args.baseline, findings, line_of, ctx.abspath)
        except BaselineError as exc:
            raise UsageError(str(exc)) from exc
        if stale and not (args.quiet or args.silent):
            entries = "entry no longer matches" if stale == 1 else "entries no longer match"
            err(
                f"{PROG}: {stale} baseline {entries} (fixed or changed); "
                f"rewrite the baseline with --write-baseline"
            )

    findings.sort(key=lambda f: f.sort_key)

    # ---- --diff
    if args.diff:
        changes = "".join(diffs)  # what --fix would write; suggestions are only shown
        if not args.silent:
            from .report import printable_lines  # file contents never reach a terminal raw

            out(printable_lines(changes + _suggestion_diffs(findings, ctx, apply)))
            if not args.quiet:
                err(_diff_summary(len(fixed), findings, args))
        if status_error:
            return 2
        return 1 if changes and not args.exit_zero else 0

    # ---- which findings fail the run
    thresholds = {
        p: fail_threshold(settings_of.get(p) or resolver.for_file(p))
        for p in {f.path for f in findings}
    }

    def fails(f) -> bool:
        return SEVERITY_ORDER[f.severity.value] >= SEVERITY_ORDER[thresholds[f.path]]

    failing = 0 if args.exit_zero else sum(1 for f in findings if fails(f))

    # ---- report
    from .report import render

    if args.sarif_file:  # one scan, two reports: e.g. annotations on stdout and SARIF
        _write_report(args.sarif_file, render("sarif", findings, ctx))

    report = ""
    if args.statistics:
        from .report import statistics

        report = statistics.render(findings, ctx, fmt)
    else:
        report = render(fmt, findings, ctx)
    if fmt in HUMAN_FORMATS:
        if args.show_fixes:
            section = _show_fixes(findings, fixed, ctx)
            if section and report and not report.endswith("\n\n"):
                report += "\n"
            report += section
        if not args.quiet and not args.silent:
            report += _summary(
                findings, fixed, ctx, args, checked, failing, set(thresholds.values()), status_error
            )
    if stdin and args.fix:
        fixed_text = stdin_fixed
        if fixed_text is None:
            from .fix.apply import decode

            fixed_text = decode(targets[0].data or b"", targets[0].language) if targets else ""
        out(fixed_text)
        if not args.silent:
            _write(sys.stderr, report)
    elif args.output_file:
        from .outfile import write_new

        try:
            write_new(args.output_file, report.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise UsageError(_os_error(args.output_file, exc)) from exc
    elif not args.silent:
        out(report)

    if not targets and not args.diff_base and not status_error and not args.silent:
        warning_line("no shell or Python files found under the given path(s)")

    if status_error:
        return 2
    return 1 if failing else 0


def _write_report(path: str, report: str) -> None:
    """--sarif-file (kept apart from --output-file's writing, which hardening reworks)."""
    try:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(report.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from exc


def _os_error(path: str, exc: OSError) -> str:
    if exc.strerror is None:  # ours (UnsafeOutput): the message is the line
        return str(exc)
    return f"{path}: {exc.strerror}"


def _suggestion_diffs(findings, ctx: ReportContext, apply) -> str:
    """Suggestions are never applied; --diff shows each one against the original text."""
    parts = []
    seen: set = set()  # one rewrite carried by several findings (LCK101 and LCK202): once
    for f in findings:
        if f.suggestion is None or not f.suggestion.edits or f.path not in ctx.sources:
            continue
        if (f.path, f.suggestion.edits) in seen:
            continue
        seen.add((f.path, f.suggestion.edits))
        try:
            d = apply.fix_diff(f.path, ctx.sources[f.path], f.suggestion)
        except ValueError:
            continue
        if d:
            parts.append(
                f"# suggestion, not applied by --fix: {f.path}:{f.span.line}:{f.span.col}: "
                f"{f.code} {one_line(f.suggestion.message)}\n{d}"
            )
    return "".join(parts)


def _show_fixes(findings, fixed, ctx: ReportContext) -> str:
    """The fixes applied and available, each with its diff; text from the scanned files
    (names, messages, diff lines) escaped as in the text formats."""
    from .report import printable, printable_lines

    lines = []
    if fixed:
        lines.append(f"Fixed {_plural(len(fixed), 'error')}:")
        by_path: dict[str, Counter] = {}
        names = {}
        for f in fixed:
            by_path.setdefault(f.path, Counter())[f.code] += 1
            names[f.code] = f.name
        for path in sorted(by_path):
            lines.append(f"- {printable(path)}:")
            for code, n in sorted(by_path[path].items()):
                lines.append(f"    {n} × {code} ({names[code]})")
        lines.append("")
    shown = [f for f in findings if f.fix is not None or f.suggestion is not None]
    if shown:
        try:
            from .fix.apply import fix_diff
        except ImportError:
            fix_diff = None
        lines.append("Available fixes:")
        seen: dict = {}  # one rewrite carried by several findings (LCK101 and LCK202): once
        for f in shown:
            for fix in (f.fix, f.suggestion):
                if fix is None:
                    continue
                lines.append(
                    f"{printable(f.path)}:{f.span.line}:{f.span.col}: {f.code} "
                    f"[{fix.applicability.value}] {printable(one_line(fix.message))}"
                )
                text = ctx.sources.get(f.path)
                first = seen.setdefault((f.path, fix.edits), f.code) if fix.edits else f.code
                if first != f.code:
                    lines.append(f"    (the same rewrite as {first}'s above)")
                elif fix_diff is not None and text is not None and fix.edits:
                    try:
                        d = fix_diff(f.path, text, fix)
                    except ValueError:
                        d = ""
                    rows = printable_lines(d).split("\n")[:-1]  # d ends with a line end
                    lines.extend("    " + ln.removesuffix("\r") for ln in rows)
        lines.append("")
    return "\n".join(lines) + "\n" if lines else ""


def _by_severity(findings) -> str:
    """``1 error, 2 warnings, 1 info``: the counts, most severe first."""
    counts = Counter(f.severity.value for f in findings)
    parts = []
    for sev in sorted(counts, key=lambda v: -SEVERITY_ORDER[v]):
        parts.append(f"{counts[sev]} {sev}" if sev == "info" else _plural(counts[sev], sev))
    return ", ".join(parts)


def _hidden_unsafe(findings) -> int:
    return sum(
        1
        for f in findings
        if f.fix is not None and f.fix.edits and f.fix.applicability.value == "unsafe"
    )


def _diff_summary(k: int, findings, args) -> str:
    if k:
        return f"Would fix {_plural(k, 'finding')}."
    hidden = 0 if args.unsafe_fixes else _hidden_unsafe(findings)
    if hidden:
        fixes = "fix is" if hidden == 1 else "fixes are"
        return f"No safe fixes to apply ({hidden} unsafe {fixes} shown with --unsafe-fixes)."
    return "No fixes to apply."


def _summary(
    findings,
    fixed,
    ctx: ReportContext,
    args,
    checked: int,
    failing: int,
    thresholds: set[str],
    status_error: bool,
) -> str:
    n = len(findings)
    k = len(fixed)
    lines = []
    if n == 0 and k == 0:
        # an error or an unchecked file said why; "passed" would claim a check that did not run
        return "" if status_error or not checked else "All checks passed!\n"
    if args.fix and k:
        rest = f": {_by_severity(findings)}" if n else ""
        lines.append(f"Found {_plural(n + k, 'finding')} ({k} fixed, {n} remaining{rest}).")
    else:
        lines.append(f"Found {_plural(n, 'finding')} ({_by_severity(findings)}).")
    if n:
        why = "--exit-zero" if args.exit_zero else None
        if why is None:
            why = (
                f"fail-on = {next(iter(thresholds))}"
                if len(thresholds) == 1
                else "fail-on per file"
            )
        if failing == 0:
            lines.append(f"None fails the run ({why}).")
        elif failing == n:
            lines.append(f"{'It fails' if n == 1 else 'They fail'} the run ({why}).")
        else:
            passing = n - failing
            verb = "does" if passing == 1 else "do"
            lines.append(
                f"{failing} {'fails' if failing == 1 else 'fail'} the run ({why}); "
                f"{passing} {verb} not."
            )
    fixable = 0 if args.fix else sum(1 for f in findings if ctx.applicable(f))
    hidden = 0 if args.unsafe_fixes else _hidden_unsafe(findings)
    hint = ""
    if hidden:
        fixes = "fix" if hidden == 1 else "fixes"
        hint = f"{hidden} hidden {fixes} can be enabled with the --unsafe-fixes option"
    if fixable:
        line = f"[*] {fixable} fixable with the --fix option"
        lines.append(f"{line} ({hint})." if hint else f"{line}.")
    elif hint:
        lines.append(f"No fixes available ({hint}).")
    return "\n".join(lines) + "\n"
