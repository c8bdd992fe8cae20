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


def quiet_seconds(poll: float) -> float:
    """Seconds without a new batched call after which a wave goes although some pipelines are
    not waiting on it (live calls, a retry's back-off): two polling intervals, at least 5 s.
    Against a batch's minutes this costs little, and a slow pipeline does not split a wave."""
    return max(5.0, 2 * poll)


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
            state, active=lambda: in_flight(counts, settings),
            quiet=quiet_seconds(settings.batch_poll), wait=settings.batch_wait,
            poll=settings.batch_poll, progress=progress,
        )  # fmt: skip
    except BatchStateMismatch as exc:
        raise pytest.UsageError(str(exc)) from None
    counts.note = progress.line
    summary = BatchSummary(config, collector, live_calls)
    summary.prices = settings.live_prices
    config.pluginmanager.register(summary)
    return collector


def in_flight(counts: PipelineCounts, settings: Settings) -> int:
    """The pipelines a wave waits for: those running and those queued that a thread will
    start at once (threads start one by one, so ``running`` alone would let a wave go while
    half of them have not reached their first call)."""
    threads = max(settings.concurrency, MAX_BATCH_PIPELINES)
    return min(counts.running + counts.queued, threads)


def pipelines_at_once(settings: Settings, queued: int) -> int:
    """Threads of a process: in batch mode every queued pipeline at once (each waits on its
    batch), up to :data:`MAX_BATCH_PIPELINES`; else ``--karenina-concurrency``."""
    if not settings.batch:
        return settings.concurrency
    return max(settings.concurrency, min(queued, MAX_BATCH_PIPELINES))


BATCH_OUTPUT = "karenina_batch"
"""``workeroutput`` key: an xdist worker's batch totals (:func:`totals`)."""
COUNTS = ("batches", "batched_calls", "recovered", "failed", "live_calls")


def totals(tally: BatchTally, live_calls: int) -> dict[str, Any]:
    """A process's batch figures, JSON-native (they travel from xdist workers)."""
    return {
        "batches": tally.batches, "batched_calls": tally.batched_calls,
        "recovered": tally.recovered, "failed": tally.failed, "live_calls": live_calls,
        "batch_ids": list(tally.batch_ids), "tokens": {k: list(v) for k, v in tally.tokens.items()},
    }  # fmt: skip


def added(one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The figures of two processes together."""
    found = {name: one.get(name, 0) + other.get(name, 0) for name in COUNTS}
    found["batch_ids"] = [*one.get("batch_ids", []), *other.get("batch_ids", [])]
    tokens = {label: list(pair) for label, pair in one.get("tokens", {}).items()}
    for label, (input_tokens, output_tokens) in other.get("tokens", {}).items():
        pair = tokens.setdefault(label, [0, 0])
        pair[0], pair[1] = pair[0] + input_tokens, pair[1] + output_tokens
    found["tokens"] = tokens
    return found


def batch_costs(
    tokens: dict[str, list[int]], prices: PriceTable | None
) -> tuple[float, float] | None:
    """USD of the batched calls at batch prices and at live prices (None: no prices, or a
    model without one)."""
    if prices is None:
        return None
    spent = live = 0.0
    for label, (input_tokens, output_tokens) in tokens.items():
        price = prices.lookup(label)
        if price is None:
            return None
        spent += price.batched().of(input_tokens, output_tokens)
        live += price.of(input_tokens, output_tokens)
    return spent, live


def summary_lines(
    found: dict[str, Any], verbose: bool, prices: PriceTable | None = None
) -> list[str]:
    """The summary's batch lines for the figures of a run (:func:`totals`)."""
    unbatched = max(0, found["live_calls"] - found["batched_calls"] - found["recovered"])
    lines = [
        f"karenina batch: {found['batched_calls']} calls in {found['batches']} batches, "
        f"{found['recovered']} recovered from earlier batches, {found['failed']} failed; "
        f"{unbatched} calls ran live (not batchable: agent runs, other interfaces)"
    ]
    costs = batch_costs(found["tokens"], prices)
    if costs is not None:
        spent, live = costs
        lines.append(
            f"karenina batch cost: ${spent:.4f} at batch prices; the same calls live: ${live:.4f}"
        )
    if verbose and found["batch_ids"]:
        lines.append(f"karenina batch ids: {', '.join(found['batch_ids'])}")
    return lines


class BatchSummary:
    """Writes :func:`summary_lines` in the terminal summary of a run in one process; in an
    xdist worker, sends the worker's figures to the controller (:class:`BatchTotals`)."""

    def __init__(
        self, config: pytest.Config, collector: BatchCollector, live_calls: Callable[[], int]
    ) -> None:
        self.config, self.collector, self.live_calls = config, collector, live_calls
        self.prices: PriceTable | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if isinstance(workeroutput, dict):
            workeroutput[BATCH_OUTPUT] = totals(self.collector.tally, self.live_calls())

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(self.config, "workerinput"):
            return
        verbose = self.config.get_verbosity() >= 1
        found = totals(self.collector.tally, self.live_calls())
        for line in summary_lines(found, verbose, self.prices):
            terminalreporter.write_line(line)


class BatchTotals:
    """On the xdist controller: the workers' batch figures added up, in the summary."""

    def __init__(self, config: pytest.Config, prices: PriceTable | None) -> None:
        self.config, self.prices = config, prices
        self.found: dict[str, Any] | None = None

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        sent = getattr(node, "workeroutput", {}).get(BATCH_OUTPUT)
        if isinstance(sent, dict):
            self.found = added(self.found or {}, sent)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.found is not None:
            verbose = self.config.get_verbosity() >= 1
            for line in summary_lines(self.found, verbose, self.prices):
                terminalreporter.write_line(line)
