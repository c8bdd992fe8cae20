"""The charts of the HTML report's summary, drawn from the run summary as inline SVG
(:mod:`.svg`): pass rate per answering model with its 95% interval, outcome categories per
model, the granular scores' and each rubric trait's distribution, cost per model and per
pipeline stage, and the paired comparison of the models as a matrix.

Each chart is a ``<figure>`` whose SVG names itself (``<title>``, ``<desc>``) and whose numbers
are also a table only screen readers see; none needs a script. A chart without data (no
price table: no cost; one model: no comparison) is left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report import svg
from pytest_karenina.plugin.report.comparison import compare_models
from pytest_karenina.plugin.report.pass_rates import pass_rate, pass_rates_by_model
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.report.tallies import TraitStats
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.statistics import mcnemar_exact

ALL = "all models"
MAX_TRAITS = 12
"""Rubric traits drawn at most (the rest are named in the caption)."""
FILLS: Mapping[str, str] = {
    "pass": "#2e7d32",
    "verify_fail": "#c62828",
    "rubric_fail": "#ef6c00",
    "abstained": "#8e24aa",
    "insufficient": "#ad1457",
    "scenario_fail": "#d84315",
    "no_verdict": "#9e9e9e",
}
ERROR_FILLS = ("#37474f", "#6d4c41", "#546e7a", "#795548", "#263238", "#8d6e63")
PERCENT_TICKS = [(value / 4, f"{value * 25}%") for value in range(5)]
_SCORE_RANGE = re.compile(r"score (-?\d+)-(-?\d+)")


def _order(category: str) -> tuple[int, str]:
    """pass first, then the failures, then the errors (alphabetical within)."""
    if category == Outcome.PASS:
        return 0, category
    return (2 if category.startswith("error:") else 1), category


def category_fills(categories: Iterable[str]) -> list[tuple[str, str]]:
    """(category, fill) in drawing order; errors take the greys and browns in turn."""
    ordered = sorted(set(categories), key=_order)
    errors = [c for c in ordered if c.startswith("error:")]
    found = []
    for category in ordered:
        if category in errors:
            fill = ERROR_FILLS[errors.index(category) % len(ERROR_FILLS)]
        else:
            fill = FILLS.get(category, "#9e9e9e")
        found.append((category, fill))
    return found


def pass_rate_chart(payloads: list[ItemPayload]) -> str:
    rates = dict(pass_rates_by_model(payloads))
    if len(rates) > 1 and (overall := pass_rate(payloads)) is not None:
        rates = {ALL: overall, **rates}
    if not rates:
        return ""
    bars = [
        svg.Bar(
            model, rate.rate, rate.low, rate.high, f"{rate.rate:.1%} ({rate.passed}/{rate.total})"
        )
        for model, rate in rates.items()
    ]
    chart = svg.interval_bars(
        "karenina-chart-pass-rate", "Pass rate per answering model",
        "One horizontal bar per answering model, from 0 to 100%: its pass rate; the whiskers "
        "span its 95% confidence interval.", bars, 1.0, PERCENT_TICKS,
    )  # fmt: skip
    rows = [
        (model, f"{r.rate:.1%}", f"{r.low:.1%}", f"{r.high:.1%}", f"{r.passed}/{r.total}")
        for model, r in rates.items()
    ]
    table = svg.data_table(
        "Pass rate per answering model",
        ("answering model", "pass rate", "95% CI low", "95% CI high", "passed"), rows,
    )  # fmt: skip
    return svg.figure(chart, "Pass rate per model, whiskers: 95% confidence interval", table)


def outcomes_chart(payloads: list[ItemPayload], skipped: int) -> str:
    by_model: dict[str, Counter[str]] = {}
    for payload in payloads:
        by_model.setdefault(payload.answering_model or "?", Counter())[payload.category] += 1
    if not by_model:
        return ""
    rows = dict(sorted(by_model.items()))
    if len(rows) > 1:
        rows = {ALL: sum(rows.values(), Counter()), **rows}
    fills = category_fills(c for counts in rows.values() for c in counts)
    drawn = [
        (model, [svg.Segment(c, counts[c], fill) for c, fill in fills if counts[c]])
        for model, counts in rows.items()
    ]
    chart = svg.stacked_bars(
        "karenina-chart-outcomes", "Outcome categories per answering model",
        "One bar per answering model, split into its items' outcome categories (pass, the "
        "kinds of failure, the kinds of error) in proportion to their counts.", drawn, fills,
    )  # fmt: skip
    head = ("answering model", *(c for c, _ in fills))
    table = svg.data_table(
        "Outcome categories per answering model", head,
        [(model, *(counts[c] for c, _ in fills)) for model, counts in rows.items()],
    )  # fmt: skip
    caption = "Outcome categories per model"
    if skipped:
        caption += f" ({skipped} skipped items not drawn)"
    return svg.figure(chart, caption, table)


def score_chart(payloads: list[ItemPayload]) -> str:
    scores = [p.score for p in payloads if p.score is not None]
    if not scores:
        return ""
    counts = [0] * 10
    for score in scores:
        counts[min(max(int(score * 10), 0), 9)] += 1
    labels = [f"{n / 10:.1f}-{(n + 1) / 10:.1f}" for n in range(10)]
    chart = svg.histogram(
        "karenina-chart-scores", "Granular scores",
        "How many items scored in each tenth of the granular score, from 0 on the left to 1 on "
        "the right (an item's score is its lowest result's).", counts, labels,
    )  # fmt: skip
    mean = sum(scores) / len(scores)
    table = svg.data_table(
        "Granular scores", ("score", "items"), list(zip(labels, counts, strict=True))
    )
    caption = f"Granular scores of {len(scores)} items (mean {mean:.2f})"
    return svg.figure(chart, caption, table)


def trait_bins(kind: str, stats: TraitStats) -> tuple[list[str], list[int]]:
    """A trait's bins (labels, counts): its labels for a literal trait, false/true for a
    boolean one, each whole score for a score trait (over its declared range), else ten
    equal bins between the lowest and highest value."""
    values = stats.values
    if stats.labels and not values:
        common = stats.labels.most_common(10)
        return [label for label, _ in common], [count for _, count in common]
    if "boolean" in kind or kind == "regex":
        return ["false", "true"], [sum(1 for v in values if not v), sum(1 for v in values if v)]
    declared = _SCORE_RANGE.search(kind)
    whole = all(v == int(v) for v in values)
    if values and whole:
        first, last = int(min(values)), int(max(values))
        if declared:
            first, last = min(first, int(declared[1])), max(last, int(declared[2]))
        if last - first <= 12:
            found = Counter(int(v) for v in values)
            whole_bins = range(first, last + 1)
            return [str(n) for n in whole_bins], [found[n] for n in whole_bins]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    width = (high - low) / 10 or 1.0
    counts = [0] * 10
    for value in values:
        counts[min(int((value - low) / width), 9)] += 1
    return [f"{low + width * n:.3g}" for n in range(10)], counts


def trait_charts(stats: Mapping[str, Mapping[str, TraitStats]]) -> list[str]:
    """One small histogram per rubric trait (or metric part), the models' values pooled."""
    pooled: dict[str, TraitStats] = {}
    for traits in stats.values():
        for name, found in traits.items():
            if not found.values and not found.labels:
                continue
            into = pooled.setdefault(name, TraitStats(found.kind))
            into.values += found.values
            into.labels.update(found.labels)
    figures = []
    for index, (name, found) in enumerate(list(pooled.items())[:MAX_TRAITS]):
        labels, counts = trait_bins(found.kind, found)
        chart = svg.histogram(
            f"karenina-chart-trait-{index}", f"Rubric trait {name} ({found.kind})",
            f"How many results gave the trait {name} each value, from the lowest value on the "
            "left to the highest on the right, all answering models together.", counts, labels,
            width=240,
        )  # fmt: skip
        table = svg.data_table(
            f"Rubric trait {name}", ("value", "results"), list(zip(labels, counts, strict=True))
        )
        caption = f"{name} ({found.kind}), {sum(counts)} results"
        figures.append(svg.figure(chart, caption, table).replace(
            'class="karenina-chart"', 'class="karenina-chart karenina-chart-small"', 1
        ))  # fmt: skip
    rest = list(pooled)[MAX_TRAITS:]
    if rest:
        figures.append(f'<p class="karenina-chart-more">Not drawn: {svg.esc(", ".join(rest))}</p>')
    return figures


def _usd(value: float) -> str:
    return f"${value:.4f}"


def cost_charts(payloads: list[ItemPayload], stages: Mapping[str, float]) -> list[str]:
    """Cost per answering model (answerer and judge stacked, to scale) and per stage."""
    by_model: dict[str, list[float]] = {}
    for payload in payloads:
        if payload.cost is not None:
            spent = by_model.setdefault(payload.answering_model or "?", [0.0, 0.0])
            spent[0] += payload.cost[0]
            spent[1] += payload.cost[1]
    figures = []
    if by_model and any(sum(spent) > 0 for spent in by_model.values()):
        parts = [("answerer", "#3949ab"), ("judge", "#90a4ae")]
        rows = [
            (
                model,
                [
                    svg.Segment(name, spent[i], fill, _usd(spent[i]))
                    for i, (name, fill) in enumerate(parts)
                ],
            )
            for model, spent in sorted(by_model.items())
        ]
        most = max(sum(spent) for spent in by_model.values())
        chart = svg.stacked_bars(
            "karenina-chart-cost-model", "Cost per answering model",
            "One bar per answering model, its length the US dollars its items cost, split into "
            "what the answering model and what the judges cost.", rows, parts, maximum=most,
        )  # fmt: skip
        table = svg.data_table(
            "Cost per answering model (USD)", ("answering model", "answerer", "judge", "total"),
            [(m, _usd(s[0]), _usd(s[1]), _usd(sum(s))) for m, s in sorted(by_model.items())],
        )  # fmt: skip
        figures.append(svg.figure(chart, "Cost per model (USD), answerer and judge", table))
    total = sum(stages.values())
    if total > 0:
        ordered = sorted(stages.items(), key=lambda pair: -pair[1])
        bars = [
            svg.Bar(stage, usd, note=f"{_usd(usd)} ({usd / total:.0%})", fill="#00838f")
            for stage, usd in ordered
        ]
        chart = svg.interval_bars(
            "karenina-chart-cost-stage", "Cost per pipeline stage",
            "One horizontal bar per pipeline stage that called a priced model, its length the "
            "US dollars that stage cost over the run, the most expensive first.",
            bars, ordered[0][1],
        )  # fmt: skip
        table = svg.data_table(
            "Cost per pipeline stage (USD)", ("stage", "cost", "share"),
            [(stage, _usd(usd), f"{usd / total:.1%}") for stage, usd in ordered],
        )  # fmt: skip
        figures.append(svg.figure(chart, f"Cost per stage (USD), {_usd(total)} in all", table))
    return figures


def comparison_chart(payloads: list[ItemPayload], reference: str | None) -> str:
    """The models against each other: a cell counts the questions its row's model passes
    and its column's fails; the diagonal, each model's pass rate on the paired questions."""
    found = compare_models(payloads, reference)
    if found is None:
        return ""
    models = found.models
    rows = found.matrix.values()
    wins = {
        (a, b): sum(1 for row in rows if row[a] and not row[b])
        for a in models for b in models if a != b
    }  # fmt: skip
    most = max(wins.values(), default=0) or 1
    questions = len(found.matrix)
    # McNemar's exact test sums binomial terms: once per pair (the comparison's own first).
    p_values = {frozenset((pair.first, pair.second)): pair.p_value for pair in found.pairs}
    for a, b in wins:
        if frozenset((a, b)) not in p_values:
            p_values[frozenset((a, b))] = mcnemar_exact(wins[a, b], wins[b, a])
    cells = []
    for a in models:
        line = []
        for b in models:
            if a == b:
                rate = sum(1 for row in rows if row[a]) / questions
                line.append(svg.Cell(f"{rate:.0%}", None, f"{a} passes {rate:.1%}"))
                continue
            p = p_values[frozenset((a, b))]
            tip = f"{a} passes and {b} fails {wins[a, b]} questions (McNemar exact p={p:.3g})"
            line.append(svg.Cell(str(wins[a, b]), wins[a, b] / most, tip))
        cells.append(line)
    chart = svg.matrix(
        "karenina-chart-comparison", "Paired comparison of the answering models",
        f"A grid of the models against each other over the {questions} questions they all "
        "answered: each cell counts the questions the row's model passes and the column's "
        "fails, darker for more; the diagonal gives each model's pass rate.",
        models, models, cells,
    )  # fmt: skip
    table = svg.data_table(
        "Questions the row's model passes and the column's fails", ("model", *models),
        [(a, *(c.text for c in line)) for a, line in zip(models, cells, strict=True)],
    )  # fmt: skip
    caption = f"Paired comparison on {questions} questions: row passes, column fails"
    return svg.figure(chart, caption, table)


def charts_html(summary: RunSummary) -> str:
    """The summary's charts in a ``<section>`` (empty when nothing was reported)."""
    payloads = list(summary.payloads.values())
    if not payloads:
        return ""
    figures = [
        pass_rate_chart(payloads),
        outcomes_chart(payloads, len(summary.skipped)),
        comparison_chart(payloads, summary.compare_to),
        score_chart(payloads),
        *cost_charts(payloads, summary.cost.stages),
        *trait_charts(summary.rubric_stats()),
    ]
    drawn = "".join(figures)
    return f'<section class="karenina-charts" aria-label="karenina charts">{drawn}</section>'
