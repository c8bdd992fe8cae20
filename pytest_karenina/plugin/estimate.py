"""``--karenina-estimate``: what a live run of the selected questions would call, use and cost.

Every selected item's pipeline runs under strict replay, so nothing leaves the machine. A call
the store has recorded is *measured*: the live run is taken to use what the store recorded for
it. A call it lacks (all of them without a store) gets an *assumed* reply
(``llm/assumed.py``): its prompt is counted at four characters a token, its reply is an answer
of ``--karenina-estimate-answer-tokens`` tokens (300 unless told) or a judge's JSON object the
size of its schema, and the pipeline goes on to its later calls with it. The estimate prints the
two parts apart and their sum. No item is reported as passed or failed: the run exits 0 (it
runs in one process, not under ``-n``) and writes nothing: no export, baseline, store pruning
or GitHub output, and the cost cap is off.

With ``--karenina-replay answers`` a run sends only its judge calls: the estimate counts those
(the recorded ones with the usage the store recorded, the others assumed) and none of the
answers; a question without a recorded answer sends nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.llm.assumed import (
    CHARS_PER_TOKEN,
    TOKENS_PER_MESSAGE,
    AssumedCall,
    AssumedTally,
)
from pytest_karenina.pipeline.retries import REPLAY_MISS
from pytest_karenina.plugin.collect.base import KareninaItem, karenina_items
from pytest_karenina.plugin.collect.items import QuestionItem
from pytest_karenina.plugin.options.preflight import recorded, shown
from pytest_karenina.plugin.options.settings import Settings, store_path
from pytest_karenina.plugin.process import ProcessRole
from pytest_karenina.plugin.stash import PREFETCHER_KEY
from pytest_karenina.results import VerificationResult
from pytest_karenina.results.cost import ANSWER_STAGE, Cost, PriceTable, results_cost

NOTE = (
    "estimate: strict replay, calls the store lacks assumed, no call leaves the machine, "
    "no item runs"
)
STOPPING = frozenset({"system", "retry"})
"""Failure groups that end an item's pipeline before its last call (errors, not verdicts)."""


@dataclass(frozen=True)
class Usage:
    """Calls, tokens and cost of some calls."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Cost = dataclasses.field(default_factory=Cost)

    def plus(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls, self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens, self.cost + other.cost,
        )  # fmt: skip

    def minus(self, other: Usage) -> Usage:
        """This usage without ``other``, a part of it (costs never below zero)."""
        cost = Cost(max(0.0, self.cost.answerer - other.cost.answerer),
                    max(0.0, self.cost.judge - other.cost.judge), self.cost.unpriced)  # fmt: skip
        return Usage(
            self.calls - other.calls, self.input_tokens - other.input_tokens,
            self.output_tokens - other.output_tokens, cost,
        )  # fmt: skip

    def describe(self, priced: bool, about: str = "") -> str:
        """``4 calls, 6000 tokens in, 300 out`` (and the cost); ``about``: ``~`` before each
        number that is assumed in part."""
        text = (f"{counted(self.calls, 'call')}, {about}{self.input_tokens} tokens in, "
                f"{about}{self.output_tokens} out")  # fmt: skip
        if priced:
            text += (f", {about}${self.cost.total:.4f} (answerer ${self.cost.answerer:.4f}, "
                     f"judge ${self.cost.judge:.4f})")  # fmt: skip
        return text


def counted(number: int, what: str) -> str:
    return f"{number} {what}{'' if number == 1 else 's'}"


def item_usage(
    results: Sequence[VerificationResult], prices: PriceTable | None, judge_only: bool
) -> Usage:
    """Tokens and cost of one item's calls, each replicate's answer once (the results of its
    judges share it; each turn of a scenario is an answer of its own); ``judge_only``: without
    the answers."""
    tokens_in = tokens_out = 0
    answered: set[object] = set()
    for result in results:
        stages = (result.template.usage_metadata if result.template else None) or {}
        for stage, entry in stages.items():
            if stage == "total" or not isinstance(entry, Mapping):
                continue
            if stage == ANSWER_STAGE:
                meta = result.metadata
                replicate = (meta.answering.model_name, meta.replicate, meta.scenario_turn)
                if judge_only or replicate in answered:
                    continue
                answered.add(replicate)
            tokens_in += int(entry.get("input_tokens") or 0)
            tokens_out += int(entry.get("output_tokens") or 0)
    cost = results_cost(results, prices) if prices is not None else Cost()
    if judge_only:
        cost = Cost(0.0, cost.judge, cost.unpriced)
    return Usage(0, tokens_in, tokens_out, cost)


def assumed_usage(calls: Iterable[AssumedCall], prices: PriceTable | None) -> Usage:
    """The assumed calls' usage, priced by their models (an answer is the answerer's cost)."""
    usage = Usage()
    for call in calls:
        price = prices.lookup(call.label) if prices is not None else None
        usd = price.of(call.input_tokens, call.output_tokens) if price is not None else 0.0
        unpriced = frozenset({call.label}) if prices is not None and price is None else frozenset()
        cost = Cost(usd, 0.0, unpriced) if call.answering else Cost(0.0, usd, unpriced)
        usage = usage.plus(Usage(1, call.input_tokens, call.output_tokens, cost))
    return usage


def _answered(results: Iterable[VerificationResult]) -> bool:
    """Every result has its answer (answers mode: the store had it)."""
    return all(r.template is not None and r.template.raw_llm_response for r in results)


def _stopped(results: Iterable[VerificationResult]) -> str | None:
    """Why the item's pipeline ended before its last call (an error, a missed agent run),
    or None."""
    for result in results:
        failure = result.metadata.failure
        if failure is None:
            continue
        if failure.group in STOPPING or (failure.details or {}).get(REPLAY_MISS):
            return failure.reason
    return None


@dataclass
class _Tally:
    """What the estimate found, item by item."""

    items: int = 0
    recorded: int = 0
    assumed: int = 0
    unanswered: int = 0
    stopped: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    usage: Usage = dataclasses.field(default_factory=Usage)
    keys: set[tuple[str | None, int | None]] = dataclasses.field(default_factory=set)


class EstimatePlugin:
    """Runs the selected items' pipelines offline and prints the estimate instead of
    running the items."""

    def __init__(
        self, prices: PriceTable | None, store: Path, answer_tokens: int,
        judge_only: bool = False,
    ) -> None:  # fmt: skip
        self.prices = prices
        self.store = store
        self.has_store = recorded(store)
        self.answer_tokens = answer_tokens
        self.judge_only = judge_only
        """Answers mode: count the judge calls only (the answers come from the store)."""
        self.lines: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        prefetcher = session.config.stash.get(PREFETCHER_KEY, None)
        if prefetcher is None:  # --collect-only and friends: nothing to estimate
            return True
        tally = AssumedTally() if prefetcher.assumed is None else prefetcher.assumed
        found = _Tally()
        # Questions and the scenarios that loaded (each turn as the replies route it).
        items = karenina_items(session.items)
        for item in (i for i in items if isinstance(i, QuestionItem) or i.runnable):
            self._count(found, item, self._results(prefetcher, item), tally)
        # Only the assumed calls of items that were counted (an item whose pipelines raised
        # has no results to take them from).
        assumed = assumed_usage((c for c in tally.calls() if c.key in found.keys), self.prices)
        store = prefetcher.judge_replay if self.judge_only else prefetcher.replay
        calls = len(store.used_keys()) if store is not None else 0
        measured = dataclasses.replace(found.usage.minus(assumed), calls=calls)
        self.lines = self._describe(found, measured, assumed, tally)
        return True

    def _count(
        self, found: _Tally, item: KareninaItem, results: list[VerificationResult] | str,
        tally: AssumedTally,
    ) -> None:  # fmt: skip
        found.items += 1
        if isinstance(results, str):
            found.stopped.append((item.name, results))
            return
        if self.judge_only and not _answered(results):
            found.unanswered += 1  # error:replay in answers mode, which sends nothing for it
            return
        found.usage = found.usage.plus(item_usage(results, self.prices, self.judge_only))
        keys = {(r.metadata.question_id, r.metadata.replicate) for r in results}
        found.keys |= keys
        reason = _stopped(results)
        if reason is not None:
            found.stopped.append((item.name, reason))
        if keys & tally.questions():
            found.assumed += 1
        elif reason is None:
            found.recorded += 1

    @staticmethod
    def _results(prefetcher: Any, item: KareninaItem) -> list[VerificationResult] | str:
        """The item's results, or why there are none."""
        try:
            return list(prefetcher.result_of(item).results)
        except Exception as exc:  # an invalid stage list: nothing measured for this item
            return f"{type(exc).__name__}: {exc}"

    def _describe(
        self, found: _Tally, measured: Usage, assumed: Usage, tally: AssumedTally
    ) -> list[str]:
        priced = self.prices is not None
        what, run = "a live run", "a live run"
        if self.judge_only:
            what, run = "the judge calls of --karenina-replay answers, all live", "its judge calls"
        source = f"from {self.store.name}"
        if not self.has_store:
            source = f"nothing recorded at {shown(self.store)}: every call assumed"
        lines = [
            f"karenina estimate of {what} ({source}; no call was sent): "
            f"{counted(found.items, 'item')}, {found.recorded} fully recorded, "
            f"{found.assumed} with calls assumed"
        ]
        if found.unanswered:
            lines.append(f"  {found.unanswered} without a recorded answer (error:replay in "
                         "answers mode, no judge call)")  # fmt: skip
        recorded_part = measured.describe(priced) if measured.calls else "none"
        lines.append(f"  measured (the usage the store recorded): {recorded_part}")
        if assumed.calls:
            lines.append(f"  assumed (calls the store lacks): {assumed.describe(priced, '~')}")
            lines.extend(self._assumptions(tally, found.keys))
        if found.stopped:
            name, reason = found.stopped[0]
            lines.append(f"  {counted(len(found.stopped), 'item')} stopped early, their later "
                         f"calls not counted (first: {name}: {reason})")  # fmt: skip
        about = "~" if assumed.calls else ""
        lines.append(f"  {run}: {about}{measured.plus(assumed).describe(priced, about)}")
        unpriced = measured.cost.unpriced | assumed.cost.unpriced
        if priced and unpriced:
            lines.append(f"  no price for {', '.join(sorted(unpriced))}: not counted")
        return lines

    def _assumptions(self, tally: AssumedTally, keys: set[Any]) -> list[str]:
        """How the assumed part was made: the answers' length, the judges' replies, the
        tokens."""
        lines = []
        for answering in (True, False):
            calls = [c for c in tally.calls() if c.answering is answering and c.key in keys]
            if not calls:
                continue
            prompts = sum(c.input_tokens for c in calls)
            replies = sum(c.output_tokens for c in calls)
            if answering:
                lines.append(f"    {counted(len(calls), 'answer')}: prompts ~{prompts} tokens; "
                             f"replies {self.answer_tokens} tokens each (--karenina-estimate-"
                             "answer-tokens), quoted again by the judge prompts")  # fmt: skip
            else:
                lines.append(f"    {counted(len(calls), 'judge call')}: prompts ~{prompts} "
                             f"tokens; replies ~{replies} tokens (a JSON object of each reply's "
                             "schema)")  # fmt: skip
        lines.append(f"    tokens counted as {CHARS_PER_TOKEN} characters each, plus "
                     f"{TOKENS_PER_MESSAGE} a message")  # fmt: skip
        return lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(line)


def offline_estimate(config: pytest.Config, settings: Settings, role: ProcessRole) -> Settings:
    """The settings of an estimate run (strict replay, the calls the store lacks assumed), with
    its plugin registered; a usage error under xdist."""
    if role is not ProcessRole.SOLE:
        raise pytest.UsageError("--karenina-estimate: runs in one process; drop -n")
    store = store_path(settings)
    answers = settings.replay == "answers"
    plugin = EstimatePlugin(
        settings.ci.prices, store, settings.ci.estimate_answer_tokens, judge_only=answers
    )
    config.pluginmanager.register(plugin, "karenina-estimate")
    # Nothing is reported, so nothing the run would write may change: no export, baseline,
    # store pruning or GitHub output; no cap either (every item must run to be counted).
    ci = dataclasses.replace(
        settings.ci, max_cost=None, baseline=None, baseline_update=False, github=False
    )
    if answers:  # the judge calls as the answers' store recorded them (no judge store)
        return dataclasses.replace(
            settings, replay_note=NOTE, judge_replay="strict", judge_replay_store=store,
            results=None, ci=ci,
        )  # fmt: skip
    return dataclasses.replace(
        settings, replay="strict", replay_chosen=True, replay_note=NOTE, replay_prune=False,
        results=None, ci=ci,
    )  # fmt: skip
