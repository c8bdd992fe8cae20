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

With judge replicates (``--karenina-judge-replicates K``) each answer's judge replicates vote
first (:mod:`.judge_votes`), and an item whose judge flipped on one answer is flaky too, on
the judge's side; under ``each`` its judge replicates alone decide it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_karenina.config.choices import FlakyMode
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.judge_votes import JudgeVote, answer_side_lines, judge_votes
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
    """The replicates' outcomes (in replicate order) and the item's outcome from them.

    ``judges``: per answer (replicate) and judge model, its judge replicates' vote
    (:mod:`.judge_votes`; one outcome each without judge replicates); a replicate's outcome
    is the worst of its judges' votes. ``grouped``: the replicates voted through a policy;
    False for an item of the ``each`` policy, one answer, that only its judge replicates
    decided.
    """

    outcomes: tuple[Outcome, ...]
    outcome: Outcome
    policy: str
    judges: tuple[JudgeVote, ...] = ()
    grouped: bool = True

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome is Outcome.PASS)

    @property
    def judge_replicates(self) -> int:
        """Judge replicates per answer (1 without them)."""
        return max((judge.count for judge in self.judges), default=1)

    @property
    def answer_flaky(self) -> bool:
        """Replicates (answers) that reached verdicts disagree."""
        decided = [o for o in self.outcomes if o.decided]
        return 0 < sum(1 for o in decided if o is Outcome.PASS) < len(decided)

    @property
    def judge_flaky(self) -> bool:
        """The judge replicates of one answer that reached verdicts disagree."""
        return any(judge.flaky for judge in self.judges)

    @property
    def flaky(self) -> bool:
        """Either side flipped: the answers, or the judge on one answer."""
        return self.answer_flaky or self.judge_flaky

    def fraction(self) -> str:
        return f"{self.passed}/{len(self.outcomes)}"

    def flaky_text(self) -> str | None:
        """``2/3`` (answers that passed), ``judge 2/3`` (judge replicates of the first answer
        whose judge flipped that passed), both, or None when nothing flipped."""
        parts = [self.fraction()] if self.answer_flaky else []
        flipped = next((judge for judge in self.judges if judge.flaky), None)
        if flipped is not None:
            parts.append(f"judge {flipped.passed}/{flipped.count}")
        return ", ".join(parts) or None

    def describe(self) -> str:
        """``replicates: pass, verify_fail, pass (2/3 passed; majority: pass; flaky)``; for an
        item only its judge replicates decided, ``judge replicates: pass, pass, verify_fail
        (2/3 passed; majority: pass; flaky)``."""
        if not self.grouped:
            several = len(self.judges) > 1
            votes = "; ".join(
                (f"{judge.judge}: " if several else "") + judge.describe() for judge in self.judges
            )
            return terminal_safe(f"judge replicates: {votes}")
        decision = f"{self.fraction()} passed; {self.policy}: {self.outcome}"
        flaky = "; flaky" if self.answer_flaky else ""
        return f"replicates: {', '.join(map(str, self.outcomes))} ({decision}{flaky})"

    def _where(self, judge: JudgeVote) -> str:
        parts = []
        if self.grouped and judge.replicate is not None:
            parts.append(f"replicate {judge.replicate}")
        if len({found.judge for found in self.judges}) > 1:
            parts.append(f"judge {judge.judge}")
        return terminal_safe(f" ({', '.join(parts)})") if parts else ""

    def side_lines(self) -> list[str]:
        """Which side flipped: ``answer-side: ...`` when the answers disagree,
        ``judge-side: ...`` for each answer whose judge replicates disagreed."""
        lines = answer_side_lines(self.judges, self.outcomes) if self.answer_flaky else []
        for judge in self.judges:
            if judge.flaky:
                lines += judge.side_lines(self._where(judge))
        return lines

    def lines(self) -> list[str]:
        """The vote in words: :meth:`describe`; when the replicates voted, each answer whose
        judge replicates did not all agree; then :meth:`side_lines`."""
        found = [self.describe()]
        if self.grouped:
            found += [
                f"judge replicates{self._where(judge)}: {terminal_safe(judge.describe())}"
                for judge in self.judges
                if judge.count > 1 and len(set(judge.outcomes)) > 1
            ]
        return found + self.side_lines()


def vote(verdicts: Sequence[Verdict], policy: ReplicatePolicy, flaky: FlakyMode) -> ReplicateVote:
    """The item's outcome from its verdicts: the judge replicates of each answer and judge
    model vote (:func:`~.judge_votes.majority`), a replicate's outcome is the worst of its
    judges', and ``policy`` decides over the replicates (``metadata.replicate``)."""
    judges = tuple(judge_votes(verdicts))
    by_replicate: dict[int | None, list[Outcome]] = {}
    for judge in judges:
        by_replicate.setdefault(judge.replicate, []).append(judge.outcome)
    outcomes = tuple(worst_outcome(found) for _, found in sorted(
        by_replicate.items(), key=lambda pair: pair[0] or 0
    ))  # fmt: skip
    grouped = policy.groups_replicates

    def made(outcome: Outcome, said: str) -> ReplicateVote:
        return ReplicateVote(outcomes, outcome, said, judges, grouped)

    errors = [o for o in outcomes if o.is_error]
    if errors:
        return made(errors[0], str(policy))
    decided = [o for o in outcomes if o is not Outcome.NO_VERDICT]
    if not decided:
        return made(Outcome.NO_VERDICT, str(policy))
    passed = [o is Outcome.PASS for o in decided]
    # An answer's failure first; a judge replicate's when only the judge flipped.
    judged = [o for judge in judges for o in judge.outcomes]
    failures = [o for o in [*decided, *judged] if o.decided and o is not Outcome.PASS]
    first_failure = failures[0] if failures else Outcome.VERIFY_FAIL
    found = made(Outcome.PASS if policy.passes(passed) else first_failure, str(policy))
    if found.flaky and flaky != "policy":
        wanted = Outcome.PASS if flaky == "pass" else first_failure
        return made(wanted, f"{policy}, flaky counted as {flaky}")
    return found
