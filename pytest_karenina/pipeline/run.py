"""Running a benchmark: ``run_question`` for one task, ``run_verification`` for all.

A task is one question x answering model x parsing model x replicate x judge replicate.
The answer is generated once per question x answering model x replicate and reused
by every parsing model (spec 5.3) and every judge replicate: the tasks sharing an answer
run in order in one worker, while different answers run concurrently in a thread pool.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_karenina.config.verification import StampedModels
from pytest_karenina.pipeline.agent_stack import AgentsUnavailable, agents_unavailable
from pytest_karenina.pipeline.context import VerificationContext, extract_feature_flags
from pytest_karenina.pipeline.embedding import install_semantic_match
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.retries import RETRY_TALLY, RetryTally, collecting_retries
from pytest_karenina.pipeline.stages.agentic_rubric_evaluation import JUDGE_PORTS
from pytest_karenina.pipeline.stages.generate_answer import (
    CACHED_ANSWER,
    GENERATED_ANSWER,
    WORKSPACE_SLOT,
)
from pytest_karenina.pipeline.workspace import SAVE_WORKSPACE, WorkspaceSlot
from pytest_karenina.pipeline.workspace_save import output_settings
from pytest_karenina.prompts import resolve_few_shot
from pytest_karenina.results import VerificationResult, VerificationResultSet
from pytest_karenina.rubrics.traits import has_traits
from pytest_karenina.templates import template_id

if TYPE_CHECKING:
    from pytest_karenina.checkpoint import Benchmark, Question
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.rubrics.traits import Rubric

logger = logging.getLogger(__name__)


def scenarios_not_run(benchmark: Benchmark) -> str | None:
    """Why results leave out the benchmark's multi-turn scenarios (None: it has none)."""
    count = len(benchmark.scenarios or [])
    if not count:
        return None
    return (
        f"{count} multi-turn scenario(s) of benchmark {benchmark.name!r} are not run "
        f"(run_verification does not run them; pytest --karenina and "
        f"pytest_karenina.scenarios.run_scenarios do): the results and "
        f"the pass rate cover its {len(benchmark.questions)} standalone question(s) only"
    )


@dataclass(frozen=True)
class Task:
    """One pipeline run: which question, with which models, which replicate.

    ``global_rubric`` and ``dynamic_rubric`` are the benchmark's, merged with the
    question's own rubric when the evaluation mode grades rubrics. ``judge_replicate``:
    which judging of the answer this task is (None without judge replicates); the tasks of
    one answer differ only in their parsing model and judge replicate.
    """

    question: Question
    answering: ModelConfig
    parsing: ModelConfig
    replicate: int | None
    global_rubric: Rubric | None = None
    dynamic_rubric: Rubric | None = None
    judge_replicate: int | None = None

    @property
    def has_rubric(self) -> bool:
        """Whether the task has rubric traits (global, the question's own or dynamic)."""
        return has_traits(self.question.rubric, self.global_rubric, self.dynamic_rubric)

    @property
    def answer_key(self) -> tuple[str, str | None, int | None]:
        return (self.question.id, self.answering.id, self.replicate)

    def reads_workspace(self, config: VerificationConfig) -> bool:
        """Whether the answer needs a workspace: agentic parsing, or (in a rubric mode) an
        agentic rubric trait whose judge looks at the workspace."""
        if config.agentic_parsing:
            return True
        if config.evaluation_mode == "template_only":
            return False
        rubrics = (self.question.rubric, self.global_rubric, self.dynamic_rubric)
        return any(
            trait.context_mode != "trace_only"
            for rubric in rubrics
            if rubric is not None
            for trait in rubric.agentic_traits
        )


def expand_tasks(
    questions: Sequence[Question],
    config: VerificationConfig,
    benchmark: Benchmark | None = None,
    *,
    models: StampedModels | None = None,
) -> list[Task]:
    """Every question x answering model x replicate x parsing model x judge replicate, in
    that order.

    ``replicate`` is None when ``replicate_count`` is 1, else 1..N, and ``judge_replicate``
    likewise for ``judge_replicate_count``. ``benchmark``
    supplies the global and dynamic rubrics. ``models`` (default: the config's, stamped)
    are the models to use, e.g. an :class:`LLMStack`'s.
    """
    answering_models, parsing_models = models or config.stamped_models()
    rubrics = benchmark_rubrics(benchmark)
    return [
        Task(question, answering, parsing, replicate, *rubrics, judge_replicate=judge)
        for question in questions
        for answering in answering_models
        for replicate in replicate_numbers(config)
        for parsing in parsing_models
        for judge in judge_replicate_numbers(config)
    ]


def benchmark_rubrics(benchmark: Benchmark | None) -> tuple[Rubric | None, Rubric | None]:
    """The benchmark's ``(global_rubric, global_dynamic_rubric)``."""
    if benchmark is None:
        return None, None
    return benchmark.global_rubric, benchmark.global_dynamic_rubric


def replicate_numbers(config: VerificationConfig) -> list[int | None]:
    """``[None]`` when ``replicate_count`` is 1, else ``[1, ..., N]``."""
    count = config.replicate_count
    return [None] if count == 1 else list(range(1, count + 1))


def judge_replicate_numbers(config: VerificationConfig) -> list[int | None]:
    """``[None]`` when ``judge_replicate_count`` is 1, else ``[1, ..., K]``."""
    count = config.judge_replicate_count
    return [None] if count == 1 else list(range(1, count + 1))


def select_questions(benchmark: Benchmark, question_ids: Sequence[str] | None) -> list[Question]:
    """The questions to run: the given ids (in that order), else the finished ones."""
    if question_ids is None:
        return benchmark.finished_questions()
    known = {question.id: question for question in benchmark.questions}
    missing = [qid for qid in question_ids if qid not in known]
    if missing:
        raise ValueError(f"benchmark {benchmark.name!r} has no question(s) {missing}")
    return [known[qid] for qid in question_ids]


def _examples(question: Question) -> list[dict[str, str]] | None:
    pool = question.few_shot_examples
    if not isinstance(pool, list):
        return None
    return [item for item in pool if isinstance(item, dict)]  # type: ignore[misc]


def run_question(
    task: Task,
    config: VerificationConfig,
    llm: LLMStack,
    *,
    orchestrator: StageOrchestrator | None = None,
    run_name: str | None = None,
    cached_answer: dict[str, Any] | None = None,
    prepare: Callable[[VerificationContext], None] | None = None,
    workspace: WorkspaceSlot | None = None,
    save_workspace: bool = False,
) -> tuple[VerificationResult, dict[str, Any] | None]:
    """Run the pipeline for one task; return its result and the answer it generated.

    ``prepare`` may adjust the context before the stages run (used by tests
    and the pytest plugin). ``workspace``: the answer group's workspace (agentic
    parsing); ``save_workspace``: this task saves it when it ends (the group's last judge,
    ``workspace_output_mode``). Never raises for problems of the item itself: they end up in
    the result.
    """
    question = task.question
    pair = llm.pair(task.answering, task.parsing)
    ports = pair.for_question(question.id, task.replicate, task.judge_replicate)
    context = VerificationContext(
        question_id=question.id,
        question_text=question.text,
        template_code=question.template_code,
        template_id=template_id(question.template_code),
        answering_model=task.answering,
        parsing_model=task.parsing,
        config=config,
        rubric=question.rubric,
        global_rubric=task.global_rubric,
        dynamic_rubric=task.dynamic_rubric,
        keywords=list(question.keywords) or None,
        raw_answer=question.raw_answer,
        run_name=run_name,
        replicate=task.replicate,
        judge_replicate=task.judge_replicate,
        few_shot_examples=(
            resolve_few_shot(question.id, _examples(question), config.few_shot_config)
            if config.is_few_shot_enabled()
            else None
        ),
        answering_llm=ports.answering,
        judge_llm=ports.judge,
        judge_checks=ports.judge_checks,
        judge_chat=ports.judge,
        answering_agent=ports.answering_agent,
        judge_agent=ports.judge_agent,
        workspace_root=workspace.root if workspace is not None else None,
        question_workspace_path=question.workspace_path,
        **extract_feature_flags(config),
    )
    if workspace is not None:
        context.set_artifact(WORKSPACE_SLOT, workspace)
        if save_workspace:
            context.set_artifact(SAVE_WORKSPACE, True)
    context.set_artifact(
        JUDGE_PORTS,
        lambda model: llm.pair(task.answering, model).for_question(
            question.id, task.replicate, task.judge_replicate
        ),
    )
    if cached_answer is not None:
        context.set_artifact(CACHED_ANSWER, cached_answer)
    if prepare is not None:
        prepare(context)
    tally = RetryTally()
    context.set_artifact(RETRY_TALLY, tally)
    with collecting_retries(tally):
        stages = orchestrator or StageOrchestrator.from_config(config, rubric=task.has_rubric)
        result = stages.run(context)
    if not isinstance(result, VerificationResult):
        raise RuntimeError(f"the stage list for {question.id} produced no VerificationResult")
    return result, context.get_artifact(GENERATED_ANSWER)


def run_answer_group(
    tasks: Sequence[Task],
    config: VerificationConfig,
    llm: LLMStack,
    orchestrator: StageOrchestrator,
    run_name: str | None,
    *,
    workspace_root: Path | None = None,
    cached_answer: dict[str, Any] | None = None,
) -> list[VerificationResult]:
    """Run tasks sharing one answer (same question, answering model, replicate) in order;
    the first generated answer is reused by the later parsing models (spec 5.3) and judge
    replicates, which judge it again. With agentic parsing (or agentic rubric traits that
    read the workspace) they share one workspace too, removed after the last of them.
    ``cached_answer``: an answer given in advance (the artifacts GenerateAnswer sets), judged
    instead of asking the answering model. The last of
    them saves the workspace (``workspace_output_mode``), and every result records where."""
    results: list[VerificationResult] = []
    answer: dict[str, Any] | None = cached_answer
    slot = _workspace_slot(tasks[0], config, workspace_root) if tasks else None
    try:
        for index, task in enumerate(tasks):
            result, generated = run_question(
                task, config, llm, orchestrator=orchestrator, run_name=run_name,
                cached_answer=answer, workspace=slot, save_workspace=index == len(tasks) - 1,
            )  # fmt: skip
            results.append(result)
            answer = answer or generated
    finally:
        if slot is not None and slot.saved is not None:
            for result in results:
                result.saved_workspace = str(slot.saved)
        warning = slot.release() if slot is not None else None
        if warning is not None and results:
            results[-1].metadata.warnings.append(warning)
    return results


def _workspace_slot(
    task: Task, config: VerificationConfig, root: Path | None
) -> WorkspaceSlot | None:
    if not task.reads_workspace(config):
        return None
    model = task.answering.id or task.answering.model_name or "model"
    return WorkspaceSlot(root, task.question.id, task.question.workspace_path,
                         replicate=task.replicate, output=output_settings(config),
                         model=model)  # fmt: skip


def run_verification(
    benchmark: Benchmark,
    config: VerificationConfig,
    question_ids: Sequence[str] | None = None,
    run_name: str | None = None,
    *,
    llm: LLMStack | None = None,
    max_workers: int | None = None,
    workspace_root: str | Path | None = None,
) -> VerificationResultSet:
    """Verify a benchmark and return one result per task, in task order.

    Concurrency is ``config.async_max_workers`` threads when
    ``config.async_enabled`` (else 1), unless ``max_workers`` is given.
    ``workspace_root``: where question workspaces live (agentic parsing). A benchmark's
    multi-turn scenarios are not run; a logged warning says how many (:func:`scenarios_not_run`).
    """
    missing = agents_unavailable(config) if llm is None else None
    if missing is not None:
        raise AgentsUnavailable(missing)
    unrun = scenarios_not_run(benchmark)
    if unrun is not None:
        logger.warning("%s", unrun)
    factory = llm or LLMStack(config)
    models = StampedModels(factory.answering_models, factory.parsing_models)
    questions = select_questions(benchmark, question_ids)
    tasks = expand_tasks(questions, config, benchmark, models=models)
    has_rubric = any(task.has_rubric for task in tasks)
    orchestrator = StageOrchestrator.from_config(config, rubric=has_rubric)
    name = run_name or f"run_{secrets.token_hex(4)}"
    groups: dict[tuple[str, str | None, int | None], list[int]] = {}
    for index, task in enumerate(tasks):
        groups.setdefault(task.answer_key, []).append(index)
    results: list[VerificationResult | None] = [None] * len(tasks)

    def run_group(indices: list[int]) -> None:
        group = [tasks[index] for index in indices]
        outcome = run_answer_group(
            group, config, factory, orchestrator, name,
            workspace_root=Path(workspace_root) if workspace_root is not None else None,
        )  # fmt: skip
        for index, result in zip(indices, outcome, strict=True):
            results[index] = result

    workers = max_workers or (config.async_max_workers if config.async_enabled else 1)
    factory.prepare()
    install_semantic_match(
        config.embedding_check_model, (task.question.template_code for task in tasks)
    )
    try:
        with ThreadPoolExecutor(max(1, workers), thread_name_prefix="karenina") as pool:
            for future in [pool.submit(run_group, indices) for indices in groups.values()]:
                future.result()
    finally:
        factory.close()
    return VerificationResultSet(results=[r for r in results if r is not None])
