"""Replay keys, the replay store's modes and file format, and keeping secrets out of it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest, RawModel, Usage
from pytest_karenina.llm.replay import (
    ReplayingModel,
    ReplayMiss,
    ReplayStore,
    replay_key,
    sanitize_identity,
)
from tests.llm import fakes
from tests.llm.fakes import ScriptedModel, req

IDENTITY = {"adapter": "langchain", "provider": "openai", "model": "gpt-4o", "temperature": 0.1}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]


def test_key_is_sha256_of_the_canonical_payload() -> None:
    request = req("Capital of France?", call_kind="parsing", json_schema=SCHEMA, schema_name="A")
    payload = {
        "identity": IDENTITY,
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "json_schema": SCHEMA,
        "schema_name": "A",
        "call_kind": "parsing",
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    assert replay_key(IDENTITY, request) == hashlib.sha256(text.encode()).hexdigest()


def test_key_is_stable() -> None:
    shuffled = dict(reversed(list(IDENTITY.items())))
    schema = {"properties": {"answer": {"type": "string"}}, "type": "object"}
    a = replay_key(IDENTITY, req(json_schema=SCHEMA))
    assert a == replay_key(IDENTITY, req(json_schema=SCHEMA))
    assert a == replay_key(shuffled, req(json_schema=schema))
    assert a == replay_key(IDENTITY, req(json_schema=SCHEMA, question_id="q-other"))
    assert a == replay_key({**IDENTITY, "base_url": None}, req(json_schema=SCHEMA))
    assert a == replay_key({**IDENTITY, "api_key": "sk-rotated-123456789"}, req(json_schema=SCHEMA))
    zero = {**IDENTITY, "temperature": 0.0}
    assert replay_key(zero, req()) == replay_key({**IDENTITY, "temperature": 0}, req())


@pytest.mark.parametrize(
    ("identity", "request_"),
    [
        ({**IDENTITY, "temperature": 0.7}, req()),
        ({**IDENTITY, "model": "gpt-4o-mini"}, req()),
        ({**IDENTITY, "max_tokens": 100}, req()),
        ({**IDENTITY, "adapter": "openai_endpoint"}, req()),
        (IDENTITY, req("What is 2+3?")),
        (IDENTITY, ModelRequest((ChatMessage("system", "What is 2+2?"),), "answer_generation")),
        (
            IDENTITY,
            ModelRequest(
                (ChatMessage("system", "x"), ChatMessage("user", "What is 2+2?")),
                "answer_generation",
            ),
        ),
        (IDENTITY, req(json_schema=SCHEMA)),
        (IDENTITY, req(json_schema={"type": "object"}, schema_name="Answer")),
        (IDENTITY, req(call_kind="parsing")),
    ],
)
def test_key_changes_with_what_changes_the_output(identity: Any, request_: ModelRequest) -> None:
    assert replay_key(identity, request_) != replay_key(IDENTITY, req())


def test_key_rejects_non_json_identity() -> None:
    with pytest.raises(TypeError):
        replay_key({**IDENTITY, "callback": object()}, req())


def test_sanitize_identity_strips_secrets_at_any_depth() -> None:
    identity = {
        **IDENTITY,
        "api_key": fakes.CANARY,
        "max_tokens": 512,
        "extra": {"default_headers": {"Authorization": f"Bearer {fakes.CANARY}", "X-Trace": "1"}},
        "base_url": f"https://llm.example/v1?api_key={fakes.CANARY}",
        "stop": ["END", None],
    }

    clean = sanitize_identity(identity)

    assert fakes.CANARY not in json.dumps(clean)
    assert clean["max_tokens"] == 512 and "api_key" not in clean
    assert clean["extra"] == {"default_headers": {"X-Trace": "1"}}
    assert clean["base_url"] == "https://llm.example/v1?api_key=***"
    assert clean["stop"] == ["END", None]


def test_off_mode_always_calls_and_never_writes(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "store.jsonl", "off")
    inner = ScriptedModel("a")
    model: RawModel = ReplayingModel(inner, store)  # mypy checks the protocol here

    model.invoke(req())
    model.invoke(req())

    assert len(inner.calls) == 2 and not store.path.exists()
    assert store.stats() == {"hits": 0, "misses": 0, "added": 0}
    assert store.compact() is False


def test_record_mode_always_calls_and_last_write_wins(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "store.jsonl", "record")
    inner = ScriptedModel("first", "second")
    model = ReplayingModel(inner, store)

    assert model.invoke(req()).text == "first"
    assert model.invoke(req()).text == "second"

    assert len(inner.calls) == 2 and len(lines(store.path)) == 2
    assert store.compact() is True
    [entry] = lines(store.path)
    assert entry["reply"]["text"] == "second"
    assert store.stats() == {"hits": 0, "misses": 0, "added": 2}


def test_replay_mode_calls_on_a_miss_then_replays(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    inner = ScriptedModel("live")
    model = ReplayingModel(inner, ReplayStore(path, "replay"))

    first = model.invoke(req(question_id="q1"))
    second = model.invoke(req(question_id="q2"))  # same call for another question: a hit

    assert first.text == second.text == "live" and len(inner.calls) == 1
    assert model.store.stats() == {"hits": 1, "misses": 1, "added": 1}

    later = ReplayingModel(ScriptedModel(RuntimeError("no network")), ReplayStore(path, "replay"))
    assert later.invoke(req()).text == "live"  # a new session replays from the file


def test_a_hit_returns_the_recorded_reply(tmp_path: Path) -> None:
    class Detailed(ScriptedModel):
        def invoke(self, request: ModelRequest) -> ModelReply:
            self.calls.append(request)
            return ModelReply('{"answer": "Paris"}', Usage(12, 5), "gpt-4o-2024-08-06")

    path = tmp_path / "store.jsonl"
    recorded = ReplayingModel(Detailed(), ReplayStore(path, "record")).invoke(req())
    replayed = ReplayingModel(None, ReplayStore(path, "strict"), identity=Detailed().identity)

    assert (
        replayed.invoke(req())
        == recorded
        == ModelReply('{"answer": "Paris"}', Usage(12, 5), "gpt-4o-2024-08-06")
    )


def test_strict_mode_hits_without_the_model(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    ReplayingModel(ScriptedModel("recorded"), ReplayStore(path, "record")).invoke(req())
    store = ReplayStore(path, "strict")
    model = ReplayingModel(None, store, identity=ScriptedModel().identity)

    assert model.invoke(req()).text == "recorded"
    assert store.stats() == {"hits": 1, "misses": 0, "added": 0}


def test_strict_miss_names_question_call_kind_and_key(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    inner = ScriptedModel("must not be called")
    model = ReplayingModel(inner, ReplayStore(path, "strict"))
    request = req("Unseen question", call_kind="abstention_check", question_id="urn:q:42")

    with pytest.raises(ReplayMiss) as caught:
        model.invoke(request)

    err = caught.value
    key = replay_key(inner.identity, request)
    message = str(err)
    assert "'urn:q:42'" in message and "'abstention_check'" in message and key in message
    assert err.key == key and err.question_id == "urn:q:42" and err.call_kind == "abstention_check"
    assert inner.calls == [] and not path.exists()
    assert model.store.stats()["misses"] == 1
    with pytest.raises(ValueError, match="read-only"):
        model.store.record(key, inner.identity, request, ModelReply("x"))
    assert model.store.compact() is False


def test_inner_model_is_required_outside_strict_mode(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inner model is required"):
        ReplayingModel(None, ReplayStore(tmp_path / "s.jsonl", "replay"), identity=IDENTITY)
    with pytest.raises(ValueError, match="inner model is required"):
        ReplayingModel(None, ReplayStore(tmp_path / "s.jsonl", "strict"))
    with pytest.raises(ValueError, match="replay mode"):
        ReplayStore(tmp_path / "s.jsonl", "sometimes")  # type: ignore[arg-type]


def test_failures_are_not_stored(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "store.jsonl", "replay")
    with pytest.raises(RuntimeError):
        ReplayingModel(ScriptedModel(RuntimeError("boom")), store).invoke(req())
    assert not store.path.exists() and len(store) == 0


def test_file_is_sorted_readable_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "store.jsonl"
    model = ReplayingModel(ScriptedModel("Ünïcode — réponse"), ReplayStore(path, "record"))
    for question in ("z?", "a?", "m?", "a?"):
        model.invoke(req(question, json_schema=SCHEMA, schema_name="Answer"))

    assert model.store.compact() is True
    assert model.store.compact() is False  # already compact: left untouched

    text = path.read_text("utf-8")
    entries = lines(path)
    assert text.endswith("\n") and len(text.split("\n")) == len(entries) + 1
    assert [e["key"] for e in entries] == sorted({e["key"] for e in entries}) and len(entries) == 3
    assert "Ünïcode — réponse" in text  # no \\u escapes: readable in a diff
    for line in text.split("\n")[:-1]:
        assert line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False)
    entry = entries[0]
    assert set(entry) == {"key", "call_kind", "identity", "request", "reply", "recorded_at"}
    assert set(entry["request"]) == {"messages", "json_schema", "schema_name"}
    assert entry["request"]["json_schema"] == SCHEMA and entry["request"]["schema_name"] == "Answer"
    assert entry["reply"] == {
        "text": "Ünïcode — réponse",
        "usage": {"input_tokens": None, "output_tokens": None},
        "model": "m1",
    }


def test_missing_file_is_an_empty_store(tmp_path: Path) -> None:
    store = ReplayStore(tmp_path / "absent.jsonl", "replay")
    assert len(store) == 0 and store.lookup("0" * 64) is None
    assert store.compact() is False and not store.path.exists()


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    ReplayingModel(ScriptedModel("ok"), ReplayStore(path, "record")).invoke(req())
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"key": "abc", "reply": {"te')

    store = ReplayStore(path, "replay")

    assert len(store) == 1
    store.compact()
    assert len(lines(path)) == 1


def test_a_malformed_line_is_skipped_with_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "store.jsonl"
    ReplayingModel(ScriptedModel("ok"), ReplayStore(path, "record")).invoke(req())
    path.write_text("<<<<<<< HEAD\n" + path.read_text("utf-8"), "utf-8")

    assert len(ReplayStore(path, "strict")) == 1
    assert "store.jsonl:1: skipped, not a replay entry" in caplog.text


def test_a_torn_last_line_does_not_poison_the_next_recording(tmp_path: Path) -> None:
    path = tmp_path / "store.jsonl"
    ReplayingModel(ScriptedModel("first"), ReplayStore(path, "record")).invoke(req("one"))
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"key": "cut short by a full di')  # a kill or a full disk mid-append

    ReplayingModel(ScriptedModel("second"), ReplayStore(path, "record")).invoke(req("two"))

    identity = ScriptedModel("unused").replay_identity
    strict = ReplayingModel(None, ReplayStore(path, "strict"), identity=identity)
    assert strict.invoke(req("one")).text == "first"
    assert strict.invoke(req("two")).text == "second"


def test_no_secret_is_ever_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_canary = "env-canary-value-31337"
    monkeypatch.setenv("ACME_API_KEY", env_canary)
    identity = {
        **IDENTITY,
        "api_key": fakes.CANARY,
        "default_headers": {"Authorization": f"Bearer {fakes.CANARY}"},
        "metadata": {"note": f"key is {env_canary}"},
    }
    inner = ScriptedModel(f"echo {env_canary}", identity=identity)
    path = tmp_path / "store.jsonl"
    store = ReplayStore(path, "record", secrets=["explicit-canary-777"])
    request = ModelRequest(
        (
            ChatMessage("system", "Use token=explicit-canary-777 for nothing."),
            ChatMessage("user", f"My key is {fakes.CANARY} and {env_canary}"),
        ),
        "answer_generation",
    )

    ReplayingModel(inner, store).invoke(request)
    store.compact()

    written = path.read_text("utf-8") + Path(f"{path}.lock").read_text("utf-8")
    for canary in (fakes.CANARY, env_canary, "explicit-canary-777"):
        assert canary not in written
    [entry] = lines(path)
    assert "api_key" not in entry["identity"] and entry["identity"]["default_headers"] == {}
    assert entry["key"] == replay_key(identity, request)  # keys survive redaction
