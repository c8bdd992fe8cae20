"""Rubric deep judgment's judge calls, per LLM trait: excerpts, reasoning, the verdict.

1. ``dj_rubric_excerpt_extraction``: quotes of the answer bearing on the trait,
   ``{"excerpts": [{"text", "confidence"}]}``; a retry lists the rejected quotes.
2. ``dj_rubric_reasoning``: plain text (Evidence / Interpretation / Conclusion) from the
   quotes, or from the whole answer when the trait quotes nothing.
3. ``dj_rubric_score_extraction``: the reasoning into ``{"result": bool}`` (boolean traits)
   or ``{"score": int}`` (score traits).

With search on for the trait, ``dj_rubric_hallucination`` rates the quotes between 1 and 2
(the template's rating prompt), and the reasoning is shown each quote's risk.

The reply classes below give the JSON replies' shapes: they go with the calls as native
structured output where the judge has it (the prompts ask for the same JSON in words).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user

EXCERPT_TASK = "dj_rubric_excerpt_extraction"
REASONING_TASK = "dj_rubric_reasoning"
SCORE_TASK = "dj_rubric_score_extraction"
HALLUCINATION_TASK = "dj_rubric_hallucination"
"""The hallucination rating of a trait's quotes uses the template prompt under this task id."""

EXCERPT_SYSTEM = """\
You collect evidence for grading one quality trait of an answer.

Copy from the answer up to {max_excerpts} passages that bear on the trait, each exactly as \
written (same words, same order), with a confidence: "high", "medium" or "low". If nothing \
in the answer bears on it, give an empty list.

## Reply
A JSON object and nothing else: {{"excerpts": [{{"text": "<exact quote>", \
"confidence": "high|medium|low"}}]}}"""

TRAIT_BLOCK = """\
<trait name="{name}">
{description}
</trait>"""

EXCERPT_USER = """\
{trait}

<answer>
{answer}
</answer>"""

REASONING_SYSTEM = """\
You grade one quality trait of an answer, reasoning before you decide.

Write three short sections: Evidence (what the quotes, or the answer, show), \
Interpretation (what that means for the trait) and Conclusion (whether, or how well, the \
answer has the trait). Do not give a number or a yes/no verdict; that comes next."""

REASONING_USER = """\
{trait}

<{tag}>
{body}
</{tag}>"""

SCORE_SYSTEM = """\
You turn a grader's reasoning about one trait into its verdict.

## Reply
A JSON object and nothing else: {reply_shape}"""

BOOLEAN_REPLY = '{"result": true} or {"result": false}'
SCORE_REPLY = '{{"score": <a whole number from {low} to {high}>}}'

SCORE_USER = """\
{trait}

<reasoning>
{reasoning}
</reasoning>"""


Confidence = Literal["high", "medium", "low"]
Risk = Literal["none", "low", "medium", "high"]


class TraitExcerpt(BaseModel):
    text: str = Field(description="A passage copied exactly from the answer")
    confidence: Confidence


class TraitExcerptsReply(BaseModel):
    """The reply to ``dj_rubric_excerpt_extraction``."""

    excerpts: list[TraitExcerpt]


class BooleanVerdictReply(BaseModel):
    """The reply to ``dj_rubric_score_extraction`` for a boolean trait."""

    result: bool


class ScoreVerdictReply(BaseModel):
    """The reply to ``dj_rubric_score_extraction`` for a score trait."""

    score: int


class ExcerptRating(BaseModel):
    excerpt_id: str
    hallucination_risk: Risk
    justification: str


class ExcerptRatingsReply(BaseModel):
    """The reply to ``dj_rubric_hallucination`` (the template's rating prompt)."""

    excerpt_assessments: list[ExcerptRating]


def trait_block(name: str, description: str | None) -> str:
    return TRAIT_BLOCK.format(name=name, description=description or name)


def excerpt_messages(
    name: str, description: str | None, answer: str, *, max_excerpts: int,
    instructions: str | None = None,
) -> list[ChatMessage]:  # fmt: skip
    """``[system, user]`` asking for the trait's evidence."""
    system = EXCERPT_SYSTEM.format(max_excerpts=max_excerpts)
    user = EXCERPT_USER.format(trait=trait_block(name, description), answer=answer)
    return system_and_user(system, user, instructions)


def reasoning_messages(
    name: str, description: str | None, *,
    excerpts: Sequence[Mapping[str, object]] | None = None, answer: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:  # fmt: skip
    """``[system, user]`` asking for reasoning from the quotes, or from the answer."""
    if excerpts is not None:
        body = "\n".join(_evidence_line(e) for e in excerpts)
        tag = "evidence"
    else:
        body, tag = answer or "", "answer"
    user = REASONING_USER.format(trait=trait_block(name, description), tag=tag, body=body)
    return system_and_user(REASONING_SYSTEM, user, instructions)


def _evidence_line(excerpt: Mapping[str, object]) -> str:
    line = f'- "{excerpt.get("text")}" ({excerpt.get("confidence")})'
    risk = excerpt.get("hallucination_risk")
    if risk:
        line += f"; hallucination risk {risk}: {excerpt.get('hallucination_justification') or ''}"
    return line.rstrip(": ")


def score_messages(
    name: str, description: str | None, reasoning: str, *,
    bounds: tuple[int, int] | None = None, instructions: str | None = None,
) -> list[ChatMessage]:  # fmt: skip
    """``[system, user]`` for the verdict: boolean, or a score within ``bounds``."""
    shape = BOOLEAN_REPLY if bounds is None else SCORE_REPLY.format(low=bounds[0], high=bounds[1])
    user = SCORE_USER.format(trait=trait_block(name, description), reasoning=reasoning)
    return system_and_user(SCORE_SYSTEM.format(reply_shape=shape), user, instructions)
