"""Each entry of a run against its baseline entry: which class of change it is.

An entry is compared with the baseline entry of its question and paired model
(:mod:`.baseline_pairs`). It is

* **new** (no baseline entry), **missing** (a baseline entry the run did not make), or an
  **error** (nothing measured now: the gate fails, but not as a regression of the model);
* **not comparable** when its fingerprint changed (question, template, rubric, judge or
  prompts: :mod:`~..collect.fingerprint`): listed apart with what changed, never counted as
  a regression or a pass;
* else compared. With one replicate on each side, a flip decides as it always did:
  ``pass -> fail`` is a **regression**, ``fail -> pass`` an **improvement**. With replicates
  on either side, Fisher's exact test (two-sided) compares the pass and fail counts of the
  two sides, and Holm's correction adjusts the p-values over the compared entries with
  replicates (the run's questions x model pairs) whose counts could be significant at all:
  an entry whose margins allow no p-value below :data:`ALPHA` (every replicate passed on
  both sides, or one failure in all) can never be significant and takes no share of the
  correction (Tarone's refinement for discrete tests). Worse with an adjusted p below
  :data:`ALPHA` is a **regression**; worse with a p below :data:`ALPHA` that the correction
  does not keep below it is a **likely regression**; better with an adjusted p below
  :data:`ALPHA` is an **improvement**; any other change of the counts is **noise**; equal
  pass rates are **unchanged**.

A change of verdict (or of pass counts) is **judge-side** when both sides judged the same
answers (their answer hashes are equal, e.g. answers replayed from the store) and
**answer-side** when the answers differ; unknown when a side has no answer hashes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from pytest_karenina.plugin.collect.fingerprint import changed_parts
from pytest_karenina.plugin.gates.baseline import BaselineEntry, Key
from pytest_karenina.plugin.gates.baseline_pairs import Pairing
from pytest_karenina.results.statistics import fisher_exact, fisher_floor, holm

ALPHA = 0.05
"""The level of the exact test, after Holm's correction for a regression."""
DECIDED = ("pass", "fail")


class Kind(StrEnum):
    REGRESSION = "regression"
    LIKELY = "likely regression"
    NOISE = "noise"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"
    NOT_COMPARABLE = "not comparable"
    ERROR = "error"
    NEW = "new"
    MISSING = "missing"


@dataclass
class Change:
    """One entry of the run (or a baseline entry it lacks) and its class."""

    kind: Kind
    label: str
    """``q1 [model]``, or ``q1 [new vs old]`` when the models differ."""
    before: BaselineEntry | None = None
    now: BaselineEntry | None = None
    pair: tuple[str, str] | None = None
    """``(run model, baseline model)``."""
    p: float | None = None
    """The exact test's p-value (with replicates)."""
    adjusted: float | None = None
    """``p`` after Holm's correction (None: not in the corrected family, as its counts can
    never be significant)."""
    changed: list[str] = field(default_factory=list)
    """The fingerprint's parts that changed (not comparable)."""
    reason: str | None = None
    """Why the item errored."""

    @property
    def moved(self) -> bool:
        """Whether the verdict or the pass counts changed."""
        before, now = self.before, self.now
        if before is None or now is None:
            return False
        return before.verdict != now.verdict or _rate(before) != _rate(now)

    @property
    def side(self) -> str | None:
        """``judge-side`` (the same answers judged anew), ``answer-side`` (new answers), or
        None (nothing moved, or a side without answer hashes)."""
        before, now = self.before, self.now
        if before is None or now is None or not before.answers or not now.answers:
            return None
        if not self.moved:
            return None
        return "judge-side" if before.answers == now.answers else "answer-side"

    def counts(self) -> str:
        """``pass -> fail``, or ``5/5 -> 1/5 passed`` with replicates."""
        before, now = self.before, self.now
        if before is None or now is None:
            return ""
        if self.p is None:
            return f"{before.verdict} -> {now.verdict}"
        (bp, bn), (np_, nn) = before.runs, now.runs
        return f"{bp}/{bn} -> {np_}/{nn} passed"

    def text(self) -> str:
        """What the terminal and the reports list: ``q2 [m]: 5/5 -> 0/5 passed (p=0.0079,
        Holm 0.032; answer-side)``."""
        kind = self.kind
        if kind is Kind.NEW and self.now is not None:
            return f"{self.label}: {self.now.verdict}"
        if kind is Kind.MISSING:
            return self.label
        if kind is Kind.ERROR:
            was = self.before.verdict if self.before is not None else "new"
            return f"{self.label}: {was} -> error" + (f": {self.reason}" if self.reason else "")
        notes = []
        if self.p is not None:
            holm = f"Holm {self.adjusted:.2g}" if self.adjusted is not None else "never significant"
            notes.append(f"p={self.p:.2g}, {holm}")
        if self.side is not None:
            notes.append(self.side)
        tail = f" ({'; '.join(notes)})" if notes else ""
        if kind is Kind.NOT_COMPARABLE:
            what = f"{', '.join(self.changed)} changed"
            return f"{self.label}: {what}" + (f"; {self.counts()}{tail}" if self.moved else "")
        return f"{self.label}: {self.counts()}{tail}"


def _rate(entry: BaselineEntry) -> tuple[int, int]:
    passed, judged = entry.runs
    return (passed, judged) if judged else (0, 0)


def _label(question: str, pair: tuple[str, str]) -> str:
    new, old = pair
    return f"{question} [{new}]" if new == old else f"{question} [{new} vs {old}]"


def classify(
    baseline: Mapping[Key, BaselineEntry],
    current: Mapping[Key, BaselineEntry],
    pairing: Pairing,
    kept: Collection[Key] = (),
    why: Mapping[Key, str] | None = None,
    alpha: float = ALPHA,
) -> list[Change]:
    """Every entry of ``current`` and every unmatched entry of ``baseline`` with its class;
    ``kept``: baseline entries of questions not run (neither missing nor compared);
    ``why``: the reason of each errored entry."""
    changes: list[Change] = []
    matched: set[Key] = set()
    tested: list[Change] = []
    for key, now in sorted(current.items()):
        question, model = key
        old = pairing.of(model)
        before = baseline.get((question, old)) if old is not None else None
        pair = (model, old if old is not None else model)
        change = Change(Kind.UNCHANGED, _label(question, pair), before, now, pair)
        changes.append(change)
        if before is not None:
            matched.add(before.key)
        if now.verdict == "error":
            change.kind, change.reason = Kind.ERROR, (why or {}).get(key)
            continue
        if before is None:
            change.kind = Kind.NEW
            continue
        if before.fingerprint is not None and now.fingerprint is not None:
            change.changed = changed_parts(before.fingerprint, now.fingerprint)
        if change.changed:
            change.kind = Kind.NOT_COMPARABLE
            continue
        if before.verdict not in DECIDED or now.verdict not in DECIDED:
            if now.verdict == "pass" and before.verdict != "pass":
                change.kind = Kind.IMPROVEMENT
            continue
        (bp, bn), (np_, nn) = before.runs, now.runs
        if bn <= 1 and nn <= 1:
            if before.verdict != now.verdict:
                change.kind = Kind.REGRESSION if before.verdict == "pass" else Kind.IMPROVEMENT
            continue
        change.p = fisher_exact(bp, bn - bp, np_, nn - np_)
        if fisher_floor(bn, nn, bp + np_) < alpha:
            tested.append(change)
        else:
            change.kind = Kind.UNCHANGED if bp * nn == np_ * bn else Kind.NOISE
    adjusted = holm([change.p if change.p is not None else 1.0 for change in tested])
    for change, value in zip(tested, adjusted, strict=True):
        change.adjusted = value
        change.kind = _graded(change, alpha)
    kept = set(kept)
    for key, entry in sorted(baseline.items()):
        if key not in matched and key not in kept:
            changes.append(Change(Kind.MISSING, entry.label(), before=entry))
    return changes


def _graded(change: Change, alpha: float) -> Kind:
    """The class of a change with replicates, from its p-values."""
    assert change.before is not None and change.now is not None
    (bp, bn), (np_, nn) = change.before.runs, change.now.runs
    p = change.p if change.p is not None else 1.0
    adjusted = change.adjusted if change.adjusted is not None else 1.0
    difference = np_ * bn - bp * nn  # the sign of now's pass rate minus the baseline's
    if difference == 0:
        return Kind.UNCHANGED
    if difference < 0:
        if adjusted < alpha:
            return Kind.REGRESSION
        return Kind.LIKELY if p < alpha else Kind.NOISE
    return Kind.IMPROVEMENT if adjusted < alpha else Kind.NOISE
