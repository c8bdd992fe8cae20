"""Finding one quote in a response: how deep judgment decides a quote is grounded.

Both texts are compared with their whitespace collapsed and their case folded. A quote is
scored by its best alignment *inside* the response, as a share of the quote: rapidfuzz's
``partial_ratio`` with the quote as the needle (the best-aligned stretch of the response of
the quote's length: the characters they share over the quote's length), or, for a quote as
long as the response or longer, the characters it shares with the whole response over the
quote's length. So an invented sentence that merely contains a short response scores low, as
in Karenina, which divides by the quote's length too. A verbatim quote is found by plain
search first, so the usual case costs microseconds.

The fuzzy work is bounded, so a hostile judge cannot stall a worker. A quote that is not
verbatim is aligned only up to :data:`MAX_ALIGNED_QUOTE` characters; every alignment is
charged its worst-case work (:func:`align_steps`), one call may cost at most
:data:`CALL_STEPS` and one reply's quotes together :data:`REPLY_STEPS` (an
:class:`AlignBudget`). A quote the bounds leave unaligned is rejected with a note saying
why, never accepted.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

_ODD_WHITESPACE = re.compile(r" \s+|[^\S ]\s*")
"""Whitespace runs other than one plain space: the only ones collapsing changes."""
_ASCII_ODD = ("  ", "\n", "\t", "\r", "\x0b", "\x0c")
MIN_ANCHOR = 8
"""The shortest verbatim stretch the near-verbatim fast path looks for."""
MAX_ALIGNED_QUOTE = 1_000
"""The longest quote (collapsed characters) aligned fuzzily; a longer one counts only when it
is found verbatim (up to whitespace and case)."""
CALL_STEPS = 400_000_000
"""The most work one alignment may cost (:func:`align_steps`); about 0.5 s in the worst case
measured (a response where every window nearly matches), 10-50 times less on prose."""
REPLY_STEPS = 1_000_000_000
"""The most alignment work for all the quotes of one judge reply."""


def align_steps(quote: int, text: int) -> int:
    """The worst-case work of aligning a ``quote``-character needle in a ``text``-character
    haystack: rapidfuzz compares the needle with each window of the text, ``quote`` characters
    of ``ceil(quote / 64)`` machine words each (about 1.2 ns a step on the 2-core CI box)."""
    return quote * -(-quote // 64) * (text + quote)


class AlignBudget:
    """The fuzzy-alignment work left for one reply's quotes (:data:`REPLY_STEPS`)."""

    def __init__(self, steps: int = REPLY_STEPS) -> None:
        self.left = steps

    def take(self, steps: int) -> bool:
        """Charge ``steps`` if one call may cost that much and enough is left."""
        if steps > CALL_STEPS or steps > self.left:
            return False
        self.left -= steps
        return True


@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """How well a quote matches the response: ``similarity`` in [0, 1] and the matched span
    of the original response (None when nothing aligned); ``note`` says why a quote was not
    aligned at all."""

    similarity: float
    start: int | None = None
    end: int | None = None
    note: str | None = None


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

    def match(
        self, quote: str, enough: float = 1.0, budget: AlignBudget | None = None
    ) -> QuoteMatch:
        """The best alignment of ``quote`` inside the response.

        A near-verbatim quote is first aligned within a window around a verbatim half of it;
        when that reaches ``enough`` (the caller's threshold) it is the match, else the whole
        response is searched. So accept/reject decisions are those of the whole search; an
        accepted quote's similarity may be that of the window, never below ``enough``.
        Fuzzy work is charged to ``budget`` (a fresh one when None); a quote it cannot pay
        for has similarity 0 and a ``note``.
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
        size, length = len(needle), len(self.collapsed)
        if size > MAX_ALIGNED_QUOTE:
            return QuoteMatch(0.0, note=f"not verbatim; too long to align ({size:,} characters)")
        if size >= length:  # the whole response is the only stretch to compare with
            score = LCSseq.similarity(needle, self.collapsed) / size
            return QuoteMatch(score, 0, len(self.text)) if score > 0 else QuoteMatch(0.0)
        budget = budget if budget is not None else AlignBudget()
        near = self._near_anchor(needle, enough, budget)
        if near is not None:
            return near
        if not budget.take(align_steps(size, length)):
            return QuoteMatch(0.0, note="not verbatim; not aligned (the quote check's work limit)")
        aligned = fuzz.partial_ratio_alignment(needle, self.collapsed)
        if aligned is None or aligned.score <= 0 or aligned.dest_end <= aligned.dest_start:
            return QuoteMatch(0.0)
        return QuoteMatch(aligned.score / 100, *self._span(aligned.dest_start, aligned.dest_end))

    def _near_anchor(self, needle: str, enough: float, budget: AlignBudget) -> QuoteMatch | None:
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
            if len(window) <= size or not budget.take(align_steps(size, len(window))):
                continue  # never shorter than the quote (rapidfuzz would swap the two)
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
