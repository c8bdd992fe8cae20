"""The batch core against the scripted OpenAI Batch API server over real HTTP: waves of
concurrent calls in one batch, splitting, partial errors, expiry, cancellation, a server
restart mid-wait, and the state file (re-attach, refusal, no keys)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel
from pytest_karenina.llm.batch.collector import BatchCollector
from pytest_karenina.llm.batch.model import BatchingModel
from pytest_karenina.llm.batch.openai_batch import OpenAIBatchProvider
from pytest_karenina.llm.batch.protocol import BatchCallError
from pytest_karenina.llm.batch.registry import batch_parts
from pytest_karenina.llm.batch.state import BatchState, BatchStateMismatch
from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest
from tests.support.batch_server import BatchServer
from tests.support.openai_server import OpenAIServer

KEY = "sk-batch-secret-0123456789"


@pytest.fixture
def batch_server(openai_server: OpenAIServer) -> Iterator[BatchServer]:
    openai_server.add_rule(lambda body: f"echo {body['messages'][-1]['content']}")
    with BatchServer(openai_server) as server:
        yield server
    assert not server.errors


def model(server: BatchServer, collector: BatchCollector) -> BatchingModel:
    config = ModelConfig(
        id="m", model_name="test-model", interface="openai_endpoint",
        endpoint_base_url=server.base_url, endpoint_api_key=KEY, temperature=0.0,
    )  # fmt: skip
    parts = batch_parts(config)
    assert parts is not None
    return BatchingModel(OpenAIEndpointModel(config), parts[1], parts[0], collector, (KEY,))


def ask(text: str, kind: str = "answer_generation") -> ModelRequest:
    return ModelRequest((ChatMessage("user", text),), kind, question_id=text)


def call_all(batching: BatchingModel, texts: list[str]) -> dict[str, ModelReply | Exception]:
    """Every call from its own thread at once, as concurrent pipelines make them."""
    found: dict[str, ModelReply | Exception] = {}

    def one(text: str) -> None:
        try:
            found[text] = batching.invoke(ask(text))
        except Exception as exc:
            found[text] = exc

    threads = [threading.Thread(target=one, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return found


def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (bounded, so a broken collector fails instead of hanging)."""
    for _ in range(6000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("the condition never held")


def collector(count: int, state: BatchState | None = None, **options: Any) -> BatchCollector:
    return BatchCollector(state, active=lambda: count, poll=0.02, quiet=0.5, **options)


def test_a_wave_goes_once_every_pipeline_waits_not_after_the_quiet_period(
    batch_server: BatchServer,
) -> None:
    # The quiet period is for pipelines busy elsewhere; when all of them wait on the
    # collector the wave goes after a short settle, long before 60 s without a call.
    texts = [f"q{n}" for n in range(4)]
    collect = BatchCollector(None, active=lambda: len(texts), poll=0.02, quiet=600.0)
    found: dict[str, ModelReply | Exception] = {}
    calls = threading.Thread(target=lambda: found.update(call_all(model(batch_server, collect),
                                                                  texts)), daemon=True)  # fmt: skip
    calls.start()
    calls.join(120)  # the settle is 0.2 s; the quiet period 600 s
    assert not calls.is_alive(), "the wave waited for the quiet period"
    assert {text: getattr(reply, "text", reply) for text, reply in found.items()} == {
        text: f"echo {text}" for text in texts
    }
    assert [len(lines) for lines in batch_server.submitted] == [4]


def test_concurrent_calls_go_in_one_batch(batch_server: BatchServer) -> None:
    texts = [f"q{n}" for n in range(30)]
    found = call_all(model(batch_server, collect := collector(30)), texts)
    assert {text: getattr(reply, "text", reply) for text, reply in found.items()} == {
        text: f"echo {text}" for text in texts
    }
    assert [len(lines) for lines in batch_server.submitted] == [30]
    assert collect.tally.batches == 1 and collect.tally.batched_calls == 30
    line = batch_server.submitted[0][0]
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert line["body"]["model"] == "test-model" and line["body"]["temperature"] == 0.0


def test_a_batch_over_the_limits_is_split(
    batch_server: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OpenAIBatchProvider, "max_requests", 7)
    found = call_all(model(batch_server, collector(20)), [f"q{n}" for n in range(20)])
    assert all(isinstance(reply, ModelReply) for reply in found.values())
    assert sorted(len(lines) for lines in batch_server.submitted) == [6, 7, 7]


def test_failed_requests_error_only_their_items(batch_server: BatchServer) -> None:
    batch_server.fail = lambda body: "boom" if body["messages"][-1]["content"] == "q1" else None
    found = call_all(model(batch_server, collector(10)), [f"q{n}" for n in range(10)])
    assert "batch_" in str(found["q1"]) and "server_error: boom" in str(found.pop("q1"))
    assert {reply.text for reply in found.values()} == {f"echo q{n}" for n in range(10) if n != 1}


def test_expired_requests_error_only_their_items(batch_server: BatchServer) -> None:
    batch_server.expire_after = 8
    found = call_all(model(batch_server, collector(10)), [f"q{n}" for n in range(10)])
    errors = [str(reply) for reply in found.values() if isinstance(reply, Exception)]
    # The last two requests of the batch file expired (whichever threads came last).
    assert len(errors) == 2 and all("batch_expired" in reason for reason in errors)
    assert sum(isinstance(reply, ModelReply) for reply in found.values()) == 8


def test_a_cancelled_batch_errors_its_calls_with_the_reason(batch_server: BatchServer) -> None:
    batch_server.hold()
    batching = model(batch_server, collect := collector(3))
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(call_all(batching, ["a", "b", "c"])))
    thread.start()
    until(lambda: bool(collect.tally.batch_ids))
    batching.provider.cancel(collect.tally.batch_ids[0])
    batch_server.release()
    thread.join(60)
    assert all("batch_cancelled" in str(reply) for reply in outcome[0].values())


def test_polling_survives_a_server_restart_mid_wait(batch_server: BatchServer) -> None:
    batch_server.hold()
    batching = model(batch_server, collect := collector(4))
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(call_all(batching, list("abcd"))))
    thread.start()
    until(lambda: bool(collect.tally.batch_ids))
    batch_server.restart(down=0.3)
    batch_server.release()
    thread.join(60)
    assert {reply.text for reply in outcome[0].values()} == {f"echo {c}" for c in "abcd"}
    assert len(batch_server.submitted) == 1


def state(tmp_path: Path, benchmark: str = "bench", fingerprint: str = "f1") -> BatchState:
    return BatchState(tmp_path / "store.jsonl.batches.json", benchmark, fingerprint, "model m")


def test_a_second_run_reattaches_instead_of_submitting(
    batch_server: BatchServer, tmp_path: Path
) -> None:
    batch_server.hold()
    first = collector(5, state(tmp_path))
    outcome: list[Any] = []
    batching = model(batch_server, first)
    texts = [f"q{n}" for n in range(5)]
    thread = threading.Thread(target=lambda: outcome.append(call_all(batching, texts)))
    thread.start()
    until(lambda: bool(first.tally.batch_ids))
    first.close()  # the run ends with its batch pending: the state file keeps it
    thread.join(60)
    assert all(isinstance(reply, BatchCallError) for reply in outcome[0].values())
    saved = json.loads((tmp_path / "store.jsonl.batches.json").read_text())
    assert KEY not in json.dumps(saved) and len(saved["batches"]) == 1
    for entry in saved["batches"].values():  # a lane named otherwise now (another key's "#2")
        entry["lane"] = f"{entry['lane']}#2"
    (tmp_path / "store.jsonl.batches.json").write_text(json.dumps(saved))
    batch_server.release()
    second = collector(5, state(tmp_path))
    again = call_all(model(batch_server, second), [f"q{n}" for n in range(5)])
    assert {reply.text for reply in again.values()} == {f"echo q{n}" for n in range(5)}
    assert len(batch_server.submitted) == 1 and second.tally.recovered == 5
    second.close()
    assert not (tmp_path / "store.jsonl.batches.json").exists()


def test_a_state_file_of_other_settings_is_refused_by_name(
    batch_server: BatchServer, tmp_path: Path
) -> None:
    batch_server.hold()
    first = collector(1, state(tmp_path))
    thread = threading.Thread(target=call_all, args=(model(batch_server, first), ["q"]))
    thread.start()
    until(lambda: bool(first.tally.batch_ids))
    first.close()  # the run ends with its batch pending
    thread.join(60)
    with pytest.raises(BatchStateMismatch, match="other settings"):
        BatchCollector(state(tmp_path, fingerprint="f2"))
    with pytest.raises(BatchStateMismatch, match="benchmark 'bench', not 'other'"):
        BatchCollector(state(tmp_path, benchmark="other"))
    batch_server.release()


def test_a_langchain_openai_model_batches_with_our_client(batch_server: BatchServer) -> None:
    from pytest_karenina.llm.adapters.langchain_model import LangChainModel

    config = ModelConfig(
        id="lc", model_name="test-model", model_provider="openai", interface="langchain",
        temperature=0.0, max_tokens=64,
        extra_kwargs={"base_url": batch_server.base_url, "api_key": KEY, "seed": 7},
    )  # fmt: skip
    parts = batch_parts(config)
    assert parts is not None
    live = LangChainModel(config)
    batching = BatchingModel(live, parts[1], parts[0], collector(2), (KEY,))
    found = call_all(batching, ["x", "y"])
    assert {reply.text for reply in found.values()} == {"echo x", "echo y"}
    assert live.invoke(ask("x")).text == found["x"].text  # the same reply as a live call
    body = batch_server.submitted[0][0]["body"]
    assert body["seed"] == 7 and body["max_tokens"] == 64 and "api_key" not in body
    assert all(path != "/v1/chat/completions" for method, path in batch_server.requests[:3])


def test_a_call_that_gave_up_before_its_batch_was_sent_is_not_sent(
    batch_server: BatchServer,
) -> None:
    now, running = [0.0], [99]  # a clock the test moves, and pipelines that are not waiting
    collect = BatchCollector(active=lambda: running[0], poll=0.02, wait=0.05,
                             clock=lambda: now[0])  # fmt: skip
    batching = model(batch_server, collect)
    with pytest.raises(BatchCallError, match=r"batch wait of 0\.05s ran out"):
        batching.invoke(ask("gave up"))
    running[0], collect.wait = 1, 60.0
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(call_all(batching, ["later"])))
    thread.start()
    until(lambda: collect._waiting > 0)  # the second call is queued
    now[0] = 10.0  # quiet long enough: what waits goes now
    thread.join(60)
    assert [[line["body"]["messages"][-1]["content"] for line in lines]
            for lines in batch_server.submitted] == [["later"]]  # fmt: skip
    collect.close()
