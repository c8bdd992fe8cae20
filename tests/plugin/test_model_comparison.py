"""Two answering models on the same questions, compared question by question over HTTP."""

from __future__ import annotations

import pytest

from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, rendered_dom
from tests.support.openai_server import OpenAIServer


def args(pytester: pytest.Pytester, server: OpenAIServer) -> list[str]:
    path = capitals_checkpoint(pytester.path)
    for country, capital in COUNTRIES.values():
        wrong = "Osaka" if country == "Japan" else capital
        server.add_rule(f"It is {capital}.", model="old", structured=False, last_contains=country)
        server.add_rule(f"It is {wrong}.", model="new", structured=False, last_contains=country)
    for city in ("Paris", "Rome", "Tokyo", "Osaka"):
        server.add_rule({"capital": city}, model="judge", contains=f"It is {city}.")
    return [
        "--karenina", str(path), "--karenina-endpoint", server.base_url,
        "--karenina-answering-model", "old", "--karenina-answering-model", "new",
        "--karenina-parsing-model", "judge", "-p", "no:cacheprovider",
    ]  # fmt: skip


@pytest.mark.subprocess
def test_a_regression_against_the_reference_model_is_listed_first(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = pytester.path / "report.html"
    result = pytester.runpytest(*args(pytester, openai_server), "--karenina-compare-to=old",
                                f"--html={report}", "--self-contained-html")  # fmt: skip

    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines([
        "models compared on 3 questions (paired by question):",
        "  old vs new: 100.0% vs 66.7% (+33.3 points); only old passes 1, only new passes 0;"
        " McNemar exact p=1",
        "  regressions against old: q3",
        "  q3: old pass, new FAIL",
    ])  # fmt: skip
    dom = rendered_dom(pytester, report)
    assert '<table class="karenina-comparison">' in dom
    assert "<td>q3</td><td>pass</td><td><strong" in dom


def test_an_unknown_reference_model_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = pytester.runpytest(*args(pytester, openai_server), "--karenina-compare-to=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-compare-to: 'nope' is not an answering model*"])
