"""Run history as text: the terminal's lines after a run, and ``pytest-karenina history``
(text, or JSON with ``--json``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_karenina.plugin.report.history import History, ItemHistory, RunPoint
from pytest_karenina.plugin.report.history_file import MARKS, Problem
from pytest_karenina.plugin.safe_text import terminal_safe

TREND_RUNS = 5
"""Runs the terminal's trend line shows."""
LISTED = 10
"""Items (and skipped lines) the command lists of each kind before counting the rest."""
PROBLEMS_SHOWN = 5
"""Skipped lines the terminal names before counting the rest."""


def percent(rate: float) -> str:
    return f"{rate * 100:.0f}"


def trend_line(model: str, points: Sequence[RunPoint]) -> str:
    """``model: pass rate 82% (last 5 runs: 80 81 84 82 82)``."""
    last = points[-1]
    shown = points[-TREND_RUNS:]
    runs = f"last {len(shown)} runs" if len(shown) > 1 else "1 run"
    line = (
        f"{terminal_safe(model)}: pass rate {percent(last.rate)}% "
        f"({runs}: {' '.join(percent(p.rate) for p in shown)})"
    )
    if last.cost is not None:
        line += f", cost ${last.cost:.4f}"
    return line + f", {last.seconds:.1f} s"


def problem_lines(problems: Sequence[Problem], shown: int = PROBLEMS_SHOWN) -> list[str]:
    """The skipped lines, each named by file and line (``shown`` of them, then a count)."""
    lines = [f"karenina history: skipped {terminal_safe(str(p))}" for p in problems[:shown]]
    if len(problems) > shown:
        lines.append(f"karenina history: and {len(problems) - shown} more lines skipped")
    return lines


def _count(items: Sequence[ItemHistory]) -> tuple[int, int]:
    """``(failing since an earlier run, flaky)``."""
    return sum(1 for i in items if i.failing_runs > 1), sum(1 for i in items if i.flaky)


def terminal_lines(history: History, name: str) -> list[str]:
    """After a run: one trend line per model, and how many questions fail since an earlier
    run or flip (``name``: the history file's)."""
    runs = len(history.runs)
    lines = [f"karenina history {terminal_safe(name)}: {runs} run{'s' if runs != 1 else ''}"]
    for model in history.models:
        points = history.trend(model)
        if points:
            lines.append("  " + trend_line(model, points))
    items = [item for model in history.models for item in history.items(model).values()]
    failing, flaky = _count(items)
    if failing or flaky:
        lines.append(
            f"  {failing} item{'s' if failing != 1 else ''} failing since an earlier run, "
            f"{flaky} flaky (pytest-karenina history {terminal_safe(name)} lists them)"
        )
    return lines


def _item_line(model: str, key: str, item: ItemHistory) -> str:
    marks = item.marks[-20:]
    return f"  {terminal_safe(key)} [{terminal_safe(model)}] {marks}: {'; '.join(item.lines())}"


def command_text(history: History, name: str, benchmark: str, problems: Sequence[Problem]) -> str:
    """What ``pytest-karenina history`` prints: the runs, each model's trend, the items
    failing or flipping, the lines skipped."""
    out = [f"{name}: {len(history.runs)} runs of {benchmark}"]
    for run in history.runs:
        parts = [
            f"{model} {percent(columns.verdict.count('p') / len(columns.ids))}%"
            for model, columns in run.models.items()
            if columns.ids
        ]
        out.append(
            f"  {run.time}  {run.short_commit:<11} {run.branch or '-':<12} "
            f"settings {run.settings}  {', '.join(parts)}"
        )
    for model in history.models:
        points = history.trend(model)
        if points:
            out.append(trend_line(model, points))
    every = [
        (model, key, item) for model in history.models for key, item in history.items(model).items()
    ]
    for title, found in (
        ("failing", [entry for entry in every if entry[2].failing_runs > 0]),
        ("flaky", [entry for entry in every if entry[2].flaky > 0]),
    ):
        if found:
            out.append(f"{title} ({len(found)}; marks oldest first: {_legend()}):")
            out += [_item_line(*entry) for entry in found[:LISTED]]
            if len(found) > LISTED:
                out.append(f"  and {len(found) - LISTED} more (--json lists every item)")
    out += [line.removeprefix("karenina history: ") for line in problem_lines(problems, LISTED)]
    return "\n".join(out) + "\n"


def _legend() -> str:
    return ", ".join(f"{mark} {meaning}" for mark, meaning in MARKS.items() if mark != "s")


def command_json(
    history: History, name: str, benchmark: Sequence[str], problems: Sequence[Problem]
) -> dict[str, Any]:
    """``pytest-karenina history --json``: every run, each model's points, every item."""
    return {
        "file": name,
        "benchmark": list(benchmark),
        "runs": [
            {
                "time": run.time,
                "commit": run.commit,
                "branch": run.branch,
                "settings": run.settings,
                "lines": run.lines,
                "models": {
                    model: {
                        "passed": columns.verdict.count("p"),
                        "total": len(columns.ids),
                        "cost": sum(c for c in columns.cost if c is not None)
                        if columns.cost is not None
                        else None,
                        "seconds": sum(columns.seconds),
                    }
                    for model, columns in run.models.items()
                },
            }
            for run in history.runs
        ],
        "items": {
            model: {
                key: {
                    "marks": item.marks,
                    "failing_runs": item.failing_runs,
                    "failing_since": item.failing_since,
                    "flaky": item.flaky,
                    "window": item.window,
                }
                for key, item in history.items(model).items()
            }
            for model in history.models
        },
        "skipped": [{"line": p.line, "why": p.why} for p in problems],
    }
