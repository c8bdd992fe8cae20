"""Retry and request-limit options: what reaches the run's config, and each xdist worker's
share of a model's limits (the live check of the shared cap is in test_concurrency.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_karenina.plugin.options.run_config import build_config
from pytest_karenina.plugin.stash import CONFIG_KEY, SETTINGS_KEY
from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args
from tests.support.openai_server import Fault, OpenAIServer

LIMITS = (
    "--karenina-max-retries", "1", "--karenina-llm-timeout", "30",
    "--karenina-max-concurrent-requests", "6", "--karenina-requests-per-minute", "90",
)  # fmt: skip


def test_options_reach_the_config_and_every_model(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    config = pytester.parseconfigure(
        "--karenina", str(path), *endpoint_args(openai_server), *LIMITS
    )
    vconfig = config.stash[CONFIG_KEY]
    assert vconfig.max_call_seconds == 30.0
    assert (vconfig.max_concurrent_requests, vconfig.requests_per_minute) == (6, 90.0)
    policy = vconfig.retry_policy
    budgets = [policy.budget(c).max_attempts for c in ("connection", "timeout", "rate_limit")]
    assert budgets == [1, 1, 1]  # Karenina's defaults are 3, 3 and 5
    answering, parsing = vconfig.stamped_models()
    for model in [*answering, *parsing]:
        assert (model.max_concurrent_requests, model.requests_per_minute) == (6, 90.0)
        assert model.retry_policy is not None
        assert model.retry_policy.server_error.max_attempts == 1


def test_each_xdist_worker_gets_its_share(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    config = pytester.parseconfigure(
        "--karenina", str(path), *endpoint_args(openai_server), *LIMITS
    )
    settings = dataclasses.replace(config.stash[SETTINGS_KEY], workers=4)
    shared = build_config(settings)
    assert (shared.max_concurrent_requests, shared.requests_per_minute) == (1, 22.5)
    (model,), _ = shared.stamped_models()
    assert (model.max_concurrent_requests, model.requests_per_minute) == (1, 22.5)
    alone = build_config(dataclasses.replace(settings, workers=1))
    assert alone.max_concurrent_requests == 6


@pytest.mark.parametrize(
    ("option", "value"),
    [("--karenina-max-retries", "-1"), ("--karenina-llm-timeout", "soon"),
     ("--karenina-requests-per-minute", "0"), ("--karenina-max-concurrent-requests", "0")],
)  # fmt: skip
def test_bad_limits_are_usage_errors(
    pytester: pytest.Pytester, openai_server: OpenAIServer, option: str, value: str
) -> None:
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server),
                                option, value)  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option}*"])


def test_the_header_shows_the_limits(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    result = pytester.runpytest(
        "--collect-only", "--karenina", str(path), *endpoint_args(openai_server), *LIMITS
    )
    result.stdout.fnmatch_lines(
        ["karenina: per model 6 in flight, 90/min, 30s per call, at most 1 retries"]
    )


def test_a_call_out_of_time_is_a_timeout(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    openai_server.set_default(Fault.timeout(seconds=5))  # every request hangs
    path = copy_checkpoint(pytester)
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-k", "mq001",
        "--karenina-llm-timeout", "0.5", "--karenina-request-timeout", "0.3",
        f"--karenina-results={export}",
    )  # fmt: skip

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["outcomes: error:timeout 1"])
    [row] = json.loads(export.read_text(encoding="utf-8"))["results"]
    failure = row["metadata"]["failure"]
    assert failure["category"] == "timeout"
    assert failure["reason"] == "the call's time budget was spent"
    assert "time budget of 0.5s exhausted" in failure["details"]["error_message"]
