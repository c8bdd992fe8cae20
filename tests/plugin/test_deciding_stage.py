"""Through pytest over real HTTP: template code that raises is an *error* (a broken benchmark,
not a wrong answer), and a verdict a stage other than VerifyTemplate forced names that stage
and its reason on the first line of every report: ``-ra``, JUnit, GitHub annotations, HTML.

``-vv`` keeps pytest's short summary lines whole (else they are cut to the terminal width,
or not when the ``CI`` variable is set)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.plugin.plugin_helpers import (
    CAPITAL_TEMPLATE,
    COUNTRIES,
    MULTI,
    capitals_checkpoint,
    endpoint_args,
)
from tests.plugin.test_deep_judgment_plugin import deep_args
from tests.plugin.test_html import extras_html, report_data, row
from tests.support.openai_server import OpenAIServer

# The capital template with a typo in verify(): ``self.captial`` (line 9 of the source).
TYPO_TEMPLATE = CAPITAL_TEMPLATE.replace("self.capital.strip()", "self.captial.strip()")
TYPO_LINE = 1 + TYPO_TEMPLATE.split("\n").index(
    next(line for line in TYPO_TEMPLATE.split("\n") if "self.captial" in line)
)
TYPO_REASON = (
    "template error: verify() raised AttributeError: 'Answer' object has no attribute "
    f"'captial' (template line {TYPO_LINE})"
)
TYPO_HTML = TYPO_REASON.replace("'", "&#x27;")
SUMMARY_LINES = ["-ra", "-vv"]


def answers(server: OpenAIServer, **said: str) -> None:
    """The model names each question's capital (or says ``said[qid]`` instead); the judge
    extracts the capital it names."""
    for qid, (country, capital) in COUNTRIES.items():
        text = said.get(qid, f"It is {capital}.")
        server.add_rule(text, structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": capital}, structured=True, contains=text)


def typo_checkpoint(directory: Path) -> Path:
    """The capitals, q1's template with the typo."""
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=(TYPO_TEMPLATE if qid == "q1" else CAPITAL_TEMPLATE).format(
                     capital=capital), finished=True)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


@pytest.fixture
def step_summary(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Under GitHub Actions, with a job summary file."""
    path = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def junit_messages(path: Path) -> dict[str, str]:
    """Test name -> the message of its ``<failure>`` or ``<error>``."""
    found = {}
    for case in ET.parse(path).iter("testcase"):
        for element in (*case.iter("failure"), *case.iter("error")):
            found[str(case.get("name"))] = str(element.get("message"))
    return found


def annotations(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if line.startswith("::error ")]


def html_reason(entry: dict[str, object]) -> str:
    """The Reason cell of a report row: the one-line reason (whole on hover when cut)."""
    return str(entry["kreason"])


def test_template_code_that_raises_is_an_error_everywhere_and_no_regression(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    dist: list[str],
) -> None:  # fmt: skip
    answers(openai_server)
    baseline = pytester.path / "baseline.json"
    accepted = pytester.runpytest(
        "--karenina", str(capitals_checkpoint(pytester.path)), *endpoint_args(openai_server),
        f"--karenina-baseline={baseline}", "--karenina-baseline-update",
    )  # fmt: skip
    accepted.assert_outcomes(passed=3)
    junit, report, export = (pytester.path / n for n in ("j.xml", "r.html", "results.json"))

    result = pytester.runpytest(
        "--karenina", str(typo_checkpoint(pytester.path)), *endpoint_args(openai_server),
        f"--karenina-baseline={baseline}", f"--junitxml={junit}", f"--html={report}",
        "--self-contained-html", f"--karenina-results={export}", *SUMMARY_LINES, *dist,
    )  # fmt: skip

    # An error, not a failure: the answer was right, the benchmark is broken.
    result.assert_outcomes(passed=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"ERROR capitals.jsonld::q1 - PipelineError: {TYPO_REASON}"])
    assert not [line for line in result.stdout.lines if line.startswith("FAILED ")]
    (message,) = junit_messages(junit).values()
    assert message.startswith(f'failed on setup with "PipelineError: {TYPO_REASON}\n')
    assert annotations(result) == [
        "::error file=capitals.jsonld,title=q1 [test-model]%3A error%3Atemplate::"
        + TYPO_REASON.replace("%", "%25")
    ]
    markdown = step_summary.read_text()
    assert f"| q1 | test-model | error:template | {TYPO_REASON} |" in markdown
    assert "**Errors (nothing measured: not a regression of the model)** (1)" in markdown
    (entry,) = report_data(report)["tests"]["capitals.jsonld::q1"]  # its setup's row
    assert entry["result"] == "Error"
    assert TYPO_HTML in html_reason(entry)
    assert f"<strong>Reason </strong>{TYPO_HTML}" in extras_html(entry)
    assert "n/a (error:template)" in entry["kscore"]
    # The baseline's q1 passed: an error now is no regression of the model, and no pass.
    result.stdout.fnmatch_lines([
        "karenina baseline baseline.json: 0 regressions, 0 score drops, 1 errors, "
        "0 improvements, 0 new, 0 missing (3 compared): gate FAILED",
        f"  error: q1 [[]test-model[]]: pass -> error: {TYPO_REASON}",
    ])  # fmt: skip
    assert "regression:" not in result.stdout.str()
    # Karenina's fields are as the seed defines them.
    (typo,) = [r for r in json.loads(export.read_text())["results"]
               if r["metadata"]["question_id"] == "q1"]  # fmt: skip
    assert typo["template"]["verify_result"] is False
    assert typo["template"]["verify_granular_result"] is None
    assert typo["template"]["field_verification_error"] == (
        "Field verification failed: AttributeError: 'Answer' object has no attribute 'captial'"
    )
    assert "completed_without_errors" not in typo["metadata"]  # seed-only: rebuilt on load
    assert typo["metadata"]["failure"]["category"] == "content"


TOXICITY_CONFTEST = '''
from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage


class ToxicityCheckStage(BaseVerificationStage):
    """Seed "Writing Custom Stages": fails verification when the response looks toxic."""

    def __init__(self, threshold=0.8, fail_on_toxic=True):
        self.threshold = threshold
        self.fail_on_toxic = fail_on_toxic

    @property
    def name(self):
        return "ToxicityCheck"

    @property
    def requires(self):
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self):
        return ["toxicity_score", "toxicity_passed"]

    def should_run(self, context):
        if not super().should_run(context):
            return False
        return context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE)

    def execute(self, context):
        response = context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE)
        score = self._classify(response)
        passed = score < self.threshold
        context.set_artifact("toxicity_score", score)
        context.set_artifact("toxicity_passed", passed)
        context.set_result_field("toxicity_score", score)
        context.set_result_field("toxicity_passed", passed)
        if not passed and self.fail_on_toxic:
            context.set_artifact(ArtifactKeys.VERIFY_RESULT, False)
            context.set_result_field(ArtifactKeys.VERIFY_RESULT, False)

    def _classify(self, text):
        toxic_words = {"harmful", "dangerous", "illegal"}
        words = set(text.lower().split())
        return len(words & toxic_words) / max(len(words), 1)


def pytest_karenina_modify_stages(item, stages):
    at = next(i for i, s in enumerate(stages) if s.name == "VerifyTemplate")
    stages.insert(at + 1, ToxicityCheckStage(threshold=0.1))
'''


def test_a_custom_stage_that_fails_a_right_answer_is_named_first(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    # q2's answer is right ("Rome"), and 1 of the 6 distinct words of its trace is toxic.
    answers(openai_server, q2="Rome is dangerous")
    pytester.makeconftest(TOXICITY_CONFTEST)
    junit, report = pytester.path / "junit.xml", pytester.path / "report.html"

    result = pytester.runpytest(
        "--karenina", str(capitals_checkpoint(pytester.path)), *endpoint_args(openai_server),
        f"--junitxml={junit}", f"--html={report}", "--self-contained-html", *SUMMARY_LINES,
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    reason = "ToxicityCheck: toxicity_score 0.167, toxicity_passed False"
    result.stdout.fnmatch_lines([
        f"FAILED capitals.jsonld::q2 - {reason}",
        "verify_result False (decided by ToxicityCheck)",
    ])  # fmt: skip
    assert junit_messages(junit)["q2"].startswith(f"{reason}\n")
    assert annotations(result) == [
        f"::error file=capitals.jsonld,title=q2 [test-model]%3A verify_fail::{reason}"
    ]
    entry = row(report_data(report), "capitals.jsonld::q2")
    assert reason in html_reason(entry)
    extras = extras_html(entry)
    assert f"<strong>Reason </strong>{reason}" in extras
    assert "(decided by ToxicityCheck)" in extras


def test_a_deep_judgment_auto_fail_names_the_unquoted_attribute(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    junit, report = pytester.path / "junit.xml", pytester.path / "report.html"

    result = pytester.runpytest(
        *deep_args(pytester, openai_server), "--karenina-max-retries=0", f"--junitxml={junit}",
        f"--html={report}", "--self-contained-html", *SUMMARY_LINES,
    )  # fmt: skip

    # mq003's answer is right, but the judge's quote for ``author`` is not in it.
    result.assert_outcomes(passed=1, failed=3, skipped=1)
    reason = "deep judgment: no verbatim quote for author"
    result.stdout.fnmatch_lines([f"FAILED {MULTI}::mq003 - {reason}"])
    assert junit_messages(junit)["mq003"].startswith(f"{reason}\n")
    assert (
        f"::error file={MULTI},title=urn%3Akarenina%3Atest%3Amq003 [test-model]%3A verify_fail::"
        f"{reason}"
    ) in annotations(result)
    entry = row(report_data(report), f"{MULTI}::mq003")
    assert reason in html_reason(entry)
    assert "verify() returned False" not in html_reason(entry)
    extras = extras_html(entry)
    assert f"<strong>Reason </strong>{reason}" in extras
    assert "(decided by DeepJudgmentAutoFail)" in extras
