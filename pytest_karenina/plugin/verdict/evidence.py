"""The evidence behind a template verdict, in words: what the judge extracted when there is
no ground truth to hold it against, each regex check with its pattern and why it failed, and
the embedding check's similarity against its threshold.

The failure text (:mod:`.explain`) and its one-line reason read these, so the terminal, JUnit,
GitHub annotations and the HTML report's Reason say the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_karenina.plugin.safe_text import terminal_safe

if TYPE_CHECKING:
    from pytest_karenina.results.template import VerificationResultTemplate

MAX_VALUE = 60
MAX_REASON = 120
"""How much of a regex check's failure reason the one-line reason keeps."""
MAX_HEADLINE_FIELDS = 3


def short(value: Any, limit: int = MAX_VALUE) -> str:
    """``value`` on one line, strings quoted, cut to ``limit`` characters, terminal-safe."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = repr(text) if isinstance(value, str) else text
    text = " ".join(text.split())
    return terminal_safe(text if len(text) <= limit else text[: limit - 3] + "...")


def extracted(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """``mentions_side_effects: false; dose_mg: 600``: the values the judge extracted for
    fields without ground truth (None when every field has one)."""
    bare = [row for row in rows if "expected" not in row]
    if not bare:
        return None
    shown = [
        f"{terminal_safe(row['field'])}: {short(row['parsed'])}"
        for row in bare[:MAX_HEADLINE_FIELDS]
    ]
    extra = len(bare) - len(shown)
    return "; ".join(shown) + (f"; and {extra} more fields" if extra else "")


def _pattern(detail: Mapping[str, Any]) -> str:
    return terminal_safe(f"/{detail.get('pattern', '')}/")


def _reason(detail: Mapping[str, Any], limit: int | None = None) -> str:
    text = " ".join(str(detail.get("failure_reason") or "no match").split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return terminal_safe(text)


def regex_reason(template: VerificationResultTemplate) -> str | None:
    """``regex citation /\\[\\d+\\]/ did not match: expected 1 matches, found 0``: the first
    regex check that failed, with its pattern and why (None when none failed)."""
    results = template.regex_validation_results or {}
    failed = [name for name, ok in results.items() if not ok]
    if not failed:
        return None
    details = template.regex_validation_details or {}
    detail = details.get(failed[0])
    name = terminal_safe(failed[0])
    more = f" (and {len(failed) - 1} more regex checks)" if len(failed) > 1 else ""
    if detail is None:  # a result without details (an older export): the names only
        return f"regex {terminal_safe(', '.join(failed))} did not match"
    return f"regex {name} {_pattern(detail)} did not match: {_reason(detail, MAX_REASON)}{more}"


def regex_lines(template: VerificationResultTemplate) -> list[str]:
    """A line per regex check: ``  regex citation: FAIL: /\\[\\d+\\]/ (count): expected 1
    matches, found 0``, or ``  regex citation: pass: /.../ (count)``."""
    details = template.regex_validation_details or {}
    lines = []
    for name, ok in (template.regex_validation_results or {}).items():
        line = f"  regex {terminal_safe(name)}: {'pass' if ok else 'FAIL'}"
        detail = details.get(name)
        if detail is not None:
            line += f": {_pattern(detail)} ({terminal_safe(detail.get('match_type', 'exact'))})"
            line += "" if ok else f": {_reason(detail)}"
        lines.append(line)
    return lines


def embedding_line(template: VerificationResultTemplate, threshold: float | None) -> str | None:
    """What the embedding check found when it did not rescue the answer: its similarity
    against the threshold (``threshold``: the run's, None when not known), and so whether
    the judge was asked; None when the check did not run or rescued the answer (an override
    says that)."""
    score = template.embedding_similarity_score
    if not template.embedding_check_performed or template.embedding_override_applied:
        return None
    model = terminal_safe(template.embedding_model_used or "the embedding model")
    if score is None:
        return f"  embedding check: no similarity ({model} could not run)"
    if threshold is None:
        return f"  embedding check: similarity {score:.3f} ({model}): not rescued"
    if score < threshold:
        return (
            f"  embedding check: similarity {score:.3f} below the threshold {threshold:g} "
            f"({model}): the judge was not asked"
        )
    return (
        f"  embedding check: similarity {score:.3f} at or above the threshold {threshold:g} "
        f"({model}), but the judge did not find the answers equivalent"
    )
