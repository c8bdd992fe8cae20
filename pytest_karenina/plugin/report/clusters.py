"""Failure clusters: a run's failed and errored items grouped by what went wrong, without an LLM.

An item falls in one cluster, keyed by its outcome and what decided it:

* a template failure with a deciding field (the first field that failed, or differs from its
  ground truth under a template's own ``verify()``): the field, its primitive and the pattern
  of the expected/parsed pair (:func:`pair_pattern`: case, whitespace, punctuation, nothing
  extracted...);
* a rubric failure: its first failing trait;
* any other outcome (abstained, insufficient, each error kind): the outcome and, for a
  template failure without a deciding field, the stage that decided it.

A cluster of a primitive that normalizes text (``normalize``) offers a fix only when it is
checkable: the primitive is rebuilt from its stored form with one more normalizer (or, when
every item failed on one and the same pair whose values differ only in case, spacing or
punctuation, a :class:`~pytest_karenina.templates.SynonymMap` of that pair) and re-run on the
recorded values; the count that would pass is what it says.
"""

from __future__ import annotations

import itertools
import json
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.templates.normalizers import NORMALIZER_NAMES, apply_normalizers
from pytest_karenina.templates.primitives.base import primitive_from_dict

MAX_CHECKED = 2000
"""Characters of a recorded value kept for re-running a primitive (longer: no suggestion)."""
_SQUASH = str.maketrans("", "", string.punctuation + string.whitespace)
SAME_WORDS = frozenset({
    "surrounding whitespace differs", "case differs", "whitespace differs", "punctuation differs",
})  # fmt: skip
"""Patterns of a pair whose values are the same words written differently: only those may be
offered a synonym (a different value is a wrong answer, not a spelling)."""


@dataclass(frozen=True)
class FieldMiss:
    """The deciding field of a failed template verdict, as recorded."""

    field: str
    primitive: str
    """The primitive's class name, or ``verify()`` for a template's own method."""
    expected: Any
    parsed: Any
    spec: Mapping[str, Any] | None = None
    """The primitive's stored form when it normalizes text (None otherwise)."""


@dataclass(frozen=True)
class Failure:
    """What a cluster knows of one failed or errored item."""

    nodeid: str
    outcome: str
    model: str
    stage: str = ""
    miss: FieldMiss | None = None
    trait: str | None = None
    """The first failing gated rubric trait (rubric failures)."""

    @property
    def key(self) -> tuple[str, ...]:
        if self.miss is not None:
            spec = json.dumps(self.miss.spec, sort_keys=True, default=str)
            pattern = pair_pattern(self.miss.expected, self.miss.parsed)
            return (self.outcome, self.miss.field, self.miss.primitive, pattern, spec)
        if self.trait is not None:
            return (self.outcome, "trait", self.trait)
        return (self.outcome, "stage", self.stage)


def pair_pattern(expected: Any, parsed: Any) -> str:
    """How a parsed value differs from the expected one, in words (a cluster's pattern)."""
    if parsed is None:
        return "nothing extracted"
    if isinstance(expected, str) and isinstance(parsed, str):
        want, got = expected.strip(), parsed.strip()
        if want == got:
            return "surrounding whitespace differs"
        if want.lower() == got.lower():
            return "case differs"
        if "".join(want.lower().split()) == "".join(got.lower().split()):
            return "whitespace differs"
        if want.lower().translate(_SQUASH) == got.lower().translate(_SQUASH):
            return "punctuation differs"
        if want.lower() in got.lower():
            return "the answer says more"
        if got.lower() in want.lower():
            return "the answer says less"
        return "different text"
    if isinstance(expected, bool) or isinstance(parsed, bool):
        return "different truth value"
    if isinstance(expected, int | float) and isinstance(parsed, int | float):
        return "different number"
    if isinstance(expected, list) and isinstance(parsed, list):
        return "different items"
    return f"{type(expected).__name__} vs {type(parsed).__name__}"


def deciding_row(summary: ResultSummary) -> dict[str, Any] | None:
    """The field row that decided a failed template verdict: the first field that failed,
    or that differs from its ground truth under the template's own ``verify()`` (the export's
    item records keep it, so a merged run clusters as the run did)."""
    if summary.category is Outcome.PASS:
        return None
    for row in summary.fields:
        judged = row.get("passed") is False
        differs = row.get("passed") is None and row.get("differs") is True and "expected" in row
        if judged or differs:
            return row
    return None


def _miss(summary: ResultSummary) -> FieldMiss | None:
    row = deciding_row(summary)
    if row is None:
        return None
    spec = row.get("spec") if isinstance(row.get("spec"), dict) else None
    return FieldMiss(
        field=str(row.get("field")),
        primitive=str(row.get("primitive") or "verify()"),
        expected=row.get("expected"),
        parsed=row.get("parsed"),
        spec=spec,
    )


def failure_of(payload: ItemPayload) -> Failure | None:
    """What a cluster keeps of ``payload`` (None for a pass or no verdict)."""
    outcome = payload.category
    if outcome in (Outcome.PASS, Outcome.NO_VERDICT):
        return None
    failing = [s for s in payload.summaries if s.category is not Outcome.PASS]
    first = failing[0] if failing else None
    miss = _miss(first) if first is not None and outcome is Outcome.VERIFY_FAIL else None
    trait = None
    if first is not None and outcome is Outcome.RUBRIC_FAIL:
        trait = next((c.name for c in first.rubric if c.gated and c.passed is False), None)
    return Failure(
        nodeid=payload.nodeid,
        outcome=outcome.value,
        model=payload.answering_model or "?",
        stage=first.deciding_stage if first is not None else "",
        miss=miss,
        trait=trait,
    )


@dataclass(frozen=True)
class Suggestion:
    """A fix re-run on a cluster's recorded values: what it adds and how many would pass."""

    change: str
    passing: int


@dataclass
class Cluster:
    """Failed items with one key, in node id order."""

    failures: list[Failure]
    suggestion: Suggestion | None = None
    models: Counter[str] = field(default_factory=Counter)

    @property
    def size(self) -> int:
        return len(self.failures)

    @property
    def nodeids(self) -> list[str]:
        return [failure.nodeid for failure in self.failures]


def _checked(value: Any) -> bool:
    return len(json.dumps(value, default=str)) <= MAX_CHECKED


def _passing(spec: Mapping[str, Any], normalize: list[Any], misses: Sequence[FieldMiss]) -> int:
    try:
        primitive = primitive_from_dict({**spec, "normalize": normalize})
    except (ValueError, TypeError):
        return 0
    count = 0
    for miss in misses:
        try:
            count += bool(primitive.check(miss.parsed, miss.expected))
        except Exception:  # a value this primitive cannot take does not pass
            continue
    return count


def suggest(misses: Sequence[FieldMiss]) -> Suggestion | None:
    """The checkable fix of a field cluster (None when no candidate passes any item):
    one normalizer more (two when one alone passes none), else a synonym of the one pair
    every item failed on."""
    spec = misses[0].spec if misses else None
    if spec is None or not all(_checked(m.expected) and _checked(m.parsed) for m in misses):
        return None
    normalize = list(spec.get("normalize") or [])
    unused = [name for name in NORMALIZER_NAMES if name not in normalize]
    for size in (1, 2):
        tried = [
            (names, _passing(spec, [*normalize, *names], misses))
            for names in itertools.combinations(unused, size)
        ]
        names, passing = max(tried, key=lambda found: found[1], default=((), 0))
        if passing:
            listed = " + ".join(repr(name) for name in names)
            noun = "normalizer" if size == 1 else "normalizers"
            return Suggestion(f"the {noun} {listed}", passing)
    pairs = {(json.dumps(m.expected), json.dumps(m.parsed)) for m in misses}
    first = misses[0]
    if len(pairs) != 1 or not isinstance(first.parsed, str) or not isinstance(first.expected, str):
        return None
    if pair_pattern(first.expected, first.parsed) not in SAME_WORDS:
        return None  # a synonym would only accept a wrong answer
    got = apply_normalizers(normalize, first.parsed)
    want = apply_normalizers(normalize, first.expected)
    passing = _passing(spec, [*normalize, {"mapping": {got: want}}], misses)
    if not passing:
        return None
    return Suggestion(f"a SynonymMap {{{got!r}: {want!r}}}", passing)


def cluster(failures: Sequence[Failure]) -> list[Cluster]:
    """``failures`` grouped by :attr:`Failure.key`: the largest cluster first, then by key;
    items in node id order (the same clusters whatever order the items reported in)."""
    grouped: dict[tuple[str, ...], list[Failure]] = {}
    for failure in sorted(failures, key=lambda found: found.nodeid):
        grouped.setdefault(failure.key, []).append(failure)
    found = []
    for _, members in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        misses = [m.miss for m in members if m.miss is not None]
        found.append(
            Cluster(
                members,
                suggest(misses) if misses else None,
                Counter(member.model for member in members),
            )
        )
    return found


@dataclass
class ClusterTally:
    """A run's failures as they report (:meth:`add`), and their clusters."""

    failures: list[Failure] = field(default_factory=list)
    models: set[str] = field(default_factory=set)
    """Every answering model that reported an item (a cluster names its models when the
    run has several)."""

    _made: tuple[int, list[Cluster]] | None = field(default=None, repr=False)

    def add(self, payload: ItemPayload) -> None:
        self.models.add(payload.answering_model or "?")
        found = failure_of(payload)
        if found is not None:
            self.failures.append(found)

    def clusters(self) -> list[Cluster]:
        """The clusters of the failures so far (made once for the terminal, the report and the
        job summary: a suggestion re-runs primitives)."""
        if self._made is None or self._made[0] != len(self.failures):
            self._made = (len(self.failures), cluster(self.failures))
        return self._made[1]
