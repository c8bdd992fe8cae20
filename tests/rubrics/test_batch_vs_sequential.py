"""The batch and sequential rubric strategies grade alike; they differ in how many calls.

The fake judge decides its reply from what the request holds, not from how our prompts
are worded: which of the rubric's trait names occur in the messages, and which reply
schema the request asks for (``request.schema_name``). A judge that answers every trait
the same way whatever the grouping must therefore lead both strategies to the same
scores and labels. The reference-answer tests check that a batch mixing traits which may
see the reference answer with traits which may not is split, and that only the calls
for exposed traits show it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_karenina.llm.ports import ModelRequest
from pytest_karenina.results import VerificationResultRubric
from pytest_karenina.rubrics.traits import LLMRubricTrait, Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

ANSWER = "Paris has been the French capital for centuries."
REFERENCE = "Lutetia-Parisiorum-7731"
"""The reference answer (question raw_answer): a string no other prompt part contains."""

TONES = {"formal": "Written in a formal register", "casual": "Chatty and informal"}
SHAPES = {
    "one_sentence": "A single sentence",
    "paragraph": "Several sentences",
    "listing": "A bulleted or numbered list",
}

# Trait names are chosen so that none is a substring of another or of the prompt wording.
TRAITS = [
    LLMRubricTrait(name="names_city", kind="boolean", description="It names a city"),
    LLMRubricTrait(name="hedges", kind="boolean", description="It hedges its claim"),
    LLMRubricTrait(name="depth_rating", kind="score", description="How much it explains"),
    LLMRubricTrait(
        name="precision_rating",
        kind="score",
        description="How exact it is",
        min_score=0,
        max_score=10,
    ),
    LLMRubricTrait(name="tone_class", kind="literal", description="Register", classes=TONES),
    LLMRubricTrait(name="shape_class", kind="literal", description="Form", classes=SHAPES),
]

VERDICTS: dict[str, bool | int | str] = {
    "names_city": True,
    "hedges": False,
    "depth_rating": 4,
    "precision_rating": 7,
    "tone_class": "casual",
    "shape_class": "one_sentence",
}
"""What the scripted judge says for each trait, whichever call asks about it."""

BATCH_SCHEMAS = {"TraitScoresReply", "LiteralBatchReply"}
SINGLE_SCHEMAS = {"BooleanTraitReply", "ScoreTraitReply", "LiteralSingleReply"}


def traits_in(request: ModelRequest) -> list[str]:
    """The names of the verdict table's traits that the request mentions."""
    text = request_text(request)
    return [name for name in VERDICTS if name in text]


def judge(request: ModelRequest) -> str:
    """Reply to a rubric call in the shape its schema asks for, using :data:`VERDICTS`."""
    names = traits_in(request)
    schema = request.schema_name
    if not names:
        raise AssertionError(f"a {schema} call that names no known trait")
    if schema in SINGLE_SCHEMAS and len(names) != 1:
        raise AssertionError(f"a single-trait {schema} call names {names}")
    if schema == "TraitScoresReply":
        reply: dict[str, Any] = {"scores": {name: VERDICTS[name] for name in names}}
    elif schema == "BooleanTraitReply":
        reply = {"result": VERDICTS[names[0]]}
    elif schema == "ScoreTraitReply":
        reply = {"score": VERDICTS[names[0]]}
    elif schema == "LiteralBatchReply":
        classes = [{"trait_name": name, "class_name": VERDICTS[name]} for name in names]
        reply = {"classifications": classes}
    elif schema == "LiteralSingleReply":
        reply = {"classification": VERDICTS[names[0]]}
    else:
        raise AssertionError(f"unexpected reply schema {schema!r}")
    return json.dumps(reply)


def grade(
    traits: Sequence[LLMRubricTrait], strategy: str
) -> tuple[VerificationResultRubric, FakeLLM]:
    fake = FakeLLM()
    fake.answer(ANSWER)
    fake.on("rubric_evaluation", reply=judge)
    item = question(CLASSIC, raw_answer=REFERENCE).model_copy(
        update={"rubric": Rubric(llm_traits=list(traits))}
    )
    config = fake_config(evaluation_mode="rubric_only", rubric_evaluation_strategy=strategy)
    result = run_one(item, config, fake)
    fake.assert_all_scripted()
    assert result.rubric is not None, "the rubric stage produced no result"
    assert result.rubric.trait_errors is None
    return result.rubric, fake


def expected_scores(traits: Sequence[LLMRubricTrait]) -> dict[str, Any]:
    """Booleans and scores as given; literal traits as the index of their class."""
    scores: dict[str, Any] = {}
    for trait in traits:
        verdict = VERDICTS[trait.name]
        if trait.kind == "literal":
            scores[trait.name] = list(trait.classes or {}).index(str(verdict))
        else:
            scores[trait.name] = verdict
    return scores


def expected_labels(traits: Sequence[LLMRubricTrait]) -> dict[str, Any]:
    return {t.name: VERDICTS[t.name] for t in traits if t.kind == "literal"}


def schemas(fake: FakeLLM) -> Counter[str | None]:
    return Counter(request.schema_name for request in fake.calls("rubric_evaluation"))


def test_verdict_table_is_not_trivial() -> None:
    """The literal verdicts are not the first class (which a lazy judge might pick)."""
    assert expected_scores(TRAITS) == {
        "names_city": True,
        "hedges": False,
        "depth_rating": 4,
        "precision_rating": 7,
        "tone_class": 1,
        "shape_class": 0,
    }
    assert expected_scores(TRAITS)["tone_class"] != 0


def test_batch_and_sequential_give_the_same_scores_and_labels() -> None:
    batch, _ = grade(TRAITS, "batch")
    sequential, _ = grade(TRAITS, "sequential")
    assert batch.llm_trait_scores == sequential.llm_trait_scores == expected_scores(TRAITS)
    assert batch.llm_trait_labels == sequential.llm_trait_labels == expected_labels(TRAITS)
    # Bool stays bool (not 1/0) and a score stays int in both strategies.
    for rubric in (batch, sequential):
        assert rubric.llm_trait_scores is not None
        assert rubric.llm_trait_scores["names_city"] is True
        assert rubric.llm_trait_scores["hedges"] is False
        assert type(rubric.llm_trait_scores["depth_rating"]) is int
    assert batch.rubric_evaluation_strategy == "batch"
    assert sequential.rubric_evaluation_strategy == "sequential"


def test_batch_makes_one_call_for_graded_and_one_for_literal_traits() -> None:
    _, fake = grade(TRAITS, "batch")
    calls = fake.calls("rubric_evaluation")
    assert len(calls) == 2
    assert schemas(fake) == Counter({"TraitScoresReply": 1, "LiteralBatchReply": 1})
    by_schema = {request.schema_name: sorted(traits_in(request)) for request in calls}
    assert by_schema == {
        "TraitScoresReply": sorted(["names_city", "hedges", "depth_rating", "precision_rating"]),
        "LiteralBatchReply": sorted(["tone_class", "shape_class"]),
    }


def test_sequential_makes_one_call_per_trait() -> None:
    _, fake = grade(TRAITS, "sequential")
    calls = fake.calls("rubric_evaluation")
    assert len(calls) == 6
    assert schemas(fake) == Counter(
        {"BooleanTraitReply": 2, "ScoreTraitReply": 2, "LiteralSingleReply": 2}
    )
    asked = [name for request in calls for name in traits_in(request)]
    assert sorted(asked) == sorted(VERDICTS)


def exposed(trait: LLMRubricTrait) -> LLMRubricTrait:
    return trait.model_copy(update={"include_ground_truth": True})


MIXED_GRADED = [exposed(TRAITS[0]), TRAITS[1], TRAITS[2], exposed(TRAITS[3])]
MIXED_LITERAL = [exposed(TRAITS[4]), TRAITS[5]]


@pytest.mark.parametrize(
    ("traits", "schema"),
    [(MIXED_GRADED, "TraitScoresReply"), (MIXED_LITERAL, "LiteralBatchReply")],
    ids=["boolean-and-score", "literal"],
)
def test_batch_mixing_reference_exposure_is_split_in_two(
    traits: list[LLMRubricTrait], schema: str
) -> None:
    rubric, fake = grade(traits, "batch")
    calls = fake.calls("rubric_evaluation")
    assert len(calls) == 2
    assert {request.schema_name for request in calls} == {schema}
    with_reference = [r for r in calls if REFERENCE in request_text(r)]
    without_reference = [r for r in calls if REFERENCE not in request_text(r)]
    assert len(with_reference) == len(without_reference) == 1
    assert sorted(traits_in(with_reference[0])) == sorted(
        t.name for t in traits if t.include_ground_truth
    )
    assert sorted(traits_in(without_reference[0])) == sorted(
        t.name for t in traits if not t.include_ground_truth
    )
    assert rubric.llm_trait_scores == expected_scores(traits)


def test_batch_with_one_exposure_is_a_single_call() -> None:
    """The split happens only when the exposures differ: all exposed is still one call."""
    traits = [exposed(t) for t in MIXED_GRADED]
    _, fake = grade(traits, "batch")
    (request,) = fake.calls("rubric_evaluation")
    assert REFERENCE in request_text(request)


def test_sequential_shows_the_reference_only_to_exposed_traits() -> None:
    traits = [*MIXED_GRADED, *MIXED_LITERAL]
    rubric, fake = grade(traits, "sequential")
    seen = {
        traits_in(request)[0]: REFERENCE in request_text(request)
        for request in fake.calls("rubric_evaluation")
    }
    assert seen == {t.name: t.include_ground_truth for t in traits}
    assert rubric.llm_trait_scores == expected_scores(traits)
