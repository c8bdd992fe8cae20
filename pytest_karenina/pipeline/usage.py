"""Token usage per pipeline stage (``template.usage_metadata``)."""

from __future__ import annotations

import threading
from typing import Any

from pytest_karenina.llm.ports import Usage


class UsageTracker:
    """Accumulates usage by stage key (``answer_generation``, ``parsing``, ...).

    Thread-safe: stages of one question may record from helper threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_stage: dict[str, tuple[Usage, str | None]] = {}

    def record(self, stage: str, usage: Usage, model: str | None = None) -> None:
        with self._lock:
            previous, previous_model = self._by_stage.get(stage, (Usage(), None))
            self._by_stage[stage] = (previous + usage, model or previous_model)

    def stages(self) -> list[str]:
        with self._lock:
            return list(self._by_stage)

    def total(self) -> Usage:
        with self._lock:
            total = Usage()
            for usage, _ in self._by_stage.values():
                total = total + usage
            return total

    def to_metadata(self) -> dict[str, Any] | None:
        """The ``usage_metadata`` dict: one entry per stage plus ``total``; None if empty."""
        with self._lock:
            items = list(self._by_stage.items())
        if not items:
            return None
        metadata: dict[str, Any] = {}
        for stage, (usage, model) in items:
            metadata[stage] = _entry(usage, model)
        metadata["total"] = _entry(self.total(), None)
        return metadata


def _entry(usage: Usage, model: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "input_tokens": usage.input_tokens or 0,
        "output_tokens": usage.output_tokens or 0,
        "total_tokens": usage.total_tokens or 0,
    }
    if model is not None:
        entry["model"] = model
    return entry
