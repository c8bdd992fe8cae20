"""``--karenina-max-cost``: stop starting questions once the money is (about to be) spent.

Before a pipeline starts, the cap admits it only while the cost spent so far plus the
expected cost of the pipelines in flight (each at the mean cost of the pipelines that
finished) stays below the cap. Pipelines in flight finish; queued ones are not started, and
their items are skipped with the reason. Under xdist each worker holds an equal share of
the cap (the workers do not see each other's spending).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from pytest_karenina.results import VerificationResult
from pytest_karenina.results.cost import PriceTable, results_cost

SKIP_PREFIX = "karenina: cost cap"
"""How the skip reason of an item the cap did not start begins."""


class CostCapReached(Exception):
    """An item the cap did not start: its message is the skip reason."""


class CostCap:
    """The spent and in-flight cost of one process against its share of the cap.

    Until a first pipeline has finished with results, its cost is unknown: pipelines are
    admitted one at a time until then (the others wait), so the first wave cannot run past
    the cap. A pipeline that ended without results costs nothing and does not count in the
    mean.
    """

    def __init__(self, cap: float, prices: PriceTable, workers: int = 1) -> None:
        self.cap = cap
        self.share = cap / max(workers, 1)
        self.prices = prices
        self.spent = 0.0
        self.finished = 0
        """Pipelines that ended with results (the mean's denominator)."""
        self.in_flight = 0
        self.refused = 0
        self.closed = False
        self._turn = threading.Condition()

    def admit(self) -> None:
        """Count one more pipeline in flight (waiting while the first one's cost is
        unknown), or raise :class:`CostCapReached`."""
        with self._turn:
            while not self.finished and self.in_flight and not self.closed:
                self._turn.wait(0.5)
            mean = self.spent / self.finished if self.finished else 0.0
            expected = self.spent + self.in_flight * mean
            # Written so that a cost that is not a number (NaN) refuses rather than admits.
            within = self.spent < self.share and expected + mean <= self.share
            if self.closed or not within:
                self.refused += 1
                raise CostCapReached(
                    f"{SKIP_PREFIX} ${self.cap:g} reached (${self.spent:.4f} spent here, "
                    f"${self.in_flight * mean:.4f} in flight): not started"
                )
            self.in_flight += 1

    def settle(self, results: Sequence[VerificationResult]) -> None:
        """One admitted pipeline ended with ``results`` (none when it raised)."""
        try:
            cost = results_cost(results, self.prices).total if results else None
        except Exception:  # usage a custom stage mangled: unknown, not a stuck thread
            cost = None
        with self._turn:
            self.in_flight -= 1
            if cost is not None:
                self.spent += cost
                self.finished += 1
            self._turn.notify_all()

    def close(self) -> None:
        """The run is stopping: waiting pipelines give up."""
        with self._turn:
            self.closed = True
            self._turn.notify_all()
