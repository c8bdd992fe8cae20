"""The per-process prefetcher: runs item pipelines concurrently ahead of pytest's loop.

When the run loop starts, every item this process will run (questions, and scenarios: each
execution whole, its turns in order, in one job) is queued in run order;
``--karenina-concurrency`` daemon threads work through the queue, and each item's setup
waits for its own results. Stopping (``-x``, ``--maxfail``, Ctrl-C, end of session) drops
what has not started; calls in flight finish in the background (daemon threads never hold up
the interpreter's exit).
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, cast

import pytest

from pytest_karenina.checkpoint import Question
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.assumed import AssumedTally
from pytest_karenina.llm.ports import RawModel
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.pipeline.assumed_replies import assumed_misses
from pytest_karenina.pipeline.embedding import install_semantic_match
from pytest_karenina.pipeline.llm_stack import LLMStack, default_adapter
from pytest_karenina.pipeline.orchestrator import StageOrchestrator, StageRegistry
from pytest_karenina.pipeline.replay_sides import ReplaySides, Side
from pytest_karenina.pipeline.run import Task, judge_replicate_numbers, run_answer_group
from pytest_karenina.pipeline.stage_list import default_stages
from pytest_karenina.plugin.options.settings import Settings, judge_store_path, store_path
from pytest_karenina.plugin.run.batch_run import pipelines_at_once, start_batching
from pytest_karenina.plugin.run.cost_cap import CostCap, CostCapReached
from pytest_karenina.plugin.run.flight_journal import FlightJournal
from pytest_karenina.plugin.run.job_item import JobItem
from pytest_karenina.plugin.run.live_status import PipelineCounts
from pytest_karenina.plugin.run.pipeline_logs import PipelineLogs
from pytest_karenina.plugin.run.scenario_job import (
    ScenarioJobItem,
    execute_scenario,
    scenario_templates,
)
from pytest_karenina.plugin.verdict.explain import StageListError
from pytest_karenina.plugin.verdict.outcome import NO_FACTS, FieldFacts, field_facts
from pytest_karenina.results import VerificationResult
from pytest_karenina.scenarios import ScenarioExecutionResult
from pytest_karenina.scenarios.executor import turn_config


@dataclass(frozen=True)
class ItemRun:
    """What an item's pipelines produced: its results, and what its template says about its
    fields (read where the template was compiled, for the reports)."""

    results: list[VerificationResult]
    facts: FieldFacts
    executions: list[ScenarioExecutionResult] = field(default_factory=list)
    """A scenario item's executions (its results are their turns'); empty for questions."""


class Replicates(Protocol):
    """Which answering model and replicates an item runs."""

    @property
    def answering_index(self) -> int: ...

    @property
    def runs(self) -> tuple[int | None, ...]: ...


class PrefetchItem(JobItem, Protocol):
    """What the prefetcher reads off an item: a ``collect.items.QuestionItem``, named here by
    what it offers because ``run/`` stands below ``collect/``."""

    @property
    def runnable(self) -> bool: ...

    @property
    def question(self) -> Question: ...

    @property
    def model_replicate(self) -> Replicates: ...

    @property
    def has_rubric(self) -> bool: ...

    @property
    def given_answer(self) -> Mapping[str, Any] | None:
        """An answer to judge instead of asking the answering model (judge-check items)."""
        ...


Job = tuple[Future[ItemRun], Callable[[], ItemRun]]
AnyItem = PrefetchItem | ScenarioJobItem

_SCENARIO_CLASSES: dict[type, bool] = {}


def _is_scenario(item: AnyItem) -> TypeGuard[ScenarioJobItem]:
    """``isinstance(item, ScenarioJobItem)``, decided once per item class: a check against a
    protocol walks its members each time (about 20 us, twice per item)."""
    found = _SCENARIO_CLASSES.get(type(item))
    if found is None:
        found = _SCENARIO_CLASSES[type(item)] = isinstance(item, ScenarioJobItem)
    return found


class Prefetcher:
    """Owns the LLM stack, the replay store and the worker threads of one process."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        vconfig: VerificationConfig,
        run_name: str | None = None,
        journal: FlightJournal | None = None,
    ) -> None:
        self.config = config
        self.journal = journal
        self.settings = settings
        self.vconfig = vconfig
        self.run_name = run_name or f"pytest_{secrets.token_hex(4)}"
        self.replay: ReplayStore | None = None
        """The store of the answering calls (and of every call, but in answers mode)."""
        self.judge_replay: ReplayStore | None = None
        """Answers mode: the judge calls' own store (None: they are live)."""
        if self.settings.replay != "off":
            self.replay = ReplayStore(store_path(self.settings), self.settings.store_mode)
        stores: ReplayStore | ReplaySides | None = self.replay
        if self.settings.replay == "answers":
            if self.settings.judge_replay != "off":
                path = judge_store_path(self.settings)
                self.judge_replay = ReplayStore(path, self.settings.judge_replay)
            stores = ReplaySides(self.replay, self.judge_replay)

        def adapter(model: ModelConfig) -> RawModel:
            made = config.hook.pytest_karenina_make_adapter(config=config, model=model)
            return made if made is not None else default_adapter(model)

        self.assumed: AssumedTally | None = None
        """An estimate's assumed calls: those its strict stores lack (``--karenina-estimate``;
        in answers mode the judge's only)."""
        misses = None
        if self.settings.ci.estimate:
            self.assumed = AssumedTally()
            sides: tuple[Side, ...] = ("answering", "judge")
            if self.settings.replay == "answers":
                sides = ("judge",)
            answer_tokens = self.settings.ci.estimate_answer_tokens
            misses = assumed_misses(self.assumed, answer_tokens, sides)
        self.counts = PipelineCounts()
        self.batch = start_batching(config, settings, vconfig, self.counts, self._live_calls)
        self.llm = LLMStack(
            self.vconfig, replay=stores, adapter_factory=adapter, miss_model=misses,
            batch=self.batch,
        )  # fmt: skip
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._futures: dict[str, Future[ItemRun]] = {}
        self._default_orchestrators: dict[bool, StageOrchestrator] = {}
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()
        self.logs = PipelineLogs(config)
        ci = self.settings.ci
        self.cost_cap = None
        if ci.max_cost is not None and ci.prices is not None:
            self.cost_cap = CostCap(ci.max_cost, ci.prices, self.settings.workers)

    def judge_usage(self) -> dict[str, Any] | None:
        """Answers mode: the judge side's live calls and store use (JSON-native, for the
        replay usage report); None in the other modes."""
        if self.settings.replay != "answers":
            return None
        store = self.judge_replay
        return {
            "live": self.llm.live_calls.of("judge"),
            "used": sorted(store.used_keys()) if store is not None else [],
            "added": store.stats()["added"] if store is not None else 0,
        }

    def _live_calls(self) -> int:
        calls = self.llm.live_calls
        return calls.of("answering") + calls.of("judge")

    # --- scheduling -------------------------------------------------------------------------
    def start(self, items: Iterable[AnyItem]) -> None:
        """Queue the pipelines of ``items`` (in order) and start the worker threads."""
        templates: list[str] = []
        for item in items:
            if getattr(item, "runnable", False):
                self._submit(item)
                if _is_scenario(item):
                    templates.extend(scenario_templates(item))
                else:
                    templates.append(cast(PrefetchItem, item).question.template_code)
        self.llm.prepare()
        install_semantic_match(self.vconfig.embedding_check_model, templates)
        if not self._threads:
            self.logs.install()
        for index in range(pipelines_at_once(self.settings, self.counts.queued)):
            thread = threading.Thread(target=self._work, name=f"karenina-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _submit(self, item: AnyItem) -> Future[ItemRun]:
        future: Future[ItemRun] = Future()
        self._futures[item.nodeid] = future
        try:
            if _is_scenario(item):
                job = self._prepare_scenario(item)
            else:
                job = self._prepare(cast(PrefetchItem, item))
        except StageListError as exc:
            future.set_exception(exc)
            return future
        self._jobs.put((future, job))
        self.counts.queue()
        return future

    @staticmethod
    def _orchestrator(
        item: AnyItem, vconfig: VerificationConfig, rubric: bool
    ) -> StageOrchestrator:
        """The item's stages, as the hook left them (called in the main thread)."""
        stages = default_stages(vconfig, rubric=rubric)
        item.ihook.pytest_karenina_modify_stages(item=item, stages=stages)
        problems = StageRegistry.validate_dependencies(stages)
        if not stages or stages[-1].name != "FinalizeResult":
            problems.append("FinalizeResult must be the last stage")
        if problems:
            raise StageListError(
                "pytest_karenina_modify_stages left an invalid stage list: " + "; ".join(problems)
            )
        return StageOrchestrator(stages)

    def _question_orchestrator(self, item: PrefetchItem) -> StageOrchestrator:
        """The stages of a question item. While no plugin implements
        ``pytest_karenina_modify_stages`` for the item, every item with (or without) rubric
        traits gets the same default list: one orchestrator for each (stages keep no state),
        not one built and checked per item."""
        if item.ihook.pytest_karenina_modify_stages.get_hookimpls():
            return self._orchestrator(item, self.vconfig, item.has_rubric)
        found = self._default_orchestrators.get(item.has_rubric)
        if found is None:
            found = self._orchestrator(item, self.vconfig, item.has_rubric)
            self._default_orchestrators[item.has_rubric] = found
        return found

    def _prepare(self, item: PrefetchItem) -> Callable[[], ItemRun]:
        """Build the item's stage list in the main thread (hooks run here) and its job."""
        orchestrator = self._question_orchestrator(item)
        groups = self._groups(item)
        code = item.question.template_code
        seconds = self.vconfig.template_time_limit
        workspace_root = self.settings.workspace_root or item.path.parent
        given = dict(item.given_answer) if item.given_answer is not None else None

        journal = self.journal

        def run() -> ItemRun:
            self.logs.working_on(item.nodeid)
            if journal is not None:
                journal.started(item.nodeid)

            def answer(tasks: list[Task]) -> list[VerificationResult]:
                return run_answer_group(
                    tasks, self.vconfig, self.llm, orchestrator, self.run_name,
                    workspace_root=workspace_root, cached_answer=given,
                )  # fmt: skip

            try:
                if len(groups) == 1:
                    results = answer(groups[0])
                else:  # a replicate policy: the item's replicates run at once
                    with ThreadPoolExecutor(len(groups), thread_name_prefix="karenina-rep") as pool:
                        results = [r for found in pool.map(answer, groups) for r in found]
            finally:
                if journal is not None:
                    journal.ended(item.nodeid)
                self.logs.working_on(None)
            # Here the template was just compiled (a cache hit); in the main thread, many
            # items later, the bounded cache may have dropped it.
            template = results[0].template if results else None
            trace = template.raw_llm_response if template is not None else None
            facts = field_facts(code, trace, seconds=seconds) if code.strip() else NO_FACTS
            return ItemRun(results, facts)

        return run

    def _prepare_scenario(self, item: ScenarioJobItem) -> Callable[[], ItemRun]:
        """A scenario item's job: its executions, each whole, in the job's thread; the stages
        of its turns (with rubric traits and without) built here, as the hook leaves them."""
        journal = self.journal
        orchestrators = {
            rubric: self._orchestrator(item, turn_config(self.vconfig, rubric), rubric)
            for rubric in (False, True)
        }

        def run() -> ItemRun:
            self.logs.working_on(item.nodeid)
            if journal is not None:
                journal.started(item.nodeid)
            try:
                results, executions = execute_scenario(
                    item, self.vconfig, self.llm, self.run_name, orchestrators
                )
            finally:
                if journal is not None:
                    journal.ended(item.nodeid)
                self.logs.working_on(None)
            return ItemRun(results, NO_FACTS, executions)

        return run

    def _groups(self, item: PrefetchItem) -> list[list[Task]]:
        """Per replicate the item runs, one task per parsing model and judge replicate, all
        sharing that replicate's answer (models of the stack)."""
        combination = item.model_replicate
        answering = self.llm.answering_models[combination.answering_index]
        rubrics = (item.global_rubric, item.dynamic_rubric)
        judges = judge_replicate_numbers(self.vconfig)
        return [
            [Task(item.question, answering, parsing, replicate, *rubrics, judge_replicate=judge)
             for parsing in self.llm.parsing_models for judge in judges]
            for replicate in combination.runs
        ]  # fmt: skip

    def _work(self) -> None:
        while not self._stopped.is_set():
            job = self._jobs.get()
            if job is None:
                return
            future, run = job
            if not future.set_running_or_notify_cancel():
                continue
            self.counts.start()
            try:
                if self.cost_cap is not None:
                    self.cost_cap.admit()
            except CostCapReached as exc:
                self.counts.finish()
                future.set_exception(exc)
                continue
            results: list[VerificationResult] = []
            try:
                found = run()
                results = found.results
                future.set_result(found)
            except BaseException as exc:  # handed to the waiting item
                future.set_exception(exc)
            finally:
                self.counts.finish()
                if self.cost_cap is not None:
                    self.cost_cap.settle(results)

    # --- results ----------------------------------------------------------------------------
    def result_of(self, item: AnyItem) -> ItemRun:
        """The item's results, waiting for them (an item not queued yet is queued now).

        The results are handed over, not kept: asked again (a rerun), the item runs again.
        """
        future = self._futures.pop(item.nodeid, None)
        if future is None:
            future = self._submit(item)
            if not self._threads:
                self.start(())
        return future.result()

    def stop(self) -> None:
        """Drop queued work, let the threads end, save a recording store (once)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self.cost_cap is not None:
            self.cost_cap.close()
        for future in self._futures.values():
            future.cancel()
        for _ in self._threads:
            self._jobs.put(None)
        self.logs.uninstall()
        if self.journal is not None:
            self.journal.close()
        for store in (self.replay, self.judge_replay):
            if store is not None:
                store.compact()
        self.llm.close()
        if self.batch is not None:
            self.batch.close()
