"""``SemanticMatch``: embedding similarity between extracted and expected text.

The primitive does not load a model itself. The engine installs a similarity
function with :func:`set_similarity_function` once an embedding model is
available (the pipeline wires sentence-transformers); until then using the
primitive raises :class:`SemanticMatchUnavailable`, which the template's
verification reports as a field error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic import Field

from pytest_karenina.templates.primitives.base import VerificationPrimitive, builtin_primitive

SimilarityFunction = Callable[[str, str], float]
"""Cosine-style similarity of two texts, in [0, 1]."""

_lock = threading.Lock()
_similarity: list[SimilarityFunction] = []


class SemanticMatchUnavailable(RuntimeError):
    """No embedding model is configured for ``SemanticMatch``."""


def set_similarity_function(function: SimilarityFunction | None) -> None:
    """Install (or with ``None`` remove) the similarity used by ``SemanticMatch``."""
    with _lock:
        _similarity.clear()
        if function is not None:
            _similarity.append(function)


def _current_similarity() -> SimilarityFunction:
    with _lock:
        if _similarity:
            return _similarity[0]
    raise SemanticMatchUnavailable(
        "SemanticMatch needs an embedding model, and none is configured: install "
        "pytest-karenina[embeddings] and run through the verification pipeline"
    )


@builtin_primitive
class SemanticMatch(VerificationPrimitive):
    """Similarity of ``str(extracted)`` and ``str(expected)`` is at least ``threshold``."""

    threshold: float = Field(default=0.85, ge=0, le=1)

    def similarity(self, extracted: Any, expected: Any) -> float:
        return _current_similarity()(str(extracted), str(expected))

    def check(self, extracted: Any, expected: Any) -> bool:
        return self.similarity(extracted, expected) >= self.threshold
