"""Callable traits: loading pickled functions, checking what they return, and regex traits."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from pytest_karenina import load_checkpoint
from pytest_karenina.pipeline.rubric_grading.deterministic import (
    regex_value,
    score_callable_traits,
    score_regex_traits,
)
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.rubrics.callables import CallableTraitError, load_callable, run_callable
from pytest_karenina.rubrics.traits import CallableTrait, RegexTrait
from tests.helpers import DATA

cloudpickle = pytest.importorskip(
    "cloudpickle", reason="callable traits need the callable extra: pip install -e '.[dev]'"
)

TONES = {"formal": "Polite and stiff", "casual": "Relaxed", "Angry": "Hostile"}


def payload(function: Callable[[str], Any]) -> bytes:
    """``function`` serialized the way Karenina stores callable traits."""
    data: bytes = cloudpickle.dumps(function)
    return data


def boolean_trait(function: Callable[[str], Any], **extra: Any) -> CallableTrait:
    return CallableTrait(name="Check", callable_code=payload(function), kind="boolean", **extra)


def score_trait(
    function: Callable[[str], Any], low: int | None = 1, high: int | None = 5
) -> CallableTrait:
    return CallableTrait(
        name="Length", callable_code=payload(function), kind="score", min_score=low, max_score=high
    )


def literal_trait(function: Callable[[str], Any]) -> CallableTrait:
    return CallableTrait(
        name="Tone", callable_code=payload(function), kind="literal", classes=TONES
    )


@pytest.fixture(autouse=True)
def fresh_loader_cache() -> Iterator[None]:
    """Each test starts and ends with an empty loader cache."""
    load_callable.cache_clear()
    yield
    load_callable.cache_clear()


# --- boolean kind ----------------------------------------------------------------------------


def test_boolean_callable_returns_its_verdict() -> None:
    trait = boolean_trait(lambda text: "[1]" in text)
    assert run_callable(trait, "see [1]") is True
    assert run_callable(trait, "no citation") is False


def test_invert_result_flips_a_boolean_verdict() -> None:
    trait = boolean_trait(lambda text: "[1]" in text, invert_result=True)
    assert run_callable(trait, "see [1]") is False
    assert run_callable(trait, "no citation") is True


@pytest.mark.parametrize("returned", [1, 0, "true", None, 1.0])
def test_boolean_callable_must_return_a_real_bool(returned: Any) -> None:
    trait = boolean_trait(lambda text: returned)
    with pytest.raises(CallableTraitError, match="a boolean callable must return a bool"):
        run_callable(trait, "anything")


# --- score kind ------------------------------------------------------------------------------


def test_score_within_bounds_is_returned() -> None:
    trait = score_trait(lambda text: len(text.split()))
    assert run_callable(trait, "one two three") == 3
    assert run_callable(trait, "one") == 1  # the lower bound itself is allowed
    assert run_callable(trait, "a b c d e") == 5  # and so is the upper bound


def test_float_score_within_bounds_is_truncated_to_an_int() -> None:
    value = run_callable(score_trait(lambda text: 3.7), "x")
    assert value == 3
    assert type(value) is int


@pytest.mark.parametrize(("returned", "shown"), [(6, "6"), (0, "0"), (-1, "-1"), (5.5, "5.5")])
def test_score_outside_bounds_is_an_error_not_a_clamp(returned: float, shown: str) -> None:
    trait = score_trait(lambda text: returned)
    with pytest.raises(CallableTraitError, match=rf"returned {shown}, outside the range 1\.\.5"):
        run_callable(trait, "x")


def test_score_with_one_bound_only_checks_that_bound() -> None:
    assert run_callable(score_trait(lambda text: 1000, low=0, high=None), "x") == 1000
    with pytest.raises(CallableTraitError, match=r"outside the range 0\.\.None"):
        run_callable(score_trait(lambda text: -1, low=0, high=None), "x")


def test_unbounded_score_accepts_any_number() -> None:
    assert run_callable(score_trait(lambda text: -42, low=None, high=None), "x") == -42


@pytest.mark.parametrize("returned", [True, "3", None, [3]])
def test_score_callable_must_return_a_number(returned: Any) -> None:
    trait = score_trait(lambda text: returned)
    with pytest.raises(CallableTraitError, match="a score callable must return a number"):
        run_callable(trait, "x")


@pytest.mark.parametrize(
    ("returned", "low", "high"),
    [(float("nan"), 1, 5), (float("nan"), None, None), (float("inf"), None, None)],
)
def test_non_finite_score_is_a_callable_trait_error(
    returned: float, low: int | None, high: int | None
) -> None:
    trait = score_trait(lambda text: returned, low=low, high=high)
    with pytest.raises(CallableTraitError):
        run_callable(trait, "x")


# --- literal kind ----------------------------------------------------------------------------


def test_literal_callable_returns_the_class_index() -> None:
    trait = literal_trait(lambda text: "casual" if "hey" in text else "formal")
    assert run_callable(trait, "hey there") == 1
    assert run_callable(trait, "Dear Sir") == 0


def test_literal_class_names_match_case_insensitively() -> None:
    assert run_callable(literal_trait(lambda text: "angry"), "x") == 2
    assert run_callable(literal_trait(lambda text: "FORMAL"), "x") == 0


@pytest.mark.parametrize("returned", ["friendly", 1, None])
def test_literal_callable_must_name_a_class(returned: Any) -> None:
    trait = literal_trait(lambda text: returned)
    with pytest.raises(CallableTraitError, match="which is not one of the classes") as info:
        run_callable(trait, "x")
    assert "'formal', 'casual', 'Angry'" in str(info.value)


# --- failures of the function or of its payload ----------------------------------------------


def test_a_raising_function_is_reported_with_its_exception() -> None:
    def explode(text: str) -> bool:
        raise KeyError("missing-key")

    with pytest.raises(
        CallableTraitError, match="the function raised KeyError: 'missing-key'"
    ) as info:
        run_callable(boolean_trait(explode), "x")
    assert isinstance(info.value.__cause__, KeyError)


def test_the_function_receives_the_answer_text() -> None:
    trait = score_trait(lambda text: len(text), low=0, high=100)
    assert run_callable(trait, "twelve chars") == 12
    assert run_callable(trait, "") == 0


def test_empty_code_is_an_error() -> None:
    with pytest.raises(CallableTraitError, match="the trait has no callable_code"):
        load_callable(b"")
    with pytest.raises(CallableTraitError, match="no callable_code"):
        run_callable(CallableTrait(name="Empty"), "x")


def fixture_callable_traits() -> list[CallableTrait]:
    benchmark = load_checkpoint(DATA / "with_rubrics.jsonld")
    assert benchmark.global_rubric is not None
    traits = list(benchmark.global_rubric.callable_traits)
    assert [trait.name for trait in traits] == ["ContainsCitations", "ResponseLength"]
    return traits


@pytest.mark.parametrize("index", [0, 1])
def test_source_text_from_the_fixture_checkpoint_is_recognised(index: int) -> None:
    trait = fixture_callable_traits()[index]
    # The fixture stores base64 of Python source, not of a pickle.
    assert trait.callable_code.startswith((b"import ", b"def "))
    with pytest.raises(CallableTraitError, match="holds Python source text, not a pickled"):
        run_callable(trait, "text with [1]")


@pytest.mark.parametrize(
    "code", [b"\xff\xfe\x00 not a pickle", b"\x80\x05garbage", b"hello"], ids=repr
)
def test_random_bytes_cannot_be_unpickled(code: bytes) -> None:
    with pytest.raises(CallableTraitError, match="callable_code cannot be unpickled: ") as info:
        load_callable(code)
    assert "Python source" not in str(info.value)


def test_a_pickle_of_a_non_callable_is_rejected() -> None:
    with pytest.raises(CallableTraitError, match="holds a int, not a function"):
        load_callable(pickle.dumps(42))
    with pytest.raises(CallableTraitError, match="holds a dict, not a function"):
        load_callable(pickle.dumps({"def ": "lambda"}))


def test_a_pickle_needing_a_missing_module_names_it() -> None:
    # Protocol 0: GLOBAL opcode naming a module that does not exist, then STOP.
    code = b"cno_such_module_for_karenina_tests\nevaluate\n."
    with pytest.raises(
        CallableTraitError, match=r"needs module 'no_such_module_for_karenina_tests'$"
    ):
        load_callable(code)


class _BlockCloudpickle:
    """A meta path finder that makes ``cloudpickle`` look uninstalled."""

    def find_spec(self, fullname: str, path: Any = None, target: ModuleType | None = None) -> None:
        if fullname == "cloudpickle" or fullname.startswith("cloudpickle."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def test_missing_cloudpickle_gets_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    code = payload(lambda text: True)
    for name in [name for name in sys.modules if name.split(".")[0] == "cloudpickle"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_BlockCloudpickle(), *sys.meta_path])
    with pytest.raises(CallableTraitError, match=r"needs module 'cloudpickle' \(pip install"):
        load_callable(code)


def test_the_loader_caches_per_payload() -> None:
    code = payload(lambda text: True)
    first = load_callable(code)
    assert load_callable(code) is first
    # An equal payload in a different bytes object hits the same cache entry.
    assert load_callable(bytes(bytearray(code))) is first
    assert load_callable.cache_info().hits == 2
    # A different payload is a different function.
    other = load_callable(payload(lambda text: False))
    assert other is not first
    assert other("x") is False


# --- score_callable_traits -------------------------------------------------------------------


def test_score_callable_traits_records_errors_and_keeps_other_values() -> None:
    def broken(text: str) -> bool:
        raise RuntimeError("boom")

    traits = [
        CallableTrait(name="Cites", callable_code=payload(lambda text: "[" in text)),
        CallableTrait(name="Broken", callable_code=payload(broken)),
        CallableTrait(name="Source", callable_code=b"def evaluate(text): return True"),
        score_trait(lambda text: 4),
    ]
    outcome = RubricOutcome()
    score_callable_traits(traits, "see [1]", outcome)
    assert outcome.callable_scores == {"Cites": True, "Length": 4}
    assert set(outcome.errors) == {"Broken", "Source"}
    assert outcome.errors["Broken"] == "callable trait: the function raised RuntimeError: boom"
    assert outcome.errors["Source"].startswith("callable trait: callable_code holds Python source")
    result = outcome.to_result(None)
    assert result.callable_trait_scores == {"Cites": True, "Length": 4}
    assert result.trait_errors == outcome.errors


def test_score_callable_traits_survives_a_nan_score() -> None:
    traits = [score_trait(lambda text: float("nan")), boolean_trait(lambda text: True)]
    outcome = RubricOutcome()
    score_callable_traits(traits, "x", outcome)
    assert "Length" in outcome.errors
    assert outcome.callable_scores == {"Check": True}


# --- regex traits ----------------------------------------------------------------------------


def test_regex_value_searches_anywhere_in_the_text() -> None:
    trait = RegexTrait(name="Cites", pattern=r"\[\d+\]")
    assert regex_value(trait, "as shown in [12].") is True
    assert regex_value(trait, "as shown in [a].") is False


def test_regex_is_case_sensitive_by_default() -> None:
    assert regex_value(RegexTrait(name="G", pattern="BCL2"), "the bcl2 gene") is False
    relaxed = RegexTrait(name="G", pattern="BCL2", case_sensitive=False)
    assert regex_value(relaxed, "the bcl2 gene") is True
    assert regex_value(relaxed, "the tp53 gene") is False


def test_regex_invert_result() -> None:
    trait = RegexTrait(name="NoSorry", pattern="sorry", invert_result=True)
    assert regex_value(trait, "I am sorry") is False
    assert regex_value(trait, "Here you go") is True


def test_regex_inversion_applies_after_case_folding() -> None:
    trait = RegexTrait(name="NoSorry", pattern="sorry", invert_result=True, case_sensitive=False)
    assert regex_value(trait, "SORRY!") is False


def test_empty_pattern_matches_everything() -> None:
    trait = RegexTrait(name="Any")
    assert trait.pattern == ""
    assert regex_value(trait, "anything") is True
    assert regex_value(trait, "") is True
    assert regex_value(RegexTrait(name="None", invert_result=True), "anything") is False


def test_score_regex_traits_fills_the_outcome() -> None:
    outcome = RubricOutcome()
    traits = [RegexTrait(name="Digits", pattern=r"\d"), RegexTrait(name="Caps", pattern="[A-Z]")]
    score_regex_traits(traits, "lower 123", outcome)
    assert outcome.regex_scores == {"Digits": True, "Caps": False}
    assert outcome.errors == {}
