"""URL credentials (``user:password@``, ``?token=``-like parameters) are masked in every dump of
a model and listed as secrets; so are secret-named settings and header values (issue 24,
items 2 and 3)."""

from __future__ import annotations

import pytest

from pytest_karenina.config.model import REVEAL_SECRETS, ModelConfig
from pytest_karenina.config.secrets import (
    MASK,
    is_secret_param,
    masked_url,
    setting_secrets,
    url_secrets,
)
from pytest_karenina.llm.errors import redact

TOKEN = "tok-canary-5e0a9c31d7"
PASSWORD = "pw-canary-8b2f41"


@pytest.mark.parametrize(
    "name",
    ["token", "TOKEN", "key", "api_key", "apiKey", "api-key", "access_token", "secret",
     "password", "sig", "X-Amz-Signature", "jwt", "auth", "client_secret", "pwd"],
)  # fmt: skip
def test_credential_like_query_parameters(name: str) -> None:
    assert is_secret_param(name)


@pytest.mark.parametrize("name", ["model", "api-version", "format", "max_tokens", "page"])
def test_ordinary_query_parameters(name: str) -> None:
    assert not is_secret_param(name)


def test_a_masked_url_keeps_everything_but_the_credentials() -> None:
    url = f"https://evals:{PASSWORD}@mcp.example:8443/mcp?Token={TOKEN}&tz=UTC&sig={TOKEN}#x"

    masked = masked_url(url)

    assert masked == f"https://mcp.example:8443/mcp?Token={MASK}&tz=UTC&sig={MASK}#x"
    assert masked_url(url, "***") == "https://mcp.example:8443/mcp?Token=***&tz=UTC&sig=***#x"
    plain = "http://127.0.0.1:8000/mcp?format=json"
    assert masked_url(plain) is plain


def test_url_secrets_are_the_credentials_as_written_and_decoded() -> None:
    url = f"http://evals:{PASSWORD}@h/mcp?access_token={TOKEN}%2Bx&page=2&key=ab"

    found = url_secrets(url)

    assert f"evals:{PASSWORD}" in found and PASSWORD in found
    assert f"{TOKEN}%2Bx" in found and f"{TOKEN}+x" in found
    assert "2" not in found and "evals" not in found
    assert "ab" not in found  # too short to scrub from text (masked in dumps all the same)
    assert url_secrets(f"https://{TOKEN}@github.example/repo") == [TOKEN]


def test_setting_secrets_are_secret_named_values_headers_and_url_credentials() -> None:
    extra = {
        "api_key": "xkey-canary-1234",
        "default_headers": {
            "X-Custom-Auth": "hdr-canary-5678",  # a secret name
            "OpenAI-Organization": "org-Ab12Cd34Ef56Gh78",  # a token-like value
            "Content-Type": "application/json",  # neither
            "X-Team": "evals",
        },
        "model_kwargs": {"auth_token": "Bearer tok-canary-9999", "seed": 1},
        "openai_proxy": f"http://proxy:{PASSWORD}@proxy.example:3128",
        "top_p": 0.5,
    }

    found = setting_secrets(extra)

    for value in ("xkey-canary-1234", "hdr-canary-5678", "org-Ab12Cd34Ef56Gh78",
                  "Bearer tok-canary-9999", "tok-canary-9999", PASSWORD):  # fmt: skip
        assert value in found
    assert "application/json" not in found and "evals" not in found


def test_model_dumps_mask_mcp_and_base_url_credentials() -> None:
    model = ModelConfig(
        id="agent", model_name="m", interface="openai_endpoint",
        endpoint_base_url=f"https://llm.example/v1?key={TOKEN}",
        mcp_urls_dict={"facts": f"http://evals:{PASSWORD}@127.0.0.1:9/mcp?token={TOKEN}"},
    )  # fmt: skip

    dumped = model.model_dump(mode="json")

    assert TOKEN not in str(dumped) and PASSWORD not in str(dumped)
    assert dumped["mcp_urls_dict"] == {"facts": f"http://127.0.0.1:9/mcp?token={MASK}"}
    assert dumped["endpoint_base_url"] == f"https://llm.example/v1?key={MASK}"
    assert TOKEN not in model.model_dump_json()
    revealed = model.model_dump(mode="json", context={REVEAL_SECRETS: True})
    assert revealed["mcp_urls_dict"] == model.mcp_urls_dict
    # The model keeps its URLs: only the dumps are masked.
    assert model.mcp_urls_dict == {
        "facts": f"http://evals:{PASSWORD}@127.0.0.1:9/mcp?token={TOKEN}"
    }


def test_redaction_of_a_masked_url_keeps_the_text_after_it() -> None:
    assert (
        redact("server (http://h/mcp?token=abc123): down")
        == "server (http://h/mcp?token=***): down"
    )
