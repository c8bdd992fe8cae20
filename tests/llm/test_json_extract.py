"""JSON extraction from judge replies: order of strategies, repair, failures."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from pytest_karenina.llm.json_extract import (
    ERROR_LIMIT,
    JsonExtractionError,
    correction_message,
    extract_json,
    schema_request_block,
)

CASES: list[tuple[str, str, Any]] = [
    ("bare object", '{"a": 1}', {"a": 1}),
    ("bare array", "  [1, 2]\n", [1, 2]),
    ("json fence", 'Here:\n```json\n{"a": 1}\n```\nDone.', {"a": 1}),
    ("plain fence", '```\n{"a": [1]}\n```', {"a": [1]}),
    ("upper-case tag", '```JSON\n{"a": 2}\n```', {"a": 2}),
    (
        "first usable fence",
        '```python\nx = 1\n```\n```json\n{"a": 3}\n```\n```{"a": 4}```',
        {"a": 3},
    ),
    ("prose around", 'Sure. The answer is {"value": "BCL2"} as requested.', {"value": "BCL2"}),
    ("nested", 'x {"a": {"b": {"c": [1, {"d": 2}]}}} y', {"a": {"b": {"c": [1, {"d": 2}]}}}),
    ("braces inside strings", 'Result: {"a": "}{", "b": "{{"} ok', {"a": "}{", "b": "{{"}),
    ("escaped quote", r'Result: {"a": "say \"}\" now"} end', {"a": 'say "}" now'}),
    ("multiple objects, last wins", '{"draft": 1} then final {"final": 2}', {"final": 2}),
    ("last one that parses", '{"good": 1} and a smiley {:-)}', {"good": 1}),
    ("stray brace in prose", 'Use {x as a variable; result: {"a": 1}', {"a": 1}),
    ("quotes in prose", 'He said "hi" then {"a": true}', {"a": True}),
    ("trailing commas", '{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
    (
        "python literals",
        '{"a": True, "b": False, "c": None, "d": "True"}',
        {"a": True, "b": False, "c": None, "d": "True"},
    ),
    ("truncated", 'Answer: {"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
    ("truncated after comma", '{"a": {"b": 1,', {"a": {"b": 1}}),
    ("repair inside fence", '```json\n{"a": None,}\n```', {"a": None}),
    ("repair ignores tail", '{"a": True,} hope that helps {', {"a": True}),
    ("array repair", "[1, 2,]", [1, 2]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_extract_json(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


FAILURES = [
    ("", "empty"),
    ("   \n", "empty"),
    ("No JSON here, sorry.", "no JSON object"),
    ('{"a": "never closed', "string is never closed"),
    ('{"a": 1]', "unexpected ']'"),
    ("{a: 1}", "not valid JSON"),
    ("{'a': 1}", "not valid JSON"),
]


@pytest.mark.parametrize(("text", "reason"), FAILURES)
def test_failures_name_a_short_reason(text: str, reason: str) -> None:
    with pytest.raises(JsonExtractionError, match=reason) as caught:
        extract_json(text)
    assert isinstance(caught.value, ValueError)
    assert len(str(caught.value)) < 120


def test_repair_only_runs_when_everything_else_fails() -> None:
    # a valid object later in the text wins over repairing an earlier broken one
    assert extract_json('{"a": True,} but really {"a": false}') == {"a": False}


PATHOLOGICAL: dict[str, Callable[[], str]] = {
    "random": lambda: "".join(random.Random(7).choices('{}[]",:\\ ab1\n`', k=1_000_000)),
    "open-braces": lambda: "{" * 1_000_000,
    "open-brackets": lambda: "[" * 1_000_000,
    "nested-keys": lambda: '{"a":' * 200_000,
    "fences": lambda: "```" * 300_000,
    "spans": lambda: "{x}" * 333_333,
    "quotes": lambda: '"' * 1_000_000,
}


@pytest.mark.parametrize("kind", sorted(PATHOLOGICAL))
def test_pathological_megabyte_inputs_terminate(kind: str) -> None:
    try:
        value = extract_json(PATHOLOGICAL[kind]())
    except JsonExtractionError:
        return
    assert isinstance(value, dict | list)


def test_schema_request_block_shows_the_schema_in_a_json_fence() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    block = schema_request_block(schema)
    assert f"```json\n{json.dumps(schema, indent=2)}\n```" in block
    assert "JSON" in block.split("```")[0]


def test_correction_message_truncates_the_error() -> None:
    message = correction_message("count: Input should be a valid integer")
    assert message.role == "user"
    assert "count: Input should be a valid integer" in message.content
    long_error = "x" * ERROR_LIMIT + "TAIL"
    content = correction_message(long_error).content
    assert "x" * ERROR_LIMIT in content and "TAIL" not in content
    assert "JSON" in content
