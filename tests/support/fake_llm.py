"""A scripted fake model for pipeline tests, and helpers to run one question with it.

:class:`FakeLLM` is a :class:`~pytest_karenina.llm.ports.RawModel`: it answers each
:class:`~pytest_karenina.llm.ports.ModelRequest` from a list of :class:`Rule` s chosen by
``call_kind`` and/or by substrings of the request's messages (never by prompt wording),
can raise an exception or return malformed text for a given call, and records every
request it received so tests can assert which calls were (not) made.

A request that no rule matches is recorded in :attr:`FakeLLM.unscripted` and answered with
:class:`UnscriptedCall`; the pipeline contains such exceptions, so tests should assert
``fake.unscripted == []`` (or use :meth:`FakeLLM.assert_all_scripted`).

The fake sits under the real LLM stack (retries, structured output, replay), so an
exception it raises is classified like a provider error: one that looks transient
(``ConnectionError``, ``TimeoutError``, a message mentioning a timeout or rate limit) is
retried with real back-off waits. Tests use permanent-looking errors (``RuntimeError``).

Typical use::

    fake = FakeLLM()
    fake.on("answer_generation", reply="The capital is Paris.")
    fake.on("parsing", reply='{"capital": "Paris"}')  # or fake.answer(...).parse_as({...})
    result = run_one(question(template_code), fake_config(), fake)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_karenina.checkpoint import Question
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.ports import ModelReply, ModelRequest, Usage
from pytest_karenina.pipeline.context import VerificationContext
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.orchestrator import StageOrchestrator
from pytest_karenina.pipeline.run import Task, run_question
from pytest_karenina.results import VerificationResult

CALL_KINDS = (
    "answer_generation",
    "abstention_check",
    "sufficiency_check",
    "parsing",
    "embedding_check",
    "rubric_evaluation",
    "rubric_presence_check",
    "deep_judgment_excerpts",
    "deep_judgment_reasoning",
    "deep_judgment_hallucination",
    "rubric_agentic_trait_extraction",
)
"""The ``call_kind`` values the built-in stages use."""

FakeInterface = Literal["manual", "openai_endpoint"]
Reply = str | BaseException | Callable[[ModelRequest], str]
"""A rule's reply: the text, an exception to raise, or a function of the request."""

DEFAULT_USAGE = Usage(input_tokens=11, output_tokens=7)
"""Token counts reported for every scripted reply."""

MALFORMED = "Sorry, I cannot produce JSON for that <<not json>>"
"""A reply text that is not JSON and contains no JSON object."""


class UnscriptedCall(Exception):
    """The fake got a request no rule matches (the message names its call kind)."""


def request_text(request: ModelRequest) -> str:
    """All message contents of ``request`` joined by newlines (for substring checks)."""
    return "\n".join(message.content for message in request.messages)


@dataclass
class Rule:
    """Answers requests whose ``call_kind`` is ``call_kind`` (None: any) and whose messages
    contain every string in ``contains``; ``times`` limits how often it matches (None: always).
    """

    reply: Reply
    call_kind: str | None = None
    contains: tuple[str, ...] = ()
    times: int | None = None
    used: int = 0

    def matches(self, request: ModelRequest) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if self.call_kind is not None and request.call_kind != self.call_kind:
            return False
        text = request_text(request)
        return all(fragment in text for fragment in self.contains)


class FakeLLM:
    """A scripted, thread-safe :class:`~pytest_karenina.llm.ports.RawModel`.

    Rules are tried in the order they were added; the first that matches answers. Every
    request is appended to :attr:`requests` before it is answered (also when it raises).
    """

    def __init__(self, name: str = "fake-model", usage: Usage = DEFAULT_USAGE) -> None:
        self.name = name
        self.usage = usage
        self.rules: list[Rule] = []
        self.requests: list[ModelRequest] = []
        self.models: list[ModelConfig | None] = []
        self.unscripted: list[ModelRequest] = []
        self._lock = threading.Lock()

    # --- scripting -------------------------------------------------------------------
    def on(
        self,
        call_kind: str | None = None,
        *,
        reply: Reply,
        contains: str | Sequence[str] = (),
        times: int | None = None,
    ) -> FakeLLM:
        """Add a rule; returns ``self`` so calls can be chained."""
        if call_kind is not None and call_kind not in CALL_KINDS:
            raise ValueError(f"unknown call kind {call_kind!r}; known: {CALL_KINDS}")
        fragments = (contains,) if isinstance(contains, str) else tuple(contains)
        self.rules.append(Rule(reply, call_kind, fragments, times))
        return self

    def on_json(
        self,
        call_kind: str,
        value: dict[str, Any],
        *,
        contains: str | Sequence[str] = (),
        times: int | None = None,
    ) -> FakeLLM:
        """Add a rule replying with ``value`` as a JSON object."""
        return self.on(call_kind, reply=json.dumps(value), contains=contains, times=times)

    def answer(self, text: str, *, contains: str | Sequence[str] = ()) -> FakeLLM:
        """The answering model replies ``text``."""
        return self.on("answer_generation", reply=text, contains=contains)

    def parse_as(self, fields: dict[str, Any], *, contains: str | Sequence[str] = ()) -> FakeLLM:
        """The judge fills the template with ``fields``."""
        return self.on_json("parsing", fields, contains=contains)

    def abstention(self, detected: bool, reasoning: str = "judge reasoning") -> FakeLLM:
        """The abstention judge's verdict."""
        verdict = {"reasoning": reasoning, "abstention_detected": detected}
        return self.on_json("abstention_check", verdict)

    def sufficiency(self, sufficient: bool, reasoning: str = "judge reasoning") -> FakeLLM:
        """The sufficiency judge's verdict (True: the answer is sufficient)."""
        return self.on_json("sufficiency_check", {"reasoning": reasoning, "sufficient": sufficient})

    def fail(self, call_kind: str, error: BaseException) -> FakeLLM:
        """Calls of ``call_kind`` raise ``error``."""
        return self.on(call_kind, reply=error)

    def malformed(self, call_kind: str, text: str = MALFORMED, times: int | None = None) -> FakeLLM:
        """Calls of ``call_kind`` get ``text``, which is not valid JSON."""
        return self.on(call_kind, reply=text, times=times)

    # --- RawModel --------------------------------------------------------------------
    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "fake", "model": self.name}

    def invoke(self, request: ModelRequest) -> ModelReply:
        return self.invoke_as(None, request)

    def for_model(self, model: ModelConfig) -> BoundFake:
        """A view of this fake that records ``model`` with each request it forwards."""
        return BoundFake(self, model)

    def invoke_as(self, model: ModelConfig | None, request: ModelRequest) -> ModelReply:
        """Answer ``request``, recording that ``model`` (None: unknown) was asked."""
        with self._lock:
            self.requests.append(request)
            self.models.append(model)
            rule = next((r for r in self.rules if r.matches(request)), None)
            if rule is None:
                self.unscripted.append(request)
            else:
                rule.used += 1
        if rule is None:
            raise UnscriptedCall(f"no rule for a {request.call_kind!r} request")
        reply = rule.reply
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else reply(request)
        return ModelReply(text, usage=self.usage, model=self.name)

    # --- inspection ------------------------------------------------------------------
    def kinds(self) -> list[str]:
        """The ``call_kind`` of every request, in order."""
        with self._lock:
            return [request.call_kind for request in self.requests]

    def calls(self, call_kind: str) -> list[ModelRequest]:
        """The requests of one ``call_kind``, in order."""
        with self._lock:
            return [request for request in self.requests if request.call_kind == call_kind]

    def models_for(self, call_kind: str) -> list[ModelConfig | None]:
        """The model config behind each request of ``call_kind`` (see :meth:`for_model`)."""
        with self._lock:
            pairs = list(zip(self.requests, self.models, strict=True))
        return [model for request, model in pairs if request.call_kind == call_kind]

    def count(self, call_kind: str) -> int:
        return len(self.calls(call_kind))

    def all_text(self) -> str:
        """Every message of every request, joined (to check what no model ever saw)."""
        with self._lock:
            return "\n".join(request_text(request) for request in self.requests)

    def assert_all_scripted(self) -> None:
        assert not self.unscripted, f"unscripted calls: {[r.call_kind for r in self.unscripted]}"


class BoundFake:
    """A :class:`FakeLLM` seen through one model config (what the adapter factory builds)."""

    def __init__(self, fake: FakeLLM, model: ModelConfig) -> None:
        self.fake = fake
        self.model = model

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {**self.fake.replay_identity, "config": self.model.id}

    def invoke(self, request: ModelRequest) -> ModelReply:
        return self.fake.invoke_as(self.model, request)


# --- configuration -----------------------------------------------------------------------


def answering_model(interface: FakeInterface = "openai_endpoint", **fields: Any) -> ModelConfig:
    """An answering model for ``interface`` (``manual`` needs no name, id or URL)."""
    if interface == "manual":
        return ModelConfig(interface="manual", **fields)
    base: dict[str, Any] = {
        "id": "answerer",
        "model_name": "answer-model",
        "interface": "openai_endpoint",
        "endpoint_base_url": "http://127.0.0.1:9/v1",
    }
    return ModelConfig(**{**base, **fields})


def judge_model(**fields: Any) -> ModelConfig:
    """A parsing (judge) model on an OpenAI-compatible endpoint (native structured output)."""
    base: dict[str, Any] = {
        "id": "judge",
        "model_name": "judge-model",
        "interface": "openai_endpoint",
        "endpoint_base_url": "http://127.0.0.1:9/v1",
    }
    return ModelConfig(**{**base, **fields})


def fake_config(
    interface: FakeInterface = "openai_endpoint",
    *,
    judges: Sequence[ModelConfig] | None = None,
    **fields: Any,
) -> VerificationConfig:
    """A ``VerificationConfig`` with one answering model of ``interface`` and the judges.

    The settings the environment could change (embedding check, concurrency) are given
    explicitly so tests do not depend on ``EMBEDDING_CHECK`` or ``KARENINA_*`` variables.
    """
    base: dict[str, Any] = {
        "answering_models": [answering_model(interface)],
        "parsing_models": list(judges) if judges is not None else [judge_model()],
        "embedding_check_enabled": False,
        "embedding_check_model": "all-MiniLM-L6-v2",
        "embedding_check_threshold": 0.85,
        "async_enabled": False,
        "async_max_workers": 1,
        "max_concurrent_requests": None,
    }
    return VerificationConfig(**{**base, **fields})


def fake_factory(config: VerificationConfig, fake: FakeLLM) -> LLMStack:
    """An ``LLMStack`` whose every model (answering and judge) is ``fake``; requests are
    recorded with the model config they were sent to (:meth:`FakeLLM.models_for`)."""
    return LLMStack(config, adapter_factory=fake.for_model)


def question(
    template_code: str,
    *,
    text: str = "What is the capital of France?",
    raw_answer: str = "Paris",
    question_id: str = "",
    keywords: Sequence[str] = (),
    finished: bool = True,
) -> Question:
    """A question with the given template (the id is derived from the text unless given)."""
    return Question(
        id=question_id,
        text=text,
        raw_answer=raw_answer,
        template_code=template_code,
        keywords=list(keywords),
        finished=finished,
    )


def run_one(
    item: Question,
    config: VerificationConfig,
    fake: FakeLLM | LLMStack,
    *,
    replicate: int | None = None,
    orchestrator: StageOrchestrator | None = None,
    cached_answer: dict[str, Any] | None = None,
    prepare: Callable[[VerificationContext], None] | None = None,
) -> VerificationResult:
    """Run ``item`` with the config's first answering and parsing models (stamped, as a
    benchmark run does) and return its result."""
    factory = fake if isinstance(fake, LLMStack) else fake_factory(config, fake)
    answering, parsing = (models[0] for models in config.stamped_models())
    result, _ = run_question(
        Task(item, answering, parsing, replicate),
        config,
        factory,
        orchestrator=orchestrator,
        cached_answer=cached_answer,
        prepare=prepare,
    )
    return result
