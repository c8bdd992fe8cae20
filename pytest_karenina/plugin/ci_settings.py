"""The CI gating settings: a baseline, its update, the score tolerance, GitHub output."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.ci_options import CI_OPTIONS
from pytest_karenina.plugin.option_spec import option_number, option_value, parse_bool

DEFAULT_ANNOTATIONS = 10
"""GitHub shows at most 10 error annotations of a step."""


@dataclass(frozen=True)
class CiSettings:
    """How a run gates and reports for CI."""

    baseline: Path | None = None
    baseline_update: bool = False
    score_tolerance: float = 0.0
    github: bool = False
    """Write ``::error`` annotations and the job summary (GitHub Actions)."""
    annotations: int = DEFAULT_ANNOTATIONS


def resolve_ci_settings(config: pytest.Config) -> CiSettings:
    """Read the CI options (CLI > ini); bad values are usage errors naming the option."""
    by_name = {option.name: option for option in CI_OPTIONS}
    raw: dict[str, Any] = {name: option_value(config, opt) for name, opt in by_name.items()}

    def flag(name: str) -> bool | None:
        value = raw[name]
        if value is None or isinstance(value, bool):
            return value
        return parse_bool(by_name[name].flag, str(value))

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
    github = flag("github")
    return CiSettings(
        baseline=baseline,
        baseline_update=update,
        score_tolerance=number("score-tolerance", float, 0.0),
        github=os.environ.get("GITHUB_ACTIONS") == "true" if github is None else github,
        annotations=number("github-annotations", int, DEFAULT_ANNOTATIONS),
    )
