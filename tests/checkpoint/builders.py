"""Small builders for checkpoint test documents: fixture copies and JSON-LD fragments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
FIXTURE_NAMES = ("minimal", "multi_question", "with_results", "with_rubrics")

Document = dict[str, Any]


def fixture_path(name: str) -> Path:
    """The path of a fixture checkpoint by short name, e.g. ``"minimal"``."""
    return DATA_DIR / f"{name}.jsonld"


def document(name: str = "minimal") -> Document:
    """A fresh, freely mutable parsed copy of a fixture checkpoint."""
    parsed: Document = json.loads(fixture_path(name).read_text("utf-8"))
    return parsed


def prop(name: str, value: Any) -> dict[str, Any]:
    """A PropertyValue entry."""
    return {"@type": "PropertyValue", "name": name, "value": value}


def rating(
    name: str,
    additional_type: str,
    props: dict[str, Any] | None = None,
    *,
    best: float = 1,
    worst: float = 0,
    description: str | None = "a test trait",
) -> dict[str, Any]:
    """A Rating; ``props`` become its additionalProperty entries, in order."""
    entry: dict[str, Any] = {"@type": "Rating", "name": name}
    if description is not None:
        entry["description"] = description
    entry.update({"bestRating": best, "worstRating": worst, "additionalType": additional_type})
    if props:
        entry["additionalProperty"] = [prop(key, value) for key, value in props.items()]
    return entry


def first_item(doc: Document) -> dict[str, Any]:
    """The Question node (``item``) of the first DataFeedItem."""
    item: dict[str, Any] = doc["dataFeedElement"][0]["item"]
    return item


def add_question(doc: Document, text: str, *, question_id: str | None = None) -> dict[str, Any]:
    """Append a copy of the first question with new text (and @id, or none); return its item."""
    element = json.loads(json.dumps(doc["dataFeedElement"][0]))
    element.pop("@id", None)
    if question_id is not None:
        element["@id"] = question_id
    element["item"]["text"] = text
    doc["dataFeedElement"].append(element)
    item: dict[str, Any] = element["item"]
    return item
