"""Deep judgment's excerpts: reading the judge's quotes and checking each against the response.

An excerpt is evidence only if the response says it. Both texts are compared with their
whitespace collapsed and their case folded; the similarity is rapidfuzz's ``partial_ratio``
(the best-aligned stretch of the response, as a share of 1), and a quote is accepted when it
reaches the threshold: one threshold, nothing hidden. Every accepted quote keeps the span it
matched in the original response, for highlighting. A verbatim quote is found by plain
search first, so the usual case costs microseconds.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

_WHITESPACE = re.compile(r"\s+")
_ODD_WHITESPACE = re.compile(r" \s+|[^\S ]\s*")
"""Whitespace runs other than one plain space: the only ones collapsing changes."""
_ASCII_ODD = ("  ", "\n", "\t", "\r", "\x0b", "\x0c")
CONFIDENCES = ("high", "medium", "low")
"""The confidence levels the judge may give; anything else is read as ``medium``."""
MIN_ANCHOR = 8
"""The shortest verbatim stretch the near-verbatim fast path looks for."""
NO_EXCERPT = "none"
"""The confidence of the judge's "nothing to quote" entry (empty text, an explanation)."""


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """How well a quote matches the response: ``similarity`` in [0, 1] and the matched span
    of the original response (None when nothing aligned)."""

    similarity: float
    start: int | None = None
    end: int | None = None


class ResponseText:
    """A response prepared for matching quotes. Build it once per response.

    A quote copied exactly is found by a plain search of the original text. Others are looked
    for in the collapsed, case-folded text (exactly, then fuzzily), whose positions map back
    to the original; it is made on first use.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._collapsed: str | None = None
        self._starts: list[int] = []  # collapsed position of each whitespace run's space
        self._removed: list[int] = []  # characters dropped up to and including that run
        self._positions: list[int] | None = None  # per character, when case folding resized

    @property
    def collapsed(self) -> str:
        """The text with whitespace runs as one space, case folded."""
        if self._collapsed is None:
            folded = self.text.casefold()
            if len(folded) == len(self.text):
                self._collapsed = self._collapse(folded)
            else:  # a character folds to several (ß -> ss): map every position
                self._collapsed, self._positions = _collapse_slowly(self.text)
        return self._collapsed

    def _collapse(self, folded: str) -> str:
        if folded.isascii() and not any(odd in folded for odd in _ASCII_ODD):
            return folded  # one plain space between words already: nothing moves
        removed = 0
        for run in _ODD_WHITESPACE.finditer(folded):
            self._starts.append(run.start() - removed)
            removed += run.end() - run.start() - 1
            self._removed.append(removed)
        return _ODD_WHITESPACE.sub(" ", folded)

    def _original(self, position: int) -> int:
        if self._positions is not None:
            return self._positions[min(position, len(self._positions) - 1)]
        runs_before = bisect.bisect_left(self._starts, position)
        return position + (self._removed[runs_before - 1] if runs_before else 0)

    def match(self, quote: str, enough: float = 1.0) -> QuoteMatch:
        """The best alignment of ``quote`` in the response.

        A near-verbatim quote is first aligned within a window around a verbatim half of it;
        when that reaches ``enough`` (the caller's threshold) it is the match, else the whole
        response is searched. So accept/reject decisions are those of the whole search; an
        accepted quote's similarity may be that of the window, never below ``enough``.
        """
        words = quote.split()
        if not words or not self.text.strip():
            return QuoteMatch(0.0)
        exact = " ".join(words)
        at = self.text.find(exact)
        if at >= 0:
            return QuoteMatch(1.0, at, at + len(exact))
        needle = exact.casefold()
        at = self.collapsed.find(needle)
        if at >= 0:
            return QuoteMatch(1.0, *self._span(at, at + len(needle)))
        near = self._near_anchor(needle, enough)
        if near is not None:
            return near
        aligned = fuzz.partial_ratio_alignment(needle, self.collapsed)
        if aligned is None or aligned.score <= 0 or aligned.dest_end <= aligned.dest_start:
            return QuoteMatch(0.0)
        return QuoteMatch(aligned.score / 100, *self._span(aligned.dest_start, aligned.dest_end))

    def _near_anchor(self, needle: str, enough: float) -> QuoteMatch | None:
        # A quote changed in one place keeps its first or last half verbatim: align it in a
        # window there, three quote-lengths wide, instead of the whole response.
        size = len(needle)
        half = max(size // 2, MIN_ANCHOR)
        if size < 2 * MIN_ANCHOR or len(self.collapsed) < 4 * size:
            return None
        for anchor, offset in ((needle[:half], 0), (needle[-half:], size - half)):
            at = self.collapsed.find(anchor)
            if at < 0:
                continue
            low = max(at - offset - size, 0)
            window = self.collapsed[low : at - offset + 2 * size]
            aligned = fuzz.partial_ratio_alignment(needle, window, score_cutoff=enough * 100)
            if aligned is not None and aligned.dest_end > aligned.dest_start:
                start, end = low + aligned.dest_start, low + aligned.dest_end
                return QuoteMatch(aligned.score / 100, *self._span(start, end))
        return None

    def _span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``collapsed[start:end]``."""
        return self._original(start), self._original(end - 1) + 1


def _collapse_slowly(text: str) -> tuple[str, list[int]]:
    chars: list[str] = []
    positions: list[int] = []
    in_space = False
    for index, char in enumerate(text):
        if char.isspace():
            if not in_space:
                chars.append(" ")
                positions.append(index)
            in_space = True
            continue
        folded = char.casefold()
        chars.extend(folded)
        positions.extend([index] * len(folded))
        in_space = False
    return "".join(chars), positions


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One quote of the judge, as checked."""

    text: str
    confidence: str
    similarity_score: float
    explanation: str | None = None
    start: int | None = None
    end: int | None = None

    def to_result(self) -> dict[str, Any]:
        """The result section's form: ``{text, confidence, similarity_score[, explanation]}``."""
        found: dict[str, Any] = {
            "text": self.text,
            "confidence": self.confidence,
            "similarity_score": round(self.similarity_score, 4),
        }
        if self.explanation:
            found["explanation"] = self.explanation
        return found


@dataclass
class ExcerptCheck:
    """The judge's excerpts per attribute after checking them against the response.

    ``accepted`` holds, per attribute, the quotes found in the response and the judge's
    "nothing to quote" entry (similarity 0); ``rejected`` the quotes that were not found;
    ``missing`` the attributes without any accepted quote, in attribute order.
    """

    accepted: dict[str, list[Excerpt]] = field(default_factory=dict)
    rejected: dict[str, list[Excerpt]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def feedback(self, threshold: float) -> str:
        """What to tell the judge when asking again: every rejected quote and its score."""
        lines = [
            "Some excerpts are not verbatim text of the response (similarity below "
            f"{threshold:.2f}). Quote the response exactly. Rejected:"
        ]
        for attribute, excerpts in self.rejected.items():
            for excerpt in excerpts:
                lines.append(
                    f'- {attribute}: "{excerpt.text}" (similarity {excerpt.similarity_score:.2f})'
                )
        return "\n".join(lines)


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

    Entries that are not objects, or whose text is not a string, are rejected; at most
    ``max_per_attribute`` quotes per attribute are kept (the first ones); attributes the
    reply leaves out have no excerpts.
    """
    check = ExcerptCheck()
    for attribute in attributes:
        accepted: list[Excerpt] = []
        rejected: list[Excerpt] = []
        quoted = 0
        for entry in _entries(reply.get(attribute)):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("text", ""), str):
                rejected.append(Excerpt(str(entry), "medium", 0.0))
                continue
            text = entry.get("text") or ""
            explanation = entry.get("explanation")
            explanation = str(explanation) if explanation else None
            if not text.strip():
                if str(entry.get("confidence", "")).strip().lower() == NO_EXCERPT or explanation:
                    accepted.append(Excerpt("", NO_EXCERPT, 0.0, explanation))
                continue
            if quoted >= max_per_attribute:
                continue
            quoted += 1
            matched = response.match(text, threshold)
            excerpt = Excerpt(
                text, _confidence(entry.get("confidence")), matched.similarity, explanation,
                matched.start, matched.end,
            )  # fmt: skip
            (accepted if matched.similarity >= threshold else rejected).append(excerpt)
        check.accepted[attribute] = accepted
        if rejected:
            check.rejected[attribute] = rejected
        if not any(excerpt.text for excerpt in accepted):
            check.missing.append(attribute)
    return check


def ungrounded_line(subject: str, rejected: Iterable[Mapping[str, Any]], threshold: float) -> str:
    """The warning for ``subject`` (an attribute, a rubric trait) left without a quote: its
    rejected quotes with their similarity, or that the judge gave none. Reports show the
    lines that start ``deep judgment: ``."""
    shown = "; ".join(
        f'"{quote["text"]}" (similarity {quote["similarity_score"]:.2f} < {threshold:.2f})'
        for quote in rejected
    )
    if shown:
        return f"deep judgment: no verbatim quote for {subject}; rejected {shown}"
    return f"deep judgment: no verbatim quote for {subject}; the judge gave none"
