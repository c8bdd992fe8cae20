"""Each line of the terminal where it belongs, once (issue 27): the replay store's lines in the
karenina summary (none when nothing ran, no prune hint where pruning would be refused), no
WARNING log record repeating a verdict the failure already states."""

from __future__ import annotations

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
