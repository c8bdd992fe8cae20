"""Running pytest with the plugin against the scripted server (pytester, real HTTP)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import API_KEY, script
from tests.helpers import DATA
from tests.support.openai_server import OpenAIServer

MULTI = "multi_question.jsonld"


def copy_checkpoint(pytester: pytest.Pytester, name: str = MULTI) -> Path:
    target = pytester.path / name
    shutil.copy(DATA / name, target)
    return target


def endpoint_args(server: OpenAIServer, *extra: str) -> list[str]:
    return [
        "--karenina-endpoint", server.base_url, "--karenina-answering-model", "test-model",
        "-p", "no:cacheprovider", *extra,
    ]  # fmt: skip


def scripted(server: OpenAIServer, name: str = MULTI) -> None:
    script(server, CHECKPOINT_CASES[name])


def use_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
