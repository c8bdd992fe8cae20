"""The replay store at the end of a run: entries used, added and unused, and pruning.

Every process that runs items reports the keys its store answered from or recorded (xdist
workers through ``workeroutput``); the reporting process adds them up, compares them with the
file and, with ``--karenina-replay-prune``, drops the entries nobody used. Pruning needs a
complete run: every collected question selected and nothing stopped early, or the entries of
questions that did not run would go too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.plugin.options.settings import Settings, store_path
from pytest_karenina.plugin.stash import CONFIG_KEY, REPLAY_USAGE_OUTPUT


def store_usage(store: ReplayStore, full_selection: bool) -> dict[str, Any]:
    """What one process tells the reporting process (JSON-native, for ``workeroutput``)."""
    return {
        "used": sorted(store.used_keys()),
        "added": store.stats()["added"],
        "full_selection": full_selection,
    }


@dataclass(eq=False)  # a plugin object: registered by identity, so hashable
class ReplayUsageReport:
    """Adds up the processes' store usage; prunes and summarises at the end."""

    config: pytest.Config
    settings: Settings
    used: set[str] = field(default_factory=set)
    added: int = 0
    full_selection: bool = True
    reports: int = 0
    lines: list[str] = field(default_factory=list)

    def add(self, usage: dict[str, Any]) -> None:
        self.used.update(usage.get("used") or ())
        self.added += int(usage.get("added") or 0)
        self.full_selection = self.full_selection and bool(usage.get("full_selection"))
        self.reports += 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        usage = getattr(node, "workeroutput", {}).get(REPLAY_USAGE_OUTPUT)
        if isinstance(usage, dict):
            self.add(usage)
        else:  # a crashed worker said nothing: what it used is unknown
            self.full_selection = False

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.reports == 0:
            return  # nothing ran here or in any worker (e.g. --collect-only)
        store = ReplayStore(store_path(self.settings), self.settings.replay)
        try:
            self._account(session, exitstatus, store)
        finally:
            store.remove_lock_file()  # every process of the run is done with the store

    def _account(self, session: pytest.Session, exitstatus: int, store: ReplayStore) -> None:
        """Report used / added / unused entries, and prune when asked and allowed."""
        path = store.path
        try:
            stored = store.stored_keys()
        except OSError as exc:
            self.lines.append(f"karenina replay: cannot read {path.name}: {exc}")
            return
        unused = stored - self.used
        self.lines.append(
            f"karenina replay: {len(self.used & stored)} entries used, {self.added} added, "
            f"{len(unused)} unused of {len(stored)} in {path.name}{self._replicates_note()}"
        )
        if not self.settings.replay_prune:
            if unused:
                self.lines[-1] += " (--karenina-replay-prune drops the unused ones)"
            return
        complete = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        if not (complete and self.full_selection and not session.shouldstop):
            self.lines.append(
                "karenina replay: not pruned: the run did not cover every question "
                "(a selection, -x or an interruption)"
            )
            return
        removed = store.prune(self.used)
        self.lines.append(f"karenina replay: pruned {removed} unused entries")

    def _replicates_note(self) -> str:
        """How replicates find their entries, when the run has replicates: replicate 1 by the
        keys a run without replicates uses (so stores recorded before replicates were keyed
        answer it), the others by keys of their own."""
        vconfig = self.config.stash.get(CONFIG_KEY, None)
        count = vconfig.replicate_count if vconfig is not None else 1
        if count < 2:
            return ""
        others = "replicate 2 its own" if count == 2 else f"replicates 2-{count} their own"
        return f"; replicate 1 uses the keys of a run without replicates, {others}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(line)
