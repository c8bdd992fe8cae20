"""The replay store at the end of a run: entries used, added and unused, and pruning.

Every process that runs items reports the keys its store answered from or recorded (xdist
workers through ``workeroutput``); the reporting process adds them up, compares them with the
file and, with ``--karenina-replay-prune``, drops the entries nobody used. Pruning needs a
complete run: every collected question selected and nothing stopped early, or the entries of
questions that did not run would go too.

With ``--karenina-replay answers`` the store answers the answering calls only: the summary
counts the answers it gave, and the judge calls apart (live, and through the judge store
when there is one).

The lines are part of the terminal's karenina summary (the controller writes them there), so
a run whose questions never reported (a collection error, nothing selected) has none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_karenina.llm.replay import ReplayStore
from pytest_karenina.plugin.options.settings import Settings, judge_store_path, store_path
from pytest_karenina.plugin.stash import CONFIG_KEY, REPLAY_USAGE_OUTPUT


def store_usage(
    store: ReplayStore, full_selection: bool, judge: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What one process tells the reporting process (JSON-native, for ``workeroutput``);
    ``judge``: in answers mode, the judge side's live calls and judge store use."""
    usage = {
        "used": sorted(store.used_keys()),
        "added": store.stats()["added"],
        "reused": store.stats()["hits"],
        "full_selection": full_selection,
    }
    if judge is not None:
        usage["judge"] = judge
    return usage


@dataclass(eq=False)  # a plugin object: registered by identity, so hashable
class ReplayUsageReport:
    """Adds up the processes' store usage; prunes and summarises at the end."""

    config: pytest.Config
    settings: Settings
    used: set[str] = field(default_factory=set)
    added: int = 0
    reused: int = 0
    full_selection: bool = True
    reports: int = 0
    lines: list[str] = field(default_factory=list)
    judge_live: int = 0
    judge_used: set[str] = field(default_factory=set)
    judge_added: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        self.used.update(usage.get("used") or ())
        self.added += int(usage.get("added") or 0)
        self.reused += int(usage.get("reused") or 0)
        self.full_selection = self.full_selection and bool(usage.get("full_selection"))
        self.reports += 1
        judge = usage.get("judge")
        if isinstance(judge, dict):
            self.judge_live += int(judge.get("live") or 0)
            self.judge_used.update(judge.get("used") or ())
            self.judge_added += int(judge.get("added") or 0)

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
        store = ReplayStore(store_path(self.settings), self.settings.store_mode)
        judge = None
        if self.settings.replay == "answers" and self.settings.judge_replay != "off":
            judge = ReplayStore(judge_store_path(self.settings), self.settings.judge_replay)
        try:
            if self.settings.replay == "answers":
                self._account_answers(store, judge)
            else:
                self._account(session, exitstatus, store)
        finally:
            for used in (store, judge):  # every process of the run is done with the stores
                if used is not None:
                    used.remove_lock_file()

    def _account_answers(self, store: ReplayStore, judge: ReplayStore | None) -> None:
        """Answers mode: the answers the store gave, and the judge calls (never pruned)."""
        try:
            stored = store.stored_keys()
            judge_stored = judge.stored_keys() if judge is not None else set()
        except OSError as exc:
            self.lines.append(f"karenina replay: cannot read a store: {exc}")
            return
        self.lines.append(
            f"karenina replay: answers: {len(self.used & stored)} entries used of "
            f"{len(stored)} in {store.path.name} (strict){self._replicates_note()}"
        )
        live = f"karenina replay: judge: {self.judge_live} calls live"
        if judge is None:
            self.lines.append(f"{live}, not recorded")
            return
        unused = judge_stored - self.judge_used
        self.lines.append(
            f"{live}; {judge.path.name} ({judge.mode}): {len(self.judge_used & judge_stored)} "
            f"entries used, {self.judge_added} added, {len(unused)} unused of {len(judge_stored)}"
        )

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
        complete = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        prunable = complete and self.full_selection and not session.shouldstop
        if unused and prunable and not self.settings.replay_prune:  # no hint if it'd be refused
            self.lines[-1] += " (--karenina-replay-prune drops the unused ones)"
        if self.settings.replay == "replay" and self.reused:
            # What a run resumed after a kill did not pay for again (docs/replay.md).
            self.lines.append(
                f"karenina replay: {self.reused} calls reused from {path.name}, not sent again"
            )
        if not self.settings.replay_prune:
            return
        if not prunable:
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
        answer it), the others by keys of their own; judge replicates the same way."""
        vconfig = self.config.stash.get(CONFIG_KEY, None)
        note = ""
        for kind, count in (
            ("replicate", vconfig.replicate_count if vconfig is not None else 1),
            ("judge replicate", vconfig.judge_replicate_count if vconfig is not None else 1),
        ):
            if count < 2:
                continue
            others = f"{kind} 2 its own" if count == 2 else f"{kind}s 2-{count} their own"
            note += f"; {kind} 1 uses the keys of a run without {kind}s, {others}"
        return note
