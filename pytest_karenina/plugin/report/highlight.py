"""The model's answer with deep judgment's accepted quotes highlighted, for the HTML report.

Each accepted quote is found again in the text shown (the raw answer, which may differ from
the text the judge quoted by its trace headers) with the same matcher that accepted it, and
wrapped in ``<mark class="karenina-excerpt" data-attribute="...">``, one colour per
attribute, with a legend. Where two quotes overlap, the first one found keeps the text.
Everything else is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from pytest_karenina.pipeline.deep_judgment.excerpts import ResponseText

COLOURS = ("#fde68a", "#bfdbfe", "#bbf7d0", "#fbcfe8", "#ddd6fe", "#fed7aa")
MIN_SIMILARITY = 0.8
"""How closely a quote must match the shown text to be marked (it matched the judged text)."""


def _mark(text: str, attribute: str, colour: str) -> str:
    return (
        f'<mark class="karenina-excerpt" data-attribute="{escape(attribute)}" '
        f'title="{escape(attribute)}" style="background: {colour}">{escape(text)}</mark>'
    )


def highlighted(text: str, excerpts: Mapping[str, Sequence[str]]) -> tuple[str, str]:
    """``(legend, body)``: escaped HTML of ``text`` with each attribute's quotes marked, and
    the legend naming the attributes by colour (empty when nothing was marked)."""
    response = ResponseText(text)
    colours = {name: COLOURS[i % len(COLOURS)] for i, name in enumerate(excerpts)}
    spans: list[tuple[int, int, str]] = []
    for attribute, quotes in excerpts.items():
        for quote in quotes:
            found = response.match(quote, MIN_SIMILARITY)
            if found.start is None or found.end is None or found.similarity < MIN_SIMILARITY:
                continue
            if any(found.start < end and start < found.end for start, end, _ in spans):
                continue
            spans.append((found.start, found.end, attribute))
    if not spans:
        return "", escape(text)
    spans.sort()
    parts: list[str] = []
    position = 0
    for start, end, attribute in spans:
        parts.append(escape(text[position:start]))
        parts.append(_mark(text[start:end], attribute, colours[attribute]))
        position = end
    parts.append(escape(text[position:]))
    marked = {attribute for _, _, attribute in spans}
    legend = " ".join(
        _mark(attribute, attribute, colour)
        for attribute, colour in colours.items()
        if attribute in marked
    )
    return f'<p class="karenina-legend">quoted evidence: {legend}</p>', "".join(parts)
