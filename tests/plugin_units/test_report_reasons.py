"""What the payload, the HTML cells and the HTML extras say about why an item did not pass: a
template error, and a verdict a stage forced although every field passed (score 1.00)."""

from __future__ import annotations

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.cells import score_cell
from pytest_karenina.plugin.report.html import render_extras
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results import VerificationResult
from tests.plugin_units.units_helpers import (
    FACTS,
    TYPO_WARNING,
    fields_result,
    forced_result,
    typo_result,
    verdicts_of,
)

UNQUOTED = "deep judgment: no verbatim quote for symbol"


def payload_of(*results: VerificationResult) -> ItemPayload:
    payload = ItemPayload.of_verdicts(
        nodeid="b.jsonld::q", question_id="q", question_text="Which metal is Au?",
        answering_model="m", replicate=None, facts=FACTS, verdicts=verdicts_of(*results),
        include_trace=False,
    )  # fmt: skip
    return ItemPayload.from_json(payload.to_json())  # as the reporting process reads it


def test_a_template_error_is_the_reason_and_no_score_is_shown() -> None:
    payload = payload_of(typo_result())

    assert payload.category is Outcome.TEMPLATE_ERROR
    (summary,) = payload.summaries
    assert (summary.reason, summary.error) == (TYPO_WARNING, TYPO_WARNING)
    assert "n/a (error:template)</span>" in score_cell(payload)
    extras = render_extras(payload, include_trace=False)
    assert "<strong>Reason </strong>template error: verify() raised AttributeError" in extras


def test_a_forced_verdict_shows_its_stage_beside_the_fields_score() -> None:
    payload = payload_of(forced_result("deep_judgment", "DeepJudgmentAutoFail", UNQUOTED))

    (summary,) = payload.summaries
    assert (summary.category, summary.reason) == (Outcome.VERIFY_FAIL, UNQUOTED)
    assert summary.deciding_stage == "DeepJudgmentAutoFail"
    cell = score_cell(payload)
    assert "1.00, decided by DeepJudgmentAutoFail</span>" in cell
    assert 'title="the granular score of the fields; DeepJudgmentAutoFail decided' in cell
    extras = render_extras(payload, include_trace=False)
    assert f'<p class="karenina-reason"><strong>Reason </strong>{UNQUOTED}</p>' in extras
    assert "(decided by DeepJudgmentAutoFail)" in extras
    assert "granular score 1.00 (of the fields; DeepJudgmentAutoFail decided)" in extras


def test_a_verdict_of_the_fields_keeps_a_plain_score() -> None:
    payload = payload_of(fields_result(symbol="Ag", verify_granular_result=0.5))

    assert payload.summaries[0].reason == "symbol: 'Ag' != 'Au'"
    assert score_cell(payload) == "0.50"
    assert payload_of(fields_result(symbol="Au")).summaries[0].reason is None
