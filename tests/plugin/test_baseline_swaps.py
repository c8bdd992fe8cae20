"""Baselines you can trust (issue 26, sections 1-3), through pytest over real HTTP: a model
swap is compared, an entry measured differently is not comparable, replicates grade changes
into regressions, likely regressions and noise, and bad mappings or files stop the run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.plugin.plugin_helpers import CAPITAL_TEMPLATE, COUNTRIES, rendered_dom
from tests.support.openai_server import OpenAIServer

JUDGE = "judge-model"


def script(server: OpenAIServer, model: str, wrong: dict[str, tuple[str, int | None]]) -> None:
    """``model`` names each capital, but for ``wrong[qid] = (city, times)``: that city the
    first ``times`` answers (every answer when None). The judge reads the city named."""
    for qid, (country, capital) in COUNTRIES.items():
        asked = f"capital of {country}"
        if qid in wrong:
            city, times = wrong[qid]
            server.add_rule(f"It is {city}.", structured=False, contains=asked, model=model,
                            times=times)  # fmt: skip
            server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
        server.add_rule(f"It is {capital}.", structured=False, contains=asked, model=model)
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def checkpoint(directory: Path, **templates: str) -> Path:
    """The capitals; ``templates[qid]`` replaces a question's template code."""
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=templates.get(qid, CAPITAL_TEMPLATE.format(capital=capital)),
                 finished=True)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


def run(
    pytester: pytest.Pytester, server: OpenAIServer, models: list[str], *options: str
) -> pytest.RunResult:
    """A run of ``models`` judged by one judge, against ``baseline.json`` (unless a
    ``--karenina-baseline`` is among ``options``)."""
    path = pytester.path / "capitals.jsonld"
    if not path.exists():
        checkpoint(pytester.path)
    chosen = [arg for model in models for arg in ("--karenina-answering-model", model)]
    baseline = [] if any("--karenina-baseline=" in o for o in options) else [
        f"--karenina-baseline={pytester.path / 'baseline.json'}"
    ]  # fmt: skip
    return pytester.runpytest(
        "--karenina", str(path), "--karenina-endpoint", server.base_url, *chosen,
        "--karenina-parsing-model", JUDGE, "-p", "no:cacheprovider", *baseline, *options,
    )  # fmt: skip


def record(
    pytester: pytest.Pytester, server: OpenAIServer, models: list[str], *options: str
) -> None:
    """``baseline.json`` from a run of ``models`` answering every capital right."""
    server.reset()
    for model in models:
        script(server, model, {})
    result = run(pytester, server, models, "--karenina-baseline-update", *options)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def baseline_lines(result: pytest.RunResult) -> list[str]:
    """The baseline section of the terminal summary (the replay store's lines close the
    summary after it)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("karenina baseline "))
    found = []
    for line in lines[start:]:
        if line.startswith("karenina replay"):
            break
        if not line.startswith(("=", "FAILED", "- ")):
            found.append(line)
    return found


def junit_properties(path: Path) -> list[tuple[str, str]]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    return [(p.get("name", ""), p.get("value", "")) for p in suite.iter("property")
            if p.get("name", "").startswith("karenina.baseline")]  # fmt: skip


# -- 1. model swaps --------------------------------------------------------------------------


def test_a_model_swap_is_compared_never_waved_through(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """Before issue 26: ``3 new, 3 missing (0 compared): gate passed``, exit 0."""
    record(pytester, openai_server, ["gpt-a"])
    openai_server.reset()
    script(openai_server, "qwen-b", {"q1": ("Lyon", None)})
    junit = pytester.path / "junit.xml"

    result = run(pytester, openai_server, ["qwen-b"], f"--junitxml={junit}", *dist)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert baseline_lines(result) == [
        "karenina baseline baseline.json: 1 regressions, 0 score drops, 0 improvements, "
        "0 new, 0 missing (3 compared): gate FAILED",
        "  qwen-b vs baseline gpt-a: 3 questions compared, 1 regressions",
        "  verdict changes: 0 judge-side (same answer, new verdict), 1 answer-side (new answer)",
        "  regression: q1 [qwen-b vs gpt-a]: pass -> fail (answer-side)",
    ]
    properties = junit_properties(junit)
    assert ("karenina.baseline_pair", "qwen-b vs baseline gpt-a: 3 questions compared, "
            "1 regressions") in properties  # fmt: skip
    assert ("karenina.baseline_compared", "3") in properties


def test_two_models_each_side_are_paired_by_a_mapping(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    record(pytester, openai_server, ["a1", "a2"])
    openai_server.reset()
    script(openai_server, "b1", {})
    script(openai_server, "b2", {"q2": ("Milan", None)})

    unpaired = run(pytester, openai_server, ["b1", "b2"])
    assert unpaired.ret == pytest.ExitCode.TESTS_FAILED  # it compared nothing
    assert baseline_lines(unpaired)[:2] == [
        "karenina baseline baseline.json: 0 regressions, 0 score drops, 0 improvements, "
        "6 new, 6 missing (0 compared): gate FAILED",
        "  nothing compared with baseline.json: 6 new, 6 missing, 0 not comparable; run models "
        "b1, b2 vs baseline models a1, a2: pair them with --karenina-baseline-model NEW=OLD "
        "(e.g. b1=a1); or accept the new state with --karenina-baseline-update",
    ]

    mapped = run(pytester, openai_server, ["b1", "b2"], "--karenina-baseline-model=b1=a2",
                 "--karenina-baseline-model", "b2=a1")  # fmt: skip
    assert mapped.ret == pytest.ExitCode.TESTS_FAILED
    mapped.stdout.fnmatch_lines([
        "karenina baseline baseline.json: 1 regressions, *(6 compared): gate FAILED",
        "  b1 vs baseline a2: 3 questions compared, 0 regressions",
        "  b2 vs baseline a1: 3 questions compared, 1 regressions",
        "*regression: q2 [[]b2 vs a1[]]: pass -> fail (answer-side)",
    ])  # fmt: skip

    pytester.makeini("[pytest]\nkarenina_baseline_model =\n    b1=a2\n    b2=a1\n")
    from_ini = run(pytester, openai_server, ["b1", "b2"])
    assert baseline_lines(from_ini) == baseline_lines(mapped)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("b1=zz", "--karenina-baseline-model b1=zz: 'zz' is not a model of the baseline "
                  "{baseline} (a1)"),
        ("xx=a1", "--karenina-baseline-model xx=a1: 'xx' is not an answering model of this run "
                  "(b1)"),
        ("b1", "--karenina-baseline-model: expected NEW=OLD (e.g. qwen3:8b=gpt-4.1-mini), "
               "got 'b1'"),
    ],
    ids=["unknown baseline model", "unknown run model", "no pair"],
)  # fmt: skip
def test_a_mapping_that_does_not_fit_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mapping: str, message: str
) -> None:
    record(pytester, openai_server, ["a1"])
    openai_server.reset()

    result = run(pytester, openai_server, ["b1"], f"--karenina-baseline-model={mapping}")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    baseline = pytester.path / "baseline.json"
    assert message.format(baseline=baseline) in result.stderr.str()
    assert openai_server.requests == []  # nothing ran


# -- 2. comparable or not --------------------------------------------------------------------


def test_a_changed_template_makes_its_entry_not_comparable(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    record(pytester, openai_server, ["m"])
    # q2's template now expects another capital: q2 fails, but it is measured differently.
    checkpoint(pytester.path, q2=CAPITAL_TEMPLATE.format(capital="Milan"))
    openai_server.reset()
    script(openai_server, "m", {})

    result = run(pytester, openai_server, ["m"], *dist)

    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.OK  # no regression: the gate passes
    assert baseline_lines(result) == [
        "karenina baseline baseline.json: 0 regressions, 0 score drops, 0 improvements, "
        "1 not comparable, 0 new, 0 missing (2 compared): gate passed",
        "  verdict changes: 1 judge-side (same answer, new verdict), 0 answer-side (new answer)",
        "  not comparable: q2 [m]: template changed; pass -> fail (judge-side)",
    ]


def test_a_changed_judge_makes_every_entry_not_comparable_and_compares_nothing(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    record(pytester, openai_server, ["m"])
    openai_server.reset()
    script(openai_server, "m", {})

    # A judge setting (the rubric strategy: this benchmark has no rubric, the calls are the same).
    result = run(pytester, openai_server, ["m"], "--karenina-rubric-strategy=sequential")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = baseline_lines(result)
    assert lines[1] == (
        "  nothing compared with baseline.json: all 3 entries are measured differently now "
        "(judge changed); or accept the new state with --karenina-baseline-update"
    )
    assert "  not comparable: q1 [m]: judge changed" in lines


def test_an_old_baseline_without_fingerprints_still_works(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """A version 1 file, as written before issue 26."""
    (pytester.path / "baseline.json").write_text(json.dumps({
        "format": "pytest-karenina-baseline", "version": 1, "entries": [
            {"question_id": qid, "answering_model": "m", "verdict": "pass", "passed": 1,
             "items": 1, "score": None, "rubric": {}} for qid in COUNTRIES],
    }))  # fmt: skip
    openai_server.reset()
    script(openai_server, "m", {"q3": ("Osaka", None)})

    result = run(pytester, openai_server, ["m"])

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert baseline_lines(result) == [
        "karenina baseline baseline.json: 1 regressions, 0 score drops, 0 improvements, "
        "0 new, 0 missing (3 compared): gate FAILED",
        "  note: baseline.json is a version 1 baseline without fingerprints: every entry counts "
        "as comparable (--karenina-baseline-update records them)",
        "  regression: q3 [m]: pass -> fail",
    ]


def test_a_damaged_baseline_is_a_usage_error_naming_file_and_entry(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    record(pytester, openai_server, ["m"])
    path = pytester.path / "baseline.json"
    document = json.loads(path.read_text())
    document["entries"][1]["replicates_passed"] = 3
    del document["entries"][2]["fingerprint"]["judge"]
    path.write_text(json.dumps(document))
    openai_server.reset()

    result = run(pytester, openai_server, ["m"])

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        f"--karenina-baseline: {path}: entries[1] (q2): replicates_passed (3) is more than "
        "replicates (1); entries[2] (q3): field 'fingerprint.judge' is missing"
    ) in result.stderr.str()
    assert openai_server.requests == []


# -- 3. graded changes -----------------------------------------------------------------------


def test_replicates_grade_changes_with_p_values(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """Five replicates. q1 5/5 -> 0/5 (p = 0.0079) against q2 5/5 -> 4/5 (one failure in
    ten can never be significant): a regression and noise. Then q1 and q3 5/5 -> 1/5 (p =
    0.048 each, 0.095 after Holm's correction for the two): likely regressions, which fail
    the gate only with --karenina-baseline-fail-on likely."""
    replicates = "--karenina-replicates=5"
    record(pytester, openai_server, ["m"], replicates)
    openai_server.reset()
    script(openai_server, "m", {"q1": ("Lyon", 5), "q2": ("Milan", 1)})
    junit = pytester.path / "junit.xml"

    regressed = run(pytester, openai_server, ["m"], replicates, f"--junitxml={junit}", *dist)

    assert regressed.ret == pytest.ExitCode.TESTS_FAILED
    assert baseline_lines(regressed) == [
        "karenina baseline baseline.json: 1 regressions, 0 score drops, 0 improvements, "
        "1 noise, 0 new, 0 missing (3 compared): gate FAILED",
        "  verdict changes: 0 judge-side (same answer, new verdict), 2 answer-side (new answer)",
        "  regression: q1 [m]: 5/5 -> 0/5 passed (p=0.0079, Holm 0.0079; answer-side)",
        "  noise: q2 [m]: 5/5 -> 4/5 passed (p=1, never significant; answer-side)",
    ]
    properties = junit_properties(junit)
    assert ("karenina.baseline_regression", "q1 [m]: 5/5 -> 0/5 passed (p=0.0079, Holm 0.0079; "
            "answer-side)") in properties  # fmt: skip
    assert ("karenina.baseline_noise", "1") in properties

    openai_server.reset()
    script(openai_server, "m", {"q1": ("Lyon", 4), "q3": ("Osaka", 4)})
    likely = run(pytester, openai_server, ["m"], replicates, *dist)

    assert likely.ret == pytest.ExitCode.OK
    likely.stdout.fnmatch_lines([
        "karenina baseline baseline.json: 0 regressions, 2 likely regressions, *: gate passed",
        "  likely regression: q1 [[]m[]]: 5/5 -> 1/5 passed (p=0.048, Holm 0.095; answer-side)",
        "  likely regression: q3 [[]m[]]: 5/5 -> 1/5 passed (p=0.048, Holm 0.095; answer-side)",
    ])  # fmt: skip

    openai_server.reset()
    script(openai_server, "m", {"q1": ("Lyon", 4), "q3": ("Osaka", 4)})
    strict = run(pytester, openai_server, ["m"], replicates, "--karenina-baseline-fail-on=likely")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["karenina baseline *: gate FAILED"])


@pytest.mark.subprocess
def test_the_html_report_lists_the_classes_in_headless_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    replicates = "--karenina-replicates=5"
    record(pytester, openai_server, ["m"], replicates)
    openai_server.reset()
    script(openai_server, "m", {"q1": ("Lyon", 5), "q2": ("Milan", 1)})
    html = pytester.path / "report.html"

    run(pytester, openai_server, ["m"], replicates, f"--html={html}")

    dom = rendered_dom(pytester, html)
    assert "karenina baseline baseline.json: 1 regressions, 0 score drops" in dom
    assert "Regressions against baseline.json</strong> (1)" in dom
    assert "<li>q1 [m]: 5/5 -&gt; 0/5 passed (p=0.0079, Holm 0.0079; answer-side)</li>" in dom
    assert "Noise (within what the replicates vary by)</strong> (1)" in dom


def test_the_github_job_summary_lists_the_classes(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replicates = "--karenina-replicates=5"
    record(pytester, openai_server, ["gpt-a"], replicates)
    openai_server.reset()
    script(openai_server, "qwen-b", {"q1": ("Lyon", 5), "q2": ("Milan", 1)})
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    result = run(pytester, openai_server, ["qwen-b"], replicates, "--karenina-github=yes")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    markdown = summary.read_text()
    assert "- karenina baseline baseline.json: 1 regressions, 0 score drops, 0 improvements, " in (
        markdown
    )
    assert (
        "**Compared** (2)\n\n- qwen-b vs baseline gpt-a: 3 questions compared, 1 regressions\n"
        "- verdict changes: 0 judge-side (same answer, new verdict), 2 answer-side (new answer)"
    ) in markdown
    assert (
        "**Regressions against baseline.json** (1)\n\n- q1 \\[qwen-b vs gpt-a\\]: 5/5 -\\> 0/5 "
        "passed (p=0.0079, Holm 0.0079; answer-side)"
    ) in markdown
    assert "**Noise (within what the replicates vary by)** (1)" in markdown


def test_re_judged_recorded_answers_show_judge_side_changes(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """Section 4 with a baseline: ``--karenina-replay answers`` judges the recorded answers
    anew, so every verdict change is judge-side: q1's template changed (not comparable), the
    judge now reads Kyoto from q3's recorded "It is Tokyo." (a regression)."""
    store = f"--karenina-replay-store={pytester.path / 'calls.jsonl'}"
    record(pytester, openai_server, ["m"], "--karenina-replay=record", store)
    checkpoint(pytester.path, q1=CAPITAL_TEMPLATE.format(capital="Lyon"))
    openai_server.reset()
    for said, read in (("Paris", "Paris"), ("Rome", "Rome"), ("Tokyo", "Kyoto")):
        openai_server.add_rule({"capital": read}, structured=True, contains=f"It is {said}.")

    result = run(pytester, openai_server, ["m"], "--karenina-replay=answers", store, *dist)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert all(request.structured for request in openai_server.chat_requests)  # judge only
    assert baseline_lines(result) == [
        "karenina baseline baseline.json: 1 regressions, 0 score drops, 0 improvements, "
        "1 not comparable, 0 new, 0 missing (2 compared): gate FAILED",
        "  verdict changes: 2 judge-side (same answer, new verdict), 0 answer-side (new answer)",
        "  regression: q3 [m]: pass -> fail (judge-side)",
        "  not comparable: q1 [m]: template changed; pass -> fail (judge-side)",
    ]
