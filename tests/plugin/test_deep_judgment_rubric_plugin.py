"""Rubric deep judgment through pytest over real HTTP: ``--karenina-deep-judgment-rubric``,
in template_and_rubric and rubric_only, with and without ``-n 2``; its JUnit properties,
summary line, strict replay, HTML highlight and a conftest search tool.

The checkpoint is with_rubrics.jsonld (LLM traits Clarity, Accuracy and Completeness, regex
and callable traits). The scripted judge quotes each answer verbatim, except for the trait
Accuracy of rq001, where it quotes a sentence the answer never said.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.e2e.cases import RQ
from tests.e2e.scripting import endpoint_model, script_rubric
from tests.plugin.plugin_helpers import (
    copy_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    scripted,
)
from tests.plugin.test_deep_judgment_plugin import script_deep_judgment
from tests.plugin.test_rubric_plugin import properties
from tests.support.openai_rules import request_text
from tests.support.openai_server import OpenAIServer

CHECKPOINT = "with_rubrics.jsonld"
NODE = f"{CHECKPOINT}::rq00"
INVENTED = "BCL2 causes every known cancer."
NOT_GATED = (  # only the LLM traits decide rubric verdicts here
    "--karenina-rubric-gates=ContainsCitations off, ResponseLength off, HasCitations off, "
    "HasNumbers off"
)
_TRAIT = re.compile(r'<trait name="([^"]+)">')
_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)


def _excerpts(body: dict[str, Any]) -> str:
    text = request_text(body)
    trait, answer = _TRAIT.search(text), _ANSWER.search(text)
    assert trait is not None and answer is not None
    grounded = answer.group(1).strip().splitlines()[-1]  # the answer, not a trace header
    invented = trait.group(1) == "Accuracy" and grounded.startswith("BCL2")
    quote = INVENTED if invented else grounded
    return json.dumps({"excerpts": [{"text": quote, "confidence": "high"}]})


def _verdict(body: dict[str, Any]) -> str:
    trait = _TRAIT.search(request_text(body))
    assert trait is not None
    return json.dumps({"result": True} if trait.group(1) == "Accuracy" else {"score": 4})


def script_rubric_deep_judgment(server: OpenAIServer) -> None:
    """The judge's excerpt, reasoning and verdict replies for every trait of every answer."""
    server.add_rule(_excerpts, contains="You collect evidence", name="rubric excerpts")
    server.add_rule(
        "Evidence: quoted. Interpretation: fine. Conclusion: it has the trait.",
        contains="reasoning before you decide", name="rubric reasoning",
    )  # fmt: skip
    server.add_rule(_verdict, contains="You turn a grader's reasoning", name="rubric verdict")


def deep_args(pytester: pytest.Pytester, server: OpenAIServer) -> list[str]:
    script_rubric_deep_judgment(server)
    scripted(server, CHECKPOINT)
    path = copy_checkpoint(pytester, CHECKPOINT)
    return ["--karenina", str(path), *endpoint_args(server), NOT_GATED,
            "--karenina-deep-judgment-rubric=enable_all"]  # fmt: skip


def test_an_ungrounded_trait_fails_a_right_answer_in_template_and_rubric(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    export = pytester.path / "results.json"
    junit = pytester.path / "junit.xml"

    result = pytester.runpytest(
        *deep_args(pytester, openai_server), "--karenina-mode=template_and_rubric",
        f"--karenina-results={export}", f"--junitxml={junit}", *dist,
    )  # fmt: skip

    result.assert_outcomes(failed=3)  # rq002 and rq003 are wrong answers anyway
    result.stdout.fnmatch_lines([
        "*karenina: rubric deep judgment enable_all*",
        f'*deep judgment: no verbatim quote for rubric trait Accuracy after 2 excerpt retries;'
        f' rejected "{INVENTED}"*',
        "*rubric deep judgment: 3 results, 1 with rubric traits not quoted from the response"
        " (Accuracy 1)*",
    ])  # fmt: skip
    records = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    first = records[f"{RQ}1"]
    assert first["template"]["verify_result"] is False
    assert first["metadata"]["failure"]["stage"] == "DeepJudgmentRubricAutoFail"
    section = first["deep_judgment_rubric"]
    assert section["traits_without_valid_excerpts"] == ["Accuracy"]
    assert section["deep_judgment_rubric_scores"] == {"Clarity": 4, "Completeness": 4}
    assert section["total_traits_evaluated"] == 2  # Accuracy got no grade
    assert section["total_excerpt_retries"] == 2
    assert records[f"{RQ}2"]["rubric"]["llm_trait_scores"] == {
        "Clarity": 4, "Accuracy": True, "Completeness": 4,
    }  # fmt: skip
    props = properties(junit, "rq001")
    assert props["karenina.deep_judgment_rubric.traits_without_excerpts"] == "Accuracy"
    assert props["karenina.deep_judgment_rubric.model_calls"] == "9"  # 3 + 2 + 2 + 2 retries
    assert properties(junit, "rq002")["karenina.deep_judgment_rubric.traits"] == "3"


def test_in_rubric_only_the_ungrounded_trait_fails_the_rubric_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = pytester.runpytest(*deep_args(pytester, openai_server), "--karenina-mode=rubric_only")

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*rubric verdict: rubric_fail",
        "*deep judgment: no verbatim quote for rubric trait Accuracy after 2 excerpt retries;"
        f' rejected "{INVENTED}" (similarity 0.* < 0.80)',
        "*rubric gate: 1 of 3 gated traits failed",
        "*trait Accuracy (llm boolean): null, needs a verbatim quote of the answer; judge: "
        "'deep judgment: no valid quote after 2 excerpt retries'",
    ])  # fmt: skip
    assert "rubric_fail 1" in result.stdout.str()


def test_template_and_rubric_deep_judgment_together(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Both deep judgments in one template_and_rubric run: each section, both summary lines."""
    script_deep_judgment(openai_server, CHECKPOINT)
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        *deep_args(pytester, openai_server), "--karenina-mode=template_and_rubric",
        "--karenina-deep-judgment=full", f"--karenina-results={export}",
    )  # fmt: skip

    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([
        "*deep judgment: 3 results, 0 with attributes not quoted from the response",
        "*rubric deep judgment: 3 results, 1 with rubric traits not quoted from the response"
        " (Accuracy 1)",
    ])  # fmt: skip
    records = {r["metadata"]["question_id"]: r for r in json.loads(export.read_text())["results"]}
    first = records[f"{RQ}1"]
    assert first["deep_judgment"]["deep_judgment_performed"] is True
    assert first["deep_judgment"]["attributes_without_excerpts"] == []
    assert first["metadata"]["failure"]["stage"] == "DeepJudgmentRubricAutoFail"
    assert first["template"]["verify_result"] is False  # the template alone would pass


def test_a_recorded_rubric_deep_judgment_run_replays_offline(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    store = pytester.path / "calls.jsonl"
    args = [*deep_args(pytester, openai_server), "--karenina-mode=rubric_only",
            f"--karenina-replay-store={store}"]  # fmt: skip
    pytester.runpytest(*args, "--karenina-replay=record").assert_outcomes(passed=2, failed=1)
    openai_server.stop()

    replayed = pytester.runpytest(*args, "--karenina-replay=strict")

    replayed.assert_outcomes(passed=2, failed=1)  # a miss would be an error


@pytest.mark.subprocess
def test_the_html_report_highlights_rubric_quotes_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = pytester.path / "report.html"
    pytester.runpytest(
        *deep_args(pytester, openai_server), "--karenina-mode=rubric_only",
        f"--html={report}", "--self-contained-html",
    ).assert_outcomes(passed=2, failed=1)  # fmt: skip

    dom = rendered_dom(pytester, report)
    assert rendered_rows(dom, f"{NODE}1")
    row = dom.split(f'id="{NODE}1"', 1)[1].split('<tbody class="results-table-row')[0]
    assert 'data-attribute="rubric: Clarity"' in row
    assert ">BCL2 is an anti-apoptotic proto-oncogene.</mark>" in row
    assert "no verbatim quote for rubric trait Accuracy" in row


@pytest.mark.subprocess
def test_a_conftest_search_tool_rates_the_quotes_of_a_trait_that_searches(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """custom mode from a preset: only Clarity is deep-judged, with search on."""
    openai_server.add_rule(
        json.dumps({"excerpt_assessments": [
            {"excerpt_id": "Clarity-1", "hallucination_risk": "low", "justification": "ok"}
        ]}),
        contains=["<excerpt id=", "rubric-index says"], name="hallucination",
    )  # fmt: skip
    pytester.makeconftest(
        """
def pytest_karenina_search_tool(config, name):
    if name == "rubric-index":
        return lambda queries: [[{"title": "t", "content": "rubric-index says " + q, "url": "u"}]
                                for q in queries]
"""
    )
    plain = {"scores": {"Accuracy": True, "Completeness": 4}}
    script_rubric(openai_server, plain, contains="About 90 degrees", schema="TraitScoresReply")
    args = deep_args(pytester, openai_server)
    preset = pytester.path / "preset.json"
    preset.write_text(json.dumps({"config": {
        "answering_models": [endpoint_model(openai_server)],
        "parsing_models": [endpoint_model(openai_server)],
        "deep_judgment_rubric_mode": "custom",
        "deep_judgment_rubric_search_tool": "rubric-index",
        "deep_judgment_rubric_config": {"global": {"Clarity": {"search_enabled": True}}},
    }}))  # fmt: skip
    export = pytester.path / "results.json"
    report = pytester.path / "report.html"
    result = pytester.runpytest(
        *[a for a in args if not a.startswith("--karenina-deep-judgment-rubric")],
        f"--karenina-config={preset}", "--karenina-mode=rubric_only",
        f"--karenina-results={export}", "-k", "rq002", f"--html={report}",
        "--self-contained-html", "--karenina-html-trace=all",
    )  # fmt: skip

    result.assert_outcomes(passed=1, deselected=2)
    assert "hallucination risk: rubric: Clarity low" in rendered_dom(pytester, report)
    (record,) = json.loads(export.read_text())["results"]
    section = record["deep_judgment_rubric"]
    assert section["rubric_hallucination_risk_assessment"] == {
        "Clarity": {"overall_risk": "low", "per_excerpt_risks": ["low"]}
    }
    (quote,) = section["extracted_rubric_excerpts"]["Clarity"]
    assert quote["search_results"][0]["content"] == "rubric-index says About 90 degrees (194 °F)."
    assert section["trait_metadata"]["Clarity"]["stages_completed"] == [
        "excerpt_extraction", "hallucination_assessment", "reasoning_generation",
        "score_extraction",
    ]  # fmt: skip
    assert set(section["standard_rubric_scores"]) == {"Accuracy", "Completeness"}
