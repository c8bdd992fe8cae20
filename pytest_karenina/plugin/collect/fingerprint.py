"""Fingerprints: what a question's verdict was measured with, so that a baseline compares a
verdict only with one measured the same way.

Each item carries five short hashes (:data:`PARTS`), the same for every replicate:

* ``question``: the question's text and expected answer (and its few-shot examples when
  few-shot prompting is on);
* ``template``: the answer template's code;
* ``rubric``: the traits that grade it (global, its own, dynamic) and the rubric gate rules,
  when the evaluation mode grades rubrics (``none`` otherwise);
* ``judge``: every parsing model's identity and sampling settings, and the run's settings
  that decide how answers are judged (evaluation mode, checks, deep judgment, agentic
  parsing, judge instructions, judge replicates...);
* ``prompts``: the prompt set's version (:data:`~pytest_karenina.prompts.version.PROMPTS_VERSION`).

A scenario item's parts are the same but ``question`` and ``template``
(:meth:`Fingerprints.of_scenario`).

Left out on purpose: the answering models (a model swap is what a baseline compares), how
calls are made (endpoints, keys, timeouts, retries, rate limits, concurrency), replicate
counts (the statistics take them into account) and bookkeeping. A setting that is not named
here counts as a judge setting: a new one makes entries not comparable rather than silently
comparable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from pytest_karenina.checkpoint import Question
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.prompts.version import PROMPTS_VERSION
from pytest_karenina.rubrics.gates import RubricGatePolicy
from pytest_karenina.rubrics.traits import Rubric

PARTS = ("question", "template", "rubric", "judge", "prompts")
"""The parts of a fingerprint, in the order a change is named."""

_MODEL_TRANSPORT = frozenset({
    "max_retries", "mcp_http_timeout", "mcp_sse_read_timeout", "endpoint_base_url",
    "endpoint_api_key", "anthropic_base_url", "anthropic_api_key", "request_timeout",
    "retry_policy", "max_concurrent_requests", "requests_per_minute", "manual_traces",
    "agent_timeout",
})  # fmt: skip
"""Settings of a parsing model that say how it is called, not what it is asked."""
_RUN_NOT_JUDGE = frozenset({
    "answering_models", "parsing_models", "replicate_count", "few_shot_config",
    "async_enabled", "async_max_workers", "max_concurrent_requests", "batch_timeout_seconds",
    "task_ordering", "answerer_concurrency_limits", "workspace_copy", "workspace_cleanup",
    "workspace_output_mode", "workspace_output_dir", "workspace_output_exclude_patterns",
    "db_config", "request_timeout", "scenario_turn_limit", "replay_store",
    "replay_parse_on_hydration_mismatch", "skip_triples", "retry_policy",
    "custom_error_patterns", "max_requeue_count", "requests_per_minute", "max_call_seconds",
    "template_time_limit",
})  # fmt: skip
"""Run settings that do not change how an answer is judged (the rest do)."""
_RUBRIC_MODES = ("template_and_rubric", "rubric_only")


def digest(data: Any) -> str:
    """12 hex characters of the SHA-256 of ``data`` as canonical JSON."""
    text = json.dumps(
        to_jsonable_python(data, bytes_mode="base64", fallback=_named),
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )  # fmt: skip
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _named(value: Any) -> str:
    """What a value JSON cannot hold (a search tool given as a function) is named by."""
    return str(getattr(value, "__qualname__", None) or type(value).__qualname__)


class Fingerprints:
    """The fingerprints of a run's items: the judge and prompt parts are computed once, the
    question parts once per question."""

    def __init__(
        self, config: VerificationConfig, gate_policy: RubricGatePolicy, rubric_gating: bool
    ) -> None:
        self.config = config
        self.graded = config.evaluation_mode in _RUBRIC_MODES
        self.rules = {
            "threshold": gate_policy.score_threshold,
            "rules": [str(rule) for rule in gate_policy.rules],
            "gating": rubric_gating,
        }
        self.judge = judge_digest(config)
        self.prompts = str(PROMPTS_VERSION)
        self._known: dict[str, dict[str, str]] = {}

    def of(self, question: Question, rubrics: Sequence[Rubric | None]) -> dict[str, str]:
        """The fingerprint of ``question`` graded with ``rubrics`` (the global, the
        question's own and the dynamic rubric)."""
        found = self._known.get(question.id)
        if found is None:
            few_shot = question.few_shot_examples if self.config.is_few_shot_enabled() else None
            rubric = "none"
            if self.graded:
                traits = [r.model_dump() if r is not None else None for r in rubrics]
                rubric = digest({"traits": traits, "gates": self.rules})
            found = self._known[question.id] = {
                "question": digest([question.text, question.raw_answer, few_shot]),
                "template": digest(question.template_code),
                "rubric": rubric,
                "judge": self.judge,
                "prompts": self.prompts,
            }
        return dict(found)

    def of_scenario(self, name: str, raw: Any, rubrics: Sequence[Rubric | None]) -> dict[str, str]:
        """The fingerprint of a scenario item: ``question`` hashes the scenario's checkpoint
        form without its templates (nodes' questions and rubrics, edges, code, criteria) and
        the turn limit, ``template`` every node's template code, ``rubric`` the global and
        dynamic rubrics and the gate rules (when the mode grades rubrics)."""
        key = f"scenario:{name}"
        found = self._known.get(key)
        if found is None:
            form = json.loads(json.dumps(raw, default=str)) if isinstance(raw, dict) else raw
            templates = {}
            nodes = form.get("nodes") if isinstance(form, dict) else None
            for node_id, node in nodes.items() if isinstance(nodes, dict) else ():
                question = node.get("question") if isinstance(node, dict) else None
                if isinstance(question, dict) and isinstance(question.get("hasPart"), dict):
                    templates[node_id] = question.pop("hasPart")
            rubric = "none"
            if self.graded:
                traits = [r.model_dump() if r is not None else None for r in rubrics]
                rubric = digest({"traits": traits, "gates": self.rules})
            found = self._known[key] = {
                "question": digest([form, self.config.scenario_turn_limit]),
                "template": digest(templates),
                "rubric": rubric,
                "judge": self.judge,
                "prompts": self.prompts,
            }
        return dict(found)


def judge_digest(config: VerificationConfig) -> str:
    """The ``judge`` part: the parsing models and the run settings that judge answers."""
    models = [
        to_jsonable_python(model.model_dump(exclude=set(_MODEL_TRANSPORT)), fallback=_named)
        for model in config.parsing_models
    ]
    settings = config.model_dump(exclude=set(_RUN_NOT_JUDGE))
    prompts = settings.get("prompt_config")
    if isinstance(prompts, dict):  # the answering model's instructions are not the judge's
        settings["prompt_config"] = {k: v for k, v in prompts.items() if k != "generation"}
    return digest({"parsing_models": models, "settings": settings})


def changed_parts(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The parts (in :data:`PARTS` order) whose hashes differ; a part one side lacks is
    not compared."""
    return [part for part in PARTS if part in before and part in now and before[part] != now[part]]
