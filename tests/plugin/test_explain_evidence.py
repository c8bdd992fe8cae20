"""Explanations that carry the evidence (issue 27): what the judge extracted for a classic
template without ground truth, a failing regex check's pattern, and the embedding check's
similarity and threshold, in the failure text and its one-line reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.e2e.test_semantic_model_errors import offline_model  # noqa: F401 - fixture
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.plugin.test_html import extras_html, report_data, row
from tests.support.openai_server import OpenAIServer

NO_GROUND_TRUTH = """
class Answer(BaseAnswer):
    mentions_side_effects: bool = Field(description="Whether the response names side effects")
    dose_mg: int = Field(description="The dose in mg the response recommends")

    def verify(self) -> bool:
        return self.mentions_side_effects and self.dose_mg <= 400
"""
CITED = r"""
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {"capital": "Paris"}
        self.regex = {"citation": {"pattern": r"\[\d+\]", "expected": 1, "match_type": "count"}}

    def verify(self) -> bool:
        return self.capital == self.correct["capital"]
"""


def checkpoint(directory: Path) -> Path:
    questions = [
        Question(id="urn:karenina:evidence:ibuprofen", text="How much ibuprofen may I take?",
                 raw_answer="200-400 mg", template_code=NO_GROUND_TRUTH, finished=True),
        Question(id="urn:karenina:evidence:cited", text="Which city is the capital of France?",
                 raw_answer="Paris", template_code=CITED, finished=True),
    ]  # fmt: skip
    path = directory / "evidence.jsonld"
    save_checkpoint(Benchmark(name="evidence", questions=questions), path)
    return path


def script(server: OpenAIServer) -> None:
    server.add_rule("Take 600 mg.", structured=False, contains="ibuprofen")
    server.add_rule({"mentions_side_effects": False, "dose_mg": 600}, structured=True,
                    contains="Take 600 mg.")  # fmt: skip
    server.add_rule("It is Paris.", structured=False, contains="capital of France")
    server.add_rule({"capital": "Paris"}, structured=True, contains="It is Paris.")


def test_a_classic_template_without_ground_truth_shows_what_the_judge_extracted(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = checkpoint(pytester.path)
    report = pytester.path / "report.html"
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server),
                                "-k", "ibuprofen", f"--html={report}")  # fmt: skip

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "verify() returned False on mentions_side_effects: false; dose_mg: 600",
        "verify_result False (decided by VerifyTemplate)",
        "  answering test-model (openai_endpoint), parsing test-model",
        "  field | expected | parsed | primitive | result",
        "  mentions_side_effects | - | false | - | -",
        "  dose_mg | - | 600 | - | -",
    ])  # fmt: skip
    details = extras_html(row(report_data(report), "evidence.jsonld::ibuprofen"))
    assert "<td>dose_mg</td><td>-</td><td>600</td>" in details
    assert "verify() returned False on mentions_side_effects: false; dose_mg: 600" in details


def test_a_failing_regex_check_shows_its_pattern(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server),
                                "-k", "cited", "--junitxml=junit.xml")  # fmt: skip

    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    headline = r"regex citation /\[\d+\]/ did not match: expected 1 matches, found 0"
    check = r"  regex citation: FAIL: /\[\d+\]/ (count): expected 1 matches, found 0"
    start = lines.index(headline)  # fnmatch would read the pattern's brackets as a class
    assert lines[start + 1 : start + 6] == [
        "verify_result False (decided by VerifyTemplate)",
        "  answering test-model (openai_endpoint), parsing test-model",
        "  field | expected | parsed | primitive | result",
        "  capital | 'Paris' | 'Paris' | - | same",
        check,
    ]
    (failure,) = ET.parse(pytester.path / "junit.xml").getroot().iter("failure")
    assert failure.get("message", "").startswith(headline)  # the reason every report shows


@pytest.mark.embedding
@pytest.mark.usefixtures("offline_model")
def test_the_embedding_check_shows_its_similarity_and_threshold(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Lyon for Paris: the similarity stays below the threshold, the judge is not asked."""
    for qid, (country, capital) in COUNTRIES.items():
        city = "Lyon" if qid == "q1" else capital
        openai_server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        openai_server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    path = capitals_checkpoint(pytester.path)
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--karenina-embedding-check",
        "--karenina-embedding-check-threshold=0.95", "-k", "q1",
    )  # fmt: skip

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "capital: 'Lyon' != 'Paris'",
        "*",
        "  capital | 'Paris' | 'Lyon' | - | differs",
        "  embedding check: similarity 0.* below the threshold 0.95 (all-MiniLM-L6-v2): "
        "the judge was not asked",
    ])  # fmt: skip
