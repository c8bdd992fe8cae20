"""Shared test helpers (plain functions; fixtures live in conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
FIXTURE_CHECKPOINTS = sorted(DATA.glob("*.jsonld"))


def raw_checkpoint(name: str) -> dict[str, Any]:
    """A fixture checkpoint as plain JSON."""
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return data


def fixture_templates() -> list[tuple[str, str, str]]:
    """(checkpoint file, question id, template source) for every fixture question."""
    found = []
    for path in FIXTURE_CHECKPOINTS:
        for element in raw_checkpoint(path.name)["dataFeedElement"]:
            found.append((path.name, element["@id"], element["item"]["hasPart"]["text"]))
    return found
