"""The CI gating settings: a baseline, its update, its model pairs and what fails it, the
score tolerance, prices and the cost cap, the estimate, GitHub output."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_karenina.llm.assumed import DEFAULT_ANSWER_TOKENS
from pytest_karenina.plugin.options.ci_declare import (
    CI_OPTIONS,
    BaselineFailOn,
    GithubKnownFailures,
)
from pytest_karenina.plugin.options.results_path import (
    BASELINE_MARKERS,
    OutputPathError,
    check_output_path,
)
from pytest_karenina.plugin.options.spec import (
    Option,
    option_flag,
    option_number,
    option_value,
    sourced,
)
from pytest_karenina.results.cost import PriceError, PriceTable

DEFAULT_ANNOTATIONS = 10
"""GitHub shows at most 10 error annotations of a step."""


@dataclass(frozen=True)
class CiSettings:
    """How a run gates and reports for CI."""

    baseline: Path | None = None
    baseline_update: bool = False
    baseline_models: tuple[tuple[str, str], ...] = ()
    """``(NEW, OLD)``: compare the run's model NEW with the baseline's model OLD."""
    baseline_fail_on: BaselineFailOn = "regression"
    """Whether likely regressions fail the baseline gate too (``likely``)."""
    baseline_results: Path | None = None
    """The baseline run's results export, for the side by side of regressions."""
    score_tolerance: float = 0.0
    github: bool = False
    """Write ``::error`` annotations and the job summary (GitHub Actions)."""
    annotations: int = DEFAULT_ANNOTATIONS
    github_known_failures: GithubKnownFailures = "notice"
    """How a known failure is annotated (a failed question the baseline gate compared and did
    not count against the run): ``notice``, ``error`` or ``none`` (not at all)."""
    prices: PriceTable | None = None
    """USD per million tokens per model (``--karenina-prices`` files, ``karenina_prices``)."""
    max_cost: float | None = None
    """Do not start questions once the spent and in-flight cost reaches this (USD)."""
    estimate: bool = False
    """Print what a live run would cost (from the replay store) and run nothing."""
    estimate_answer_tokens: int = DEFAULT_ANSWER_TOKENS
    """The output tokens an estimate assumes for an answer the store has not recorded."""
    changed_since: str | None = None
    """Run only the questions that changed since this git revision."""
    history: Path | None = None
    """The run-history file this run is appended to (``--karenina-history``)."""
    history_keep: int | None = None
    """Prune the history to this benchmark's last N runs."""


def resolve_ci_settings(
    config: pytest.Config, checkpoints: Sequence[Path] = (), results: Path | None = None
) -> CiSettings:
    """Read the CI options (CLI > ini); bad values are usage errors naming the option.

    ``checkpoints`` and ``results``: the run's checkpoints and export, which the baseline an
    update writes must not be."""
    by_name = {option.name: sourced(config, option) for option in CI_OPTIONS}
    raw: dict[str, Any] = {name: option_value(config, opt) for name, opt in by_name.items()}

    def flag(name: str) -> bool | None:
        return option_flag(by_name[name], raw[name])

    def number(name: str, kind: type[int] | type[float], default: float) -> Any:
        value = raw[name]
        return default if value is None else option_number(by_name[name], value, kind, 0)

    baseline = None
    if raw["baseline"]:
        baseline = Path(str(raw["baseline"])).expanduser()
        baseline = baseline if baseline.is_absolute() else Path.cwd() / baseline
    update = bool(flag("baseline-update"))
    if update and baseline is None:
        raise pytest.UsageError(
            "--karenina-baseline-update: name the file with --karenina-baseline"
        )
    if update and baseline is not None:
        check_baseline_output(baseline, "--karenina-baseline", checkpoints, results)
    fail_on = _choice(by_name["baseline-fail-on"], raw["baseline-fail-on"])
    known = _choice(by_name["github-known-failures"], raw["github-known-failures"])
    try:
        mapping = parse_model_pairs(raw["baseline-model"] or ())
    except ValueError as exc:
        raise pytest.UsageError(f"--karenina-baseline-model: {exc}") from None
    if mapping and baseline is None:
        raise pytest.UsageError(
            "--karenina-baseline-model: name the baseline with --karenina-baseline"
        )
    baseline_results = None
    if raw["baseline-results"]:
        if baseline is None:
            label = by_name["baseline-results"].label
            raise pytest.UsageError(f"{label}: name the baseline with --karenina-baseline")
        baseline_results = Path(str(raw["baseline-results"])).expanduser()
        if not baseline_results.is_absolute():
            baseline_results = Path.cwd() / baseline_results
    github = flag("github")
    prices = _prices(config)
    max_cost = None if raw["max-cost"] is None else number("max-cost", float, 0.0)
    if max_cost is not None and prices is None:
        raise pytest.UsageError(
            "--karenina-max-cost: needs a price table (--karenina-prices FILE or karenina_prices)"
        )
    history = _path(raw["history"])
    keep = raw["history-keep"]
    keep = None if keep is None else option_number(by_name["history-keep"], keep, int, 1)
    if keep is not None and history is None:
        raise pytest.UsageError("--karenina-history-keep: name the file with --karenina-history")
    if history is not None and history in (*checkpoints, results, baseline):
        raise pytest.UsageError(
            f"--karenina-history {history}: is a checkpoint, the results export or the "
            "baseline of this run; give the history a file of its own"
        )
    return CiSettings(
        baseline=baseline,
        baseline_update=update,
        baseline_models=mapping,
        baseline_fail_on=cast("BaselineFailOn", fail_on or "regression"),
        baseline_results=baseline_results,
        score_tolerance=number("score-tolerance", float, 0.0),
        github=os.environ.get("GITHUB_ACTIONS") == "true" if github is None else github,
        annotations=number("github-annotations", int, DEFAULT_ANNOTATIONS),
        github_known_failures=cast("GithubKnownFailures", known or "notice"),
        prices=prices,
        max_cost=max_cost,
        estimate=bool(flag("estimate")),
        estimate_answer_tokens=_answer_tokens(
            by_name["estimate-answer-tokens"], raw["estimate-answer-tokens"]
        ),
        changed_since=str(raw["changed-since"]) if raw["changed-since"] else None,
        history=history,
        history_keep=keep,
    )


def _path(value: Any) -> Path | None:
    """A path option's value, absolute (relative to the directory pytest started in)."""
    if not value:
        return None
    path = Path(str(value)).expanduser()
    return path if path.is_absolute() else Path.cwd() / path


def _choice(option: Option, value: Any) -> str | None:
    """``value`` when it is one of ``option``'s choices (None when not given); a usage error
    naming the option otherwise."""
    if value is not None and value not in (option.choices or ()):
        choices = ", ".join(option.choices or ())
        raise pytest.UsageError(f"{option.label}: {value!r} is not one of {choices}")
    return None if value is None else str(value)


def _answer_tokens(option: Option, value: Any) -> int:
    """The answer length an estimate assumes: a whole number of tokens, at least one."""
    if value is None:
        return DEFAULT_ANSWER_TOKENS
    tokens: int = option_number(option, value, int, 1)
    return tokens


def parse_model_pairs(lines: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``NEW=OLD`` lines as ``(NEW, OLD)`` pairs; ValueError naming a line that is not one,
    or a NEW given twice."""
    pairs: dict[str, str] = {}
    for line in lines:
        new, sep, old = str(line).partition("=")
        new, old = new.strip(), old.strip()
        if not sep or not new or not old:
            raise ValueError(f"expected NEW=OLD (e.g. qwen3:8b=gpt-4.1-mini), got {line!r}")
        if pairs.get(new, old) != old:
            raise ValueError(f"{new!r} is mapped twice ({new}={pairs[new]}, {new}={old})")
        pairs[new] = old
    return tuple(pairs.items())


def check_baseline_output(
    path: Path, flag: str, checkpoints: Sequence[Path], results: Path | None
) -> None:
    """A usage error when an update must not write the baseline to ``path``: a checkpoint, the
    run's export, a file that is not a baseline, or no regular file."""
    inputs = [(checkpoint, "a checkpoint of this run") for checkpoint in checkpoints]
    if results is not None:
        inputs.append((results, "the results export of this run"))
    try:
        check_output_path(path, flag, inputs, "baseline", BASELINE_MARKERS)
    except OutputPathError as exc:
        raise pytest.UsageError(str(exc)) from None


def _prices(config: pytest.Config) -> PriceTable | None:
    """The ini table (``karenina_prices`` lines), then the ``--karenina-prices`` files."""
    table = None
    try:
        lines = config.getini("karenina_prices")
        if lines:
            table = PriceTable.from_lines(lines, "karenina_prices")
        for name in config.getoption("karenina_prices") or ():
            path = Path(str(name)).expanduser()
            found = PriceTable.from_file(path if path.is_absolute() else Path.cwd() / path)
            table = found if table is None else table.merged(found)
    except PriceError as exc:
        raise pytest.UsageError(f"--karenina-prices: {exc}") from None
    return table
