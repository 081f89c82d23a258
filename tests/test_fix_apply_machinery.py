"""The fix machinery (rounds, overlap, rollback, atomic writes, diffs) against the model.

A toy analyser stands in for the frontends here, so that the machinery is tested on its own:
each marker word in the text is a finding whose fix is known.  The before/after fixtures of
the real rules are in the other ``test_fix_*`` files.
"""

from __future__ import annotations

import os
import re
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lockcheck.fix import apply
from lockcheck.fix.apply import (
    FixWriteError,
    apply_edits,
    read_source,
    unified_diff,
    write_atomic,
)
from lockcheck.model import (
    Applicability,
    Edit,
    FileFacts,
    Finding,
    Fix,
    ParseError,
    Severity,
    Span,
)

# marker -> (code, applicability, replacement)
MARKERS = {
    "RMLOCK": ("LCK201", Applicability.SAFE, ""),  # drop a removal
    "EXIT0": ("LCK401", Applicability.UNSAFE, "exit 75"),
    "STUCK": ("LCK301", Applicability.SAFE, "STUCK"),  # fix that does not fix
    "BREAKS": ("LCK203", Applicability.SAFE, "(("),  # fix that breaks the parse
    "CHAIN": ("LCK403", Applicability.SAFE, "EXIT0 RMLOCK"),  # fixed into other findings
}
WORD = re.compile("|".join(MARKERS))


def toy_analyze(path, text, language, settings=None):
    facts = FileFacts(path=path, language=language, text=text)
    findings = []
    if text.count("((") != text.count("))"):
        facts.parse_errors.append(ParseError(Span(1, 1, 1, 1), "unbalanced (("))
        findings.append(
            Finding("LCK000", "parse-error", Severity.WARNING, "x", path, Span(1, 1, 1, 1))
        )
    for m in WORD.finditer(text):
        code, appl, repl = MARKERS[m.group()]
        line = text.count("\n", 0, m.start()) + 1
        span = Span(line, 1, line, 1, m.start(), m.end())
        fix = Fix(appl, f"fix {m.group()}", (Edit(m.start(), m.end(), repl),))
        findings.append(
            Finding(code, "n", Severity.ERROR, f"{m.group()} at {m.start()}", path, span, fix)
        )
    return facts, findings


def fix_text(path, text, language, settings=None, codes=None, unsafe=False, analyse=toy_analyze):
    """The fix machinery with the toy analyser handed in, as ``lockcheck.engine.fix_text``
    hands in the real one."""
    return apply.fix_text(
        path,
        text,
        language,
        settings,
        codes,
        unsafe,
        analyse=lambda src: analyse(path, src, language, settings),
    )


def test_the_machinery_reanalyses_through_the_analyser_it_is_given():
    seen = []

    def counting(path, text, language, settings=None):
        seen.append(text)
        return toy_analyze(path, text, language, settings)

    res = fix_text("j.sh", "a RMLOCK b\n", "shell", analyse=counting)
    assert res.fixed == "a  b\n"
    assert seen == ["a RMLOCK b\n", "a  b\n"]  # the text, then the fixed text
    with pytest.raises(TypeError):
        apply.fix_text("j.sh", "RMLOCK\n", "shell")  # no analyser: nothing to fall back on


def test_safe_fixes_only_by_default():
    text = "a RMLOCK b\nEXIT0\n"
    res = fix_text("j.sh", text, "shell")
    assert res.fixed == "a  b\nEXIT0\n"
    assert [f.code for f in res.applied] == ["LCK201"]
    assert [f.code for f in res.remaining] == ["LCK401"]
    assert res.original == text and res.changed


def test_unsafe_fixes_with_flag_and_code_filter():
    text = "RMLOCK\nEXIT0\n"
    res = fix_text("j.sh", text, "shell", unsafe=True)
    assert res.fixed == "\nexit 75\n"
    res = fix_text("j.sh", text, "shell", codes=["lck401"], unsafe=True)
    assert res.fixed == "RMLOCK\nexit 75\n"


def test_fix_that_does_not_remove_its_finding_is_rolled_back():
    res = fix_text("j.sh", "STUCK RMLOCK\n", "shell")
    assert res.fixed == "STUCK \n"
    assert [(f.code, why) for f, why in res.rolled_back] == [
        ("LCK301", "the fix did not remove the LCK301 finding")
    ]
    assert [f.code for f in res.remaining] == ["LCK301"]


def test_fix_that_breaks_the_parse_is_rolled_back():
    res = fix_text("j.sh", "x BREAKS y RMLOCK\n", "shell")
    assert res.fixed == "x BREAKS y \n"
    assert [why for _f, why in res.rolled_back] == ["the fixed file no longer parses"]


def test_fixes_run_in_rounds_until_nothing_changes():
    res = fix_text("j.sh", "CHAIN\n", "shell", unsafe=True)
    assert res.fixed == "exit 75 \n"
    assert sorted(f.code for f in res.applied) == ["LCK201", "LCK401", "LCK403"]
    assert res.remaining == []


def test_overlapping_edits_wait_for_the_next_round():
    calls = []

    def overlapping(path, text, language, settings=None):
        calls.append(text)
        facts = FileFacts(path=path, language=language, text=text)
        findings = []
        i = text.find("abc")
        if i >= 0:
            for code, (s, e, c) in (("LCK201", (i, i + 2, "X")), ("LCK301", (i + 1, i + 3, "Y"))):
                fix = Fix(Applicability.SAFE, code, (Edit(s, e, c),))
                findings.append(
                    Finding(code, "n", Severity.ERROR, code, path, Span(1, 1, 1, 1, s, e), fix)
                )
        return facts, findings

    res = fix_text("j.sh", "..abc..", "shell", analyse=overlapping)
    # the first fix is applied; its rival, re-found on the new text, no longer exists
    assert res.fixed == "..Xc.."
    assert [f.code for f in res.applied] == ["LCK201"]
    assert res.rolled_back == []


def test_one_fix_shared_by_two_findings_is_applied_once():
    def shared(path, text, language, settings=None):
        facts = FileFacts(path=path, language=language, text=text)
        i = text.find("rm")
        if i < 0:
            return facts, []
        fix = Fix(Applicability.SAFE, "drop", (Edit(i, i + 2, ""),))
        sp = Span(1, 1, 1, 1, i, i + 2)
        return facts, [
            Finding("LCK201", "n", Severity.ERROR, "a", path, sp, fix),
            Finding("LCK201", "n", Severity.ERROR, "b", path, sp, fix),
        ]

    res = fix_text("j.sh", "x rm y", "shell", analyse=shared)
    assert res.fixed == "x  y"
    assert len(res.applied) == 2


def test_edits_outside_the_text_are_refused():
    def bad(path, text, language, settings=None):
        fix = Fix(Applicability.SAFE, "far", (Edit(100, 200, ""),))
        f = Finding("LCK201", "n", Severity.ERROR, "m", path, Span(1, 1, 1, 1), fix)
        return FileFacts(path=path, language=language, text=text), [f]

    res = fix_text("j.sh", "short", "shell", analyse=bad)
    assert res.fixed == "short"
    assert len(res.rolled_back) == 1


# --------------------------------------------------------------------------- properties

chunks = st.lists(
    st.one_of(
        st.sampled_from(list(MARKERS) + ["\n", "\r\n", " ", "é", "\udcff"]),
        st.text(alphabet="abcxyz #;{}'\"$", max_size=6),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(chunks, st.booleans())
def test_fix_text_is_idempotent(parts, unsafe):
    text = "".join(parts)
    once = fix_text("p.sh", text, "shell", unsafe=unsafe)
    twice = fix_text("p.sh", once.fixed, "shell", unsafe=unsafe)
    assert twice.fixed == once.fixed
    assert twice.applied == []


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=60),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 5), st.text(max_size=5)), max_size=5),
)
def test_apply_edits_changes_nothing_outside_its_edits(text, raw):
    edits = []
    for start, length, content in raw:
        s = min(start, len(text))
        e = min(s + length, len(text))
        cand = Edit(s, e, content)
        if all(not (s < o.end and o.start < e) and s != o.start for o in edits):
            edits.append(cand)
    out = apply_edits(text, edits)
    # rebuild: every byte between edits is the original's
    pos = 0
    rebuilt = []
    for ed in sorted(edits, key=lambda x: x.start):
        rebuilt.append(text[pos : ed.start])
        rebuilt.append(ed.content)
        pos = ed.end
    rebuilt.append(text[pos:])
    assert out == "".join(rebuilt)
    delta = sum(len(ed.content) - (ed.end - ed.start) for ed in edits)
    assert len(out) == len(text) + delta


def test_apply_edits_rejects_overlap():
    with pytest.raises(ValueError):
        apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])


# --------------------------------------------------------------------------- diffs


def test_unified_diff_headers_and_no_newline_marker():
    d = unified_diff("bin/job.sh", "a\nb\n", "a\nc")
    assert d.startswith("--- a/bin/job.sh\n+++ b/bin/job.sh\n")
    assert "-b\n" in d and "+c\n\\ No newline at end of file\n" in d
    assert unified_diff("x", "same", "same") == ""


# --------------------------------------------------------------------------- atomic write


def test_write_atomic_keeps_mode_and_crlf(tmp_path):
    p = tmp_path / "job.sh"
    raw = b"#!/bin/sh\r\nRMLOCK\r\nexit 0\r\n\xff\r\n"
    p.write_bytes(raw)
    p.chmod(0o751)
    text, data = read_source(str(p))
    assert "\r\n" in text
    res = fix_text(str(p), text, "shell")
    write_atomic(str(p), res.fixed, data, root=str(tmp_path))
    assert p.read_bytes() == b"#!/bin/sh\r\n\r\nexit 0\r\n\xff\r\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o751
    assert [x.name for x in tmp_path.iterdir()] == ["job.sh"], "no temporary file left"


def test_write_atomic_converts_inserted_lf_in_a_crlf_file(tmp_path):
    p = tmp_path / "job.sh"
    p.write_bytes(b"a\r\nb\r\n")
    text, data = read_source(str(p))
    write_atomic(str(p), text.replace("a\r\n", "a\r\nnew\n"), data, root=str(tmp_path))
    assert p.read_bytes() == b"a\r\nnew\r\nb\r\n"


def test_write_atomic_keeps_lf_files_lf(tmp_path):
    p = tmp_path / "job.sh"
    p.write_bytes(b"a\nb\n")
    text, data = read_source(str(p))
    write_atomic(str(p), text + "c\n", data, root=str(tmp_path))
    assert p.read_bytes() == b"a\nb\nc\n"


def test_write_atomic_refuses_symlink_outside_tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    outside = tmp_path / "outside.sh"
    outside.write_text("RMLOCK\n")
    link = tree / "job.sh"
    link.symlink_to(outside)
    text, data = read_source(str(link))
    with pytest.raises(FixWriteError, match="symlink"):
        write_atomic(str(link), "changed\n", data, root=str(tree))
    assert outside.read_text() == "RMLOCK\n"
    assert link.is_symlink()


def test_write_atomic_writes_through_symlink_inside_tree(tmp_path):
    real = tmp_path / "real.sh"
    real.write_text("old\n")
    link = tmp_path / "job.sh"
    link.symlink_to(real)
    text, data = read_source(str(link))
    write_atomic(str(link), "new\n", data, root=str(tmp_path))
    assert link.is_symlink(), "the link itself stays a link"
    assert real.read_text() == "new\n"


def test_write_atomic_refuses_a_file_changed_since_read(tmp_path):
    p = tmp_path / "job.sh"
    p.write_text("one\n")
    _text, data = read_source(str(p))
    p.write_text("two\n")
    with pytest.raises(FixWriteError, match="changed on disk"):
        write_atomic(str(p), "fixed\n", data, root=str(tmp_path))
    assert p.read_text() == "two\n"


def test_write_atomic_default_root_is_cwd(tmp_path, monkeypatch):
    outside = tmp_path / "o.sh"
    outside.write_text("x\n")
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "l.sh").symlink_to(outside)
    monkeypatch.chdir(tree)
    with pytest.raises(FixWriteError):
        write_atomic("l.sh", "y\n")
    assert os.path.islink(tree / "l.sh")


def test_many_fixes_with_a_chain_finish_within_the_round_limit():
    text = "RMLOCK " * 12 + "CHAIN\n"
    res = fix_text("j.sh", text, "shell")
    assert res.fixed == " " * 12 + "EXIT0 \n"
    assert [f.code for f in res.remaining] == ["LCK401"]


def test_a_rolled_back_fix_does_not_hold_back_the_others():
    text = "STUCK " + "RMLOCK " * 15 + "BREAKS\n"
    res = fix_text("j.sh", text, "shell")
    assert res.fixed == "STUCK " + " " * 15 + "BREAKS\n"
    assert sorted(f.code for f, _why in res.rolled_back) == ["LCK203", "LCK301"]
    assert len(res.applied) == 15


@pytest.mark.parametrize("n", [256, 1024])
def test_a_failed_round_finds_its_failing_fixes_in_log_many_analyses(n):
    """Issue 9: one failing fix among n in a round was found by checking every fix on its
    own (n analyses of the whole text: quadratic).  Halving the failing set finds it in
    about 2 log2 n analyses, and the n - 1 others are still applied in the same round."""
    seen = []

    def counting(path, text, language, settings=None):
        seen.append(len(text))
        return toy_analyze(path, text, language, settings)

    text = "RMLOCK " * (n // 2) + "STUCK " + "RMLOCK " * (n // 2 - 1) + "\n"
    res = fix_text("j.sh", text, "shell", analyse=counting)
    assert res.fixed == " " * (n // 2) + "STUCK " + " " * (n // 2 - 1) + "\n"
    assert [f.code for f, _why in res.rolled_back] == ["LCK301"]
    assert len(res.applied) == n - 1
    log = n.bit_length() - 1
    # the text, the round, the halves down to the stuck fix (2 per level), the good together
    assert len(seen) <= 2 * log + 4, len(seen)


def test_several_failing_fixes_are_each_rolled_back_in_order():
    text = "STUCK " + "RMLOCK " * 40 + "BREAKS " + "RMLOCK " * 40 + "STUCK\n"
    res = fix_text("j.sh", text, "shell")
    assert [f.code for f, _why in res.rolled_back] == ["LCK301", "LCK203", "LCK301"]
    assert [why for _f, why in res.rolled_back][1] == "the fixed file no longer parses"
    assert len(res.applied) == 80
    assert res.fixed == "STUCK " + " " * 40 + "BREAKS " + " " * 40 + "STUCK\n"
