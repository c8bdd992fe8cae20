"""Dynamic rubrics: traits graded only when the response deals with their concept (spec 1.9).

One presence-check call covers every non-agentic dynamic trait. Present traits join
the rubric with provenance ``dynamic``; the others are recorded with a reason in
``dynamic_rubric_skipped_traits``. Agentic dynamic traits take no presence check: stage 11b
(AgenticRubricEvaluation) grades them, their concept being what its judge investigates.
A dynamic trait named like a static one is a
:class:`~pytest_karenina.rubrics.merge.RubricConflictError`, checked before the call.
A reply that cannot be read counts every concept as absent (as in Karenina); a call
that fails outright raises, which errors the item.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_karenina.llm.ports import LLMCallError, StructuredPort
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.llm.transport import TransportError
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.prompts.rubric_presence import PresenceReply, presence_messages
from pytest_karenina.rubrics.merge import DYNAMIC, MergedRubric
from pytest_karenina.rubrics.traits import Rubric

ABSENT = "concept not present in the response"
CALL_KIND = "rubric_presence_check"


def resolve_dynamic(
    port: StructuredPort,
    dynamic: Rubric,
    merged: MergedRubric,
    response: str,
    outcome: RubricOutcome,
    *,
    trait_names: Sequence[str] | None = None,
    instructions: str | None = None,
) -> MergedRubric:
    """``merged`` plus the dynamic traits whose concept ``response`` addresses."""
    wanted = [t for t in dynamic.traits() if trait_names is None or t.name in trait_names]
    merged.add(wanted, DYNAMIC)  # a name clash raises here, before any call
    candidates = [trait for trait in wanted if trait.trait_type != "agentic"]
    if not candidates:
        return merged
    messages = presence_messages(candidates, response, instructions=instructions)
    try:
        reply = port.parse(messages, PresenceReply, call_kind=CALL_KIND)
    except (ReplayMiss, TransportError):
        raise
    except LLMCallError as exc:
        for trait in candidates:
            outcome.skipped[trait.name] = f"the presence check reply could not be read: {exc}"
        return merged
    outcome.add_usage(reply.usage)
    present = {entry.trait_name for entry in reply.value.results if entry.present}
    promoted = [trait for trait in candidates if trait.name in present]
    for trait in candidates:
        if trait.name not in present:
            outcome.skipped[trait.name] = ABSENT
    outcome.promoted = [trait.name for trait in promoted]
    extended = merged.add(promoted, DYNAMIC)
    outcome.provenance.update(extended.provenance)
    return extended
