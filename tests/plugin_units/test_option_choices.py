"""Option declarations: choices come from the Literal types, which Settings uses too."""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

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
from pytest_karenina.plugin.options.ci_declare import (
    CI_OPTIONS,
    BaselineFailOn,
    GithubKnownFailures,
)
from pytest_karenina.plugin.options.ci_settings import CiSettings
from pytest_karenina.plugin.options.declare import (
    BOOL_WORDS,
    CORE_OPTIONS,
    OPTIONS,
    HtmlTrace,
    add_options,
    parse_bool,
)
from pytest_karenina.plugin.options.settings import Settings

CHOICES: dict[str, Any] = {
    "mode": EvaluationMode,
    "interface": SupportedInterface,
    "replay": RunReplayMode,
    "judge-replay": ReplayMode,
    "html-trace": HtmlTrace,
    "rubric-strategy": RubricStrategy,
    "deep-judgment": DeepJudgmentMode,
    "deep-judgment-rubric": DeepJudgmentRubricMode,
    "gate-on": GateOn,
    "flaky": FlakyMode,
    "baseline-fail-on": BaselineFailOn,
    "github-known-failures": GithubKnownFailures,
}
"""Every option with choices and the Literal it takes them from."""


def _literal_of(annotation: Any) -> Any:
    """The Literal inside ``annotation`` (itself, or the one member of ``X | None``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        (literal,) = [arg for arg in get_args(annotation) if arg is not type(None)]
        return literal
    return annotation


@dataclass
class FakeGroup:
    added: dict[str, dict[str, Any]] = field(default_factory=dict)

    def addoption(self, flag: str, **kwargs: Any) -> None:
        self.added[flag] = kwargs


@dataclass
class FakeParser:
    """Records option and ini declarations."""

    group: FakeGroup = field(default_factory=FakeGroup)
    groups: list[tuple[str, str]] = field(default_factory=list)
    ini: dict[str, dict[str, Any]] = field(default_factory=dict)

    def getgroup(self, name: str, description: str) -> FakeGroup:
        self.groups.append((name, description))
        return self.group

    def addini(self, name: str, **kwargs: Any) -> None:
        self.ini[name] = kwargs


def _declared() -> FakeParser:
    parser = FakeParser()
    add_options(parser)  # type: ignore[arg-type]
    return parser


def test_options_with_choices_are_exactly_the_known_ones() -> None:
    """No option gains or loses its choices unnoticed."""
    assert {option.name for option in OPTIONS if option.choices} == set(CHOICES)


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_choices_are_the_literal_values(name: str) -> None:
    """Each option's choices equal the values of its Literal, in order."""
    (option,) = [option for option in OPTIONS if option.name == name]
    assert get_origin(CHOICES[name]) is Literal
    assert option.choices == get_args(CHOICES[name])


def test_literal_values() -> None:
    """The value sets themselves (a change here is a change of the CLI)."""
    assert get_args(EvaluationMode) == ("template_only", "template_and_rubric", "rubric_only")
    assert get_args(ReplayMode) == ("off", "record", "replay", "strict")
    assert get_args(RunReplayMode) == ("off", "record", "replay", "strict", "answers")
    assert get_args(SupportedInterface) == (
        "langchain", "openai_endpoint", "openrouter", "claude_tool", "manual",
        "langchain_deep_agents", "claude_agent_sdk",
    )  # fmt: skip
    assert get_args(RubricStrategy) == ("batch", "sequential")
    assert get_args(HtmlTrace) == ("failed", "all", "none")
    assert get_args(BaselineFailOn) == ("regression", "likely")
    assert get_args(GithubKnownFailures) == ("notice", "error", "none")


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_settings_fields_use_the_same_literal(name: str) -> None:
    """The Settings field of an option with choices (CiSettings' for a CI option) is typed with
    that option's Literal."""
    hints = get_type_hints(Settings) | get_type_hints(CiSettings)
    assert _literal_of(hints[name.replace("-", "_")]) == CHOICES[name]


def test_settings_field_types() -> None:
    """Optional where "not given" must be told apart; replay and html_trace always set."""
    hints = get_type_hints(Settings)
    assert hints["mode"] == EvaluationMode | None
    assert hints["interface"] == SupportedInterface | None
    assert hints["rubric_strategy"] == RubricStrategy | None
    assert hints["replay"] == RunReplayMode
    assert hints["judge_replay"] == ReplayMode
    assert hints["html_trace"] == HtmlTrace


def test_every_option_has_a_settings_field() -> None:
    """Each ``--karenina-<name>`` lands in a Settings field (the models are plural there,
    the preset is ``preset``)."""
    fields = {f.name for f in dataclasses.fields(Settings)}
    renamed = {
        "answering-model": "answering_models",
        "parsing-model": "parsing_models",
        "config": "preset",
    }
    missing = [
        option.name
        for option in CORE_OPTIONS
        if renamed.get(option.name, option.name.replace("-", "_")) not in fields
    ]
    assert missing == []
    ci_fields = {f.name for f in dataclasses.fields(CiSettings)}
    ci_renamed = {"github-annotations": "annotations", "baseline-model": "baseline_models"}
    assert [
        option.name
        for option in CI_OPTIONS
        if ci_renamed.get(option.name, option.name.replace("-", "_")) not in ci_fields
    ] == []
    assert set(OPTIONS) == set(CORE_OPTIONS) | set(CI_OPTIONS)


def test_verification_config_uses_the_same_literals() -> None:
    """The engine's config takes the mode and rubric strategy from the same value sets."""
    fields = VerificationConfig.model_fields
    assert _literal_of(fields["evaluation_mode"].annotation) == EvaluationMode
    assert _literal_of(fields["rubric_evaluation_strategy"].annotation) == RubricStrategy


def test_declarations() -> None:
    """One group; dest and ini name ``karenina_<name>``; kinds decide action and ini type."""
    parser = _declared()
    assert parser.groups == [("karenina", "LLM benchmark verification (pytest-karenina)")]
    assert parser.group.added["--karenina"]["action"] == "append"
    assert parser.group.added["--karenina"]["dest"] == "karenina_checkpoints"
    assert parser.ini["karenina_checkpoints"]["type"] == "paths"
    assert len(parser.group.added) == len(OPTIONS) + 1
    for option in OPTIONS:
        declared = parser.group.added[f"--karenina-{option.name}"]
        assert declared["dest"] == option.dest == "karenina_" + option.name.replace("-", "_")
        assert declared["default"] is None, option.name
        ini_type = "linelist" if option.kind == "linelist" else "string"
        assert parser.ini[option.dest]["type"] == ini_type, option.name


def test_kinds_of_declared_options() -> None:
    """Repeatable lists append, yes/no flags take an optional value defaulting to yes."""
    added = _declared().group.added
    assert added["--karenina-answering-model"]["action"] == "append"
    assert added["--karenina-rubric-gates"]["action"] == "append"
    abstention = added["--karenina-abstention"]
    assert (abstention["nargs"], abstention["const"]) == ("?", "yes")
    assert "action" not in added["--karenina-concurrency"]


def test_help_lists_the_choices() -> None:
    """An option with choices shows them in its help."""
    added = _declared().group.added
    assert added["--karenina-mode"]["help"].endswith(
        " (template_only|template_and_rubric|rubric_only)"
    )
    assert added["--karenina-html-trace"]["help"].endswith(" (failed|all|none)")


@pytest.mark.parametrize(("text", "value"), sorted(BOOL_WORDS.items()))
def test_parse_bool_words(text: str, value: bool) -> None:
    """Every yes/no word, case and surrounding spaces ignored."""
    assert parse_bool("--karenina-abstention", f"  {text.upper()} ") is value


def test_parse_bool_rejects_other_words() -> None:
    """Anything else is a usage error naming the flag."""
    with pytest.raises(pytest.UsageError, match="--karenina-sufficiency: expected yes or no"):
        parse_bool("--karenina-sufficiency", "maybe")
