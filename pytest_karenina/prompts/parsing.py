"""Call 2, template parsing: the judge fills the template's fields from the answer.

The judge sees the question, the response and the judge schema of the template
(:func:`pytest_karenina.templates.judge_schema`), never the ground truth: no
builder here takes it. The system text is an extraction protocol; per-field
extraction hints and PromptConfig instructions are appended to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import SEPARATOR, system_and_user

PARSING_TASK = "parsing"
"""Task id (and PromptConfig field) of this call."""

PARSING_SYSTEM = """\
Your job is to turn another model's response into a JSON object.

You get the question that was asked, the response to read (either just the \
final answer or a whole trace that ends in one) and a JSON schema. The schema's \
field descriptions say what belongs in each field.

## How to extract
1. Read values from the final answer the user was given. Intermediate reasoning, \
drafts and tool output are context, not the answer.
2. A field's description is the authority on what the field holds and in what \
form; follow it exactly.
3. If the response does not give what a field asks for, write null for that field \
when the schema allows null.
4. Record only what the response actually states. Do not add facts, fix mistakes \
or guess at what the author meant.
5. Give every value the type the schema declares for it.

## Reply
The JSON object and nothing else: no explanation before or after it and no \
markdown code fence around it."""

HINTS_HEADING = "## Field hints\nExtra guidance for some fields:"
HINT_LINE = "- **{field}**: {hint}"

PARSING_USER = """\
Fill in the JSON schema below from the response to the question.

## Question
{question}

## Response
{response}

## JSON schema of the reply
```json
{schema}
```

## Notes
- Each field's value comes from the response as the field's description directs.
- When the response says nothing a field can use: null if the field allows null, \
otherwise your closest reading of the response.
- Reply with the JSON object only.

Your JSON object:"""


def hints_section(extraction_hints: Mapping[str, str] | None) -> str | None:
    """The ``- **field**: hint`` section, or None when there are no non-blank hints."""
    lines = [
        HINT_LINE.format(field=field, hint=hint.strip())
        for field, hint in (extraction_hints or {}).items()
        if isinstance(hint, str) and hint.strip()
    ]
    return "\n".join([HINTS_HEADING, *lines]) if lines else None


def parsing_system_text(extraction_hints: Mapping[str, str] | None = None) -> str:
    """The extraction protocol, followed by the field hints section when there are hints.

    Deep judgment reuses this text as the start of its excerpt prompt.
    """
    hints = hints_section(extraction_hints)
    return PARSING_SYSTEM if hints is None else f"{PARSING_SYSTEM}{SEPARATOR}{hints}"


def parsing_messages(
    question_text: str,
    response_text: str,
    schema: Mapping[str, Any],
    *,
    extraction_hints: Mapping[str, str] | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` for template parsing.

    ``schema`` is the judge schema (``judge_schema(answer_class)``), embedded as
    ``json.dumps(schema, indent=2)`` in a json fence; ``extraction_hints`` maps
    field names to hints (blank hints are skipped); ``instructions`` are the
    PromptConfig ``parsing`` text, appended to the system text.
    """
    user = PARSING_USER.format(
        question=question_text,
        response=response_text,
        schema=json.dumps(schema, indent=2),
    )
    return system_and_user(parsing_system_text(extraction_hints), user, instructions)
