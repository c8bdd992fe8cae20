"""Run history: the record a run appends (:func:`run_history_record`) and what the reports
read of the runs (:class:`History`): each item's verdicts run by run, how long it has been
failing, whether it flips, and each model's pass rate, cost and duration per run.

Items are keyed by question id (``#r<N>`` for a replicate) within their answering model, so
a renamed checkpoint file or a moved rootdir keeps an item's history.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history_file import FORMAT, VERSION, HistoryRun, history_run
from pytest_karenina.plugin.verdict.outcome import Outcome

FLAKY_WINDOW = 20
"""Runs an item's flakiness is judged over."""
ABSENT = " "
"""The mark of a run the item was not part of."""


def item_key(payload: ItemPayload) -> str:
    """An item's key within its answering model: its question id, ``#r<N>`` for a replicate."""
    key = payload.question_id or payload.nodeid
    return key if payload.replicate is None else f"{key}#r{payload.replicate}"


def mark(category: Outcome) -> str:
    """``p`` a pass, ``f`` a failure (a verdict reached), ``e`` an error or no verdict."""
    if category is Outcome.PASS:
        return "p"
    return "f" if category.decided else "e"


def settings_digest(verification_config: Mapping[str, Any]) -> str:
    """A short hash of the run's VerificationConfig (its JSON form)."""
    text = json.dumps(verification_config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=directory, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def git_state(directory: Path) -> tuple[str | None, str | None]:
    """``(commit, branch)`` of the repository ``directory`` is in (None outside one; a
    detached head's branch from CI's variables when they name it)."""
    commit = _git(directory, "rev-parse", "--verify", "-q", "HEAD")
    if commit is None:
        return None, None
    branch = _git(directory, "symbolic-ref", "--short", "-q", "HEAD")
    if branch is None:  # CI checks out a commit: GitHub Actions names the branch
        branch = os.environ.get("GITHUB_HEAD_REF") or os.environ.get("GITHUB_REF_NAME") or None
    return commit, branch


def run_history_record(
    payloads: Iterable[ItemPayload],
    benchmark: Sequence[str],
    settings: str,
    git: tuple[str | None, str | None],
    shard: tuple[int, int] | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """The record of one run: per answering model, its items' verdict marks, scores, costs
    (None without a price table) and pipeline seconds, in columns."""
    models: dict[str, dict[str, Any]] = {}
    for payload in payloads:
        columns = models.setdefault(
            payload.answering_model or "?",
            {"ids": [], "verdict": [], "score": [], "cost": [], "seconds": [], "category": {}},
        )
        at = len(columns["ids"])
        columns["ids"].append(item_key(payload))
        columns["verdict"].append(mark(payload.category))
        columns["score"].append(round(payload.score, 4) if payload.score is not None else None)
        columns["cost"].append(round(sum(payload.cost), 8) if payload.cost is not None else None)
        columns["seconds"].append(round(payload.seconds, 3))
        if payload.category is not Outcome.PASS:
            columns["category"][str(at)] = payload.category.value
    for columns in models.values():
        columns["verdict"] = "".join(columns["verdict"])
        if all(cost is None for cost in columns["cost"]):
            columns["cost"] = None
    stamp = time.gmtime(time.time() if now is None else now)
    return {
        "format": FORMAT, "version": VERSION, "benchmark": list(benchmark),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp), "commit": git[0], "branch": git[1],
        "shard": list(shard) if shard is not None else None, "settings": settings,
        "models": models,
    }  # fmt: skip


def record_run(record: Mapping[str, Any]) -> HistoryRun:
    """A record as the run it stands for (the run being reported, not read from the file)."""
    return history_run(record, 0)


@dataclass(frozen=True, slots=True)
class ItemHistory:
    """One item's verdicts over the runs that had it, oldest first."""

    marks: str
    """One of ``p f e`` per run that had the item."""
    failing_runs: int
    """How many runs in a row, up to the last, it did not pass (0: it passed last)."""
    failing_since: str | None
    """The commit of the first of those runs."""
    failing_always: bool
    """It passed in none of the runs recorded."""
    flaky: int
    """Runs of the last :data:`FLAKY_WINDOW` whose verdict was its minority one, when its
    verdict flipped at least twice there (0 otherwise)."""
    window: int
    """Runs the flakiness was judged over."""

    def lines(self) -> list[str]:
        """``failing since <commit> (3 runs)``, ``flaky in 4 of the last 20 runs``."""
        found = []
        if self.failing_runs:
            runs = f"{self.failing_runs} run{'s' if self.failing_runs != 1 else ''}"
            if self.failing_always:
                found.append(f"failing in all {runs} recorded, since {self.failing_since}")
            else:
                found.append(f"failing since {self.failing_since} ({runs})")
        if self.flaky:
            found.append(f"flaky in {self.flaky} of the last {self.window} runs")
        return found


@dataclass(frozen=True, slots=True)
class RunPoint:
    """One model in one run: pass rate, total cost (None unpriced) and pipeline seconds."""

    time: str
    commit: str
    passed: int
    total: int
    cost: float | None
    seconds: float

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


class History:
    """The runs of a history (the run being reported last, when there is one)."""

    def __init__(self, runs: Sequence[HistoryRun]) -> None:
        self.runs = list(runs)

    @cached_property
    def models(self) -> list[str]:
        """Answering models in the order they first appear."""
        return list(dict.fromkeys(name for run in self.runs for name in run.models))

    def trend(self, model: str) -> list[RunPoint]:
        """The model's points, one per run that had it."""
        points = []
        for run in self.runs:
            columns = run.models.get(model)
            if columns is None or not columns.ids:
                continue
            costs = [c for c in columns.cost if c is not None] if columns.cost is not None else []
            points.append(RunPoint(
                run.time, run.short_commit, columns.verdict.count("p"), len(columns.ids),
                sum(costs) if columns.cost is not None else None, sum(columns.seconds),
            ))  # fmt: skip
        return points

    def _aligned(self, model: str) -> dict[str, str]:
        """Key -> one mark per run (:data:`ABSENT` when the run lacked it), for the items of
        the model's last run. Runs with the same items as the last are read column-wise."""
        last = next((r.models[model] for r in reversed(self.runs) if model in r.models), None)
        if last is None:
            return {}
        columns = []
        for run in self.runs:
            found = run.models.get(model)
            if found is None:
                columns.append(ABSENT * len(last.ids))
            elif found.ids == last.ids:
                columns.append(found.verdict)
            else:
                verdict, where = found.verdict, found.position
                columns.append("".join(
                    verdict[at] if (at := where(key)) is not None else ABSENT for key in last.ids
                ))  # fmt: skip
        return dict(zip(last.ids, map("".join, zip(*columns, strict=True)), strict=True))

    @cached_property
    def _items(self) -> dict[str, dict[str, str]]:
        return {model: self._aligned(model) for model in self.models}

    def item(self, model: str, key: str, current: str | None = None) -> ItemHistory | None:
        """The item's history, with ``current`` (its mark in a run not among :attr:`runs`)
        last; None when no run had it."""
        aligned = self._items.get(model, {}).get(key)
        if aligned is None:  # not in the model's last run: looked up run by run
            aligned = "".join(
                columns.verdict[at]
                if (columns := run.models.get(model)) is not None
                and (at := columns.position(key)) is not None
                else ABSENT
                for run in self.runs
            )
        aligned += current or ""
        return self._item_history(aligned) if aligned.strip() else None

    def items(self, model: str) -> dict[str, ItemHistory]:
        return {key: self._item_history(marks) for key, marks in self._items[model].items()}

    def _item_history(self, aligned: str) -> ItemHistory:
        marks = aligned.replace(ABSENT, "")
        failing = len(marks) - len(marks.rstrip("fe"))
        since = None
        if failing:
            seen, at = 0, len(aligned)
            while seen < failing:
                at -= 1
                seen += aligned[at] != ABSENT
            since = self.runs[at].short_commit if at < len(self.runs) else "this run"
        window = marks[-FLAKY_WINDOW:]
        flips = sum(1 for a, b in pairwise(window) if (a == "p") != (b == "p"))
        passes = window.count("p")
        flaky = min(passes, len(window) - passes) if flips >= 2 else 0
        return ItemHistory(
            marks, failing, since, failing == len(marks) and failing > 0, flaky, len(window)
        )
