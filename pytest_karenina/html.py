"""pytest-html 4 integration (registered only when pytest-html is active)."""

from __future__ import annotations

from typing import Any

import pytest


def add_extras(report: pytest.TestReport, payload: dict[str, Any], include_trace: bool) -> None:
    """Attach the item's extras to ``report.extras`` (placeholder until the HTML work)."""


class HtmlPlugin:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
