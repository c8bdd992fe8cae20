"""`pytest --karenina checkpoint`: items, outcomes and explanations over real HTTP."""

from __future__ import annotations

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


def test_questions_become_items_with_verdicts(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-rA")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert (
        "SKIPPED [1] multi_question.jsonld: question is marked finished: false"
        in result.stdout.str()
    )
    result.stdout.fnmatch_lines([
        "symbol: 'Ag' != 'Au'",
        "verify_result False (decided by VerifyTemplate)",
        "  symbol | 'Au' | 'Ag' | - | differs",
        "*karenina summary*",
        "pass rate 50.0% (2/4 items), 95% CI 15.0%-85.0%",
        "outcomes: pass 2, skipped 1, verify_fail 2",
    ])  # fmt: skip
    result.stdout.fnmatch_lines(["PASSED multi_question.jsonld::mq001"])
    result.stdout.no_fnmatch_line("karenina: past * failed questions*")  # a small run


@pytest.mark.parametrize("mode", ["--collect-only", "--setup-plan", "--setup-only", "--fixtures"])
def test_collecting_or_planning_never_calls_a_model(
    pytester: pytest.Pytester, openai_server: OpenAIServer, mode: str
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    replay = pytester.path / "replay.jsonl"

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), mode,
        "--karenina-replay", "record", f"--karenina-replay-store={replay}",
    )  # fmt: skip

    assert result.ret == 0
    assert openai_server.chat_requests == []
    result.stdout.no_fnmatch_line("karenina replay:*")
