"""``--karenina-batch``: the run's batch collector, its state file, progress and summary.

The collector (:mod:`pytest_karenina.llm.batch.collector`) is built per process with the
state file beside the replay store; a state file of another benchmark or other settings
stops the run with a usage error naming it. Progress goes to the log (logger
``pytest_karenina.batch``: ``--log-cli-level=INFO`` shows it live) and the live status line;
the terminal summary says what was batched, recovered, failed and ran live.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.adapters.identity import config_identity
from pytest_karenina.llm.batch.collector import BatchCollector, BatchTally
from pytest_karenina.llm.batch.state import BatchState, BatchStateMismatch, state_path
from pytest_karenina.llm.replay import sanitize_identity
from pytest_karenina.plugin.options.settings import Settings, store_path
from pytest_karenina.plugin.run.live_status import PipelineCounts
from pytest_karenina.results.cost import PriceTable

logger = logging.getLogger("pytest_karenina.batch")
MAX_BATCH_PIPELINES = 4096
"""Pipelines at once in batch mode at most (each waits on its batch in a thread)."""


class BatchProgress:
    """Keeps the latest line per wave for the status line, and logs every line."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.latest: dict[str, str] = {}

    def __call__(self, line: str) -> None:
        logger.info("%s", line)
        with self._lock:
            self.latest[line.split(":", 1)[0]] = line

    def line(self) -> str:
        with self._lock:
            return "; ".join(self.latest.values())


def fingerprint(settings: Settings, vconfig: VerificationConfig) -> tuple[str, str, str]:
    """The benchmark's name, a hash of the settings that decide which calls a run makes
    (models without secrets, evaluation mode, replicates), and a short description."""
    benchmark = ", ".join(path.name for path in settings.checkpoints)
    models = [*vconfig.answering_models, *vconfig.parsing_models]
    identities = [sanitize_identity(config_identity(model)) for model in models]
    facts: dict[str, Any] = {
        "models": identities, "mode": vconfig.evaluation_mode,
        "replicates": vconfig.replicate_count,
    }  # fmt: skip
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()
    names = ", ".join(str(model.id or model.model_name) for model in models)
    return benchmark, digest[:16], f"models {names}; mode {vconfig.evaluation_mode}"


def start_batching(
    config: pytest.Config, settings: Settings, vconfig: VerificationConfig,
    counts: PipelineCounts, live_calls: Callable[[], int],
) -> BatchCollector | None:  # fmt: skip
    """The process's collector in batch mode (None otherwise); registers its summary."""
    if not settings.batch:
        return None
    benchmark, digest, described = fingerprint(settings, vconfig)
    state = BatchState(state_path(store_path(settings)), benchmark, digest, described)
    progress = BatchProgress()
    try:
        collector = BatchCollector(
            state, active=lambda: counts.running, wait=settings.batch_wait,
            poll=settings.batch_poll, progress=progress,
        )  # fmt: skip
    except BatchStateMismatch as exc:
        raise pytest.UsageError(str(exc)) from None
    counts.note = progress.line
    summary = BatchSummary(config, collector, live_calls)
    summary.prices = settings.live_prices
    config.pluginmanager.register(summary)
    return collector


def pipelines_at_once(settings: Settings, queued: int) -> int:
    """Threads of a process: in batch mode every queued pipeline at once (each waits on its
    batch), up to :data:`MAX_BATCH_PIPELINES`; else ``--karenina-concurrency``."""
    if not settings.batch:
        return settings.concurrency
    return max(settings.concurrency, min(queued, MAX_BATCH_PIPELINES))


def batch_costs(tally: BatchTally, prices: PriceTable | None) -> tuple[float, float] | None:
    """USD of the batched calls at batch prices and at live prices (None: no prices, or a
    model without one)."""
    if prices is None:
        return None
    spent = live = 0.0
    for label, (input_tokens, output_tokens) in tally.tokens.items():
        price = prices.lookup(label)
        if price is None:
            return None
        spent += price.batched().of(input_tokens, output_tokens)
        live += price.of(input_tokens, output_tokens)
    return spent, live


def summary_lines(
    collector: BatchCollector, live_calls: int, verbose: bool, prices: PriceTable | None = None
) -> list[str]:
    tally = collector.tally
    unbatched = max(0, live_calls - tally.batched_calls - tally.recovered)
    lines = [
        f"karenina batch: {tally.batched_calls} calls in {tally.batches} batches, "
        f"{tally.recovered} recovered from earlier batches, {tally.failed} failed; "
        f"{unbatched} calls ran live (not batchable: agent runs, other interfaces)"
    ]
    costs = batch_costs(tally, prices)
    if costs is not None:
        spent, live = costs
        lines.append(
            f"karenina batch cost: ${spent:.4f} at batch prices; the same calls live: ${live:.4f}"
        )
    if verbose and tally.batch_ids:
        lines.append(f"karenina batch ids: {', '.join(tally.batch_ids)}")
    return lines


class BatchSummary:
    """Writes :func:`summary_lines` in the terminal summary."""

    def __init__(
        self, config: pytest.Config, collector: BatchCollector, live_calls: Callable[[], int]
    ) -> None:
        self.config, self.collector, self.live_calls = config, collector, live_calls
        self.prices: PriceTable | None = None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        verbose = self.config.get_verbosity() >= 1
        prices = self.prices
        for line in summary_lines(self.collector, self.live_calls(), verbose, prices):
            terminalreporter.write_line(line)
