"""The per-process scheduler: runs item pipelines concurrently ahead of pytest's loop.

When the run loop starts, every QuestionItem this process will run is queued in run order;
``--karenina-concurrency`` daemon threads work through the queue, and each item's setup
waits for its own results. Stopping (``-x``, ``--maxfail``, Ctrl-C, end of session) drops
what has not started; calls in flight finish in the background (daemon threads never hold up
the interpreter's exit).
"""

from __future__ import annotations

import queue
import secrets
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_karenina.collect import CONFIG_KEY, QuestionItem
from pytest_karenina.settings import SETTINGS_KEY

if TYPE_CHECKING:
    from pytest_karenina.llm.model_config import ModelConfig
    from pytest_karenina.llm.ports import RawModel
    from pytest_karenina.llm.replay import ReplayStore
    from pytest_karenina.pipeline.llm_setup import LLMFactory
    from pytest_karenina.results import VerificationResult

SCHEDULER_KEY = pytest.StashKey["Scheduler"]()
Job = tuple[Future["list[VerificationResult]"], Callable[[], "list[VerificationResult]"]]


class StageListError(RuntimeError):
    """``pytest_karenina_modify_stages`` left a stage list that cannot run."""


class Scheduler:
    """Owns the LLM services, the replay store and the worker threads of one process."""

    def __init__(self, config: pytest.Config, run_name: str | None = None) -> None:
        from pytest_karenina.llm.replay import ReplayStore
        from pytest_karenina.pipeline.llm_setup import LLMFactory, default_adapter

        self.config = config
        self.settings = config.stash[SETTINGS_KEY]
        self.vconfig = config.stash[CONFIG_KEY]
        self.run_name = run_name or f"pytest_{secrets.token_hex(4)}"
        self.replay: ReplayStore | None = None
        if self.settings.replay != "off":
            self.replay = ReplayStore(self.store_path(), self.settings.replay)  # type: ignore[arg-type]

        def adapter(model: ModelConfig) -> RawModel:
            made = config.hook.pytest_karenina_make_adapter(config=config, model=model)
            return made if made is not None else default_adapter(model)

        self.llm: LLMFactory = LLMFactory(self.vconfig, replay=self.replay, adapter_factory=adapter)
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._futures: dict[str, Future[list[VerificationResult]]] = {}
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    def store_path(self) -> Path:
        from pytest_karenina.replay_report import store_path

        return store_path(self.settings)

    # --- scheduling -------------------------------------------------------------------------
    def start(self, items: Iterable[pytest.Item]) -> None:
        """Queue the pipelines of ``items`` (in order) and start the worker threads."""
        for item in items:
            if isinstance(item, QuestionItem) and item.runnable:
                self._submit(item)
        for index in range(self.settings.concurrency):
            thread = threading.Thread(target=self._work, name=f"karenina-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _submit(self, item: QuestionItem) -> Future[list[VerificationResult]]:
        future: Future[list[VerificationResult]] = Future()
        self._futures[item.nodeid] = future
        try:
            job = self._prepare(item)
        except StageListError as exc:
            future.set_exception(exc)
            return future
        self._jobs.put((future, job))
        return future

    def _prepare(self, item: QuestionItem) -> Callable[[], list[VerificationResult]]:
        """Build the item's stage list in the main thread (hooks run here) and its job."""
        from pytest_karenina.pipeline import StageOrchestrator, StageRegistry
        from pytest_karenina.pipeline.stage_list import default_stages

        stages = default_stages(self.vconfig, rubric=item.has_rubric)
        item.ihook.pytest_karenina_modify_stages(item=item, stages=stages)
        problems = StageRegistry.validate_dependencies(stages)
        if not stages or stages[-1].name != "FinalizeResult":
            problems.append("FinalizeResult must be the last stage")
        if problems:
            raise StageListError(
                "pytest_karenina_modify_stages left an invalid stage list: " + "; ".join(problems)
            )
        orchestrator = StageOrchestrator(stages)
        return lambda: self._run(item, orchestrator)

    def _run(self, item: QuestionItem, orchestrator: Any) -> list[VerificationResult]:
        from pytest_karenina.pipeline.run import Task, run_answer_group

        _, parsing_models = self.vconfig.stamped_models()
        question, variant = item.question, item.variant
        rubrics = (item.global_rubric, item.dynamic_rubric)
        tasks = [
            Task(question, variant.answering, parsing, variant.replicate, *rubrics)
            for parsing in parsing_models
        ]
        return run_answer_group(tasks, self.vconfig, self.llm, orchestrator, self.run_name)

    def _work(self) -> None:
        while not self._stopped.is_set():
            job = self._jobs.get()
            if job is None:
                return
            future, run = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(run())
            except BaseException as exc:  # handed to the waiting item
                future.set_exception(exc)

    # --- results ----------------------------------------------------------------------------
    def result_of(self, item: QuestionItem) -> list[VerificationResult]:
        """The item's results, waiting for them (an item not queued yet is queued now)."""
        future = self._futures.get(item.nodeid)
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
        for future in self._futures.values():
            future.cancel()
        for _ in self._threads:
            self._jobs.put(None)
        if self.replay is not None:
            self.replay.compact()


def scheduler_of(config: pytest.Config) -> Scheduler:
    scheduler = config.stash.get(SCHEDULER_KEY, None)
    if scheduler is None:
        scheduler = config.stash[SCHEDULER_KEY] = Scheduler(config)
    return scheduler
