"""Each line of the terminal where it belongs, once, in the words the rest uses (issue 27): the
replay store's lines in the karenina summary (none when nothing ran, no prune hint where
pruning would be refused), no WARNING log record repeating a verdict the failure already
states, rubric traits that did not decide named as traits (not a gate), a replay miss named
as the summary counts it, questions in comparisons named as their items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.scripting import script_abstention
from tests.plugin.plugin_helpers import (
    COUNTRIES,
    capitals_checkpoint,
    copy_checkpoint,
    endpoint_args,
    scripted,
)
from tests.plugin.test_replay_ci import STALE
from tests.plugin.test_rubric_plugin import UNLOADABLE
from tests.plugin.test_rubric_plugin import run as run_rubrics
from tests.support.openai_server import OpenAIServer

REPLAY = "karenina replay: "


def replay_args(pytester: pytest.Pytester, server: OpenAIServer) -> tuple[list[str], Path]:
    """The arguments of a run of the multi-question checkpoint (two of its four questions
    fail) through ``calls.jsonl``."""
    scripted(server)
    store = pytester.path / "calls.jsonl"
    path = copy_checkpoint(pytester)
    return ["--karenina", str(path), *endpoint_args(server), f"--karenina-replay-store={store}"], (
        store
    )


def lines_with(result: pytest.RunResult, start: str) -> list[int]:
    return [index for index, line in enumerate(result.stdout.lines) if line.startswith(start)]


def test_the_replay_line_is_part_of_the_karenina_summary(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """Not under the last failure's text: after the summary's title, before pytest's short
    summary."""
    args, _ = replay_args(pytester, openai_server)
    result = pytester.runpytest(*args, "--karenina-replay", "record", *dist)

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    (replay,) = lines_with(result, REPLAY)
    (title,) = [i for i, line in enumerate(result.stdout.lines) if "karenina summary" in line]
    (short,) = [i for i, line in enumerate(result.stdout.lines) if "short test summary" in line]
    assert title < replay < short
    assert (
        result.stdout.lines[replay]
        == f"{REPLAY}8 entries used, 8 added, 0 unused of 8 in calls.jsonl"
    )


def test_no_prune_hint_where_pruning_would_be_refused(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    args, _ = replay_args(pytester, openai_server)
    pytester.runpytest(*args, "--karenina-replay", "record")
    strict = [*args, "--karenina-replay", "strict"]

    selected = pytester.runpytest(*strict, "-k", "mq001")
    failed_first = pytester.runpytest(*strict, "-x")
    whole = pytester.runpytest(*strict, "-k", "mq001 or not mq001")

    assert [selected.stdout.lines[i] for i in lines_with(selected, REPLAY)] == [
        f"{REPLAY}2 entries used, 0 added, 6 unused of 8 in calls.jsonl"
    ]
    assert "--karenina-replay-prune" not in failed_first.stdout.str()
    assert "--karenina-replay-prune" not in whole.stdout.str()  # nothing unused


def test_no_replay_line_when_nothing_ran(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """A checkpoint that does not load: a collection error, no question ran, and the store
    (which does not exist) is not reported as ``0 entries used ... of 0``."""
    broken = pytester.path / "broken.jsonld"
    broken.write_text("{")
    store = pytester.path / "calls.jsonl"
    result = pytester.runpytest(
        "--karenina", str(broken), *endpoint_args(openai_server),
        f"--karenina-replay-store={store}", "--karenina-replay", "record",
    )  # fmt: skip

    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting broken.jsonld*"])
    assert REPLAY not in result.stdout.str()
    assert not store.exists()


def test_an_abstention_is_said_once(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    """The failure says the model abstained; no WARNING log record says it again."""
    script_abstention(openai_server, "I cannot say", detected=True)
    script_abstention(openai_server, "It is", detected=False)
    for qid, (country, capital) in COUNTRIES.items():
        text = "I cannot say." if qid == "q2" else f"It is {capital}."
        openai_server.add_rule(text, structured=False, contains=f"capital of {country}")
        openai_server.add_rule({"capital": capital}, structured=True, contains=text)
    path = capitals_checkpoint(pytester.path)

    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server),
                                "--karenina-abstention")  # fmt: skip

    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["abstained: 'The response declines to answer.'"])
    out = result.stdout.str()
    assert "WARNING" not in out and "Captured log" not in out and "failed the answer" not in out


def test_rubric_traits_without_the_rubric_gate_are_no_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """template_and_rubric without --karenina-rubric-gate: the template decided, and the
    failing traits are reported as traits, not as a gate that failed."""
    gates = f"--karenina-rubric-gates={UNLOADABLE}, HasCitations off"
    result, _ = run_rubrics(pytester, openai_server, "--karenina-mode=template_and_rubric", gates)

    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "celsius: 90 != 100; fahrenheit: 194 != 212",
        "  rubric traits: 2 of 4 failed their bounds (reported only: --karenina-rubric-gate "
        "makes them decide)",
        "  trait Accuracy (llm boolean): false, needs == true; judge: *",
    ])  # fmt: skip
    result.stdout.fnmatch_lines(["  rubric traits: 1 of 4 have no value"])
    assert "rubric gate" not in result.stdout.str()


def test_a_replay_miss_is_named_as_the_summary_counts_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """The error line says ``replay``, as ``outcomes: error:replay`` does, not the failure
    record's ``unexpected_error``."""
    args, store = replay_args(pytester, openai_server)
    store.write_text(json.dumps(STALE) + "\n")
    result = pytester.runpytest(*args, "--karenina-replay", "strict")

    result.assert_outcomes(errors=4, skipped=1)
    result.stdout.fnmatch_lines([
        "error in GenerateAnswer (replay): *strict replay: no recorded reply for question*",
        "outcomes: error:replay 4, skipped 1",
    ])  # fmt: skip
    assert "unexpected_error" not in result.stdout.str()


def test_comparison_lines_name_questions_as_their_items(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Question ids that are URNs: the comparison names ``q3``, as its item does."""
    countries = {f"urn:karenina:capitals:{qid}": found for qid, found in COUNTRIES.items()}
    path = capitals_checkpoint(pytester.path, countries)
    for country, capital in COUNTRIES.values():
        wrong = "Osaka" if country == "Japan" else capital
        openai_server.add_rule(f"It is {capital}.", model="old", structured=False,
                               last_contains=country)  # fmt: skip
        openai_server.add_rule(f"It is {wrong}.", model="new", structured=False,
                               last_contains=country)  # fmt: skip
    for city in ("Paris", "Rome", "Tokyo", "Osaka"):
        openai_server.add_rule({"capital": city}, model="judge", contains=f"It is {city}.")
    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-endpoint", openai_server.base_url,
        "--karenina-answering-model=old", "--karenina-answering-model=new",
        "--karenina-parsing-model=judge", "--karenina-compare-to=old", "-p", "no:cacheprovider",
    )  # fmt: skip

    result.assert_outcomes(passed=5, failed=1)
    assert "FAILED capitals.jsonld::q3[new] - capital: 'Osaka' != 'Tokyo'" in result.stdout.lines
    result.stdout.fnmatch_lines([
        "models compared on 3 questions (paired by question):",
        "  old vs new: *",
        "  regressions against old: q3",
        "  q3: old pass, new FAIL",
    ])  # fmt: skip
    assert "urn:karenina:capitals:q3:" not in result.stdout.str()
