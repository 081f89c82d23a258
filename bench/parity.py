"""Findings of two lockcheck versions on the same files, compared (see bench/PARITY.md).

    python bench/parity.py collect OUT.tsv ROOT...   with the interpreter of the version to
                                                     record (it imports *that* lockcheck)
    python bench/parity.py diff A.tsv B.tsv [--strip PREFIX]

``collect`` runs ``lockcheck.engine.analyze_text`` on every Python file under the roots (as
lockcheck picks them: extension, then shebang; symlinks skipped) and writes one line per
finding: path, code, line, column.  It uses only the API every version has had, so the same
script records an old commit (checked out in a ``git worktree`` with its own venv) and the
new one.  A file that raises or takes over 60 s is written as ``!ERROR``/``!TIMEOUT``.

``diff`` prints the findings only in A, only in B, grouped by file, and the counts per code:
messages are left out (they change between versions for their own reasons).
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time


class _Timeout(BaseException):
    """Not an ``Exception``: lockcheck's internal-error guard must not turn it into LCK000."""


def _alarm(signum, frame):
    raise _Timeout()


def _files(roots: list[str]):
    from lockcheck.frontends import language_of

    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
                if language_of(path, data[:256]) == "python":
                    yield path, data


def collect(out_path: str, roots: list[str]) -> int:
    from lockcheck.engine import analyze_text
    from lockcheck.settings import Settings

    settings = Settings()
    signal.signal(signal.SIGALRM, _alarm)
    t0, n = time.perf_counter(), 0
    with open(out_path, "w", encoding="utf-8", errors="surrogateescape") as out:
        for path, data in _files(roots):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("latin-1")
            n += 1
            signal.alarm(60)
            try:
                _facts, findings = analyze_text(path, text, "python", settings)
            except _Timeout:
                out.write(f"{path}\t!TIMEOUT\t0\t0\n")
                continue
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                out.write(f"{path}\t!ERROR\t0\t0\t{type(exc).__name__}\n")
                continue
            finally:
                signal.alarm(0)
            for f in findings:
                out.write(f"{path}\t{f.code}\t{f.span.line}\t{f.span.col}\n")
    print(f"{n} files in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _read(path: str, strip: str) -> set[tuple[str, str, int, int]]:
    out = set()
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            file, code, ln, col = line.rstrip("\n").split("\t")[:4]
            out.add((file.removeprefix(strip), code, int(ln), int(col)))
    return out


def diff(a_path: str, b_path: str, strip_a: str, strip_b: str) -> int:
    a, b = _read(a_path, strip_a), _read(b_path, strip_b)
    print(f"A {a_path}: {len(a)} findings; B {b_path}: {len(b)} findings; {len(a & b)} in both")
    for label, only in (("only in A", a - b), ("only in B", b - a)):
        per_code = collections.Counter(code for _f, code, _l, _c in only)
        print(
            f"{label}: {len(only)}  " + ", ".join(f"{c} {n}" for c, n in sorted(per_code.items()))
        )
        by_file: dict[str, list] = collections.defaultdict(list)
        for f, code, ln, col in sorted(only):
            by_file[f].append(f"{code}@{ln}:{col}")
        for f, items in sorted(by_file.items()):
            print(f"  {f}: {' '.join(items)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/parity.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("out")
    c.add_argument("roots", nargs="+")
    d = sub.add_parser("diff")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--strip-a", default="", help="a path prefix to drop from A's paths")
    d.add_argument("--strip-b", default="", help="a path prefix to drop from B's paths")
    args = ap.parse_args(argv)
    if args.cmd == "collect":
        return collect(args.out, args.roots)
    return diff(args.a, args.b, args.strip_a, args.strip_b)


if __name__ == "__main__":
    sys.exit(main())
