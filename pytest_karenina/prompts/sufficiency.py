"""Call 4, sufficiency: does the response hold enough to fill the template?

The judge sees the template's full pydantic schema (trace fields and ``id``
included; ``__verification__`` is stripped by ``BaseAnswer.model_json_schema``)
and replies with :class:`SufficiencyVerdict`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user

SUFFICIENCY_TASK = "sufficiency_detection"
"""Task id (and PromptConfig field) of this call."""


class SufficiencyVerdict(BaseModel):
    """The judge's decision on whether a response can fill every required field."""

    reasoning: str = Field(
        description="For each required field, what in the response it could be filled from"
    )
    sufficient: bool = Field(
        description="True if every required field has some content it can be filled from"
    )


SUFFICIENCY_SYSTEM = """\
<role>
You decide whether a response contains enough to fill in a structured answer \
template. You do not judge whether the response is correct.
</role>

<procedure>
1. Take the fields listed under "required" in the template schema. Optional \
fields do not matter.
2. For each required field, in turn, look for something in the response that \
could be mapped to it, following the field's description. Note it in your \
reasoning.
3. Be lenient: a hedged, approximate or tentative value still counts, and the \
value need not be right.
4. The response is sufficient if every required field has such content; it is \
insufficient if at least one required field has nothing it could be filled from.
</procedure>

<output_format>
Reply with only this JSON object, "reasoning" first:
{
  "reasoning": "<each required field and what it can be filled from>",
  "sufficient": <true or false>
}
</output_format>"""

SUFFICIENCY_USER = """\
<original_question>
{question}
</original_question>

<model_response>
{response}
</model_response>

<template_schema>
{schema}
</template_schema>

Decide whether the response holds content for every required field of the \
template schema, and reply with the JSON object."""


def sufficiency_messages(
    question_text: str,
    response_text: str,
    schema: Mapping[str, Any],
    *,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` asking whether ``response_text`` can fill ``schema``.

    ``schema`` is the template's ``model_json_schema()``, shown with indent 2
    in ``<template_schema>``; ``instructions`` (PromptConfig
    ``sufficiency_detection``) are appended to the system text. The reply is a
    :class:`SufficiencyVerdict`.
    """
    user = SUFFICIENCY_USER.format(
        question=question_text, response=response_text, schema=json.dumps(schema, indent=2)
    )
    return system_and_user(SUFFICIENCY_SYSTEM, user, instructions)
