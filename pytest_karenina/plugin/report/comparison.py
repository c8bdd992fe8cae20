"""Paired comparison of answering models on the same questions.

Every answering model answered the same questions, so their verdicts pair up by question: a
question counts as passed by a model when all its items (its replicates) passed. For each
pair of models the report gives both pass rates, the difference, the discordant questions
(only one of the two passed) and the exact McNemar p-value, which uses only those. With a
reference model (``--karenina-compare-to``) only the pairs with it are reported, and the
questions it passes that another model fails (regressions) come first. Questions pair up by
id and are named as their items are (``mq001``, not ``urn:karenina:bench:mq001``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from itertools import combinations

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.statistics import mcnemar_exact


@dataclass(frozen=True)
class PairComparison:
    first: str
    second: str
    first_rate: float
    second_rate: float
    only_first: list[str]
    only_second: list[str]
    p_value: float

    def describe(self) -> str:
        points = (self.first_rate - self.second_rate) * 100
        return (
            f"{self.first} vs {self.second}: {self.first_rate:.1%} vs {self.second_rate:.1%} "
            f"({points:+.1f} points); only {self.first} passes {len(self.only_first)}, "
            f"only {self.second} passes {len(self.only_second)}; McNemar exact p={self.p_value:.3g}"
        )


@dataclass(frozen=True)
class ModelComparison:
    """The verdict matrix (question -> model -> passed) over the questions every model ran."""

    models: list[str]
    matrix: dict[str, dict[str, bool]]
    pairs: list[PairComparison]
    reference: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    """Question id -> the name the reports show (:func:`question_names`)."""

    def name(self, question: str) -> str:
        return self.names.get(question, question)

    @property
    def disagreements(self) -> list[str]:
        """Questions the models do not all pass or all fail; regressions first."""
        split = [q for q, row in self.matrix.items() if len(set(row.values())) > 1]
        regressed = set(self.regressions)
        return sorted(split, key=lambda question: question not in regressed)

    @property
    def regressions(self) -> list[str]:
        """Questions the reference model passes and some other model fails."""
        if self.reference is None:
            return []
        return [
            question for question, row in self.matrix.items()
            if row[self.reference] and not all(row.values())
        ]  # fmt: skip

    def lines(self) -> list[str]:
        """The terminal summary's lines."""
        found = [f"models compared on {len(self.matrix)} questions (paired by question):"]
        found += [f"  {pair.describe()}" for pair in self.pairs]
        if self.regressions:
            regressed = ", ".join(map(self.name, self.regressions))
            found.append(f"  regressions against {self.reference}: {regressed}")
        for question in self.disagreements:
            row = self.matrix[question]
            verdicts = ", ".join(f"{m} {'pass' if row[m] else 'FAIL'}" for m in self.models)
            found.append(f"  {self.name(question)}: {verdicts}")
        return found


def question_names(payloads: Iterable[ItemPayload]) -> dict[str, str]:
    """Question id -> its item's name (``mq001`` of ``bench.jsonld::mq001[gpt-4.1]``), with
    the file (``bench.jsonld::mq001``) where two questions' items share a name."""
    found: dict[str, str] = {}
    for payload in payloads:
        path, _, rest = payload.nodeid.partition("::")
        name = rest.partition("[")[0]
        if payload.question_id is not None and name:
            found.setdefault(payload.question_id, f"{path}::{name}")
    short = Counter(full.partition("::")[2] for full in found.values())
    return {
        question: full if short[full.partition("::")[2]] > 1 else full.partition("::")[2]
        for question, full in found.items()
    }


def compare_models(
    payloads: Iterable[ItemPayload], reference: str | None = None
) -> ModelComparison | None:
    """The comparison of the run's answering models (None with fewer than two, or without
    a question they all answered)."""
    payloads = list(payloads)
    passed: dict[str, dict[str, bool]] = {}
    for payload in payloads:
        if payload.question_id is None or payload.category is Outcome.NO_VERDICT:
            continue
        row = passed.setdefault(payload.question_id, {})
        model = payload.answering_model or "?"
        row[model] = row.get(model, True) and payload.category is Outcome.PASS
    models = sorted({model for row in passed.values() for model in row})
    if len(models) < 2:
        return None
    matrix = {q: row for q, row in passed.items() if len(row) == len(models)}
    if not matrix:  # no question every model answered: nothing pairs up
        return None
    if reference is not None and reference in models:
        pairs = [(reference, other) for other in models if other != reference]
        models = [reference, *(m for m in models if m != reference)]
    else:
        reference = None
        pairs = list(combinations(models, 2))
    compared = [_pair(a, b, matrix) for a, b in pairs]
    return ModelComparison(models, matrix, compared, reference, question_names(payloads))


def _pair(first: str, second: str, matrix: dict[str, dict[str, bool]]) -> PairComparison:
    only_first = [q for q, row in matrix.items() if row[first] and not row[second]]
    only_second = [q for q, row in matrix.items() if row[second] and not row[first]]
    total = len(matrix) or 1
    return PairComparison(
        first, second,
        sum(row[first] for row in matrix.values()) / total,
        sum(row[second] for row in matrix.values()) / total,
        only_first, only_second, mcnemar_exact(len(only_first), len(only_second)),
    )  # fmt: skip


def comparison_html(payloads: Iterable[ItemPayload], reference: str | None = None) -> str:
    """The HTML summary's comparison: each pair, then the verdict matrix folded (a
    ``<details>`` that says how many questions split the models), disagreements first
    (escaped; empty with fewer than two models)."""
    found = compare_models(payloads, reference)
    if found is None:
        return ""
    pairs = "".join(f"<li>{escape(pair.describe())}</li>" for pair in found.pairs)
    head = "".join(f"<th>{escape(model)}</th>" for model in found.models)
    order = found.disagreements + [q for q in found.matrix if q not in found.disagreements]
    fail = '<strong class="karenina-fail">FAIL</strong>'

    def cells(question: str) -> str:
        row = found.matrix[question]
        return "".join(f"<td>{'pass' if row[model] else fail}</td>" for model in found.models)

    rows = "".join(f"<tr><td>{escape(found.name(q))}</td>{cells(q)}</tr>" for q in order)
    split = len(found.disagreements)
    return (
        f'<ul class="karenina-pairs">{pairs}</ul><details class="karenina-matrix"><summary>'
        f"verdict matrix: {len(found.matrix)} questions, the models disagree on {split}"
        f'</summary><table class="karenina-comparison"><tr><th>question</th>{head}</tr>{rows}'
        "</table></details>"
    )
