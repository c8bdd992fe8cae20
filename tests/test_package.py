"""Packaging: the pytest entry point, lazy public API, a cheap plugin import."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest_karenina

HEAVY = {
    "pydantic",
    "langchain_core",
    "langchain_openai",
    "torch",
    "sentence_transformers",
    "rapidfuzz",
    "transformers",
    "openai",
    "httpx",
    "dateutil",
}


def test_pytest11_entry_point_names_the_plugin_module() -> None:
    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.name == "karenina"]
    assert plugin.value == "pytest_karenina.plugin"


def test_importing_the_plugin_loads_nothing_heavy() -> None:
    script = (
        "import json, sys\n"
        "import pytest_karenina.plugin\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    loaded = set(json.loads(output))
    assert "pytest_karenina" in loaded
    assert not loaded & HEAVY, loaded & HEAVY


def test_public_api_is_lazy_and_complete() -> None:
    for name in pytest_karenina.__all__:
        assert getattr(pytest_karenina, name) is not None, name
    assert set(dir(pytest_karenina)) >= set(pytest_karenina.__all__)


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        pytest_karenina.does_not_exist  # noqa: B018
    except AttributeError as error:
        assert "does_not_exist" in str(error)
    else:
        raise AssertionError("expected AttributeError")
