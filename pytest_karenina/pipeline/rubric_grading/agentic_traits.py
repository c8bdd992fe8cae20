"""Grading agentic rubric traits (stage 11b): a deep-agent judge investigates, then each
trait's value is extracted from its report (:mod:`.agentic_extraction`).

Strategies (``agentic_rubric_strategy``, as Karenina documents them):

* ``individual``: one investigation per trait, bounded by the trait's ``max_turns`` and
  ``timeout_seconds`` and shown what its ``context_mode`` allows (the trace, the workspace or
  both), by its ``model_override`` model when it has one, else by the parsing model; with
  ``agentic_rubric_parallel`` the traits are graded at once, one thread each.
* ``shared``: when every trait resolves to the same judge model (interface, provider and
  name), one investigation covers them all (the most turns and the longest time of them; the
  trace and the workspace when any trait sees them), then each trait is extracted from its
  report. Traits resolving to different models fall back to ``individual``, and so does a
  shared investigation that fails (with a warning).

The judge's file tools are read-only. Failures stay at the trait: a judge that is not a deep
agent, an investigation that fails, or hits its turn or time limit (its partial trace is
kept), an extraction that fails, each leave that trait without a value and with the reason;
only a strict-replay miss propagates.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage, LLMCallError, Usage
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.rubric_grading.agentic_extraction import (
    Extraction,
    Instructions,
    extract,
)
from pytest_karenina.pipeline.workspace import prompt_path
from pytest_karenina.prompts.agentic_parsing import report_text
from pytest_karenina.prompts.agentic_rubric import (
    EXTRACTION_TASK,
    INVESTIGATION_TASK,
    investigation_messages,
    shared_investigation_messages,
)
from pytest_karenina.results.trace import render_trace
from pytest_karenina.rubrics.traits import AgenticRubricTrait

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig
    from pytest_karenina.llm.agent_ports import AgentPort
    from pytest_karenina.llm.ports import StructuredPort

SHARED_FAILED = (
    "the shared investigation of the agentic rubric traits failed ({reason}): each trait "
    "was investigated on its own"
)
NO_WORKSPACE = (
    "agentic rubric trait {name!r} reads the workspace (context_mode {mode!r}), but the "
    "answer has none: investigated without it"
)


@dataclass(frozen=True)
class TraitJudge:
    """The judge of an agentic trait: its agent, its structured port, its model (the path
    it is told the workspace is at depends on its interface) and its label in usage."""

    agent: AgentPort
    extractor: StructuredPort
    model: ModelConfig
    label: str

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        """What the ``shared`` strategy compares (Karenina's interface, provider, name)."""
        return (self.model.interface, self.model.model_provider, self.model.model_name)


JudgeResolver = Callable[[AgenticRubricTrait], "TraitJudge | str"]
"""A trait -> its judge, or why it has none."""


@dataclass(frozen=True)
class Evidence:
    """What investigations may be shown of the answer: the question, the answering trace,
    the workspace, and the name of the trace's file in it (materialized traits)."""

    question_id: str
    question: str
    trace: str
    workspace: Path | None = None
    trace_file: str | None = None
    instructions: Instructions = lambda task: None


@dataclass
class AgenticOutcome:
    """What grading a rubric's agentic traits found, ready for the rubric section."""

    scores: dict[str, Any] = field(default_factory=dict)
    traces: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, dict[str, str | None]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    usage: list[tuple[str, Usage, str]] = field(default_factory=list)
    """``(call kind, usage, model label)`` of every call made."""


@dataclass
class _Investigation:
    run: AgentResult | None = None
    trace: str | None = None
    error: str | None = None


def _sees(trait: AgenticRubricTrait) -> tuple[bool, bool]:
    """``(trace, workspace)``: what the trait's context mode shows its judge."""
    return trait.context_mode != "workspace_only", trait.context_mode != "trace_only"


def _messages(
    traits: Sequence[AgenticRubricTrait], judge: TraitJudge, evidence: Evidence,
    trace: bool, workspace: bool, materialized: bool,
) -> list[ChatMessage]:  # fmt: skip
    root = evidence.workspace if workspace else None
    shown = prompt_path(root, judge.model.interface) if root is not None else None
    file = evidence.trace_file if trace and workspace and materialized else None
    options: dict[str, Any] = {
        "trace": evidence.trace if trace else None, "trace_file": file, "workspace": shown,
        "instructions": evidence.instructions(INVESTIGATION_TASK),
    }  # fmt: skip
    if len(traits) == 1:
        return investigation_messages(traits[0], evidence.question, **options)
    return shared_investigation_messages(traits, evidence.question, **options)


def _investigate(
    judge: TraitJudge, messages: list[ChatMessage], evidence: Evidence, *,
    max_turns: int, timeout: float, workspace: bool, usage: list[tuple[str, Usage, str]],
) -> _Investigation:  # fmt: skip
    config = AgentRunConfig(
        INVESTIGATION_TASK, question_id=evidence.question_id, max_turns=max_turns,
        timeout=timeout or None, workspace=evidence.workspace if workspace else None,
        read_only=True,
    )  # fmt: skip
    try:
        run = judge.agent.run(messages, config)
    except ReplayMiss:
        raise
    except AgentError as exc:
        partial = exc.partial
        if partial is not None:
            usage.append((INVESTIGATION_TASK, partial.usage, judge.label))
        trace = render_trace(partial.trace_messages) if partial is not None else None
        return _Investigation(trace=trace, error=f"the investigation failed: {exc.reason}")
    except Exception as exc:
        reason = exc.reason if isinstance(exc, LLMCallError) else f"{type(exc).__name__}: {exc}"
        return _Investigation(error=f"the investigation failed: {reason}")
    usage.append((INVESTIGATION_TASK, run.usage, judge.label))
    trace = render_trace(run.trace_messages)
    if run.limit_reached or run.timeout_reached:
        what = (
            f"turn limit ({max_turns} model calls)"
            if run.limit_reached
            else f"time limit ({timeout:g} s)"
        )
        return _Investigation(trace=trace, error=f"the investigation hit its {what}")
    return _Investigation(run=run, trace=trace)


@dataclass
class _Grade:
    """One trait's grading, gathered apart so that parallel traits never share state."""

    trace: str | None = None
    extraction: Extraction = field(default_factory=Extraction)
    warnings: list[str] = field(default_factory=list)
    usage: list[tuple[str, Usage, str]] = field(default_factory=list)


def _extracted(
    trait: AgenticRubricTrait, judge: TraitJudge, found: _Investigation, grade: _Grade,
    evidence: Evidence,
) -> _Grade:  # fmt: skip
    grade.trace = found.trace
    if found.run is None:
        grade.extraction = Extraction(error=found.error)
        return grade
    report = report_text(found.run.final_response, found.trace or "")
    grade.extraction = extract(
        trait, judge.extractor, report, found.run.final_response, evidence.instructions
    )
    if grade.extraction.usage is not None:
        grade.usage.append((EXTRACTION_TASK, grade.extraction.usage, judge.label))
    return grade


def _grade_one(trait: AgenticRubricTrait, judge: TraitJudge, evidence: Evidence) -> _Grade:
    grade = _Grade()
    trace, workspace = _sees(trait)
    if workspace and evidence.workspace is None:
        grade.warnings.append(NO_WORKSPACE.format(name=trait.name, mode=trait.context_mode))
        workspace = False
    messages = _messages([trait], judge, evidence, trace, workspace, trait.materialize_trace)
    found = _investigate(
        judge, messages, evidence, max_turns=trait.max_turns,
        timeout=float(trait.timeout_seconds), workspace=workspace, usage=grade.usage,
    )  # fmt: skip
    return _extracted(trait, judge, found, grade, evidence)


def grade_agentic_traits(
    traits: Sequence[AgenticRubricTrait],
    resolve: JudgeResolver,
    evidence: Evidence,
    *,
    strategy: str = "individual",
    parallel: bool = False,
) -> AgenticOutcome:
    """Grade ``traits`` (see the module docstring); ``resolve`` gives each its judge."""
    outcome = AgenticOutcome()
    judged: list[tuple[AgenticRubricTrait, TraitJudge]] = []
    for trait in traits:
        judge = resolve(trait)
        if isinstance(judge, str):
            outcome.errors[trait.name] = judge
        else:
            judged.append((trait, judge))
    grades: list[_Grade] | None = None
    if strategy == "shared" and len({judge.key for _, judge in judged}) == 1:
        grades = _shared(judged, evidence, outcome)
    if grades is None:
        grades = _individual(judged, evidence, parallel)
    for (trait, _), grade in zip(judged, grades, strict=True):
        _collect(outcome, trait, grade)
    return outcome


def _individual(
    judged: list[tuple[AgenticRubricTrait, TraitJudge]], evidence: Evidence, parallel: bool
) -> list[_Grade]:
    if not parallel or len(judged) < 2:
        return [_grade_one(trait, judge, evidence) for trait, judge in judged]
    with ThreadPoolExecutor(len(judged), thread_name_prefix="karenina-agentic") as pool:
        # Each thread runs in a copy of this one's context: the item's retry tally follows.
        futures = [
            pool.submit(contextvars.copy_context().run, _grade_one, trait, judge, evidence)
            for trait, judge in judged
        ]
        return [future.result() for future in futures]


def _shared(
    judged: list[tuple[AgenticRubricTrait, TraitJudge]], evidence: Evidence,
    outcome: AgenticOutcome,
) -> list[_Grade] | None:  # fmt: skip
    """One investigation for every trait, then one extraction each; None (after a warning)
    when that investigation failed."""
    traits = [trait for trait, _ in judged]
    judge = judged[0][1]
    trace = any(_sees(trait)[0] for trait in traits)
    workspace = any(_sees(trait)[1] for trait in traits) and evidence.workspace is not None
    materialized = any(trait.materialize_trace for trait in traits)
    messages = _messages(traits, judge, evidence, trace, workspace, materialized)
    usage: list[tuple[str, Usage, str]] = []
    found = _investigate(
        judge, messages, evidence, max_turns=max(t.max_turns for t in traits),
        timeout=float(max(t.timeout_seconds for t in traits)), workspace=workspace, usage=usage,
    )  # fmt: skip
    outcome.usage.extend(usage)
    if found.run is None:
        outcome.warnings.append(SHARED_FAILED.format(reason=found.error))
        return None
    return [_extracted(trait, judge, found, _Grade(), evidence) for trait in traits]


def _collect(outcome: AgenticOutcome, trait: AgenticRubricTrait, grade: _Grade) -> None:
    found = grade.extraction
    outcome.scores.update(found.scores)
    if grade.trace is not None:
        outcome.traces[trait.name] = grade.trace
    if found.metadata is not None:
        outcome.metadata[trait.name] = found.metadata
    if found.error is not None:
        outcome.errors[trait.name] = found.error
    outcome.warnings.extend([*grade.warnings, *found.warnings])
    outcome.usage.extend(grade.usage)
