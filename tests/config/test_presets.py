"""Karenina preset files (spec 4.9) load unchanged; problems are ConfigErrors naming file, field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.config.presets import load_preset
from pytest_karenina.config.sections import DEFAULT_ANSWERING_SYSTEM_PROMPT, ConfigError
from pytest_karenina.config.verification import VerificationConfig
from tests.helpers import DATA

PRESET = DATA / "presets" / "haiku-vs-local-qwen-template-rubric.json"


def preset() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(PRESET.read_text(encoding="utf-8"))
    return document


def write(tmp_path: Path, document: Any, name: str = "preset.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def check_realistic(loaded: VerificationConfig) -> None:
    assert [m.id for m in loaded.answering_models] == ["claude-haiku-4-5", "local-qwen"]
    assert [m.id for m in loaded.parsing_models] == ["gpt-4.1-mini-judge"]
    endpoint = loaded.answering_models[1]
    assert endpoint.interface == "openai_endpoint"
    assert endpoint.endpoint_base_url == "http://localhost:8000/v1"
    assert endpoint.endpoint_api_key is None  # Karenina saved the mask, not the key
    assert endpoint.request_timeout == 300.0
    assert loaded.answering_models[0].system_prompt == DEFAULT_ANSWERING_SYSTEM_PROMPT
    assert loaded.parsing_models[0].system_prompt is None
    assert loaded.replicate_count == 2
    assert loaded.evaluation_mode == "template_and_rubric"
    assert loaded.rubric_enabled
    assert loaded.abstention_enabled
    assert loaded.async_max_workers == 4
    assert loaded.few_shot_config is not None
    assert loaded.few_shot_config.pool_mode == "k-shot"
    assert loaded.prompt_config is not None
    assert loaded.prompt_config.parsing == "Report numbers without units."
    assert loaded.custom_error_patterns[0].category == "rate_limit"


def test_the_layout_of_spec_4_9() -> None:
    document = preset()
    assert list(document) == ["id", "name", "description", "config", "created_at", "updated_at"]
    assert set(document["config"]) == set(VerificationConfig.model_fields) - {
        "replay_store",
        "skip_triples",
        "requests_per_minute",  # ours: Karenina presets do not hold them
        "max_call_seconds",
        "template_time_limit",
        "judge_replicate_count",
    } | {"rubric_enabled"}
    assert set(document["config"]["parsing_models"][0]) == {
        "id",
        "model_provider",
        "model_name",
        "temperature",
        "interface",
        "system_prompt",
        "max_tokens",
        "max_retries",
    }


def test_config_loads_with_model_validate_json() -> None:
    check_realistic(VerificationConfig.model_validate_json(json.dumps(preset()["config"])))


def test_config_loads_with_load_preset() -> None:
    check_realistic(load_preset(PRESET))
    check_realistic(load_preset(str(PRESET)))


def test_environment_does_not_override_the_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARENINA_ASYNC_MAX_WORKERS", "16")
    monkeypatch.setenv("EMBEDDING_CHECK", "true")
    loaded = load_preset(PRESET)
    assert (loaded.async_max_workers, loaded.embedding_check_enabled) == (4, False)


def test_only_config_is_read(tmp_path: Path) -> None:
    document = {
        "_comment_models": "two answerers, one judge",
        "name": "minimal",
        "config": {
            "answering_models": [{"id": "a", "model_provider": "openai", "model_name": "gpt-4o"}],
            "parsing_models": [{"id": "j", "model_provider": "openai", "model_name": "gpt-4o"}],
        },
        "anything": [1, 2, 3],
    }
    assert load_preset(write(tmp_path, document)).answering_models[0].id == "a"


def test_dump_written_as_a_preset_loads_back(tmp_path: Path) -> None:
    original = load_preset(PRESET)
    document = {**preset(), "config": original.model_dump(mode="json")}
    assert load_preset(write(tmp_path, document)) == original


def test_unsupported_preset_fails_with_a_clear_config_error(tmp_path: Path) -> None:
    document = preset()
    document["config"]["parsing_only"] = True
    path = write(tmp_path, document)
    with pytest.raises(ConfigError) as caught:
        load_preset(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: config.parsing_only=True")
    assert "is not supported yet by pytest-karenina" in message
    assert caught.value.source == str(path)


def test_several_unsupported_settings_are_listed(tmp_path: Path) -> None:
    document = preset()
    document["config"]["parsing_only"] = True
    document["config"]["answering_models"][0]["max_context_tokens"] = 1000
    with pytest.raises(ConfigError) as caught:
        load_preset(write(tmp_path, document))
    message = str(caught.value)
    assert "config.parsing_only=True" in message
    assert "config.answering_models[0].max_context_tokens=1000" in message


def test_invalid_config_names_file_and_field_path(tmp_path: Path) -> None:
    document = preset()
    document["config"]["parsing_models"][0]["temprature"] = 0.0
    document["config"]["async_max_workers"] = 0
    path = write(tmp_path, document)
    with pytest.raises(ConfigError) as caught:
        load_preset(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid configuration:")
    assert "config.parsing_models[0].temprature: Extra inputs are not permitted" in message
    assert "config.async_max_workers: Input should be greater than or equal to 1" in message


def test_broken_rules_are_named(tmp_path: Path) -> None:
    document = preset()
    document["config"]["agentic_parsing_trigger"] = "dynamic"
    with pytest.raises(ConfigError) as caught:
        load_preset(write(tmp_path, document))
    expected = "config: agentic_parsing_trigger='dynamic' needs agentic_parsing=True"
    assert expected in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"config": {', "not valid JSON"),
        ("[]", "a preset is a JSON object with a 'config' object"),
        ('{"name": "x"}', "a preset is a JSON object with a 'config' object"),
        ('{"config": null}', "a preset is a JSON object with a 'config' object"),
    ],
)
def test_malformed_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        load_preset(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read preset"):
        load_preset(tmp_path / "absent.json")
