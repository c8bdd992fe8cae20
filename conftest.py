"""This repository's root conftest: only what its own configuration needs.

pyproject.toml holds the quickstart's ``karenina_*`` ini keys. With the plugin disabled
(``-p no:karenina``) nothing would declare them, and ``--strict-config`` would reject them.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if not pluginmanager.has_plugin("karenina"):
        from pytest_karenina.plugin.options.declare import add_ini_keys

        add_ini_keys(parser)
