"""``--karenina-baseline`` on the reporting process: compare the run with its baseline, or
write the baseline from a whole run (``--karenina-baseline-update``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pytest

from pytest_karenina.plugin.collect.shards import shard_of
from pytest_karenina.plugin.gates.baseline import (
    VERSION,
    BaselineEntry,
    BaselineError,
    Key,
    entries_of,
    read_baseline_file,
    write_baseline,
)
from pytest_karenina.plugin.gates.baseline_diff import BaselineDiff, diff
from pytest_karenina.plugin.gates.baseline_pairs import Pairing, PairingError, pair_models
from pytest_karenina.plugin.options.ci_declare import GithubKnownFailures
from pytest_karenina.plugin.options.ci_settings import CiSettings
from pytest_karenina.plugin.report.github import KnownFailures
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.safe_text import terminal_safe


def partial_reason(
    summary: RunSummary, status: int, stopped: bool, selection: Mapping[str, int] | None
) -> str | None:
    """Why the run does not stand for the whole benchmark (None when it does).

    ``stopped``: ``-x`` or ``--maxfail`` ended it; ``selection``: the ``collected`` and
    ``selected`` question items, when known.
    """
    if status == pytest.ExitCode.INTERRUPTED:
        return "the run was interrupted"
    if stopped:
        return "the run stopped early (-x or --maxfail)"
    found = selection or {}
    collected = found.get("collected", 0)
    selected = found.get("selected", 0) + found.get("unchanged", 0)
    if selected < collected:
        left_out = collected - selected
        return f"{left_out} of {collected} items were deselected (-k, -m, --lf or a shard)"
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return f"the run ended with exit status {int(status)}"
    if summary.cost.capped:
        return f"the cost cap left {summary.cost.capped} items unstarted"
    errors = sum(1 for payload in summary.payloads.values() if payload.category.is_error)
    if errors:
        return f"{errors} items errored"
    if summary.other_failures:
        return f"{summary.other_failures} failures outside the questions"
    return None


def update_baseline(
    path: Path, current: dict[Key, BaselineEntry], partial: str | None
) -> tuple[str, bool]:
    """Write ``current`` to ``path`` unless the run was partial: what became of the update,
    and whether it was refused."""
    if partial is None and not current:
        partial = "no question reached the report"
    if partial is not None:
        return f"karenina baseline {path.name}: not updated: {partial}", True
    try:
        write_baseline(path, current)
    except OSError as exc:
        return f"karenina baseline {path.name}: not written ({exc})", True
    verdicts = Counter(entry.verdict for entry in current.values())
    counts = ", ".join(f"{verdict} {n}" for verdict, n in sorted(verdicts.items()))
    return f"karenina baseline {path.name}: written ({len(current)} entries: {counts})", False


def error_reasons(summary: RunSummary) -> dict[Key, str]:
    """Per question and answering model, why its first errored item errored (the first line
    of its explanation, else its outcome)."""
    found: dict[Key, str] = {}
    for payload in summary.payloads.values():
        if payload.category.is_error and payload.question_id is not None:
            key = (payload.question_id, payload.answering_model or "?")
            found.setdefault(key, summary.reasons.get(payload.nodeid) or payload.category.value)
    return found


class BaselineGate:
    """Reads the baseline when the run starts (a missing or broken file, or a model mapping
    that does not fit it, is a usage error; an update reads it only to keep the entries of
    unchanged questions), then decides the run against it: compared, it fails on regressions
    (likely ones too with ``baseline_fail_on="likely"``), score drops, errored items, and when
    it compared nothing; updating, it passes when the baseline was written and fails,
    whatever else happened, when the update was refused."""

    def __init__(
        self,
        settings: CiSettings,
        shard: tuple[int, int] | None = None,
        unchanged: frozenset[str] = frozenset(),
        run_models: Sequence[str] = (),
        where: str = "--karenina-baseline-model",
    ) -> None:
        """``shard``: the run's ``I/N``, whose baseline entries of other shards are left out;
        ``unchanged``: questions ``--karenina-changed-since`` did not run, which keep their
        baseline entries; ``run_models``: the run's answering models, paired with the
        baseline's now (when not given: the models of the run's entries, once it ended);
        ``where``: the flag of the model mapping, for its errors."""
        self.settings = settings
        self.unchanged = unchanged
        self.entries: dict[Key, BaselineEntry] = {}
        self.version = VERSION
        self.pairing: Pairing | None = None
        """Which run model is compared with which baseline model (None when updating)."""
        self.diff: BaselineDiff | None = None
        """The run against the baseline, once compared."""
        self.note: str | None = None
        """What became of ``--karenina-baseline-update`` (written, or refused and why)."""
        self.refused = False
        self.reported = False
        """Whether the run reported anything (its lines are part of the run's summary)."""
        path = settings.baseline
        reads = not settings.baseline_update or (unchanged and path is not None and path.exists())
        if path is not None and reads:
            try:
                found = read_baseline_file(path)
            except BaselineError as exc:
                raise pytest.UsageError(f"--karenina-baseline: {exc}") from None
            self.entries, self.version = found.entries, found.version
        self.where = where
        if path is not None and not settings.baseline_update and run_models:
            self.pairing = self._pair(run_models)
        if shard is not None:
            index, count = shard
            self.entries = {k: e for k, e in self.entries.items() if shard_of(k[0], count) == index}

    def _pair(self, run_models: Sequence[str]) -> Pairing:
        """The run's models paired with the baseline's; a mapping that names a model either
        side lacks is a usage error."""
        try:
            return pair_models(
                run_models, {model for _, model in self.entries}, self.settings.baseline_models,
                self.where, f"the baseline {self.settings.baseline}",
            )  # fmt: skip
        except PairingError as exc:
            raise pytest.UsageError(str(exc)) from None

    @property
    def strict(self) -> bool:
        return self.settings.baseline_update

    def decide(self, summary: RunSummary, partial: str | None) -> bool | None:
        """Compare (:attr:`diff`) or update (:attr:`note`)."""
        path = self.settings.baseline
        self.reported = bool(summary.payloads or summary.skipped)
        if path is None:
            return None
        current = entries_of(summary.payloads.values(), summary.rubric_scores)
        kept = {key: e for key, e in self.entries.items() if key[0] in self.unchanged}
        if self.settings.baseline_update:
            lacking = len(self.unchanged - {key[0] for key in kept})
            if lacking and partial is None:
                partial = f"{lacking} unchanged questions have no baseline entry to keep"
            self.note, self.refused = update_baseline(path, {**kept, **current}, partial)
            return not self.refused
        found = diff(
            path.name, self.entries, current, self.settings.score_tolerance,
            summary.lower_is_better, kept, error_reasons(summary),
            self.pairing or self._pair(sorted({model for _, model in current})),
            self.settings.baseline_fail_on, self.version,
        )  # fmt: skip
        # An item whose xdist worker died names no question: it may hide a regression.
        found.errors += [
            f"{payload.nodeid}: its worker crashed (question unknown)"
            for payload in summary.payloads.values()
            if payload.question_id is None
        ]
        self.diff = found
        return found.passed

    def headline(self) -> str | None:
        return self.diff.lines()[0] if self.diff is not None else self.note

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        return self.diff.details() if self.diff is not None else []

    def lines(self) -> list[Line]:
        if not self.reported:  # no summary to add to
            return []
        if self.diff is not None:
            return [Line(terminal_safe(line.text), red=line.red) for line in self.diff.statements()]
        if self.note is not None:
            return [Line(terminal_safe(self.note), red=self.refused)]
        return []

    def junit_properties(self) -> list[tuple[str, str]]:
        return self.diff.suite_properties() if self.diff is not None else []


def known_failures(gates: Iterable[object], how: GithubKnownFailures) -> KnownFailures | None:
    """The known failures of a run compared with its baseline, annotated ``how`` (None when
    no gate compared the run with a baseline: every failure is then an error)."""
    for gate in gates:
        if isinstance(gate, BaselineGate) and gate.diff is not None:
            return KnownFailures(gate.diff.name, frozenset(gate.diff.accepted), how)
    return None
