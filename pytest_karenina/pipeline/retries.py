"""Counting an item's LLM retries for ``metadata.retry_counts``.

The retry layer is shared by every item of a run, but it reports each retry
in the thread that made the call; the item running in that thread collects
them through a context variable set around its pipeline run.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.llm.transport import RetryEvent, TransportError
from pytest_karenina.pipeline.context import VerificationContext

RETRY_TALLY = "retry_tally"
"""Artifact: the item's :class:`RetryTally`."""
ERROR_CATEGORY = "error_category"
TIME_BUDGET_SPENT = "time_budget_spent"
"""Artifact: True when a call gave up because the whole call's time budget ran out."""
REPLAY_MISS = "replay_miss"
"""Artifact: True when a call found no recording under strict replay (``failure.details``)."""
"""Artifact: the error class of the LLM failure that stopped the item, if any."""


class RetryTally:
    """Retries per error category for one item: ``{category: {"used", "budget"}}``."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}

    def add(self, event: RetryEvent) -> None:
        if not event.will_retry:
            return
        entry = self.counts.setdefault(event.error_class, {"used": 0, "budget": event.budget})
        entry["used"] += 1
        entry["budget"] = event.budget

    def merge(self, counts: dict[str, dict[str, int]]) -> None:
        """Fold in a failed call's final counts (categories with retries only)."""
        for category, entry in counts.items():
            if entry.get("used", 0) > 0:
                self.counts[category] = dict(entry)

    def as_metadata(self) -> dict[str, dict[str, int]] | None:
        return {k: dict(v) for k, v in self.counts.items()} or None


_current: contextvars.ContextVar[RetryTally | None] = contextvars.ContextVar(
    "karenina_retry_tally", default=None
)


def record_retry(event: RetryEvent) -> None:
    """The ``on_retry`` callback of the shared retry layer."""
    tally = _current.get()
    if tally is not None:
        tally.add(event)


@contextmanager
def collecting_retries(tally: RetryTally) -> Iterator[RetryTally]:
    """Collect the retries made in this thread into ``tally`` while the block runs."""
    token = _current.set(tally)
    try:
        yield tally
    finally:
        _current.reset(token)


def note_llm_failure(context: VerificationContext, exc: BaseException) -> None:
    """Keep what a failed LLM call tells about retries (for the failure category), and
    whether it was a strict-replay miss."""
    if isinstance(exc, ReplayMiss):
        context.set_artifact(REPLAY_MISS, True)
    if isinstance(exc, TransportError):
        context.set_artifact(ERROR_CATEGORY, exc.error_class)
        if exc.budget_spent:
            context.set_artifact(TIME_BUDGET_SPENT, True)
        tally = context.get_artifact(RETRY_TALLY)
        if isinstance(tally, RetryTally):
            tally.merge(exc.retry_counts)
