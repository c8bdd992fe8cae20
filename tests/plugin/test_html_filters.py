"""The HTML report at a glance, in headless Chromium: karenina's columns (question, reason,
expected and extracted value, model, verdict, score), what failed in red, the filter bar
(outcome category, model, flaky, models disagree, search), the folded verdict matrix, a log
pane only where something was captured, pytest-html's own controls, and the rows drawn a page
at a time.

Each run is small: two checkpoints (``multi_question.jsonld`` and three capitals) answered by
two models, ``old`` and ``new``, that disagree on the capital of Japan. A driver script added
to a copy of the report clicks and types as a reader would, once the page's scripts ran, and
writes what it saw into the page for the test to read from Chromium's DOM.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import script
from tests.helpers import DATA
from tests.plugin.plugin_helpers import (
    COUNTRIES,
    MULTI,
    capitals_checkpoint,
    copy_checkpoint,
    endpoint_args,
    rendered_dom,
)
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.subprocess  # Chromium

GOLD = "What is the chemical symbol for gold?"
LONG_GOLD = (
    f"{GOLD} Answer with the symbol alone, as the periodic table that hangs in every chemistry "
    "classroom prints it."
)
FAILING = f"{MULTI}::mq004[new]"
RED = "rgb(198, 40, 40)"
LOGGED = """
import logging

def pytest_runtest_call(item):
    if "mq002" in item.nodeid:
        logging.getLogger("karenina.demo").warning("a record the test logged")
"""
DRIVER = """<script>
document.addEventListener('DOMContentLoaded', () => {
  const shown = () => [...document.querySelectorAll('#results-table tbody.results-table-row')]
    .map((body) => body.id)
  const click = (selector) => document.querySelector(selector).click()
  const type = (text) => {
    const box = document.querySelector('#karenina-filters input[type=search]')
    box.value = text
    box.dispatchEvent(new Event('input', { bubbles: true }))
  }
  const color = (selector) => getComputedStyle(document.querySelector(selector)).color
  const found = {}
  try {
    STEPS
  } catch (error) {
    found.error = String(error)
  }
  const out = document.createElement('pre')
  out.id = 'driver-out'
  out.textContent = JSON.stringify(found)
  document.body.append(out)
})
</script>"""


def two_models(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> Path:
    """Run both checkpoints with the models ``old`` and ``new`` into ``report.html``."""
    multi = copy_checkpoint(pytester)
    multi.write_text(multi.read_text().replace(GOLD, LONG_GOLD))
    capitals = capitals_checkpoint(pytester.path)
    for country, capital in COUNTRIES.values():
        wrong = "Osaka" if country == "Japan" else capital
        server.add_rule(f"It is {capital}.", model="old", structured=False, last_contains=country)
        server.add_rule(f"It is {wrong}.", model="new", structured=False, last_contains=country)
    for city in ("Paris", "Rome", "Tokyo", "Osaka"):
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    script(server, CHECKPOINT_CASES[MULTI])
    report = pytester.path / "report.html"
    result = pytester.runpytest(
        "--karenina", str(multi), "--karenina", str(capitals), "--karenina-endpoint",
        server.base_url, "--karenina-answering-model", "old", "--karenina-answering-model", "new",
        "--karenina-parsing-model", "judge", "-p", "no:cacheprovider", f"--html={report}",
        "--self-contained-html", *extra,
    )  # fmt: skip
    result.assert_outcomes(passed=9, failed=5, skipped=2)
    return report


def driven(pytester: pytest.Pytester, report: Path, steps: str) -> tuple[str, dict[str, Any]]:
    """Chromium's DOM of a copy of ``report`` once ``steps`` (JavaScript filling ``found``)
    ran after the page's scripts; and ``found``."""
    page = report.with_name(f"driven-{len(list(report.parent.glob('driven-*')))}.html")
    text = report.read_text(encoding="utf-8")
    head, tail = text.rsplit("</body>", 1)
    page.write_text(head + DRIVER.replace("STEPS", steps) + "</body>" + tail, encoding="utf-8")
    dom = rendered_dom(pytester, page)
    out = re.search(r'<pre id="driver-out">(.*?)</pre>', dom, re.DOTALL)
    assert out is not None, f"the driver did not finish: {dom[-2000:]}"
    found: dict[str, Any] = json.loads(html.unescape(out.group(1)))
    assert "error" not in found, found["error"]
    return dom, found


def row_dom(dom: str, nodeid: str) -> str:
    """The rendered table body of ``nodeid``, whole (its extras hold tables of their own)."""
    start = f' id="{nodeid}"><tr class="collapsible"'
    assert dom.count(start) == 1, nodeid
    return dom.split(start, 1)[1].split('<tbody class="', 1)[0]


def cell(body: str, column: str) -> str:
    found = re.search(rf'<td class="col-{column}">(.*?)</td>', body, re.DOTALL)
    assert found is not None, f"no {column} cell in {body[:500]}"
    return found.group(1)


def test_columns_say_why_at_a_glance_with_failures_in_red(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    pytester.makeconftest(LOGGED)
    report = two_models(pytester, openai_server)
    heads = ["Result", "Test", "Question", "Reason", "Expected \u2192 got", "Model", "Verdict",
             "Score", "Rubric", "Flaky", "Duration", "Links"]  # fmt: skip
    dom, found = driven(pytester, report, f"""
      const row = '[id="{FAILING}"]'
      found.heads = [...document.querySelectorAll('#results-table-head th')]
        .map((th) => th.textContent)
      found.got = color(row + ' .col-kexpected .karenina-got')
      found.verdict = color(row + ' .col-kverdict')
      found.field = color(row + ' table.karenina-fields tr.karenina-failing td')
      found.differs = color(row + ' table.karenina-fields strong.karenina-fail')
      found.matrix = color('.karenina-comparison strong.karenina-fail')
      found.reason = document.querySelector(row + ' .col-kreason').textContent
      found.extrasReason = document.querySelector(row + ' .karenina-reason').textContent
      found.hover = document.querySelector(row + ' .col-kquestion span').title
    """)  # fmt: skip
    assert found["heads"] == heads
    body = row_dom(dom, FAILING)
    question = cell(body, "kquestion")
    assert question.startswith(f'<span title="{LONG_GOLD}">{GOLD} Answer with the symbol')
    assert question.endswith("\u2026</span>") and found["hover"] == LONG_GOLD
    # The reason is the item's one line, the same as the explanation's first line.
    assert "'Ag'" in found["reason"]
    assert found["extrasReason"] == f"Reason {found['reason']}"
    expected = cell(body, "kexpected")
    assert "symbol: <span class=\"karenina-expected\">'Au'</span> \u2192 " in expected
    assert "<span class=\"karenina-got\">'Ag'</span>" in expected
    assert (cell(body, "kmodel"), cell(body, "kverdict")) == ("new", "verify_fail")
    assert "n/a (own verify())" in cell(body, "kscore")
    # What failed is red, not pytest-html's grey.
    for part in ("got", "verdict", "field", "differs", "matrix"):
        assert found[part] == RED, (part, found[part])

    # The log pane only where something was captured: not under a failure without logs.
    assert 'class="logwrapper"' not in body
    logged = row_dom(dom, f"{MULTI}::mq002[new]")
    assert 'class="logwrapper"' in logged and "a record the test logged" in logged
    assert "No log output captured." not in dom


def test_filters_outcome_model_search_and_models_disagree(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = two_models(pytester, openai_server)
    bar = "#karenina-filters"
    _, found = driven(pytester, report, f"""
      found.all = shown()
      const reason = document.querySelector('[id="{MULTI}::mq002[old]"] .col-kreason').textContent
      click('{bar} input[data-kcategory="pass"]'); found.failing = shown()
      click('{bar} input[data-kcategory="pass"]')
      click('{bar} input[data-kmodel="new"]'); found.old = shown()
      click('{bar} input[data-kmodel="new"]')
      click('{bar} input[data-kflag="disagree"]'); found.disagree = shown()
      found.status = document.querySelector('{bar} .karenina-status').textContent
      click('{bar} input[data-kflag="disagree"]')
      type('is Ag.'); found.answer = shown()
      type('GOLD new'); found.both = shown()
      type(reason); found.reason = shown()
      type(''); found.cleared = shown()
      found.matrixOpen = document.querySelector('details.karenina-matrix').open
      found.matrixSays = document.querySelector('details.karenina-matrix > summary').textContent
    """)  # fmt: skip
    skipped = {f"{MULTI}::mq005[old]::setup", f"{MULTI}::mq005[new]::setup"}  # no verdict
    rows = {f"{MULTI}::mq00{n}[{m}]" for n in range(1, 5) for m in ("old", "new")} | skipped
    rows |= {f"capitals.jsonld::q{n}[{m}]" for n in range(1, 4) for m in ("old", "new")}
    assert set(found["all"]) == rows and found["cleared"] == found["all"]
    failing = {f"{MULTI}::mq00{n}[{m}]" for n in (2, 4) for m in ("old", "new")}
    assert set(found["failing"]) == failing | {"capitals.jsonld::q3[new]"} | skipped
    assert set(found["old"]) == {row for row in rows if "[old]" in row} | skipped
    assert set(found["disagree"]) == {"capitals.jsonld::q3[old]", "capitals.jsonld::q3[new]"}
    assert found["status"] == "2 of 16 items match"
    # The search looks in the answer, the question, the test id and the reason.
    assert set(found["answer"]) == {f"{MULTI}::mq004[old]", FAILING}
    assert found["both"] == [FAILING]
    assert set(found["reason"]) == {f"{MULTI}::mq002[old]", f"{MULTI}::mq002[new]"}
    # The verdict matrix is folded, its summary says what is inside.
    assert found["matrixOpen"] is False
    assert found["matrixSays"] == "verdict matrix: 7 questions, the models disagree on 1"


def test_the_flaky_filter_keeps_the_questions_whose_replicates_disagree(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = capitals_checkpoint(pytester.path, {"q1": ("France", "Paris"), "q2": ("Italy", "Rome")})
    for city in ("Paris", "Lyon", "Paris"):  # q1 flips
        openai_server.add_rule(f"It is {city}.", structured=False, times=1, last_contains="France")
    openai_server.add_rule("It is Rome.", structured=False, last_contains="Italy")
    for city in ("Paris", "Lyon", "Rome"):
        openai_server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    report = pytester.path / "report.html"
    pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--karenina-replicates=3",
        "--karenina-replicate-policy=majority", f"--html={report}", "--self-contained-html",
    ).assert_outcomes(passed=2)  # fmt: skip

    _, found = driven(pytester, report, """
      found.all = shown()
      found.disagree = document.querySelector('#karenina-filters input[data-kflag="disagree"]')
      click('#karenina-filters input[data-kflag="flaky"]'); found.flaky = shown()
    """)  # fmt: skip
    assert set(found["all"]) == {"capitals.jsonld::q1", "capitals.jsonld::q2"}
    assert found["flaky"] == ["capitals.jsonld::q1"]
    assert found["disagree"] is None  # one answering model: nothing to disagree


def test_pytest_htmls_outcome_boxes_sort_and_row_clicks_still_work(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = two_models(pytester, openai_server)
    passing = f'[id="{MULTI}::mq001[old]"]'
    _, found = driven(pytester, report, f"""
      found.first = shown()
      click('input[data-test-result="passed"]'); found.unpassed = shown()
      click('input[data-test-result="passed"]')
      found.folded = document.querySelector('{passing} .extras-row').className
      click('{passing} .col-testId')
      found.opened = document.querySelector('{passing} .extras-row').className
      click('#results-table-head .sortable[data-column-type="testId"]'); found.byId = shown()
      click('#results-table-head .sortable[data-column-type="testId"]'); found.back = shown()
      click('#hide_all_details')
      found.hidden = document.querySelectorAll('#results-table .extras-row:not(.hidden)').length
    """)  # fmt: skip
    failing = {f"{MULTI}::mq00{n}[{m}]" for n in (2, 4) for m in ("old", "new")}
    assert set(found["first"][:5]) == failing | {"capitals.jsonld::q3[new]"}  # failures first
    assert len(found["unpassed"]) == 7 and all("q1" not in r for r in found["unpassed"])
    assert "hidden" in found["folded"] and "hidden" not in found["opened"]
    assert found["byId"] == sorted(found["first"]) and found["back"] == found["byId"][::-1]
    assert found["hidden"] == 0


def test_a_large_report_draws_a_page_at_a_time(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    shutil.copy(DATA / MULTI, pytester.path / MULTI)
    script(openai_server, CHECKPOINT_CASES[MULTI])
    report = pytester.path / "report.html"
    pytester.runpytest(
        "--karenina", str(pytester.path / MULTI), *endpoint_args(openai_server),
        f"--html={report}", "--self-contained-html",
    ).assert_outcomes(passed=2, failed=2, skipped=1)  # fmt: skip
    many = multiplied(report, 50)  # 250 rows

    dom, found = driven(pytester, many, """
      found.first = shown().length
      click('#results-table tbody.karenina-more button'); found.second = shown().length
      click('#karenina-filters input[data-kcategory="pass"]'); found.unpassed = shown().length
      found.status = document.querySelector('#karenina-filters .karenina-status').textContent
    """)  # fmt: skip
    assert (found["first"], found["second"]) == (100, 200)
    assert found["unpassed"] == 100 and found["status"] == "150 of 250 items match"
    assert "show 50 more of the 50 left" in dom


def multiplied(report: Path, times: int) -> Path:
    """A copy of ``report`` whose data holds each row ``times`` times (under other ids)."""
    text = report.read_text(encoding="utf-8")
    blob = re.search(r'data-jsonblob="([^"]*)"', text)
    assert blob is not None
    data = json.loads(html.unescape(blob.group(1)))
    data["tests"] = {
        f"{nodeid}-{n}": [{**row, "testId": f"{row['testId']}-{n}"} for row in rows]
        for n in range(times)
        for nodeid, rows in data["tests"].items()
    }
    copy = report.with_name("many.html")
    swapped = html.escape(json.dumps(data))
    copy.write_text(text[: blob.start(1)] + swapped + text[blob.end(1) :], encoding="utf-8")
    return copy
