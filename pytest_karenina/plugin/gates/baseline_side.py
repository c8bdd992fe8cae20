"""The side by side of regressions (``--karenina-baseline-results``), set up from the
baseline gate: which items regressed is the gate's question (their baseline entry passed, the
models paired as the gate pairs them), what changed is the report's
(:mod:`~..report.side_by_side`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pytest_karenina.plugin.gates.baseline_gate import BaselineGate
from pytest_karenina.plugin.options.settings import Settings
from pytest_karenina.plugin.report.baseline_results import read_baseline_run
from pytest_karenina.plugin.report.reproduce import run_options
from pytest_karenina.plugin.report.side_by_side import SideBySide


def passed_before(gate: BaselineGate, question: str, model: str) -> str | None:
    """The baseline model paired with ``model`` when its entry of ``question`` passed."""
    old = gate.pairing.of(model) if gate.pairing is not None else model
    entry = gate.entries.get((question, old)) if old is not None else None
    return old if entry is not None and entry.verdict == "pass" else None


def baseline_side_by_side(
    settings: Settings, gates: Iterable[object], args: Sequence[str]
) -> SideBySide | None:
    """The side by side of a run compared with its baseline and given the baseline run's
    export (None otherwise); ``args``: pytest's invocation arguments (the reproducing
    command keeps the ones that decide how an item is judged)."""
    path = settings.ci.baseline_results
    gate = next((g for g in gates if isinstance(g, BaselineGate)), None)
    if path is None or gate is None or settings.ci.baseline_update:
        return None
    names = [checkpoint.name for checkpoint in settings.checkpoints]
    run = read_baseline_run(path, names)
    return SideBySide(run, lambda q, m: passed_before(gate, q, m), run_options(args))
