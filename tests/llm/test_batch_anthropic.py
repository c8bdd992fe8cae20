"""``claude_tool`` calls batched through the batch core and Anthropic's Message Batches,
against the scripted Anthropic server over real HTTP: concurrent pipelines' answers go in one
batch and their judge calls in the next, errors and expiry error only their calls with the
API's reason, batched replies are recorded for replay under the live call's key, and a
second run re-attaches to a pending batch through a state file that holds no key."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.batch.collector import BatchCollector
from pytest_karenina.llm.batch.model import BatchingModel
from pytest_karenina.llm.batch.protocol import BatchCallError
from pytest_karenina.llm.batch.registry import batch_parts
from pytest_karenina.llm.batch.state import BatchState
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from pytest_karenina.llm.replay import ReplayingModel, ReplayStore
from tests.support.anthropic_server import AnthropicFault, AnthropicServer

pytest.importorskip("anthropic", reason="claude_tool needs pip install 'pytest-karenina[claude]'")

from pytest_karenina.llm.adapters.claude_tool import ClaudeToolModel

KEY = "sk-ant-batch-secret-4f1d9e"


class Verdict(BaseModel):
    correct: bool


def batching(server: AnthropicServer, collector: BatchCollector) -> BatchingModel:
    config = ModelConfig(
        id="claude", interface="claude_tool", model_name="claude-test",
        anthropic_base_url=server.url, anthropic_api_key=KEY,
    )  # fmt: skip
    parts = batch_parts(config)
    assert parts is not None
    return BatchingModel(ClaudeToolModel(config), parts[1], parts[0], collector, (KEY,))


def answer(question: str) -> ModelRequest:
    return ModelRequest((ChatMessage("user", question),), "answer_generation", question_id=question)


def judge(question: str, reply: str) -> ModelRequest:
    text = f"Judge the answer to {question}: {reply}"
    return ModelRequest(
        (ChatMessage("user", text),), "parsing", json_schema=Verdict.model_json_schema(),
        schema_name="Verdict", question_id=question,
    )  # fmt: skip


def pipelines(model: Any, questions: list[str]) -> dict[str, Any]:
    """One thread per question, as concurrent pipelines: the answer, then its judging."""
    found: dict[str, Any] = {}

    def one(question: str) -> None:
        try:
            reply = model.invoke(answer(question))
            found[question] = (reply.text, model.invoke(judge(question, reply.text)).text)
        except BatchCallError as exc:
            found[question] = exc

    threads = [threading.Thread(target=one, args=(q,)) for q in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return found


def collector(count: int, state: BatchState | None = None, **options: Any) -> BatchCollector:
    return BatchCollector(state, active=lambda: count, poll=0.02, quiet=0.5, **options)


def script(server: AnthropicServer) -> None:
    server.add_rule(lambda body: f"answer to {body['messages'][-1]['content'][0]['text']}",
                    structured=False)  # fmt: skip
    server.add_rule(Verdict(correct=True), structured=True)


QUESTIONS = [f"q{n}" for n in range(12)]


def test_answers_then_judge_calls_go_in_two_batches(anthropic_server: AnthropicServer) -> None:
    script(anthropic_server)
    found = pipelines(batching(anthropic_server, collect := collector(12)), QUESTIONS)

    assert found == {q: (f"answer to {q}", '{"correct": true}') for q in QUESTIONS}
    served = list(anthropic_server.batches.served.values())
    assert [len(batch.requests) for batch in served] == [12, 12]
    first, second = ([r["params"] for r in batch.requests] for batch in served)
    assert all("output_config" not in params for params in first)
    assert all("output_config" in params for params in second)  # the judge's wave
    assert anthropic_server.messages_requests == []  # nothing live
    assert (collect.tally.batches, collect.tally.batched_calls) == (2, 24)
    collect.close()


def test_errors_and_expiry_fail_only_their_calls_with_the_reason(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, "messages.0.content: too many tokens"), contains="q3"
    )
    script(anthropic_server)
    anthropic_server.batches.configure(expire=lambda params: "q5" in json.dumps(params))
    found = pipelines(batching(anthropic_server, collector(12)), QUESTIONS)

    failed = {q: str(found.pop(q)) for q in ("q3", "q5")}
    assert "invalid_request_error: messages.0.content: too many tokens" in failed["q3"]
    assert "expired" in failed["q5"]
    assert KEY not in "".join(failed.values())
    assert all(isinstance(outcome, tuple) for outcome in found.values())  # the other ten


def test_batched_replies_are_recorded_and_replayed_without_a_request(
    anthropic_server: AnthropicServer, tmp_path: Path
) -> None:
    script(anthropic_server)
    store = ReplayStore(tmp_path / "calls.jsonl", "record")
    model = batching(anthropic_server, collector(4))
    recorded = pipelines(ReplayingModel(model, store), QUESTIONS[:4])
    assert store.stats()["added"] == 8 and KEY not in store.path.read_text()
    requests = len(anthropic_server.requests)

    strict = ReplayStore(tmp_path / "calls.jsonl", "strict")
    replayed = pipelines(
        ReplayingModel(None, strict, identity=model.replay_identity), QUESTIONS[:4]
    )

    assert replayed == recorded and strict.stats()["hits"] == 8
    assert len(anthropic_server.requests) == requests  # not one request more
    live = ClaudeToolModel(model.live.config)  # type: ignore[attr-defined]
    # The live adapter's key: a live call finds the batched reply in the store.
    assert ReplayingModel(live, strict).invoke(answer("q0")).text == "answer to q0"


def answers(model: BatchingModel, questions: str) -> dict[str, Any]:
    """Each question's answer call from its own thread: the reply's text or the error."""
    found: dict[str, Any] = {}

    def one(question: str) -> None:
        try:
            found[question] = model.invoke(answer(question)).text
        except BatchCallError as exc:
            found[question] = exc

    threads = [threading.Thread(target=one, args=(q,)) for q in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return found


def test_a_second_run_reattaches_through_a_state_file_without_keys(
    anthropic_server: AnthropicServer, tmp_path: Path
) -> None:
    script(anthropic_server)
    held = threading.Event()  # the batch stays in progress while the first run waits
    anthropic_server.batches.configure(hold=held)
    path = tmp_path / "calls.jsonl.batches.json"
    first = collector(3, BatchState(path, "bench", "f1", "model claude"))
    outcome: list[dict[str, Any]] = []
    model = batching(anthropic_server, first)
    thread = threading.Thread(target=lambda: outcome.append(answers(model, "abc")))
    thread.start()
    while not first.tally.batch_ids:
        thread.join(0.02)
    first.close()  # the run ends while its batch is pending: the state file keeps it
    thread.join(60)
    assert all(isinstance(reply, BatchCallError) for reply in outcome[0].values())
    saved = path.read_text()
    assert KEY not in saved and first.tally.batch_ids[0] in saved

    held.set()
    second = collector(3, BatchState(path, "bench", "f1", "model claude"))
    again = answers(batching(anthropic_server, second), "abc")

    assert again == {q: f"answer to {q}" for q in "abc"}
    assert len(anthropic_server.batches.served) == 1 and second.tally.recovered == 3
    second.close()
    assert not path.exists()


def test_refused_temperature_and_output_config_are_sent_again_as_live_calls_are(
    anthropic_server: AnthropicServer,
) -> None:
    """What the live adapter retries at once goes again in the next wave, and the codec
    remembers: the judge calls go without temperature from the start."""
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, "temperature: deprecated for this model"),
        when=lambda body: "temperature" in body,
    )
    anthropic_server.add_rule(
        AnthropicFault.http_error(400, "output_config.format: not supported by claude-test"),
        when=lambda body: "output_config" in body,
    )
    script(anthropic_server)

    found = pipelines(batching(anthropic_server, collector(4)), QUESTIONS[:4])

    assert found == {q: (f"answer to {q}", '{"correct": true}') for q in QUESTIONS[:4]}
    served = [[r["params"] for r in b.requests] for b in anthropic_server.batches.served.values()]
    assert [len(batch) for batch in served] == [4, 4, 4, 4]
    refused, _answers, forms, judged = served
    assert all("temperature" in p for p in refused)
    assert not any("temperature" in p for batch in served[1:] for p in batch)
    assert all("output_config" in p for p in forms)
    assert all(p["tool_choice"] == {"type": "tool", "name": "reply_as_Verdict"} for p in judged)


def test_other_refusals_are_not_sent_again(anthropic_server: AnthropicServer) -> None:
    anthropic_server.add_rule(AnthropicFault.http_error(400, "prompt is too long"))
    found = pipelines(batching(anthropic_server, collector(2)), QUESTIONS[:2])
    assert all("prompt is too long" in str(error) for error in found.values())
    assert len(anthropic_server.batches.served) == 1
