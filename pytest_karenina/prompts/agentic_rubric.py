"""Agentic rubric traits (stage 11b): the judge investigates, then its finding is extracted.

Investigation (``rubric_agentic_trait_investigation``): the judge, a deep agent, is told the
task the answering agent was given and the criterion to evaluate (with the ``shared``
strategy, every criterion at once), and what the trait's ``context_mode`` lets it see: the
answering agent's trace (inline, or the name of the workspace file holding it) and where the
workspace is (its read-only file tools are rooted there). It ends with a report of its
finding and the evidence. Extraction (``rubric_agentic_trait_extraction``): one structured
call reads that report into the trait's kind (Karenina's reply shapes: ``{"result": ...}``,
``{"score": ...}``, ``{"classification": ...}``, or the trait's own record for the template
kind). Both task ids start with ``rubric_``, so PromptConfig's ``rubric_evaluation`` text
serves them unless a field of their own name is set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.agentic_parsing import TRACE_BLOCK, TRACE_FILE_LINE, WORKSPACE_LINE
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.prompts.rubric_template import template_reply_model
from pytest_karenina.rubrics.traits import AgenticRubricTrait

INVESTIGATION_TASK = "rubric_agentic_trait_investigation"
EXTRACTION_TASK = "rubric_agentic_trait_extraction"

INVESTIGATION_SYSTEM = """\
You evaluate the work of another AI agent against a criterion that a benchmark author \
wrote. Investigate the evidence you are given before you decide.

How to work:
- Apply the criterion literally; do not add requirements it does not state.
- Read the files the agent left and its trace where you have them; do not redo its task.
- Judge what the agent actually produced, not what it claims: a file it says it wrote but \
that is not there does not count.
- When the evidence is missing or inconclusive, say so rather than guess.

End with a short report that states your finding on the criterion and the evidence \
(files, lines, trace excerpts) behind it.

## Criterion: {name}
{description}

{expected}"""

SHARED_SYSTEM = """\
You evaluate the work of another AI agent against several criteria that a benchmark \
author wrote. Investigate the evidence you are given before you decide.

How to work:
- Apply each criterion literally; do not add requirements it does not state.
- Read the files the agent left and its trace where you have them; do not redo its task.
- Judge what the agent actually produced, not what it claims.
- When the evidence for a criterion is missing or inconclusive, say so rather than guess.

End with a report that gives, for each criterion by its name, your finding and the \
evidence behind it.

## Criteria
{criteria}"""

EXTRACTION_SYSTEM = """\
You read the report of an investigation into another AI agent's work and state its \
finding on one criterion in a fixed form. Take the finding the report gives; do not judge \
the work again yourself.

{expected}

Reply with the JSON object only: no markdown code fence and no text around it."""

EXTRACTION_USER = """\
## Criterion: {name}
{description}

{report}

Reply with a JSON object shaped like this example (the value is a placeholder):
{example}"""

TEMPLATE_EXTRACTION_USER = """\
## Criterion: {name}
{description}

## Fields
{fields}

{report}"""

UNDESCRIBED = "(no description)"


def describe(trait: AgenticRubricTrait) -> str:
    text = trait.description
    return text.strip() if text and text.strip() else UNDESCRIBED


def score_range(trait: AgenticRubricTrait) -> tuple[int, int]:
    """A score trait's bounds (1 and 5 when a bound is unset)."""
    low = trait.min_score if trait.min_score is not None else 1
    high = trait.max_score if trait.max_score is not None else 5
    return low, high


def expected_form(trait: AgenticRubricTrait) -> str:
    """What the finding of ``trait`` must come down to, in the investigation's words."""
    if trait.kind == "boolean":
        return "Your finding comes down to yes or no: is the criterion met?"
    if trait.kind == "score":
        low, high = score_range(trait)
        return (
            f"Your finding comes down to a whole number from {low} (the criterion is not met "
            f"at all) to {high} (it is met fully)."
        )
    if trait.kind == "literal":
        return "Your finding comes down to exactly one of these classes:\n" + class_lines(trait)
    schema = template_reply_model(trait).model_json_schema()
    return (
        "End your report with a JSON object holding these fields (no other wrapping, no "
        f"placeholder values):\n```json\n{json.dumps(schema, indent=2)}\n```"
    )


def class_lines(trait: AgenticRubricTrait) -> str:
    return "\n".join(f"- **{name}**: {text}" for name, text in (trait.classes or {}).items())


def _user_text(
    question: str, trace: str | None, trace_file: str | None, workspace: str | None
) -> str:
    parts = [f"The task given to the agent:\n{question}"]
    if trace_file is not None:
        parts.append(TRACE_FILE_LINE.format(name=trace_file))
    elif trace is not None:
        parts.append(f"{TRACE_BLOCK}\n{trace}\n--- END OF TRACE ---")
    if workspace is not None:
        parts.append(WORKSPACE_LINE.format(path=workspace))
    return "\n\n".join(parts)


def investigation_messages(
    trait: AgenticRubricTrait,
    question: str,
    *,
    trace: str | None = None,
    trace_file: str | None = None,
    workspace: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` investigating one trait: the criterion and what to conclude, then
    the task, the trace (inline, or the name of the file holding it) and the workspace, each
    only when given."""
    system = INVESTIGATION_SYSTEM.format(
        name=trait.name, description=describe(trait), expected=expected_form(trait)
    )
    return system_and_user(system, _user_text(question, trace, trace_file, workspace), instructions)


def shared_investigation_messages(
    traits: Sequence[AgenticRubricTrait],
    question: str,
    *,
    trace: str | None = None,
    trace_file: str | None = None,
    workspace: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` investigating every trait of ``traits`` in one run."""
    criteria = "\n\n".join(
        f"### {trait.name}\n{describe(trait)}\n{expected_form(trait)}" for trait in traits
    )
    system = SHARED_SYSTEM.format(criteria=criteria)
    return system_and_user(system, _user_text(question, trace, trace_file, workspace), instructions)


def extraction_messages(
    trait: AgenticRubricTrait, report: str, *, instructions: str | None = None
) -> list[ChatMessage]:
    """``[system, user]`` reading the finding on ``trait`` out of the investigation
    ``report`` (see :func:`~.agentic_parsing.report_text`)."""
    if trait.kind == "template":
        schema = template_reply_model(trait).model_json_schema()
        fields = "\n".join(
            f"- **{name}** ({spec.get('type', 'value')}): {spec.get('description', '')}".rstrip(
                ": "
            )
            for name, spec in schema.get("properties", {}).items()
        )
        expected = "Fill in every field of the record below from the report's findings."
        user = TEMPLATE_EXTRACTION_USER.format(
            name=trait.name, description=describe(trait), fields=fields or "(none)", report=report
        )
        return system_and_user(EXTRACTION_SYSTEM.format(expected=expected), user, instructions)
    if trait.kind == "boolean":
        expected = "Reply true when the report finds the criterion met, false otherwise."
        example: dict[str, object] = {"result": True}
    elif trait.kind == "score":
        low, high = score_range(trait)
        expected = f"Reply the report's score as a whole number from {low} to {high}."
        example = {"score": (low + high) // 2}
    else:
        expected = (
            "Reply the class the report settles on, its name exactly as listed:\n"
            + class_lines(trait)
        )
        example = {"classification": next(iter(trait.classes or {"?": ""}))}
    user = EXTRACTION_USER.format(
        name=trait.name, description=describe(trait), report=report, example=json.dumps(example)
    )
    return system_and_user(EXTRACTION_SYSTEM.format(expected=expected), user, instructions)
