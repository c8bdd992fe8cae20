"""Environment variables fill absent VerificationConfig fields only (spec 4.2, 4.11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_karenina.config.verification import VerificationConfig
from tests.config.helpers import config, model

ENVIRONMENT_CASES = [
    ("EMBEDDING_CHECK", "yes", "embedding_check_enabled", True),
    ("EMBEDDING_CHECK", "off", "embedding_check_enabled", False),
    ("EMBEDDING_CHECK_MODEL", "paraphrase-MiniLM-L3-v2", "embedding_check_model",
     "paraphrase-MiniLM-L3-v2"),
    ("EMBEDDING_CHECK_THRESHOLD", "0.7", "embedding_check_threshold", 0.7),
    ("KARENINA_ASYNC_ENABLED", "false", "async_enabled", False),
    ("KARENINA_ASYNC_MAX_WORKERS", "8", "async_max_workers", 8),
    ("KARENINA_MAX_CONCURRENT_LLM_REQUESTS", "32", "max_concurrent_requests", 32),
]  # fmt: skip
"""(variable, raw value, field, parsed value): one row per environment variable of spec 4.11."""


class TestEnvironment:
    @pytest.mark.parametrize(("variable", "raw", "field", "value"), ENVIRONMENT_CASES)
    def test_read_when_the_field_is_absent(
        self, monkeypatch: pytest.MonkeyPatch, variable: str, raw: str, field: str, value: Any
    ) -> None:
        monkeypatch.setenv(variable, raw)
        assert getattr(config(), field) == value

    @pytest.mark.parametrize(("variable", "raw", "field", "value"), ENVIRONMENT_CASES)
    def test_ignored_when_the_field_is_given(
        self, monkeypatch: pytest.MonkeyPatch, variable: str, raw: str, field: str, value: Any
    ) -> None:
        monkeypatch.setenv(variable, raw)
        explicit = VerificationConfig.model_fields[field].default
        assert getattr(config(**{field: explicit}), field) == explicit

    def test_explicit_none_counts_as_given(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("KARENINA_MAX_CONCURRENT_LLM_REQUESTS", "32")
        assert config(max_concurrent_requests=None).max_concurrent_requests is None

    def test_read_by_model_validate_json_too(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("KARENINA_ASYNC_MAX_WORKERS", "6")
        text = json.dumps({"answering_models": [model()], "parsing_models": [model()]})
        assert VerificationConfig.model_validate_json(text).async_max_workers == 6

    def test_empty_variable_is_unset(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("EMBEDDING_CHECK_MODEL", "")
        assert config().embedding_check_model == "all-MiniLM-L6-v2"

    @pytest.mark.parametrize(
        ("variable", "raw"),
        [
            ("EMBEDDING_CHECK", "maybe"),
            ("EMBEDDING_CHECK_THRESHOLD", "high"),
            ("KARENINA_ASYNC_MAX_WORKERS", "four"),
        ],
    )
    def test_malformed_value_is_an_error_naming_it(
        self, monkeypatch: pytest.MonkeyPatch, variable: str, raw: str
    ) -> None:
        monkeypatch.setenv(variable, raw)
        with pytest.raises(ValidationError, match=f"environment variable {variable}='{raw}'"):
            config()

    def test_out_of_range_value_fails_field_validation(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("EMBEDDING_CHECK_THRESHOLD", "1.5")
        with pytest.raises(ValidationError, match="embedding_check_threshold"):
            config()
