"""A run against its baseline: the classes of change (:mod:`.baseline_classes`), score drops,
what was compared with what, and the lines, properties and lists the reports show."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from pytest_karenina.plugin.collect.fingerprint import PARTS
from pytest_karenina.plugin.gates.baseline import VERSION, BaselineEntry, Key
from pytest_karenina.plugin.gates.baseline_classes import ALPHA, Kind, classify
from pytest_karenina.plugin.gates.baseline_pairs import Pairing, pair_models
from pytest_karenina.plugin.options.ci_declare import BaselineFailOn
from pytest_karenina.plugin.report.statements import Line

LISTED = 10
"""How many questions of each kind the terminal lists by name."""
_EPSILON = 1e-9
UPDATE = "accept the new state with --karenina-baseline-update"


@dataclass
class BaselineDiff:
    """What changed between a baseline and a run, question by question (``q [model]: why``)."""

    name: str
    """The baseline's file name."""
    tolerance: float
    regressions: list[str] = field(default_factory=list)
    """Worse, beyond what the replicates vary by (without replicates: passed, fails now)."""
    likely: list[str] = field(default_factory=list)
    """Worse, significant before Holm's correction but not after it."""
    noise: list[str] = field(default_factory=list)
    """Pass counts that changed within what replicates vary by."""
    errors: list[str] = field(default_factory=list)
    """Errored now, whatever the baseline said: nothing was measured (a broken benchmark,
    e.g. template code that raised, or broken infrastructure), so not a regression of the
    model, but the gate fails: an error is never a pass."""
    score_drops: list[str] = field(default_factory=list)
    """A granular or rubric score lower by more than the tolerance."""
    improvements: list[str] = field(default_factory=list)
    not_comparable: list[str] = field(default_factory=list)
    """Measured differently (question, template, rubric, judge or prompts changed): never
    counted as a regression or a pass."""
    new: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    compared: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    """Verdict -> how many questions ``--karenina-changed-since`` left out keep it."""
    pairs: list[str] = field(default_factory=list)
    """``new vs baseline old: N questions compared, R regressions`` per model pair, when a
    model is compared with another one (or several pairs are)."""
    sides: Counter[str] = field(default_factory=Counter)
    """``judge-side`` / ``answer-side`` -> how many entries' verdicts changed that way."""
    accepted: set[Key] = field(default_factory=set)
    """The run's entries compared with the baseline and not counted against the run
    (unchanged, noise or improvement, no score drop): their failed items are known failures."""
    fail_on: BaselineFailOn = "regression"
    alpha: float = ALPHA
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Said loudly: most entries new or missing."""
    problem: str | None = None
    """Why the gate fails although nothing regressed: it compared nothing."""

    @property
    def passed(self) -> bool:
        """Nothing regressed (nor, with ``fail_on="likely"``, likely regressed), no score
        dropped, nothing errored, and something was compared."""
        likely = self.fail_on == "likely" and self.likely
        return not (self.regressions or self.score_drops or self.errors or likely or self.problem)

    @property
    def fixed(self) -> list[str]:
        """The improvements (their name before issue 26)."""
        return self.improvements

    def describe(self) -> str:
        """``2 regressions, 1 score drops, 1 improvements, 0 new, 3 missing (40 compared)``,
        with the likely regressions, noise, errors and entries not comparable when there
        are any."""
        counts = [(self.regressions, "regressions")]
        counts += [(self.likely, "likely regressions")] if self.likely else []
        counts += [(self.score_drops, "score drops")]
        counts += [(self.errors, "errors")] if self.errors else []
        counts += [(self.improvements, "improvements")]
        counts += [(self.noise, "noise")] if self.noise else []
        counts += [(self.not_comparable, "not comparable")] if self.not_comparable else []
        counts += [(self.new, "new"), (self.missing, "missing")]
        text = ", ".join(f"{len(found)} {what}" for found, what in counts)
        return f"{text} ({self.compared} compared)"

    def statements(self) -> list[Line]:
        """The terminal summary's baseline section (problems and warnings in red)."""
        verdict = "passed" if self.passed else "FAILED"
        found = [Line(f"karenina baseline {self.name}: {self.describe()}: gate {verdict}")]
        if self.problem:
            found.append(Line(f"  {self.problem}", red=True))
        found += [Line(f"  WARNING: {text}", red=True) for text in self.warnings]
        found += [Line(f"  note: {text}") for text in self.notes]
        found += [Line(f"  {text}") for text in self.pairs]
        if self.sides:
            found.append(Line(f"  verdict changes: {self.describe_sides()}"))
        if self.kept:
            counts = ", ".join(f"{name} {n}" for name, n in sorted(self.kept.items()))
            found.append(Line(f"  unchanged questions keep their baseline verdicts: {counts}"))
        for title, listed in self._listed():
            found += [Line(f"  {title}: {text}") for text in listed[:LISTED]]
            if len(listed) > LISTED:
                found.append(Line(f"  ... and {len(listed) - LISTED} more {title} questions"))
        return found

    def lines(self) -> list[str]:
        """:meth:`statements` as text."""
        return [line.text for line in self.statements()]

    def describe_sides(self) -> str:
        """``2 judge-side (same answer, new verdict), 1 answer-side (new answer)``."""
        return (
            f"{self.sides['judge-side']} judge-side (same answer, new verdict), "
            f"{self.sides['answer-side']} answer-side (new answer)"
        )

    def _listed(self) -> list[tuple[str, list[str]]]:
        return [
            ("regression", self.regressions), ("likely regression", self.likely),
            ("score drop", self.score_drops), ("error", self.errors),
            ("not comparable", self.not_comparable), ("improvement", self.improvements),
            ("noise", self.noise), ("new", self.new), ("missing", self.missing),
        ]  # fmt: skip

    def details(self) -> list[tuple[str, list[str]]]:
        """The lists the GitHub job summary and the HTML report show."""
        found = [
            (f"Regressions against {self.name}", self.regressions + self.score_drops),
            (f"Likely regressions (p < {self.alpha:g} before Holm's correction, not after)",
             self.likely),
            ("Errors (nothing measured: not a regression of the model)", self.errors),
            ("Not comparable (measured differently: not counted)", self.not_comparable),
            ("Improvements", self.improvements),
            ("Noise (within what the replicates vary by)", self.noise),
        ]  # fmt: skip
        extra = [
            *self.pairs,
            *([f"verdict changes: {self.describe_sides()}"] if self.sides else []),
        ]
        return [("Compared", extra), *found] if extra else found

    def suite_properties(self) -> list[tuple[str, str]]:
        found = [
            ("karenina.baseline", self.name),
            ("karenina.baseline_gate", "passed" if self.passed else "failed"),
            ("karenina.baseline_regressions", str(len(self.regressions) + len(self.score_drops))),
            ("karenina.baseline_likely_regressions", str(len(self.likely))),
            ("karenina.baseline_noise", str(len(self.noise))),
            ("karenina.baseline_errors", str(len(self.errors))),
            ("karenina.baseline_improvements", str(len(self.improvements))),
            ("karenina.baseline_not_comparable", str(len(self.not_comparable))),
            ("karenina.baseline_new", str(len(self.new))),
            ("karenina.baseline_missing", str(len(self.missing))),
            ("karenina.baseline_compared", str(self.compared)),
            ("karenina.baseline_fail_on", self.fail_on),
        ]
        found += [("karenina.baseline_pair", text) for text in self.pairs]
        found += [(f"karenina.baseline_{side.replace('-', '_')}", str(n))
                  for side, n in sorted(self.sides.items())]  # fmt: skip
        found += [("karenina.baseline_regression", text) for text in self.regressions[:LISTED]]
        found += [("karenina.baseline_likely_regression", text) for text in self.likely[:LISTED]]
        return found


_LISTS = {
    Kind.REGRESSION: "regressions", Kind.LIKELY: "likely", Kind.NOISE: "noise",
    Kind.IMPROVEMENT: "improvements", Kind.NOT_COMPARABLE: "not_comparable",
    Kind.ERROR: "errors", Kind.NEW: "new", Kind.MISSING: "missing",
}  # fmt: skip
_COMPARED = (Kind.REGRESSION, Kind.LIKELY, Kind.NOISE, Kind.IMPROVEMENT, Kind.UNCHANGED)


def diff(
    name: str,
    baseline: Mapping[Key, BaselineEntry],
    current: Mapping[Key, BaselineEntry],
    tolerance: float,
    lower_is_better: Collection[str] = (),
    kept: Mapping[Key, BaselineEntry] | None = None,
    why: Mapping[Key, str] | None = None,
    pairing: Pairing | None = None,
    fail_on: BaselineFailOn = "regression",
    version: int = VERSION,
) -> BaselineDiff:
    """Compare ``current`` with ``baseline``; rubric traits named in ``lower_is_better``
    regress when they rise; ``kept``: entries of questions not run because they did not
    change (neither missing nor compared); ``why``: the reason of each errored entry;
    ``pairing``: which run model is compared with which baseline model (by default, each
    with its own name, or the single models of both sides); ``version``: the baseline file's
    (a version 1 file has no fingerprints)."""
    if pairing is None:
        models = sorted({model for _, model in current})
        pairing = pair_models(models, {model for _, model in baseline})
    kept = kept or {}
    found = BaselineDiff(name, tolerance, fail_on=fail_on)
    changes = classify(baseline, current, pairing, kept, why, found.alpha)
    per_pair: dict[tuple[str, str], Counter[Kind]] = {}
    unknown = 0
    for change in changes:
        if change.kind in _LISTS:
            getattr(found, _LISTS[change.kind]).append(change.text())
        if change.side is not None:
            found.sides[change.side] += 1
        if change.pair is not None and change.before is not None:
            per_pair.setdefault(change.pair, Counter())[change.kind] += 1
        if change.before is not None and change.kind in (*_COMPARED, Kind.ERROR):
            found.compared += 1
            now_known = change.now is not None and change.now.fingerprint is not None
            unknown += change.before.fingerprint is None or not now_known
        if change.kind in _COMPARED and change.kind is not Kind.REGRESSION:
            assert change.before is not None and change.now is not None
            drops = _score_drops(change.before, change.now, tolerance, lower_is_better)
            if drops:
                found.score_drops.append(f"{change.label}: {'; '.join(drops)}")
            elif change.kind is not Kind.LIKELY:
                found.accepted.add(change.now.key)
    found.kept = dict(Counter(entry.verdict for entry in kept.values()))
    if pairing.swapped or len(per_pair) > 1:
        found.pairs = [_pair_line(pair, kinds) for pair, kinds in sorted(per_pair.items())]
    if version < 2:
        found.notes.append(
            f"{name} is a version {version} baseline without fingerprints: every entry counts "
            "as comparable (--karenina-baseline-update records them)"
        )
    elif unknown:
        found.notes.append(f"{unknown} entries without a fingerprint count as comparable")
    parts = {part for change in changes for part in change.changed}
    _check_coverage(found, current, pairing, [part for part in PARTS if part in parts])
    return found


def _pair_line(pair: tuple[str, str], kinds: Counter[Kind]) -> str:
    compared = sum(kinds[kind] for kind in (*_COMPARED, Kind.ERROR))
    text = f"{pair[0]} vs baseline {pair[1]}: {compared} questions compared, "
    text += f"{kinds[Kind.REGRESSION]} regressions"
    if kinds[Kind.LIKELY]:
        text += f", {kinds[Kind.LIKELY]} likely regressions"
    if kinds[Kind.NOT_COMPARABLE]:
        text += f", {kinds[Kind.NOT_COMPARABLE]} not comparable"
    return text


def _check_coverage(
    found: BaselineDiff, current: Mapping[Key, BaselineEntry], pairing: Pairing, parts: list[str]
) -> None:
    """A gate that compared nothing fails; a run mostly new or missing says so loudly;
    ``parts``: the parts of the fingerprints that changed."""
    hint = pairing.hint()
    new, missing = len(found.new), len(found.missing)
    if found.compared == 0 and current and not found.kept:
        if found.not_comparable and not (new or missing):
            what = (
                f"all {len(found.not_comparable)} entries are measured differently now "
                f"({', '.join(parts)} changed)"
            )
        else:
            what = f"{new} new, {missing} missing, {len(found.not_comparable)} not comparable"
        found.problem = (
            f"nothing compared with {found.name}: {what}"
            + (f"; {hint}" if hint else "")
            + f"; or {UPDATE}"
        )
        return
    total = found.compared + len(found.not_comparable) + new + missing
    if total and (new + missing) * 2 > total:
        found.warnings.append(
            f"{new} new and {missing} missing of {total} entries: most of this run was not "
            f"compared with {found.name}" + (f" ({hint})" if hint else "")
        )


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
