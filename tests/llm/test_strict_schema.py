"""Reply schemas rewritten for strict structured output, or left non-strict when they must be."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_karenina.llm.strict_schema import ResponseFormats, response_format, strict_variant


class Inner(BaseModel):
    a: int


class Relaxed(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    count: int = Field(3, ge=0)
    inner: Inner = Field(description="the inner part")
    maybe: Inner | None = None
    tags: list[str] = []


class Tree(BaseModel):
    children: list[Tree] = Field(default=[], description="sub trees")
    parent: Tree | None = Field(default=None, description="the tree above")


def test_every_object_requires_all_properties_and_forbids_others() -> None:
    strict = strict_variant(Relaxed.model_json_schema())

    assert strict is not None
    assert strict["required"] == ["id", "count", "inner", "maybe", "tags"]
    assert strict["additionalProperties"] is False
    assert strict["$defs"]["Inner"]["additionalProperties"] is False
    assert "default" not in str(strict)


def test_optional_types_keep_their_null_and_others_gain_none() -> None:
    props = strict_variant(Relaxed.model_json_schema())["properties"]  # type: ignore[index]

    assert {"type": "null"} in props["maybe"]["anyOf"]
    assert {"type": "null"} in props["id"]["anyOf"]
    assert props["count"] == {"minimum": 0, "title": "Count", "type": "integer"}


def test_a_described_reference_is_inlined_with_its_description() -> None:
    inner = strict_variant(Relaxed.model_json_schema())["properties"]["inner"]  # type: ignore[index]

    assert "$ref" not in inner
    assert inner["description"] == "the inner part"
    assert inner["required"] == ["a"] and inner["additionalProperties"] is False


def test_what_strict_mode_cannot_say_stays_non_strict() -> None:
    class Mapping(BaseModel):
        counts: dict[str, int]

    class Combined(BaseModel):
        text: str = Field(min_length=3)

    schemas: list[dict[str, Any]] = [
        Mapping.model_json_schema(),
        Combined.model_json_schema(),  # minLength
        Tree.model_json_schema(),  # self-referencing: its root is a $ref
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "properties": {"when": {"type": "string", "format": "uri"}}},
    ]
    assert [strict_variant(schema) for schema in schemas] == [None] * len(schemas)


def test_the_response_format_says_whether_it_is_strict() -> None:
    class Mapping(BaseModel):
        counts: dict[str, int]

    strict = response_format("Relaxed", Relaxed.model_json_schema())["json_schema"]
    loose = response_format("Mapping", Mapping.model_json_schema())["json_schema"]

    assert (strict["name"], strict["strict"]) == ("Relaxed", True)
    assert (loose["strict"], loose["schema"]) == (False, Mapping.model_json_schema())


def test_formats_are_remembered_per_schema_object() -> None:
    formats, schema = ResponseFormats(size=2), Relaxed.model_json_schema()

    first = formats.get("Relaxed", schema)

    assert formats.get("Relaxed", schema) is first
    assert formats.get("Relaxed", Relaxed.model_json_schema()) is not first  # another object
    assert formats.get("Relaxed", schema) == first
