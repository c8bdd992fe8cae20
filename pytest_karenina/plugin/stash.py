"""Every ``config.stash`` key of the plugin, and the names it uses in xdist's
``workerinput`` / ``workeroutput`` dicts.

Imports only pytest and the standard library at run time (the plugin's entry module
imports this): the value types are named for type checkers only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_karenina.checkpoint import Benchmark
    from pytest_karenina.config.verification import VerificationConfig
    from pytest_karenina.plugin.options.settings import Settings
    from pytest_karenina.plugin.run.heap import HeapSettler
    from pytest_karenina.plugin.run.prefetch import Prefetcher
    from pytest_karenina.rubrics.gates import RubricGatePolicy

CHECKPOINTS_KEY = pytest.StashKey[tuple[Path, ...]]()
"""Resolved paths of the checkpoints to collect (empty: the plugin is inactive)."""

SETTINGS_KEY: pytest.StashKey[Settings] = pytest.StashKey()
"""The plugin's options, resolved once when it activates."""

CONFIG_KEY: pytest.StashKey[VerificationConfig] = pytest.StashKey()
"""The run's VerificationConfig, built from the settings when the plugin activates."""

GATE_POLICY_KEY: pytest.StashKey[RubricGatePolicy] = pytest.StashKey()
"""How rubric traits gate verdicts (score threshold and rules)."""

PREFETCHER_KEY: pytest.StashKey[Prefetcher] = pytest.StashKey()
"""The process's prefetcher, from the start of the run loop on (processes that run items)."""

HEAP_KEY: pytest.StashKey[HeapSettler] = pytest.StashKey()
"""Freezes a large run's heap (see :mod:`pytest_karenina.plugin.run.heap`); set on activation."""

LABELLED_ITEMS_KEY: pytest.StashKey[Callable[[pytest.File, Benchmark], list[pytest.Item]]] = (
    pytest.StashKey()
)
"""``--karenina-judge-check``: makes a checkpoint file's items from the labels of its questions
(instead of one item per question); set when the plugin activates."""

COLLECTED_KEY = pytest.StashKey[int]()
"""How many question items the checkpoint files yielded in this process."""

QUESTIONS_DIGEST_KEY = pytest.StashKey[int]()
"""An order-free digest of the ids of every question collected (see ``questions_digest``)."""

SELECTION_KEY = pytest.StashKey["dict[str, int]"]()
"""``collected`` and ``selected`` question items and the questions' ``digest``: set by the
process that collected (an xdist worker sends it as ``workeroutput[SELECTION_OUTPUT]``)."""

UNCHANGED_ITEMS_KEY = pytest.StashKey[int]()
"""How many items ``--karenina-changed-since`` deselected (their questions did not change)."""

SELECTION_OUTPUT = "karenina_selection"
"""``workeroutput`` key: the worker's :data:`SELECTION_KEY` value."""

PARTITION_INPUT = "karenina_partition"
"""``workerinput`` key: this worker's index in the static partition, or None when the
controller does not partition (another ``--dist`` mode, or a replacement worker)."""

REPLAY_USAGE_OUTPUT = "karenina_replay"
"""``workeroutput`` key: the replay store keys a worker used and how many it added."""

JOURNAL_INPUT = "karenina_flight_journals"
"""``workerinput`` key: the directory where each worker journals the pipelines it has in
flight (see :mod:`flight_journal`), or absent."""
