"""Call 12, the dynamic-rubric presence check: which concepts does the response address?

Only traits whose concept is present are graded. The reply is Karenina's
``{"results": [{"trait_name": ..., "present": ...}]}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.rubrics.traits import RubricTrait

PRESENCE_TASK = "rubric_dynamic_presence_check"


class ConceptPresence(BaseModel):
    trait_name: str = Field(description="The concept's name exactly as given")
    present: bool = Field(description="true when the response substantively addresses it")


class PresenceReply(BaseModel):
    """One entry per concept."""

    results: list[ConceptPresence]


PRESENCE_SYSTEM = """\
You read a model's response and decide, for each concept in a list, whether the \
response substantively deals with it. A passing mention in a list of many topics is \
not enough; a paragraph, an explanation or a concrete claim about the concept is. \
When you are unsure, count the concept as present: a later step grades it in detail.

Reply with the JSON object only: no markdown code fence and no text around it."""

PRESENCE_USER = """\
## Concepts to look for
{concepts}

## Response to read
{response}

Reply with a JSON object shaped like this example:
{example}"""


def concept(trait: RubricTrait) -> str:
    """What the presence check shows for a trait: its summary, else its description."""
    return (trait.summary or trait.description or trait.name).strip()


def presence_messages(
    traits: Sequence[RubricTrait], response: str, *, instructions: str | None = None
) -> list[ChatMessage]:
    """``[system, user]`` asking which of ``traits``' concepts ``response`` addresses."""
    example = {"results": [{"trait_name": trait.name, "present": True} for trait in traits[:2]]}
    user = PRESENCE_USER.format(
        concepts="\n".join(f"- **{trait.name}**: {concept(trait)}" for trait in traits),
        response=response,
        example=json.dumps(example, indent=2),
    )
    return system_and_user(PRESENCE_SYSTEM, user, instructions)
