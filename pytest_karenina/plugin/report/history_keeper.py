"""One run's use of its history file: read when the session starts (the report's rows show
each item's earlier runs), the run appended once when it finishes (by the process that
reports: the only one, the xdist controller, or ``pytest-karenina merge``), pruned on
request, and the terminal's lines. Nothing here raises on the file's account: a file that
cannot be read or written is a line of the summary, and the run's own reports go on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history import (
    History,
    ItemHistory,
    git_state,
    item_key,
    mark,
    record_run,
    run_history_record,
    settings_digest,
)
from pytest_karenina.plugin.report.history_file import (
    Problem,
    append_record,
    prune_history,
    read_history,
)
from pytest_karenina.plugin.report.history_text import problem_lines, terminal_lines
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.safe_text import terminal_safe


class HistoryKeeper:
    """The history file of one run of ``benchmark`` (its checkpoints' file names)."""

    def __init__(
        self,
        path: Path,
        benchmark: Sequence[str],
        verification_config: Mapping[str, Any],
        directory: Path,
        keep: int | None = None,
        shard: tuple[int, int] | None = None,
    ) -> None:
        self.path = path
        self.benchmark = sorted(benchmark)
        self.settings = settings_digest(verification_config)
        self.directory = directory
        self.keep = keep
        self.shard = shard
        read = read_history(path, self.benchmark)
        self.problems: list[Problem] = read.problems
        self.past = History(read.runs)
        self.history: History | None = None
        """The past runs and this one, once it is recorded."""
        self.failure: str | None = None
        self.pruned = 0

    def item(self, payload: ItemPayload) -> ItemHistory | None:
        """The item's history with its verdict in this run last."""
        model = payload.answering_model or "?"
        return self.past.item(model, item_key(payload), mark(payload.category))

    def record(self, payloads: Iterable[ItemPayload]) -> None:
        """Append this run (nothing when no item reported) and prune when asked to."""
        found = list(payloads)
        if not found:
            return
        record = run_history_record(
            found, self.benchmark, self.settings, git_state(self.directory), self.shard
        )
        self.history = History([*self.past.runs, record_run(record)])
        try:
            append_record(self.path, record)
            if self.keep is not None:
                self.pruned = prune_history(self.path, self.benchmark, self.keep)
        except OSError as exc:
            self.failure = f"{type(exc).__name__}: {exc}"

    def summary_lines(self) -> list[str]:
        """The GitHub job summary's: a title, each model's trend, the items failing since
        an earlier run (none before the run is recorded)."""
        if self.history is None:
            return []
        first, *rest = terminal_lines(self.history, self.path.name)
        return ["Run history" + first.removeprefix("karenina history"), *map(str.strip, rest)]

    def lines(self) -> list[Line]:
        """The terminal's: each model's trend, items failing since an earlier run, the
        lines of the file skipped, a failed write."""
        found: list[Line] = []
        if self.history is not None:
            found += map(Line, terminal_lines(self.history, self.path.name))
        if self.pruned:
            records = f"{self.pruned} older record{'s' if self.pruned != 1 else ''}"
            found.append(Line(f"  pruned {records} (keeping {self.keep} runs)"))
        found += [Line(text, red=True) for text in problem_lines(self.problems)]
        if self.failure is not None:
            found.append(
                Line(
                    f"karenina history: this run was not recorded in "
                    f"{terminal_safe(str(self.path))} ({terminal_safe(self.failure)})",
                    red=True,
                )
            )
        return found
