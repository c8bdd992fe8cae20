"""Deep judgment's excerpts: reading the judge's quotes and checking each against the response.

An excerpt is evidence only if the response says it: each quote is matched against the
response (:mod:`quotes`: whitespace collapsed, case folded, a verbatim quote by plain search,
others by the best alignment of the quote inside the response, as a share of the quote), and
accepted when it reaches the threshold: one threshold, nothing hidden. Every accepted quote
keeps the span it matched in the original response, for highlighting.

A reply is read up to the maximum of quotes per attribute (or trait): the first ones, and one
"nothing to quote" entry; the rest is dropped and counted. What goes back to the judge on a
retry and into warnings is bounded the same way: those entries, each quote cut to
:data:`SHOWN_QUOTE` characters, and how many were dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.pipeline.deep_judgment.quotes import AlignBudget, QuoteMatch, ResponseText

__all__ = [
    "Excerpt",
    "ExcerptCheck",
    "QuoteMatch",
    "ResponseText",
    "check_excerpts",
    "shortened",
    "ungrounded_line",
]

CONFIDENCES = ("high", "medium", "low")
"""The confidence levels the judge may give; anything else is read as ``medium``."""
NO_EXCERPT = "none"
"""The confidence of the judge's "nothing to quote" entry (empty text, an explanation)."""
SHOWN_QUOTE = 200
"""The most characters of a quote (or an explanation) shown in retry feedback and warnings."""
KEPT_EXPLANATION = 1_000
"""The most characters of the judge's explanation of an entry kept in the result."""
RESENT_REPLY = 16_000
"""The longest reply resent as given with a retry; a longer one, or one with dropped entries,
is resent as the entries read (:meth:`ExcerptCheck.resent`)."""


def shortened(text: str, limit: int = SHOWN_QUOTE) -> str:
    """``text``, or its first ``limit`` characters and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One quote of the judge, as checked; ``note`` says why a rejected quote was not aligned
    (too long, over the work limit) where its similarity would not."""

    text: str
    confidence: str
    similarity_score: float
    explanation: str | None = None
    start: int | None = None
    end: int | None = None
    note: str | None = None

    def to_result(self) -> dict[str, Any]:
        """The result section's form: ``{text, confidence, similarity_score[, explanation]}``
        (``note`` too when set: only rejected quotes have one)."""
        found: dict[str, Any] = {
            "text": self.text,
            "confidence": self.confidence,
            "similarity_score": round(self.similarity_score, 4),
        }
        if self.explanation:
            found["explanation"] = self.explanation
        if self.note:
            found["note"] = self.note
        return found


def _judged(quote: Mapping[str, Any], threshold: float) -> str:
    """``"<quote>" (similarity 0.41 < 0.80)``, or the quote's note; the quote shortened."""
    why = quote.get("note") or f"similarity {quote['similarity_score']:.2f} < {threshold:.2f}"
    return f'"{shortened(str(quote["text"]))}" ({why})'


def _not_read(dropped: int) -> str:
    return f"{dropped:,} more entr{'y' if dropped == 1 else 'ies'} of the reply not read"


@dataclass
class ExcerptCheck:
    """The judge's excerpts per attribute after checking them against the response.

    ``accepted`` holds, per attribute, the quotes found in the response and the judge's
    "nothing to quote" entry (similarity 0); ``rejected`` the quotes that were not found;
    ``missing`` the attributes without any accepted quote, in attribute order; ``dropped``
    how many entries per attribute were not read (over the maximum).
    """

    accepted: dict[str, list[Excerpt]] = field(default_factory=dict)
    rejected: dict[str, list[Excerpt]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def feedback(self, threshold: float) -> str:
        """What to tell the judge when asking again: every rejected quote and its score, and
        how many entries were not read."""
        lines = [
            "Some excerpts are not verbatim text of the response (similarity below "
            f"{threshold:.2f}). Quote the response exactly. Rejected:"
        ]
        for attribute, excerpts in self.rejected.items():
            for excerpt in excerpts:
                lines.append(f"- {attribute}: {_judged(excerpt.to_result(), threshold)}")
        for attribute, dropped in self.dropped.items():
            lines.append(f"- {attribute}: {_not_read(dropped)} (give at most the maximum)")
        return "\n".join(lines)

    def resent(self, reply_text: str) -> str:
        """The judge's reply as it goes back with a retry: as given when nothing was dropped
        and it has at most :data:`RESENT_REPLY` characters; else the entries read, as JSON,
        each quote shortened (a reply with no entry read: its first characters)."""
        if not self.dropped and len(reply_text) <= RESENT_REPLY:
            return reply_text
        read = {
            name: [
                {"text": shortened(e.text), "confidence": e.confidence}
                | ({"explanation": shortened(e.explanation)} if e.explanation else {})
                for e in [*self.accepted.get(name, []), *self.rejected.get(name, [])]
            ]
            for name in self.accepted
        }
        if not any(read.values()):
            return shortened(reply_text, RESENT_REPLY)
        return json.dumps(read, ensure_ascii=False)


def _confidence(value: Any) -> str:
    text = str(value).strip().lower() if value is not None else ""
    return text if text in CONFIDENCES else "medium"


def _entries(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def check_excerpts(
    reply: Mapping[str, Any],
    attributes: Iterable[str],
    response: ResponseText,
    *,
    threshold: float,
    max_per_attribute: int,
) -> ExcerptCheck:
    """Check the judge's ``{attribute: [{text, confidence[, explanation]}]}`` reply.

    Entries that are not objects, or whose text is not a string, are rejected. Per attribute
    the first ``max_per_attribute`` quotes, as many such malformed entries and the first
    "nothing to quote" entry are read; the other entries are dropped and counted in
    ``dropped``.
    Attributes the reply leaves out have no excerpts. The fuzzy work of all the quotes is
    bounded by one :class:`~.quotes.AlignBudget`.
    """
    check = ExcerptCheck()
    budget = AlignBudget()
    for attribute in attributes:
        accepted: list[Excerpt] = []
        rejected: list[Excerpt] = []
        quoted = malformed = dropped = 0
        for entry in _entries(reply.get(attribute)):
            raw = entry.get("text", "") if isinstance(entry, Mapping) else None
            text = raw if isinstance(raw, str) else None
            if isinstance(text, str) and not text.strip():
                explanation = entry.get("explanation")
                said = str(entry.get("confidence", "")).strip().lower() == NO_EXCERPT
                if (said or explanation) and not any(e.confidence == NO_EXCERPT for e in accepted):
                    explanation = (
                        shortened(str(explanation), KEPT_EXPLANATION) if explanation else None
                    )
                    accepted.append(Excerpt("", NO_EXCERPT, 0.0, explanation))
                else:
                    dropped += 1
                continue
            if not isinstance(text, str):  # not an object, or its text is not a string
                if malformed >= max_per_attribute:
                    dropped += 1
                else:
                    malformed += 1
                    rejected.append(Excerpt(shortened(str(entry)), "medium", 0.0))
                continue
            if quoted >= max_per_attribute:
                dropped += 1
                continue
            quoted += 1
            explanation = entry.get("explanation")
            explanation = shortened(str(explanation), KEPT_EXPLANATION) if explanation else None
            matched = response.match(text, threshold, budget)
            excerpt = Excerpt(
                text, _confidence(entry.get("confidence")), matched.similarity, explanation,
                matched.start, matched.end, matched.note,
            )  # fmt: skip
            (accepted if matched.similarity >= threshold else rejected).append(excerpt)
        check.accepted[attribute] = accepted
        if rejected:
            check.rejected[attribute] = rejected
        if dropped:
            check.dropped[attribute] = dropped
        if not any(excerpt.text for excerpt in accepted):
            check.missing.append(attribute)
    return check


def ungrounded_line(
    subject: str, rejected: Iterable[Mapping[str, Any]], threshold: float, dropped: int = 0
) -> str:
    """The warning for ``subject`` (an attribute, a rubric trait) left without a quote: its
    rejected quotes (shortened) with their similarity or note, or that the judge gave none,
    and how many entries of the reply were not read. Reports show the lines that start
    ``deep judgment: ``."""
    shown = "; ".join(_judged(quote, threshold) for quote in rejected)
    line = f"deep judgment: no verbatim quote for {subject}; "
    line += f"rejected {shown}" if shown else "the judge gave none"
    return f"{line}; {_not_read(dropped)}" if dropped else line
