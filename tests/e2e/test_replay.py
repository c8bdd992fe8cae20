"""Record a live run, then replay it strictly with the server gone."""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark
from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.results import VerificationResult, VerificationResultSet
from tests.e2e.cases import CHECKPOINT_CASES, MQ, MULTI, checkpoint
from tests.e2e.scripting import (
    API_KEY,
    CallLog,
    comparable,
    make_config,
    run,
    script,
    script_abstention,
)
from tests.support.openai_server import OpenAIServer

CASES = CHECKPOINT_CASES[MULTI]
CALL_KINDS = ("answer_generation", "abstention_check", "parsing")
KEY = re.compile(r"\bkey ([0-9a-f]{64})\b")


def record(server: OpenAIServer, path: Path) -> VerificationResultSet:
    """A live run of the multi-question checkpoint (abstention on) recorded to ``path``."""
    for case in CASES:
        script_abstention(server, case.answer, detected=False)
    script(server, CASES)
    store = ReplayStore(path, "record")
    log = CallLog()

    results = run(
        checkpoint(MULTI), make_config(server, abstention_enabled=True), log, replay=store
    )

    for result in results:
        assert result.template is not None and result.template.abstention_check_performed
        assert result.template.abstention_detected is False
    calls = len(CASES) * len(CALL_KINDS)
    assert len(log) == len(server.chat_requests) == calls
    assert store.stats() == {"hits": 0, "misses": 0, "added": calls}
    store.compact()
    return results


def stop(server: OpenAIServer) -> None:
    """Stop ``server`` and check that its port refuses connections."""
    server.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def forbid_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make every socket connect attempt fail; returns the list of attempted addresses."""
    attempts: list[Any] = []

    def refuse(sock: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise ConnectionRefusedError(f"network is forbidden in strict replay: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def strict_run(
    server: OpenAIServer, path: Path, benchmark: Benchmark | None = None, **options: Any
) -> tuple[VerificationResultSet, ReplayStore, CallLog]:
    store = ReplayStore(path, "strict")
    log = CallLog()
    config = make_config(server, abstention_enabled=True, **options)
    results = run(benchmark or checkpoint(MULTI), config, log, replay=store)
    return results, store, log


def test_record_then_strict_replay_is_identical_and_offline(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "calls.jsonl"
    live = record(openai_server, path)
    recorded = path.read_text(encoding="utf-8")
    entries = [json.loads(line) for line in recorded.splitlines()]
    assert [e["key"] for e in entries] == sorted({e["key"] for e in entries})  # compacted
    assert Counter(e["call_kind"] for e in entries) == dict.fromkeys(CALL_KINDS, len(CASES))
    for stored in tmp_path.iterdir():
        assert API_KEY not in stored.read_text(encoding="utf-8"), stored.name

    stop(openai_server)
    attempts = forbid_network(monkeypatch)
    replayed, store, log = strict_run(openai_server, path)

    assert [comparable(r) for r in replayed] == [comparable(r) for r in live]
    assert [r.verify_result for r in replayed] == [c.passes for c in CASES]
    assert attempts == [] and len(log) == 0
    assert store.stats() == {"hits": len(entries), "misses": 0, "added": 0}
    assert path.read_text(encoding="utf-8") == recorded  # strict mode never writes


def changed(benchmark: Benchmark, question_id: str, **update: str) -> Benchmark:
    questions = [
        q.model_copy(update=update) if q.id == question_id else q for q in benchmark.questions
    ]
    return benchmark.model_copy(update={"questions": questions})


def assert_replay_miss(result: VerificationResult, call_kind: str, known_keys: set[str]) -> None:
    """The result is an error that names its question, the call kind and an unrecorded key."""
    meta = result.metadata
    assert result.verify_result is None and meta.completed_without_errors is False
    assert meta.error is not None
    assert "strict replay: no recorded reply" in meta.error
    assert f"question {meta.question_id!r}" in meta.error
    assert f"call kind {call_kind!r}" in meta.error
    found = KEY.search(meta.error)
    assert found is not None and found.group(1) not in known_keys


def test_strict_replay_miss_errors_only_the_changed_items(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "calls.jsonl"
    live = {r.metadata.question_id: r for r in record(openai_server, path)}
    known_keys = {json.loads(line)["key"] for line in path.read_text("utf-8").splitlines()}
    stop(openai_server)
    attempts = forbid_network(monkeypatch)
    benchmark = checkpoint(MULTI)
    new_template = benchmark.question(f"{MQ}1").template_code.replace(
        '"Temperature in Celsius"', '"The temperature in degrees Celsius"'
    )
    benchmark = changed(benchmark, f"{MQ}1", template_code=new_template)
    benchmark = changed(benchmark, f"{MQ}3", text="Who wrote the play Romeo and Juliet?")

    results, store, log = strict_run(openai_server, path, benchmark)

    by_id = {r.metadata.question_id: r for r in results}
    template_changed, text_changed = by_id.pop(f"{MQ}1"), by_id.pop(f"{MQ}3")
    assert_replay_miss(template_changed, "parsing", known_keys)
    assert template_changed.metadata.failure is not None
    assert template_changed.metadata.failure.category == "parsing"
    assert template_changed.template is not None  # the answer itself was replayed
    assert template_changed.template.raw_llm_response == live[f"{MQ}1"].template.raw_llm_response  # type: ignore[union-attr]
    assert_replay_miss(text_changed, "answer_generation", known_keys)
    for question_id, result in by_id.items():
        assert comparable(result) == comparable(live[question_id])
    assert store.stats()["misses"] == 2
    assert attempts == [] and len(log) == 0


def test_strict_replay_miss_in_a_judge_check_is_an_error(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DESIGN 1: a cache miss in strict replay is a clear error, whichever call missed."""
    path = tmp_path / "calls.jsonl"
    record(openai_server, path)
    known_keys = {json.loads(line)["key"] for line in path.read_text("utf-8").splitlines()}
    stop(openai_server)
    forbid_network(monkeypatch)
    instructions = {"abstention_detection": "Quote the refusal exactly."}

    results, store, _ = strict_run(openai_server, path, prompt_config=instructions)

    assert store.stats()["misses"] == len(CASES)
    for result in results:
        assert_replay_miss(result, "abstention_check", known_keys)
