"""Scenario items through pytest: one per scenario beside the question items, their turns run
over the scripted OpenAI-compatible server, the answers choosing the branch."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

from pytest_karenina.checkpoint import Benchmark, save_checkpoint
from pytest_karenina.plugin.cli import main
from pytest_karenina.plugin.collect.question_hash import question_hash
from pytest_karenina.results import VerificationResultSet
from tests.e2e.scripting import is_parse_request
from tests.helpers import DATA
from tests.plugin.plugin_helpers import (
    MULTI,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    scripted,
)
from tests.plugin.test_changed_since import git
from tests.scenarios.scenario_helpers import edge, node, on_verdict, scenario
from tests.support.openai_server import OpenAIServer

ASK = "Which drug for a tension headache?"
DOSE = "What dose of it?"
AGAIN = "Which drug for a migraine?"


def last_turn_right(name: str) -> dict[str, object]:
    return {
        "name": name,
        "description": "the last answer is right",
        "check": {
            "type": "TurnCheck",
            "scope": {"type": "last_turn"},
            "field": "verify_result",
            "expected": True,
            "verify_with": {"type": "BooleanMatch"},
        },
    }


TRIAGE = scenario(
    [
        node("ask", ASK, stateUpdateSource="lambda a, p: {**a, 'asked': a.get('asked', 0) + 1}"),
        node("dose", DOSE),
    ],
    [
        edge("ask", "dose", condition=on_verdict(True)),
        edge("ask", "ask", conditionSource="lambda s: s.accumulated['asked'] < 2"),
        edge("ask", "dose"),
    ],
    name="triage",
    criteria=[last_turn_right("ends_right")],
)
MIGRAINE = scenario([node("start", AGAIN)], [], name="migraine", criteria=[last_turn_right("ok")])
BROKEN = {"@type": "karenina:Scenario", "name": "broken", "entryNode": "nowhere", "nodes": {}}


def bench(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE, MIGRAINE, BROKEN]), path)
    return path


def script(server: OpenAIServer) -> None:
    """triage: wrong, then right (ask -> ask -> dose); migraine: wrong once, and it ends."""
    server.add_rule("Ibuprofen, I think.", last_contains=ASK, structured=False, times=1)
    server.add_rule("Aspirin.", last_contains=ASK, structured=False)
    server.add_rule("Aspirin 500 mg.", last_contains=DOSE, structured=False)
    server.add_rule("Sumatriptan.", last_contains=AGAIN, structured=False)
    for answer, drug in [
        ("Ibuprofen, I think.", "ibuprofen"),
        ("Aspirin 500 mg.", "aspirin"),
        ("Aspirin.", "aspirin"),
        ("Sumatriptan.", "sumatriptan"),
    ]:
        server.add_rule({"drug": drug}, contains=answer, structured=True, when=is_parse_request)


def test_each_scenario_is_an_item_with_its_verdict(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    script(openai_server)
    path = bench(pytester)

    export = pytester.path / "results.json"
    args = endpoint_args(openai_server, *dist, "-rA", "--karenina-results", str(export))
    result = pytester.runpytest("--karenina", str(path), *args)

    result.assert_outcomes(passed=1, failed=1, errors=1)
    text = result.stdout.str()
    assert "PASSED bench.jsonld::scenario:triage" in text
    assert "FAILED bench.jsonld::scenario:migraine" in text
    assert "ERROR bench.jsonld::scenario:broken" in text
    result.stdout.fnmatch_lines([
        "*criterion 'ok' did not hold (the last answer is right): broken at turn 0, node 'start'",
        "*path: start",
    ])  # fmt: skip
    result.stdout.fnmatch_lines(["bench.jsonld: scenario 'broken': nodes: expected a non-empty*"])
    asked = [r for r in openai_server.chat_requests if not r.structured]
    assert sum(ASK in str(r.messages[-1]["content"]) for r in asked) == 2
    loaded = VerificationResultSet.from_export_json(export.read_text(encoding="utf-8"))
    records = sorted(loaded.scenario_results or [], key=lambda r: r.scenario_id)
    assert [(r.scenario_id, r.status, r.path) for r in records] == [
        ("migraine", "completed", ["start"]),
        ("triage", "completed", ["ask", "ask", "dose"]),
    ]
    turns = sorted(
        (r.metadata.scenario_id, r.metadata.scenario_turn, tuple(r.metadata.scenario_path or []))
        for r in loaded.results
    )
    assert turns == [
        ("migraine", 0, ("start",)),
        ("triage", 0, ("ask",)),
        ("triage", 1, ("ask", "ask")),
        ("triage", 2, ("ask", "ask", "dose")),
    ]
    ((description, error),) = loaded.errors or []
    assert description.startswith("bench.jsonld: scenario 'broken': nodes:")
    assert error.startswith("ScenarioError: bench.jsonld: scenario 'broken'")


def test_a_passing_path_is_reported_and_k_selects_scenarios(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = bench(pytester)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-k", "triage", "--co", "-q"
    )

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["bench.jsonld::scenario:triage", "*1/3 tests collected*"])


def with_questions(pytester: pytest.Pytester) -> Path:
    data = json.loads((DATA / MULTI).read_text(encoding="utf-8"))
    data["hasPart"] = [TRIAGE]
    path = pytester.path / "mixed.jsonld"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_scenarios_collect_beside_the_questions_without_a_warning(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = with_questions(pytester)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--co", "-q", "-W", "error"
    )

    assert result.ret == pytest.ExitCode.OK
    items = collected(result)
    assert len(items) == 6
    assert items[-1] == "mixed.jsonld::scenario:triage"
    assert "multi-turn" not in result.stdout.str()


def test_shards_split_scenarios_with_the_questions(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = with_questions(pytester)
    shards = []
    for index in (1, 2, 3):
        result = pytester.runpytest(
            "--karenina", str(path), *endpoint_args(openai_server), "--co", "-q",
            "--karenina-shard", f"{index}/3",
        )  # fmt: skip
        shards.append(collected(result))

    everything = [nodeid for shard in shards for nodeid in shard]
    assert sorted(everything) == sorted(set(everything)) and len(everything) == 6
    owner = 1 + question_hash("scenario:triage") % 3
    assert "mixed.jsonld::scenario:triage" in shards[owner - 1]


def test_last_failed_reruns_the_failed_scenario(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = bench(pytester)
    args = ["--karenina", str(path), "--karenina-endpoint", openai_server.base_url,
            "--karenina-answering-model", "test-model"]  # fmt: skip
    pytester.runpytest(*args).assert_outcomes(passed=1, failed=1, errors=1)

    result = pytester.runpytest(*args, "--lf", "-rA")

    result.assert_outcomes(failed=1, errors=1, deselected=1)
    assert "scenario:triage" not in result.stdout.str()


def test_changed_since_runs_the_changed_and_new_scenarios_only(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = bench(pytester)
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", ".")
    git(pytester.path, "commit", "-q", "-m", "benchmark")
    changed = json.loads(json.dumps(MIGRAINE))
    changed["nodes"]["start"]["question"]["text"] = "Which drug for a cluster headache?"
    added = {**TRIAGE, "name": "triage-2"}
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE, changed, BROKEN, added]), path)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--co", "-q",
        "--karenina-changed-since", "HEAD",
    )  # fmt: skip

    assert collected(result) == [
        "bench.jsonld::scenario:migraine",
        "bench.jsonld::scenario:triage-2",
    ]


def test_the_summary_counts_scenarios_apart_and_junit_names_what_broke(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = bench(pytester)
    junit = pytester.path / "junit.xml"

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--junitxml", str(junit)
    )

    result.stdout.fnmatch_lines([
        "pass rate 33.3% (1/3 items: 0 question(s), 3 scenario(s)), 95% CI *",
        "scenarios: 1/3 passed (error:scenario 1, pass 1, scenario_fail 1)",
    ])  # fmt: skip
    result.stdout.no_fnmatch_line("*  ?: *")  # every scenario item has its answering model
    assert re.search(r"^tokens: [1-9]\d* in, [1-9]\d* out$", result.stdout.str(), re.M)
    cases = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ElementTree.parse(junit).getroot().iter("testcase")
    }
    assert cases["scenario:migraine"] == {
        "karenina.scenario.id": "migraine",
        "karenina.scenario.verdict": "fail",
        "karenina.scenario.status": "completed",
        "karenina.scenario.path": "start",
        "karenina.scenario.turns": "1",
        "karenina.scenario.failing_criterion": "ok",
        "karenina.scenario.failing_turn": "0",
    }
    assert cases["scenario:triage"]["karenina.scenario.path"] == "ask -> ask -> dose"
    assert cases["scenario:broken"]["karenina.scenario.verdict"] == "error"


@pytest.mark.subprocess
def test_the_html_shows_the_conversation_and_the_path_in_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = bench(pytester)
    report = pytester.path / "report.html"

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--html", str(report)
    )

    result.assert_outcomes(passed=1, failed=1, errors=1)
    dom = rendered_dom(pytester, report)
    (failing,) = rendered_rows(dom, "bench.jsonld::scenario:migraine")
    assert "<strong>Failing criterion </strong>ok" in failing
    assert '<ol class="karenina-scenario-path"><li>start</li></ol>' in failing
    assert (
        '<tr class="karenina-broke"><td>0</td><td>start</td><td>Which drug for a migraine?</td>'
        "<td>--- AI Message ---\nSumatriptan.</td><td>fail</td></tr>"
    ) in failing
    (passing,) = rendered_rows(dom, "bench.jsonld::scenario:triage")
    path_items = "<li>ask</li><li>ask</li><li>dose</li>"
    assert f'<ol class="karenina-scenario-path">{path_items}</ol>' in passing
    assert "<td>1</td><td>ask</td><td>Which drug for a tension headache?</td>" in passing


def scenario_paths(export: Path) -> list[tuple[int | None, str, list[str]]]:
    loaded = VerificationResultSet.from_export_json(export.read_text(encoding="utf-8"))
    found = [(r.replicate, r.scenario_id, r.path) for r in loaded.scenario_results or []]
    return sorted(found, key=lambda entry: (entry[0] or 0, entry[1]))


def test_strict_replay_reproduces_each_replicates_path_without_a_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """The first answer to the triage question is wrong once: one replicate takes
    ask -> ask -> dose, the other ask -> dose; strict replay gives each its own again."""
    script(openai_server)
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE]), path)
    store = pytester.path / "store.jsonl"
    args = ["--karenina", str(path), *endpoint_args(openai_server, *dist),
            f"--karenina-replay-store={store}", "--karenina-replicates=2"]  # fmt: skip
    recorded = pytester.path / "recorded.json"
    pytester.runpytest(
        *args, "--karenina-replay", "record", f"--karenina-results={recorded}"
    ).assert_outcomes(passed=2)
    openai_server.reset()  # no rules: a live call would get no scripted answer
    replayed = pytester.path / "replayed.json"

    result = pytester.runpytest(
        *args, "--karenina-replay", "strict", f"--karenina-results={replayed}", "-v"
    )

    result.assert_outcomes(passed=2)
    assert "bench.jsonld::scenario:triage[test-model-r2]" in result.stdout.str()
    assert openai_server.chat_requests == []
    paths = scenario_paths(recorded)
    assert sorted(p for _, _, p in paths) == [["ask", "ask", "dose"], ["ask", "dose"]]
    assert scenario_paths(replayed) == paths


def test_the_result_hook_sees_every_turn_of_a_scenario(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE]), path)
    pytester.makeconftest(
        """
        def pytest_karenina_verification_result(item, result):
            print("TURN", item.name, result.metadata.scenario_node, result.metadata.scenario_turn)
        """
    )

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-s")

    result.assert_outcomes(passed=1)
    turns = re.findall(r"TURN \S+ \S+ \d+", result.stdout.str())
    assert turns == [
        "TURN scenario:triage ask 0",
        "TURN scenario:triage ask 1",
        "TURN scenario:triage dose 2",
    ]


def test_a_condition_that_raises_errors_its_item_and_the_export_lists_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    raising = scenario(
        [node("start", AGAIN), node("next", DOSE)],
        [edge("start", "next", conditionSource="lambda s: 1 / 0")],
        name="raising",
    )
    data = json.loads((DATA / MULTI).read_text(encoding="utf-8"))
    data["hasPart"] = [raising]
    path = pytester.path / "mixed.jsonld"
    path.write_text(json.dumps(data), encoding="utf-8")
    scripted(openai_server)
    export = pytester.path / "results.json"

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), f"--karenina-results={export}"
    )

    result.assert_outcomes(passed=2, failed=2, skipped=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of scenario raising*",
        "stopped at node 'start' (scenario_code: *ZeroDivisionError*",
        "path: start",
    ])  # fmt: skip
    result.stdout.fnmatch_lines(["pass rate 40.0% (2/5 items: 4 question(s), 1 scenario(s)),*"])
    loaded = VerificationResultSet.from_export_json(export.read_text(encoding="utf-8"))
    ((description, error),) = loaded.errors or []
    assert description.startswith("Scenario 'raising' stopped at node 'start' (scenario_code")
    assert error.startswith("ScenarioExecutionFailure: Scenario 'raising'")


STAGE_CONFTEST = """
from pytest_karenina.pipeline import BaseVerificationStage

SEEN = []


class CountingStage(BaseVerificationStage):
    name = "Counting"
    requires = []
    produces = []

    def should_run(self, context):
        return True

    def execute(self, context):
        SEEN.append(context.question_text)


def pytest_karenina_modify_stages(item, stages):
    stages.insert(0, CountingStage())


def pytest_sessionfinish(session):
    print("STAGED", len(SEEN), sorted(set(SEEN)))
"""


def test_the_stage_hook_applies_to_every_turn(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE]), path)
    pytester.makeconftest(STAGE_CONFTEST)

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-s")

    result.assert_outcomes(passed=1)
    assert f"STAGED 3 {sorted([DOSE, ASK])!r}" in result.stdout.str()


def test_a_stage_list_the_hook_broke_errors_the_scenario_without_a_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = bench(pytester)
    pytester.makeconftest("def pytest_karenina_modify_stages(item, stages):\n    del stages[-1]\n")

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))

    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*pytest_karenina_modify_stages left an invalid stage list*"])
    assert openai_server.chat_requests == []


def test_merged_shards_keep_every_scenario_record_and_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    script(openai_server)
    path = bench(pytester)
    parts = [pytester.path / f"s{index}.json" for index in (1, 2)]
    for index, part in enumerate(parts, start=1):
        pytester.runpytest(
            "--karenina", str(path), *endpoint_args(openai_server),
            f"--karenina-shard={index}/2", f"--karenina-results={part}",
        )  # fmt: skip
    merged = pytester.path / "merged.json"
    capsys.readouterr()

    code = main(["merge", str(merged), *(str(part) for part in parts)])

    assert code == 1, capsys.readouterr().err  # migraine failed, broken errored
    loaded = VerificationResultSet.from_export_json(merged.read_text(encoding="utf-8"))
    records = sorted((r.scenario_id, r.path) for r in loaded.scenario_results or [])
    assert records == [("migraine", ["start"]), ("triage", ["ask", "ask", "dose"])]
    assert [d.split(":")[0] for d, _ in loaded.errors or []] == ["bench.jsonld"]
    assert len(loaded.results) == 4


def test_the_baseline_gate_reports_a_scenario_that_regressed(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE, MIGRAINE]), path)
    baseline = pytester.path / "baseline.json"
    args = ["--karenina", str(path), *endpoint_args(openai_server),
            f"--karenina-baseline={baseline}"]  # fmt: skip
    pytester.runpytest(*args, "--karenina-baseline-update").assert_outcomes(passed=1, failed=1)
    openai_server.reset()  # now every triage answer is wrong: ask -> ask -> dose, ends wrong
    openai_server.add_rule("Ibuprofen, I think.", last_contains=ASK, structured=False)
    openai_server.add_rule("Ibuprofen 400 mg.", last_contains=DOSE, structured=False)
    openai_server.add_rule("Sumatriptan.", last_contains=AGAIN, structured=False)
    for answer, drug in [("Ibuprofen", "ibuprofen"), ("Sumatriptan.", "sumatriptan")]:
        openai_server.add_rule(
            {"drug": drug}, contains=answer, structured=True, when=is_parse_request
        )

    result = pytester.runpytest(*args)

    result.assert_outcomes(failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "karenina baseline baseline.json: 1 regressions, *(2 compared): gate FAILED",
        "*regression: scenario:triage ?test-model?: pass -> fail",
    ])  # fmt: skip


def test_a_changed_scenario_is_not_compared_with_its_baseline(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[TRIAGE, MIGRAINE]), path)
    baseline = pytester.path / "baseline.json"
    args = ["--karenina", str(path), *endpoint_args(openai_server),
            f"--karenina-baseline={baseline}"]  # fmt: skip
    pytester.runpytest(*args, "--karenina-baseline-update").assert_outcomes(passed=1, failed=1)
    changed = json.loads(json.dumps(TRIAGE))
    changed["edges"][1]["conditionSource"] = "lambda s: s.accumulated['asked'] < 3"
    save_checkpoint(Benchmark(name="bench", scenarios=[changed, MIGRAINE]), path)

    result = pytester.runpytest(*args)

    result.stdout.fnmatch_lines([
        "karenina baseline baseline.json: *1 not comparable*(1 compared): gate passed",
        "  not comparable: scenario:triage ?test-model?: question changed",
    ])  # fmt: skip
    assert "without a fingerprint" not in result.stdout.str()


def test_the_estimate_counts_scenario_turns_as_recorded(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    script(openai_server)
    scripted(openai_server)
    path = with_questions(pytester)
    store = pytester.path / "store.jsonl"
    args = ["--karenina", str(path), *endpoint_args(openai_server),
            f"--karenina-replay-store={store}"]  # fmt: skip
    recorded = pytester.runpytest(*args, "--karenina-replay=record")
    (tokens_line,) = [line for line in recorded.outlines if line.startswith("tokens: ")]
    calls = len(store.read_text(encoding="utf-8").splitlines())

    result = pytester.runpytest(*args, "--karenina-estimate")

    in_tokens, out_tokens = re.findall(r"\d+", tokens_line)
    result.stdout.fnmatch_lines([
        "karenina estimate of a live run *: 6 items, *",
        f"  measured (the usage the store recorded): {calls} calls, {in_tokens} tokens in, "
        f"{out_tokens} out",
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("policy", "outcome"), [("at-least:1", {"passed": 1}), ("all", {"failed": 1})]
)
def test_a_replicate_policy_decides_over_the_scenarios_replicates(
    pytester: pytest.Pytester, openai_server: OpenAIServer, policy: str, outcome: dict[str, int]
) -> None:
    """The first answer is wrong, the other right: one replicate passes, one fails."""
    openai_server.add_rule("Ibuprofen, I think.", last_contains=AGAIN, structured=False, times=1)
    openai_server.add_rule("Aspirin.", last_contains=AGAIN, structured=False)
    for answer, drug in [("Ibuprofen, I think.", "ibuprofen"), ("Aspirin.", "aspirin")]:
        openai_server.add_rule(
            {"drug": drug}, contains=answer, structured=True, when=is_parse_request
        )
    path = pytester.path / "bench.jsonld"
    save_checkpoint(Benchmark(name="bench", scenarios=[MIGRAINE]), path)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--karenina-replicates=2",
        f"--karenina-replicate-policy={policy}",
    )  # fmt: skip

    result.assert_outcomes(**outcome)
    if policy == "all":
        result.stdout.fnmatch_lines([
            "criterion 'ok' did not hold *: broken at turn 0, node 'start'; "
            "replicate policy all: 1/2 replicates passed",
            "path: start",
        ])  # fmt: skip


def test_the_github_job_summary_counts_scenarios(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(openai_server)
    path = bench(pytester)
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))

    markdown = summary.read_text(encoding="utf-8")
    assert "scenarios: 1/3 passed (error:scenario 1, pass 1, scenario\\_fail 1)" in markdown
