"""Agent runs are scrubbed of secrets as plain replies are (issue 24, item 1): in a live run
(LangChain's agent runtime over real HTTP, the real MCP test server) the transport middleware
scrubs each model reply before a tool sees it and each tool result before the model and the
trace do; at the port, results, errors and partial traces are scrubbed whatever produced
them (a replay entry recorded before, a custom agent); log records are scrubbed too."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.agent_ports import AgentError, AgentResult, AgentRunConfig
from pytest_karenina.llm.agents.replay import ReplayingAgent
from pytest_karenina.llm.agents.scrub import ScrubbingAgent
from pytest_karenina.llm.agents.tool_loop import ToolLoopAgent
from pytest_karenina.llm.agents.transport_middleware import TransportMiddleware
from pytest_karenina.llm.ports import ChatMessage, Usage
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.llm.secret_logs import scrub_logs
from pytest_karenina.pipeline.agent_stack import build_agent
from tests.support.agents_extra import needs_agents_extra
from tests.support.openai_server import OpenAIServer

if TYPE_CHECKING:
    from tests.support.mcp_server import MCPServer

pytestmark = needs_agents_extra

KEY = "agentkey-canary-51d0e8a2c7"
QUESTION = [ChatMessage("user", "Capital of France?")]
RUN = AgentRunConfig("answer_generation", question_id="q1")


def model(server: OpenAIServer, mcp_url: str) -> ModelConfig:
    return ModelConfig(
        id="agent", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=server.base_url, endpoint_api_key=KEY, mcp_urls_dict={"facts": mcp_url},
    )  # fmt: skip


@pytest.fixture
def live_agent(openai_server: OpenAIServer, mcp_server: MCPServer) -> Iterator[ToolLoopAgent]:
    agent = ToolLoopAgent(
        model(openai_server, mcp_server.url),
        transport=TransportMiddleware(key="k", secrets=(KEY,)),
    )
    yield agent
    agent.close()


def test_a_live_run_scrubs_replies_tool_arguments_and_tool_results(
    openai_server: OpenAIServer, mcp_server: MCPServer, live_agent: ToolLoopAgent
) -> None:
    (mcp_server.notes_dir / "key.txt").write_text(f"the key is {KEY}", encoding="utf-8")
    openai_server.add_rule({"name": "key.txt"}, tool="read_note", role="tool",
                           last_contains="no capital known")  # fmt: skip
    openai_server.add_rule(f"Paris. My key: {KEY}", role="tool")
    openai_server.add_rule({"country": f"France {KEY}"}, tool="lookup_capital")

    result = live_agent.run(QUESTION, RUN)

    assert mcp_server.tool_calls("lookup_capital") == [{"country": "France ***"}]
    assert result.final_response == "Paris. My key: ***"
    assert KEY not in json.dumps(result.to_json())
    call, failed, _, note, _ = result.trace_messages
    assert call["tool_calls"][0]["input"] == {"country": "France ***"}
    assert "France ***" in failed["content"]
    assert note["content"] == "the key is ***"
    # The model never read its key back either: what it was sent is scrubbed.
    assert all(KEY not in request.text for request in openai_server.chat_requests)


class Leaky:
    """A custom agent that repeats the key everywhere, then fails with it."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def run(self, messages: Sequence[ChatMessage], config: AgentRunConfig) -> AgentResult:
        trace = [{"role": "assistant", "content": f"k={KEY}", "block_index": 0,
                  "tool_calls": [{"id": "1", "name": "t", "input": {"q": KEY}}]}]  # fmt: skip
        result = AgentResult(f"answer {KEY}", trace, Usage(1, 1), turns=1)
        if self.fail:
            raise AgentError(config.call_kind, f"tool said {KEY}", partial=result)
        return result


def test_a_replayed_run_recorded_with_a_secret_comes_back_scrubbed(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    identity = {"adapter": "custom", "model": "m"}
    ReplayingAgent(Leaky(), ReplayStore(path, "record"), identity).run(QUESTION, RUN)
    assert KEY in path.read_text(encoding="utf-8")  # an entry written before the fix
    replaying = ScrubbingAgent(ReplayingAgent(None, ReplayStore(path, "strict"), identity), [KEY])

    result = replaying.run(QUESTION, RUN)

    assert result.final_response == "answer ***"
    assert result.trace_messages[0]["content"] == "k=***"
    assert result.trace_messages[0]["tool_calls"][0]["input"] == {"q": "***"}


def test_an_agent_error_and_its_partial_trace_are_scrubbed(tmp_path: Path) -> None:
    agent = build_agent(
        ModelConfig(id="m", model_name="m"), lambda: Leaky(fail=True),
        ReplayStore(tmp_path / "store.jsonl", "record"), [KEY],
    )  # fmt: skip

    with pytest.raises(AgentError) as caught:
        agent.run(QUESTION, RUN)

    error = caught.value
    assert error.reason == "tool said ***" and KEY not in str(error)
    assert error.partial is not None and error.partial.final_response == "answer ***"
    assert KEY not in json.dumps(error.partial.to_json())
    assert not (tmp_path / "store.jsonl").exists()  # a failed run is not recorded


def test_log_records_are_scrubbed_of_configured_secrets(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:9/mcp?token={KEY}"
    scrub_logs([KEY])
    logger = logging.getLogger("httpx")

    with caplog.at_level(logging.INFO, logger="httpx"):
        logger.info("HTTP Request: POST %s %r", url, "HTTP/1.1 200 OK")
        try:
            raise ConnectionError(f"cannot reach {url}")
        except ConnectionError:
            logger.exception("failed")

    text = caplog.text
    assert KEY not in text
    assert "HTTP Request: POST http://127.0.0.1:9/mcp?token=*** " in text
    assert "ConnectionError: cannot reach http://127.0.0.1:9/mcp?token=***" in text
