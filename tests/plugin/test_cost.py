"""Cost through pytest over real HTTP, with a test server whose usage is known: the price
table in the summary and JUnit, the cost cap stopping a run, and the offline estimate (the
calls the store lacks assumed from the prompts the run builds)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.llm.assumed import approx_tokens, filler_text, request_tokens, schema_instance
from pytest_karenina.llm.ports import ChatMessage, ModelRequest
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

ANSWER_USAGE = {"prompt_tokens": 1000, "completion_tokens": 100}
JUDGE_USAGE = {"prompt_tokens": 2000, "completion_tokens": 50}
# At $1 / $2 per million tokens, an answer costs $0.0012 and its parse $0.0021.
PRICES = "test-model = 1.0 2.0"


def answers(server: OpenAIServer) -> None:
    for country, capital in COUNTRIES.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}",
                        usage=ANSWER_USAGE)  # fmt: skip
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.",
                        usage=JUDGE_USAGE)  # fmt: skip


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    prices = pytester.path / "prices.txt"
    prices.write_text(f"# USD per million tokens\n{PRICES}\n")
    checkpoint = capitals_checkpoint(pytester.path)
    return pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(server),
                              f"--karenina-prices={prices}", *options)  # fmt: skip


def test_the_cost_is_in_the_summary_and_junit(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    answers(openai_server)
    junit, html = pytester.path / "junit.xml", pytester.path / "report.html"

    result = run(pytester, openai_server, f"--junitxml={junit}", f"--html={html}", *dist)

    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["cost: $0.0099 (answerer $0.0036, judge $0.0063)"])
    assert "; cost: $0.0099 (answerer $0.0036, judge $0.0063)" in html.read_text()
    root = ET.parse(junit).getroot()
    cases = [{p.get("name"): p.get("value") for p in case.iter("property")}
             for case in root.iter("testcase")]  # fmt: skip
    assert [case["karenina.cost_usd"] for case in cases] == ["0.003300"] * 3
    properties = next(root.iter("testsuite")).find("properties")
    assert properties is not None
    suite = {p.get("name"): p.get("value") for p in properties
             if p.get("name", "").startswith("karenina.cost")}  # fmt: skip
    assert suite == {"karenina.cost_usd": "0.009900", "karenina.cost_answerer_usd": "0.003600",
                     "karenina.cost_judge_usd": "0.006300"}  # fmt: skip


def test_an_ini_price_table_and_a_model_without_a_price(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    answers(openai_server)
    pytester.makeini("[pytest]\nkarenina_prices =\n    other-model = 5 5\n")
    checkpoint = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server))
    result.stdout.fnmatch_lines(
        ["cost: $0.0000 (answerer $0.0000, judge $0.0000); no price for openai_endpoint:test-m*"]
    )


def test_the_cost_cap_stops_starting_questions(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    answers(openai_server)

    result = run(pytester, openai_server, "--karenina-max-cost=0.005", "-rs", *dist)

    outcomes = result.parseoutcomes()
    if not dist:  # one at a time until the first cost is known: $0.0033, then 2 x that > cap
        assert (outcomes.get("passed"), outcomes.get("skipped")) == (1, 2)
    assert outcomes.get("passed", 0) >= 1 and outcomes.get("skipped", 0) >= 1
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 3
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [f"karenina cost cap reached: {outcomes['skipped']} items not started"]
    )
    result.stdout.fnmatch_lines([
        "SKIPPED *karenina: cost cap $0.005 reached ($0.0033 spent here, $0.0000 in flight): "
        "not started",
    ])  # fmt: skip
    spent = 0.0033 * outcomes["passed"]
    result.stdout.fnmatch_lines([f"cost: ${spent:.4f} *"])


def test_the_estimate_runs_nothing_and_assumes_the_unrecorded(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    answers(openai_server)
    store = pytester.path / "store.jsonl"
    recorded = run(pytester, openai_server, "--karenina-replay=record",
                   f"--karenina-replay-store={store}", "-k", "q1 or q2")  # fmt: skip
    recorded.assert_outcomes(passed=2, deselected=1)
    sent = len(openai_server.requests)
    kept = store.read_text()
    export = pytester.path / "results.json"
    earlier = json.dumps({"format_version": "2.2", "metadata": {}, "results": [{"a": 1}]})
    export.write_text(earlier)

    result = run(pytester, openai_server, "--karenina-estimate", f"--karenina-replay-store={store}",
                 "--karenina-max-cost=0.001", "--karenina-replay-prune",
                 f"--karenina-results={export}")  # fmt: skip

    assert result.ret == pytest.ExitCode.OK
    assert len(openai_server.requests) == sent  # nothing left the machine
    assert (store.read_text(), export.read_text()) == (kept, earlier)
    assert result.parseoutcomes().get("passed", 0) == 0
    # q3 as a live run records it: what the estimate assumed for its two calls.
    run(pytester, openai_server, "--karenina-replay=replay", f"--karenina-replay-store={store}",
        "-k", "q3").assert_outcomes(passed=1, deselected=2)  # fmt: skip
    (answer,) = [e for e in store_entries(store) if e["call_kind"] == "answer_generation"
                 and "Japan" in json.dumps(e["request"])]  # fmt: skip
    (judge,) = [e for e in store_entries(store) if e["call_kind"] == "parsing"
                and answer["reply"]["text"] in json.dumps(e["request"])]  # fmt: skip
    prompt = request_tokens(entry_request(answer))
    quoted = request_tokens(entry_request(judge, answer["reply"]["text"], filler_text(300)))
    reply = approx_tokens(json.dumps(schema_instance(judge["request"]["json_schema"])))
    usd = ((prompt + quoted) * 1.0 + (300 + reply) * 2.0) / 1_000_000
    result.stdout.fnmatch_lines([
        "karenina: estimate: strict replay, calls the store lacks assumed, no call leaves the "
        "machine, no item runs",
        "karenina estimate of a live run (from store.jsonl; no call was sent): 3 items, "
        "2 fully recorded, 1 with calls assumed",
        "  measured (the usage the store recorded): 4 calls, 6000 tokens in, 300 out, "
        "$0.0066 (answerer $0.0024, judge $0.0042)",
        f"  assumed (calls the store lacks): 2 calls, ~{prompt + quoted} tokens in, "
        f"~{300 + reply} out, ~${usd:.4f} *",
        f"    1 answer: prompts ~{prompt} tokens; replies 300 tokens each *",
        f"    1 judge call: prompts ~{quoted} tokens; replies ~{reply} tokens *",
        "    tokens counted as 4 characters each, plus 4 a message",
        f"  a live run: ~6 calls, ~{6000 + prompt + quoted} tokens in, ~{300 + 300 + reply} out, "
        f"~${0.0066 + usd:.4f} *",
    ])  # fmt: skip


def store_entries(store: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.read_text().splitlines() if line.strip()]


def entry_request(entry: dict[str, Any], text: str = "", instead: str = "") -> ModelRequest:
    """The request a store entry recorded, with ``text`` replaced by ``instead``."""
    recorded = entry["request"]
    messages = tuple(ChatMessage(m["role"], m["content"].replace(text, instead) if text
                                 else m["content"]) for m in recorded["messages"])  # fmt: skip
    return ModelRequest(messages, entry["call_kind"], recorded["json_schema"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--karenina-max-cost=1"], "--karenina-max-cost: needs a price table*"),
        (["--karenina-estimate", "--karenina-estimate-answer-tokens=0"],
         "--karenina-estimate-answer-tokens: must be >= 1, got '0'"),
        (["--karenina-estimate", "-n", "2"], "--karenina-estimate: runs in one process; drop -n"),
    ],
)  # fmt: skip
def test_cost_usage_errors(
    pytester: pytest.Pytester, openai_server: OpenAIServer, options: list[str], message: str
) -> None:
    checkpoint = capitals_checkpoint(pytester.path)
    (pytester.path / "capitals.replay.jsonl").write_text("")
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                                *options)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}"])


def test_a_bad_price_table_names_the_file_and_line(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    bad = pytester.path / "bad.txt"
    bad.write_text("test-model = 1.0 2.0\ngpt-4o = cheap\n")
    checkpoint = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                                f"--karenina-prices={bad}")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--karenina-prices: {bad}, line 2: expected MODEL = INPUT *"])

    table = pytester.path / "prices.json"
    table.write_text(json.dumps({"test-model": {"input": 1, "output": -2}}))
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                                f"--karenina-prices={table}")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{table}: test-model: expected an input and an output price*"])


def test_a_json_price_table(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    answers(openai_server)
    table = pytester.path / "prices.json"
    table.write_text(json.dumps({"openai:test-model": [1.0, 2.0]}))
    checkpoint = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                                f"--karenina-prices={table}")  # fmt: skip
    result.stdout.fnmatch_lines(["cost: $0.0099 (answerer $0.0036, judge $0.0063)"])


def test_prices_path(tmp_path: Path) -> None:
    from pytest_karenina.results.cost import PriceTable

    table = PriceTable.from_lines(["m = 1 / 2", "openai:gpt = 3 4"], "ini")
    assert table.lookup("langchain:m (openai:m) +[search]") == table.prices["m"]
    assert table.lookup("langchain:gpt") == table.prices["openai:gpt"]
    assert table.lookup("langchain:other") is None and table.lookup(None) is None


@pytest.mark.parametrize(
    ("name", "text"),
    [("prices.json", '{"test-model": {"input": "nan", "output": 1}}'),
     ("prices.txt", "test-model = 1 inf\n")],
)  # fmt: skip
def test_a_price_that_is_not_a_finite_number_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, name: str, text: str
) -> None:
    """Issue 24 (item 9): a NaN price turned the cost cap off (every question ran, "cost:
    $nan")."""
    answers(openai_server)
    table = pytester.path / name
    table.write_text(text)
    checkpoint = capitals_checkpoint(pytester.path)
    options = [f"--karenina-prices={table}", "--karenina-max-cost=0.5"]
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                                *options)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--karenina-prices: {table}*test-model: expected an input and "
                                 "an output price (USD per million tokens, finite and not "
                                 "negative)*"])  # fmt: skip
    assert openai_server.requests == []
