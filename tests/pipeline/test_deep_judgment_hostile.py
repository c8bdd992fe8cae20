"""Deep judgment against a hostile judge (issue 24, items 10, 11 and 16): an invented
sentence that contains a short answer is not a quote of it; quotes too long to align are
rejected without aligning and one reply's fuzzy work is bounded; replies with thousands of
entries are read, resent and shown only up to the maximum, saying how many were dropped."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from pytest_karenina.pipeline.deep_judgment import quotes
from pytest_karenina.pipeline.deep_judgment.excerpts import ResponseText, check_excerpts
from pytest_karenina.pipeline.deep_judgment.rubric_trait import TraitSettings, judge_trait
from pytest_karenina.rubrics.traits import LLMRubricTrait
from tests.pipeline.test_deep_judgment_template import ScriptedJudge
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

ZORBLAT = """
class Answer(BaseAnswer):
    element: str = Field(description="The element the response names")

    def ground_truth(self):
        self.correct = {"element": "Zorblat"}

    def verify(self) -> bool:
        return self.element.strip().rstrip(".").lower() == "zorblat"
"""
INVENTED = "Napoleon discovered Zorblat. on Mars in 1802, as the archives of the Louvre record."
WORDS = (
    "the protein binds receptor signalling pathway cells tumour apoptosis expression gene "
    "regulation mitochondria membrane kinase inhibitor response patient clinical trial dose"
).split()


def _prose(size: int, seed: int) -> str:
    rng = random.Random(seed)
    words = rng.choices(WORDS, k=size // 5)
    return " ".join(words)[:size]


def _paraphrase(text: str) -> str:
    """Every pair of words swapped: no verbatim stretch of any length worth anchoring on."""
    words = text.split()
    for at in range(0, len(words) - 1, 2):
        words[at], words[at + 1] = words[at + 1], words[at]
    return " ".join(words)


def _zorblat_judge(quote: str) -> FakeLLM:
    fake = FakeLLM().answer("Zorblat.")
    fake.on("deep_judgment_excerpts", reply=json.dumps({"element": [{"text": quote}]}))
    fake.on("deep_judgment_reasoning", reply=json.dumps({"element": "It names Zorblat."}))
    return fake.parse_as({"element": "Zorblat"})


def test_an_invented_sentence_that_contains_the_short_answer_does_not_ground_it() -> None:
    """The answer is "Zorblat."; the judge's "quote" contains it. It used to be accepted at
    similarity 1.0 (the answer found inside the quote) and the item passed."""
    config = fake_config(deep_judgment_mode="full", deep_judgment_excerpt_retry_attempts=0)

    result = run_one(question(ZORBLAT), config, _zorblat_judge(INVENTED))

    assert result.verify_result is False
    failure = result.metadata.failure
    assert failure is not None and failure.stage == "DeepJudgmentAutoFail"
    (warning,) = [w for w in result.metadata.warnings if w.startswith("deep judgment:")]
    assert warning.startswith(
        f'deep judgment: no verbatim quote for element; rejected "{INVENTED}"'
    )
    similarity = float(warning.rsplit("(similarity ", 1)[1].split(" <")[0])
    assert similarity == pytest.approx(len("zorblat.") / len(INVENTED), abs=0.01)

    honest = run_one(question(ZORBLAT), config, _zorblat_judge("zorblat."))
    assert honest.verify_result is True and honest.metadata.failure is None


def test_a_quote_is_scored_as_a_share_of_the_quote_whichever_text_is_longer() -> None:
    response = ResponseText("It is Paris.")
    assert response.match("It is Paris!", 0.8).similarity == pytest.approx(11 / 12)
    assert response.match("Yes: it is Paris.", 0.8).similarity == pytest.approx(12 / 17)
    assert response.match("it is paris", 0.8).similarity == 1.0  # verbatim, up to case


class Aligner:
    """Counts the calls to rapidfuzz (``quotes.fuzz`` / ``quotes.LCSseq``) and the work each
    was charged for; ``real`` calls them, else every alignment scores 0."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, real: bool = True) -> None:
        self.calls: list[tuple[int, int]] = []
        original = quotes.fuzz.partial_ratio_alignment

        def align(needle: str, haystack: str, **options: Any) -> Any:
            self.calls.append((len(needle), len(haystack)))
            return original(needle, haystack, **options) if real else None

        def whole(needle: str, haystack: str) -> float:
            self.calls.append((len(needle), len(haystack)))
            return 0.0

        monkeypatch.setattr(quotes.fuzz, "partial_ratio_alignment", align)
        monkeypatch.setattr(quotes.LCSseq, "similarity", whole)

    @property
    def steps(self) -> int:
        return sum(quotes.align_steps(needle, haystack) for needle, haystack in self.calls)


def test_a_paraphrase_too_long_to_align_is_rejected_without_aligning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """10 KB against 10 KB took 51 s in rapidfuzz; a verbatim quote of any length still counts."""
    aligner = Aligner(monkeypatch, real=False)
    text = _prose(10_000, seed=1)
    reply = {"gene": [{"text": _paraphrase(text)}, {"text": text.upper()}]}

    check = check_excerpts(reply, ["gene"], ResponseText(text), threshold=0.8, max_per_attribute=3)

    assert aligner.calls == []
    ((paraphrase, noted),) = [(e.text, e.note) for e in check.rejected["gene"]]
    assert paraphrase == reply["gene"][0]["text"] and noted is not None and "too long" in noted
    assert [e.similarity_score for e in check.accepted["gene"]] == [1.0]
    assert "too long to align" in check.feedback(0.8)


def test_three_huge_quotes_against_a_huge_answer_are_rejected_without_aligning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three 850 KB quotes against an 850 KB answer ran past 15 minutes."""
    aligner = Aligner(monkeypatch, real=False)
    text = _prose(850_000, seed=2)
    entries = [{"text": _paraphrase(_prose(850_000, seed=3 + n))} for n in range(3)]

    check = check_excerpts(
        {"gene": entries}, ["gene"], ResponseText(text), threshold=0.8, max_per_attribute=3
    )

    assert aligner.calls == [] and len(check.rejected["gene"]) == 3 and check.missing == ["gene"]
    assert all(e.similarity_score == 0.0 and e.note for e in check.rejected["gene"])
    assert len(check.feedback(0.8)) < 2_000  # the quotes are shown shortened


def test_one_replys_fuzzy_work_is_bounded_and_the_rest_is_rejected_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nine paraphrased 1,000-character quotes (the longest aligned) of a 20 KB answer: each
    needs the whole search, only the first ones fit the reply's work limit."""
    aligner = Aligner(monkeypatch)
    text = _prose(20_000, seed=4)
    reply = {
        name: [{"text": _paraphrase(text[at : at + 1_000])} for at in (0, 6_000, 12_000)]
        for name in ("gene", "function", "pathway")
    }

    check = check_excerpts(
        reply, list(reply), ResponseText(text), threshold=0.8, max_per_attribute=3
    )

    assert 0 < len(aligner.calls) < 9
    assert all(quotes.align_steps(*call) <= quotes.CALL_STEPS for call in aligner.calls)
    assert aligner.steps <= quotes.REPLY_STEPS
    rejected = [e for excerpts in check.rejected.values() for e in excerpts]
    assert len(rejected) == 9
    assert sum("work limit" in (e.note or "") for e in rejected) == 9 - len(aligner.calls)


def _many(count: int) -> list[Any]:
    """``count`` entries: invented quotes, every third one a bare string."""
    return [
        f"bare entry {n}" if n % 3 == 2 else {"text": f"Invented claim number {n}."}
        for n in range(count)
    ]


def test_ten_thousand_entries_are_read_resent_and_shown_only_up_to_the_maximum() -> None:
    config = fake_config(
        deep_judgment_mode="full", deep_judgment_excerpt_retry_attempts=1,
        deep_judgment_max_excerpts_per_attribute=3,
    )  # fmt: skip
    fake = FakeLLM().answer("Zorblat.")
    fake.on("deep_judgment_excerpts", reply=json.dumps({"element": _many(10_000)}))
    fake.on("deep_judgment_reasoning", reply=json.dumps({"element": "No evidence."}))
    fake.parse_as({"element": "Zorblat"})

    result = run_one(question(ZORBLAT), config, fake)

    first, retry = fake.calls("deep_judgment_excerpts")
    added = sum(len(m.content) for m in retry.messages) - sum(
        len(m.content) for m in first.messages
    )
    assert added < 2_500  # the reply was about 290 KB
    resent, note = retry.messages[-2:]
    assert resent.role == "assistant" and len(resent.content) < 1_000
    assert len(json.loads(resent.content)["element"]) == 6  # 3 quotes, 3 malformed entries
    assert "9,994 more entries of the reply not read" in note.content and len(note.content) < 1_500
    (warning,) = [w for w in result.metadata.warnings if w.startswith("deep judgment:")]
    assert warning.endswith("; 9,994 more entries of the reply not read")
    assert warning.count('"Invented claim number') == 3 and len(warning) < 1_000
    section = result.deep_judgment
    assert section is not None and section.extracted_excerpts == {"element": []}


def test_a_rubric_trait_reads_resends_and_shows_at_most_its_maximum() -> None:
    trait = LLMRubricTrait(name="Grounded", description="Names the element", kind="boolean")
    many = {"excerpts": _many(10_000)}
    judge = ScriptedJudge(many, many)

    outcome = judge_trait(judge, trait, "Zorblat.", TraitSettings(max_excerpts=2, retry_attempts=1))

    assert outcome.excerpt_validation_failed and len(outcome.rejected) == 4
    resent, note = judge.requests[1][1][-2:]
    assert len(resent.content) < 1_000 and len(json.loads(resent.content)["excerpts"]) == 4
    assert "9,996 more entries of the reply not read" in note.content
    line = outcome.ungrounded()
    assert line.endswith("; 9,996 more entries of the reply not read") and len(line) < 1_000


def test_long_quotes_and_replies_are_shortened_where_they_are_shown() -> None:
    text = _prose(2_000, seed=5)
    long_quote = "Invented " + "x" * 20_000
    reply_text = json.dumps({"gene": [{"text": long_quote}]})
    check = check_excerpts(
        json.loads(reply_text), ["gene"], ResponseText(text), threshold=0.8, max_per_attribute=3
    )
    feedback = check.feedback(0.8)
    assert "(20,009 characters)" in feedback and len(feedback) < 600
    resent = check.resent(reply_text)
    assert resent != reply_text and len(resent) < 600
    assert check.resent('{"gene": []}') == '{"gene": []}'  # a small reply goes back as given
