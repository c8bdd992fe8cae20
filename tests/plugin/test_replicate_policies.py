"""Replicate policies through pytest over real HTTP: one question answered three times, twice
right (Paris) and once wrong (Lyon), in whatever order the replicates run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import (
    capitals_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
)
from tests.support.openai_server import OpenAIServer


def checkpoint(directory: Path) -> Path:
    return capitals_checkpoint(directory, {"q1": ("France", "Paris")})


def script(server: OpenAIServer) -> None:
    """Answers Paris, Lyon, Paris (one each), whichever replicate asks first."""
    for city in ("Paris", "Lyon", "Paris"):
        server.add_rule(f"It is {city}.", structured=False, times=1)
    for city in ("Paris", "Lyon"):
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    script(server)
    return pytester.runpytest(
        "--karenina", str(checkpoint(pytester.path)), *endpoint_args(server),
        "--karenina-replicates=3", *options,
    )  # fmt: skip


def test_majority_passes_a_flaky_question_and_says_it_is_flaky(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    junit = pytester.path / "junit.xml"
    export = pytester.path / "results.json"

    result = run(pytester, openai_server, "--karenina-replicate-policy=majority", "-v",
                 f"--junitxml={junit}", f"--karenina-results={export}", *dist)  # fmt: skip

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*PASSED (flaky 2/3)*",
                                 "flaky: 1 items (q1 [test-model] 2/3)"])  # fmt: skip
    case = next(ET.parse(junit).getroot().iter("testcase"))
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["karenina.flaky"] == "2/3"
    assert properties["karenina.category"] == "pass"
    records = json.loads(export.read_text())["results"]
    assert sorted(r["metadata"]["replicate"] for r in records) == [1, 2, 3]


def test_all_fails_it_and_shows_every_replicate(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = run(pytester, openai_server, "--karenina-replicate-policy=all")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "capital: 'Lyon' != 'Paris'",
        "replicates: *verify_fail* (2/3 passed; all: verify_fail; flaky)",
        "replicate *: verify_result False (decided by VerifyTemplate)",
    ])  # fmt: skip
    assert result.stdout.str().count("verify_result False") == 1  # only the failing one


def test_flaky_pass_lets_it_through_and_lf_reruns_a_failed_flaky_question(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    run(pytester, openai_server, "--karenina-replicate-policy=all", "--karenina-flaky=pass",
        "-p", "cacheprovider").assert_outcomes(passed=1)  # fmt: skip
    openai_server.reset()
    run(pytester, openai_server, "--karenina-replicate-policy=all",
        "-p", "cacheprovider").assert_outcomes(failed=1)  # fmt: skip
    openai_server.reset()

    again = run(pytester, openai_server, "--karenina-replicate-policy=all", "--lf",
                "-p", "cacheprovider")  # fmt: skip

    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*"])


@pytest.mark.parametrize(
    ("policy", "outcome"),
    [("at-least:2", "passed"), ("at-least:3", "failed"), ("pass@3", "passed")],
)
def test_at_least_and_pass_at_k(
    pytester: pytest.Pytester, openai_server: OpenAIServer, policy: str, outcome: str
) -> None:
    result = run(pytester, openai_server, f"--karenina-replicate-policy={policy}")
    result.assert_outcomes(**{outcome: 1})


def test_a_k_above_the_replicates_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = run(pytester, openai_server, "--karenina-replicate-policy=pass@5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*K must be between 1 and the 3 replicates*"])


@pytest.mark.subprocess
def test_the_html_report_has_a_flaky_column_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    report = pytester.path / "report.html"
    run(pytester, openai_server, "--karenina-replicate-policy=majority", f"--html={report}",
        "--self-contained-html").assert_outcomes(passed=1)  # fmt: skip

    dom = rendered_dom(pytester, report)
    assert rendered_rows(dom, "capitals.jsonld::q1")
    assert '<td class="col-kflaky">2/3</td>' in dom


def test_pass_at_k_reports_the_unbiased_estimate_over_more_replicates(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = run(pytester, openai_server, "--karenina-replicate-policy=pass@1")
    # 2 of 3 replicates passed: pass@1 = 1 - C(1, 1) / C(3, 1) = 2/3.
    result.stdout.fnmatch_lines(
        ["pass@1 (unbiased estimate from 3 replicates): 66.7% over 1 items"]
    )
