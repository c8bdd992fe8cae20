"""Regressions side by side (``--karenina-baseline-results``) and failure clusters, through
pytest over real HTTP: the HTML rows and summary, the terminal, a damaged or foreign baseline
export, and the reproducing command run offline."""

from __future__ import annotations

import html
import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import (
    CHROMIUM,
    capitals_checkpoint,
    endpoint_args,
    rendered_dom,
    screenshot,
)
from tests.plugin.test_baselines import answers, checkpoint
from tests.plugin.test_html import extras_html, report_data, row
from tests.support.openai_server import OpenAIServer

Q1, Q2 = "capitals.jsonld::q1", "capitals.jsonld::q2"


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--karenina", str(checkpoint(pytester.path)), *endpoint_args(server), *options
    )


@pytest.fixture
def accepted(pytester: pytest.Pytester, openai_server: OpenAIServer) -> tuple[Path, Path]:
    """The baseline and its run's export: every capital right."""
    baseline, export = pytester.path / "baseline.json", pytester.path / "accepted.json"
    answers(openai_server)
    result = run(pytester, openai_server, f"--karenina-baseline={baseline}",
                 "--karenina-baseline-update", f"--karenina-results={export}")  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return baseline, export


def compared(
    pytester: pytest.Pytester, server: OpenAIServer, accepted: tuple[Path, Path], *options: str,
    **cities: str,
) -> tuple[pytest.RunResult, Path]:  # fmt: skip
    """q2 answered Milan now (or ``cities``); the run compared with the baseline, its export
    given."""
    baseline, export = accepted
    report = pytester.path / "report.html"
    answers(server, **(cities or {"q2": "Milan"}))
    result = run(pytester, server, f"--karenina-baseline={baseline}",
                 f"--karenina-baseline-results={export}", f"--html={report}",
                 "--self-contained-html", *options)  # fmt: skip
    return result, report


def test_a_regression_row_shows_what_changed_and_how_to_reproduce_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer, accepted: tuple[Path, Path],
    dist: list[str],
) -> None:  # fmt: skip
    store = pytester.path / "now.replay.jsonl"
    result, report = compared(pytester, openai_server, accepted, "--karenina-replay=record",
                              f"--karenina-replay-store={store}", *dist)  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    data = report_data(report)
    regressed = extras_html(row(data, Q2))
    assert "Since the baseline (accepted.json): pass -&gt; verify_fail" in regressed
    # The answers word by word: only the city changed.
    assert re.search(r"It is <del [^>]*>Rome\.</del><ins [^>]*>Milan\.</ins>", regressed)
    assert "(-1 +1 words)" in regressed
    # The fields side by side, the flipped one marked.
    flipped = re.search(r'<tr class="karenina-flipped"[^>]*><td>capital <strong>flipped', regressed)
    assert flipped is not None
    assert "<td>&#x27;Rome&#x27;</td><td>&#x27;Rome&#x27;</td><td>&#x27;Milan&#x27;</td>" in (
        regressed
    )
    assert "karenina-side-by-side" not in extras_html(row(data, Q1))  # it passed
    text = report.read_text(encoding="utf-8")
    assert "1 regressions shown side by side with accepted.json" in text

    # The command reproduces the item offline: strict replay of this run's store, no server.
    command = re.search(r'karenina-reproduce"><strong>Reproduce offline </strong><code>([^<]*)',
                        regressed)  # fmt: skip
    assert command is not None
    args = shlex.split(html.unescape(command.group(1)))
    assert args[:3] == ["pytest", "--karenina", Q2] and args[-2:] == ["--karenina-replay", "strict"]
    assert f"--karenina-replay-store={store}" in args and "--html" not in " ".join(args)
    openai_server.reset()
    again = pytester.runpytest(*args[1:])
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*capital: 'Milan' != 'Rome'*"])
    assert openai_server.requests == []


def test_failure_clusters_top_the_report_and_the_terminal(
    pytester: pytest.Pytester, openai_server: OpenAIServer, accepted: tuple[Path, Path]
) -> None:
    result, report = compared(pytester, openai_server, accepted)
    result.stdout.fnmatch_lines([
        "outcomes: pass 2, verify_fail 1",
        "failure clusters (1, by size):",
        "  capital (verify()): 'Rome' vs 'Milan' x 1",
    ])  # fmt: skip
    text = report.read_text(encoding="utf-8")
    section = text.split('<section class="karenina-clusters">', 1)[1].split("</section>")[0]
    assert "<summary>capital (verify()): &#x27;Rome&#x27; vs &#x27;Milan&#x27; x 1</summary>" in (
        section
    )
    assert f'<a href="#{Q2}">{Q2}</a>' in section


@pytest.mark.subprocess
def test_side_by_side_and_clusters_render_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer, accepted: tuple[Path, Path]
) -> None:
    result, report = compared(pytester, openai_server, accepted)
    result.assert_outcomes(passed=2, failed=1)
    dom = rendered_dom(pytester, report)
    clusters = dom.split('<section class="karenina-clusters">', 1)[1].split("</section>")[0]
    assert '<details class="karenina-cluster" data-cluster="0" data-size="1">' in clusters
    regressed = dom.split(f'id="{Q2}"', 1)[1].split('<tbody class="results-table-row', 1)[0]
    assert '<section class="karenina-side-by-side">' in regressed
    assert re.search(r'<del class="karenina-del"[^>]*>Rome\.</del>', regressed)
    assert 'class="karenina-flipped"' in regressed
    picture = screenshot(pytester, report)
    assert picture.startswith(b"\x89PNG\r\n\x1a\n") and len(picture) > 20_000


def torn(text: str) -> tuple[str, str]:
    """q2's result line cut short."""
    lines = text.splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1) if '"question_id": "q2"' in line)
    lines[number - 1] = lines[number - 1][:40] + "\n"
    return "".join(lines), f"line {number}: damaged"


def newer(text: str) -> tuple[str, str]:
    found = text.replace('"format_version": "2.2"', '"format_version": "9.0"', 1)
    return found, "line 1: format_version '9.0' is newer"


def foreign(text: str) -> tuple[str, str]:
    found = text.replace('"checkpoints": ["capitals.jsonld"]', '"checkpoints": ["other.jsonld"]')
    return found, "a run of another benchmark (other.jsonld"


def garbage(text: str) -> tuple[str, str]:
    return "not json\n", "line 1: not the header of a results export"


@pytest.mark.parametrize("damage", [torn, newer, foreign, garbage])
def test_a_bad_baseline_export_is_named_and_the_reports_go_on(
    pytester: pytest.Pytester, openai_server: OpenAIServer, accepted: tuple[Path, Path],
    damage: Callable[[str], tuple[str, str]],
) -> None:  # fmt: skip
    export = accepted[1]
    damaged, said = damage(export.read_text(encoding="utf-8"))
    assert damaged != export.read_text(encoding="utf-8")
    export.write_text(damaged, encoding="utf-8")
    result, report = compared(pytester, openai_server, accepted, q1="Lyon", q2="Milan")

    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([f"karenina baseline results {export}: *{said}*"])
    result.stdout.fnmatch_lines(["failure clusters (1, by size):", "  capital (verify()): * x 2"])
    assert export.read_text(encoding="utf-8") == damaged  # read, never written
    text = report.read_text(encoding="utf-8")
    assert html.escape(f"baseline results {export}: ") in text and "karenina-clusters" in text
    data = report_data(report)
    # q2's own line is the one lost: q1's regression still shows; a file not used shows none
    assert "karenina-side-by-side" not in extras_html(row(data, Q2))
    shown = "karenina-side-by-side" in extras_html(row(data, Q1))
    assert shown is (damage is torn)


def test_the_option_needs_a_baseline(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = run(pytester, openai_server, "--karenina-baseline-results=x.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--karenina-baseline-results: name the baseline with --karenina-baseline*"]
    )
    ini = run(pytester, openai_server, "-o", "karenina_baseline_results=x.json")
    assert ini.ret == pytest.ExitCode.USAGE_ERROR
    ini.stderr.fnmatch_lines(["*karenina_baseline_results*: name the baseline with*"])


def test_the_export_json_is_what_the_side_by_side_reads(accepted: tuple[Path, Path]) -> None:
    """The baseline export is plain JSON with one result per line (what the reader relies on)."""
    export = accepted[1]
    data = json.loads(export.read_text(encoding="utf-8"))
    lines = export.read_text(encoding="utf-8").splitlines()
    assert len(data["results"]) == 3
    assert all(line.startswith('{"metadata"') for line in lines[1:4])


DRIVER = """<script>
window.addEventListener('load', () => setTimeout(() => {
  const link = document.querySelector('.karenina-cluster a')
  const id = decodeURIComponent(link.getAttribute('href').slice(1))
  const before = document.getElementById(id) !== null
  link.click()
  const out = document.createElement('pre')
  out.id = 'driver-out'
  out.textContent = JSON.stringify({id, before, after: document.getElementById(id) !== null})
  document.body.append(out)
}, 0))
</script>"""


@pytest.mark.subprocess
def test_a_clusters_item_link_draws_the_rows_page_in_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """130 questions in their original order: the failing last one is on the table's second
    page, which a click on its link in the cluster draws."""
    countries = {f"q{n:03}": (f"Land{n}", f"City{n}") for n in range(1, 131)}
    for qid, (country, capital) in countries.items():
        city = "Nowhere" if qid == "q130" else capital
        openai_server.add_rule(f"It is {city}.", structured=False, contains=f"of {country}?")
        openai_server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    report = pytester.path / "report.html"
    path = capitals_checkpoint(pytester.path, countries)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server),
                                f"--html={report}", "--self-contained-html")  # fmt: skip
    result.assert_outcomes(passed=129, failed=1)
    page = report.read_text(encoding="utf-8").replace("</body>", DRIVER + "</body>")
    report.write_text(page, encoding="utf-8")
    chromium = shutil.which("chromium") or shutil.which(CHROMIUM)
    if chromium is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--virtual-time-budget=5000",
         f"--user-data-dir={pytester.path / 'chromium-profile'}",
         "--dump-dom", report.as_uri() + "?sort=original"],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    found = re.search(r'<pre id="driver-out">([^<]*)</pre>', dom)
    assert found is not None, dom[-2000:]
    assert json.loads(html.unescape(found.group(1))) == {
        "id": "capitals.jsonld::q130", "before": False, "after": True,
    }  # fmt: skip
