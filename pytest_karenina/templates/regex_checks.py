"""Classic ``self.regex`` checks against the raw trace.

``self.regex`` maps a check name to ``{"pattern", "expected", "match_type"}``.
Matching uses ``re.findall`` semantics on the full raw trace, so a pattern with capture
groups yields the groups (or tuples of them), as in Python; patterns run with a time
limit (:mod:`bounded_regex`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypedDict

from pytest_karenina.templates.bounded_regex import findall


class RegexReport(TypedDict):
    """``success``: every check passed; ``results``: pass/fail per check;
    ``details``: per check the pattern, expected value, match type, the matches
    found, their count, and a ``success_reason`` or ``failure_reason``."""

    success: bool
    results: dict[str, bool]
    details: dict[str, dict[str, Any]]


def _judge(matches: list[Any], expected: Any, match_type: str) -> tuple[bool, str]:
    count = len(matches)
    if match_type == "exact":
        if count == 1 and matches[0] == expected:
            return True, "exactly one match, equal to the expected value"
        return (
            False,
            f"expected exactly one match equal to {expected!r}, found {count}: {matches!r}",
        )
    if match_type == "contains":
        if expected in matches:
            return True, f"{expected!r} is among the matches"
        return False, f"{expected!r} is not among the matches {matches!r}"
    if match_type == "count":
        if isinstance(expected, int) and not isinstance(expected, bool) and count == expected:
            return True, f"found exactly {expected} matches"
        return False, f"expected {expected!r} matches, found {count}"
    if match_type == "all":
        if not isinstance(expected, list):
            return False, f"match type 'all' needs a list of expected values, got {expected!r}"
        missing = [item for item in expected if item not in matches]
        if not missing:
            return True, "every expected value is among the matches"
        return False, f"missing expected values {missing!r}"
    return False, f"unknown match_type {match_type!r} (expected exact, contains, count or all)"


def run_regex_checks(checks: Mapping[str, Any] | None, trace: str) -> RegexReport:
    """Run every named check on ``trace``; no checks means success."""
    report: RegexReport = {"success": True, "results": {}, "details": {}}
    for name, spec in (checks or {}).items():
        spec = spec if isinstance(spec, Mapping) else {}
        pattern = spec.get("pattern", "")
        expected = spec.get("expected")
        match_type = spec.get("match_type", "exact")
        detail: dict[str, Any] = {
            "pattern": pattern,
            "expected": expected,
            "match_type": match_type,
        }
        try:
            matches = findall(pattern, trace)
        except (re.error, TypeError) as exc:
            passed, reason = False, f"the pattern cannot be used: {exc}"
        else:
            detail.update(matches_found=matches, match_count=len(matches))
            passed, reason = _judge(matches, expected, match_type)
        detail["success_reason" if passed else "failure_reason"] = reason
        report["results"][name] = passed
        report["details"][name] = detail
        report["success"] = report["success"] and passed
    return report
