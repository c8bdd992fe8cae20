"""Call 11, metric traits: the judge sorts the answer's content into confusion-matrix buckets.

The author lists what a good answer contains (``tp_instructions``) and, in
``full_matrix`` mode, what it must not contain (``tn_instructions``). The reply is
Karenina's ``{"tp": [...], "fn": [...], "fp": [...], "tn": [...]}``; the metrics
are computed from it by :mod:`pytest_karenina.rubrics.metrics`.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user
from pytest_karenina.prompts.rubric import material
from pytest_karenina.rubrics.traits import MetricRubricTrait

METRIC_TASK = "rubric_metric_trait"


class ConfusionReply(BaseModel):
    """The judge's buckets; each list holds short texts, without repeats."""

    tp: list[str] = Field(default_factory=list, description="Answer quotes matching expected items")
    fn: list[str] = Field(default_factory=list, description="Expected items the answer misses")
    fp: list[str] = Field(default_factory=list, description="Answer quotes that are wrong")
    tn: list[str] = Field(
        default_factory=list, description="Items to avoid that the answer indeed leaves out"
    )


METRIC_SYSTEM = """\
You compare the content of a model's answer with lists of items that a benchmark \
author wrote, and sort what you find into buckets so that precision and recall can \
be computed.

Buckets:
- "tp": quotes from the answer that match an item the answer should contain. \
Synonyms and partial but correct matches count.
- "fn": items the answer should contain but does not (write the item as listed).
- "fp": quotes from the answer that offer content of the requested kind but match \
none of the expected items{fp_extra}.{tn_bucket}

Rules:
- Each item or quote goes into one bucket at most, once.
- Quote the answer briefly and faithfully.
- An empty bucket is an empty list.

Reply with the JSON object only: no markdown code fence and no text around it."""

TN_BUCKET = """
- "tn": items the answer should not contain and indeed leaves out (write the item \
as listed)."""

METRIC_USER = """\
Sort the content of the answer below for the trait "{name}".

## Trait
{description}

## Items a good answer contains
{tp_items}
{tn_section}
{material}

Reply with a JSON object shaped like this example (the texts are placeholders):
{example}"""


def _numbered(items: list[str]) -> str:
    return "\n".join(f"{index}. {item}" for index, item in enumerate(items, start=1))


def metric_messages(
    trait: MetricRubricTrait,
    question: str | None,
    answer: str,
    *,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` sorting ``answer`` into the buckets of one metric trait."""
    full = trait.evaluation_mode == "full_matrix"
    system = METRIC_SYSTEM.format(
        fp_extra=", or that match an item the answer should not contain" if full else "",
        tn_bucket=TN_BUCKET if full else "",
    )
    tn_section = (
        f"\n## Items a good answer must not contain\n{_numbered(trait.tn_instructions)}\n"
        if full
        else ""
    )
    example: dict[str, list[str]] = {"tp": ["..."], "fn": ["..."], "fp": []}
    if full:
        example["tn"] = ["..."]
    user = METRIC_USER.format(
        name=trait.name,
        description=trait.description or "(no description)",
        tp_items=_numbered(trait.tp_instructions),
        tn_section=tn_section,
        material=material(question, answer),
        example=json.dumps(example),
    )
    return system_and_user(system, user, instructions)
