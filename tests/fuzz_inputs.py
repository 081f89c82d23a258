"""Inputs for fuzzing lockcheck, and the checks each input must pass: shared by
``tests/test_fuzz.py`` (hypothesis, small and deterministic) and ``bench/fuzz.py`` (long runs).

Every generator takes a :class:`random.Random` and a size scale and returns ``(text,
language)``; text is a ``str`` as lockcheck decodes files (undecodable bytes are surrogate
escapes).  Seeds are the example scripts of the rule pages (``rules/*.md``) and
``bench/samples``."""

from __future__ import annotations

import os
import random
import re
import tempfile
from functools import lru_cache
from pathlib import Path

from lockcheck.engine import analyze_text, fix_text
from lockcheck.fix.apply import decode
from lockcheck.source import encode

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"```(bash|sh|python)[^\n]*\n(.*?)```", re.S)


@lru_cache(maxsize=1)
def seeds() -> tuple[tuple[str, str], ...]:
    """(text, language) of every example script the repository holds."""
    out = []
    for page in sorted((ROOT / "rules").glob("LCK*.md")):
        for lang, body in _BLOCK.findall(page.read_text(encoding="utf-8")):
            out.append((body, "python" if lang == "python" else "shell"))
    for sample in sorted((ROOT / "bench" / "samples").glob("*")):
        if sample.is_file():
            lang = "python" if sample.suffix == ".py" else "shell"
            out.append((sample.read_text(encoding="utf-8"), lang))
    return tuple(out)


# ------------------------------------------------------------------------------ fragments

SHELL_LOCKS = [
    "mkdir {p} || exit 1",
    "mkdir {p} 2>/dev/null || {{ echo busy; exit 0; }}",
    "if ! mkdir {p}; then exit 75; fi",
    "exec 9>{p}\nflock -n 9 || exit 1",
    "exec {{fd}}>>{p}\nflock -xn $fd || exit 75",
    "flock -n {p} -c 'run-job'",
    "( flock -n 200 || exit 1; work ) 200>{p}",
    "set -o noclobber\n{{ echo $$ > {p}; }} 2>/dev/null || exit 1",
    "[ -e {p} ] && exit 0\ntouch {p}",
    'if [ -f {p} ] && kill -0 "$(cat {p})"; then exit 0; fi\necho $$ > {p}',
    "lockfile -r 0 {p} || exit 1",
    "ln -s $$ {p} 2>/dev/null || exit 1",
    "trap 'rm -f {p}' EXIT INT TERM",
    "trap - EXIT",
    "rm -rf {p}",
    "mkdir {p}.$$ && rmdir {p}.$$",
    "mkdir {p}.probe && rmdir {p}.probe",
    "touch {p}.t; rm -f {p}.t",
    "exec 9>{p}\nflock -n 9 || exit 1\ntrap 'rm -f {p}' EXIT",
    "exec 8>>{p}\nflock -n 8 || exit 1\nwork\nrm -f {p}",
    "kill $(cat {p})",
    "pid=$(cat {p}); [ -d /proc/$pid ] && exit 0",
    "lock {p}\nlock -u {p}",
]
SHELL_PATHS = [
    "/tmp/job.lock",
    '"$LOCKDIR/job.lock"',
    "${XDG_RUNTIME_DIR:-/tmp}/job.lock",
    '"$(dirname "$0")/.lock"',
    "/var/run/job.pid",
    "$HOME/.cache/job.lock",
    "/tmp/$1.lock",
    '"${0##*/}.lock"',
    "/mnt/nfs/locks/job",
]
SHELL_WRAPS = [
    "if true; then\n{}\nfi",
    'f() {{\n{}\n}}\nf "$@"',
    "g() {{\n{}\n}}",
    "while :; do\n{}\nbreak\ndone",
    'case "$1" in\nstart)\n{}\n;;\n*) exit 0 ;;\nesac',
    "(\n{}\n)",
    "{{\n{}\n}} 2>/dev/null",
    "x=$(\n{}\n)",
    "cat <<EOF\n$(echo hi)\nEOF\n{}",
    "cat <<'EOF'\n{}\nEOF",
]
PY_LOCKS = [
    "fd = os.open({p}, os.O_CREAT | os.O_EXCL | os.O_WRONLY)",
    "fh = open({p}, 'w')\nfcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)",
    "with open({p}, 'a') as fh:\n    fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)",
    "os.mkdir({p})",
    "if os.path.exists({p}):\n    sys.exit(0)\nopen({p}, 'w').write(str(os.getpid()))",
    "atexit.register(os.remove, {p})",
    "os.kill(int(open({p}).read()), 0)",
    "Path({p}).unlink(missing_ok=True)",
    "lock = FileLock({p})\nlock.acquire(timeout=0)",
]
PY_PATHS = ["'/tmp/job.lock'", "LOCK", "os.path.join(BASE, 'job.lock')", "f'/run/{NAME}.pid'"]
PY_WRAPS = [
    "try:\n{}\nexcept OSError:\n    sys.exit(1)",
    "def main():\n{}\n\nmain()",
    "if __name__ == '__main__':\n{}",
    "try:\n{}\nfinally:\n    os.remove(LOCK)",
    "class Job:\n    def run(self):\n{}",
]
TOKENS = [
    "'",
    '"',
    "`",
    "$(",
    ")",
    "${",
    "}",
    "<<EOF\n",
    "\nEOF\n",
    "<<-'X'\n",
    "\x00",
    "\r\n",
    "\ufeff",
    "\udcff",
    "\udc80\udcc0",
    "\\",
    "\n",
    ";;",
    "fi",
    "done",
    "esac",
    "((",
    "[[",
    "#",
    "&",
    "|",
    "\t",
    "\u2028",
    "\U0001f600",
    "\U000f1862",
]


def _indent(text: str, by: str) -> str:
    return "\n".join(by + ln for ln in text.split("\n"))


def structured(rng: random.Random, scale: int = 1) -> tuple[str, str]:
    """A lock script built from the idioms the rules are about, nested in random ways."""
    if rng.random() < 0.3:
        body = [
            rng.choice(PY_LOCKS).format(p=rng.choice(PY_PATHS))
            for _ in range(rng.randint(1, 4 * scale))
        ]
        text = "\n".join(body)
        for _ in range(rng.randint(0, 3)):
            text = rng.choice(PY_WRAPS).format(_indent(text, "    "))
        head = "#!/usr/bin/env python3\nimport atexit, fcntl, os, sys\nfrom pathlib import Path\n"
        return head + "LOCK = '/tmp/job.lock'\n" + text + "\n", "python"
    parts = []
    for _ in range(rng.randint(1, 6 * scale)):
        text = rng.choice(SHELL_LOCKS).format(p=rng.choice(SHELL_PATHS))
        for _ in range(rng.randint(0, 3)):
            text = rng.choice(SHELL_WRAPS).format(text)
        parts.append(text)
    head = rng.choice(["#!/bin/bash\n", "#!/bin/sh -e\n", "#!/usr/bin/env bash\nset -eu\n", ""])
    return head + "LOCKDIR=/var/lock\n" + "\n".join(parts) + "\n", "shell"


def random_text(rng: random.Random, scale: int = 1) -> tuple[str, str]:
    """Characters and tokens in random order: no structure at all."""
    alphabet = "abc $(){}[]<>|&;'\"`\\\n\t#=-_/.*?!~0123456789"
    out = []
    for _ in range(rng.randint(0, 200 * scale)):
        out.append(rng.choice(TOKENS) if rng.random() < 0.2 else rng.choice(alphabet))
    return "".join(out), rng.choice(["shell", "python"])


def mutated(rng: random.Random, scale: int = 1) -> tuple[str, str]:
    """A seed script (or a structured one) with a few random edits."""
    text, lang = rng.choice(seeds()) if rng.random() < 0.7 else structured(rng, scale)
    for _ in range(rng.randint(1, 6)):
        n = len(text)
        i, j = sorted(rng.randint(0, n) for _ in range(2))
        op = rng.randrange(5)
        if op == 0:  # delete a slice
            text = text[:i] + text[j:]
        elif op == 1:  # insert a token
            text = text[:i] + rng.choice(TOKENS) + text[i:]
        elif op == 2:  # duplicate a slice
            text = text[:j] + text[i:j] + text[j:]
        elif op == 3:  # splice a slice of another seed
            other = rng.choice(seeds())[0]
            a, b = sorted(rng.randint(0, len(other)) for _ in range(2))
            text = text[:i] + other[a:b] + text[i:]
        else:  # swap two characters
            if n > 1:
                k = rng.randrange(n - 1)
                text = text[:k] + text[k + 1] + text[k] + text[k + 2 :]
    return text, lang


def _nest(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return "if true; then\n" * depth + "mkdir /tmp/x.lock || exit 1\n" + "fi\n" * depth
    if kind == 1:
        return "x=" + "$(" * depth + "echo /tmp" + ")" * depth + '\nmkdir "$x.lock" || exit 1\n'
    if kind == 2:
        return "(" * depth + "mkdir /tmp/x.lock || exit 1" + ")" * depth + "\n"
    return "{ " * depth + "mkdir /tmp/x.lock || exit 1;" + " }" * depth + "\n"


def edge(rng: random.Random, scale: int = 1) -> tuple[str, str]:
    """A seed with one of the shapes that break naive readers."""
    text, lang = rng.choice(seeds()) if rng.random() < 0.5 else structured(rng, scale)
    op = rng.randrange(9)
    if op == 0:  # truncated anywhere
        text = text[: rng.randint(0, len(text))]
    elif op == 1:
        text = text.replace("\n", "\r\n")
    elif op == 2:
        text = "\ufeff" + text
    elif op == 3:  # NUL bytes
        text = "".join(c + ("\x00" if rng.random() < 0.05 else "") for c in text)
    elif op == 4:  # invalid UTF-8, as lockcheck decodes it
        raw = encode(text)
        k = rng.randint(0, len(raw))
        text = decode(raw[:k] + bytes([rng.choice((0x80, 0xC0, 0xFF, 0xED))]) + raw[k:])
    elif op == 5:  # a huge line
        unit = rng.choice(["a", "$v", "'", "((", "stat ", "except ", " ", "${x:-", "\\"])
        text += "echo " + unit * (rng.randint(1, 20_000) * scale) + "\n"
    elif op == 6 and lang == "shell":  # deep nesting
        text += _nest(rng, rng.randint(1, 500 * scale))
    elif op == 7 and lang == "shell":  # many here-docs, one left open
        text += "".join(f"cat <<E{i}\n$v {i}\nE{i}\n" for i in range(rng.randint(1, 50 * scale)))
        text += "cat <<OPEN\n" + text[: rng.randint(0, 200)]
    else:  # many functions / case arms
        text += "".join(f"f{i}() {{ mkdir /tmp/l{i}.lock || return 1; }}\n" for i in range(50))
    return text, lang


CATEGORIES = {"random": random_text, "mutated": mutated, "structured": structured, "edge": edge}


# ------------------------------------------------------------------------------ checks


def _kept_outside(original: str, fixed: str, edits) -> bool:
    """``fixed`` is ``original`` with each edit's span replaced by its content, and nothing
    else changed."""
    pos = 0
    out = []
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(original[pos : e.start])
        out.append(e.content)
        pos = e.end
    out.append(original[pos:])
    return "".join(out) == fixed


def check(text: str, lang: str) -> None:
    """Both frontends, the checks and the fixer on ``text``; AssertionError (or the analysis'
    own InternalError) when lockcheck misbehaves."""
    for language in ("shell", "python"):
        name = "job.sh" if language == "shell" else "job.py"
        _facts, findings = analyze_text(name, text, language)
        for f in findings:
            assert f.span.start <= f.span.end <= len(text), (f.code, f.span)
    name = "job.sh" if lang == "shell" else "job.py"
    result = fix_text(name, text, lang, unsafe=True)
    _facts, first = analyze_text(name, text, lang)
    fixes = {f.fix.edits for f in first if f.fix is not None and f.fix.edits}
    applied = [f.fix.edits for f in result.applied]
    if applied and all(edits in fixes for edits in applied):  # one round: exact check
        edits = [e for ed in dict.fromkeys(applied) for e in ed]
        assert _kept_outside(text, result.fixed, edits), "a fix changed text outside its edits"
    elif not applied:
        assert result.fixed == text, "text changed without an applied fix"


def check_cli_fix(text: str, lang: str) -> None:
    """``lockcheck scan --fix --unsafe-fixes FILE`` writes exactly what the fixer made of the
    file's bytes, and never fails on its own."""
    import contextlib
    import io

    from lockcheck.cli import main

    name = "job.sh" if lang == "shell" else "job.py"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        raw = encode(text)
        with open(path, "wb") as fh:
            fh.write(raw)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["scan", "--isolated", "--fix", "--unsafe-fixes", path])
        assert status in (0, 1), (status, err.getvalue())
        assert "internal error" not in err.getvalue(), err.getvalue()
        with open(path, "rb") as fh:
            written = fh.read()
        if "binary file, not checked" in err.getvalue():  # NUL bytes: left alone
            assert written == raw
            return
        if "analysis stopped: timed out" in out.getvalue():  # the wall-clock bound (a loaded
            assert written == raw  # machine, a nice'd run): such a file is never written
            return
        expected = fix_text(name, decode(raw), lang, unsafe=True).fixed
        if raw.count(b"\n") and raw.count(b"\r\n") == raw.count(b"\n"):
            expected = re.sub(r"(?<!\r)\n", "\r\n", expected)
        assert written == encode(expected)
