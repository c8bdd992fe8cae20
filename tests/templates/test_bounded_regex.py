"""Benchmark authors' regexes keep ``re``'s meaning but run with a time limit that holds in C."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
import regex

from pytest_karenina.pipeline.rubric_grading.deterministic import score_regex_traits
from pytest_karenina.pipeline.rubric_grading.outcome import RubricOutcome
from pytest_karenina.rubrics.traits import RegexTrait
from pytest_karenina.templates import bounded_regex
from pytest_karenina.templates.primitives.text import RegexMatch
from pytest_karenina.templates.primitives.trace import TraceRegex
from pytest_karenina.templates.time_limit import TemplateTimeout, time_limit

RUNAWAY = r"(a|aa)+$"
RUNAWAY_TEXT = "a" * 80 + "!"

SAME_AS_RE = [
    (r"(\d+)-(\d+)?", "10-20 and 30- here", 0),
    (r"colou?r", "Colour and COLOR", re.IGNORECASE),
    (r"\w+", "naïve café", re.ASCII),
    (r"^item$", "item\nitem\nother", re.MULTILINE),
    (r"a.b", "a\nb", re.DOTALL),
    (r"x  y  # spaced", "xy", re.VERBOSE),
]


@pytest.mark.parametrize(("pattern", "text", "flags"), SAME_AS_RE)
def test_matches_are_those_of_re(pattern: str, text: str, flags: int) -> None:
    assert bounded_regex.findall(pattern, text, flags) == re.findall(pattern, text, flags)
    assert bounded_regex.search(pattern, text, flags) == (
        re.search(pattern, text, flags) is not None
    )


def test_a_pattern_re_rejects_is_still_an_error() -> None:
    """``regex`` knows ``\\p{L}``; ``re`` does not, and template validation is ``re``'s."""
    with pytest.raises(re.error):
        bounded_regex.search(r"\p{L}", "x")


def test_a_runaway_pattern_stops_at_its_limit_naming_pattern_and_text() -> None:
    with pytest.raises(
        TemplateTimeout,
        match=r"the regex '\(a\|aa\)\+\$' did not finish within 0.3s on 81 characters",
    ):
        bounded_regex.findall(RUNAWAY, RUNAWAY_TEXT, seconds=0.3)


def test_inside_a_time_limit_the_regex_gets_the_time_left() -> None:
    """Either error may win on a loaded machine; without the regex limit neither would come."""
    with pytest.raises(TemplateTimeout, match=r"the regex|verify\(\) did not finish"):
        with time_limit(0.4, "verify()"):
            RegexMatch(pattern=RUNAWAY).check(RUNAWAY_TEXT, None)
    with pytest.raises(TemplateTimeout, match=r"the regex|verify\(\) did not finish"):
        with time_limit(0.4, "verify()"):
            TraceRegex(pattern=RUNAWAY).check_trace(RUNAWAY_TEXT)


def test_other_threads_run_while_a_regex_backtracks() -> None:
    """``re`` would hold the GIL for the whole match; ``regex`` lets go of it."""
    counted = 0
    done = threading.Event()

    def count() -> None:
        nonlocal counted
        while not done.is_set():
            counted += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        with pytest.raises(TemplateTimeout):
            bounded_regex.search(RUNAWAY, RUNAWAY_TEXT, seconds=0.5)
    finally:
        done.set()
        counter.join()
    assert counted > 10_000


def test_a_runaway_regex_trait_is_an_error_of_that_trait_only() -> None:
    traits = [
        RegexTrait(name="runaway", pattern=RUNAWAY),
        RegexTrait(name="has_bang", pattern="!"),
    ]
    outcome = RubricOutcome()
    score_regex_traits(traits, RUNAWAY_TEXT, outcome, seconds=0.3)
    assert outcome.regex_scores == {"has_bang": True}
    assert "runaway" in str(outcome.errors)


def test_a_pattern_only_re_compiles_is_matched_by_re(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise regex.error("not here")

    monkeypatch.setattr(bounded_regex.regex, "compile", refuse)
    bounded_regex._compiled.cache_clear()
    try:
        assert bounded_regex.findall(r"(\d)", "a1b2") == ["1", "2"]
    finally:
        bounded_regex._compiled.cache_clear()
