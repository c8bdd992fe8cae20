"""Replicate policies: how the N replicates of a question make one verdict.

``each`` (the default) keeps one item per replicate. Every other policy makes one item per
question x answering model, runs its replicates inside it, and decides from their outcomes
(a replicate's outcome is the worst of its judges'):

* ``all``: every replicate passes;
* ``majority``: more than half pass;
* ``at-least:K``: at least K pass;
* ``pass@K``: at least one of the first K passes (the summary also gives the unbiased
  pass@K estimate over all N when N > K).

Any replicate that errored makes the item an error: nothing unmeasured votes. Replicates that
disagree make the item **flaky**; ``--karenina-flaky`` says what a flaky item counts as:
``policy`` (its policy verdict, the default), ``pass`` or ``fail``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_karenina.config.choices import FlakyMode
from pytest_karenina.plugin.verdict.outcome import Outcome, Verdict, worst_outcome

PolicyKind = Literal["each", "all", "majority", "at-least", "pass@"]
_FORM = re.compile(r"^\s*(each|all|majority|at-least:(\d+)|pass@(\d+))\s*$", re.IGNORECASE)


class ReplicatePolicyError(ValueError):
    """A replicate policy that cannot be read, or does not fit the replicate count."""


@dataclass(frozen=True)
class ReplicatePolicy:
    kind: PolicyKind = "each"
    k: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> ReplicatePolicy:
        match = _FORM.match(text or "each")
        if match is None:
            raise ReplicatePolicyError(
                f"replicate policy {text!r}: use each, all, majority, at-least:K or pass@K"
            )
        word = match.group(1).lower()
        if word.startswith("at-least"):
            return cls("at-least", int(match.group(2)))
        if word.startswith("pass@"):
            return cls("pass@", int(match.group(3)))
        return cls(word)  # type: ignore[arg-type]

    @property
    def groups_replicates(self) -> bool:
        """Whether one item holds all the replicates of a question x answering model."""
        return self.kind != "each"

    def check(self, replicates: int) -> None:
        """Refuse a K the replicate count cannot reach."""
        if self.k is not None and not 1 <= self.k <= replicates:
            raise ReplicatePolicyError(
                f"replicate policy {self}: K must be between 1 and the {replicates} replicates"
            )

    def passes(self, passed: Sequence[bool]) -> bool:
        """The policy's verdict over the replicates' pass/fail, in replicate order."""
        count, total = sum(passed), len(passed)
        if self.kind == "all":
            return count == total
        if self.kind == "majority":
            return count * 2 > total
        if self.kind == "at-least":
            return count >= (self.k or 1)
        if self.kind == "pass@":
            return any(passed[: self.k])
        return count == total

    def __str__(self) -> str:
        if self.kind == "at-least":
            return f"at-least:{self.k}"
        if self.kind == "pass@":
            return f"pass@{self.k}"
        return self.kind


@dataclass(frozen=True)
class ReplicateVote:
    """The replicates' outcomes (in replicate order) and the item's outcome from them."""

    outcomes: tuple[Outcome, ...]
    outcome: Outcome
    policy: str

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome is Outcome.PASS)

    @property
    def flaky(self) -> bool:
        """Replicates that reached verdicts disagree."""
        decided = [o for o in self.outcomes if o.decided]
        return 0 < sum(1 for o in decided if o is Outcome.PASS) < len(decided)

    def fraction(self) -> str:
        return f"{self.passed}/{len(self.outcomes)}"

    def describe(self) -> str:
        """``replicates: pass, verify_fail, pass (2/3 passed; majority: pass; flaky)``."""
        decision = f"{self.fraction()} passed; {self.policy}: {self.outcome}"
        flaky = "; flaky" if self.flaky else ""
        return f"replicates: {', '.join(map(str, self.outcomes))} ({decision}{flaky})"


def vote(verdicts: Sequence[Verdict], policy: ReplicatePolicy, flaky: FlakyMode) -> ReplicateVote:
    """The item's outcome from its verdicts, grouped by ``metadata.replicate``."""
    by_replicate: dict[int | None, list[Outcome]] = {}
    for verdict in verdicts:
        by_replicate.setdefault(verdict.result.metadata.replicate, []).append(verdict.category)
    outcomes = tuple(worst_outcome(found) for _, found in sorted(
        by_replicate.items(), key=lambda pair: pair[0] or 0
    ))  # fmt: skip
    errors = [o for o in outcomes if o.is_error]
    if errors:
        return ReplicateVote(outcomes, errors[0], str(policy))
    decided = [o for o in outcomes if o is not Outcome.NO_VERDICT]
    if not decided:
        return ReplicateVote(outcomes, Outcome.NO_VERDICT, str(policy))
    passed = [o is Outcome.PASS for o in decided]
    first_failure = next((o for o in decided if o is not Outcome.PASS), Outcome.VERIFY_FAIL)
    found = ReplicateVote(outcomes, Outcome.PASS if policy.passes(passed) else first_failure,
                          str(policy))  # fmt: skip
    if found.flaky and flaky != "policy":
        wanted = Outcome.PASS if flaky == "pass" else first_failure
        return ReplicateVote(outcomes, wanted, f"{policy}, flaky counted as {flaky}")
    return found
