"""Collection: a checkpoint file yields one QuestionItem per question x answering model x
replicate, in file order (xdist workers must collect identically)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.outcomes import VerificationFailed, explain_error, explain_unmeasured
from pytest_karenina.settings import SETTINGS_KEY

if TYPE_CHECKING:
    from pytest_karenina.checkpoint import Question
    from pytest_karenina.llm.model_config import ModelConfig
    from pytest_karenina.pipeline.config import VerificationConfig
    from pytest_karenina.results import VerificationResult
    from pytest_karenina.rubrics.gates import GatePolicy
    from pytest_karenina.rubrics.traits import Rubric
    from pytest_karenina.verdicts import Verdict

CONFIG_KEY = pytest.StashKey["VerificationConfig"]()
POLICY_KEY = pytest.StashKey["GatePolicy"]()
UNFINISHED = "question is marked finished: false (--karenina-include-unfinished runs it)"
NO_VERDICT = "no verdict: the evaluation mode decided nothing for this item"
_SLUG_JUNK = re.compile(r"[^a-z0-9._-]+")


def slug(text: str, limit: int = 60) -> str:
    """A node-id-safe name: lower case, no ``::``, ``/``, brackets or whitespace."""
    cleaned = _SLUG_JUNK.sub("-", text.lower()).strip("-.")
    return cleaned[:limit].rstrip("-.") or "question"


def question_slug(question_id: str) -> str:
    """The readable part of a question id (``urn:karenina:quickstart:capital`` -> ``capital``)."""
    return slug(question_id.rsplit(":", 1)[-1] or question_id)


@dataclass(frozen=True)
class Variant:
    """Which answering model and replicate an item runs."""

    answering: ModelConfig
    replicate: int | None
    label: str | None


def variants(config: VerificationConfig) -> list[Variant]:
    from pytest_karenina.pipeline.run import replicate_numbers

    answering, _ = config.stamped_models()
    replicates = replicate_numbers(config)
    several = len(answering) * len(replicates) > 1
    found = []
    for model in answering:
        name = slug(model.id or model.model_name or "model", 40)
        for replicate in replicates:
            label = None
            if several:
                label = name if replicate is None else f"{name}-r{replicate}"
            found.append(Variant(model, replicate, label))
    return found


class CheckpointFile(pytest.File):
    """A Karenina checkpoint named by ``--karenina`` (or the ini ``karenina_checkpoints``)."""

    def collect(self) -> Iterator[pytest.Item]:
        from pytest_karenina.checkpoint import CheckpointError, load_checkpoint

        config = self.config.stash[CONFIG_KEY]
        try:
            benchmark = load_checkpoint(self.path)
        except CheckpointError as exc:
            raise self.CollectError(str(exc)) from None
        from pytest_karenina.replay_report import COLLECTED_KEY

        seen: dict[str, int] = {}
        combinations = variants(config)
        stash = self.config.stash
        stash[COLLECTED_KEY] = stash.get(COLLECTED_KEY, 0) + len(benchmark.questions) * len(
            combinations
        )
        rubrics = (benchmark.global_rubric, benchmark.global_dynamic_rubric)
        for question in benchmark.questions:
            base = question_slug(question.id)
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base}-{seen[base]}"
            for variant in combinations:
                full = name if variant.label is None else f"{name}[{variant.label}]"
                # An explicit nodeid: pytest 9.2 mis-caches ids of custom items whose name
                # holds "[" (pytest-dev/pytest#15045), which breaks --lf.
                yield QuestionItem.from_parent(
                    self, name=full, nodeid=f"{self.nodeid}::{full}",
                    question=question, variant=variant, rubrics=rubrics,
                )  # fmt: skip


class QuestionItem(pytest.Item):
    """One question x answering model x replicate; its pipeline runs in the scheduler."""

    def __init__(
        self,
        *,
        question: Question,
        variant: Variant,
        rubrics: tuple[Rubric | None, Rubric | None] = (None, None),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.question = question
        self.variant = variant
        self.global_rubric, self.dynamic_rubric = rubrics
        self.add_marker("karenina")
        self.extra_keyword_matches.update(question.keywords)
        if variant.answering.id:
            self.extra_keyword_matches.add(variant.answering.id)
        self.runnable = question.finished or self.config.stash[SETTINGS_KEY].include_unfinished
        if not self.runnable:
            self.add_marker(pytest.mark.skip(reason=UNFINISHED))  # reported at the item
        self.results: list[VerificationResult] = []
        self.verdicts: list[Verdict] = []

    @property
    def has_rubric(self) -> bool:
        """Whether the question has rubric traits (global, its own or dynamic)."""
        from pytest_karenina.rubrics.traits import has_traits

        return has_traits(self.global_rubric, self.question.rubric, self.dynamic_rubric)

    def setup(self) -> None:
        """Wait for the pipeline; problems of the pipeline are errors of the item, and so are
        gated rubric traits without a value.

        ``pytest.fail(pytrace=False)`` because pytest renders setup errors itself (not
        through ``repr_failure``): this keeps them to the explanation.
        """
        from pytest_karenina.payload import user_properties
        from pytest_karenina.scheduler import StageListError, scheduler_of
        from pytest_karenina.verdicts import RUBRIC_ERROR, judge, trait_definitions

        try:
            self.results = scheduler_of(self.config).result_of(self)
        except StageListError as exc:
            pytest.fail(str(exc), pytrace=False)
        for result in self.results:
            self.ihook.pytest_karenina_verification_result(item=self, result=result)
        definitions = trait_definitions(
            (self.global_rubric, self.question.rubric, self.dynamic_rubric)
        )
        mode = self.config.stash[CONFIG_KEY].evaluation_mode
        gating = self.config.stash[SETTINGS_KEY].rubric_gating(mode)
        self.verdicts = judge(self.results, definitions, self._gate_policy(), gating)
        self.user_properties.extend(user_properties(self.verdicts))
        errors = [
            r for r in self.results if r.metadata.error or not r.metadata.completed_without_errors
        ]
        if errors:
            pytest.fail(explain_error(errors), pytrace=False)
        unmeasured = [v for v in self.verdicts if v.category == RUBRIC_ERROR]
        if unmeasured:
            pytest.fail(explain_unmeasured(unmeasured), pytrace=False)

    def _gate_policy(self) -> GatePolicy:
        policy = self.config.stash.get(POLICY_KEY, None)
        if policy is None:
            policy = self.config.stash[POLICY_KEY] = self.config.stash[SETTINGS_KEY].gate_policy()
        return policy

    def runtest(self) -> None:
        from pytest_karenina.verdicts import NO_GATED_TRAITS

        categories = [verdict.category for verdict in self.verdicts]
        if any(category not in ("pass", "no_verdict") for category in categories):
            raise VerificationFailed(self.verdicts, self.question.template_code)
        if not categories or "no_verdict" in categories:
            rubric_only = self.config.stash[CONFIG_KEY].evaluation_mode == "rubric_only"
            reason = NO_GATED_TRAITS if rubric_only and self.has_rubric else NO_VERDICT
            pytest.skip(reason)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, VerificationFailed):
            return excinfo.value.explain()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        # A line is required where pytest reports a skip at the item (skip marks).
        return self.path, 0, f"question {self.name}"
