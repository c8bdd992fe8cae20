"""Calls 6 and 7, LLM rubric traits of the boolean and score kinds.

One batch call grades several traits at once (:class:`TraitScoresReply`); the
sequential strategy asks once per trait (:class:`BooleanTraitReply` or
:class:`ScoreTraitReply`). Reply shapes are Karenina's (``{"scores": {...}}``,
``{"result": ...}``, ``{"score": ...}``), so recorded Karenina judge replies read
back; the optional ``reasoning`` is ours and feeds failure messages.

The sections every rubric prompt shares (question, optional reference answer,
answer) are built here too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.rubrics.traits import LLMRubricTrait

BATCH_TASK = "rubric_llm_trait_batch"
SINGLE_TASK = "rubric_llm_trait_single"
"""Task ids (PromptConfig keys; the ``rubric_evaluation`` field serves them all)."""

Score = bool | int | float | str | None


class TraitScoresReply(BaseModel):
    """The judge's grades for a batch of boolean and score traits."""

    reasoning: dict[str, str] = Field(
        default_factory=dict,
        description="Optional: for each trait name, one sentence on the evidence behind its grade",
    )
    scores: dict[str, Score] = Field(
        description="For each trait name exactly as given: true/false for boolean traits, "
        "a whole number in the stated range for score traits"
    )


class BooleanTraitReply(BaseModel):
    """The judge's verdict on one boolean trait."""

    reasoning: str | None = Field(
        default=None, description="Optional: one sentence on the evidence behind the verdict"
    )
    result: bool = Field(description="true when the answer has the trait, else false")


class ScoreTraitReply(BaseModel):
    """The judge's grade for one score trait."""

    reasoning: str | None = Field(
        default=None, description="Optional: one sentence on the evidence behind the score"
    )
    score: int | float = Field(description="A whole number within the trait's range")


RUBRIC_SYSTEM = """\
You grade a model's answer on quality traits that a benchmark author defined. \
You do not answer the question yourself and you do not judge anything the traits \
do not ask about.

How to grade:
- Apply each trait's description literally. Do not add requirements it does not state.
- Base every grade on what the answer actually says; give no credit for what it \
might have meant.
- Weigh the evidence for and against before you decide, and grade alike answers alike.
- Boolean traits take true or false. Score traits take a whole number inside the \
stated range; the low end is the worst, the high end the best.
- Use each trait name exactly as written, keep its case, and grade every trait.

Reply with the JSON object only: no markdown code fence and no text around it."""

BATCH_USER = """\
Grade the answer below on each of these traits.

## Traits
{traits}

{material}

Reply with a JSON object shaped like this example (the values are placeholders):
{example}"""

SINGLE_USER = """\
Grade the answer below on one trait.

## Trait: {name}
{description}

{guide}

{material}

Reply with a JSON object shaped like this example (the value is a placeholder):
{example}"""


def material(question: str | None, answer: str, reference: str | None = None) -> str:
    """The question, the reference answer (only when given) and the answer to grade."""
    parts = [] if question is None else [f"## Question\n{question}"]
    if reference:
        parts.append(f"## Reference answer\n{reference}")
    parts.append(f"## Answer to grade\n{answer}")
    return "\n\n".join(parts)


def describe(trait: LLMRubricTrait | None, default: str = "(no description)") -> str:
    text = trait.description if trait is not None else None
    return text.strip() if text and text.strip() else default


def score_range(trait: LLMRubricTrait) -> tuple[int, int]:
    low = trait.min_score if trait.min_score is not None else 1
    high = trait.max_score if trait.max_score is not None else 5
    return low, high


def trait_prompt_entry(trait: LLMRubricTrait) -> str:
    """``- **name** (boolean|score a-b): description`` and what to reply for it."""
    if trait.kind == "boolean":
        return (
            f"- **{trait.name}** (boolean): {describe(trait)}\n"
            "  Reply true if the answer has this quality, false if it does not."
        )
    low, high = score_range(trait)
    return (
        f"- **{trait.name}** (score {low}-{high}): {describe(trait)}\n"
        f"  Reply a whole number from {low} (worst) to {high} (best)."
    )


def placeholder(trait: LLMRubricTrait) -> bool | int:
    if trait.kind == "boolean":
        return True
    low, high = score_range(trait)
    return (low + high) // 2


def batch_messages(
    traits: Sequence[LLMRubricTrait],
    question: str | None,
    answer: str,
    *,
    reference: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` grading every boolean/score trait of ``traits`` in one reply."""
    example = {"scores": {trait.name: placeholder(trait) for trait in traits}}
    user = BATCH_USER.format(
        traits="\n".join(trait_prompt_entry(trait) for trait in traits),
        material=material(question, answer, reference),
        example=json.dumps(example, indent=2),
    )
    return system_and_user(RUBRIC_SYSTEM, user, instructions)


def single_messages(
    trait: LLMRubricTrait,
    question: str | None,
    answer: str,
    *,
    reference: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` grading one boolean or score trait."""
    if trait.kind == "boolean":
        guide = "Reply true if the answer has this quality, false if it does not."
        example: dict[str, object] = {"result": True}
    else:
        low, high = score_range(trait)
        middle = (low + high) // 2
        guide = (
            f"Score it from {low} to {high}: {low} means the answer does not meet the "
            f"description at all, {middle} that it meets it in part, {high} that it meets "
            "it fully."
        )
        example = {"score": middle}
    user = SINGLE_USER.format(
        name=trait.name,
        description=describe(trait),
        guide=guide,
        material=material(question, answer, reference),
        example=json.dumps(example),
    )
    return system_and_user(RUBRIC_SYSTEM, user, instructions)
