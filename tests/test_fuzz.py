"""Fuzzing through the public surface: both frontends, the checks and the fixer on random,
mutated and structured lock scripts (truncations, quotes, here-doc markers, NUL, CRLF, BOM,
invalid UTF-8, huge lines, deep nesting) must raise nothing, and a fix must never change text
outside its edits.  Small and deterministic here (derandomized, no deadline); long runs are
``bench/fuzz.py``."""

from __future__ import annotations

from fuzz_inputs import CATEGORIES, check, check_cli_fix, structured
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _case(category: str):
    return st.randoms(use_true_random=False).map(lambda rng: CATEGORIES[category](rng, 1))


@SETTINGS
@given(_case("random"))
def test_random_text(case):
    check(*case)


@SETTINGS
@given(_case("mutated"))
def test_mutated_seed_scripts(case):
    check(*case)


@SETTINGS
@given(_case("structured"))
def test_structured_lock_scripts(case):
    check(*case)


@SETTINGS
@given(_case("edge"))
def test_edge_shapes(case):
    check(*case)


@settings(SETTINGS, max_examples=25)
@given(st.randoms(use_true_random=False).map(lambda rng: structured(rng, 1)))
def test_cli_fix_writes_what_the_fixer_made(case):
    check_cli_fix(*case)


@SETTINGS
@given(
    st.text(
        alphabet=st.sampled_from(list("ab $(){}[]<>|&;'\"`\\\n\r\t#=-/.\x00\ufeff\udcff")),
        max_size=300,
    ),
    st.sampled_from(["shell", "python"]),
)
def test_hypothesis_text(text, lang):
    check(text, lang)
