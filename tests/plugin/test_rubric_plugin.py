"""Rubrics through pytest: rubric_only verdicts from trait gates, the template_and_rubric gate,
and rubric results in the failure text, JUnit, the terminal summary and pytest-html.

The checkpoint is the fixture with_rubrics.jsonld (global LLM, regex and callable traits);
its callable traits hold Python source instead of a pickle and can never be loaded.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import RQ
from tests.e2e.scripting import script_rubric
from tests.plugin.plugin_helpers import (
    copy_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    scripted,
)
from tests.plugin.test_html import extras_html, report_data, row
from tests.support.openai_server import OpenAIServer

CHECKPOINT = "with_rubrics.jsonld"
UNLOADABLE = "ContainsCitations off, ResponseLength off"
ANSWERS = {  # must match tests/e2e/cases.py
    f"{RQ}1": "BCL2 is an anti-apoptotic proto-oncogene.",
    f"{RQ}2": "About 90 degrees (194 °F).",
    f"{RQ}3": "The capital of France is Lyon.",
}
JUDGE: dict[str, dict[str, Any]] = {
    f"{RQ}1": {"scores": {"Clarity": 5, "Accuracy": True, "Completeness": 3}},
    f"{RQ}2": {
        "scores": {"Clarity": 4, "Accuracy": False, "Completeness": 2},
        "reasoning": {"Accuracy": "Water boils at 100 C, not 90."},
    },
    f"{RQ}3": {"scores": {"Clarity": 4, "Accuracy": False}},  # Completeness missing
}
NODE = f"{CHECKPOINT}::rq00"


def run(
    pytester: pytest.Pytester, server: OpenAIServer, *extra: str
) -> tuple[pytest.RunResult, Path]:
    for question_id, reply in JUDGE.items():
        script_rubric(server, reply, contains=ANSWERS[question_id], schema="TraitScoresReply")
    scripted(server, CHECKPOINT)
    path = copy_checkpoint(pytester, CHECKPOINT)
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(server), f"--junitxml={junit}", *extra
    )
    return result, junit


def properties(junit: Path, name: str) -> dict[str, str]:
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.get("name") == name:
            return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
    raise AssertionError(f"no testcase {name}")


def test_rubric_only_with_default_gates_errors_items_whose_gated_callables_cannot_load(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result, _ = run(pytester, openai_server, "--karenina-mode", "rubric_only")
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines([
        "*rubric traits that decide the verdict could not be measured:*",
        "*trait ContainsCitations (callable boolean): no value (callable trait: callable_code"
        " holds Python source text*",
        f"*to decide without them: --karenina-rubric-gates='{UNLOADABLE}'",
    ])  # fmt: skip
    assert "error:rubric 3" in result.stdout.str()


def test_rubric_only_verdicts_come_from_the_gated_traits(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    gates = f"{UNLOADABLE}, HasCitations off"
    result, junit = run(
        pytester, openai_server, "--karenina-mode", "rubric_only",
        f"--karenina-rubric-gates={gates}", *dist,
    )  # fmt: skip
    # rq001 passes every gate; rq002 is inaccurate; rq003 lacks a gated score.
    result.assert_outcomes(passed=1, failed=1, errors=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*rubric verdict: rubric_fail*",
        "*rubric gate: 2 of 4 gated traits failed*",
        "*trait Accuracy (llm boolean): false, needs == true; judge: 'Water boils at 100 C,"
        " not 90.'*",
        "*trait Completeness (llm score 1-5): 2, needs >= 3 (of 1-5)*",
    ])  # fmt: skip
    assert "trait Completeness (llm score 1-5): no value (missing from the judge's reply)" in out
    # Terminal summary: per answering model, per trait.
    result.stdout.fnmatch_lines([
        "rubric traits:", "  test-model:",
        "    Clarity (llm score 1-5): mean 4.33 (n=3); pass 3/3",
        "    Accuracy (llm boolean): mean 0.33 (n=3); pass 1/3",
        "    ContainsCitations (callable boolean): no value 3",
    ])  # fmt: skip
    props = properties(junit, "rq001")
    assert props["karenina.rubric.Clarity"] == "5"
    assert props["karenina.rubric.HasNumbers"] == "True"
    assert props["karenina.rubric_gates"] == "4/4"
    assert props["karenina.category"] == "pass"
    assert properties(junit, "rq002")["karenina.category"] == "rubric_fail"


def test_template_and_rubric_verdict_is_the_template_unless_the_rubric_gate_is_on(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    gates = f"--karenina-rubric-gates={UNLOADABLE}, HasCitations off"
    result, junit = run(pytester, openai_server, "--karenina-mode", "template_and_rubric", gates)
    result.assert_outcomes(passed=1, failed=2)  # the template verdicts of tests/e2e/cases.py
    assert properties(junit, "rq001")["karenina.rubric.Accuracy"] == "True"

    gated, _ = run(
        pytester, openai_server, "--karenina-mode", "template_and_rubric", gates,
        "--karenina-rubric-gate",
    )  # fmt: skip
    # rq001 passes both; rq002 fails its template (and its rubric); rq003 has an unmeasured
    # gated trait, which is an error even though its template verdict is false.
    gated.assert_outcomes(passed=1, failed=1, errors=1)
    gated.stdout.fnmatch_lines(["*verify_result False*", "*rubric gate: 2 of 4 gated traits*"])


def test_bad_gate_rules_are_usage_errors(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester, CHECKPOINT)
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server),
        "--karenina-rubric-gates=Clarity=>3",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-rubric-gates: cannot read rubric gate 'Clarity=>3'*"])


@pytest.mark.subprocess
def test_html_report_has_a_rubric_column_and_trait_tables(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = pytester.path / "report.html"
    gates = f"--karenina-rubric-gates={UNLOADABLE}, HasCitations off"
    result, _ = run(
        pytester, openai_server, "--karenina-mode", "rubric_only", gates, f"--html={report}",
        "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1, errors=1)
    data = report_data(report)
    failing, passing = row(data, f"{NODE}2"), row(data, f"{NODE}1")
    assert (passing["krubric"], failing["krubric"]) == ("4/4 traits", "2/4 traits")
    assert failing["kverdict"] == "rubric_fail"
    table = extras_html(failing)
    assert '<table class="karenina-rubric">' in table
    assert (
        "<td>Accuracy</td><td>llm boolean</td><td>false</td><td>== true</td>"
        '<td><strong class="karenina-fail">FAIL</strong></td>'
        "<td>Water boils at 100 C, not 90.</td>"
    ) in table
    assert "<td>ContainsCitations</td><td>callable boolean</td><td>null</td><td>-</td>" in table

    dom = rendered_dom(pytester, report)
    rendered = rendered_rows(dom, f"{NODE}2")
    assert len(rendered) == 1, dom[-3000:]
    assert '<td class="col-krubric">2/4 traits</td>' in rendered[0]
    assert '<table class="karenina-rubric">' in rendered[0]
    assert "<td>Water boils at 100 C, not 90.</td>" in rendered[0]


def test_a_gate_on_an_unknown_trait_errors_its_checkpoint_listing_the_known_ones(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    path = copy_checkpoint(pytester, CHECKPOINT)
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server),
        "--karenina-rubric-gates=Completness>=4, Clarity>=3", *dist,
    )  # fmt: skip

    # A collection error stops the run (xdist reports it as a failed run).
    assert result.ret in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.TESTS_FAILED)
    output = result.stdout.str()
    assert "rubric gate names an unknown trait: Completness>=4. Known traits: " in output
    assert "Completeness" in output and "Clarity>=3" not in output.split("Known")[0]
    assert openai_server.chat_requests == []
