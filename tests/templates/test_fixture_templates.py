"""Every template of Karenina's fixture checkpoints compiles and verifies as written."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.templates import compile_template, template_id, template_mode
from tests.helpers import fixture_templates

MQ = "multi_question.jsonld"
TEMPLATES = {(name, qid): code for name, qid, code in fixture_templates()}

# (checkpoint, question id, parsed values, expected verify())
CASES: list[tuple[str, str, dict[str, Any], bool]] = [
    ("minimal.jsonld", "urn:karenina:test:q001", {"result": 4}, True),
    ("minimal.jsonld", "urn:karenina:test:q001", {"result": 5}, False),
    (MQ, "urn:karenina:test:mq001", {"temperature": 100}, True),
    (MQ, "urn:karenina:test:mq001", {"temperature": 212}, False),
    (
        "multi_question.jsonld",
        "urn:karenina:test:mq002",
        {"colors": ["Red", "Green", "BLUE"]},
        True,
    ),
    (
        "multi_question.jsonld",
        "urn:karenina:test:mq002",
        {"colors": ["red", "blue", "green"]},
        False,
    ),
    (MQ, "urn:karenina:test:mq003", {"author": "William Shakespeare."}, True),
    (MQ, "urn:karenina:test:mq003", {"author": "Christopher Marlowe"}, False),
    (MQ, "urn:karenina:test:mq004", {"symbol": "Au"}, True),
    (MQ, "urn:karenina:test:mq004", {"symbol": "AU"}, False),
    (MQ, "urn:karenina:test:mq005", {"result": 105}, True),
    (MQ, "urn:karenina:test:mq005", {"result": 75}, False),
    ("with_results.jsonld", "urn:karenina:test:q002", {"capital": " Paris "}, True),
    ("with_results.jsonld", "urn:karenina:test:q002", {"capital": "Lyon"}, False),
    (
        "with_rubrics.jsonld",
        "urn:karenina:test:rq001",
        {"gene_name": "bcl2", "gene_function": "An Anti-Apoptotic regulator"},
        True,
    ),
    (
        "with_rubrics.jsonld",
        "urn:karenina:test:rq001",
        {"gene_name": "BCL6", "gene_function": "anti-apoptotic"},
        False,
    ),
    ("with_rubrics.jsonld", "urn:karenina:test:rq002", {"celsius": 100, "fahrenheit": 0}, True),
    ("with_rubrics.jsonld", "urn:karenina:test:rq002", {"celsius": 0, "fahrenheit": 212}, True),
    ("with_rubrics.jsonld", "urn:karenina:test:rq002", {"celsius": 0, "fahrenheit": 0}, False),
    ("with_rubrics.jsonld", "urn:karenina:test:rq003", {"capital": "paris"}, True),
    ("with_rubrics.jsonld", "urn:karenina:test:rq003", {"capital": "Marseille"}, False),
]


def test_every_fixture_question_is_covered() -> None:
    assert {(name, qid) for name, qid, _, _ in CASES} == set(TEMPLATES)


@pytest.mark.parametrize(("name", "qid", "values", "expected"), CASES)
def test_fixture_template_verifies(
    name: str, qid: str, values: dict[str, Any], expected: bool
) -> None:
    answer_class = compile_template(TEMPLATES[name, qid], question_id=qid)
    assert template_mode(answer_class) == "classic"
    parsed = answer_class(**values)
    assert parsed.id == qid
    assert isinstance(parsed.correct, dict)
    assert parsed.verify() is expected


def test_minimal_template_id_matches_karenina() -> None:
    code = TEMPLATES["minimal.jsonld", "urn:karenina:test:q001"]
    assert template_id(code) == "e3d03eb093dc7fa6ed83aa4825fb9506"


def test_binding_a_question_id_keeps_the_schema() -> None:
    code = TEMPLATES["minimal.jsonld", "urn:karenina:test:q001"]
    plain = compile_template(code)
    bound = compile_template(code, question_id="urn:karenina:test:q001")
    assert issubclass(bound, plain)
    assert bound.__name__ == plain.__name__ == "Answer"
    assert bound.model_json_schema() == plain.model_json_schema()
    assert plain(result=4).id is None
    assert bound(result=4).model_dump()["id"] == "urn:karenina:test:q001"
