"""Run summary: pass rates, outcome counts, tokens, rubric statistics, the text; the pass-rate
gate."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pytest_karenina.plugin.controller import write_lines
from pytest_karenina.plugin.gates.pass_rate import PassRateGate
from pytest_karenina.plugin.gates.protocol import Gate, exit_status, junit_properties, run_lines
from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.report.tallies import TraitStats
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.rubrics.gates import TraitCheck


@dataclass
class FakeTerminal:
    """Records what the summary writes, in order."""

    lines: list[str] = field(default_factory=list)

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(f"{sep * 3} {title} {sep * 3}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)

    def write(self, summary: RunSummary, gates: list[Gate] | None = None) -> None:
        """What the controller writes of ``summary`` and ``gates``."""
        write_lines(self, run_lines(summary, gates or []))


def _item(
    name: str,
    category: Outcome,
    model: str = "gpt-4o",
    tokens: tuple[int, int] = (0, 0),
    checks: tuple[TraitCheck, ...] = (),
    nodeid: str | None = None,
) -> ItemPayload:
    return ItemPayload(
        nodeid=nodeid or f"bench.jsonld::{name}",
        category=category,
        question_id=name,
        answering_model=model,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        summaries=[ResultSummary(category=category, rubric=list(checks))] if checks else [],
    )


def _run(*payloads: ItemPayload) -> RunSummary:
    summary = RunSummary()
    for payload in payloads:
        summary.add(payload)
    return summary


def _three_items() -> RunSummary:
    return _run(
        _item("q1", Outcome.PASS, tokens=(10, 5)),
        _item("q2", Outcome.VERIFY_FAIL, tokens=(7, 3)),
        _item("q3", Outcome.TIMEOUT_ERROR, model="claude-haiku", tokens=(4, 0)),
    )


def test_counts_and_rates() -> None:
    """Totals, pass rate, per-model rates, categories and tokens over three items."""
    summary = _three_items()
    assert (summary.total, summary.passed) == (3, 1)
    assert summary.pass_rate == pytest.approx(1 / 3)
    assert summary.by_model() == {"gpt-4o": (1, 2), "claude-haiku": (0, 1)}
    assert summary.categories() == {"pass": 1, "verify_fail": 1, "error:timeout": 1}
    assert summary.tokens() == (21, 8)


def test_an_empty_run_has_no_pass_rate() -> None:
    """No items: no rate (not 0%, not 100%)."""
    assert RunSummary().pass_rate is None
    assert RunSummary().tokens() == (0, 0)


def test_unknown_model_is_question_mark() -> None:
    """Payloads without a model (a crashed worker) count under ``?``."""
    summary = _run(ItemPayload.worker_crashed("bench.jsonld::q9"))
    assert summary.by_model() == {"?": (0, 1)}
    assert summary.categories() == {"error:worker_crashed": 1}


def test_first_payload_of_a_nodeid_wins() -> None:
    """A repeated node id (a rerun) is refused and changes nothing."""
    summary = RunSummary()
    assert summary.add(_item("q1", Outcome.VERIFY_FAIL, tokens=(5, 5))) is True
    assert summary.add(_item("q1", Outcome.PASS, tokens=(9, 9))) is False
    assert summary.total == 1
    assert summary.payloads["bench.jsonld::q1"].category is Outcome.VERIFY_FAIL
    assert summary.tokens() == (5, 5)


CLARITY_LOW = TraitCheck("Clarity", "llm score 1-5", 2, True, False, bound=">= 3 (of 1-5)")
CLARITY_HIGH = TraitCheck("Clarity", "llm score 1-5", 5, True, True, bound=">= 3 (of 1-5)")
TONE = TraitCheck("tone", "llm literal", "formal", False, None)
EXTRACTION = TraitCheck("extraction", "metric tp_only", {"precision": 1.0, "f1": 0.5}, False, None)
EXTRACTION_GATED = TraitCheck(
    "extraction", "metric tp_only", {"precision": 0.5, "f1": 0.9}, True, True, bound="f1>=0.8"
)
SAFE_UNMEASURED = TraitCheck("Safe", "llm boolean", None, True, None, error="judge failed")
SKIPPED = TraitCheck("Dyn", "dynamic", None, False, None, skipped="not applicable")


def test_rubric_stats_per_model_and_trait() -> None:
    """Scores average, labels count, metric traits give one row per part, skipped traits none."""
    summary = _run(
        _item("q1", Outcome.RUBRIC_FAIL, checks=(CLARITY_LOW, TONE, EXTRACTION, SKIPPED)),
        _item("q2", Outcome.PASS, checks=(CLARITY_HIGH, EXTRACTION_GATED, SAFE_UNMEASURED)),
        _item("q3", Outcome.PASS, model="claude-haiku", checks=(CLARITY_HIGH,)),
        _item("q4", Outcome.PASS, model="no-rubric"),
    )
    stats = summary.rubric_stats()
    assert list(stats) == ["gpt-4o", "claude-haiku"]
    gpt = stats["gpt-4o"]
    assert list(gpt) == [
        "Clarity", "tone", "extraction.precision", "extraction.f1", "extraction", "Safe",
    ]  # fmt: skip
    assert gpt["Clarity"] == TraitStats("llm score 1-5", [2.0, 5.0], passed=1, gated=2)
    assert gpt["tone"].labels == {"formal": 1} and gpt["tone"].values == []
    assert gpt["extraction.precision"].values == [1.0, 0.5]
    assert gpt["extraction.f1"].values == [0.5, 0.9]
    # The parts are never gated themselves; the gated trait gets its own row without value.
    assert (gpt["extraction.f1"].passed, gpt["extraction.f1"].gated) == (0, 0)
    extraction = gpt["extraction"]
    assert (extraction.values, extraction.passed, extraction.gated) == ([], 1, 1)
    assert (gpt["Safe"].errors, gpt["Safe"].gated, gpt["Safe"].passed) == (1, 1, 0)
    assert stats["claude-haiku"]["Clarity"].describe() == "mean 5.00 (n=1); pass 1/1"


def test_trait_stats_describe() -> None:
    """Each part of the description appears only when it has data."""
    assert TraitStats("x").describe() == "no values"
    stats = TraitStats("llm score 1-5")
    for check in (CLARITY_LOW, CLARITY_HIGH, SAFE_UNMEASURED):
        stats.add(check)
    assert stats.describe() == "mean 3.50 (n=2); pass 1/3; no value 1"
    labels = TraitStats("llm literal")
    for label in ("formal", "casual", "formal"):
        labels.add(TraitCheck("tone", "llm literal", label, False, None))
    assert labels.describe() == "formal 2, casual 1"


def test_write_exact_lines() -> None:
    """The terminal summary of three items and a skipped one."""
    summary = _three_items()
    summary.add_skip("bench.jsonld::q4")
    terminal = FakeTerminal()
    terminal.write(summary)
    assert terminal.lines == [
        "=== karenina summary ===",
        "pass rate 33.3% (1/3 items), 95% CI 6.1%-79.2%",
        "  claude-haiku: 0.0% (0/1), 95% CI 0.0%-79.3%",
        "  gpt-4o: 50.0% (1/2), 95% CI 9.5%-90.5%",
        "outcomes: error:timeout 1, pass 1, skipped 1, verify_fail 1",
        "failure clusters (2, by size):",
        "  error:timeout x 1 (all on claude-haiku)",
        "  verify_fail x 1 (all on gpt-4o)",
        "tokens: 21 in, 8 out",
    ]


def test_write_with_rubric_and_gate() -> None:
    """Rubric trait lines per model and the gate line come last."""
    summary = _run(
        _item("q1", Outcome.PASS, tokens=(3, 1), checks=(CLARITY_HIGH, EXTRACTION)),
        _item("q2", Outcome.RUBRIC_FAIL, tokens=(2, 2), checks=(CLARITY_LOW,)),
    )
    _, gate = _decided(summary, pytest.ExitCode.TESTS_FAILED, 0.5)
    terminal = FakeTerminal()
    terminal.write(summary, [gate])
    assert terminal.lines == [
        "=== karenina summary ===",
        "pass rate 50.0% (1/2 items), 95% CI 9.5%-90.5%",
        "  gpt-4o: 50.0% (1/2), 95% CI 9.5%-90.5%",
        "outcomes: pass 1, rubric_fail 1",
        "failure clusters (1, by size):",
        "  rubric_fail: trait Clarity x 1",
        "tokens: 5 in, 3 out",
        "rubric traits:",
        "  gpt-4o:",
        "    Clarity (llm score 1-5): mean 3.50 (n=2); pass 1/2",
        "    extraction.precision (metric tp_only): mean 1.00 (n=1)",
        "    extraction.f1 (metric tp_only): mean 0.50 (n=1)",
        "karenina gate: pass rate 50.0% >= 50.0%: gate passed",
    ]


def test_write_only_skips() -> None:
    """A run whose items were all skipped still says so, with no pass rate."""
    summary = RunSummary()
    summary.add_skip("bench.jsonld::q1")
    terminal = FakeTerminal()
    terminal.write(summary)
    assert terminal.lines[:3] == [
        "=== karenina summary ===",
        "pass rate n/a (0/0 items)",
        "outcomes: skipped 1",
    ]


def test_write_nothing_for_an_empty_run() -> None:
    """No payloads and no skips: no summary section at all."""
    terminal = FakeTerminal()
    terminal.write(RunSummary())
    assert terminal.lines == []


def _decided(
    summary: RunSummary, status: pytest.ExitCode, threshold: float, on: str = "point"
) -> tuple[int, PassRateGate]:
    """The exit status after the pass-rate gate, starting from ``status``, and the gate."""
    gate = PassRateGate(threshold, on)
    return int(exit_status(status, summary, None, [gate])), gate


def _gate(summary: RunSummary, status: pytest.ExitCode, threshold: float | None) -> int:
    """The exit status after the gate (none without a threshold), starting from ``status``."""
    if threshold is None:
        return int(exit_status(status, summary, None, []))
    return _decided(summary, status, threshold)[0]


def test_gate_met_turns_failures_into_success() -> None:
    """At or above the threshold the run exits OK even with failed items."""
    summary = _three_items()
    status, gate = _decided(summary, pytest.ExitCode.TESTS_FAILED, 0.3)
    assert status == pytest.ExitCode.OK
    assert (gate.threshold, gate.passed) == (0.3, True)
    assert gate.pass_rate == pytest.approx(1 / 3)
    assert gate.describe() == "pass rate 33.3% >= 30.0%: gate passed"


def test_gate_missed_fails_the_run() -> None:
    """Below the threshold the run fails, even when pytest saw no failures."""
    summary = _three_items()
    status, gate = _decided(summary, pytest.ExitCode.OK, 0.5)
    assert status == pytest.ExitCode.TESTS_FAILED
    assert gate.passed is False
    assert gate.describe() == "pass rate 33.3% < 50.0%: gate FAILED"


@pytest.mark.parametrize(
    "status",
    [pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERNAL_ERROR],
)
def test_gate_keeps_other_exit_statuses(status: pytest.ExitCode) -> None:
    """An interrupted (or broken) run keeps its status, whatever the rate."""
    assert _gate(_three_items(), status, 0.0) == status


def test_no_gate_without_threshold_or_items() -> None:
    """No threshold, or no items: no gate and the status is left alone."""
    summary = _three_items()
    assert _gate(summary, pytest.ExitCode.TESTS_FAILED, None) == pytest.ExitCode.TESTS_FAILED
    empty = RunSummary()
    status = pytest.ExitCode.NO_TESTS_COLLECTED
    found, gate = _decided(empty, status, 0.5)
    assert found == status
    assert gate.passed is None and gate.lines() == [] and gate.junit_properties() == []


def test_errors_count_against_the_rate() -> None:
    """A crashed item counts in the total but not as passed."""
    summary = _run(_item("q1", Outcome.PASS), ItemPayload.worker_crashed("bench.jsonld::q2"))
    assert summary.pass_rate == 0.5
    assert _gate(summary, pytest.ExitCode.TESTS_FAILED, 0.75) == pytest.ExitCode.TESTS_FAILED
    assert _gate(summary, pytest.ExitCode.TESTS_FAILED, 0.5) == pytest.ExitCode.OK


def test_gate_on_the_lower_bound_fails_a_rate_that_is_only_luck() -> None:
    """1 of 3 passed: 33.3% meets a 30% gate, the interval's lower bound (6.1%) does not."""
    summary = _three_items()
    status, gate = _decided(summary, pytest.ExitCode.TESTS_FAILED, 0.3, "lower")
    assert status == pytest.ExitCode.TESTS_FAILED
    assert gate.lower_bound == pytest.approx(0.0613, abs=1e-3)
    assert gate.describe() == ("pass rate 33.3%, 95% CI lower bound 6.1% < 30.0%: gate FAILED")
    assert dict(junit_properties(summary, [gate])) == {
        "karenina.pass_rate": "0.3333", "karenina.pass_rate_ci_low": "0.0615",
        "karenina.pass_rate_ci_high": "0.7923", "karenina.gate": "failed",
        "karenina.min_pass_rate": "0.3", "karenina.gate_on": "lower",
    }  # fmt: skip


def test_replicates_of_a_question_count_as_one_cluster() -> None:
    """Three replicates of one question that all pass are not three independent passes."""
    from pytest_karenina.plugin.report.pass_rates import pass_rate

    replicated = [_item("q1", Outcome.PASS, nodeid=f"b::q1-r{i}") for i in range(3)]
    single = [_item(f"q{i}", Outcome.PASS) for i in range(3)]
    first, second = (
        pass_rate([*replicated, _item("q2", Outcome.VERIFY_FAIL)]),
        pass_rate([*single, _item("q9", Outcome.VERIFY_FAIL)]),
    )
    assert first is not None and second is not None
    assert first.rate == second.rate == 0.75
    assert first.high - first.low > second.high - second.low
