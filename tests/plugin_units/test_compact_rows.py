"""A large run's HTML report stays small: a passing result's fields are one line (what was
extracted), the full table is kept for every result that did not pass."""

from __future__ import annotations

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.html import render_extras
from pytest_karenina.results import VerificationResult
from tests.plugin_units.units_helpers import FACTS, fields_result, verdicts_of

TABLE = '<table class="karenina-fields">'


def extras_of(*results: VerificationResult) -> str:
    payload = ItemPayload.of_verdicts(
        nodeid="b.jsonld::q", question_id="q", question_text="Which metal is Au?",
        answering_model="m", replicate=None, facts=FACTS, verdicts=verdicts_of(*results),
        include_trace=False,
    )  # fmt: skip
    return render_extras(ItemPayload.from_json(payload.to_json()), include_trace=False)


def test_a_pass_shows_its_fields_in_one_line() -> None:
    extras = extras_of(fields_result(symbol="Au"))
    assert TABLE not in extras
    line = '<p class="karenina-fields-line"><strong>Fields </strong>'
    assert f"{line}symbol &#x27;Au&#x27;, year 1928: all pass</p>" in extras
    assert "Which metal is Au?" in extras  # the question stays (the search reads it)


def test_a_failure_keeps_the_whole_table() -> None:
    extras = extras_of(fields_result(symbol="Ag"))
    assert TABLE in extras and "karenina-fields-line" not in extras
    assert "<td>symbol</td><td>&#x27;Au&#x27;</td><td>&#x27;Ag&#x27;</td>" in extras


def test_each_result_of_an_item_is_judged_on_its_own() -> None:
    extras = extras_of(fields_result(symbol="Au"), fields_result(symbol="Ag"))
    assert extras.count(TABLE) == 1 and extras.count("karenina-fields-line") == 1
    assert extras.index("karenina-fields-line") < extras.index(TABLE)  # result 1 passed
