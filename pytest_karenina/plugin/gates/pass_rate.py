"""``--karenina-min-pass-rate``: the run's pass rate (or its 95% interval's lower bound)
against a threshold."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PassRateGate:
    """The ``--karenina-min-pass-rate`` decision."""

    threshold: float
    pass_rate: float
    passed: bool
    held_back: str | None = None
    """Why the run fails although the rate is met (failures the gate does not forgive)."""
    lower_bound: float | None = None
    """Set when the gate is on the 95% interval's lower bound (``--karenina-gate-on lower``)."""

    @property
    def measured(self) -> float:
        """What is compared with the threshold: the rate, or its interval's lower bound."""
        return self.pass_rate if self.lower_bound is None else self.lower_bound

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        op = ">=" if self.measured >= self.threshold else "<"
        what = f"pass rate {self.pass_rate:.1%}"
        if self.lower_bound is not None:
            what += f", 95% CI lower bound {self.lower_bound:.1%}"
        text = f"{what} {op} {self.threshold:.1%}: gate {verdict}"
        return f"{text} ({self.held_back})" if self.held_back else text
