"""Scenario items: one per scenario x answering model x replicate, beside the question items.

A scenario that does not load still makes its items, which error with the load error naming
the checkpoint, scenario and field: the file's other items run.
Each execution runs whole in one prefetcher job (its turns in order); the item's verdict is
:func:`~pytest_karenina.plugin.verdict.scenario.scenario_verdict` of each execution it ran
(one per parsing model and replicate), the worst one deciding; under a replicate policy
(``--karenina-replicate-policy``), an error still errors the item, and otherwise the policy
decides over the replicates (a replicate passes when every parsing model's execution did).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from pytest_karenina.plugin.collect.base import KareninaItem
from pytest_karenina.plugin.run.cost_cap import CostCapReached
from pytest_karenina.plugin.stash import PREFETCHER_KEY, SETTINGS_KEY
from pytest_karenina.plugin.verdict.explain import PipelineError
from pytest_karenina.plugin.verdict.replicates import ReplicatePolicy
from pytest_karenina.plugin.verdict.scenario import ScenarioVerdict, scenario_verdict
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.traits import Rubric
from pytest_karenina.scenarios import ScenarioDefinition, ScenarioError, ScenarioExecutionResult

PREFIX = "scenario:"
_RANK = {"pass": 0, "fail": 1, "error": 2}


class ScenarioFailed(Exception):
    """A scenario execution whose verdict is a failure; its explanation is the report."""

    def __init__(self, verdict: ScenarioVerdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


def scenario_name(raw: Any, index: int) -> str:
    """A scenario's name in its checkpoint (``#<index>`` when it has none)."""
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return name if isinstance(name, str) and name else f"#{index}"


def scenario_items(
    parent: pytest.File,
    loaded: Sequence[ScenarioDefinition | ScenarioError],
    raw: Sequence[Any],
    combinations: Sequence[Any],
    rubrics: tuple[Rubric | None, Rubric | None],
    slugify: Any,
) -> Iterator[ScenarioItem]:
    """The items of a checkpoint's scenarios (``combinations``: its ``ModelReplicate``\\ s)."""
    taken: set[str] = set()
    for index, (scenario, data) in enumerate(zip(loaded, raw, strict=True)):
        name = scenario_name(data, index)
        base = PREFIX + slugify(name)
        node, number = base, 2
        while node in taken:
            node, number = f"{base}-{number}", number + 1
        taken.add(node)
        for combination in combinations:
            label = getattr(combination, "label", None)
            full = node if label is None else f"{node}[{label}]"
            yield ScenarioItem.from_parent(
                parent, name=full, nodeid=f"{parent.nodeid}::{full}", scenario=scenario,
                scenario_name=name, model_replicate=combination, rubrics=rubrics, raw=data,
            )  # fmt: skip


def by_policy(
    verdicts: Sequence[ScenarioVerdict], replicates: int, policy: ReplicatePolicy
) -> ScenarioVerdict:
    """The item's verdict under ``policy``: ``verdicts`` are per parsing model, then per
    replicate (the order the executions ran in), none of them an error."""
    passed = [
        all(v.outcome == "pass" for v in verdicts[index::replicates]) for index in range(replicates)
    ]
    line = f"replicate policy {policy}: {sum(passed)}/{replicates} replicates passed"
    if policy.passes(passed):
        return next(v for v in verdicts if v.outcome == "pass")
    failed = next(v for v in verdicts if v.outcome == "fail")
    return dataclasses.replace(failed, reason=f"{failed.reason}; {line}")


class ScenarioItem(KareninaItem):
    """One scenario x answering model x replicate; its executions run in the prefetcher."""

    def __init__(
        self,
        *,
        scenario: ScenarioDefinition | ScenarioError,
        scenario_name: str,
        model_replicate: Any,
        rubrics: tuple[Rubric | None, Rubric | None] = (None, None),
        raw: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.raw = raw
        """The scenario's checkpoint form (for its fingerprint)."""
        self.scenario_name = scenario_name
        self.model_replicate = model_replicate
        self.global_rubric, self.dynamic_rubric = rubrics
        self.add_marker(pytest.mark.karenina)
        self.extra_keyword_matches.add(scenario_name)
        answering = getattr(model_replicate, "answering", None)
        if answering is not None and answering.id:
            self.extra_keyword_matches.add(answering.id)
        self.runnable = isinstance(scenario, ScenarioDefinition)
        self.results: list[VerificationResult] = []
        self.executions: list[ScenarioExecutionResult] = []
        self.verdict: ScenarioVerdict | None = None
        self.cost_capped = False

    @property
    def selection_id(self) -> str:
        return PREFIX + self.scenario_name

    def setup(self) -> None:
        """Wait for the executions; a scenario that did not load, an execution that errored
        or a criterion that could not be evaluated is an error of the item."""
        if isinstance(self.scenario, ScenarioError):
            raise PipelineError(str(self.scenario))
        prefetcher = self.config.stash.get(PREFETCHER_KEY, None)
        if prefetcher is None:  # --setup-only / --setup-plan
            return
        self.cost_capped = False
        try:
            run = prefetcher.result_of(self)
        except CostCapReached as exc:
            self.cost_capped = True
            pytest.skip(str(exc))
        finally:
            logged = prefetcher.logs.take(self.nodeid)
            if logged:
                self.add_report_section("setup", "log", logged)
        self.results, self.executions = run.results, run.executions
        for result in self.results:
            self.ihook.pytest_karenina_verification_result(item=self, result=result)
        verdicts = [scenario_verdict(e, self.scenario) for e in self.executions]
        self.verdict = max(verdicts, key=lambda v: _RANK[v.outcome], default=None)
        if self.verdict is not None and self.verdict.outcome == "error":
            raise PipelineError(self.verdict.explanation())
        runs = getattr(self.model_replicate, "replicates", ())
        if runs and self.verdict is not None and self.verdict.outcome == "fail":
            policy = self.config.stash[SETTINGS_KEY].replicate_policy
            self.verdict = by_policy(verdicts, len(runs), policy)

    def teardown(self) -> None:
        self.results, self.executions, self.verdict = [], [], None

    def runtest(self) -> None:
        if self.verdict is not None and self.verdict.outcome == "fail":
            raise ScenarioFailed(self.verdict)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return excinfo.value.verdict.explanation()
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, 0, f"scenario {self.scenario_name}"
