"""The judge's agreement with itself, from the items' judge replicates: per item (a short
line for the HTML report, JUnit properties) and over the run (the terminal summary, JUnit
suite properties).

An answer judged K times by one judge model agrees on a field when all K judge replicates
gave the same value; the judge's self-agreement on a field is the share of answers on which
it agreed (:class:`~..verdict.judge_votes.Agreement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.judge_votes import Agreement, JudgeVote, agreement, shown

MAX_QUESTIONS = 20
"""Questions the summary names where the judge disagreed with itself (then a count)."""


def _rate(agreed: int, judged: int) -> str:
    return f"{agreed / judged:.1%} ({agreed}/{judged} answers)"


def item_votes(payload: ItemPayload) -> list[JudgeVote]:
    """The judge votes an item's payload carries (none without judge replicates)."""
    return [JudgeVote.from_json(data) for data in payload.judges]


def item_line(votes: Sequence[JudgeVote]) -> str | None:
    """``3 judge replicates per answer; agreed on verdict, capital; disagreed on r_count
    (parsed 3, 3, 2)``; None without judge replicates."""
    judged = [vote for vote in votes if vote.count > 1]
    if not judged:
        return None
    found = agreement(judged)
    disagreed = found.disagreed()
    agreed = [name for name in ["verdict", *found.fields] if name not in disagreed]
    count = max(vote.count for vote in judged)
    parts = [f"{count} judge replicates per answer"]
    if agreed:
        parts.append(f"agreed on {', '.join(agreed)}")
    if disagreed:
        shown_values = []
        for name in disagreed:
            vote = next(v for v in judged if _differs(v, name))
            said = vote.outcomes if name == "verdict" else vote.values[name]
            shown_values.append(f"{name} ({', '.join(_value(name, v) for v in said)})")
        parts.append(f"disagreed on {', '.join(shown_values)}")
    return terminal_safe("; ".join(parts))


def _differs(vote: JudgeVote, name: str) -> bool:
    return len(set(vote.outcomes)) > 1 if name == "verdict" else name in vote.disagreed


def _value(name: str, value: Any) -> str:
    return str(value) if name == "verdict" else shown(value)


def item_properties(votes: Sequence[JudgeVote]) -> list[tuple[str, object]]:
    """``karenina.judge_agreement`` (the share of the item's verdicts and fields on which
    the judge agreed with itself) and ``karenina.judge_disagreed`` (which), with judge
    replicates."""
    found = agreement(votes)
    share = found.share()
    if share is None:
        return []
    return [
        ("karenina.judge_agreement", f"{share:.4f}"),
        ("karenina.judge_disagreed", ",".join(found.disagreed())),
    ]


@dataclass
class JudgeAgreementTally:
    """The run's judge self-agreement, and the questions where the judge disagreed with
    itself (question id -> what it disagreed on, in first-seen order)."""

    agreement: Agreement = field(default_factory=Agreement)
    replicates: int = 0
    questions: dict[str, list[str]] = field(default_factory=dict)

    def add(self, payload: ItemPayload) -> None:
        votes = [vote for vote in item_votes(payload) if vote.count > 1]
        if not votes:
            return
        self.replicates = max(self.replicates, *(vote.count for vote in votes))
        for vote in votes:
            self.agreement.add(vote)
        disagreed = agreement(votes).disagreed()
        if disagreed:
            known = self.questions.setdefault(payload.question_id or payload.nodeid, [])
            known.extend(name for name in disagreed if name not in known)

    def lines(self) -> list[str]:
        """``judge self-agreement (3 judge replicates per answer): verdict 50.0% (1/2
        answers), r_count 50.0% (1/2 answers)`` and ``judge disagreed with itself on 1
        question: q1 (verdict, r_count)``; none without judge replicates."""
        if not self.agreement.answers:
            return []
        rates = [f"verdict {_rate(*self.agreement.verdict)}"]
        rates += [f"{name} {_rate(*tally)}" for name, tally in self.agreement.fields.items()]
        found = [
            f"judge self-agreement ({self.replicates} judge replicates per answer): "
            + ", ".join(rates)
        ]
        if self.questions:
            named = [
                f"{question} ({', '.join(names)})"
                for question, names in list(self.questions.items())[:MAX_QUESTIONS]
            ]
            more = len(self.questions) - len(named)
            count = len(self.questions)
            found.append(
                f"judge disagreed with itself on {count} question{'s' if count > 1 else ''}: "
                + ", ".join(named)
                + (f", and {more} more" if more else "")
            )
        else:
            found.append("judge disagreed with itself on no question")
        return [terminal_safe(line) for line in found]

    def suite_properties(self) -> list[tuple[str, str]]:
        """``karenina.judge_agreement.verdict`` and ``karenina.judge_agreement.<field>``:
        the share of answers on which the judge agreed with itself."""
        if not self.agreement.answers:
            return []
        tallies = {"verdict": self.agreement.verdict, **self.agreement.fields}
        return [
            (f"karenina.judge_agreement.{name}", f"{agreed / judged:.4f}")
            for name, (agreed, judged) in tallies.items()
        ]
