"""``lockcheck race -- COMMAND [ARGS...]``: start copies of a lock wrapper together, many times.

The one place lockcheck executes anything, on purpose and only the command its user names.
COMMAND is a wrapper that runs a payload command (its trailing arguments by default, or where
``{}`` stands in ARGS).  lockcheck replaces the payload with its own overlap sentinel: a tiny
Python program that marks its entry into the round with an exclusive create, records a second
entrant while the first is still inside, holds for a moment and leaves.  Each round starts
``-j`` copies released by one barrier (every copy is forked and waits on a pipe; closing the
pipe lets them all go at once), waits for them, and counts: overlaps (must be 0), runs that
ran the payload, runs that skipped it (and with which exit code: a skip that exits 0 is told
apart), runs that failed, timeouts.  Every copy runs in its own process group, which is
killed whole on timeout; the scratch directory is removed at the end.
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

BUSY_CODE = 75

# The overlap sentinel.  argv: ROUND_DIR TOKEN HOLD_SECONDS.  The round directory holds
# "inside" while a payload runs; a second entrant finds it and leaves "overlap.TOKEN".
SENTINEL = r"""
import os, sys, time
d, token, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
open(os.path.join(d, "ran." + token), "w").close()
inside = os.path.join(d, "inside")
try:
    fd = os.open(inside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
except FileExistsError:
    open(os.path.join(d, "overlap." + token), "w").close()
    time.sleep(hold)
else:
    time.sleep(hold)
    os.close(fd)
    os.unlink(inside)
"""


@dataclass
class RunResult:
    round: int
    index: int
    status: int | None  # exit status; None on timeout
    signal: int | None
    ran: bool
    overlapped: bool
    seconds: float

    def outcome(self, busy_code: int) -> str:
        if self.status is None and self.signal is None:
            return "timeout"
        if self.ran:
            return "done" if self.status == 0 else "failed"
        if self.status == busy_code:
            return "busy"
        if self.status == 0:
            return "skipped-exit-0"
        return "failed"


@dataclass
class RaceReport:
    command: list[str]
    jobs: int
    rounds: int
    busy_code: int = BUSY_CODE
    rounds_run: int = 0
    overlaps: int = 0
    overlap_rounds: list[int] = field(default_factory=list)
    ran: int = 0
    busy: int = 0
    skipped_exit_0: int = 0
    failed: int = 0
    timeouts: int = 0
    exit_codes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: str | None = None  # why the run ended early (overall timeout)

    @property
    def problems(self) -> list[str]:
        out = []
        if self.overlaps:
            out.append(f"{self.overlaps} overlap(s): two copies ran the payload at once")
        if self.failed or self.timeouts:
            out.append(
                f"{self.failed + self.timeouts} run(s) neither ran the payload nor were busy"
            )
        if self.rounds_run and not self.ran:
            out.append("the payload never ran: every copy skipped")
        if self.stopped:
            out.append(self.stopped)
        return out

    def as_json(self) -> dict:
        return {
            "command": self.command,
            "jobs": self.jobs,
            "rounds": self.rounds,
            "busy_code": self.busy_code,
            "rounds_run": self.rounds_run,
            "overlaps": self.overlaps,
            "overlap_rounds": self.overlap_rounds,
            "ran_payload": self.ran,
            "busy": self.busy,
            "skipped_exit_0": self.skipped_exit_0,
            "failed": self.failed,
            "timeouts": self.timeouts,
            "exit_codes": self.exit_codes,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "ok": not self.problems,
            "problems": self.problems,
        }


def payload_argv(round_dir: str, token: str, hold: float) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", SENTINEL, round_dir, token, f"{hold:g}"]


def build_argv(command: list[str], payload: list[str]) -> list[str]:
    """The wrapper's argv with the payload appended, or put where ``{}`` stands: an argument
    that is exactly ``{}`` becomes the payload's arguments, except right after ``-c``; there,
    and inside a longer argument, ``{}`` becomes the payload quoted for the shell."""
    if not any("{}" in a for a in command[1:]):
        return command + payload
    out: list[str] = [command[0]]
    for prev, a in zip(command, command[1:], strict=False):
        if a == "{}" and prev != "-c":
            out.extend(payload)
        elif "{}" in a:
            out.append(a.replace("{}", shlex.join(payload)))
        else:
            out.append(a)
    return out


def _kill_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return
        time.sleep(0.05)


def _spawn(
    argv: list[str], pipes: tuple[int, int, int, int], env: dict, cwd: str | None, delay: float
) -> int:
    go_r, go_w, ready_r, ready_w = pipes
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)  # else the barrier never opens: EOF needs every writer closed
            os.close(ready_r)
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the copies' output never mixes into the report
                os.dup2(devnull, fd)
            os.write(ready_w, b".")
            os.close(ready_w)
            os.read(go_r, 1)  # the barrier: returns when the parent closes the pipe
            os.close(go_r)
            if delay:
                time.sleep(delay)
            if cwd:
                os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except BaseException:
            pass
        os._exit(127)
    return pid


def _round(
    command: list[str],
    rnd: int,
    jobs: int,
    scratch: str,
    hold: float,
    timeout: float,
    env: dict,
    cwd: str | None,
    jitter: float,
    rng: random.Random,
    payload_env: str | None = None,
) -> list[RunResult]:
    d = os.path.join(scratch, f"round-{rnd}")
    os.mkdir(d, 0o700)
    go_r, go_w = os.pipe()
    ready_r, ready_w = os.pipe()
    pids: dict[int, int] = {}
    start = time.monotonic()
    try:
        for i in range(jobs):
            payload = payload_argv(d, f"{i}", hold)
            if payload_env:  # the script's own stubbed work runs the payload from this variable
                argv, child_env = command, dict(env, **{payload_env: shlex.join(payload)})
            else:
                argv, child_env = build_argv(command, payload), env
            delay = rng.uniform(0, jitter) if jitter else 0.0
            pids[_spawn(argv, (go_r, go_w, ready_r, ready_w), child_env, cwd, delay)] = i
        os.close(ready_w)
        ready_w = -1
        got = 0
        while got < jobs:  # every copy forked and waiting
            chunk = os.read(ready_r, jobs - got)
            if not chunk:
                break
            got += len(chunk)
        start = time.monotonic()
        os.close(go_w)  # release them all at once
        go_w = -1
        done: dict[int, tuple[int | None, int | None, float]] = {}
        deadline = start + timeout
        while len(done) < len(pids):
            for pid in pids:
                if pid in done:
                    continue
                wpid, st = os.waitpid(pid, os.WNOHANG)
                if wpid:
                    code = os.waitstatus_to_exitcode(st)
                    done[pid] = (
                        code if code >= 0 else None,
                        -code if code < 0 else None,
                        time.monotonic() - start,
                    )
            if len(done) < len(pids):
                if time.monotonic() > deadline:
                    for pid in pids:
                        if pid not in done:
                            _kill_group(pid)
                            os.waitpid(pid, 0)
                            done[pid] = (None, None, time.monotonic() - start)
                    break
                time.sleep(0.002)
        # a payload the wrapper put in the background may still be inside: wait for it
        inside = os.path.join(d, "inside")
        settle = time.monotonic() + max(hold * 4, 0.5)
        while os.path.exists(inside) and time.monotonic() < settle:
            time.sleep(0.005)
        names = set(os.listdir(d))
    finally:
        for fd in (go_r, go_w, ready_r, ready_w):
            if fd >= 0:
                os.close(fd)
    results = []
    for pid, i in pids.items():
        status, sig, secs = done[pid]
        results.append(
            RunResult(
                round=rnd,
                index=i,
                status=status,
                signal=sig,
                ran=f"ran.{i}" in names,
                overlapped=f"overlap.{i}" in names,
                seconds=secs,
            )
        )
    return sorted(results, key=lambda r: r.index)


def race(
    command: list[str],
    jobs: int = 2,
    rounds: int = 200,
    hold: float = 0.05,
    timeout: float = 30.0,
    overall_timeout: float = 600.0,
    busy_code: int = BUSY_CODE,
    progress=None,
    cwd: str | None = None,
    jitter: float = 0.0,
    seed: int = 0,
    payload_env: str | None = None,
    env: dict | None = None,
) -> RaceReport:
    rep = RaceReport(command=list(command), jobs=jobs, rounds=rounds, busy_code=busy_code)
    env = dict(os.environ if env is None else env)
    scratch = tempfile.mkdtemp(prefix="lockcheck-race-")
    codes: Counter[str] = Counter()
    rng = random.Random(seed)
    t0 = time.monotonic()
    try:
        for rnd in range(1, rounds + 1):
            if time.monotonic() - t0 > overall_timeout:
                rep.stopped = f"stopped after {rnd - 1} rounds: --overall-timeout reached"
                break
            results = _round(
                command, rnd, jobs, scratch, hold, timeout, env, cwd, jitter, rng, payload_env
            )
            rep.rounds_run = rnd
            overl = sum(r.overlapped for r in results)
            if overl:
                rep.overlaps += overl
                rep.overlap_rounds.append(rnd)
            for r in results:
                rep.ran += r.ran
                outcome = r.outcome(busy_code)
                if outcome == "busy":
                    rep.busy += 1
                elif outcome == "skipped-exit-0":
                    rep.skipped_exit_0 += 1
                elif outcome == "timeout":
                    rep.timeouts += 1
                elif outcome == "failed":
                    rep.failed += 1
                key = (
                    "timeout"
                    if outcome == "timeout"
                    else (f"signal {r.signal}" if r.signal is not None else str(r.status))
                )
                codes[key] += 1
            if progress is not None:
                progress(rnd, rounds, rep)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        rep.seconds = time.monotonic() - t0
    rep.exit_codes = dict(sorted(codes.items()))
    return rep


def format_text(rep: RaceReport) -> str:
    lines = [
        f"race: {shlex.join(rep.command)}",
        f"  {rep.rounds_run} rounds of {rep.jobs} copies in {rep.seconds:.1f} s",
        f"  overlaps:           {rep.overlaps}"
        + (f" (rounds {', '.join(map(str, rep.overlap_rounds[:10]))})" if rep.overlaps else ""),
        f"  ran the payload:    {rep.ran}",
        f"  busy (exit {rep.busy_code}):".ljust(22) + f"{rep.busy}",
        f"  skipped, exit 0:    {rep.skipped_exit_0}"
        + ("  <- a skip that looks like success" if rep.skipped_exit_0 else ""),
        f"  failed:             {rep.failed}",
        f"  timed out:          {rep.timeouts}",
        "  exit codes:         " + ", ".join(f"{k}: {v}" for k, v in rep.exit_codes.items()),
    ]
    problems = rep.problems
    lines.append("FAIL: " + "; ".join(problems) if problems else "OK: no overlap")
    return "\n".join(lines) + "\n"
