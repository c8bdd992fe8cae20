"""Traits scored without a judge: regex traits and callable traits."""

from __future__ import annotations

import re

from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.rubrics.callables import CallableTraitError, run_callable
from pytest_karenina.rubrics.traits import CallableTrait, RegexTrait


def regex_value(trait: RegexTrait, text: str) -> bool:
    """Whether ``trait.pattern`` is found in ``text`` (``re.search``), then inverted if asked."""
    flags = 0 if trait.case_sensitive else re.IGNORECASE
    found = re.search(trait.pattern, text, flags) is not None
    return not found if trait.invert_result else found


def score_regex_traits(traits: list[RegexTrait], text: str, outcome: RubricOutcome) -> None:
    for trait in traits:
        outcome.regex_scores[trait.name] = regex_value(trait, text)


def score_callable_traits(traits: list[CallableTrait], text: str, outcome: RubricOutcome) -> None:
    """Run each callable; one that cannot load or fails gets a recorded error, not a value."""
    for trait in traits:
        try:
            outcome.callable_scores[trait.name] = run_callable(trait, text)
        except CallableTraitError as exc:
            outcome.fail(trait.name, f"callable trait: {exc}")
