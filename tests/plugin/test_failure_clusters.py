"""Failure clusters of a real run over HTTP: items whose dose the judge extracted as written
differently from the ground truth, with a suggestion the plugin checked by re-running the
template's own primitive; in the terminal, the GitHub job summary and under xdist."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.plugin.report.github import markdown_text
from pytest_karenina.templates.primitives import ExactMatch
from tests.plugin.plugin_helpers import endpoint_args
from tests.support.openai_server import OpenAIServer

TEMPLATE = """from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import ExactMatch


class Answer(BaseAnswer):
    dose: str = VerifiedField(
        description="The dose named in the response",
        ground_truth="5 mg",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
"""
DOSES = {"d1": "5mg", "d2": "5mg", "d3": "5mg", "d4": "5  MG", "d5": "5-mg", "d6": "10 mg",
         "d7": "5 Mg "}  # fmt: skip
"""What the judge extracts per question: d7 passes (ExactMatch lowercases and strips), d6 is
another dose, the others the right one written differently."""


def dosing(directory: Path, server: OpenAIServer) -> Path:
    questions = [
        Question(id=qid, text=f"What is the dose of drug {qid}?", raw_answer="5 mg",
                 template_code=TEMPLATE, finished=True)
        for qid in DOSES
    ]  # fmt: skip
    path = directory / "doses.jsonld"
    save_checkpoint(Benchmark(name="doses", questions=questions), path)
    for qid, dose in DOSES.items():
        answer = f"Take {dose} of {qid} daily."
        server.add_rule(answer, structured=False, contains=f"dose of drug {qid}?")
        server.add_rule({"dose": dose}, structured=True, contains=answer)
    return path


def test_clusters_of_a_real_run_with_a_checked_suggestion(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest(
        "--karenina", str(dosing(pytester.path, openai_server)), *endpoint_args(openai_server),
        "--karenina-github=yes", *dist,
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=6)
    # The count is the template's primitive with collapse_whitespace added, on the values.
    rebuilt = ExactMatch(normalize=["lowercase", "strip", "collapse_whitespace"])
    whitespace = ["5mg", "5mg", "5mg", "5  MG"]
    passing = sum(rebuilt.check(dose, "5 mg") for dose in whitespace)
    assert passing == 1
    cluster = (
        f"dose (ExactMatch): whitespace differs (e.g. '5 mg' vs '5mg') x 4 -> the normalizer "
        f"'collapse_whitespace' would pass {passing} of 4"
    )
    result.stdout.fnmatch_lines([
        "outcomes: pass 1, verify_fail 6",
        "failure clusters (3, by size):",
        f"  {cluster}",
        "  dose (ExactMatch): '5 mg' vs '10 mg' x 1",
        "  dose (ExactMatch): '5 mg' vs '5-mg' x 1 -> a SynonymMap {'5-mg': '5 mg'} would "
        "pass 1 of 1",
        "tokens: *",
    ])  # fmt: skip
    markdown = summary.read_text(encoding="utf-8")
    assert "**Failure clusters** (largest first)" in markdown
    assert f"- {markdown_text(cluster)}\n" in markdown  # escaped: renders as written
