"""Checks at run time, where static analysis cannot see: ``lockcheck probe`` (is this
directory fit for a lock?) and ``lockcheck race`` (does this wrapper exclude a second copy?).

Imported only by those two subcommands, so a scan never pays for it."""

from __future__ import annotations

import argparse
import os
import sys

COMMANDS = ("probe", "race")


def add_parsers(sub, fill: bool = True) -> None:
    """The ``probe`` and ``race`` subcommands; without ``fill``, their names and help only."""
    p = sub.add_parser(
        "probe",
        help="try a file's life cycle and flock in the directories a lock could live in",
        description=(
            "For each DIR (default: the candidates a job would use), try create, append, read,"
            " rename, flock (excludes a second process? dies with a holder killed by SIGKILL?),"
            " delete, mkdir and rmdir on per-process names, read the filesystem type, and give"
            " a verdict. Exit 0 when at least one DIR is safe for flock locks, 1 otherwise."
        ),
    )
    if fill:
        p.add_argument("dirs", nargs="*", metavar="DIR", help="directories to probe")
        p.add_argument("--output-format", choices=("text", "json"), default="text")

    r = sub.add_parser(
        "race",
        help="start copies of a lock wrapper together, many times, and count overlaps",
        description=(
            "Run COMMAND (a lock wrapper that runs the command given as its trailing arguments,"
            " or where {} stands in ARGS) as JOBS copies released together, for ROUNDS rounds,"
            " with lockcheck's overlap sentinel as the payload. Exit 1 on any overlap, on a run"
            " that neither ran the payload nor was busy, or when the payload never ran."
        ),
        usage="%(prog)s [options] -- COMMAND [ARGS...]",
    )
    if fill:
        _race_arguments(r)


def _race_arguments(r) -> None:
    r.add_argument("-j", "--jobs", type=_positive, default=2, help="copies per round (2)")
    r.add_argument("-n", "--rounds", type=_positive, default=200, help="rounds (200)")
    r.add_argument(
        "--hold", type=_seconds, default=0.05, help="seconds the payload stays inside (0.05)"
    )
    r.add_argument(
        "--jitter",
        type=_seconds_or_zero,
        default=0.0,
        help="start each copy up to this many seconds after the barrier (random, seeded: 0)",
    )
    r.add_argument(
        "--payload-env",
        metavar="NAME",
        help="pass the payload as a shell command in the environment variable NAME instead of"
        ' as arguments (for a job script whose own work you stub with `eval "$NAME"`)',
    )
    r.add_argument("--timeout", type=_seconds, default=30.0, help="seconds per run (30)")
    r.add_argument(
        "--overall-timeout", type=_seconds, default=600.0, help="seconds for all rounds (600)"
    )
    r.add_argument(
        "--busy-code", type=int, default=75, help="exit status of a busy run (default: 75)"
    )
    r.add_argument("--output-format", choices=("text", "json"), default="text")
    r.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND")


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{value}'")
    return n


def _seconds(value: str) -> float:
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got '{value}'") from None
    if not 0 < n < 1e6:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got '{value}'")
    return n


def _seconds_or_zero(value: str) -> float:
    return 0.0 if value.strip() in ("0", "0.0") else _seconds(value)


def run(args, out, usage_error) -> int:
    if args.command == "probe":
        return _probe(args, out)
    return _race(args, out, usage_error)


def _probe(args, out) -> int:
    from .probe import EXISTENCE, FLOCK, VERDICT_TEXT, default_candidates, probe

    dirs = args.dirs or default_candidates()
    reports = probe(dirs)
    ok = any(r.verdict in (FLOCK, EXISTENCE) for r in reports)
    if args.output_format == "json":
        import json

        out(json.dumps({"directories": [r.as_json() for r in reports], "ok": ok}, indent=2))
        out("\n")
        return 0 if ok else 1
    width = max(len(r.path) for r in reports)
    for r in reports:
        fs = f"{r.fstype or '-'} ({r.fs_kind})" if r.fs_kind else "-"
        out(f"{_clean(r.path).ljust(width)}  {fs:<18}  {VERDICT_TEXT[r.verdict]}\n")
        for why in r.reasons:
            out(f"{' ' * width}  - {_clean(why)}\n")
        for note in r.caveats:
            out(f"{' ' * width}  ! {_clean(note)}\n")
        failed = {k: v for k, v in r.steps.items() if v != "ok"}
        if failed:
            steps = ", ".join(f"{k}: {v}" for k, v in failed.items())
            out(f"{' ' * width}    {_clean(steps)}\n")
    return 0 if ok else 1


def _clean(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _race(args, out, usage_error) -> int:
    from .race import format_text, race

    command = list(args.argv)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise usage_error("race needs a COMMAND after '--'")
    progress = None
    if args.output_format == "text" and sys.stderr.isatty() and not os.environ.get("CI"):

        def progress(rnd, total, rep):
            sys.stderr.write(f"\rround {rnd}/{total}  overlaps {rep.overlaps}  ")
            if rnd == total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    rep = race(
        command,
        jobs=args.jobs,
        rounds=args.rounds,
        hold=args.hold,
        timeout=args.timeout,
        overall_timeout=args.overall_timeout,
        busy_code=args.busy_code,
        progress=progress,
        jitter=args.jitter,
        payload_env=args.payload_env,
    )
    if args.output_format == "json":
        import json

        out(json.dumps(rep.as_json(), indent=2) + "\n")
    else:
        out(format_text(rep))
    return 1 if rep.problems else 0
