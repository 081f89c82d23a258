"""Baseline keys and fingerprints ignore line moves (property test on the key function)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lockcheck.baseline import fingerprint, stable_keys
from lockcheck.checks import RULES
from lockcheck.model import Finding, Span

LINES = [
    "flock -n 9 || exit 0",
    "  flock -n 9 ||   exit 0",  # same text once whitespace is normalised
    'mkdir "$LOCK" || exit 0',
    "rm -f /tmp/*.lock",
    "kill $(cat /run/job.pid)",
]


def finding(code: str, line: int) -> Finding:
    r = RULES[code]
    return Finding(code, r.name, r.severity, "m", "jobs/a.sh", Span(line, 1, line, 2))


@settings(max_examples=60, deadline=None)
@given(
    flagged=st.lists(
        st.tuples(st.sampled_from(LINES), st.sampled_from(["LCK401", "LCK101"])),
        min_size=1,
        max_size=8,
    ),
    inserts=st.lists(st.integers(min_value=0, max_value=20), max_size=6),
)
def test_keys_survive_inserted_lines(flagged, inserts):
    text = [t for t, _ in flagged]
    findings = [finding(code, i + 1) for i, (_, code) in enumerate(flagged)]
    before = sorted(stable_keys(findings, lambda f: text[f.span.line - 1]))

    moved_text = list(text)
    moved_lines = list(range(1, len(text) + 1))
    for pos in inserts:
        pos = min(pos, len(moved_text))
        moved_text.insert(pos, "# a comment added later")
        moved_lines = [n + 1 if n > pos else n for n in moved_lines]
    moved = [finding(f.code, moved_lines[i]) for i, f in enumerate(findings)]
    after = sorted(stable_keys(moved, lambda f: moved_text[f.span.line - 1]))
    assert before == after
    assert len({fingerprint(k) for k in after}) == len(after)  # unique per finding
