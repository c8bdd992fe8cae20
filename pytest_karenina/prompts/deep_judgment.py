"""Template deep judgment's judge calls: excerpts, reasoning, and the parse from reasoning.

1. ``dj_template_excerpt_extraction``: the parsing protocol, then the excerpt protocol
   listing each attribute with its description; the user message holds the question and the
   response in ``<original_question>`` / ``<response_to_analyze>`` tags. A retry adds the
   rejected quotes in an ``<error>`` note.
   With search on, ``dj_template_hallucination`` rates each excerpt against its search
   results.
2. ``dj_template_reasoning``: from the accepted excerpts, a few sentences per attribute.
   ``dj_template_reasoning_only`` reasons from the response itself (no excerpts).
3. The final parse (task ``parsing``): the question and the reasoning, into the template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import SEPARATOR, system_and_user
from pytest_karenina.prompts.parsing import parsing_system_text

EXCERPT_TASK = "dj_template_excerpt_extraction"
REASONING_TASK = "dj_template_reasoning"
REASONING_ONLY_TASK = "dj_template_reasoning_only"
HALLUCINATION_TASK = "dj_template_hallucination"

EXCERPT_PROTOCOL = """\
## Deep judgment: quote your evidence
Before anything is extracted, find the evidence. For every attribute below, copy from \
the response the passages that state its value.

{attributes}

For each attribute:
1. Give up to {max_excerpts} quotes, each copied exactly from the response: the same \
words, in the same order, nothing added, dropped or reworded. A quote that is not in \
the response will be rejected.
2. Rate each quote's confidence: "high" (it states the value outright), "medium" (it \
implies the value) or "low" (weak or ambiguous evidence).
3. If the response holds no evidence for an attribute, give one entry with empty text, \
confidence "none" and an explanation of what is missing.

## Reply
A JSON object with one key per attribute, and nothing else:
{{"<attribute>": [{{"text": "<exact quote>", "confidence": "high|medium|low"}}], ...}}"""

EXCERPT_USER = """\
<original_question>
{question}
</original_question>

<response_to_analyze>
{response}
</response_to_analyze>"""

RETRY_NOTE = """\
<error>
{feedback}
Give the whole JSON object again, with quotes copied exactly from the response.
</error>"""

REASONING_SYSTEM = """\
You explain, attribute by attribute, what a response says, using the evidence quoted \
from it.

For each attribute write two or three sentences: what the quotes establish about its \
value, and how sure that reading is. Use only the quotes; where there are none, say \
that the response gives no evidence.

## Reply
A JSON object mapping each attribute to its reasoning (a string), and nothing else."""

REASONING_ONLY_SYSTEM = """\
You explain, attribute by attribute, what a response says.

For each attribute write two or three sentences: what the response states about its \
value and how clearly it states it; if it says nothing, say so.

## Reply
A JSON object mapping each attribute to its reasoning (a string), and nothing else."""

REASONING_USER = """\
<original_question>
{question}
</original_question>

<attributes>
{attributes}
</attributes>

<{tag}>
{body}
</{tag}>"""
"""The user message of both reasoning calls: ``evidence`` (the quotes) or
``response_to_analyze`` (reasoning only)."""

HALLUCINATION_SYSTEM = """\
You rate how likely each quoted excerpt of a response is to be a hallucination: a claim \
the search results do not support or contradict.

For each excerpt give a risk: "none" (the results confirm it), "low", "medium" or "high" \
(the results contradict it, or nothing supports a specific claim), with one sentence of \
justification.

## Reply
A JSON object and nothing else:
{"excerpt_assessments": [{"excerpt_id": "<id>", "hallucination_risk": \
"none|low|medium|high", "justification": "<one sentence>"}]}"""

HALLUCINATION_USER = """\
<original_question>
{question}
</original_question>

{excerpts}"""

FINAL_PARSE_USER = """\
Original Question: {question}

Reasoning Traces (one per attribute, from the response's own words):
{reasoning}

Fill in the JSON schema from these reasoning traces.

## JSON schema of the reply
```json
{schema}
```

Your JSON object:"""


def attribute_lines(attributes: Mapping[str, str]) -> str:
    """``- name: description`` per attribute."""
    return "\n".join(f"- {name}: {description or name}" for name, description in attributes.items())


def excerpt_messages(
    question: str,
    response: str,
    attributes: Mapping[str, str],
    *,
    max_excerpts: int,
    extraction_hints: Mapping[str, str] | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` asking for verbatim quotes per attribute."""
    protocol = EXCERPT_PROTOCOL.format(
        attributes=attribute_lines(attributes), max_excerpts=max_excerpts
    )
    system = f"{parsing_system_text(extraction_hints)}{SEPARATOR}{protocol}"
    user = EXCERPT_USER.format(question=question, response=response)
    return system_and_user(system, user, instructions)


def excerpt_retry(
    messages: Sequence[ChatMessage], reply_text: str, feedback: str
) -> list[ChatMessage]:
    """The conversation asking again: the previous reply and an ``<error>`` note."""
    return [
        *messages,
        ChatMessage(role="assistant", content=reply_text),
        ChatMessage(role="user", content=RETRY_NOTE.format(feedback=feedback)),
    ]


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def evidence_block(excerpts: Mapping[str, Sequence[Mapping[str, object]]]) -> str:
    """Per attribute, its accepted quotes with confidence and similarity."""
    parts = []
    for attribute, quotes in excerpts.items():
        lines = [f"{attribute}:"]
        found = [q for q in quotes if q.get("text")]
        for number, quote in enumerate(found, 1):
            lines.append(
                f'  Excerpt {number}: "{quote["text"]}" (confidence {quote.get("confidence")}, '
                f"similarity {_number(quote.get('similarity_score')):.2f})"
            )
        if not found:
            lines.append("  (no evidence in the response)")
        parts.append("\n".join(lines))
    return "\n".join(parts)


def reasoning_messages(
    question: str,
    attributes: Mapping[str, str],
    excerpts: Mapping[str, Sequence[Mapping[str, object]]],
    *,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` asking for reasoning per attribute from its quotes."""
    user = REASONING_USER.format(
        question=question,
        attributes=attribute_lines(attributes),
        tag="evidence",
        body=evidence_block(excerpts),
    )
    return system_and_user(REASONING_SYSTEM, user, instructions)


def reasoning_only_messages(
    question: str,
    response: str,
    attributes: Mapping[str, str],
    *,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` asking for reasoning per attribute from the response itself."""
    user = REASONING_USER.format(
        question=question,
        attributes=attribute_lines(attributes),
        tag="response_to_analyze",
        body=response,
    )
    return system_and_user(REASONING_ONLY_SYSTEM, user, instructions)


def final_parse_messages(
    question: str,
    reasoning: Mapping[str, str],
    schema_text: str,
    *,
    extraction_hints: Mapping[str, str] | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` for the parse from the reasoning (task ``parsing``)."""
    traces = "\n".join(f"- {name}: {text}" for name, text in reasoning.items())
    user = FINAL_PARSE_USER.format(question=question, reasoning=traces, schema=schema_text)
    return system_and_user(parsing_system_text(extraction_hints), user, instructions)


def hallucination_messages(
    question: str, excerpt_blocks: str, *, instructions: str | None = None
) -> list[ChatMessage]:
    """``[system, user]`` asking for a hallucination risk per ``<excerpt>`` block."""
    user = HALLUCINATION_USER.format(question=question, excerpts=excerpt_blocks)
    return system_and_user(HALLUCINATION_SYSTEM, user, instructions)
