"""Replicate policies: reading them, their verdicts, flaky items."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.verdict.outcome import Outcome, Verdict
from pytest_karenina.plugin.verdict.replicates import ReplicatePolicy, ReplicatePolicyError, vote
from tests.plugin_units.units_helpers import fields_result

PASS, FAIL, ERROR = Outcome.PASS, Outcome.VERIFY_FAIL, Outcome.of_failure("timeout")


def verdicts(*outcomes: Outcome) -> list[Verdict]:
    found = []
    for replicate, outcome in enumerate(outcomes, start=1):
        result = fields_result().model_copy(deep=True)
        result.metadata.replicate = replicate
        found.append(Verdict(result, [], outcome))
    return found


@pytest.mark.parametrize(
    ("text", "kind", "k"),
    [("each", "each", None), ("ALL", "all", None), ("majority", "majority", None),
     ("at-least:2", "at-least", 2), ("pass@3", "pass@", 3), (None, "each", None)],
)  # fmt: skip
def test_parse(text: str | None, kind: str, k: int | None) -> None:
    policy = ReplicatePolicy.parse(text)
    assert (policy.kind, policy.k) == (kind, k)
    assert str(policy) == (text or "each").lower()


@pytest.mark.parametrize("text", ["most", "at-least", "pass@", "at-least:x"])
def test_unreadable_policies_name_the_forms(text: str) -> None:
    with pytest.raises(ReplicatePolicyError, match="each, all, majority, at-least:K or pass@K"):
        ReplicatePolicy.parse(text)


def test_k_must_fit_the_replicates() -> None:
    ReplicatePolicy.parse("at-least:3").check(3)
    with pytest.raises(ReplicatePolicyError, match="between 1 and the 3 replicates"):
        ReplicatePolicy.parse("pass@4").check(3)


@pytest.mark.parametrize(
    ("policy", "passed", "expected"),
    [("all", [True, True, False], False), ("all", [True] * 3, True),
     ("majority", [True, True, False], True), ("majority", [True, False], False),
     ("at-least:2", [False, True, True], True), ("at-least:2", [True, False, False], False),
     ("pass@1", [False, True, True], False), ("pass@2", [False, True, False], True)],
)  # fmt: skip
def test_policy_verdicts(policy: str, passed: list[bool], expected: bool) -> None:
    assert ReplicatePolicy.parse(policy).passes(passed) is expected


def test_disagreeing_replicates_are_flaky_and_keep_the_policys_outcome() -> None:
    found = vote(verdicts(PASS, FAIL, PASS), ReplicatePolicy.parse("majority"), "policy")
    assert found.outcome is PASS and found.flaky and found.fraction() == "2/3"
    assert found.describe() == (
        "replicates: pass, verify_fail, pass (2/3 passed; majority: pass; flaky)"
    )
    strict = vote(verdicts(PASS, FAIL, PASS), ReplicatePolicy.parse("all"), "policy")
    assert strict.outcome is FAIL


@pytest.mark.parametrize(("mode", "expected"), [("pass", PASS), ("fail", FAIL)])
def test_flaky_mode_overrides_the_policy(mode: str, expected: Outcome) -> None:
    found = vote(verdicts(PASS, FAIL, PASS), ReplicatePolicy.parse("majority"), mode)  # type: ignore[arg-type]
    assert found.outcome is expected
    assert f"flaky counted as {mode}" in found.describe()


def test_unanimous_replicates_are_not_flaky_and_an_error_wins() -> None:
    assert not vote(verdicts(FAIL, FAIL), ReplicatePolicy.parse("all"), "pass").flaky
    assert vote(verdicts(FAIL, FAIL), ReplicatePolicy.parse("all"), "pass").outcome is FAIL
    errored = vote(verdicts(PASS, ERROR, PASS), ReplicatePolicy.parse("majority"), "policy")
    assert errored.outcome is ERROR
