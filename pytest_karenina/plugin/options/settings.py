"""Frozen Settings resolved once from CLI > ini > ``--karenina-config`` preset > defaults.

Settings hold plain values only (xdist workers resolve their own from the same argv);
:mod:`.run_config` builds the run's VerificationConfig from them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_karenina.config.choices import (
    DeepJudgmentMode,
    DeepJudgmentRubricMode,
    EvaluationMode,
    FlakyMode,
    GateOn,
    ReplayMode,
    RubricStrategy,
    RunReplayMode,
    SupportedInterface,
)
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.provider_keys import models_without_keys
from pytest_karenina.plugin.options.ci_settings import CiSettings, resolve_ci_settings
from pytest_karenina.plugin.options.declare import CORE_OPTIONS, HtmlTrace
from pytest_karenina.plugin.options.replay_settings import (
    JUDGE_STORE_SUFFIX,
    STORE_SUFFIX,
    check_store,
    default_store,
    judge_key_note,
    judge_replay_mode,
)
from pytest_karenina.plugin.options.results_path import check_results_path
from pytest_karenina.plugin.options.spec import option_flag, option_number, option_value, sourced
from pytest_karenina.plugin.verdict.replicates import ReplicatePolicy, ReplicatePolicyError
from pytest_karenina.results.cost import PriceTable
from pytest_karenina.rubrics.gates import GateSpecError, RubricGatePolicy, parse_gate_rules

DEFAULT_CONCURRENCY = 8
DEFAULT_PARSING = "openai:gpt-4.1-mini"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Settings:
    """The plugin's effective options (``None``: not set anywhere, the preset or default holds)."""

    checkpoints: tuple[Path, ...]
    """The checkpoint files to collect."""
    preset: Path | None
    answering_models: tuple[str, ...]
    parsing_models: tuple[str, ...]
    interface: SupportedInterface | None
    endpoint: str | None
    mode: EvaluationMode | None
    replicates: int | None
    judge_replicates: int | None
    """Times each parsing model judges each answer (None: the preset's, default 1)."""
    replicate_policy: ReplicatePolicy
    flaky: FlakyMode
    compare_to: str | None
    """The reference answering model (its id) of the paired model comparison."""
    shard: tuple[int, int] | None
    """``(I, N)``: run only the I-th of N shards of the questions."""
    abstention: bool | None
    sufficiency: bool | None
    embedding_check: bool | None
    embedding_check_model: str | None
    embedding_check_threshold: float | None
    concurrency: int
    """Pipelines run at once per process."""
    replay: RunReplayMode
    """The replay mode; ``answers``: answering calls strictly from the store (see
    :attr:`store_mode`), judge calls per :attr:`judge_replay`."""
    replay_store: Path | None
    workspace_root: Path | None
    """Agentic parsing's workspace root (None: each checkpoint's directory)."""
    results: Path | None
    html_trace: HtmlTrace
    """Which items carry their trace in the HTML report."""
    include_unfinished: bool
    min_pass_rate: float | None
    gate_on: GateOn
    replay_chosen: bool = True
    """Whether the replay mode was given (CLI or ini); else it is chosen from the keys at hand."""
    replay_note: str | None = None
    """Why the replay mode was chosen for the user (shown in the report header)."""
    replay_prune: bool = False
    """Drop store entries the run did not use, at the end of a run."""
    judge_replay: ReplayMode = "off"
    """With ``replay`` answers: the mode of the judge calls' own store (off: live calls)."""
    judge_replay_store: Path | None = None
    """The judge calls' store (None: ``<checkpoint>.judge.replay.jsonl``)."""
    llm_timeout: float | None = None
    """Total seconds per LLM call (None: the config's ``max_call_seconds``)."""
    request_timeout: float | None = None
    """Seconds per LLM request (None: the config's ``request_timeout``)."""
    template_timeout: float | None = None
    """Seconds template code may run per step (None: the config's ``template_time_limit``)."""
    max_retries: int | None = None
    """Cap on the retries of every error class (None: the retry policy's budgets)."""
    max_concurrent_requests: int | None = None
    requests_per_minute: float | None = None
    workers: int = 1
    """xdist workers sharing the request limits (1 without xdist)."""
    rubric_strategy: RubricStrategy | None = None
    """None: the preset's or Karenina's default, batch."""
    deep_judgment: DeepJudgmentMode | None = None
    """None: the preset's ``deep_judgment_mode`` (default disabled)."""
    deep_judgment_rubric: DeepJudgmentRubricMode | None = None
    """None: the preset's ``deep_judgment_rubric_mode`` (default disabled)."""
    rubric_gate: bool = False
    """template_and_rubric: gated rubric traits must pass too."""
    rubric_gates: tuple[str, ...] = ()
    """Gate rules as written (checked when the settings are resolved)."""
    rubric_score_threshold: float = 0.5
    """Normalised score a score trait needs to pass by default."""
    judge_check: Path | None = None
    """A labels file: its labelled answers are the items, judged and compared with people."""
    min_judge_kappa: float | None = None
    """With ``judge_check``: the least Cohen's kappa every judge must reach."""
    ci: CiSettings = dataclasses.field(default_factory=CiSettings)
    """Baselines and CI output."""
    batch: bool = False
    """Batchable LLM calls go through the provider's batch API (docs/batch.md)."""
    batch_wait: float | None = None
    """Seconds a call waits for its batch (None: the provider's completion window)."""
    batch_poll: float = 15.0
    """Seconds between two polls of a batch."""
    live_prices: PriceTable | None = None
    """The price table at live prices (in batch mode ``ci.prices`` holds the batch prices)."""

    @property
    def store_mode(self) -> ReplayMode:
        """The replay store's mode: ``answers`` reads it strictly."""
        return "strict" if self.replay == "answers" else self.replay

    def rubric_gating(self, mode: EvaluationMode) -> bool:
        """Whether rubric traits take part in verdicts under evaluation ``mode``: always in
        rubric_only, in template_and_rubric with --karenina-rubric-gate, never otherwise."""
        return mode == "rubric_only" or (mode == "template_and_rubric" and self.rubric_gate)

    def with_default_replay(self, vconfig: VerificationConfig) -> Settings:
        """Strict replay when no replay mode was given and some model lacks its API key in
        the environment: a CI job without keys replays its recordings instead of failing
        on every call. In answers mode, a note when the live judge has no key."""
        if self.replay == "answers":
            note = judge_key_note(self.replay, self.judge_replay, vconfig.stamped_models()[1])
            return dataclasses.replace(self, replay_note=note) if note else self
        if self.replay_chosen:
            return self
        answering, parsing = vconfig.stamped_models()
        missing = models_without_keys([*answering, *parsing])
        if not missing:
            return self
        model, variable = missing[0]
        note = (
            f"replay strict by default: no {variable} in the environment for {model} "
            "(--karenina-replay chooses another mode)"
        )
        return dataclasses.replace(self, replay="strict", replay_note=note)

    def gate_policy(self) -> RubricGatePolicy:
        """The rubric gate policy (rules were validated when the settings were resolved)."""
        return RubricGatePolicy(self.rubric_score_threshold, parse_gate_rules(self.rubric_gates))


def resolve_settings(config: pytest.Config, checkpoints: tuple[Path, ...]) -> Settings:
    """Read every option once; bad values are ``pytest.UsageError`` naming option and choices
    (the flag, or the ini key and file, or ``-o KEY``, whichever gave the value)."""
    raw = {option.name: option_value(config, option) for option in CORE_OPTIONS}
    by_name = {option.name: sourced(config, option) for option in CORE_OPTIONS}
    for name, value in raw.items():
        option = by_name[name]
        if option.choices and value is not None and value not in option.choices:
            raise pytest.UsageError(
                f"{option.label}: {value!r} is not one of {', '.join(option.choices)}"
            )

    def label(name: str) -> str:
        return by_name[name].label

    def flag(name: str) -> bool | None:
        return option_flag(by_name[name], raw[name])

    def number(name: str, kind: type[int] | type[float], low: float) -> Any:
        value = raw[name]
        return None if value is None else option_number(by_name[name], value, kind, low)

    rate = number("min-pass-rate", float, 0.0)
    if rate is not None and rate > 1:
        raise pytest.UsageError(f"{label('min-pass-rate')}: must be between 0 and 1, got {rate}")
    threshold = number("embedding-check-threshold", float, 0.0)
    if threshold is not None and threshold > 1:
        raise pytest.UsageError(
            f"{label('embedding-check-threshold')}: must be between 0 and 1, got {threshold}"
        )

    def path(name: str) -> Path | None:
        value = raw[name]
        if value is None:
            return None
        candidate = Path(str(value)).expanduser()
        return candidate if candidate.is_absolute() else Path.cwd() / candidate

    score_threshold = number("rubric-score-threshold", float, 0.0)
    if score_threshold is not None and score_threshold > 1:
        raise pytest.UsageError(
            f"{label('rubric-score-threshold')}: must be between 0 and 1, got {score_threshold}"
        )
    judge_check, min_kappa = path("judge-check"), number("min-judge-kappa", float, -1.0)
    if min_kappa is not None and (min_kappa > 1 or judge_check is None):
        why = f"must be between -1 and 1, got {min_kappa}" if min_kappa > 1 else ""
        raise pytest.UsageError(
            f"{label('min-judge-kappa')}: {why or 'needs --karenina-judge-check LABELS'}"
        )
    rubric_gates = tuple(raw["rubric-gates"] or ())
    _check_gate_rules(rubric_gates, label("rubric-gates"))

    try:
        shard = parse_shard(str(raw["shard"])) if raw["shard"] else None
    except ValueError as exc:
        raise pytest.UsageError(f"{label('shard')}: {exc}") from None
    try:
        policy = ReplicatePolicy.parse(raw["replicate-policy"])
    except ReplicatePolicyError as exc:
        raise pytest.UsageError(f"{label('replicate-policy')}: {exc}") from None

    preset = path("config")
    if preset is not None and not preset.is_file():
        raise pytest.UsageError(f"{label('config')}: no such file {preset}")
    results = path("results")
    if results is not None:
        check_results_path(results, checkpoints)
    replay = cast("RunReplayMode", raw["replay"] or "off")
    replay_store = path("replay-store")
    answers_store = replay_store or default_store(checkpoints, STORE_SUFFIX)
    if replay != "off":
        check_store(label("replay-store"), answers_store)
    judge_store = path("judge-replay-store")
    judge_replay = judge_replay_mode(
        replay, cast("ReplayMode | None", raw["judge-replay"]), judge_store, checkpoints,
        answers_store, bool(flag("replay-prune")),
    )  # fmt: skip
    ci, batch = resolve_ci_settings(config, checkpoints, results), bool(flag("batch"))
    return Settings(
        checkpoints=checkpoints,
        preset=preset,
        answering_models=tuple(raw["answering-model"] or ()),
        parsing_models=tuple(raw["parsing-model"] or ()),
        interface=cast("SupportedInterface | None", raw["interface"]),
        endpoint=raw["endpoint"],
        mode=cast("EvaluationMode | None", raw["mode"]),
        replicates=number("replicates", int, 1),
        judge_replicates=number("judge-replicates", int, 1),
        replicate_policy=policy,
        flaky=cast("FlakyMode", raw["flaky"] or "policy"),
        compare_to=str(raw["compare-to"]) if raw["compare-to"] else None,
        shard=shard,
        abstention=flag("abstention"),
        sufficiency=flag("sufficiency"),
        embedding_check=flag("embedding-check"),
        embedding_check_model=raw["embedding-check-model"],
        embedding_check_threshold=threshold,
        concurrency=number("concurrency", int, 1) or DEFAULT_CONCURRENCY,
        replay=replay,
        replay_chosen=raw["replay"] is not None,
        replay_prune=bool(flag("replay-prune")),
        replay_store=replay_store,
        judge_replay=judge_replay,
        judge_replay_store=judge_store,
        workspace_root=path("workspace-root"),
        results=results,
        html_trace=cast("HtmlTrace", raw["html-trace"] or "failed"),
        include_unfinished=bool(flag("include-unfinished")),
        min_pass_rate=rate,
        gate_on=cast("GateOn", raw["gate-on"] or "point"),
        llm_timeout=number("llm-timeout", float, 0.001),
        request_timeout=number("request-timeout", float, 0.001),
        max_retries=number("max-retries", int, 0),
        template_timeout=number("template-timeout", float, 0.001),
        max_concurrent_requests=number("max-concurrent-requests", int, 1),
        requests_per_minute=number("requests-per-minute", float, 0.001),
        workers=_xdist_workers(config),
        rubric_strategy=cast("RubricStrategy | None", raw["rubric-strategy"]),
        deep_judgment=cast("DeepJudgmentMode | None", raw["deep-judgment"]),
        deep_judgment_rubric=cast("DeepJudgmentRubricMode | None", raw["deep-judgment-rubric"]),
        rubric_gate=bool(flag("rubric-gate")),
        rubric_gates=rubric_gates,
        rubric_score_threshold=0.5 if score_threshold is None else score_threshold,
        judge_check=judge_check,
        min_judge_kappa=min_kappa,
        ci=_batch_priced(ci, batch),
        batch=batch,
        live_prices=ci.prices,
        batch_wait=number("batch-wait", float, 0.001),
        batch_poll=number("batch-poll", float, 0.001) or 15.0,
    )


def _batch_priced(ci: CiSettings, batch: bool) -> CiSettings:
    """In batch mode the price table is the batch prices (the cost cap, the estimate and the
    summary count them); :attr:`Settings.live_prices` keeps the live ones."""
    if not batch or ci.prices is None:
        return ci
    return dataclasses.replace(ci, prices=ci.prices.batched())


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; raises ValueError naming the form."""
    match = _SHARD.match(text)
    if match is None or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise ValueError(f"expected I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
    return int(match.group(1)), int(match.group(2))


def store_path(settings: Settings) -> Path:
    """``--karenina-replay-store``, else ``<first checkpoint>.replay.jsonl`` beside it."""
    if settings.replay_store is not None:
        return settings.replay_store
    return default_store(settings.checkpoints, STORE_SUFFIX)


def judge_store_path(settings: Settings) -> Path:
    """``--karenina-judge-replay-store``, else ``<first checkpoint>.judge.replay.jsonl``."""
    if settings.judge_replay_store is not None:
        return settings.judge_replay_store
    return default_store(settings.checkpoints, JUDGE_STORE_SUFFIX)


def _xdist_workers(config: pytest.Config) -> int:
    """How many xdist workers share this run, seen from a worker (1 elsewhere).

    ``config.workerinput`` exists only in xdist workers, so a pytest run started from inside
    a worker (whose environment says ``PYTEST_XDIST_WORKER_COUNT``) is not mistaken for one.
    """
    workerinput = getattr(config, "workerinput", None)
    if not isinstance(workerinput, dict):
        return 1
    try:
        return max(1, int(workerinput.get("workercount", 1)))
    except (TypeError, ValueError):
        return 1


def _check_gate_rules(rules: tuple[str, ...], label: str) -> None:
    if not rules:
        return
    try:
        parse_gate_rules(rules)
    except GateSpecError as exc:
        raise pytest.UsageError(f"{label}: {exc}") from None
