"""Calls 9 and 10, literal LLM traits: the judge puts the answer in one class per trait.

Reply shapes are Karenina's: ``{"classifications": [{"trait_name", "class_name"}]}``
for a batch, ``{"classification": "..."}`` for one trait.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.prompts.rubric import describe, material
from pytest_karenina.rubrics.traits import LLMRubricTrait

LITERAL_BATCH_TASK = "rubric_literal_trait_batch"
LITERAL_SINGLE_TASK = "rubric_literal_trait_single"


class Classification(BaseModel):
    trait_name: str = Field(description="The trait's name exactly as given")
    reasoning: str | None = Field(
        default=None, description="Optional: one sentence on why this class fits"
    )
    class_name: str = Field(description="One of the trait's class names, exactly as given")


class LiteralBatchReply(BaseModel):
    """One class per trait."""

    classifications: list[Classification]


class LiteralSingleReply(BaseModel):
    """The class of one trait."""

    reasoning: str | None = Field(
        default=None, description="Optional: one sentence on why this class fits"
    )
    classification: str = Field(description="One of the class names, exactly as given")


LITERAL_SYSTEM = """\
You sort a model's answer into categories that a benchmark author defined. Each \
trait comes with its own fixed list of classes.

How to classify:
- Choose exactly one class for every trait, using the class descriptions as the test.
- Base the choice on what the answer actually says.
- Write class names exactly as they are listed; never invent a class.
- When two classes seem to fit, take the one whose description fits more closely.

Reply with the JSON object only: no markdown code fence and no text around it."""

LITERAL_BATCH_USER = """\
Classify the answer below for each of these traits.

## Traits
{traits}

{material}

Reply with a JSON object shaped like this example (the class names are placeholders):
{example}"""

LITERAL_SINGLE_USER = """\
Classify the answer below for one trait.

## Trait: {name}
{description}

Classes:
{classes}

{material}

Reply with a JSON object shaped like this example (the class name is a placeholder):
{example}"""


def class_lines(trait: LLMRubricTrait, indent: str = "") -> str:
    return "\n".join(
        f"{indent}- **{name}**: {text}" for name, text in (trait.classes or {}).items()
    )


def first_class(trait: LLMRubricTrait) -> str:
    return next(iter(trait.classes or {"?": ""}))


def literal_batch_messages(
    traits: Sequence[LLMRubricTrait],
    question: str | None,
    answer: str,
    *,
    reference: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` classifying the answer for every literal trait in ``traits``."""
    blocks = [
        f"- **{trait.name}**: {describe(trait)}\n  Classes:\n{class_lines(trait, '    ')}"
        for trait in traits
    ]
    example = {
        "classifications": [
            {"trait_name": trait.name, "class_name": first_class(trait)} for trait in traits
        ]
    }
    user = LITERAL_BATCH_USER.format(
        traits="\n".join(blocks),
        material=material(question, answer, reference),
        example=json.dumps(example, indent=2),
    )
    return system_and_user(LITERAL_SYSTEM, user, instructions)


def literal_single_messages(
    trait: LLMRubricTrait,
    question: str | None,
    answer: str,
    *,
    reference: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` classifying the answer for one literal trait."""
    user = LITERAL_SINGLE_USER.format(
        name=trait.name,
        description=describe(trait),
        classes=class_lines(trait),
        material=material(question, answer, reference),
        example=json.dumps({"classification": first_class(trait)}),
    )
    return system_and_user(LITERAL_SYSTEM, user, instructions)
