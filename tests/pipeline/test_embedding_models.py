"""Loading the embedding model for SemanticMatch: before the pipelines, once, never cut short.

``embedding._load`` is replaced by a scripted loader (the real model is in
``tests/e2e/test_embedding.py`` and ``tests/plugin/test_semantic_cold.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from pytest_karenina.pipeline import embedding
from pytest_karenina.templates import SemanticMatch
from pytest_karenina.templates.primitives import SemanticMatchUnavailable, set_similarity_function
from pytest_karenina.templates.time_limit import time_limit
from tests.templates.test_time_limit_sections import spin_until, watchdog_looked

MODEL = "all-MiniLM-L6-v2"
USES_IT = "verify_with=SemanticMatch(threshold=0.9)"


class FakeModel:
    """Equal texts (ignoring case) embed alike, others orthogonally."""

    def encode(self, texts: list[str], **_: Any) -> Any:
        first = texts[0].lower()
        return np.array([[1.0, 0.0] if t.lower() == first else [0.0, 1.0] for t in texts])


class Loader:
    """A scripted ``_load``: what it returns (or raises), and the threads it ran in."""

    def __init__(self, outcome: Callable[[str], Any]) -> None:
        self.outcome = outcome
        self.threads: list[str] = []

    def __call__(self, name: str) -> Any:
        self.threads.append(threading.current_thread().name)
        return self.outcome(name)


@pytest.fixture(autouse=True)
def fresh_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(embedding, "EMBEDDINGS", embedding.EmbeddingModels())
    yield
    set_similarity_function(None)


def use_loader(monkeypatch: pytest.MonkeyPatch, outcome: Callable[[str], Any]) -> Loader:
    loader = Loader(outcome)
    monkeypatch.setattr(embedding, "_load", loader)
    return loader


def bad_name(name: str) -> Any:
    raise OSError(f"{name} is not a model on the hub")


def test_a_failed_load_is_one_error_each_time_and_never_loaded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = use_loader(monkeypatch, bad_name)
    embedding.install_semantic_match("no-such/model")
    for _ in range(3):
        with pytest.raises(SemanticMatchUnavailable) as raised:
            SemanticMatch().check("Paris", "paris")
        assert "'no-such/model' could not be loaded: OSError" in str(raised.value)
    assert len(loader.threads) == 1


def test_a_missing_extra_names_the_model_and_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise embedding.EmbeddingUnavailable("sentence-transformers is not installed")

    use_loader(monkeypatch, missing)
    embedding.install_semantic_match(MODEL)
    with pytest.raises(SemanticMatchUnavailable, match=r"pytest-karenina\[embeddings\]") as raised:
        SemanticMatch().check("Paris", "paris")
    assert repr(MODEL) in str(raised.value)


def test_the_model_loads_before_the_pipelines_when_a_template_uses_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = use_loader(monkeypatch, lambda name: FakeModel())
    embedding.install_semantic_match(MODEL, ["class Answer(BaseAnswer): ...", "x: int"])
    assert loader.threads == []
    embedding.install_semantic_match(MODEL, ["x: int", USES_IT])
    assert loader.threads == [threading.current_thread().name]
    assert SemanticMatch().check("Paris", "paris") is True
    assert len(loader.threads) == 1


def test_a_failed_preload_is_kept_for_the_questions_that_use_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loader = use_loader(monkeypatch, bad_name)
    embedding.install_semantic_match("no-such/model", [USES_IT])  # does not raise
    with pytest.raises(SemanticMatchUnavailable, match="could not be loaded"):
        SemanticMatch().check("Paris", "paris")
    assert len(loader.threads) == 1


def test_a_load_inside_verify_does_not_count_against_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def slow(name: str) -> FakeModel:
        spin_until(watchdog_looked)  # the block's deadline passed while loading
        return FakeModel()

    use_loader(monkeypatch, slow)
    embedding.install_semantic_match(MODEL)
    with time_limit(1.0, "verifying the answer (verify())"):
        passed = SemanticMatch().check("Paris", "paris")
    assert passed is True
