"""The pytest-html report: karenina columns, summary and extras; escaping; headless rendering."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.report.html import render_extras
from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import Case, script
from tests.plugin.plugin_helpers import (
    MULTI,
    copy_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    screenshot,
    scripted,
)
from tests.support.openai_server import OpenAIServer

FAILING = f"{MULTI}::mq004"
PASSING = f"{MULTI}::mq001"
SCRIPT = "<script>alert('k')</script>"


def run_html(
    pytester: pytest.Pytester, server: OpenAIServer, path: Path, *extra: str
) -> tuple[pytest.RunResult, Path]:
    report = pytester.path / "report.html"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(server), f"--html={report}",
        "--self-contained-html", *extra,
    )  # fmt: skip
    return result, report


def report_data(report: Path) -> dict[str, Any]:
    """The JSON blob pytest-html renders the results table from."""
    match = re.search(r'data-jsonblob="([^"]*)"', report.read_text(encoding="utf-8"))
    assert match is not None, "no data blob in the report"
    data: dict[str, Any] = json.loads(html.unescape(match.group(1)))
    return data


def row(data: dict[str, Any], nodeid: str) -> dict[str, Any]:
    rows = [r for r in data["tests"][nodeid] if "::setup" not in r["testId"]]
    assert len(rows) == 1, rows
    found: dict[str, Any] = rows[0]
    return found


def extras_html(entry: dict[str, Any]) -> str:
    return "".join(e["content"] for e in entry["extras"] if e["format_type"] == "html")


def test_report_has_karenina_columns_rows_and_summary(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    scripted(openai_server)
    result, report = run_html(pytester, openai_server, copy_checkpoint(pytester), *dist)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    text = report.read_text(encoding="utf-8")
    for column, title in (("kmodel", "Model"), ("kverdict", "Verdict"), ("kscore", "Score")):
        assert f'<th class="sortable" data-column-type="{column}">{title}</th>' in text
    assert 'class="karenina-summary"' in text
    assert "pass rate 50.0% (2/4 items), 95% CI 15.0%-85.0%" in text
    assert "<td>test-model</td><td>50.0%</td><td>15.0%-85.0%</td><td>2/4</td>" in text

    data = report_data(report)
    failing, passing = row(data, FAILING), row(data, PASSING)
    assert (failing["kmodel"], failing["kverdict"]) == ("test-model", "verify_fail")
    assert (passing["kmodel"], passing["kverdict"]) == ("test-model", "pass")
    # every row has the same number of cells, the skipped one included (empty cells)
    skipped = data["tests"][f"{MULTI}::mq005"][0]
    widths = {len(r["resultsTableRow"]) for rows in data["tests"].values() for r in rows}
    assert widths == {12}
    assert '<td class="col-kmodel"></td>' in skipped["resultsTableRow"]

    fields = extras_html(failing)
    assert '<table class="karenina-fields">' in fields
    assert "<td>symbol</td><td>&#x27;Au&#x27;</td><td>&#x27;Ag&#x27;</td>" in fields
    assert "The symbol for gold is Ag." in fields  # failed items carry the trace by default
    assert "chemical symbol for gold" in fields
    assert "raw response" not in extras_html(passing)


def test_run_without_pytest_html(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-p", "no:html"
    )
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines(["pass rate 50.0% (2/4 items), 95% CI 15.0%-85.0%"])


def test_llm_and_checkpoint_text_is_escaped(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    question = "What is the chemical symbol for gold?"
    path.write_text(path.read_text().replace(question, f"{question} {SCRIPT}"))
    cases = [c for c in CHECKPOINT_CASES[MULTI] if not c.question_id.endswith("mq004")]
    answer = f"The symbol for gold is {SCRIPT}."
    cases.append(Case("mq004", "chemical symbol for gold", answer, {"symbol": SCRIPT}, False))
    script(openai_server, cases)
    result, report = run_html(pytester, openai_server, path)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    extras = extras_html(row(report_data(report), FAILING))
    escaped = html.escape(SCRIPT)
    assert "<script" not in extras
    assert f"{html.escape(question)} {escaped}" in extras  # the question
    assert f"is {escaped}." in extras  # the raw response
    assert html.escape(repr(SCRIPT)) in extras  # the parsed value


def test_trace_none_leaves_out_raw_responses(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result, report = run_html(pytester, openai_server, path, "--karenina-html-trace=none")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    extras = extras_html(row(report_data(report), FAILING))
    assert '<table class="karenina-fields">' in extras
    assert "raw response" not in extras
    assert "The symbol for gold is Ag." not in extras


def test_trace_all_includes_passing_raw_responses(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result, report = run_html(pytester, openai_server, path, "--karenina-html-trace=all")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert "Water boils at 100 °C." in extras_html(row(report_data(report), PASSING))


def test_extras_list_every_note_escaped() -> None:
    payload: dict[str, Any] = {
        "question": "Q <b>?", "category": "verify_fail", "answering_model": "m<1>",
        "replicate": 2, "input_tokens": 3, "output_tokens": 4,
        "summaries": [{
            "category": "abstained", "verify_result": False, "granular_score": 0.25,
            "parsing_model": "judge", "deciding_stage": "AbstentionCheck",
            "fields": [{"field": "n", "expected": [1, 2], "parsed": None,
                        "primitive": None, "passed": None},
                       {"field": "s", "expected": "a", "parsed": "b",
                        "primitive": "Exact<>", "passed": False}],
            "regex": {"re<x>": False}, "overrides": ["forced <false>"],
            "abstention_reasoning": "declined & refused", "sufficiency_reasoning": None,
            "error": "boom <err>", "input_tokens": 3, "output_tokens": 4, "raw_response": None,
        }],
        "results": [{"template": {"raw_llm_response": "--- AI Message ---\n<i>no</i>"}}],
    }  # fmt: skip
    with_trace = render_extras(payload, include_trace=True)
    assert "<td>n</td><td>[1, 2]</td><td>null</td><td>-</td>" in with_trace
    assert '<td>Exact&lt;&gt;</td><td><strong class="karenina-fail">FAIL</strong>' in with_trace
    for text in ("re&lt;x&gt;", "forced &lt;false&gt;", "declined &amp; refused",
                 "boom &lt;err&gt;", "Q &lt;b&gt;?", "m&lt;1&gt;", "replicate 2",
                 "granular score 0.25", "&lt;i&gt;no&lt;/i&gt;"):  # fmt: skip
        assert text in with_trace
    assert "<pre" not in render_extras(payload, include_trace=False)
    payload["summaries"].append({**payload["summaries"][0], "category": "pass"})
    assert "<strong>Result 2/2: </strong>pass" in render_extras(payload, include_trace=False)


@pytest.mark.subprocess
def test_failing_fields_table_renders_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    result, report = run_html(pytester, openai_server, copy_checkpoint(pytester))
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    dom = rendered_dom(pytester, report)
    failing = rendered_rows(dom, FAILING)
    assert len(failing) == 1, dom[-3000:]
    body = failing[0]
    assert '<table class="karenina-fields">' in body
    assert "<td>symbol</td><td>'Au'</td><td>'Ag'</td>" in body
    assert '<td class="col-kverdict">verify_fail</td>' in body
    extras_row = re.search(r'<tr class="([^"]*extras-row[^"]*)"', body)
    assert extras_row is not None and "hidden" not in extras_row.group(1)
    # The model's answer is open in the failing row, no click needed.
    row_dom = dom.split(f'id="{FAILING}"', 1)[1].split('<tbody class="results-table-row', 1)[0]
    assert '<details class="karenina-trace" open="">' in row_dom
    assert "The symbol for gold is Ag." in row_dom
    picture = screenshot(pytester, report)
    assert picture.startswith(b"\x89PNG\r\n\x1a\n") and len(picture) > 20_000


def test_report_title_environment_score_reasons_and_open_answers(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    result, report = run_html(pytester, openai_server, copy_checkpoint(pytester))
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    text = report.read_text(encoding="utf-8")
    data = report_data(report)

    assert f"karenina: {MULTI}" in text  # the title
    environment = data["environment"]
    assert environment["Karenina checkpoints"] == MULTI
    assert environment["Karenina mode"] == "template_only"
    assert environment["Answering models"] == "test-model"
    assert environment["Endpoint"] == openai_server.base_url.split("//")[1].split("/")[0]
    assert "test-key" not in json.dumps(environment)
    failing = row(data, FAILING)
    # a classic template decides with its own verify(): no granular score, and the cell says so
    assert "n/a (own verify())" in failing["kscore"]
    assert '<details class="karenina-trace" open>' in extras_html(failing)
    assert "<td>symbol</td><td>&#x27;Au&#x27;</td><td>&#x27;Ag&#x27;</td><td>-</td>" in (
        extras_html(failing)
    )
    assert '<strong class="karenina-fail">differs</strong>' in extras_html(failing)
    # Nothing was captured: no log pane (the Reason column and the extras say why it failed).
    assert failing["log"] == ""
    assert "symbol: &#x27;Ag&#x27; != &#x27;Au&#x27;" in failing["kreason"]


def test_an_items_duration_is_its_pipelines_not_its_wait(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    openai_server.set_latency(0.2)  # two calls per question: at least 0.4 s per pipeline
    pytester.makeconftest(
        """
        def pytest_runtest_logreport(report):
            if report.when == "setup" and report.passed:
                print(f"SETUP {report.nodeid.rsplit(':', 1)[-1]} {report.duration:.2f}")
        """
    )
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-s")
    result.assert_outcomes(passed=2, failed=2, skipped=1)

    found = re.findall(r"SETUP (mq\d+) ([0-9.]+)", result.stdout.str())
    durations = {name: float(seconds) for name, seconds in found}
    # The pipelines ran together before the loop reached most items; each still shows its own.
    assert sorted(durations) == ["mq001", "mq002", "mq003", "mq004"]
    assert min(durations.values()) >= 0.35, durations


def test_a_checkpoint_file_name_with_markup_is_escaped_in_the_test_id_cell(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    # pytest-html puts the node id into its cell as it is, and the table is drawn with
    # innerHTML: a file name with markup would run in the reader's browser.
    scripted(openai_server)
    named = pytester.path / "<img src=x onerror=alert(1)>.jsonld"
    copy_checkpoint(pytester).rename(named)
    result, report = run_html(pytester, openai_server, named)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    cells = [cell for rows in report_data(report)["tests"].values() for r in rows
             for cell in r["resultsTableRow"] if 'class="col-testId"' in cell]  # fmt: skip
    assert len(cells) >= 5
    assert all("<img" not in cell and "&lt;img src=x" in cell for cell in cells), cells[:2]
