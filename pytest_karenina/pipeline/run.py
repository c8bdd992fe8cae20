"""Running a benchmark: ``run_question`` for one task, ``run_verification`` for all.

A task is one question x answering model x parsing model x replicate. The
answer is generated once per question x answering model x replicate and reused
by every parsing model (spec 5.3): the tasks sharing an answer run in order in
one worker, while different answers run concurrently in a thread pool.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.llm_setup import LLMFactory
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.retries import RETRY_TALLY, RetryTally, collecting_retries
from pytest_karenina.pipeline.stages.generate_answer import CACHED_ANSWER, GENERATED_ANSWER
from pytest_karenina.prompts import resolve_few_shot
from pytest_karenina.results import VerificationResult, VerificationResultSet
from pytest_karenina.templates import template_id

if TYPE_CHECKING:
    from pytest_karenina.checkpoint import Benchmark, Question
    from pytest_karenina.llm.model_config import ModelConfig
    from pytest_karenina.pipeline.config import VerificationConfig


RUBRIC_NOT_AVAILABLE = (
    "rubric evaluation is not available in this version of pytest-karenina: "
    "no rubric trait was evaluated"
)


@dataclass(frozen=True)
class Task:
    """One pipeline run: which question, with which models, which replicate."""

    question: Question
    answering: ModelConfig
    parsing: ModelConfig
    replicate: int | None

    @property
    def answer_key(self) -> tuple[str, str | None, int | None]:
        return (self.question.id, self.answering.id, self.replicate)


def expand_tasks(questions: Sequence[Question], config: VerificationConfig) -> list[Task]:
    """Every question x answering model x parsing model x replicate, in that order.

    ``replicate`` is None when ``replicate_count`` is 1, else 1..N.
    """
    replicates: list[int | None] = (
        [None] if config.replicate_count == 1 else list(range(1, config.replicate_count + 1))
    )
    answering_models, parsing_models = config.stamped_models()
    return [
        Task(question, answering, parsing, replicate)
        for question in questions
        for answering in answering_models
        for replicate in replicates
        for parsing in parsing_models
    ]


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
    llm: LLMFactory,
    *,
    orchestrator: StageOrchestrator | None = None,
    run_name: str | None = None,
    cached_answer: dict[str, Any] | None = None,
    prepare: Callable[[VerificationContext], None] | None = None,
) -> tuple[VerificationResult, dict[str, Any] | None]:
    """Run the pipeline for one task; return its result and the answer it generated.

    ``prepare`` may adjust the context before the stages run (used by tests
    and the pytest plugin). Never raises for problems of the item itself: they
    end up in the result.
    """
    question = task.question
    judge = llm.judge(task.parsing, question.id)
    context = VerificationContext(
        question_id=question.id,
        question_text=question.text,
        template_code=question.template_code,
        template_id=template_id(question.template_code),
        answering_model=task.answering,
        parsing_model=task.parsing,
        config=config,
        rubric=question.rubric,
        keywords=list(question.keywords) or None,
        raw_answer=question.raw_answer,
        run_name=run_name,
        replicate=task.replicate,
        few_shot_examples=(
            resolve_few_shot(question.id, _examples(question), config.few_shot_config)
            if config.is_few_shot_enabled()
            else None
        ),
        answering_llm=llm.answering(task.answering, question.id),
        judge_llm=judge,
        judge_checks=llm.judge_checks(task.parsing, question.id),
        judge_chat=judge,
    )
    if cached_answer is not None:
        context.set_artifact(CACHED_ANSWER, cached_answer)
    if config.rubric_enabled:
        context.warnings.append(RUBRIC_NOT_AVAILABLE)
    if prepare is not None:
        prepare(context)
    tally = RetryTally()
    context.set_artifact(RETRY_TALLY, tally)
    with collecting_retries(tally):
        result = (orchestrator or StageOrchestrator.from_config(config)).run(context)
    if not isinstance(result, VerificationResult):
        raise RuntimeError(f"the stage list for {question.id} produced no VerificationResult")
    return result, context.get_artifact(GENERATED_ANSWER)


def run_verification(
    benchmark: Benchmark,
    config: VerificationConfig,
    question_ids: Sequence[str] | None = None,
    run_name: str | None = None,
    *,
    llm: LLMFactory | None = None,
    max_workers: int | None = None,
) -> VerificationResultSet:
    """Verify a benchmark and return one result per task, in task order.

    Concurrency is ``config.async_max_workers`` threads when
    ``config.async_enabled`` (else 1), unless ``max_workers`` is given.
    """
    tasks = expand_tasks(select_questions(benchmark, question_ids), config)
    factory = llm or LLMFactory(config)
    orchestrator = StageOrchestrator.from_config(config)
    name = run_name or f"run_{secrets.token_hex(4)}"
    groups: dict[tuple[str, str | None, int | None], list[int]] = {}
    for index, task in enumerate(tasks):
        groups.setdefault(task.answer_key, []).append(index)
    results: list[VerificationResult | None] = [None] * len(tasks)

    def run_group(indices: list[int]) -> None:
        answer: dict[str, Any] | None = None
        for index in indices:
            result, generated = run_question(
                tasks[index],
                config,
                factory,
                orchestrator=orchestrator,
                run_name=name,
                cached_answer=answer,
            )
            results[index] = result
            answer = answer or generated

    workers = max_workers or (config.async_max_workers if config.async_enabled else 1)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="karenina") as pool:
        for future in [pool.submit(run_group, indices) for indices in groups.values()]:
            future.result()
    return VerificationResultSet(results=[r for r in results if r is not None])
