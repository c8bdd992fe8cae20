"""The pieces of the side by side of regressions: the word diff, the reproducing command, the
baseline export's reader and the HTML of one result against its baseline; and the failure
clusters' section of the GitHub job summary."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pytest_karenina.plugin.options.declare import OPTIONS
from pytest_karenina.plugin.report.baseline_results import read_baseline_run
from pytest_karenina.plugin.report.github import job_summary
from pytest_karenina.plugin.report.reproduce import reproduce_command, run_options
from pytest_karenina.plugin.report.side_by_side import side_by_side_html
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.report.word_diff import MAX_WORDS, changed, word_diff
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.writer import ExportWriter
from tests.plugin_units.test_clusters import failed, other


def test_the_word_diff_marks_words_and_escapes_everything() -> None:
    found = word_diff("take <b>5 mg</b> daily", "take <i>10 mg</i> daily")
    assert "<b>" not in found and "<i>" not in found
    assert ">&lt;b&gt;5 mg&lt;/b&gt; </del>" in found
    assert ">&lt;i&gt;10 mg&lt;/i&gt; </ins>" in found
    assert found.startswith("take <del") and found.endswith("</ins>daily")
    # Words compare without their whitespace: a moved line break is no change.
    assert word_diff("It is\nRome.", "It is Rome.") == "It is Rome."
    assert changed("take <b>5 mg</b> daily", "take <i>10 mg</i> daily") == (2, 2)
    assert word_diff("same words", "same words") == "same words"


def test_a_long_answer_is_compared_in_part_and_said_so() -> None:
    old, new = "a " * MAX_WORDS, "a " * MAX_WORDS + "tail"
    found = word_diff(old, new)
    assert "compared: the first" in found and found.count("tail") == 1


def test_the_command_keeps_what_judges_and_drops_what_selects_or_reports() -> None:
    flag = next(option.flag for option in OPTIONS if option.kind == "bool")
    args = [
        "--karenina", "bench.jsonld", "tests/other.py", "-n", "2", "--html=report.html",
        "--karenina-endpoint", "http://host/v1", "--karenina-answering-model=m 1",
        "--karenina-results", "out.json", "--karenina-baseline", "base.json",
        "--karenina-replay=record", "-p", "no:cacheprovider", "-o", "karenina_mode=x",
        flag, "more.jsonld", "-k", "q1",
    ]  # fmt: skip
    kept = run_options(args)
    assert kept == [
        "--karenina-endpoint", "http://host/v1", "--karenina-answering-model=m 1",
        "-p", "no:cacheprovider", "-o", "karenina_mode=x", flag,
    ]  # fmt: skip
    command = reproduce_command("bench.jsonld::q 1[m 1]", kept)
    assert shlex.split(command) == [
        "pytest", "--karenina", "bench.jsonld::q 1[m 1]", *kept, "--karenina-replay", "strict",
    ]  # fmt: skip


def _result(question: str, answer: str, **sections: Any) -> dict[str, Any]:
    metadata = {"question_id": question, "replicate": None,
                "answering": {"interface": "x", "model_name": "m"},
                "parsing": {"interface": "x", "model_name": "judge"}}  # fmt: skip
    return {"metadata": metadata, "template": {"raw_llm_response": answer}, **sections}


def _export(path: Path, *results: dict[str, Any], checkpoints: list[str] | None = None) -> Path:
    writer = ExportWriter(path, verification_config={}, run={"version": 1})
    for result in results:
        writer.add(result)
    writer.close(run={"version": 1, "checkpoints": checkpoints or ["bench.jsonld"]})
    return path


def test_the_reader_indexes_results_and_names_damaged_lines(tmp_path: Path) -> None:
    path = _export(tmp_path / "base.json", *(_result(f"q{n}", f"answer {n}") for n in range(6)))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for number in (2, 3, 4, 5):  # q0..q3: cut short
        lines[number - 1] = lines[number - 1][:30] + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    found = read_baseline_run(path, ["bench.jsonld"])
    assert sorted(found.results) == [("q4", "m", None), ("q5", "m", None)]
    assert found.of("q5", "m", None)[0]["template"]["raw_llm_response"] == "answer 5"
    assert found.problems == [f"{path}: lines 2, 3, 4 and 1 more: damaged (not a whole result): "
                              "left out"]  # fmt: skip


def test_the_reader_refuses_another_benchmarks_export(tmp_path: Path) -> None:
    path = _export(tmp_path / "base.json", _result("q1", "a"), checkpoints=["other.jsonld"])
    found = read_baseline_run(path, ["bench.jsonld"])
    assert found.results == {}
    assert found.problems == [
        f"{path}: a run of another benchmark (other.jsonld; this run: bench.jsonld): not used"
    ]
    missing = read_baseline_run(tmp_path / "none.json")
    assert missing.results == {} and "cannot be read" in missing.problems[0]


def test_one_result_against_its_baseline(tmp_path: Path) -> None:
    """Both answers with their quotes marked, the reasoning both times, the flipped field;
    model text escaped."""
    quote = {"text": "Rome is the capital", "confidence": "high"}
    before = _result(
        "q1", "Rome is the capital <b>of Italy</b>.",
        deep_judgment={"extracted_excerpts": {"capital": [quote]}},
        rubric={"llm_trait_reasoning": {"clarity": "clear <enough>"}},
    )  # fmt: skip
    before["template"] |= {"parsed_gt_response": {"capital": "Rome"},
                           "parsed_llm_response": {"capital": "Rome"},
                           "field_results": {"capital": True}}  # fmt: skip
    now = _result("q1", "Milan is the capital <script>x</script>.",
                  rubric={"llm_trait_reasoning": {"clarity": "vague"}})  # fmt: skip
    now["template"] |= {"parsed_gt_response": {"capital": "Rome"},
                        "parsed_llm_response": {"capital": "Milan"},
                        "field_results": {"capital": False}}  # fmt: skip
    found = side_by_side_html(before, now, "Since <base>", "pytest --karenina 'b::q1'")
    assert "<script>" not in found and "&lt;script&gt;" in found and "<b>" not in found
    assert "<h4>Since &lt;base&gt;</h4>" in found
    assert '<mark class="karenina-excerpt" data-attribute="capital"' in found
    assert "<td>rubric: clarity</td><td>clear &lt;enough&gt;</td><td>vague</td>" in found
    assert '<tr class="karenina-flipped"' in found and "capital <strong>flipped" in found
    assert "<code>pytest --karenina &#x27;b::q1&#x27;</code>" in found


def test_the_job_summary_has_a_failure_clusters_section() -> None:
    summary = RunSummary()
    for payload in (
        *(failed(f"b::q{i}", "5 mg", "5mg") for i in range(3)),
        other("b::t1", Outcome.TIMEOUT_ERROR),
        other("b::ok", Outcome.PASS),
    ):
        summary.add(payload)
    markdown = job_summary(summary, "bench.jsonld", 1)
    section = markdown.split("**Failure clusters** (largest first)\n\n", 1)[1].split("\n\n")[0]
    assert section.splitlines() == [
        "- dose (ExactMatch): '5 mg' vs '5mg' x 3 -\\> a SynonymMap {'5mg': '5 mg'} would pass "
        "3 of 3",
        "- error:timeout x 1",
    ]
    assert "Failure clusters" not in job_summary(RunSummary(), "bench.jsonld", 0)
