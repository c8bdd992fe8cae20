"""Prompt builders, one module per kind of LLM call (spec section 6).

Each builder is a pure function returning ``list[ChatMessage]`` (system, then
user); calls with a structured reply also define its pydantic model. Texts are
module-level constants. No builder takes ground truth except the equivalence
check, whose purpose is to compare against it.
"""

from pytest_karenina.prompts.abstention import (
    ABSTENTION_TASK,
    AbstentionVerdict,
    abstention_messages,
)
from pytest_karenina.prompts.equivalence import equivalence_messages, is_equivalent
from pytest_karenina.prompts.generation import (
    GENERATION_TASK,
    example_hash,
    few_shot_prompt,
    generation_messages,
    resolve_few_shot,
    select_few_shot,
)
from pytest_karenina.prompts.messages import append_instructions, instructions_for
from pytest_karenina.prompts.parsing import PARSING_TASK, parsing_messages, parsing_system_text
from pytest_karenina.prompts.sufficiency import (
    SUFFICIENCY_TASK,
    SufficiencyVerdict,
    sufficiency_messages,
)

__all__ = [
    "ABSTENTION_TASK",
    "GENERATION_TASK",
    "PARSING_TASK",
    "SUFFICIENCY_TASK",
    "AbstentionVerdict",
    "SufficiencyVerdict",
    "abstention_messages",
    "append_instructions",
    "equivalence_messages",
    "example_hash",
    "few_shot_prompt",
    "generation_messages",
    "instructions_for",
    "is_equivalent",
    "parsing_messages",
    "parsing_system_text",
    "resolve_few_shot",
    "select_few_shot",
    "sufficiency_messages",
]
