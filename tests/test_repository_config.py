"""The repository's own pytest configuration works with the plugin on and off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("plugin", [[], ["-p", "no:karenina"]], ids=["enabled", "disabled"])
def test_the_configuration_passes_strict_config(
    pytester: pytest.Pytester, plugin: list[str]
) -> None:
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(ROOT / name, pytester.path / name)
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")

    result = pytester.runpytest(*plugin, "test_one.py")

    result.assert_outcomes(passed=1)
