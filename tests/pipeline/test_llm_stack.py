"""The run's LLM stack: each model's raw stack is built once, ports per question are cheap,
and the judge checks run at temperature 0."""

from __future__ import annotations

from typing import Any

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import StampedModels
from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest, RawModel
from pytest_karenina.pipeline.llm_stack import LLMStack
from pytest_karenina.pipeline.run import expand_tasks
from tests.support.fake_llm import fake_config, question


class CountingAdapters:
    """An adapter factory that records the model configs it was asked for."""

    def __init__(self) -> None:
        self.built: list[ModelConfig] = []

    def __call__(self, model: ModelConfig) -> RawModel:
        self.built.append(model)
        return _Echo(model)


class _Echo:
    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self.replay_identity: dict[str, Any] = {"model": model.model_name}

    def invoke(self, request: ModelRequest) -> ModelReply:
        return ModelReply(f"{self.model.temperature}:{request.question_id}")


def test_ports_of_the_stacks_own_models_are_built_once() -> None:
    adapters = CountingAdapters()
    stack = LLMStack(fake_config(), adapter_factory=adapters)
    answering, parsing = stack.answering_models[0], stack.parsing_models[0]
    first = stack.pair(answering, parsing)
    for _ in range(50):
        assert stack.pair(answering, parsing) is first
    # The answering model, the judge, and the judge at temperature 0 for the checks: one
    # raw stack per distinct model.
    at_zero = parsing.model_copy(update={"temperature": 0.0})
    distinct = {m.model_dump_json() for m in (answering, parsing, at_zero)}
    assert {m.model_dump_json() for m in adapters.built} == distinct
    assert len(adapters.built) == len(distinct)


def test_tasks_of_run_verification_use_the_stacks_models() -> None:
    config = fake_config()
    stack = LLMStack(config, adapter_factory=CountingAdapters())
    models = StampedModels(stack.answering_models, stack.parsing_models)
    tasks = expand_tasks([question("class Answer(BaseAnswer):\n    pass\n")], config, models=models)
    assert tasks[0].answering is stack.answering_models[0]
    assert tasks[0].parsing is stack.parsing_models[0]


def test_an_equal_hand_built_model_shares_the_raw_stack() -> None:
    adapters = CountingAdapters()
    config = fake_config()
    stack = LLMStack(config, adapter_factory=adapters)
    own = stack.pair(stack.answering_models[0], stack.parsing_models[0])
    built = len(adapters.built)
    answering, parsing = (models[0] for models in config.stamped_models())  # fresh copies
    foreign = stack.pair(answering, parsing)
    assert foreign.judge.raw is own.judge.raw
    assert foreign.answering.raw is own.answering.raw
    assert len(adapters.built) == built  # nothing new was built


def test_per_question_ports_name_the_question_and_checks_run_at_temperature_zero() -> None:
    stack = LLMStack(fake_config(), adapter_factory=CountingAdapters())
    ports = stack.pair(stack.answering_models[0], stack.parsing_models[0]).for_question("q7")
    message = [ChatMessage("user", "hi")]
    assert ports.judge_checks.chat(message, call_kind="abstention_check").text == "0.0:q7"
    assert ports.answering.chat(message, call_kind="answer").text.endswith(":q7")


class _Preparing(_Echo):
    def __init__(self, model: ModelConfig, prepared: list[str], fail: bool) -> None:
        super().__init__(model)
        self.prepared, self.fail = prepared, fail

    def prepare(self) -> None:
        if self.fail:
            raise ImportError("no provider package")
        self.prepared.append(str(self.model.id))


def test_prepare_builds_every_pair_and_its_clients_in_the_calling_thread() -> None:
    prepared: list[str] = []
    failing = {"judge"}

    def adapters(model: ModelConfig) -> RawModel:
        return _Preparing(model, prepared, fail=model.id in failing)

    config = fake_config()
    stack = LLMStack(config, adapter_factory=adapters)
    stack.prepare()  # a client that cannot be built is left for its calls to report

    answering, parsing = stack.answering_models[0], stack.parsing_models[0]
    assert stack.pair(answering, parsing) is stack.pair(answering, parsing)
    assert sorted(prepared) == sorted(
        model.id for model in (answering, parsing) if model.id not in failing
    )


def test_models_that_differ_only_in_a_secret_get_their_own_stacks() -> None:
    adapters = CountingAdapters()
    stack = LLMStack(fake_config(), adapter_factory=adapters)
    base = stack.answering_models[0]
    first = base.model_copy(update={"extra_kwargs": {"default_headers": {"api-key": "one"}}})
    second = base.model_copy(update={"extra_kwargs": {"default_headers": {"api-key": "two"}}})

    stack.pair(first, stack.parsing_models[0])
    stack.pair(second, stack.parsing_models[0])

    keys = [m.extra_kwargs for m in adapters.built if m.extra_kwargs]
    assert keys == [
        {"default_headers": {"api-key": "one"}},
        {"default_headers": {"api-key": "two"}},
    ]
