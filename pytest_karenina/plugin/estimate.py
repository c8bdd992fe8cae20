"""``--karenina-estimate``: what a live run of the selected questions would call, use and cost.

Every selected item's pipeline runs under strict replay, so nothing leaves the machine: an
item whose calls are all recorded is *known* (its recorded usage is what a live run would
use); an item that meets an unrecorded call is *unknown* and estimated at the mean of the
known items. No item is reported as passed or failed: the run prints the estimate and exits
0 (4 without a replay store; the estimate runs in one process, not under ``-n``). It writes
nothing: no export, baseline, store pruning or GitHub output, and the cost cap is off.

With ``--karenina-replay answers`` a run sends only its judge calls: the estimate counts those
(every one as live, with the usage the store recorded for it) and none of the answers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_karenina.pipeline.retries import REPLAY_MISS
from pytest_karenina.plugin.collect.items import QuestionItem, question_items
from pytest_karenina.plugin.options.settings import Settings, store_path
from pytest_karenina.plugin.payload import tokens
from pytest_karenina.plugin.process import ProcessRole
from pytest_karenina.plugin.stash import PREFETCHER_KEY
from pytest_karenina.results import VerificationResult
from pytest_karenina.results.cost import ANSWER_STAGE, Cost, PriceTable, results_cost


@dataclass
class Usage:
    """Calls, tokens and cost of some items."""

    items: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Cost = dataclasses.field(default_factory=Cost)

    def scaled(self, items: int) -> Usage:
        """The mean per item of this usage, times ``items``."""
        if not self.items:
            return Usage()
        share = items / self.items
        return Usage(
            items, round(self.calls * share), round(self.input_tokens * share),
            round(self.output_tokens * share),
            Cost(self.cost.answerer * share, self.cost.judge * share, self.cost.unpriced),
        )  # fmt: skip

    def plus(self, other: Usage) -> Usage:
        return Usage(
            self.items + other.items, self.calls + other.calls,
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
            self.cost + other.cost,
        )  # fmt: skip

    def describe(self, priced: bool) -> str:
        text = f"{self.calls} calls, {self.input_tokens} tokens in, {self.output_tokens} out"
        if priced:
            text += (f", ${self.cost.total:.4f} (answerer ${self.cost.answerer:.4f}, "
                     f"judge ${self.cost.judge:.4f})")  # fmt: skip
        return text


def _answered(results: Iterable[VerificationResult]) -> bool:
    """Every result has its answer (answers mode: the store had it)."""
    return all(r.template is not None and r.template.raw_llm_response for r in results)


def judge_tokens(result: VerificationResult) -> tuple[int, int]:
    """``(input, output)`` tokens of the judge calls of ``result`` (all but the answer's)."""
    usage = (result.template.usage_metadata if result.template else None) or {}
    answer = usage.get(ANSWER_STAGE) or {}
    total_in, total_out = tokens(result)
    return (total_in - int(answer.get("input_tokens") or 0),
            total_out - int(answer.get("output_tokens") or 0))  # fmt: skip


def _recorded(results: Iterable[VerificationResult]) -> bool:
    """Every call of these results was answered from the store."""
    failures = [result.metadata.failure for result in results]
    return not any(f is not None and (f.details or {}).get(REPLAY_MISS) for f in failures)


class EstimatePlugin:
    """Runs the selected items' pipelines offline and prints the estimate instead of
    running the items."""

    def __init__(
        self, prices: PriceTable | None, store_name: str, judge_only: bool = False
    ) -> None:
        self.prices = prices
        self.store_name = store_name
        self.judge_only = judge_only
        """Answers mode: count the judge calls only (the answers come from the store)."""
        self.lines: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        prefetcher = session.config.stash.get(PREFETCHER_KEY, None)
        items = question_items(session.items)
        if prefetcher is None:  # --collect-only and friends: nothing to estimate
            return True
        known, unknown, unanswered = Usage(), 0, 0
        for item in items:
            results = self._results(prefetcher, item)
            if self.judge_only and results is not None and not _answered(results):
                unanswered += 1  # error:replay in answers mode, which sends nothing for it
                continue
            if results is None or not _recorded(results):
                unknown += 1
                continue
            count = judge_tokens if self.judge_only else tokens
            counted = [count(result) for result in results]
            tokens_in, tokens_out = sum(t[0] for t in counted), sum(t[1] for t in counted)
            cost = results_cost(results, self.prices) if self.prices else Cost()
            if self.judge_only:
                cost = Cost(0.0, cost.judge, cost.unpriced)
            known = known.plus(Usage(1, 0, tokens_in, tokens_out, cost))
        store = prefetcher.judge_replay if self.judge_only else prefetcher.replay
        if store is not None:
            known.calls = len(store.used_keys())
        self.lines = self._describe(len(items), known, unknown)
        if unanswered:
            self.lines.insert(1, f"  {unanswered} without a recorded answer (error:replay "
                                 "in answers mode, no judge call)")  # fmt: skip
        return True

    @staticmethod
    def _results(prefetcher: Any, item: QuestionItem) -> list[VerificationResult] | None:
        try:
            return list(prefetcher.result_of(item).results)
        except Exception:  # an invalid stage list: nothing measured for this item
            return None

    def _describe(self, items: int, known: Usage, unknown: int) -> list[str]:
        priced = self.prices is not None
        what, run = "a live run", "a live run"
        if self.judge_only:
            what = "the judge calls of --karenina-replay answers, all live"
            run = "its judge calls"
        lines = [
            f"karenina estimate of {what} (from {self.store_name}; no call was sent): "
            f"{items} items, {known.items} fully recorded, {unknown} not"
        ]
        if known.items:
            lines.append(f"  recorded: {known.describe(priced)}")
        if unknown and known.items:
            lines.append(f"  not recorded (at the recorded mean per item): "
                         f"~{known.scaled(unknown).describe(priced)}")  # fmt: skip
        if unknown and not known.items:
            lines.append("  no item is fully recorded: record some (--karenina-replay record) "
                         "to estimate the rest")  # fmt: skip
        elif items:
            total = known.plus(known.scaled(unknown))
            lines.append(f"  {run}: ~{total.describe(priced)}")
        unpriced = known.cost.unpriced
        if priced and unpriced:
            lines.append(f"  no price for {', '.join(sorted(unpriced))}: not counted")
        return lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(line)


def offline_estimate(config: pytest.Config, settings: Settings, role: ProcessRole) -> Settings:
    """The settings of an estimate run (strict replay), with its plugin registered; usage
    errors under xdist and without a replay store."""
    if role is not ProcessRole.SOLE:
        raise pytest.UsageError("--karenina-estimate: runs in one process; drop -n")
    store = store_path(settings)
    if not store.is_file():
        raise pytest.UsageError(
            f"--karenina-estimate: no replay store at {store} (--karenina-replay-store names it)"
        )
    answers = settings.replay == "answers"
    config.pluginmanager.register(
        EstimatePlugin(settings.ci.prices, store.name, judge_only=answers), "karenina-estimate"
    )
    note = "estimate: strict replay, no call leaves the machine, no item runs"
    # Nothing is reported, so nothing the run would write may change: no export, baseline,
    # store pruning or GitHub output; no cap either (every item must run to be counted).
    ci = dataclasses.replace(
        settings.ci, max_cost=None, baseline=None, baseline_update=False, github=False
    )
    if answers:  # the judge calls as the answers' store recorded them (no judge store)
        return dataclasses.replace(
            settings, replay_note=note, judge_replay="strict", judge_replay_store=store,
            results=None, ci=ci,
        )  # fmt: skip
    return dataclasses.replace(
        settings, replay="strict", replay_chosen=True, replay_note=note, replay_prune=False,
        results=None, ci=ci,
    )  # fmt: skip
