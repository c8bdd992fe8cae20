"""Helpers shared by the test_primitives_*.py modules."""

from __future__ import annotations

from typing import Any

import pytest


def rows(rows: list[tuple[Any, ...]]) -> list[Any]:
    """Table rows ``(id, *values)`` as ``pytest.param(*values, id=id)``."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]
