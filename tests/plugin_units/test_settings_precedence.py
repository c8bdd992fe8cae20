"""Settings precedence, CLI over ini over defaults, read from a configured (not run) pytest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

# Imported here so that pytester's sys.modules snapshot holds the engine: each configure
# below then reuses it instead of importing it again.
import pytest_karenina.plugin.controller  # noqa: F401
from pytest_karenina.plugin.options.settings import DEFAULT_CONCURRENCY, Settings
from pytest_karenina.plugin.stash import CONFIG_KEY, SETTINGS_KEY
from tests.helpers import DATA

MODEL = ["--karenina-answering-model", "openai:gpt-4.1-mini"]
PRESET = DATA / "presets" / "haiku-vs-local-qwen-template-rubric.json"
QUIET = ("-p", "no:unraisableexception")
"""The inner config's unraisable-exception plugin runs five full garbage collections when
the config is cleaned up (a quarter of a second each time here); nothing runs, so it has
nothing to catch."""


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys in the environment for the models configured here, so that replay is not forced
    to strict (and, without a store, the configure refused: nothing to replay)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")


def _checkpoint(pytester: pytest.Pytester) -> Path:
    target = pytester.path / "multi_question.jsonld"
    shutil.copy(DATA / "multi_question.jsonld", target)
    return target


def _settings(pytester: pytest.Pytester, ini: str, *args: str) -> Settings:
    """The Settings of a pytest configured with ``ini`` lines and ``args``."""
    pytester.makeini("[pytest]\n" + ini)
    config = pytester.parseconfigure(*QUIET, "--karenina", str(_checkpoint(pytester)), *args)
    return config.stash[SETTINGS_KEY]


def test_cli_concurrency_beats_ini(pytester: pytest.Pytester) -> None:
    """ini 3, CLI 5: 5."""
    settings = _settings(
        pytester, "karenina_concurrency = 3", *MODEL, "--karenina-concurrency", "5"
    )
    assert settings.concurrency == 5


def test_ini_concurrency_alone(pytester: pytest.Pytester) -> None:
    """ini 3 alone: 3."""
    assert _settings(pytester, "karenina_concurrency = 3", *MODEL).concurrency == 3


def test_default_concurrency(pytester: pytest.Pytester) -> None:
    """Neither: the default, 8."""
    settings = _settings(pytester, "", *MODEL)
    assert settings.concurrency == DEFAULT_CONCURRENCY == 8


def test_cli_answering_models_replace_the_ini_list(pytester: pytest.Pytester) -> None:
    """A CLI list replaces the ini list; it is not merged with it."""
    ini = "karenina_answering_model =\n    openai:gpt-4o\n    anthropic:claude-haiku-4-5"
    settings = _settings(pytester, ini, "--karenina-answering-model", "openai:gpt-4.1-mini")
    assert settings.answering_models == ("openai:gpt-4.1-mini",)


def test_ini_answering_models_alone(pytester: pytest.Pytester) -> None:
    """The ini lines, in order."""
    ini = "karenina_answering_model =\n    openai:gpt-4o\n    anthropic:claude-haiku-4-5"
    settings = _settings(pytester, ini)
    assert settings.answering_models == ("openai:gpt-4o", "anthropic:claude-haiku-4-5")


def test_no_answering_model_option_leaves_the_preset_models(pytester: pytest.Pytester) -> None:
    """Neither: no models in the settings; the preset's models are the run's."""
    settings = _settings(pytester, "", "--karenina-config", str(PRESET))
    assert settings.answering_models == ()
    vconfig = pytester.parseconfigure(
        *QUIET, "--karenina", str(_checkpoint(pytester)), "--karenina-config", str(PRESET)
    ).stash[CONFIG_KEY]
    assert [model.id for model in vconfig.answering_models] == ["claude-haiku-4-5", "local-qwen"]


def test_no_answering_model_anywhere_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """Neither and no preset: the plugin refuses to configure."""
    pytester.makeini("[pytest]\n")
    with pytest.raises(pytest.UsageError, match="no answering model"):
        pytester.parseconfigure(*QUIET, "--karenina", str(_checkpoint(pytester)))


def test_cli_abstention_beats_ini(pytester: pytest.Pytester) -> None:
    """ini yes, CLI no: no."""
    settings = _settings(pytester, "karenina_abstention = yes", *MODEL, "--karenina-abstention=no")
    assert settings.abstention is False


def test_bare_cli_flag_beats_ini(pytester: pytest.Pytester) -> None:
    """ini no, a bare CLI flag: yes."""
    settings = _settings(pytester, "karenina_abstention = no", *MODEL, "--karenina-abstention")
    assert settings.abstention is True


def test_ini_abstention_alone(pytester: pytest.Pytester) -> None:
    """ini yes alone: yes."""
    assert _settings(pytester, "karenina_abstention = yes", *MODEL).abstention is True


def test_abstention_unset(pytester: pytest.Pytester) -> None:
    """Neither: None, so the preset or Karenina's default decides."""
    assert _settings(pytester, "", *MODEL).abstention is None
