"""EmbeddingCheck (seed stage 9; spec 5.5): the fail -> pass override.

``EMBEDDINGS.similarity`` is replaced by a stub returning a chosen score, so no
sentence-transformer model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pytest_karenina.pipeline.embedding import EMBEDDINGS
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC, CLASSIC_WITH_REGEX
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

CLOSE = {"capital": "Paris, France"}
"""Parsed values that fail the classic template's exact verify()."""


@dataclass
class SimilarityStub:
    score: float = 0.9
    calls: list[tuple[str, str, str]] = field(default_factory=list)

    def __call__(self, name: str, first: str, second: str) -> float:
        self.calls.append((name, first, second))
        return self.score


@pytest.fixture
def similarity(monkeypatch: pytest.MonkeyPatch) -> SimilarityStub:
    stub = SimilarityStub()
    monkeypatch.setattr(EMBEDDINGS, "similarity", stub)
    return stub


def test_judge_yes_turns_a_failed_verification_into_a_pass(similarity: SimilarityStub) -> None:
    similarity.score = 0.93
    config = fake_config(embedding_check_enabled=True, embedding_check_threshold=0.85)
    fake = FakeLLM().answer(ANSWER).parse_as(CLOSE).on("embedding_check", reply="YES")

    result = run_one(question(CLASSIC), config, fake)

    assert fake.kinds() == ["answer_generation", "parsing", "embedding_check"]
    template = result.template
    assert template is not None
    assert template.verify_result is True
    assert template.embedding_check_performed is True
    assert template.embedding_similarity_score == pytest.approx(0.93)
    assert template.embedding_override_applied is True
    assert template.embedding_model_used == "all-MiniLM-L6-v2"
    assert "embedding_override" in result.metadata.caveats
    assert result.metadata.failure is None
    # The similarity compares the ground truth with the parsed answer, as sorted JSON.
    ((model, expected, parsed),) = similarity.calls
    assert model == "all-MiniLM-L6-v2"
    assert (expected, parsed) == ('{"capital": "Paris"}', '{"capital": "Paris, France"}')


def test_equivalence_judge_is_shown_both_answers(similarity: SimilarityStub) -> None:
    config = fake_config(embedding_check_enabled=True)
    fake = FakeLLM().answer(ANSWER).parse_as(CLOSE).on("embedding_check", reply="YES")
    run_one(question(CLASSIC), config, fake)
    (request,) = fake.calls("embedding_check")
    text = request_text(request)
    assert "Paris, France" in text
    assert '"Paris"' in text


@pytest.mark.parametrize("reply", ["NO", "no, they differ", "I am not sure"])
def test_judge_no_keeps_the_failure(similarity: SimilarityStub, reply: str) -> None:
    config = fake_config(embedding_check_enabled=True)
    fake = FakeLLM().answer(ANSWER).parse_as(CLOSE).on("embedding_check", reply=reply)
    result = run_one(question(CLASSIC), config, fake)
    template = result.template
    assert template is not None
    assert fake.count("embedding_check") == 1
    assert template.verify_result is False
    assert template.embedding_check_performed is True
    assert template.embedding_similarity_score == pytest.approx(0.9)
    assert template.embedding_override_applied is False
    assert "embedding_override" not in result.metadata.caveats
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "content"


@pytest.mark.parametrize(("score", "judged"), [(0.849, False), (0.85, True), (0.86, True)])
def test_judge_is_asked_only_at_or_above_the_threshold(
    similarity: SimilarityStub, score: float, judged: bool
) -> None:
    similarity.score = score
    config = fake_config(embedding_check_enabled=True, embedding_check_threshold=0.85)
    fake = FakeLLM().answer(ANSWER).parse_as(CLOSE).on("embedding_check", reply="YES")
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count("embedding_check") == int(judged)
    assert result.template is not None
    assert result.template.embedding_check_performed is True
    assert result.template.embedding_similarity_score == pytest.approx(score)
    assert result.verify_result is judged


def test_never_overrides_a_failed_regex_check(similarity: SimilarityStub) -> None:
    # Both the field and the regex fail; the judge says YES: the verdict stays False.
    config = fake_config(embedding_check_enabled=True)
    fake = FakeLLM().answer("The capital is Lyon.").parse_as(CLOSE)
    fake.on("embedding_check", reply="YES")
    result = run_one(question(CLASSIC_WITH_REGEX), config, fake)
    template = result.template
    assert template is not None
    assert template.regex_overall_success is False
    assert template.verify_result is False
    assert result.metadata.failure is not None
    assert result.metadata.failure.category == "content"


def test_not_run_when_fields_pass_even_if_regex_fails(similarity: SimilarityStub) -> None:
    config = fake_config(embedding_check_enabled=True)
    fake = FakeLLM().answer("The capital is Lyon.").parse_as({"capital": "Paris"})
    result = run_one(question(CLASSIC_WITH_REGEX), config, fake)
    assert similarity.calls == []
    assert fake.count("embedding_check") == 0
    assert result.template is not None
    assert result.template.embedding_check_performed is False
    assert result.verify_result is False


def test_not_run_when_verification_passed(similarity: SimilarityStub) -> None:
    config = fake_config(embedding_check_enabled=True)
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    result = run_one(question(CLASSIC), config, fake)
    assert similarity.calls == []
    assert fake.kinds() == ["answer_generation", "parsing"]
    assert result.template is not None
    assert result.template.embedding_check_performed is False
    assert result.template.embedding_similarity_score is None
    assert result.verify_result is True


def test_nothing_happens_when_disabled(similarity: SimilarityStub) -> None:
    config = fake_config(embedding_check_enabled=False)
    fake = FakeLLM().answer(ANSWER).parse_as(CLOSE).on("embedding_check", reply="YES")
    result = run_one(question(CLASSIC), config, fake)
    assert similarity.calls == []
    assert fake.count("embedding_check") == 0
    assert result.template is not None
    assert result.template.embedding_check_performed is False
    assert result.verify_result is False
