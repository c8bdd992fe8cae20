"""A word-level diff of two texts as escaped HTML: removed words in ``<del>``, added words in
``<ins>``, the rest as it was (whitespace kept, so the text reads as written).

Words are compared without the whitespace that follows them (a word before a line break is
the same word before a space), and whitespace is never a token of its own: thousands of equal
space tokens would make :class:`difflib.SequenceMatcher` quadratic on long answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from html import escape

MAX_WORDS = 4000
"""Words of each text compared; the rest of a longer text is shown without marks, and a note
says so."""
_WORDS = re.compile(r"^\s+|\S+\s*")
_DEL = '<del class="karenina-del" style="background:#fee2e2;color:#991b1b">'
_INS = '<ins class="karenina-ins" style="background:#dcfce7;color:#166534">'


def words(text: str) -> list[str]:
    """``text`` as words, each with the whitespace after it (joined, they are ``text``)."""
    return _WORDS.findall(text)


def _opcodes(old: list[str], new: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    keys_old, keys_new = [w.strip() for w in old], [w.strip() for w in new]
    return SequenceMatcher(None, keys_old, keys_new, autojunk=False).get_opcodes()


def diff_counted(before: str, after: str) -> tuple[str, int, int]:
    """``before`` -> ``after`` as HTML (every piece escaped), with the words removed and
    added."""
    old, new = words(before), words(after)
    tail = note = ""
    if len(old) > MAX_WORDS or len(new) > MAX_WORDS:
        note = (
            f'<span class="karenina-diff-note"> [compared: the first {MAX_WORDS} words; the '
            "rest is the current answer as it is]</span>"
        )
        tail = "".join(new[MAX_WORDS:])
        old, new = old[:MAX_WORDS], new[:MAX_WORDS]
    parts: list[str] = []
    removed = added = 0
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag == "equal":
            parts.append(escape("".join(new[j1:j2])))
            continue
        if i2 > i1:
            parts.append(f"{_DEL}{escape(''.join(old[i1:i2]))}</del>")
            removed += sum(1 for word in old[i1:i2] if word.strip())
        if j2 > j1:
            parts.append(f"{_INS}{escape(''.join(new[j1:j2]))}</ins>")
            added += sum(1 for word in new[j1:j2] if word.strip())
    return "".join(parts) + escape(tail) + note, removed, added


def word_diff(before: str, after: str) -> str:
    """``before`` -> ``after`` as HTML, every piece escaped."""
    return diff_counted(before, after)[0]


def changed(before: str, after: str) -> tuple[int, int]:
    """``(removed, added)`` words between the texts."""
    _, removed, added = diff_counted(before, after)
    return removed, added
