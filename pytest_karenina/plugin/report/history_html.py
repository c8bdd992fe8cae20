"""Run history in the pytest-html report: a History column (each item's last runs as a
sparkline with ``failing since <commit> (3 runs)`` and ``flaky in 4 of the last 20 runs``
under it) and, in the summary, each model's pass rate, cost and duration across runs as
small inline SVG charts, each captioned in words with its numbers in a table for screen
readers (:mod:`.svg`). No script is needed to read any of it."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from itertools import groupby
from typing import Any

import pytest

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history import History, ItemHistory, RunPoint
from pytest_karenina.plugin.report.history_file import MARKS
from pytest_karenina.plugin.report.history_keeper import HistoryKeeper
from pytest_karenina.plugin.report.history_text import trend_line
from pytest_karenina.plugin.report.html import COLUMNS, FIRST_COLUMN
from pytest_karenina.plugin.report.svg import MARK_FILLS, data_table, figure, trend

COLUMN = "khistory"
SPARK_RUNS = 20
"""Runs an item's sparkline shows."""
CHART_RUNS = 50
"""Runs the summary's trend charts show."""
STEP = 6
"""The width of one run's mark in a sparkline (px)."""
SHAPES = {"p": "1h4v8h-4z", "f": "9h4v8h-4z", "e": "7h4v4h-4z"}
"""Each mark's rectangle, as a path from its left edge (a pass up, a failure down, an error
on the middle line)."""
FILLS = {"p": MARK_FILLS["pass"], "f": MARK_FILLS["fail"], "e": MARK_FILLS["error"]}
TREND_WIDTH = 180
"""The width of a trend chart (px)."""
AFTER = 'data-column-type="kflaky"'
"""The header cell the History column follows."""


def run_lengths(marks: Sequence[str]) -> str:
    """``pass x3, fail, pass x2``: the marks in words, repeats counted."""
    groups = [(mark, len(list(run))) for mark, run in groupby(marks)]
    return ", ".join(mark if count == 1 else f"{mark} x{count}" for mark, count in groups)


def sparkline(marks: str) -> str:
    """Marks (``p f e``, oldest first) as a strip: a pass a green bar up, a failure a red bar
    down, an error a grey square on the middle line (so it reads without colour). One path
    per kind of mark keeps a row's cell about half a kilobyte: a report of 20,000 items has
    one per item."""
    paths: dict[str, list[str]] = {"p": [], "f": [], "e": []}
    for index, mark in enumerate(marks):
        x = STEP * index + 1
        if mark in paths:
            paths[mark].append(f"M{x} {SHAPES[mark]}")
    width = STEP * max(len(marks), 1)
    label = escape(f"last {len(marks)} runs, oldest first: {run_lengths(_words(marks))}")
    drawn = "".join(
        f'<path fill="{FILLS[mark]}" d="{"".join(found)}"/>'
        for mark, found in paths.items()
        if found
    )
    return (
        f'<svg class="karenina-sparkline" role="img" viewBox="0 0 {width} 18" width="{width}" '
        f'height="18" aria-label="{label}"><title>{label}</title>'
        f'<path stroke="#ccc" d="M0 9H{width}"/>{drawn}</svg>'
    )


def _words(marks: str) -> list[str]:
    return [MARKS.get(mark, mark) for mark in marks]


def history_cell(item: ItemHistory | None) -> str:
    """An item's sparkline (oldest first) and what its history says, escaped; an item that
    passed every run shown gets a line of text instead (most rows of a large report)."""
    if item is None:
        return ""
    marks = item.marks[-SPARK_RUNS:]
    if set(marks) == {"p"}:
        runs = f"the last {len(marks)} runs" if len(marks) > 1 else "its only run"
        return f'<span class="karenina-history-note">passed {runs}</span>'
    notes = "".join(
        f'<br><span class="karenina-history-note">{escape(note)}</span>' for note in item.lines()
    )
    return sparkline(marks) + notes


def _money(value: float) -> str:
    return f"${value:.4f}"


def _chart(
    key: str, what: str, points: Sequence[RunPoint], values: Sequence[float | None], shown: str
) -> str:
    """One trend chart in a figure: ``shown`` formats each value in the caption and table."""
    known = [(p, v) for p, v in zip(points, values, strict=True) if v is not None]
    if not known:
        return ""
    last = [f"{v:{shown}}" for _, v in known[-5:]]
    caption = f"{what}: {last[-1]} (last {len(last)} runs: {' '.join(last)})"
    rows = [(p.time, p.commit, f"{v:{shown}}") for p, v in known]
    table = data_table(f"{what} per run, oldest first", ("time", "commit", what), rows)
    label = f"{what} over the last {len(values)} runs, oldest first: " + ", ".join(
        "no value" if v is None else f"{v:{shown}}" for v in values
    )
    return figure(trend(values, label, TREND_WIDTH), caption, table).replace(
        "<figure ", f'<figure data-history-chart="{escape(key)}" ', 1
    )


def model_charts(model: str, points: Sequence[RunPoint]) -> str:
    """Pass rate, cost (with a price table) and duration of ``model`` across runs."""
    points = list(points)[-CHART_RUNS:]
    charts = [
        _chart("pass-rate", "pass rate (%)", points, [p.rate * 100 for p in points], ".0f"),
        _chart("cost", "cost (USD)", points, [p.cost for p in points], ".4f"),
        _chart("duration", "duration (s)", points, [p.seconds for p in points], ".1f"),
    ]
    return (
        f'<div class="karenina-history-model"><h4>{escape(model)}</h4>'
        f'<div style="display: flex; flex-wrap: wrap; gap: 1em">{"".join(charts)}</div></div>'
    )


def summary_html(keeper: HistoryKeeper) -> str:
    """The summary's Run history section: the charts per model, the lines of the file that
    were skipped, a write that failed."""
    history = keeper.history or keeper.past
    name = escape(keeper.path.name)
    parts = [
        f'<div class="karenina-history"><h3>Run history ({len(history.runs)} runs, {name})</h3>'
    ]
    for model in history.models:
        points = history.trend(model)
        if points:
            parts.append(
                f'<p class="karenina-history-line">{escape(trend_line(model, points))}</p>'
            )
            parts.append(model_charts(model, points))
    counted = _counts(history)
    if counted:
        parts.append(f'<p class="karenina-history-line">{escape(counted)}</p>')
    notes = [str(problem) + ": skipped" for problem in keeper.problems]
    if keeper.failure is not None:
        notes.append(f"this run was not recorded ({keeper.failure})")
    if notes:
        items = "".join(f"<li>{escape(note)}</li>" for note in notes)
        parts.append(f'<ul class="karenina-history-problems">{items}</ul>')
    return "".join(parts) + "</div>"


def _counts(history: History) -> str:
    items = [item for model in history.models for item in history.items(model).values()]
    failing = sum(1 for item in items if item.failing_runs > 1)
    flaky = sum(1 for item in items if item.flaky)
    if not (failing or flaky):
        return ""
    return f"{failing} failing since an earlier run, {flaky} flaky in the last runs"


def _after(cells: list[str], marker: str) -> int:
    """Where the History column goes: after the Flaky column's cell."""
    for index, cell in enumerate(cells):
        if marker in cell:
            return index + 1
    return min(FIRST_COLUMN + len(COLUMNS), len(cells))


class HistoryHtml:
    """pytest-html hooks of the reporting process when the run keeps a history; they run
    after karenina's own columns are in (``trylast``)."""

    def __init__(self, keeper: HistoryKeeper) -> None:
        self.keeper = keeper

    @pytest.hookimpl(trylast=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(_after(cells, AFTER), f'<th data-column-type="{COLUMN}">History</th>')

    @pytest.hookimpl(trylast=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        """One cell in every row (empty without a payload), or rows misalign."""
        sent = getattr(report, "karenina", None)
        value = ""
        if isinstance(sent, dict):
            value = history_cell(self.keeper.item(ItemPayload.from_json(sent)))
        cells.insert(_after(cells, 'class="col-kflaky"'), f'<td class="col-{COLUMN}">{value}</td>')

    @pytest.hookimpl(trylast=True)
    def pytest_html_results_summary(
        self, prefix: list[str], postfix: list[str], session: Any
    ) -> None:
        prefix.append(summary_html(self.keeper))
