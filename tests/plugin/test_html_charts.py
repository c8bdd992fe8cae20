"""The HTML report's charts, in headless Chromium at 1400 px and at 400 px: pass rate per
model with whiskers, outcome categories, the paired comparison, granular scores, cost per model
and per stage, a rubric trait's values; each names itself for screen readers, stays inside
the window, and is there without JavaScript.

The run: three capitals answered by ``old`` and ``new`` (``new`` names Osaka for Japan), a
template of two verified fields (capital, country: ``new``'s Japan item scores 0.5), a global
rubric with an LLM score trait, and a price table for both models and the judge.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.rubrics.traits import LLMRubricTrait, Rubric
from tests.e2e.scripting import script_rubric
from tests.plugin.plugin_helpers import CHROMIUM, COUNTRIES
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.subprocess  # Chromium

TEMPLATE = """from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import ExactMatch


class Answer(BaseAnswer):
    capital: str = VerifiedField(
        description="The capital city named in the response",
        ground_truth="{capital}",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    country: str = VerifiedField(
        description="The country named in the response",
        ground_truth="{country}",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
"""
NEW = 'new <b>"model"</b>'
"""The second model's name carries markup: the charts must show it as text."""
PRICES = f"old = 1.0 2.0\n{NEW} = 3.0 4.0\njudge = 0.5 1.0\n"
CHART_KEYS = {
    "karenina-chart-pass-rate", "karenina-chart-outcomes", "karenina-chart-comparison",
    "karenina-chart-scores", "karenina-chart-cost-model", "karenina-chart-cost-stage",
    "karenina-chart-trait-0",
}  # fmt: skip
DRIVER = """<script>
window.addEventListener('load', () => {
  const found = {width: window.innerWidth, charts: []}
  const section = document.querySelector('section.karenina-charts')
  found.section = section && [section.scrollWidth, section.clientWidth]
  for (const figure of document.querySelectorAll('figure.karenina-chart')) {
    const svg = figure.querySelector('svg')
    const ids = (svg.getAttribute('aria-labelledby') || '').split(' ')
    const named = ids.map((id) => document.getElementById(id)?.textContent || null)
    const box = svg.getBoundingClientRect()
    const table = figure.querySelector('.karenina-sr-only')
    const hidden = table && table.getBoundingClientRect()
    found.charts.push({
      key: ids[0].replace(/-title$/, ''), role: svg.getAttribute('role'), named,
      left: box.left, right: box.right, width: box.width, height: box.height,
      caption: figure.querySelector('figcaption').textContent,
      table: table && table.textContent, tableSize: hidden && [hidden.width, hidden.height],
      texts: [...svg.querySelectorAll('text')].map((t) => t.textContent),
    })
  }
  const out = document.createElement('pre')
  out.id = 'driver-out'
  out.textContent = JSON.stringify(found)
  document.body.append(out)
})
</script>"""


FRAME = """<!doctype html><html><body style="margin: 0">
<iframe id="report" src="{page}" style="width: {width}px; height: 1800px; border: 0"></iframe>
<script>
window.addEventListener('load', () => {{
  const out = document.createElement('pre')
  out.id = 'frame-out'
  out.textContent = document.getElementById('report').contentDocument
    .getElementById('driver-out')?.textContent || 'null'
  document.body.append(out)
}})
</script></body></html>"""
"""A window exactly ``width`` px wide: headless Chromium's own windows are 500 px at least."""


def chromium(pytester: pytest.Pytester, page: Path, width: int, *args: str) -> str:
    """Chromium's DOM of ``page`` shown in a frame ``width`` px wide (``--dump-dom``), or
    what ``args`` ask for (``--screenshot``)."""
    binary = shutil.which("chromium") or shutil.which(CHROMIUM)
    if binary is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    frame = page.with_name(f"frame-{width}-{page.name}")
    frame.write_text(FRAME.format(page=page.name, width=width), encoding="utf-8")
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--virtual-time-budget=5000", "--hide-scrollbars",
         "--allow-file-access-from-files", f"--window-size={max(width, 500)},1800",
         f"--user-data-dir={pytester.path / 'chromium-profile'}",
         *(args or ["--dump-dom"]), frame.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip


def measured(pytester: pytest.Pytester, report: Path, width: int) -> dict[str, Any]:
    """What the driver saw of the charts in a copy of ``report`` at ``width`` px."""
    page = report.with_name(f"driven-{report.name}")
    head, tail = report.read_text(encoding="utf-8").rsplit("</body>", 1)
    page.write_text(head + DRIVER + "</body>" + tail, encoding="utf-8")
    dom = chromium(pytester, page, width)
    out = re.search(r'<pre id="frame-out">(.*?)</pre>', dom, re.DOTALL)
    assert out is not None, f"the frame did not finish: {dom[-2000:]}"
    found: dict[str, Any] = json.loads(html.unescape(out.group(1)))
    assert found is not None, "the driver did not finish"
    return found


def checkpoint(directory: Path) -> Path:
    rubric = Rubric(
        llm_traits=[LLMRubricTrait(name="Clarity", kind="score", min_score=1, max_score=5)]
    )
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=TEMPLATE.format(capital=capital, country=country), finished=True)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions, global_rubric=rubric), path)
    return path


def run(pytester: pytest.Pytester, server: OpenAIServer) -> Path:
    clarity = {"France": 5, "Italy": 4, "Japan": 2}
    for country, capital in COUNTRIES.values():
        wrong = "Osaka" if country == "Japan" else capital
        for model, city in (("old", capital), (NEW, wrong)):
            answer = f"It is {city}, in {country}."
            script_rubric(server, {"scores": {"Clarity": clarity[country]}}, contains=answer,
                          schema="TraitScoresReply")  # fmt: skip
            server.add_rule(answer, model=model, structured=False, last_contains=country)
            server.add_rule({"capital": city, "country": country}, structured=True,
                            contains=answer)  # fmt: skip
    prices = pytester.path / "prices.txt"
    prices.write_text(PRICES, encoding="utf-8")
    report = pytester.path / "report.html"
    result = pytester.runpytest(
        "--karenina", str(checkpoint(pytester.path)), "--karenina-endpoint", server.base_url,
        "--karenina-answering-model", "old", "--karenina-answering-model", NEW,
        "--karenina-parsing-model", "judge", "--karenina-mode", "template_and_rubric",
        f"--karenina-prices={prices}", "-p", "no:cacheprovider", f"--html={report}",
        "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(passed=5, failed=1)
    return report


def test_charts_at_1400_and_400_px_with_text_alternatives(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = run(pytester, openai_server)
    wide = measured(pytester, report, 1400)
    charts = {chart["key"]: chart for chart in wide["charts"]}
    assert set(charts) == CHART_KEYS, sorted(charts)
    for key, chart in charts.items():
        assert chart["role"] == "img", key
        title, desc = chart["named"]
        assert title and desc and len(desc) > 40, (key, chart["named"])  # said in words
        assert chart["table"] and chart["tableSize"] == [1, 1], key  # read, not seen
        assert chart["width"] > 150 and chart["height"] > 40, (key, chart)
    rate = charts["karenina-chart-pass-rate"]
    assert {"all models", "old", NEW} <= set(rate["texts"])  # the name as text, unescaped
    assert "66.7% (2/3)" in rate["texts"] and "100.0% (3/3)" in rate["texts"]
    assert "verify_fail" in charts["karenina-chart-outcomes"]["table"]
    # new passes 67% and never where old fails; old passes the one question new fails
    cells = [t for t in charts["karenina-chart-comparison"]["texts"] if t not in ("old", NEW)]
    assert cells == ["67%", "0", "1", "100%"]
    assert "0.5-0.6" in charts["karenina-chart-scores"]["table"]
    assert charts["karenina-chart-trait-0"]["named"][0] == "Rubric trait Clarity (llm score 1-5)"
    assert "answer_generation" in charts["karenina-chart-cost-stage"]["table"]
    # Side by side at 1400 px: at least two charts share a row.
    assert len({chart["left"] for chart in wide["charts"]}) > 1

    narrow = measured(pytester, report, 400)
    assert narrow["width"] == 400
    scroll, client = narrow["section"]
    assert scroll <= client, narrow["section"]  # nothing sticks out of the charts' section
    for chart in narrow["charts"]:
        assert 0 <= chart["left"] and chart["right"] <= 400, chart  # shrunk to the window
    assert {chart["left"] for chart in narrow["charts"]} == {narrow["charts"][0]["left"]}

    for width in (1400, 400):  # the pictures, for a reader to look at (see docs/reporting.md)
        shot = pytester.path / f"charts-{width}.png"
        chromium(pytester, report, width, f"--screenshot={shot}")
        assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_charts_are_there_without_javascript(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = run(pytester, openai_server)
    text = report.read_text(encoding="utf-8")
    assert NEW not in text and html.escape(NEW) in text  # escaped in the file
    # The page with every script of its own taken out (pytest-html's, karenina's, their
    # data): what a reader without JavaScript gets; only the driver measures it.
    bare = report.with_name("bare.html")
    bare.write_text(re.sub(r"<script\b.*?</script>", "", text, flags=re.DOTALL), encoding="utf-8")
    assert "<script" not in bare.read_text(encoding="utf-8")
    found = measured(pytester, bare, 1400)
    assert {chart["key"] for chart in found["charts"]} == CHART_KEYS
    for chart in found["charts"]:
        assert chart["named"][0] and chart["width"] > 150 and chart["height"] > 40, chart
    shot = pytester.path / "charts-bare.png"
    chromium(pytester, bare, 1400, f"--screenshot={shot}")
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
