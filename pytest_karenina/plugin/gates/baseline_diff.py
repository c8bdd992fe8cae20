"""A run against its baseline: regressions, score drops, fixes, new and missing questions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from pytest_karenina.plugin.gates.baseline import BaselineEntry, Key

LISTED = 10
"""How many questions of each kind the terminal lists by name."""
_EPSILON = 1e-9


@dataclass
class BaselineDiff:
    """What changed between a baseline and a run, question by question (``q [model]: why``)."""

    name: str
    """The baseline's file name."""
    tolerance: float
    regressions: list[str] = field(default_factory=list)
    """Passed in the baseline, fails now: the model's answers got worse."""
    errors: list[str] = field(default_factory=list)
    """Errored now, whatever the baseline said: nothing was measured (a broken benchmark,
    e.g. template code that raised, or broken infrastructure), so not a regression of the
    model, but the gate fails: an error is never a pass."""
    score_drops: list[str] = field(default_factory=list)
    """A granular or rubric score lower by more than the tolerance."""
    fixed: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    compared: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    """Verdict -> how many questions ``--karenina-changed-since`` left out keep it."""

    @property
    def passed(self) -> bool:
        """The regression-only gate: nothing regressed, no score dropped, nothing errored."""
        return not (self.regressions or self.score_drops or self.errors)

    def describe(self) -> str:
        """``2 regressions, 1 score drops, 1 fixed, 0 new, 3 missing (40 compared)``, with
        ``, 1 errors`` after the score drops when items errored."""
        errors = f", {len(self.errors)} errors" if self.errors else ""
        return (
            f"{len(self.regressions)} regressions, {len(self.score_drops)} score drops{errors}, "
            f"{len(self.fixed)} fixed, {len(self.new)} new, {len(self.missing)} missing "
            f"({self.compared} compared)"
        )

    def lines(self) -> list[str]:
        """The terminal summary's baseline section."""
        verdict = "passed" if self.passed else "FAILED"
        lines = [f"karenina baseline {self.name}: {self.describe()}: gate {verdict}"]
        if self.kept:
            counts = ", ".join(f"{name} {n}" for name, n in sorted(self.kept.items()))
            lines.append(f"  unchanged questions keep their baseline verdicts: {counts}")
        for title, found in (
            ("regression", self.regressions), ("score drop", self.score_drops),
            ("error", self.errors), ("fixed", self.fixed), ("new", self.new),
            ("missing", self.missing),
        ):  # fmt: skip
            lines += [f"  {title}: {text}" for text in found[:LISTED]]
            if len(found) > LISTED:
                lines.append(f"  ... and {len(found) - LISTED} more {title} questions")
        return lines

    def suite_properties(self) -> list[tuple[str, str]]:
        return [
            ("karenina.baseline", self.name),
            ("karenina.baseline_gate", "passed" if self.passed else "failed"),
            ("karenina.baseline_regressions", str(len(self.regressions) + len(self.score_drops))),
            ("karenina.baseline_errors", str(len(self.errors))),
            ("karenina.baseline_fixed", str(len(self.fixed))),
            ("karenina.baseline_new", str(len(self.new))),
            ("karenina.baseline_missing", str(len(self.missing))),
        ]


def diff(
    name: str,
    baseline: Mapping[Key, BaselineEntry],
    current: Mapping[Key, BaselineEntry],
    tolerance: float,
    lower_is_better: Collection[str] = (),
    kept: Mapping[Key, BaselineEntry] | None = None,
    why: Mapping[Key, str] | None = None,
) -> BaselineDiff:
    """Compare ``current`` with ``baseline``; rubric traits named in ``lower_is_better``
    regress when they rise; ``kept``: entries of questions not run because they did not
    change (neither missing nor compared); ``why``: the reason of each errored entry."""
    found = BaselineDiff(name, tolerance)
    for key, now in sorted(current.items()):
        before = baseline.get(key)
        if now.verdict == "error":
            found.compared += before is not None
            reason = (why or {}).get(key)
            was = before.verdict if before is not None else "new"
            found.errors.append(
                f"{now.label()}: {was} -> error" + (f": {reason}" if reason else "")
            )
            continue
        if before is None:
            found.new.append(f"{now.label()}: {now.verdict}")
            continue
        found.compared += 1
        if before.verdict == "pass" and now.verdict != "pass":
            found.regressions.append(f"{now.label()}: pass -> {now.verdict}")
            continue
        if before.verdict != "pass" and now.verdict == "pass":
            found.fixed.append(f"{now.label()}: {before.verdict} -> pass")
        drops = _score_drops(before, now, tolerance, lower_is_better)
        if drops:
            found.score_drops.append(f"{now.label()}: {'; '.join(drops)}")
    kept = kept or {}
    found.missing = [
        entry.label()
        for key, entry in sorted(baseline.items())
        if key not in current and key not in kept
    ]
    found.kept = dict(Counter(entry.verdict for entry in kept.values()))
    return found


def _score_drops(
    before: BaselineEntry, now: BaselineEntry, tolerance: float, lower_is_better: Collection[str]
) -> list[str]:
    drops = []
    if before.score is not None and now.score is not None:
        if before.score - now.score > tolerance + _EPSILON:
            drops.append(f"granular score {before.score:g} -> {now.score:g}")
    for name, old in before.rubric.items():
        new = now.rubric.get(name)
        if new is None:
            continue
        worse = new - old if name in lower_is_better else old - new
        if worse > tolerance + _EPSILON:
            drops.append(f"{name} {old:g} -> {new:g}")
    return drops
