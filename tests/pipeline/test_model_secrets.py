"""Every configured secret value is a scrub target (issue 24, item 3): ``model_secrets`` lists
API keys, URL credentials (base URLs and MCP servers), secret-named ``extra_kwargs`` and header
values; a plain reply echoing a header value or ``extra_kwargs.api_key`` over real HTTP comes
back scrubbed and is recorded scrubbed."""

from __future__ import annotations

from pathlib import Path

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.pipeline.llm_stack import LLMStack, model_secrets, run_secrets
from tests.support.openai_server import OpenAIServer

HEADER = "hdr-canary-3c9e7a1f52"
EXTRA_KEY = "xkey-canary-7d10b4e8a6"
KEY = "key-canary-0f5a2d6c9b"
TOKEN = "tok-canary-64b1e0c7d3"
PASSWORD = "pw-canary-a93f0e"


def test_model_secrets_lists_every_configured_secret() -> None:
    model = ModelConfig(
        id="m", model_name="m", interface="openai_endpoint", endpoint_api_key=KEY,
        endpoint_base_url=f"http://evals:{PASSWORD}@llm.example/v1",
        mcp_urls_dict={"facts": f"http://127.0.0.1:9/mcp?token={TOKEN}"},
        extra_kwargs={"api_key": EXTRA_KEY,
                      "default_headers": {"X-Custom-Auth": HEADER, "Accept": "text/plain"}},
    )  # fmt: skip

    found = model_secrets(model)

    for value in (KEY, PASSWORD, f"evals:{PASSWORD}", TOKEN, EXTRA_KEY, HEADER):
        assert value in found
    assert "text/plain" not in found and "evals" not in found


def test_the_run_scrubs_the_secrets_of_every_model() -> None:
    one = ModelConfig(id="a", model_name="a", interface="openai_endpoint",
                      endpoint_base_url="http://h/v1", endpoint_api_key=KEY)  # fmt: skip
    two = ModelConfig(id="b", model_name="b", model_provider="openai",
                      extra_kwargs={"api_key": EXTRA_KEY})  # fmt: skip

    config = VerificationConfig(answering_models=[one], parsing_models=[two])

    assert {KEY, EXTRA_KEY} <= set(run_secrets(config))


def test_a_plain_reply_echoing_a_header_value_or_an_extra_key_is_scrubbed(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.add_rule(f"echo {HEADER} {EXTRA_KEY} done")
    headers = {"default_headers": {"X-Custom-Auth": HEADER}}
    endpoint = ModelConfig(id="endpoint", model_name="endpoint-model",
                           interface="openai_endpoint", endpoint_base_url=openai_server.base_url,
                           endpoint_api_key=KEY, extra_kwargs=headers)  # fmt: skip
    langchain = ModelConfig(
        id="langchain", model_name="langchain-model", model_provider="openai",
        extra_kwargs={"base_url": openai_server.base_url, "api_key": EXTRA_KEY, **headers},
    )  # fmt: skip
    config = VerificationConfig(answering_models=[endpoint], parsing_models=[langchain])
    path = tmp_path / "store.jsonl"
    stack = LLMStack(config, replay=ReplayStore(path, "record"))
    pair = stack.pair(stack.answering_models[0], stack.parsing_models[0])
    question = [ChatMessage("user", "Say your secrets.")]

    answered = pair.answering.chat(question, call_kind="answer_generation")
    judged = pair.judge.chat(question, call_kind="parsing")

    assert answered.text == judged.text == "echo *** *** done"
    # The header was configured and sent: its value is what a provider could echo.
    sent = [r.headers.get("x-custom-auth") for r in openai_server.chat_requests]
    assert sent == [HEADER, HEADER]
    stored = path.read_text(encoding="utf-8")
    assert stored.count("echo *** *** done") == 2
    assert HEADER not in stored and EXTRA_KEY not in stored and KEY not in stored
