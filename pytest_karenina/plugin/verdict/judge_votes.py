"""Judge replicates: the K judgings of one answer by one judge model, their vote, and what
they agreed on field by field.

With ``--karenina-judge-replicates K`` every answer is generated once and judged K times by
each parsing model (the judge's own temperature applies). Per answer and judge model the
judge replicates vote: the answer passes when more than half of those that reached a verdict
pass (a tie fails, as the ``majority`` policy); one that errored makes the answer an error
(nothing unmeasured votes). That outcome stands for the judge's result: a replicate's outcome
is the worst of its judges', and the replicate policy decides over the replicates as without
judge replicates (:mod:`.replicates`).

What a judge replicate said of an answer is its parsed template fields and its LLM rubric
trait values (as ``rubric <trait>``): the judge agreed with itself on a field when all its
replicates gave the same value.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.outcome import Outcome, Verdict

TRAIT_PREFIX = "rubric "
"""How a rubric trait is named among a judge replicate's fields."""
DETERMINISTIC_TRAITS = ("regex", "callable")
"""Trait kinds no judge grades: they cannot disagree with themselves, so they are left out."""
MAX_VALUE = 40


def shown(value: Any) -> str:
    """A parsed value in a line: strings quoted, others as JSON, bounded, terminal-safe."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return terminal_safe(text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "...")


def _same(values: Sequence[Any]) -> bool:
    return all(value == values[0] for value in values[1:])


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def consensus(values: Sequence[Any]) -> Any:
    """The most common of ``values`` (the earliest of the most common on a tie)."""
    counts = Counter(_key(value) for value in values)
    top = max(counts.values())
    return next(value for value in values if counts[_key(value)] == top)


def majority(outcomes: Sequence[Outcome]) -> Outcome:
    """The vote of one answer's judge replicates: their first error; else pass when more
    than half of those that reached a verdict passed, else their first failure; no verdict
    when none reached one."""
    errors = [outcome for outcome in outcomes if outcome.is_error]
    if errors:
        return errors[0]
    decided = [outcome for outcome in outcomes if outcome.decided]
    if not decided:
        return Outcome.NO_VERDICT
    passed = sum(1 for outcome in decided if outcome is Outcome.PASS)
    if passed * 2 > len(decided):
        return Outcome.PASS
    return next(outcome for outcome in decided if outcome is not Outcome.PASS)


@dataclass(frozen=True)
class JudgeVote:
    """One answer (its ``replicate``) judged by one judge model (``judge``): each judge
    replicate's outcome and, per field, each judge replicate's value (in judge replicate
    order; a replicate without a value for the field gives None)."""

    replicate: int | None
    judge: str
    outcomes: tuple[Outcome, ...]
    values: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        return majority(self.outcomes)

    @property
    def count(self) -> int:
        """Judge replicates."""
        return len(self.outcomes)

    @property
    def passed(self) -> int:
        return sum(1 for outcome in self.outcomes if outcome is Outcome.PASS)

    @property
    def flaky(self) -> bool:
        """The judge replicates that reached a verdict disagree."""
        decided = [outcome for outcome in self.outcomes if outcome.decided]
        return 0 < sum(1 for o in decided if o is Outcome.PASS) < len(decided)

    @property
    def disagreed(self) -> list[str]:
        """The fields the judge replicates gave different values for."""
        return [name for name, found in self.values.items() if not _same(found)]

    def answer_values(self) -> dict[str, Any]:
        """What the judge made of the answer: per field, its replicates' most common value."""
        return {name: consensus(found) for name, found in self.values.items()}

    def describe(self) -> str:
        """``pass, pass, verify_fail (2/3 passed; majority: pass; flaky)``."""
        flaky = "; flaky" if self.flaky else ""
        return (
            f"{', '.join(map(str, self.outcomes))} ({self.passed}/{self.count} passed; "
            f"majority: {self.outcome}{flaky})"
        )

    def side_lines(self, where: str) -> list[str]:
        """``judge-side: r_count parsed 3, 3, 2 from one answer`` per field the judge
        replicates disagreed on (``where`` names the answer and judge when the item has
        several); their verdicts when no field tells them apart."""
        lines = []
        for name in self.disagreed:
            verb = "graded" if name.startswith(TRAIT_PREFIX) else "parsed"
            values = ", ".join(shown(value) for value in self.values[name])
            said = f"{terminal_safe(name)} {verb} {values}"
            lines.append(f"judge-side: {said} from one answer{where}")
        if not lines:
            outcomes = ", ".join(map(str, self.outcomes))
            lines.append(f"judge-side: {outcomes} from one answer{where}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "replicate": self.replicate,
            "judge": self.judge,
            "outcomes": [outcome.value for outcome in self.outcomes],
            "values": {name: list(found) for name, found in self.values.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JudgeVote:
        values = data.get("values") or {}
        return cls(
            replicate=data.get("replicate"),
            judge=str(data.get("judge") or ""),
            outcomes=tuple(Outcome(o) for o in data.get("outcomes") or ()),
            values={str(name): tuple(found) for name, found in values.items()},
        )


def judged_values(verdict: Verdict) -> dict[str, Any]:
    """What one judge replicate said of its answer: the parsed template fields, then the
    values of the rubric traits a judge grades."""
    template = verdict.result.template
    found: dict[str, Any] = dict((template.parsed_llm_response or {}) if template else {})
    for check in verdict.checks:
        graded = check.error is None and check.skipped is None
        if graded and not check.kind.startswith(DETERMINISTIC_TRAITS):
            found[TRAIT_PREFIX + check.name] = check.value
    return found


def judge_votes(verdicts: Sequence[Verdict]) -> list[JudgeVote]:
    """The verdicts grouped by answer (replicate) and judge model, each group in judge
    replicate order; groups in the order their first verdict comes."""
    groups: dict[tuple[int | None, str], list[Verdict]] = {}
    for verdict in verdicts:
        meta = verdict.result.metadata
        groups.setdefault((meta.replicate, meta.parsing.canonical_key), []).append(verdict)
    found = []
    for (replicate, _), group in groups.items():
        group.sort(key=lambda verdict: verdict.result.judge_replicate or 0)
        said = [judged_values(verdict) for verdict in group]
        names = list(dict.fromkeys(name for values in said for name in values))
        found.append(
            JudgeVote(
                replicate=replicate,
                judge=group[0].result.metadata.parsing.model_name,
                outcomes=tuple(verdict.category for verdict in group),
                values={name: tuple(values.get(name) for values in said) for name in names},
            )
        )
    return found


def answer_side_lines(votes: Sequence[JudgeVote], outcomes: Sequence[Outcome]) -> list[str]:
    """Why the replicates (the answers) disagree: per field, what the answers say as the
    first judge model read them (``answer-side: 2 of 3 answers say capital 'Paris', 1 says
    'Lyon'``); how many of them passed when no field tells them apart."""
    first = votes[0].judge if votes else None
    answers = [vote.answer_values() for vote in votes if vote.judge == first]
    lines = []
    names = list(dict.fromkeys(name for values in answers for name in values))
    for name in names:
        said = [values.get(name) for values in answers]
        if len(said) < 2 or _same(said):
            continue
        counts = Counter(_key(value) for value in said)
        value_of: dict[str, Any] = {}
        for value in said:
            value_of.setdefault(_key(value), value)
        head, *rest = sorted(value_of, key=lambda key: -counts[key])  # stable: first seen first
        text = f"{counts[head]} of {len(said)} answers say {terminal_safe(name)} "
        text += shown(value_of[head])
        for key in rest:
            verb = "says" if counts[key] == 1 else "say"
            text += f", {counts[key]} {verb} {shown(value_of[key])}"
        lines.append(f"answer-side: {text}")
    if not lines:
        passed = sum(1 for outcome in outcomes if outcome is Outcome.PASS)
        lines.append(f"answer-side: {passed} of {len(outcomes)} answers pass")
    return lines


@dataclass
class Agreement:
    """How often the judge agreed with itself: over the answers judged more than once,
    ``[agreed, answers]`` for the verdict and per field (an answer counts once per judge
    model)."""

    verdict: list[int] = field(default_factory=lambda: [0, 0])
    fields: dict[str, list[int]] = field(default_factory=dict)

    def add(self, vote: JudgeVote) -> None:
        if vote.count < 2:
            return
        self.verdict[0] += len(set(vote.outcomes)) == 1
        self.verdict[1] += 1
        for name, found in vote.values.items():
            tally = self.fields.setdefault(name, [0, 0])
            tally[0] += _same(found)
            tally[1] += 1

    @property
    def answers(self) -> int:
        return self.verdict[1]

    def share(self) -> float | None:
        """Agreed cells (verdicts and fields) over all cells; None when nothing was judged
        twice."""
        cells = [self.verdict, *self.fields.values()]
        total = sum(judged for _, judged in cells)
        return sum(agreed for agreed, _ in cells) / total if total else None

    def disagreed(self) -> list[str]:
        """``verdict`` (when the verdicts differed) and the fields the judge disagreed on."""
        found = ["verdict"] if self.verdict[0] < self.verdict[1] else []
        return found + [name for name, (agreed, judged) in self.fields.items() if agreed < judged]


def agreement(votes: Sequence[JudgeVote]) -> Agreement:
    """The :class:`Agreement` of ``votes``."""
    found = Agreement()
    for vote in votes:
        found.add(vote)
    return found
