"""The facts of a run for the Environment table of the pytest-html report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import pytest

from pytest_karenina.plugin.stash import CHECKPOINTS_KEY, CONFIG_KEY, SETTINGS_KEY


def environment(config: pytest.Config) -> dict[str, str]:
    """The run's checkpoints, mode, models, replay mode and endpoint hosts (never a
    credential: hosts only)."""
    vconfig = config.stash[CONFIG_KEY]
    answering, parsing = vconfig.stamped_models()

    def names(models: Sequence[Any]) -> str:
        return ", ".join(str(model.id or model.model_name) for model in models)

    facts = {
        "Karenina checkpoints": ", ".join(path.name for path in config.stash[CHECKPOINTS_KEY]),
        "Karenina mode": str(vconfig.evaluation_mode),
        "Answering models": names(answering),
        "Parsing models": names(parsing),
        "Replay": str(config.stash[SETTINGS_KEY].replay),
    }
    hosts = sorted(
        {
            urlsplit(model.endpoint_base_url).netloc.rpartition("@")[2]
            for model in [*answering, *parsing]
            if model.endpoint_base_url
        }
    )
    if hosts:
        facts["Endpoint"] = ", ".join(hosts)
    return facts
