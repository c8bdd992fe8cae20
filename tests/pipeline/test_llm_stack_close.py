"""The run's LLM stack closes every agent at the end, whatever one of them does."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentResult, AgentRunConfig
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.pipeline.llm_stack import LLMStack
from tests.support.fake_llm import answering_model, fake_config


class ClosingAgent:
    """An agent port that only records its close (or fails it)."""

    def __init__(self, model: ModelConfig, closed: list[str]) -> None:
        self.model = model
        self.closed = closed

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        raise AssertionError("not run in this test")

    def close(self) -> None:
        if self.model.id == "first":
            raise RuntimeError("the loop is gone")
        self.closed.append(self.model.id)


def test_a_failing_close_is_a_warning_and_the_other_agents_are_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    closed: list[str] = []
    agents = [
        answering_model("openai_endpoint").model_copy(
            update={"id": name, "mcp_urls_dict": {"facts": f"http://127.0.0.1:9/{name}"}}
        )
        for name in ("first", "second")
    ]
    stack = LLMStack(fake_config(answering_models=agents),
                     agent_factory=lambda model: ClosingAgent(model, closed))  # fmt: skip
    stack.prepare()

    with caplog.at_level("WARNING", logger="pytest_karenina.pipeline.llm_stack"):
        stack.close()

    assert closed == ["second"]
    assert [r.getMessage() for r in caplog.records] == [
        "closing an agent failed: RuntimeError: the loop is gone"
    ]
