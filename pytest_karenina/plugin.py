"""pytest entry point (``pytest11`` name ``karenina``).

This module is imported by every pytest run in an environment where
pytest-karenina is installed, so it imports nothing but pytest and the
standard library. Collection of checkpoints arrives with the plugin issue;
until then the plugin only registers its marker.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "karenina: a question of a Karenina benchmark checkpoint")
