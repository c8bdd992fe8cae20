"""A checkpoint with multi-turn scenarios says loudly that they are not run: the pass rate
covers its standalone questions only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import DATA
from tests.plugin.plugin_helpers import MULTI, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer

WARNING = "pytest_karenina.plugin.collect.ScenariosNotRunWarning"
SCENARIOS = [{"@type": "Scenario", "name": "triage"}, {"@type": "Scenario", "name": "follow-up"}]


def with_scenarios(pytester: pytest.Pytester) -> Path:
    data = json.loads((DATA / MULTI).read_text(encoding="utf-8"))
    data["hasPart"] = SCENARIOS
    path = pytester.path / "with_scenarios.jsonld"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_run_warns_how_many_scenarios_are_not_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = with_scenarios(pytester)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-W", f"default::{WARNING}"
    )

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines([
        "*warnings summary*",
        "*ScenariosNotRunWarning: karenina: with_scenarios.jsonld: 2 multi-turn scenario(s) of "
        "benchmark * are not run (so far only pytest_karenina.scenarios.run_scenarios runs "
        "them): the results and the pass rate cover its 5 standalone question(s) only",
    ])  # fmt: skip


def test_the_warning_has_its_own_category(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """A suite that turns this category into errors stops at collection."""
    path = with_scenarios(pytester)

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--co", "-W", f"error::{WARNING}"
    )

    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ScenariosNotRunWarning*2 multi-turn scenario(s)*"])


def test_a_checkpoint_without_scenarios_says_nothing(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = pytester.path / MULTI
    path.write_text((DATA / MULTI).read_text(encoding="utf-8"), encoding="utf-8")

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--co", "-W", f"error::{WARNING}"
    )

    assert result.ret == pytest.ExitCode.OK
    assert "multi-turn" not in result.stdout.str()
