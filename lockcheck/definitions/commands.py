"""What a command line runs: the lock wrapper around it and the script paths it names."""

from __future__ import annotations

import re
import shlex

WRAPPERS = {"flock", "run-one", "lckdo", "setlock", "lockrun", "solo", "chpst"}
_SCRIPTISH = re.compile(r"(?:[A-Za-z]:)?/?[\w.-]+(/[\w.-]+)+|[\w.-]+\.(sh|bash|py|pl|rb)$")
_SEP = re.compile(r"&&|\|\||;|\||\n")
_PROSE = re.compile(r"\"[^\"\n]*\s[^\"\n]*\"|'[^'\n]*\s[^'\n]*'")
_WORD = re.compile(r"[^\s;&|()<>'\"`]+")  # a word, quotes dropped (paths rarely hold them)


def words(cmd: str) -> list[str]:
    try:
        return shlex.split(cmd, comments=True, posix=True)
    except ValueError:
        return cmd.split()


def wrapper_lock(cmd: str) -> str | None:
    """The lock file when ``cmd`` starts with a non-blocking or bounded lock wrapper
    (``flock -n``/``-w``, ``run-one``, ``lckdo``, ``setlock -n``, ``lockrun``, ``solo``)."""
    if not any(w in cmd for w in WRAPPERS):
        return None
    for part in _SEP.split(cmd):
        w = words(part)
        while w and re.fullmatch(r"\w+=.*", w[0]):  # VAR=value cmd
            w = w[1:]
        if not w:
            continue
        prog = w[0].rsplit("/", 1)[-1]
        if prog == "flock":
            opts = [x for x in w[1:] if x.startswith("-")]
            args = [x for x in w[1:] if not x.startswith("-")]
            if any(
                o in ("-n", "--nonblock", "-w", "--timeout") or o.startswith("-n") for o in opts
            ):
                # -w takes a number: the first non-option that is not a number is the lock
                args = [a for a in args if not re.fullmatch(r"[\d.]+", a)]
                return args[0] if args else ""
        elif prog in ("run-one", "solo", "lockrun", "lckdo", "setlock"):
            args = [x for x in w[1:] if not x.startswith("-")]
            if prog == "run-one":
                return " ".join(args)  # run-one locks on the command line itself
            return args[0] if args else ""
    return None


def script_paths(cmd: str) -> list[str]:
    """The words of ``cmd`` that look like paths of scripts (``./x.sh``, ``/opt/app/run``,
    ``bin/job``); interpreters (``bash x.sh``, ``python3 -m``...) are looked through."""
    out = []
    cmd = _PROSE.sub(" ", cmd)  # a quoted string with a space is a message, not a path
    for part in _SEP.split(cmd):
        for w in _WORD.findall(part):
            if w.startswith("-") or "=" in w.split("/", 1)[0] or "$" in w or "{" in w:
                continue
            if w.startswith(("http:", "https:")):
                continue
            if _SCRIPTISH.fullmatch(w) or w.startswith("./"):
                out.append(w)
    return out
