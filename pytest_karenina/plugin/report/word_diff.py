"""A word-level diff of two texts as escaped HTML: removed words in ``<del>``, added words in
``<ins>``, the rest as it was (whitespace kept, so the text reads as written)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from html import escape

MAX_WORDS = 4000
"""Words (and runs of whitespace) of each text compared; the rest of a longer text is shown
without marks, and a note says so."""
_TOKENS = re.compile(r"\s+|[^\s]+")
_DEL = '<del class="karenina-del" style="background:#fee2e2;color:#991b1b">'
_INS = '<ins class="karenina-ins" style="background:#dcfce7;color:#166534">'


def words(text: str) -> list[str]:
    """``text`` as words and the whitespace between them (joined, they are ``text``)."""
    return _TOKENS.findall(text)


def word_diff(before: str, after: str) -> str:
    """``before`` -> ``after`` as HTML, every piece escaped."""
    old, new = words(before), words(after)
    note = ""
    if len(old) > MAX_WORDS or len(new) > MAX_WORDS:
        note = (
            f'<span class="karenina-diff-note"> [compared: the first {MAX_WORDS // 2} words; '
            "the rest is the current answer as it is]</span>"
        )
        tail = "".join(new[MAX_WORDS:])
        old, new = old[:MAX_WORDS], new[:MAX_WORDS]
    else:
        tail = ""
    parts: list[str] = []
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(escape("".join(new[j1:j2])))
            continue
        if i2 > i1:
            parts.append(f"{_DEL}{escape(''.join(old[i1:i2]))}</del>")
        if j2 > j1:
            parts.append(f"{_INS}{escape(''.join(new[j1:j2]))}</ins>")
    return "".join(parts) + escape(tail) + note


def changed(before: str, after: str) -> tuple[int, int]:
    """``(removed, added)`` words (whitespace not counted) between the texts."""
    old, new = words(before)[:MAX_WORDS], words(after)[:MAX_WORDS]
    removed = added = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += sum(1 for token in old[i1:i2] if not token.isspace())
            added += sum(1 for token in new[j1:j2] if not token.isspace())
    return removed, added
