"""Options: usage errors, help, report header, ini twins, strict replay through the plugin."""

from __future__ import annotations

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--karenina-mode", "fast"], "--karenina-mode: 'fast' is not one of template_only"),
        (["--karenina-replay", "maybe"], "--karenina-replay: 'maybe' is not one of off, record"),
        (["--karenina-concurrency", "0"], "--karenina-concurrency: must be >= 1"),
        (["--karenina-min-pass-rate", "1.5"], "--karenina-min-pass-rate: must be between 0 and 1"),
        (["--karenina-abstention=perhaps"], "--karenina-abstention: expected yes or no"),
        (["--karenina-answering-model", "gpt4"], "model 'gpt4': expected provider:model"),
    ],
)
def test_bad_values_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    path = copy_checkpoint(pytester)
    base = ["--karenina-answering-model", "openai:gpt-4.1-mini"]
    result = pytester.runpytest("--karenina", str(path), *base, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_missing_model_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--karenina", str(copy_checkpoint(pytester)))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no answering model" in result.stderr.str()


def test_help_lists_one_karenina_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([
        "LLM benchmark verification (pytest-karenina):",
        "  --karenina=CHECKPOINT*",
        "*--karenina-answering-model=MODEL*",
    ])  # fmt: skip
    assert "karenina_replay (string)" in result.stdout.str()


def test_ini_twins_and_header(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    path = copy_checkpoint(pytester)
    pytester.makeini(
        f"""
[pytest]
karenina_checkpoints = {path.name}
karenina_endpoint = {openai_server.base_url}
karenina_answering_model = test-model
karenina_concurrency = 3
karenina_mode = template_only
"""
    )
    result = pytester.runpytest("--collect-only", "-q")
    assert "5 tests collected" in result.stdout.str()  # the ini names the checkpoint
    header = pytester.runpytest("--collect-only")
    header.stdout.fnmatch_lines([
        "karenina: answering test-model; parsing test-model",
        "karenina: mode template_only, replicates 1, concurrency 3, replay off",
    ])  # fmt: skip
    # The command line wins over the ini.
    overridden = pytester.runpytest("--collect-only", "--karenina-concurrency", "5")
    overridden.stdout.fnmatch_lines(["karenina: mode template_only, *, concurrency 5, *"])


def test_strict_replay_plays_back_offline_and_misses_are_errors(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    store = pytester.path / "calls.jsonl"
    args = ["--karenina", str(path), *endpoint_args(openai_server), "--karenina-replay-store",
            str(store)]  # fmt: skip
    pytester.runpytest(*args, "--karenina-replay", "record").assert_outcomes(
        passed=2, failed=2, skipped=1
    )
    calls = len(openai_server.chat_requests)
    replayed = pytester.runpytest(*args, "--karenina-replay", "strict")
    replayed.assert_outcomes(passed=2, failed=2, skipped=1)
    assert len(openai_server.chat_requests) == calls  # nothing went over the network
    missing = pytester.runpytest(*args, "--karenina-replay", "strict", "--karenina-abstention")
    missing.assert_outcomes(errors=4, skipped=1)
    missing.stdout.fnmatch_lines(
        ["*strict replay: no recorded reply for question*call kind 'abstention_check'*"]
    )
    assert len(openai_server.chat_requests) == calls
