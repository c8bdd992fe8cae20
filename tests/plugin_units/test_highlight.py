"""Deep judgment's quotes highlighted in the model's answer (HTML report)."""

from __future__ import annotations

from pytest_karenina.plugin.report.highlight import highlighted

ANSWER = (
    "--- AI Message ---\nThe first landing was on July 20, 1969 <b>&</b> Neil Armstrong led it."
)


def test_quotes_are_marked_per_attribute_and_everything_else_escaped() -> None:
    legend, body = highlighted(
        ANSWER, {"date": ["July 20, 1969"], "commander": ["neil  armstrong"], "crew": []}
    )
    assert '<mark class="karenina-excerpt" data-attribute="date" title="date"' in body
    assert ">July 20, 1969</mark>" in body
    assert ">Neil Armstrong</mark>" in body  # case and whitespace differ from the quote
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in body and "<b>" not in body
    assert 'data-attribute="date"' in legend and 'data-attribute="commander"' in legend
    assert "crew" not in legend  # nothing of it was marked


def test_overlapping_and_unfound_quotes_are_left_unmarked() -> None:
    _, body = highlighted(
        ANSWER,
        {"a": ["landing was on July 20"], "b": ["July 20, 1969"], "c": ["Buzz Aldrin"]},
    )
    assert body.count("<mark") == 1 and 'data-attribute="a"' in body


def test_without_quotes_the_answer_is_only_escaped() -> None:
    assert highlighted("x < y", {}) == ("", "x &lt; y")
