"""Model settings written for artifacts carry no credential: header values, secret-named
fields and URL userinfo are masked unless secrets are asked for."""

from __future__ import annotations

from pytest_karenina.config.model import REVEAL_SECRETS, ModelConfig
from pytest_karenina.config.secrets import MASK, masked_settings, without_userinfo
from pytest_karenina.llm.adapters.identity import config_identity

CANARY = "sk-canary-0123456789abcdef"


def model() -> ModelConfig:
    return ModelConfig(
        id="m", model_name="gpt", interface="openai_endpoint",
        endpoint_base_url=f"https://evals:{CANARY}@llm.example/v1",
        extra_kwargs={
            "default_headers": {"api-key": CANARY, "X-Team": "evals"},
            "client_secret": CANARY, "top_p": 0.5,
            "model_kwargs": {"auth_token": CANARY, "seed": 1},
        },
    )  # fmt: skip


def test_a_dump_for_artifacts_holds_no_credential() -> None:
    dumped = model().model_dump(mode="json")

    assert CANARY not in str(dumped)
    assert dumped["endpoint_base_url"] == "https://llm.example/v1"
    extra = dumped["extra_kwargs"]
    assert extra["default_headers"] == {"api-key": MASK, "X-Team": MASK}  # every header value
    assert (extra["client_secret"], extra["top_p"]) == (MASK, 0.5)
    assert extra["model_kwargs"] == {"auth_token": MASK, "seed": 1}


def test_secrets_are_written_only_when_asked_for() -> None:
    dumped = model().model_dump(mode="json", context={REVEAL_SECRETS: True})

    assert dumped["endpoint_base_url"] == f"https://evals:{CANARY}@llm.example/v1"
    assert dumped["extra_kwargs"]["default_headers"]["api-key"] == CANARY


def test_replay_identity_drops_url_credentials() -> None:
    identity = config_identity(model())

    assert identity["base_url"] == "https://llm.example/v1"
    assert without_userinfo("http://host:8000/v1") == "http://host:8000/v1"
    assert masked_settings(["http://u:p@h/x", 3]) == ["http://h/x", 3]
