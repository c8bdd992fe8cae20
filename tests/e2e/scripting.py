"""Scripting whole benchmark runs against the test server, and seeing what reached it.

A :class:`Case` says what the answering model replies to one question and what the
judge extracts from that reply; :func:`script` turns cases into server rules keyed on
message content (so the order in which concurrent workers call does not matter).
:class:`CallLog` sits just above the real langchain-openai adapter (below retries and
replay), so it sees every request that goes over the wire, with its pipeline call kind.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.ports import ModelReply, ModelRequest, RawModel
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.pipeline.llm_stack import LLMStack, default_adapter
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.prompts import AbstentionVerdict, SufficiencyVerdict
from pytest_karenina.prompts.rubric import BooleanTraitReply, ScoreTraitReply, TraitScoresReply
from pytest_karenina.prompts.rubric_literal import LiteralBatchReply, LiteralSingleReply
from pytest_karenina.prompts.rubric_metric import ConfusionReply
from pytest_karenina.prompts.rubric_presence import PresenceReply
from pytest_karenina.results import VerificationResult, VerificationResultSet
from tests.support.openai_server import OpenAIServer, Rule

API_KEY = "sk-e2e-canary-5d1f0c3b9a7e42c8f6"
"""The endpoint key of every e2e model: a canary that must never be written anywhere."""
MODEL_NAME = "test-model"
MODEL_ID = "e2e"
MODEL_LABEL = f"openai_endpoint:{MODEL_NAME} ({MODEL_ID})"
"""How results name the model in ``usage_metadata``."""
RUN_NAME = "e2e-run"
AI_HEADER = "--- AI Message ---\n"

ANSWER_USAGE: Mapping[str, int] = {"prompt_tokens": 12, "completion_tokens": 8}
PARSE_USAGE: Mapping[str, int] = {"prompt_tokens": 150, "completion_tokens": 6}
CHECK_USAGE: Mapping[str, int] = {"prompt_tokens": 90, "completion_tokens": 20}
RUBRIC_USAGE: Mapping[str, int] = {"prompt_tokens": 200, "completion_tokens": 30}

VOLATILE_METADATA = ("timestamp", "execution_time", "result_id")
"""Metadata fields that differ between two runs of the same tasks."""
CHECK_SCHEMAS = frozenset({AbstentionVerdict.__name__, SufficiencyVerdict.__name__})
RUBRIC_SCHEMAS = frozenset(
    model.__name__
    for model in (
        TraitScoresReply, BooleanTraitReply, ScoreTraitReply, LiteralBatchReply,
        LiteralSingleReply, ConfusionReply, PresenceReply,
    )
)  # fmt: skip
"""Reply classes of rubric judge calls (template-kind trait records end in ``Record``)."""


@dataclass(frozen=True)
class Case:
    """One question's script: the answer, the judge's extraction and the expected verdict."""

    question_id: str
    asks: str
    """A substring of the question text (matches the answering call's last message)."""
    answer: str
    parsed: dict[str, Any]
    """What the judge extracts from ``answer`` (also the expected ``parsed_llm_response``)."""
    passes: bool


def endpoint_model(server: OpenAIServer, **overrides: Any) -> dict[str, Any]:
    """An ``openai_endpoint`` model entry pointing at ``server`` (readable after it stopped)."""
    return {
        "id": MODEL_ID,
        "interface": "openai_endpoint",
        "model_name": MODEL_NAME,
        "endpoint_base_url": server.base_url,
        "endpoint_api_key": API_KEY,
        **overrides,
    }


def make_config(server: OpenAIServer, **options: Any) -> VerificationConfig:
    """One model answering and judging through ``server``."""
    model = endpoint_model(server)
    return VerificationConfig(answering_models=[model], parsing_models=[model], **options)


def schema_name(body: Mapping[str, Any]) -> str | None:
    """The name of the JSON schema a structured request asks for (None for plain chat)."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and isinstance(response_format.get("json_schema"), dict):
        name = response_format["json_schema"].get("name")
        return str(name) if name is not None else None
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            return str(tool["function"].get("name"))
    return None


def is_rubric_request(body: Mapping[str, Any]) -> bool:
    name = schema_name(body) or ""
    return name in RUBRIC_SCHEMAS or name.endswith("Record")


def is_parse_request(body: Mapping[str, Any]) -> bool:
    return schema_name(body) not in CHECK_SCHEMAS and not is_rubric_request(body)


def script_rubric(server: OpenAIServer, reply: Any, *, contains: str, schema: str) -> Rule:
    """The judge's reply to the rubric call of class ``schema`` about the answer ``contains``."""
    return server.add_rule(
        reply,
        contains=contains,
        structured=True,
        when=lambda body: schema_name(body) == schema,
        usage=RUBRIC_USAGE,
        name=f"rubric {schema}",
    )


def script(server: OpenAIServer, cases: Sequence[Case]) -> None:
    """An answer rule and a judge (parse) rule per case, with fixed token usage."""
    for case in cases:
        server.add_rule(
            case.answer,
            last_contains=case.asks,
            structured=False,
            usage=ANSWER_USAGE,
            name=f"answer {case.question_id}",
        )
        server.add_rule(
            case.parsed,
            contains=case.answer,
            structured=True,
            when=is_parse_request,
            usage=PARSE_USAGE,
            name=f"parse {case.question_id}",
        )


def script_abstention(server: OpenAIServer, answer: str, *, detected: bool) -> Rule:
    """The judge's abstention verdict on ``answer`` (add it before :func:`script`'s rules)."""
    verdict = AbstentionVerdict(
        reasoning="The response declines to answer." if detected else "It gives an answer.",
        abstention_detected=detected,
    )
    return server.add_rule(
        verdict,
        contains=answer,
        structured=True,
        when=lambda body: schema_name(body) == AbstentionVerdict.__name__,
        usage=CHECK_USAGE,
        name=f"abstention {detected}",
    )


class CallLog:
    """Records every request that reaches the real adapter: ``(question id, call kind)``.

    Use :meth:`adapter` as ``LLMStack(adapter_factory=...)``; thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[tuple[str | None, str]] = []

    def adapter(self, model: ModelConfig) -> RawModel:
        return _LoggedModel(default_adapter(model), self)

    def add(self, request: ModelRequest) -> None:
        with self._lock:
            self._calls.append((request.question_id, request.call_kind))

    def kinds(self, question_id: str | None = None) -> Counter[str]:
        """Requests per call kind, for one question or (None) for all."""
        with self._lock:
            calls = list(self._calls)
        return Counter(kind for qid, kind in calls if question_id is None or qid == question_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)


class _LoggedModel:
    def __init__(self, inner: RawModel, log: CallLog) -> None:
        self.inner = inner
        self.log = log

    @property
    def replay_identity(self) -> dict[str, Any]:
        return self.inner.replay_identity

    def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            prepare()

    def invoke(self, request: ModelRequest) -> ModelReply:
        self.log.add(request)
        return self.inner.invoke(request)


def run(
    benchmark: Benchmark,
    config: VerificationConfig,
    log: CallLog,
    *,
    question_ids: Sequence[str] | None = None,
    replay: ReplayStore | None = None,
) -> VerificationResultSet:
    """``run_verification`` with the call log (and a replay store) wired in."""
    factory = LLMStack(config, replay=replay, adapter_factory=log.adapter)
    return run_verification(benchmark, config, question_ids, RUN_NAME, llm=factory)


def comparable(result: VerificationResult) -> dict[str, Any]:
    """``model_dump(mode="json")`` without the fields that differ between two runs."""
    dump = result.model_dump(mode="json")
    for key in VOLATILE_METADATA:
        dump["metadata"].pop(key)
    return dump


def usage_entry(usage: Mapping[str, int], *, model: str | None = MODEL_LABEL) -> dict[str, Any]:
    """A ``usage_metadata`` entry for server-side token counts."""
    entry: dict[str, Any] = {
        "input_tokens": usage["prompt_tokens"],
        "output_tokens": usage["completion_tokens"],
        "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
    }
    if model is not None:
        entry["model"] = model
    return entry


def expected_usage(**stages: Mapping[str, int]) -> dict[str, Any]:
    """The ``usage_metadata`` of a result whose stages used these server-side counts."""
    total = {
        "prompt_tokens": sum(u["prompt_tokens"] for u in stages.values()),
        "completion_tokens": sum(u["completion_tokens"] for u in stages.values()),
    }
    return {
        **{stage: usage_entry(usage) for stage, usage in stages.items()},
        "total": usage_entry(total, model=None),
    }
