"""Does lockcheck's time grow linearly with each input shape?  (issue #9)

    nice python bench/scaling.py [--shapes a,b] [--steps 3] [--big]

Each shape is built at n, 2n, 4n, ... and run through the shell frontend alone and through
``lockcheck.engine.analyze_text`` (frontend, checks, fix suggestions), plus ``fix_text`` for
the fixer shape; the glob shape matches a path n directories deep against one exclude glob
with five ``**`` (the "frontend" column).  Printed: size, bytes, CPU seconds (``time.process_time``, so that other
work on the machine skews it less) and the ratio to the previous size: about 2 is linear,
4 quadratic.  Results are also written as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lockcheck import frontends
from lockcheck.engine import analyze_text, fix_text

HERE = Path(__file__).resolve().parent
HEAD = "#!/bin/bash\n"


def doubling_values(n: int) -> str:
    return HEAD + "v=/srv/locks/x\n" + "v=$v$v\n" * n + 'mkdir "$v.lock" || exit 1\n'


def uncalled_functions(n: int) -> str:
    return HEAD + "".join(
        f"f{i}() {{ f{i + 1}; mkdir /srv/l{i}.lock || return 1; }}\n" for i in range(n)
    )


def many_functions(n: int) -> str:
    return (
        HEAD
        + "".join(f"f{i}() {{ echo {i}; }}\n" for i in range(n))
        + "".join(f"f{i}\n" for i in range(0, n, 7))
    )


def mkdir_lines(n: int) -> str:
    return HEAD + "".join(f"mkdir /srv/work/d{i}\n" for i in range(n))


def mkdir_locks(n: int) -> str:
    return HEAD + "".join(f"mkdir /srv/locks/l{i}.lock || exit 1\n" for i in range(n))


def huge_line(n: int) -> str:
    return HEAD + "echo " + "a " * n + "\nmkdir /srv/l.lock || exit 1\n"


def merged_statements(n: int) -> str:
    # what tree-sitter-bash runs together (its issues 316 and 347), repaired by parse_bash
    return (
        HEAD
        + (
            "ps aux | grep job | wc -l\nflock -n 9 || exit 75\n"
            "if [ $? -eq 0 ]\nthen\n  echo $$ > /srv/l.pid\nfi\n[ -f /srv/l.pid ]\n"
        )
        * n
    )


def piped_string_line(n: int) -> str:
    # one long line with many `|` in a string: the pipeline-line scan reads it once
    return HEAD + 'echo "' + "a|" * n + '"\nmkdir /srv/l.lock || exit 1\n'


def py_retry_creates(n: int) -> str:
    # many creates in one waiting loop, each with a success flag: one pass per loop and function
    body = "".join(
        f"        try:\n            os.mkdir('/srv/l{i}.lock')\n            ok = True\n"
        "        except FileExistsError:\n            pass\n        time.sleep(1)\n"
        for i in range(n)
    )
    return (
        "import os, time\n\ndef f():\n    ok = False\n    while True:\n" + body + "    return ok\n"
    )


def py_tested_pidfiles(n: int) -> str:
    # many `if exists(P): ...` tests in one function: each looks up its own creations only
    body = "".join(
        f"    if os.path.exists('/srv/l{i}.pid'):\n"
        f"        os.kill(int(open('/srv/l{i}.pid').read()), 0)\n        sys.exit(0)\n"
        f"    os.remove('/srv/l{i}.pid')\n"
        for i in range(n)
    )
    return "import os, sys\n\ndef f():\n" + body + "    return 0\n"


def nested_if(n: int) -> str:
    return HEAD + "if true; then\n" * n + "mkdir /srv/l.lock || exit 1\n" + "fi\n" * n


def nested_cmdsub(n: int) -> str:
    return HEAD + "x=" + "$(" * n + "echo /srv" + ")" * n + '\nmkdir "$x.lock" || exit 1\n'


def nested_subshell(n: int) -> str:
    return HEAD + "(" * n + "mkdir /srv/l.lock || exit 1" + ")" * n + "\n"


def nested_braces(n: int) -> str:
    return HEAD + "{ " * n + "mkdir /srv/l.lock || exit 1;" + " }" * n + "\n"


def heredocs(n: int) -> str:
    return HEAD + "".join(f"cat <<EOF{i}\nline $i\nEOF{i}\n" for i in range(n))


def case_arms(n: int) -> str:
    arms = "".join(f"  a{i}) echo {i} ;;\n" for i in range(n))
    return HEAD + 'case "$1" in\n' + arms + "esac\nmkdir /srv/l.lock || exit 1\n"


def case_arm_locks(n: int) -> str:
    arms = "".join(f"  a{i}) mkdir /srv/l{i}.lock || exit 1 ;;\n" for i in range(n))
    return HEAD + 'case "$1" in\n' + arms + "esac\n"


def stat_words(n: int) -> str:
    return HEAD + "exec 9>/srv/l.lock\nflock -n 9 || exit 1\necho " + "stat -L " * n + "\n"


def status_parens(n: int) -> str:
    return HEAD + "mkdir /srv/l.lock\nif [ $? " + "((" * n + " ]; then exit 1; fi\n"


def blank_lines(n: int) -> str:
    return "#!/bin/sh\nlock /var/lock/job\n" + "\n" * n + "lock -u /var/lock/job\n"


def probes(n: int) -> str:
    return HEAD + "".join(
        f"mkdir /srv/state/.probe{i} && rmdir /srv/state/.probe{i}\n" for i in range(n)
    )


# five ** parts in one exclude glob, against a path n directories deep that almost matches
DEEP_GLOB = "**/" + "a/**/" * 4 + "b"


def deep_glob_path(n: int) -> str:
    return "a/" * n + "c"


def py_except(n: int) -> str:
    return "import fcntl\n" + "except " * n + "\n"


# name: (builder, first size, what to run)
SHAPES = {
    "doubling-values": (doubling_values, 40, "shell"),
    "uncalled-functions": (uncalled_functions, 250, "shell"),
    "many-functions": (many_functions, 12_500, "shell"),
    "mkdir-lines": (mkdir_lines, 2500, "shell"),
    "mkdir-locks": (mkdir_locks, 250, "shell"),
    "huge-line": (huge_line, 125_000, "shell"),
    "nested-if": (nested_if, 2500, "shell"),
    "merged-statements": (merged_statements, 1000, "shell"),
    "piped-string-line": (piped_string_line, 50_000, "shell"),
    "nested-cmdsub": (nested_cmdsub, 2500, "shell"),
    "nested-subshell": (nested_subshell, 2500, "shell"),
    "nested-braces": (nested_braces, 2500, "shell"),
    "heredocs": (heredocs, 5000, "shell"),
    "case-arms": (case_arms, 5000, "shell"),
    "case-arm-locks": (case_arm_locks, 250, "shell"),
    "stat-words": (stat_words, 12_500, "shell"),
    "status-parens": (status_parens, 25_000, "shell"),
    "blank-lines": (blank_lines, 100_000, "shell"),
    "py-except": (py_except, 50_000, "python"),
    "py-retry-creates": (py_retry_creates, 200, "python"),
    "py-tested-pidfiles": (py_tested_pidfiles, 200, "python"),
    "fix-probes": (probes, 250, "fix"),
    "glob-double-stars": (deep_glob_path, 2000, "glob"),
}


def measure(text: str, kind: str) -> tuple[float, float]:
    """(frontend seconds, whole-run seconds) of CPU time; for a glob shape, the time of
    matching the path against :data:`DEEP_GLOB` (lockcheck.globs) and 0."""
    if kind == "glob":
        from lockcheck.globs import compile_spec

        spec = compile_spec([DEEP_GLOB])
        t0 = time.process_time()
        spec.match_file(text)
        return time.process_time() - t0, 0.0
    lang = "python" if kind == "python" else "shell"
    name = "job.py" if lang == "python" else "job.sh"
    t0 = time.process_time()
    frontends.parse(lang, name, text)
    t1 = time.process_time()
    if kind == "fix":
        fix_text(name, text, lang)
    else:
        analyze_text(name, text, lang)
    return t1 - t0, time.process_time() - t1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shape names")
    ap.add_argument("--steps", type=int, default=3, help="sizes per shape (3: n, 2n, 4n)")
    ap.add_argument("--big", action="store_true", help="start at 4x the default sizes")
    args = ap.parse_args(argv)
    rows = []
    print(
        f"{'shape':20s} {'size':>8s} {'bytes':>9s} {'frontend s':>11s} {'ratio':>6s} "
        f"{'whole s':>8s} {'ratio':>6s}"
    )
    for name in args.shapes.split(","):
        build, n, kind = SHAPES[name]
        n *= 4 if args.big else 1
        prev = None
        for _ in range(args.steps):
            text = build(n)
            front, whole = measure(text, kind)
            r1 = f"{front / prev[0]:6.2f}" if prev and prev[0] > 0.005 else "     -"
            r2 = f"{whole / prev[1]:6.2f}" if prev and prev[1] > 0.005 else "     -"
            print(
                f"{name:20s} {n:8d} {len(text):9d} {front:11.3f} {r1} {whole:8.3f} {r2}", flush=True
            )
            rows.append(
                {
                    "shape": name,
                    "size": n,
                    "bytes": len(text),
                    "frontend_s": front,
                    "whole_s": whole,
                }
            )
            prev = (front, whole)
            n *= 2
    out = HERE / "results" / time.strftime("scaling-%Y%m%dT%H%M%S.json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
