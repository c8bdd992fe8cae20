"""Collection: a checkpoint file yields one QuestionItem per question x answering model x
replicate, in file order, then one ScenarioItem per scenario x answering model x replicate
(xdist workers must collect identically). Judge replicates never make items: an item holds
every judge replicate of its answers."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_karenina.checkpoint import CheckpointError, Question, load_checkpoint
from pytest_karenina.checkpoint.gc_pause import collection_paused
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.pipeline.run import replicate_numbers
from pytest_karenina.plugin.collect.base import KareninaItem
from pytest_karenina.plugin.collect.question_hash import questions_digest
from pytest_karenina.plugin.collect.scenario_items import scenario_items
from pytest_karenina.plugin.run.cost_cap import CostCapReached
from pytest_karenina.plugin.stash import (
    COLLECTED_KEY,
    CONFIG_KEY,
    GATE_POLICY_KEY,
    HEAP_KEY,
    LABELLED_ITEMS_KEY,
    PREFETCHER_KEY,
    QUESTIONS_DIGEST_KEY,
    SETTINGS_KEY,
)
from pytest_karenina.plugin.verdict.explain import (
    PipelineError,
    StageListError,
    VerificationFailed,
    explain_error,
    explain_unmeasured,
)
from pytest_karenina.plugin.verdict.outcome import (
    NO_FACTS,
    Outcome,
    Verdict,
    decide_verdicts,
    trait_definitions,
)
from pytest_karenina.plugin.verdict.replicates import ReplicateVote, vote
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.gates import unknown_gate_traits
from pytest_karenina.rubrics.traits import Rubric, has_traits
from pytest_karenina.scenarios import load_scenarios

UNFINISHED = "question is marked finished: false (--karenina-include-unfinished runs it)"
NO_VERDICT = "no verdict: the evaluation mode decided nothing for this item"
NO_GATED_TRAITS = (
    "no verdict: rubric_only and no gated rubric trait "
    "(gate literal or metric traits with karenina_rubric_gates)"
)
KARENINA_MARK = pytest.mark.karenina
"""Built once: looking a mark up by name costs ~20 µs (pytest checks it is registered)."""
_SLUG_JUNK = re.compile(r"[^a-z0-9._-]+")


def slug(text: str, limit: int = 60) -> str:
    """A node-id-safe name: lower case, no ``::``, ``/``, brackets or whitespace."""
    cleaned = _SLUG_JUNK.sub("-", text.lower()).strip("-.")
    return cleaned[:limit].rstrip("-.") or "question"


def question_slug(question_id: str) -> str:
    """The readable part of a question id (``urn:karenina:quickstart:capital`` -> ``capital``)."""
    return slug(question_id.rsplit(":", 1)[-1] or question_id)


def unique_name(base: str, question_id: str, taken: set[str]) -> str:
    """``base``, or when a question of the file already has it (ids that differ only in case
    or punctuation slug alike), ``base-<6 hex of the id's hash>``, numbered if even that is
    taken: every question keeps an item of its own."""
    if base not in taken:
        return base
    hashed = f"{base}-{hashlib.sha256(question_id.encode()).hexdigest()[:6]}"
    name, number = hashed, 2
    while name in taken:
        name, number = f"{hashed}-{number}", number + 1
    return name


@dataclass(frozen=True)
class ModelReplicate:
    """The answering model and replicate an item runs, and the ``[label]`` of its name
    (None when the run has a single combination)."""

    answering: ModelConfig
    answering_index: int
    """Position of the model in the config's answering models."""
    replicate: int | None
    label: str | None
    replicates: tuple[int | None, ...] = ()
    """Under a replicate policy other than ``each``: every replicate the item runs."""

    @property
    def runs(self) -> tuple[int | None, ...]:
        """The replicates this item runs: its own, or all of them under a policy."""
        return self.replicates or (self.replicate,)


def model_replicates(config: VerificationConfig, grouped: bool = False) -> list[ModelReplicate]:
    """Every answering model x replicate of the run, in that order; with ``grouped``
    (a replicate policy), every answering model, each running all replicates."""
    answering, _ = config.stamped_models()
    replicates = replicate_numbers(config)
    if grouped:
        names = [slug(m.id or m.model_name or "model", 40) for m in answering]
        return [
            ModelReplicate(model, index, None, names[index] if len(answering) > 1 else None,
                           tuple(replicates))
            for index, model in enumerate(answering)
        ]  # fmt: skip
    several = len(answering) * len(replicates) > 1
    found = []
    for index, model in enumerate(answering):
        name = slug(model.id or model.model_name or "model", 40)
        for replicate in replicates:
            label = None
            if several:
                label = name if replicate is None else f"{name}-r{replicate}"
            found.append(ModelReplicate(model, index, replicate, label))
    return found


class CheckpointFile(pytest.File):
    """A Karenina checkpoint named by ``--karenina`` (or the ini ``karenina_checkpoints``)."""

    def collect(self) -> list[pytest.Item]:
        # A large checkpoint's questions and items are no garbage: the collector pauses while
        # they are built (it would walk them over and over) and they are frozen after.
        with collection_paused():
            items = list(self._items())
        count = sum(isinstance(item, QuestionItem) for item in items)
        self.config.stash[HEAP_KEY].freeze(count)
        return items

    def _items(self) -> Iterator[pytest.Item]:
        try:
            benchmark = load_checkpoint(self.path)
        except CheckpointError as exc:
            raise self.CollectError(str(exc)) from None
        names: set[str] = set()
        grouped = self.config.stash[SETTINGS_KEY].replicate_policy.groups_replicates
        combinations = model_replicates(self.config.stash[CONFIG_KEY], grouped)
        stash = self.config.stash
        labelled = stash.get(LABELLED_ITEMS_KEY, None)  # --karenina-judge-check: labels
        made = labelled(self, benchmark) if labelled is not None else None
        raw = list(benchmark.scenarios or []) if made is None else []
        limit = stash[CONFIG_KEY].template_time_limit
        scenarios = load_scenarios(raw, checkpoint=self.path.name, limit=limit)
        count = len(made) if made is not None else len(benchmark.questions) * len(combinations)
        count += len(scenarios) * len(combinations)
        stash[COLLECTED_KEY] = stash.get(COLLECTED_KEY, 0) + count
        stash[QUESTIONS_DIGEST_KEY] = questions_digest(
            (question.id for question in benchmark.questions), stash.get(QUESTIONS_DIGEST_KEY, 0)
        )
        rubrics = (benchmark.global_rubric, benchmark.global_dynamic_rubric)
        scopes = [*rubrics, *(question.rubric for question in benchmark.questions)]
        traits = {self.name: trait_definitions(scopes)}
        problem = unknown_gate_traits(stash[GATE_POLICY_KEY].rules, traits)
        if problem is not None:
            raise self.CollectError(f"--karenina-rubric-gates: {problem}")
        if made is not None:
            yield from made
            return
        for question in benchmark.questions:
            name = unique_name(question_slug(question.id), question.id, names)
            names.add(name)
            for combination in combinations:
                full = name if combination.label is None else f"{name}[{combination.label}]"
                # An explicit nodeid: pytest 9.2 mis-caches ids of custom items whose name
                # holds "[" (pytest-dev/pytest#15045), which breaks --lf.
                yield QuestionItem.from_parent(
                    self, name=full, nodeid=f"{self.nodeid}::{full}",
                    question=question, model_replicate=combination, rubrics=rubrics,
                )  # fmt: skip
        yield from scenario_items(self, scenarios, raw, combinations, rubrics, slug)


class QuestionItem(KareninaItem):
    """One question x answering model x replicate; its pipeline runs in the prefetcher."""

    def __init__(
        self,
        *,
        question: Question,
        model_replicate: ModelReplicate,
        rubrics: tuple[Rubric | None, Rubric | None] = (None, None),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.question = question
        self.model_replicate = model_replicate
        self.global_rubric, self.dynamic_rubric = rubrics
        self.add_marker(KARENINA_MARK)
        self.extra_keyword_matches.update(question.keywords)
        if model_replicate.answering.id:
            self.extra_keyword_matches.add(model_replicate.answering.id)
        self.runnable = question.finished or self.config.stash[SETTINGS_KEY].include_unfinished
        if not self.runnable:
            self.add_marker(pytest.mark.skip(reason=UNFINISHED))  # reported at the item
        self.results: list[VerificationResult] = []
        self.facts = NO_FACTS
        self.verdicts: list[Verdict] = []
        self.vote: ReplicateVote | None = None
        self.cost_capped = False
        """Setup skipped the item: the cost cap did not start its pipeline."""
        self.given_answer: Mapping[str, Any] | None = None
        """The answer the pipeline judges instead of asking the answering model (a
        judge-check item's label); None: the answering model answers."""

    @property
    def selection_id(self) -> str:
        return self.question.id

    @property
    def has_rubric(self) -> bool:
        """Whether the question has rubric traits (global, its own or dynamic)."""
        return has_traits(self.global_rubric, self.question.rubric, self.dynamic_rubric)

    def setup(self) -> None:
        """Wait for the pipeline; problems of the pipeline are errors of the item, and so are
        gated rubric traits without a value.

        They raise :class:`PipelineError` (a ``pytest.fail`` exception without a traceback)
        because pytest renders setup errors itself, not through ``repr_failure``.
        """
        prefetcher = self.config.stash.get(PREFETCHER_KEY, None)
        if prefetcher is None:  # --setup-only / --setup-plan: nothing is asked of a model
            return
        self.cost_capped = False
        try:
            run = prefetcher.result_of(self)
            self.results, self.facts = run.results, run.facts
        except StageListError as exc:
            raise PipelineError(str(exc)) from None
        except CostCapReached as exc:
            self.cost_capped = True
            pytest.skip(str(exc))
        finally:
            logged = prefetcher.logs.take(self.nodeid)
            if logged:
                self.add_report_section("setup", "log", logged)
        for result in self.results:
            self.ihook.pytest_karenina_verification_result(item=self, result=result)
        definitions = trait_definitions(
            (self.global_rubric, self.question.rubric, self.dynamic_rubric)
        )
        vconfig = self.config.stash[CONFIG_KEY]
        gating = self.config.stash[SETTINGS_KEY].rubric_gating(vconfig.evaluation_mode)
        policy = self.config.stash[GATE_POLICY_KEY]
        threshold = vconfig.embedding_check_threshold if vconfig.embedding_check_enabled else None
        self.verdicts = decide_verdicts(self.results, definitions, policy, gating, threshold)
        settings = self.config.stash[SETTINGS_KEY]
        judged = self.config.stash[CONFIG_KEY].judge_replicate_count > 1
        if self.model_replicate.replicates or judged:
            # Judge replicates vote under every policy; they never make items of their own.
            self.vote = vote(self.verdicts, settings.replicate_policy, settings.flaky)
        # The pipeline's errors, and template code that raised (a broken benchmark).
        errors = [
            v.result
            for v in self.verdicts
            if v.category.is_error and v.category is not Outcome.RUBRIC_ERROR
        ]
        if errors:
            raise PipelineError(explain_error(errors))
        unmeasured = [v for v in self.verdicts if v.category is Outcome.RUBRIC_ERROR]
        if unmeasured:
            raise PipelineError(explain_unmeasured(unmeasured))

    def teardown(self) -> None:
        """Let go of the results: the reports hold what they need, and a large run would
        otherwise keep every result of every question until the session ends."""
        self.results, self.verdicts, self.facts, self.vote = [], [], NO_FACTS, None

    def runtest(self) -> None:
        if self.vote is not None:
            self._by_policy(self.vote)
            return
        categories = [verdict.category for verdict in self.verdicts]
        if any(category not in (Outcome.PASS, Outcome.NO_VERDICT) for category in categories):
            raise VerificationFailed(self.verdicts, self.facts)
        if not categories or Outcome.NO_VERDICT in categories:
            rubric_only = self.config.stash[CONFIG_KEY].evaluation_mode == "rubric_only"
            pytest.skip(NO_GATED_TRAITS if rubric_only and self.has_rubric else NO_VERDICT)

    def _by_policy(self, found: ReplicateVote) -> None:
        if found.outcome is Outcome.NO_VERDICT:
            pytest.skip(NO_VERDICT)
        if found.outcome is not Outcome.PASS:
            raise VerificationFailed(self.verdicts, self.facts, "\n".join(found.lines()))

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


def question_items(items: Sequence[pytest.Item]) -> list[QuestionItem]:
    """The question items among ``items``, in order."""
    return [item for item in items if isinstance(item, QuestionItem)]
