"""Deep judgment's excerpt check: quotes found in the response are accepted with their span,
invented ones are rejected and named, one threshold decides."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz

from pytest_karenina.llm.json_extract import extract_json
from pytest_karenina.pipeline.deep_judgment.excerpts import (
    Excerpt,
    ExcerptCheck,
    ResponseText,
    check_excerpts,
)

RECORDINGS = Path(__file__).parent.parent / "data" / "karenina_deep_judgment_recordings"
RESPONSE = (
    "The first moon landing occurred on July 20,\n  1969, as part of NASA's Apollo 11 mission.\n"
    "The mission was commanded by Neil   Armstrong."
)


def _check(reply: Mapping[str, Any], attributes: list[str], **options: float) -> ExcerptCheck:
    return check_excerpts(
        reply, attributes, ResponseText(RESPONSE),
        threshold=float(options.get("threshold", 0.8)),
        max_per_attribute=int(options.get("max_per_attribute", 3)),
    )  # fmt: skip


def test_a_verbatim_quote_matches_across_whitespace_and_case_and_keeps_its_span() -> None:
    response = ResponseText(RESPONSE)
    matched = response.match("july 20, 1969,  as part of NASA's")
    assert matched.similarity == 1.0
    assert matched.start is not None and matched.end is not None
    assert RESPONSE[matched.start : matched.end] == "July 20,\n  1969, as part of NASA's"


def test_a_near_quote_is_accepted_with_its_score_and_an_invented_one_is_rejected() -> None:
    check = _check(
        {
            "commander": [{"text": "commanded by Neil Armstong", "confidence": "high"}],
            "year": [{"text": "The landing happened in 1972", "confidence": "high"}],
        },
        ["commander", "year"],
    )
    (near,) = check.accepted["commander"]
    assert 0.8 <= near.similarity_score < 1.0
    assert "Neil   Armstrong" in RESPONSE[near.start : near.end]  # an approximate span
    (invented,) = check.rejected["year"]
    assert invented.similarity_score < 0.8
    assert check.missing == ["year"]
    feedback = check.feedback(0.8)
    assert '- year: "The landing happened in 1972" (similarity 0.' in feedback
    assert "below 0.80" in feedback


def test_one_threshold_decides() -> None:
    reply = {"commander": [{"text": "commanded by Neil Armstong", "confidence": "high"}]}
    assert _check(reply, ["commander"], threshold=0.99).missing == ["commander"]
    assert _check(reply, ["commander"], threshold=0.8).missing == []


def test_the_nothing_to_quote_entry_is_kept_and_the_attribute_is_missing() -> None:
    reply = {
        "month": [{"text": "", "confidence": "none", "explanation": "No month is given."}],
        "year": [],
    }
    check = _check(reply, ["month", "year", "commander"])
    assert [e.to_result() for e in check.accepted["month"]] == [
        {"text": "", "confidence": "none", "similarity_score": 0.0,
         "explanation": "No month is given."}
    ]  # fmt: skip
    assert check.missing == ["month", "year", "commander"]


def test_odd_entries_are_rejected_or_normalised_and_the_cap_holds() -> None:
    reply = {
        "year": [
            "1969",  # not an object
            {"text": 1969},  # text not a string
            {"text": "1969", "confidence": "certain"},  # unknown confidence
            {"text": "Apollo 11", "confidence": "LOW"},
            {"text": "NASA's", "confidence": "high"},  # over the cap of 2 quotes
        ]
    }
    check = _check(reply, ["year"], max_per_attribute=2)
    accepted = [(e.text, e.confidence) for e in check.accepted["year"]]
    assert accepted == [("1969", "medium"), ("Apollo 11", "low")]
    assert len(check.rejected["year"]) == 2


def test_excerpt_result_form() -> None:
    excerpt = Excerpt("Apollo 11", "high", 0.912345, None, 3, 12)
    assert excerpt.to_result() == {
        "text": "Apollo 11",
        "confidence": "high",
        "similarity_score": 0.9123,
    }


@pytest.mark.parametrize("path", sorted(RECORDINGS.glob("*.json")), ids=lambda p: p.stem[:8])
def test_kareninas_recorded_excerpt_replies_are_all_grounded(path: Path) -> None:
    """Real claude-haiku-4-5 replies (fenced JSON) from Karenina's deep-judgment scenario."""
    recording = json.loads(path.read_text())
    prompt = recording["request"]["messages"][-1]["content"]
    response = re.search(r"<response_to_analyze>\n(.*)\n</response_to_analyze>", prompt, re.S)
    assert response is not None
    system = recording["request"]["messages"][0]["content"]
    attributes = re.findall(r"^- (\w+): ", system.split("# Attribute Definitions")[1], re.M)
    reply = extract_json(recording["response"]["content"])

    check = check_excerpts(
        reply, attributes, ResponseText(response.group(1)), threshold=0.8, max_per_attribute=3
    )

    assert attributes and check.missing == [] and check.rejected == {}
    for excerpts in check.accepted.values():
        assert all(e.similarity_score == 1.0 and e.confidence == "high" for e in excerpts)


def test_case_folding_that_changes_lengths_still_maps_spans() -> None:
    text = "Die  Straße\nist lang."
    matched = ResponseText(text).match("STRASSE ist")
    assert matched.similarity == 1.0
    assert matched.start is not None and text[matched.start : matched.end] == "Straße\nist"


def test_a_near_verbatim_quote_is_aligned_near_its_verbatim_half_with_the_same_decision() -> None:
    """The fast path looks around a verbatim half of the quote; where that is not good enough
    (here the half first occurs in an unrelated place) the whole response decides."""
    filler = " ".join(f"padding word {n} of the report." for n in range(60))
    decoy = "The mission was launched in spring."
    text = f"{decoy} {filler} The mission was commanded by Neil Armstrong, a test pilot. {filler}"
    response = ResponseText(text)
    quote = "The mission was commanded by Neil Armstorng, a test pilot."

    near = response.match(quote, 0.8)
    assert near.start is not None and near.end is not None
    assert "commanded by Neil Armstrong, a test pilot" in text[near.start : near.end]
    assert 0.8 <= near.similarity < 1.0
    whole = response.match(quote)  # enough=1.0: the window never suffices, the whole search runs
    assert whole.similarity >= near.similarity and whole.start is not None
    assert "Neil Armstrong" in text[whole.start : whole.end]
    assert response.match("Apollo 13 returned safely to Earth in April.", 0.8).similarity < 0.8


def test_the_fast_path_never_changes_a_decision() -> None:
    """Quotes with 1 to 6 random edits: accepted with ``enough`` exactly when the whole-text
    alignment reaches it."""
    rng = random.Random(11)
    words = [f"w{rng.randrange(400)}" for _ in range(2500)]
    text = " ".join(words)
    response = ResponseText(text)
    for _ in range(150):
        start = rng.randrange(len(text) - 120)
        quote = list(text[start : start + rng.randrange(24, 110)])
        for _ in range(rng.randrange(1, 7)):
            quote[rng.randrange(len(quote))] = rng.choice("xyz")
        needle = " ".join("".join(quote).split())
        whole = fuzz.partial_ratio_alignment(needle.casefold(), response.collapsed)
        expected = whole is not None and whole.score >= 80
        assert (response.match(needle, 0.8).similarity >= 0.8) is expected, needle
