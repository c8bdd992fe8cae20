"""Template deep judgment through pytest over real HTTP: ``--karenina-deep-judgment full``,
with and without ``-n 2``. An answer whose attribute the judge cannot quote fails."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import endpoint_model
from tests.plugin.plugin_helpers import (
    MULTI,
    copy_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    scripted,
)
from tests.support.openai_server import OpenAIServer

INVENTED_FOR = "urn:karenina:test:mq003"  # right answer, but the judge's quote is not in it


def script_deep_judgment(server: OpenAIServer, checkpoint: str = MULTI) -> None:
    """Excerpt, reasoning and final-parse rules per question, ahead of the classic ones: every
    field quotes the whole answer (the field of ``INVENTED_FOR`` an invented sentence)."""
    for case in CHECKPOINT_CASES[checkpoint]:
        quote = (
            "It was penned by Christopher Marlowe."
            if case.question_id == INVENTED_FOR
            else (case.answer)
        )
        reasoning = f"Reasoning for {case.question_id.rsplit(':', 1)[-1]}."
        server.add_rule(
            json.dumps({field: [{"text": quote, "confidence": "high"}] for field in case.parsed}),
            contains=["<response_to_analyze>", case.answer], structured=False,
            name=f"excerpts {case.question_id}",
        )  # fmt: skip
        server.add_rule(
            json.dumps(dict.fromkeys(case.parsed, reasoning)),
            contains=["<evidence>", f"{next(iter(case.parsed))}:"], last_contains=case.asks,
            structured=False, name=f"reasoning {case.question_id}",
        )  # fmt: skip
        server.add_rule(
            case.parsed, contains=["Reasoning Traces", reasoning], structured=True,
            name=f"final parse {case.question_id}",
        )  # fmt: skip


def deep_args(pytester: pytest.Pytester, server: OpenAIServer) -> list[str]:
    """Scripts ``server`` for a deep-judgment run of the multi-question checkpoint; its args."""
    script_deep_judgment(server)
    scripted(server)
    path = copy_checkpoint(pytester)
    return ["--karenina", str(path), *endpoint_args(server), "--karenina-deep-judgment=full"]


def test_deep_judgment_fails_the_answer_it_cannot_ground(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    export = pytester.path / "results.json"
    junit = pytester.path / "junit.xml"

    result = pytester.runpytest(
        *deep_args(pytester, openai_server), "--karenina-max-retries=0",
        f"--karenina-results={export}", f"--junitxml={junit}", *dist,
    )  # fmt: skip

    # mq001 passes; mq002 and mq004 are wrong answers; mq003 is right but unquoted.
    result.assert_outcomes(passed=1, failed=3, skipped=1)
    if not dist:
        result.stdout.fnmatch_lines(["karenina: deep judgment full"])
    result.stdout.fnmatch_lines(
        ["deep judgment: 4 results, 1 with attributes not quoted from the response (author 1)"]
    )
    result.stdout.fnmatch_lines([
        "*question mq003*",
        "*decided by DeepJudgmentAutoFail*",
        '*deep judgment: no verbatim quote for author; rejected "It was penned by Christopher'
        ' Marlowe." (similarity 0.* < 0.80)',
    ])  # fmt: skip
    by_id = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    ungrounded = by_id[INVENTED_FOR]
    assert ungrounded["metadata"]["failure"]["stage"] == "DeepJudgmentAutoFail"
    assert ungrounded["deep_judgment"]["attributes_without_excerpts"] == ["author"]
    grounded = by_id["urn:karenina:test:mq001"]["deep_judgment"]
    assert grounded["deep_judgment_stages_completed"] == ["excerpts", "reasoning", "parameters"]
    assert grounded["extracted_excerpts"]["temperature"][0]["similarity_score"] == 1.0
    properties = {
        (case.get("name"), prop.get("name")): prop.get("value")
        for case in ET.parse(junit).iter("testcase")
        for prop in case.iter("property")
    }
    assert properties[("mq003", "karenina.deep_judgment.attributes_without_excerpts")] == "author"
    assert properties[("mq001", "karenina.deep_judgment.model_calls")] == "3"
    assert properties[("mq001", "karenina.deep_judgment.mode")] == "full"
    # The final parse reads the reasoning: no request went to the classic parse rules.
    classic = [r for r in openai_server.chat_requests if "## JSON schema of the reply" in r.text]
    assert len(classic) == 4 and all("Reasoning Traces" in r.text for r in classic)


def test_a_recorded_deep_judgment_run_replays_offline(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Every deep-judgment call kind is recorded and found again by strict replay."""
    store = pytester.path / "calls.jsonl"
    args = [*deep_args(pytester, openai_server), f"--karenina-replay-store={store}"]
    pytester.runpytest(*args, "--karenina-replay=record").assert_outcomes(
        passed=1, failed=3, skipped=1
    )
    kinds = {json.loads(line)["call_kind"] for line in store.read_text().splitlines()}
    assert kinds == {
        "answer_generation", "deep_judgment_excerpts", "deep_judgment_reasoning", "parsing",
    }  # fmt: skip
    openai_server.stop()

    replayed = pytester.runpytest(*args, "--karenina-replay=strict")

    replayed.assert_outcomes(passed=1, failed=3, skipped=1)  # a miss would be an error


@pytest.mark.subprocess
def test_the_html_report_highlights_quoted_evidence_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = pytester.path / "report.html"
    pytester.runpytest(
        *deep_args(pytester, openai_server), f"--html={report}", "--self-contained-html"
    ).assert_outcomes(passed=1, failed=3, skipped=1)

    dom = rendered_dom(pytester, report)

    def row_dom(name: str) -> str:
        assert rendered_rows(dom, f"{MULTI}::{name}")
        return dom.split(f'id="{MULTI}::{name}"', 1)[1].split('<tbody class="results-table-row')[0]

    wrong = row_dom("mq004")  # a wrong answer, its quote accepted
    assert 'class="karenina-legend"' in wrong
    assert 'data-attribute="symbol"' in wrong and ">The symbol for gold is Ag.</mark>" in wrong
    ungrounded = row_dom("mq003")
    assert "<mark" not in ungrounded  # its only quote was rejected...
    assert "no verbatim quote for author; rejected" in ungrounded  # ...and the notes say so
    assert "It was penned by Christopher Marlowe." in ungrounded


def test_a_conftest_supplies_the_search_tool(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """``pytest_karenina_search_tool`` gives a named tool; the risks reach the export."""
    openai_server.add_rule(
        json.dumps({"excerpt_assessments": [
            {"excerpt_id": "temperature-1", "hallucination_risk": "none", "justification": "ok"}
        ]}),
        contains=["<excerpt id=", "our-index says"], structured=False, name="hallucination",
    )  # fmt: skip
    pytester.makeconftest(
        """
def pytest_karenina_search_tool(config, name):
    assert name == "our-index"
    return lambda queries: [[{"title": "t", "content": "our-index says " + q, "url": "u"}]
                            for q in queries]
"""
    )
    preset = pytester.path / "preset.json"
    preset.write_text(json.dumps({"config": {
        "answering_models": [endpoint_model(openai_server)],
        "parsing_models": [endpoint_model(openai_server)],
        "deep_judgment_mode": "full", "deep_judgment_search_enabled": True,
        "deep_judgment_search_tool": "our-index",
    }}))  # fmt: skip
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        *deep_args(pytester, openai_server), f"--karenina-config={preset}",
        f"--karenina-results={export}", "-k", "mq001",
    )  # fmt: skip

    result.assert_outcomes(passed=1, deselected=4)
    (record,) = json.loads(export.read_text())["results"]
    section = record["deep_judgment"]
    assert section["deep_judgment_search_enabled"] is True
    assert section["hallucination_risk_assessment"] == {"temperature": "none"}
    excerpt = section["extracted_excerpts"]["temperature"][0]
    assert excerpt["search_results"][0]["content"].startswith("our-index says Water boils")
