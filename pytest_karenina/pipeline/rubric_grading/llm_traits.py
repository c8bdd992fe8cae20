"""Grading LLM traits and metric traits with the judge (spec 5.5, calls 6-11).

Order as in Karenina: template-kind traits (one call each), boolean and score
traits (one batch call, or one per trait with the ``sequential`` strategy),
literal traits (likewise), then metric traits (one call each). A batch that mixes
traits which see the reference answer with traits which do not is split in two.

A failed call never loses the other traits: the traits it covered get an entry in
``outcome.errors``. Only a strict-replay miss propagates (the item then errors),
because a missing recording is a problem of the run, not of the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from pytest_karenina.llm.ports import ChatMessage, StructuredPort
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.prompts.rubric import (
    BATCH_TASK,
    SINGLE_TASK,
    BooleanTraitReply,
    ScoreTraitReply,
    TraitScoresReply,
    batch_messages,
    score_range,
    single_messages,
)
from pytest_karenina.prompts.rubric_literal import (
    LITERAL_BATCH_TASK,
    LITERAL_SINGLE_TASK,
    Classification,
    LiteralBatchReply,
    LiteralSingleReply,
    literal_batch_messages,
    literal_single_messages,
)
from pytest_karenina.prompts.rubric_metric import METRIC_TASK, ConfusionReply, metric_messages
from pytest_karenina.prompts.rubric_template import (
    TEMPLATE_TASK,
    template_messages,
    template_reply_model,
)
from pytest_karenina.rubrics.metrics import BUCKETS, confusion_metrics, dedupe
from pytest_karenina.rubrics.scoring import (
    MISSING_LABEL,
    TraitValueError,
    boolean_value,
    evaluation_error_label,
    literal_index,
    score_value,
)
from pytest_karenina.rubrics.traits import LLMRubricTrait, MetricRubricTrait

ReplyT = TypeVar("ReplyT", bound=BaseModel)
CALL_KIND = "rubric_evaluation"
MISSING = "missing from the judge's reply"


@dataclass(frozen=True)
class JudgeMaterial:
    """What every rubric call shows the judge; ``instructions`` maps a task id to the
    user's PromptConfig text for it."""

    question: str | None
    answer: str
    reference: str | None = None
    instructions: Callable[[str], str | None] = lambda task: None


def _by_exposure(
    traits: Sequence[LLMRubricTrait],
) -> Iterator[tuple[bool, list[LLMRubricTrait]]]:
    for exposed in (False, True):
        group = [t for t in traits if t.include_ground_truth is exposed]
        if group:
            yield exposed, group


class LLMTraitGrader:
    """Runs the judge calls of one item's LLM and metric traits into ``outcome``."""

    def __init__(
        self,
        port: StructuredPort,
        material: JudgeMaterial,
        outcome: RubricOutcome,
        *,
        strategy: str = "batch",
    ) -> None:
        self.port = port
        self.material = material
        self.outcome = outcome
        self.sequential = strategy == "sequential"

    def grade(self, traits: Sequence[LLMRubricTrait]) -> None:
        for trait in traits:
            if trait.kind == "template":
                self._template(trait)
        graded = [t for t in traits if t.kind in ("boolean", "score")]
        literal = [t for t in traits if t.kind == "literal"]
        if self.sequential:
            for trait in graded:
                self._single(trait)
            for trait in literal:
                self._literal_single(trait)
        else:
            if graded:
                self._batch(graded)
            if literal:
                self._literal_batch(literal)

    def grade_metrics(self, traits: Sequence[MetricRubricTrait]) -> None:
        for trait in traits:
            self._metric(trait)

    # --- calls ------------------------------------------------------------------------------
    def _reference(self, exposed: bool) -> str | None:
        return self.material.reference if exposed else None

    def _ask(
        self, messages: list[ChatMessage], schema: type[ReplyT], names: Sequence[str]
    ) -> ReplyT | str:
        """The validated reply, or the reason the call failed (recorded for ``names``)."""
        try:
            reply = self.port.parse(messages, schema, call_kind=CALL_KIND)
        except ReplayMiss:
            raise
        except Exception as exc:
            reason = f"judge call failed: {type(exc).__name__}: {exc}"
            for name in names:
                self.outcome.fail(name, reason)
            return reason
        self.outcome.add_usage(reply.usage)
        return reply.value

    def _batch(self, traits: list[LLMRubricTrait]) -> None:
        for exposed, group in _by_exposure(traits):
            messages = batch_messages(
                group, self.material.question, self.material.answer,
                reference=self._reference(exposed),
                instructions=self.material.instructions(BATCH_TASK),
            )  # fmt: skip
            reply = self._ask(messages, TraitScoresReply, [t.name for t in group])
            if isinstance(reply, str):
                continue
            for trait in group:
                self._store(trait, reply.scores.get(trait.name), reply.reasoning.get(trait.name))

    def _single(self, trait: LLMRubricTrait) -> None:
        messages = single_messages(
            trait, self.material.question, self.material.answer,
            reference=self._reference(trait.include_ground_truth),
            instructions=self.material.instructions(SINGLE_TASK),
        )  # fmt: skip
        schema: type[BooleanTraitReply | ScoreTraitReply] = (
            BooleanTraitReply if trait.kind == "boolean" else ScoreTraitReply
        )
        reply = self._ask(messages, schema, [trait.name])
        if isinstance(reply, BooleanTraitReply):
            self._store(trait, reply.result, reply.reasoning)
        elif isinstance(reply, ScoreTraitReply):
            self._store(trait, reply.score, reply.reasoning)

    def _store(self, trait: LLMRubricTrait, raw: Any, reasoning: str | None) -> None:
        if raw is None:
            self.outcome.fail(trait.name, MISSING)
            return
        try:
            if trait.kind == "boolean":
                value: bool | int = boolean_value(raw)
            else:
                low, high = score_range(trait)
                value, original = score_value(raw, low, high)
                if original is not None:
                    self.outcome.warnings.append(
                        f"rubric trait {trait.name!r}: the judge's score {original} is outside "
                        f"{low}-{high} and was clamped to {value}"
                    )
        except TraitValueError as exc:
            self.outcome.fail(trait.name, f"unreadable judge reply: {exc}")
            return
        self.outcome.llm_scores[trait.name] = value
        if reasoning and reasoning.strip():
            self.outcome.llm_reasoning[trait.name] = reasoning.strip()

    def _literal_batch(self, traits: list[LLMRubricTrait]) -> None:
        for exposed, group in _by_exposure(traits):
            messages = literal_batch_messages(
                group, self.material.question, self.material.answer,
                reference=self._reference(exposed),
                instructions=self.material.instructions(LITERAL_BATCH_TASK),
            )  # fmt: skip
            reply = self._ask(messages, LiteralBatchReply, [t.name for t in group])
            if isinstance(reply, str):
                for trait in group:
                    self._store_label(trait, None, None, error=reply)
                continue
            found: dict[str, Classification] = {}
            for entry in reply.classifications:
                found.setdefault(entry.trait_name, entry)
            for trait in group:
                match = found.get(trait.name)
                label = match.class_name if match is not None else None
                self._store_label(trait, label, match.reasoning if match is not None else None)

    def _literal_single(self, trait: LLMRubricTrait) -> None:
        messages = literal_single_messages(
            trait, self.material.question, self.material.answer,
            reference=self._reference(trait.include_ground_truth),
            instructions=self.material.instructions(LITERAL_SINGLE_TASK),
        )  # fmt: skip
        reply = self._ask(messages, LiteralSingleReply, [trait.name])
        if isinstance(reply, str):
            self._store_label(trait, None, None, error=reply)
        else:
            self._store_label(trait, reply.classification, reply.reasoning)

    def _store_label(
        self, trait: LLMRubricTrait, label: str | None, reasoning: str | None, error: str = ""
    ) -> None:
        """Karenina's literal conventions: index -1 with a marker or the invalid label."""
        scores, labels = self.outcome.llm_scores, self.outcome.llm_labels
        if error:
            scores[trait.name], labels[trait.name] = -1, evaluation_error_label(error)
            return
        if label is None:
            scores[trait.name], labels[trait.name] = -1, MISSING_LABEL
            self.outcome.fail(trait.name, MISSING)
            return
        index, labels[trait.name] = literal_index(label, trait.classes or {})
        scores[trait.name] = index
        if index < 0:
            self.outcome.fail(
                trait.name, f"the judge chose {label!r}, not one of {list(trait.classes or {})}"
            )
        elif reasoning and reasoning.strip():
            self.outcome.llm_reasoning[trait.name] = reasoning.strip()

    def _template(self, trait: LLMRubricTrait) -> None:
        messages = template_messages(
            trait, self.material.question, self.material.answer,
            reference=self._reference(trait.include_ground_truth),
            instructions=self.material.instructions(TEMPLATE_TASK),
        )  # fmt: skip
        reply = self._ask(messages, template_reply_model(trait), [trait.name])
        if isinstance(reply, BaseModel):
            for field, value in reply.model_dump(mode="json").items():
                self.outcome.llm_scores[f"{trait.name}.{field}"] = value

    def _metric(self, trait: MetricRubricTrait) -> None:
        messages = metric_messages(
            trait, self.material.question, self.material.answer,
            instructions=self.material.instructions(METRIC_TASK),
        )  # fmt: skip
        reply = self._ask(messages, ConfusionReply, [trait.name])
        if isinstance(reply, str):
            return
        lists = {bucket: list(getattr(reply, bucket)) for bucket in BUCKETS}
        if trait.repeated_extraction:
            lists = {bucket: dedupe(items) for bucket, items in lists.items()}
        self.outcome.confusion_lists[trait.name] = lists
        self.outcome.metric_scores[trait.name] = confusion_metrics(lists, trait.metrics)
