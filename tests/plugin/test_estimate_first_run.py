"""``--karenina-estimate`` of the quickstart with no replay store (a first run) and with a store
that lacks a question: the calls the store lacks are assumed from the prompts the run builds.

The committed quickstart store is a recording of the same checkpoint, so it holds the prompts
a live run sends: the expected numbers are derived from it, not written down.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import load_checkpoint, save_checkpoint
from pytest_karenina.llm.assumed import DEFAULT_ANSWER_TOKENS, filler_text, request_tokens
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from tests.plugin.plugin_helpers import capitals_checkpoint

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STORE = EXAMPLES / "quickstart.replay.jsonl"


def entries(path: Path = STORE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def request_of(entry: dict[str, Any], text: str = "", instead: str = "") -> ModelRequest:
    """The request ``entry`` recorded, with ``text`` replaced by ``instead``."""
    recorded = entry["request"]
    messages = tuple(
        ChatMessage(m["role"], m["content"].replace(text, instead) if text else m["content"])
        for m in recorded["messages"]
    )
    return ModelRequest(messages, entry["call_kind"], recorded["json_schema"])


def estimate(pytester: pytest.Pytester, store: Path, *options: str) -> pytest.RunResult:
    checkpoint = pytester.path / "quickstart.jsonld"
    shutil.copy(EXAMPLES / "quickstart.jsonld", checkpoint)
    # The quickstart's settings, which this repository's pyproject.toml gives it.
    return pytester.runpytest(
        "--karenina", str(checkpoint), "--karenina-answering-model", "openai:gpt-4.1-mini",
        "--karenina-parsing-model", "openai:gpt-4.1-mini", "--karenina-abstention", "yes",
        f"--karenina-replay-store={store}", "--karenina-estimate", "-p", "no:cacheprovider",
        *options,
    )  # fmt: skip


def numbers(result: pytest.RunResult, prefix: str) -> list[int]:
    """The whole numbers of the output line that starts with ``prefix``."""
    (line,) = [line for line in result.outlines if line.startswith(prefix)]
    return [int(n) for n in re.findall(r"(?<![\d.])\d+(?![\d.])", line[len(prefix) :])]


def by_kind(found: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    kinds: dict[str, list[dict[str, Any]]] = {}
    for entry in found:
        kinds.setdefault(entry["call_kind"], []).append(entry)
    return kinds


def test_a_first_run_is_estimated_from_its_prompts(pytester: pytest.Pytester) -> None:
    store = pytester.path / "none.replay.jsonl"
    recording = by_kind(entries())

    result = estimate(pytester, store)

    assert result.ret == pytest.ExitCode.OK
    assert not store.exists()  # nothing was recorded
    result.stdout.fnmatch_lines([
        "karenina estimate of a live run (nothing recorded at none.replay.jsonl: every call "
        "assumed; no call was sent): 12 items, 0 fully recorded, 12 with calls assumed",
        "  measured (the usage the store recorded): none",
        "  assumed (calls the store lacks): *",
        "    12 answers: *",
        "    * judge calls: *",
        "    tokens counted as 4 characters each, plus 4 a message",
        "  a live run: ~*",
    ])  # fmt: skip
    # The answering prompts are the ones the recorded run sent, counted.
    prompts = sum(request_tokens(request_of(e)) for e in recording["answer_generation"])
    assert numbers(result, "    12 answers: ") == [prompts, DEFAULT_ANSWER_TOKENS]
    # Every question's answer is checked for abstention and, but for the trace-only question,
    # parsed; caffeine-half-life abstained in the recording and was not parsed, an assumed
    # answer does not abstain.
    judge_calls = len(recording["abstention_check"]) + len(recording["parsing"]) + 1
    judge = numbers(result, f"    {judge_calls} judge calls: ")
    assumed = numbers(result, "  assumed (calls the store lacks): ")
    assert assumed == [12 + judge_calls, prompts + judge[0], 12 * DEFAULT_ANSWER_TOKENS + judge[1]]
    assert numbers(result, "  a live run: ") == assumed

    # A shorter answer: each judge prompt quotes it, 200 tokens fewer each.
    shorter = estimate(pytester, store, "--karenina-estimate-answer-tokens=100")
    assert numbers(shorter, "    12 answers: ") == [prompts, 100]
    judge_after = numbers(shorter, f"    {judge_calls} judge calls: ")
    assert judge_after == [judge[0] - 200 * judge_calls, judge[1]]


def test_a_store_that_lacks_a_question_measures_the_rest(pytester: pytest.Pytester) -> None:
    store = pytester.path / "partial.replay.jsonl"
    kept = [e for e in entries() if "strawberry" not in json.dumps(e["request"])]
    dropped = by_kind([e for e in entries() if e not in kept])
    store.write_text("".join(json.dumps(e) + "\n" for e in kept))
    before = store.read_text()

    result = estimate(pytester, store)

    assert result.ret == pytest.ExitCode.OK
    assert store.read_text() == before
    result.stdout.fnmatch_lines([
        "karenina estimate of a live run (from partial.replay.jsonl; no call was sent): "
        "12 items, 11 fully recorded, 1 with calls assumed",
    ])  # fmt: skip
    measured = [
        len(kept),
        sum(e["reply"]["usage"]["input_tokens"] for e in kept),
        sum(e["reply"]["usage"]["output_tokens"] for e in kept),
    ]
    assert numbers(result, "  measured (the usage the store recorded): ") == measured
    (answer,) = dropped["answer_generation"]
    prompt = request_tokens(request_of(answer))
    assert numbers(result, "    1 answer: ") == [prompt, DEFAULT_ANSWER_TOKENS]
    # The judge prompts are the recorded ones with the assumed answer in place of the real one.
    judges = dropped["abstention_check"] + dropped["parsing"]
    filler = filler_text(DEFAULT_ANSWER_TOKENS)
    said = answer["reply"]["text"]
    prompts = sum(request_tokens(request_of(e, said, filler)) for e in judges)
    assert all(said in json.dumps(e["request"]["messages"]) for e in judges)
    assert numbers(result, f"    {len(judges)} judge calls: ")[0] == prompts
    assumed = numbers(result, "  assumed (calls the store lacks): ")
    assert assumed[0] == 1 + len(judges)
    total = numbers(result, "  a live run: ")
    assert total == [a + b for a, b in zip(measured, assumed, strict=True)]
    assert total[0] == len(entries())


def test_an_assumed_reply_a_stage_cannot_read_stops_its_item(pytester: pytest.Pytester) -> None:
    path = capitals_checkpoint(pytester.path)
    benchmark = load_checkpoint(path)
    code = 'Field(pattern=r"^[A-Z][a-z]+$", description='
    questions = [q.model_copy(update={"template_code": q.template_code.replace(
        "Field(description=", code)}) for q in benchmark.questions]  # fmt: skip
    save_checkpoint(benchmark.model_copy(update={"questions": questions}), path)

    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
        f"--karenina-replay-store={pytester.path / 'none.jsonl'}", "--karenina-estimate",
    )  # fmt: skip

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "*: 3 items, 0 fully recorded, 3 with calls assumed",
        "  assumed (calls the store lacks): 6 calls, *",
        "    3 answers: *",
        "    3 judge calls: *",
        "  3 items stopped early, their later calls not counted (first: q1: *assumed reply did "
        "not fit the reply schema*)",
    ])  # fmt: skip
