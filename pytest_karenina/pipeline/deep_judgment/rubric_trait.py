"""Rubric deep judgment for one LLM trait: quotes, reasoning, then the verdict.

Excerpts are checked like template excerpts (:mod:`excerpts`), and asked for again only
when none was valid; a trait left without a valid quote after the last attempt has
``excerpt_validation_failed`` and no value. The reasoning comes from the quotes (or the
whole answer when the trait quotes nothing), and a last call turns it into the verdict,
clamped to the trait's own bounds (a declared 0 stays 0). A failing call is an error of the
trait, never an excerpt failure. Boolean and score traits only: literal and template-kind
traits are graded the plain way.

A stage counts as completed when it succeeded, as in Karenina: excerpt extraction when a
quote was valid, score extraction when the verdict could be read. ``had_excerpts`` says
whether the trait quotes at all (Karenina's meaning); the quotes kept are in ``excerpts``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.ports import ChatPort, LLMCallError, Usage
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.deep_judgment.calls import ask_json, json_object
from pytest_karenina.pipeline.deep_judgment.excerpts import (
    ResponseText,
    check_excerpts,
    ungrounded_line,
)
from pytest_karenina.pipeline.deep_judgment.search import (
    SearchFunction,
    attach_search_results,
    rate_excerpts,
)
from pytest_karenina.prompts.deep_judgment import excerpt_retry
from pytest_karenina.prompts.deep_judgment_rubric import (
    EXCERPT_TASK,
    HALLUCINATION_TASK,
    REASONING_TASK,
    SCORE_TASK,
    BooleanVerdictReply,
    ExcerptRatingsReply,
    ScoreVerdictReply,
    TraitExcerptsReply,
    excerpt_messages,
    reasoning_messages,
    score_messages,
)
from pytest_karenina.rubrics.scoring import FALSE_WORDS, clamp
from pytest_karenina.rubrics.traits import LLMRubricTrait

DEEP_KINDS = frozenset({"boolean", "score"})
CALL_KIND = "rubric_evaluation"
"""Every rubric deep-judgment call is a rubric call: its usage is under ``rubric_evaluation``."""
_FIRST_INTEGER = re.compile(r"-?\d+")


@dataclass(frozen=True)
class TraitSettings:
    """A trait's resolved deep-judgment settings (rubric defaults 7 / 0.8 / 2)."""

    max_excerpts: int = 7
    threshold: float = 0.8
    retry_attempts: int = 2
    excerpts: bool = True
    search: bool = False


@dataclass
class TraitDeepJudgment:
    """One trait's deep judgment: its value (None without one) and its trail."""

    name: str
    value: bool | int | None = None
    excerpts: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str = ""
    stages_completed: list[str] = field(default_factory=list)
    model_calls: int = 0
    retries: int = 0
    excerpt_validation_failed: bool = False
    rejected: list[dict[str, Any]] = field(default_factory=list)
    """The last attempt's rejected quotes."""
    dropped: int = 0
    """How many entries of the last attempt's reply were not read (over the maximum)."""
    threshold: float = 0.8
    excerpts_enabled: bool = True
    risk: dict[str, Any] | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def metadata(self) -> dict[str, Any]:
        """The trait's ``trait_metadata`` entry of the ``deep_judgment_rubric`` section (with
        ``error`` when a call failed, as in Karenina)."""
        found: dict[str, Any] = {
            "stages_completed": list(self.stages_completed),
            "model_calls": self.model_calls,
            "had_excerpts": self.excerpts_enabled,
            "excerpt_retry_count": self.retries,
            "excerpt_validation_failed": self.excerpt_validation_failed,
        }
        if self.error is not None:
            found["error"] = self.error
        return found

    def ungrounded(self) -> str:
        """Why the trait has no valid quote (see :func:`excerpts.ungrounded_line`)."""
        retries = f"{self.retries} excerpt retr{'y' if self.retries == 1 else 'ies'}"
        subject = f"rubric trait {self.name} after {retries}"
        return ungrounded_line(subject, self.rejected, self.threshold, self.dropped)

    def ask(self, judge: ChatPort, messages: Any, shape: type[BaseModel] | None = None) -> str:
        """One judge call, counted and its usage added; a reply class (``shape``) is asked
        for natively where the judge can (:func:`~.calls.ask_json`)."""
        if shape is None:
            reply = judge.chat(messages, call_kind=CALL_KIND)
        else:
            reply = ask_json(judge, messages, shape, call_kind=CALL_KIND)
        self.model_calls += 1
        self.usage = self.usage + reply.usage
        return reply.text


def trait_settings(
    config: VerificationConfig, trait: LLMRubricTrait, question_id: str
) -> TraitSettings | None:
    """How ``trait`` is deep-judged for ``question_id`` (compat 4.8), or None when it is not.

    ``disabled``: the trait's own ``deep_judgment_enabled``; ``enable_all``: every boolean and
    score trait, quotes as ``deep_judgment_rubric_global_excerpts``; ``use_checkpoint``: the
    trait's stored settings; ``custom``: the question's entry, else the global one. Unset
    numbers take the ``deep_judgment_rubric_*_default`` settings (7 / 0.8 / 2), never the
    template's.
    """
    if trait.kind not in DEEP_KINDS:
        return None
    mode = config.deep_judgment_rubric_mode
    own: tuple[bool, bool, int | None, float | None, int | None, bool]
    if mode == "enable_all":  # search is off in this mode (compat 4.8)
        own = (True, config.deep_judgment_rubric_global_excerpts, None, None, None, False)
    elif mode == "custom":
        custom = config.deep_judgment_rubric_config
        entry = None
        if custom is not None:
            entry = custom.question_specific.get(question_id, {}).get(trait.name)
            entry = entry or custom.global_traits.get(trait.name)
        if entry is None:
            return None
        own = (entry.enabled, entry.excerpt_enabled, entry.max_excerpts,
               entry.fuzzy_match_threshold, entry.excerpt_retry_attempts,
               entry.search_enabled)  # fmt: skip
    else:  # disabled and use_checkpoint read the trait's own settings
        own = (trait.deep_judgment_enabled, trait.deep_judgment_excerpt_enabled,
               trait.deep_judgment_max_excerpts, trait.deep_judgment_fuzzy_match_threshold,
               trait.deep_judgment_excerpt_retry_attempts,
               trait.deep_judgment_search_enabled)  # fmt: skip
    enabled, excerpts, most, threshold, retries, search = own
    if not enabled:
        return None
    return TraitSettings(
        max_excerpts=most if most is not None else config.deep_judgment_rubric_max_excerpts_default,
        threshold=(
            threshold if threshold is not None
            else config.deep_judgment_rubric_fuzzy_match_threshold_default
        ),
        retry_attempts=(
            retries if retries is not None
            else config.deep_judgment_rubric_excerpt_retry_attempts_default
        ),
        excerpts=excerpts,
        search=search and excerpts,
    )  # fmt: skip


def bounds(trait: LLMRubricTrait) -> tuple[int, int]:
    """A score trait's real range: its own bounds, 1..5 where unset (0 stays 0)."""
    low = trait.min_score if trait.min_score is not None else 1
    high = trait.max_score if trait.max_score is not None else 5
    return low, high


def _verdict(text: str, trait: LLMRubricTrait) -> bool | int | None:
    data = json_object(text) or {}
    if trait.kind == "boolean":
        raw = data.get("result")
        if isinstance(raw, bool):
            return raw
        words = text.strip().lower()
        for word in ("true", "yes", "false", "no"):
            if re.search(rf"\b{word}\b", words):
                return word not in FALSE_WORDS
        return None
    raw = data.get("score")
    if not isinstance(raw, int) or isinstance(raw, bool):
        found = _FIRST_INTEGER.search(text)
        raw = int(found.group()) if found else None
    return None if raw is None else clamp(raw, *bounds(trait))


def judge_trait(
    judge: ChatPort,
    trait: LLMRubricTrait,
    answer: str,
    settings: TraitSettings,
    instructions: Mapping[str, str | None] | None = None,
    *,
    question: str = "",
    search: SearchFunction | None = None,
) -> TraitDeepJudgment:
    """Grade ``trait`` on ``answer`` through deep judgment (boolean and score kinds).

    With ``settings.search`` and a ``search`` function, the quotes get search results and one
    call rates their hallucination risk before the reasoning, which is shown the ratings.
    """
    told = instructions or {}
    outcome = TraitDeepJudgment(
        trait.name, threshold=settings.threshold, excerpts_enabled=settings.excerpts
    )
    try:
        quoted: list[dict[str, Any]] | None = None
        if settings.excerpts:
            quoted = _excerpts(judge, trait, answer, settings, outcome, told.get(EXCERPT_TASK))
            if not quoted:
                outcome.excerpt_validation_failed = True
                return outcome
            outcome.stages_completed.append("excerpt_extraction")
            outcome.excerpts = quoted
            if settings.search and search is not None:
                _assess(judge, question, search, outcome, told.get(HALLUCINATION_TASK))
        reasoning = outcome.ask(judge, reasoning_messages(
            trait.name, trait.description, excerpts=quoted,
            answer=None if quoted is not None else answer,
            instructions=told.get(REASONING_TASK),
        ))  # fmt: skip
        outcome.reasoning = reasoning.strip()
        outcome.stages_completed.append("reasoning_generation")
        scale = bounds(trait) if trait.kind == "score" else None
        shape = BooleanVerdictReply if trait.kind == "boolean" else ScoreVerdictReply
        text = outcome.ask(judge, score_messages(
            trait.name, trait.description, outcome.reasoning, bounds=scale,
            instructions=told.get(SCORE_TASK),
        ), shape)  # fmt: skip
        outcome.value = _verdict(text, trait)
        if outcome.value is None:
            outcome.error = "deep judgment: the verdict reply could not be read"
        else:
            outcome.stages_completed.append("score_extraction")
    except ReplayMiss:
        raise  # a missing recording is a problem of the run: the item errors
    except LLMCallError as exc:
        outcome.error = f"deep judgment: {exc.reason}"
    return outcome


def _assess(
    judge: ChatPort,
    question: str,
    search: SearchFunction,
    outcome: TraitDeepJudgment,
    instructions: str | None,
) -> None:
    """Search results on the trait's quotes, then one call rating them all."""
    outcome.warnings.extend(attach_search_results(search, {outcome.name: outcome.excerpts}))
    risks, usage, warnings = rate_excerpts(
        judge, question, {outcome.name: outcome.excerpts},
        call_kind=CALL_KIND, instructions=instructions, shape=ExcerptRatingsReply,
    )  # fmt: skip
    if usage is not None:
        outcome.model_calls += 1
        outcome.usage = outcome.usage + usage
    outcome.warnings.extend(warnings)
    outcome.risk = {
        "overall_risk": risks.get(outcome.name, "high"),
        "per_excerpt_risks": [e.get("hallucination_risk") for e in outcome.excerpts],
    }
    outcome.stages_completed.append("hallucination_assessment")


def _excerpts(
    judge: ChatPort,
    trait: LLMRubricTrait,
    answer: str,
    settings: TraitSettings,
    outcome: TraitDeepJudgment,
    instructions: str | None,
) -> list[dict[str, Any]]:
    """The trait's valid quotes; asked for again only while none is valid."""
    text = ResponseText(answer)
    messages = excerpt_messages(
        trait.name, trait.description, answer,
        max_excerpts=settings.max_excerpts, instructions=instructions,
    )  # fmt: skip
    for attempt in range(settings.retry_attempts + 1):
        reply = outcome.ask(judge, messages, TraitExcerptsReply)
        check = check_excerpts(
            json_object(reply) or {}, ["excerpts"], text,
            threshold=settings.threshold, max_per_attribute=settings.max_excerpts,
        )  # fmt: skip
        valid = [e.to_result() for e in check.accepted.get("excerpts", []) if e.text]
        outcome.rejected = [e.to_result() for e in check.rejected.get("excerpts", [])]
        outcome.dropped = check.dropped.get("excerpts", 0)
        if valid or attempt == settings.retry_attempts:
            return valid
        outcome.retries += 1
        feedback = check.feedback(settings.threshold) if check.rejected else "No excerpt given."
        messages = excerpt_retry(messages, check.resent(reply), feedback)
    return []
