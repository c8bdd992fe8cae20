"""Every config test starts without the environment variables a VerificationConfig reads."""

from __future__ import annotations

import pytest

from pytest_karenina.config.rules import ENVIRONMENT


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for _field, variable, _parse in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
