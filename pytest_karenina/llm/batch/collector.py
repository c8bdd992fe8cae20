"""The batch collector: calls of concurrent pipelines gathered into provider batches.

Each batched call blocks its pipeline's thread in :meth:`BatchCollector.call`. One
background thread submits what is waiting when every running pipeline waits on it (``active``
says how many run) or after a quiet period without new calls, splits a batch the provider's
limits do not allow, records each batch in the state file before waiting on it, polls, and
hands every waiting thread its reply. A template_only run of N questions with N pipelines at
once thus needs two batches: the answers, then the judge calls.

Batches an earlier run left in the state file are re-attached, not resubmitted: a call whose
key one of them holds waits for that batch's results (``recovered`` counts them).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

import orjson

from pytest_karenina.llm.batch.protocol import (
    BatchCallError,
    BatchProvider,
    BatchReply,
    BatchRequest,
    BatchStatus,
)
from pytest_karenina.llm.batch.state import BatchState, StoredBatch, now_text

logger = logging.getLogger(__name__)
SUBMIT_ATTEMPTS = 4


@dataclass
class Flight:
    """A submitted (or re-attached) batch being waited on."""

    provider: BatchProvider
    batch_id: str
    wave: str
    keys: tuple[str, ...]
    started: float
    recovered: bool = False
    status: BatchStatus | None = None
    next_poll: float = 0.0
    poll_errors: int = 0


@dataclass
class BatchTally:
    """What batching did in a run, for the summary."""

    batches: int = 0
    batched_calls: int = 0
    recovered: int = 0
    failed: int = 0
    unbatched: int = 0
    batch_ids: list[str] = field(default_factory=list)
    tokens: dict[str, list[int]] = field(default_factory=dict)
    """Input and output tokens of the batched replies, by model label
    (``interface:model_name``), to price them."""


def wave_of(call_kinds: set[str]) -> str:
    """``answers``, ``judge`` or ``answers+judge`` for the call kinds of a batch."""
    answers = "answer_generation" in call_kinds
    judge = bool(call_kinds - {"answer_generation"})
    return "+".join(name for name, on in (("answers", answers), ("judge", judge)) if on)


class BatchCollector:
    """Gathers batched calls per provider lane, submits, waits, and answers them.

    ``active``: how many pipelines are running now (all waiting here: submit at once);
    ``quiet``: seconds without a new call after which what waits is submitted anyway;
    ``wait``: seconds a call waits for its batch at most (None: the provider's window);
    ``poll``: seconds between two polls of a batch; ``progress``: gets one line per poll.
    """

    def __init__(
        self, state: BatchState | None = None, *, active: Callable[[], int] | None = None,
        quiet: float = 2.0, wait: float | None = None, poll: float = 15.0,
        progress: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.state, self.active, self.quiet, self.wait, self.poll = state, active, quiet, wait, poll
        self.progress = progress or (lambda line: logger.info("%s", line))
        self.tally = BatchTally()
        self._clock = clock
        self._cond = threading.Condition()
        self._pending: dict[str, list[tuple[BatchRequest, str]]] = {}
        self._providers: dict[str, BatchProvider] = {}
        self._futures: dict[str, Future[BatchReply]] = {}
        self._ready: dict[str, BatchReply] = {}
        self._earlier: dict[str, StoredBatch] = {}
        self._flights: list[Flight] = []
        self._waiting = 0
        self._waiters: dict[str, int] = {}
        self._done: set[str] = set()
        self._last_call = 0.0
        self._thread: threading.Thread | None = None
        self._closed = False
        if state is not None:
            for batch in state.load():
                for key in batch.keys:
                    self._earlier[key] = batch

    # --- the calling threads ------------------------------------------------------------
    def call(self, provider: BatchProvider, request: BatchRequest, call_kind: str) -> BatchReply:
        """The reply to ``request`` from a batch of ``provider`` (blocks until it is there);
        raises :class:`BatchCallError` when the wait runs out."""
        with self._cond:
            if self._closed:
                raise BatchCallError(call_kind, "the run is ending; the call was not batched")
            found = self._ready.pop(request.key, None)
            if found is not None:
                return found
            future = self._futures.get(request.key)
            if future is None:
                future = self._futures[request.key] = Future()
                self._providers.setdefault(provider.lane, provider)
                earlier = self._earlier.get(request.key)
                if earlier is not None:
                    self._attach(earlier, provider)
                else:
                    self._pending.setdefault(provider.lane, []).append((request, call_kind))
                    self._last_call = self._clock()
            self._waiting += 1
            self._waiters[request.key] = self._waiters.get(request.key, 0) + 1
            self._start()
            self._cond.notify_all()
        limit = self.wait if self.wait is not None else provider.completion_window_s
        try:
            return future.result(timeout=limit)
        except FutureTimeout:
            with self._cond:
                if self._waiters.get(request.key):
                    self._waiters[request.key] -= 1
                    self._waiting -= 1
                if not self._waiters.get(request.key):  # nobody waits: do not submit it
                    self._drop_pending(provider.lane, request.key)
            raise BatchCallError(
                call_kind,
                f"the batch wait of {limit:g}s ran out (--karenina-batch-wait); the batch is "
                "left running and a run started again with the same settings collects it",
            ) from None

    def _drop_pending(self, lane: str, key: str) -> None:
        """Forget a call not submitted yet (called with the lock held)."""
        pending = self._pending.get(lane, [])
        kept = [(request, kind) for request, kind in pending if request.key != key]
        if len(kept) < len(pending):
            self._pending[lane] = kept
            self._futures.pop(key, None)
            self._waiters.pop(key, None)

    def count_tokens(self, label: str, input_tokens: int | None, output: int | None) -> None:
        with self._cond:
            found = self.tally.tokens.setdefault(label, [0, 0])
            found[0] += input_tokens or 0
            found[1] += output or 0

    def count_unbatched(self) -> None:
        with self._cond:
            self.tally.unbatched += 1

    def _attach(self, earlier: StoredBatch, provider: BatchProvider) -> None:
        """Wait on a batch of an earlier run (called with the lock held); ``provider`` is
        the one of the call that found it, unless the batch's lane has its own."""
        if any(flight.batch_id == earlier.batch_id for flight in self._flights):
            return
        provider = self._providers.get(earlier.lane, provider)
        self._flights.append(
            Flight(provider, earlier.batch_id, earlier.wave, earlier.keys, self._clock(), True)
        )
        self.progress(f"{earlier.wave}: re-attached to batch {earlier.batch_id} of an earlier run")

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="karenina-batch", daemon=True)
            self._thread.start()

    # --- the background thread ----------------------------------------------------------
    def _due(self) -> bool:
        """Whether what waits should go now (called with the lock held)."""
        if not any(self._pending.values()):
            return False
        running = self.active() if self.active is not None else None
        quiet = self._clock() - self._last_call
        if running is not None and self._waiting >= running and quiet >= min(self.quiet, 0.2):
            return True
        return quiet >= self.quiet

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._closed:
                    return
                taken: dict[str, list[tuple[BatchRequest, str]]] = {}
                if self._due():
                    taken, self._pending = self._pending, {}
                flights = list(self._flights)
            for lane, requests in taken.items():
                self._submit(self._providers[lane], requests)
            now = self._clock()
            for flight in flights:
                if flight.next_poll <= now:
                    self._poll(flight)
            with self._cond:
                if self._closed:
                    return
                self._cond.wait(self._sleep_for())

    def _sleep_for(self) -> float:
        now = self._clock()
        due = [flight.next_poll - now for flight in self._flights]
        if any(self._pending.values()):
            running = self.active() if self.active is not None else None
            everyone_waits = running is not None and self._waiting >= running
            settle = min(self.quiet, 0.2) if everyone_waits else self.quiet
            due.append(settle - (now - self._last_call))
        return max(0.01, min(due, default=1.0))

    def _submit(self, provider: BatchProvider, requests: list[tuple[BatchRequest, str]]) -> None:
        for part in split(provider, [request for request, _ in requests]):
            keys = tuple(request.key for request in part)
            chosen = set(keys)
            kinds = {kind for request, kind in requests if request.key in chosen}
            wave = wave_of(kinds)
            batch_id = self._retrying(provider, part, f"{wave}: submitting")
            if isinstance(batch_id, Exception):
                self._fail(keys, f"the batch could not be submitted: {batch_id}")
                continue
            if self.state is not None:
                self.state.add(StoredBatch(batch_id, provider.name, provider.lane, wave, keys,
                                           now_text()))  # fmt: skip
            with self._cond:
                self._flights.append(Flight(provider, batch_id, wave, keys, self._clock()))
                self.tally.batches += 1
                self.tally.batch_ids.append(batch_id)
            self.progress(f"{wave}: submitted batch {batch_id} of {len(keys)} requests")

    def _retrying(
        self, provider: BatchProvider, part: list[BatchRequest], what: str
    ) -> str | Exception:
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                return provider.submit(part)
            except Exception as exc:
                if attempt == SUBMIT_ATTEMPTS:
                    return exc
                logger.warning("%s failed (attempt %d): %s", what, attempt, exc)
                time.sleep(min(30.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")

    def _poll(self, flight: Flight) -> None:
        try:
            status = flight.provider.poll(flight.batch_id)
            if status.finished:
                replies = flight.provider.results(flight.batch_id)
        except Exception as exc:  # a restarting server, a dropped connection: poll again
            flight.poll_errors += 1
            flight.next_poll = self._clock() + min(60.0, self.poll * 2**flight.poll_errors)
            logger.warning("batch %s: polling failed, trying again: %s", flight.batch_id, exc)
            return
        flight.poll_errors = 0
        flight.status = status
        minutes = (self._clock() - flight.started) / 60
        self.progress(
            f"{flight.wave}: batch {short_id(flight.batch_id)}, {status.done + status.failed}/"
            f"{status.total or len(flight.keys)} done, {minutes:.0f} min ({status.state})"
        )
        if not status.finished:
            flight.next_poll = self._clock() + self.poll
            return
        self._land(flight, status, replies)

    def _land(self, flight: Flight, status: BatchStatus, replies: Sequence[BatchReply]) -> None:
        """Hand out a finished batch's replies; keys it lacks fail with the batch's state."""
        by_key = {reply.key: reply for reply in replies}
        missing = status.reason or f"the batch ended {status.state} without a result for it"
        with self._cond:
            self._flights.remove(flight)
            for key in flight.keys:
                reply = by_key.get(key) or BatchReply(key, None, missing)
                if reply.error is not None:
                    reply = BatchReply(key, None, f"batch {flight.batch_id}: {reply.error}")
                    self.tally.failed += 1
                if flight.recovered:
                    self.tally.recovered += 1
                else:
                    self.tally.batched_calls += 1
                self._earlier.pop(key, None)
                self._hand(key, reply)
            self._done.add(flight.batch_id)

    def _hand(self, key: str, reply: BatchReply) -> None:
        """Give ``reply`` to the threads waiting for it, else keep it for the first that
        asks (called with the lock held); they stop counting as waiting here and now."""
        self._waiting -= self._waiters.pop(key, 0)
        future = self._futures.pop(key, None)
        if future is not None:
            future.set_result(reply)
        else:
            self._ready[key] = reply

    def _fail(self, keys: Sequence[str], reason: str) -> None:
        with self._cond:
            for key in keys:
                self._hand(key, BatchReply(key, None, reason))
                self.tally.failed += 1

    def close(self) -> None:
        """Stop the background thread; drop collected batches from the state file (and
        the file when it holds no other), keep the ones still pending for the next run."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            done = set(self._done)
            reason = "the run ended before its batch did; a run with the same settings collects it"
            for key in list(self._futures):
                self._hand(key, BatchReply(key, None, reason))
        if self.state is not None:
            self.state.forget(done)


def short_id(batch_id: str) -> str:
    """Four characters that tell a run's batches apart in a status line."""
    tail = batch_id.rsplit("_", 1)[-1]
    return tail[-4:] if len(tail) >= 4 else batch_id


def split(provider: BatchProvider, requests: Sequence[BatchRequest]) -> list[list[BatchRequest]]:
    """``requests`` in batches within the provider's count and size limits, in order."""
    parts: list[list[BatchRequest]] = []
    current: list[BatchRequest] = []
    size = 0
    for request in requests:
        length = len(orjson.dumps(request.body)) + len(request.key) + 64
        if current and (
            len(current) >= provider.max_requests or size + length > provider.max_bytes
        ):
            parts.append(current)
            current, size = [], 0
        current.append(request)
        size += length
    if current:
        parts.append(current)
    return parts
