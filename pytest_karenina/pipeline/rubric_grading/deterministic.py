"""Traits scored without a judge: regex traits and callable traits."""

from __future__ import annotations

import re

from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.rubrics.callables import CallableTraitError, run_callable
from pytest_karenina.rubrics.traits import CallableTrait, RegexTrait
from pytest_karenina.templates.bounded_regex import search
from pytest_karenina.templates.time_limit import TemplateTimeout


def regex_value(trait: RegexTrait, text: str, seconds: float | None = None) -> bool:
    """Whether ``trait.pattern`` is found in ``text`` (``re.search`` semantics, with a time
    limit: ``seconds``, else the enclosing template time limit), then inverted if asked."""
    flags = 0 if trait.case_sensitive else re.IGNORECASE
    found = search(trait.pattern, text, flags, seconds=seconds)
    return not found if trait.invert_result else found


def score_regex_traits(
    traits: list[RegexTrait], text: str, outcome: RubricOutcome, seconds: float | None = None
) -> None:
    """Score each trait; one whose pattern runs past its time limit gets a recorded error."""
    for trait in traits:
        try:
            outcome.regex_scores[trait.name] = regex_value(trait, text, seconds)
        except TemplateTimeout as exc:
            outcome.fail(trait.name, f"regex trait: {exc}")


def score_callable_traits(traits: list[CallableTrait], text: str, outcome: RubricOutcome) -> None:
    """Run each callable; one that cannot load or fails gets a recorded error, not a value."""
    for trait in traits:
        try:
            outcome.callable_scores[trait.name] = run_callable(trait, text)
        except CallableTraitError as exc:
            outcome.fail(trait.name, f"callable trait: {exc}")
