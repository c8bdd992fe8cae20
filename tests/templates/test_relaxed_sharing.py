"""Relaxed classes shared by templates of one shape, the reply schema of each template, and
the judge schema made once per class."""

from __future__ import annotations

import importlib
import json
from typing import Any, Optional

import pytest
from pydantic import ValidationError, create_model

from pytest_karenina.llm.ports import ChatMessage, ModelReply, ModelRequest, Usage
from pytest_karenina.llm.service import LLMService
from pytest_karenina.templates import BaseAnswer, compile_template, judge_schema
from pytest_karenina.templates.extraction import relaxed_class, relaxed_schema
from pytest_karenina.templates.judge_schema import shared_judge_schema

SHAPED = '''
class Answer(BaseAnswer):
    """{doc}"""
    gene: {gene_type} = VerifiedField(description="The gene named for {n}",
        ground_truth={truth!r}, verify_with=ExactMatch())
    approved: bool = VerifiedField(description="Approved?", ground_truth=True,
        verify_with=BooleanMatch())
'''

UNDOCUMENTED = """
class Answer(BaseAnswer):
    gene: str = VerifiedField(description="The gene", ground_truth="TP53",
        verify_with=ExactMatch())
    approved: bool = VerifiedField(description="Approved?", ground_truth=False,
        verify_with=BooleanMatch())
"""

CLASSIC = '''
class Answer(BaseAnswer):
    """Classic {n}."""
    gene: str = Field(description="The gene named for {n}")

    def verify(self) -> bool:
        return self.gene == "TP53"
'''


def _template(n: int, *, doc: str = "Question {n}.", gene_type: str = "str") -> type[BaseAnswer]:
    code = SHAPED.format(doc=doc.format(n=n), gene_type=gene_type, n=n, truth=f"GENE{n}")
    return compile_template(code)


def _own_relaxed_schema(answer_class: type[BaseAnswer]) -> dict[str, Any]:
    """Pydantic's schema of a relaxed class built for this template alone (spec 2.8)."""
    fields: dict[str, Any] = {
        name: (Optional[info.annotation], None)  # noqa: UP045 - runtime type
        for name, info in answer_class.model_fields.items()
        if name not in BaseAnswer.model_fields
    }
    own = create_model(
        f"{answer_class.__name__}__Relaxed",
        __base__=BaseAnswer,
        __doc__=answer_class.__doc__,
        **fields,
    )
    schema: dict[str, Any] = own.model_json_schema()
    return schema


def test_templates_of_one_shape_share_one_relaxed_class() -> None:
    first, second = _template(9101), _template(9102, doc="Another docstring\n\n    indented.")
    assert first is not second
    assert relaxed_class(first) is relaxed_class(second)


@pytest.mark.parametrize(
    "doc", ["Question {n}.", "Line one.\n\n        Line two, indented.\n    ", ""]
)
def test_each_template_keeps_its_own_reply_schema_byte_for_byte(doc: str) -> None:
    first, second = _template(9111, doc=doc), _template(9112, doc=doc + " (second)")
    for answer_class in (first, second):
        own = _own_relaxed_schema(answer_class)
        assert json.dumps(relaxed_schema(answer_class)) == json.dumps(own)
    assert relaxed_schema(second)["description"].endswith("(second)")


def test_a_template_without_docstring_has_no_description() -> None:
    answer_class = compile_template(UNDOCUMENTED)
    assert "description" not in relaxed_schema(answer_class)
    assert json.dumps(relaxed_schema(answer_class)) == json.dumps(_own_relaxed_schema(answer_class))


def test_a_changed_field_type_gets_a_class_of_its_own() -> None:
    text, number = _template(9121), _template(9122, gene_type="int")
    assert relaxed_class(text) is not relaxed_class(number)
    with pytest.raises(ValidationError):
        relaxed_class(number).model_validate({"gene": "not a number"})
    assert relaxed_class(text).model_validate({"gene": "TP53"}).model_dump()["gene"] == "TP53"
    assert relaxed_schema(number)["properties"]["gene"]["anyOf"][0] == {"type": "integer"}


def test_templates_with_other_fields_are_not_shared() -> None:
    first = compile_template(CLASSIC.format(n=1))
    second = compile_template(CLASSIC.format(n=2))
    assert relaxed_class(first) is not relaxed_class(second)
    described = relaxed_schema(second)["properties"]["gene"]["description"]
    assert described == "The gene named for 2"


class _Recording:
    """A raw model that records each request and answers with the same JSON."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def invoke(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply('{"gene": "GENE1", "approved": true}', Usage(), "recording")


def test_the_parse_request_carries_each_templates_reply_schema() -> None:
    raw = _Recording()
    service = LLMService(raw)  # type: ignore[arg-type]
    first, second = _template(9131), _template(9132)
    for answer_class in (first, second):
        service.parse(
            [ChatMessage("user", "parse this")],
            relaxed_class(answer_class),
            call_kind="parsing",
            json_schema=relaxed_schema(answer_class),
        )
    sent = [request.json_schema for request in raw.requests]
    assert [schema["description"] for schema in sent if schema] == [
        "Question 9131.",
        "Question 9132.",
    ]
    assert [request.schema_name for request in raw.requests] == ["Answer__Relaxed"] * 2


def test_the_judge_schema_is_made_once_per_class(monkeypatch: pytest.MonkeyPatch) -> None:
    judge_schema_module = importlib.import_module("pytest_karenina.templates.judge_schema")
    made: list[type[Any]] = []
    real = judge_schema_module.model_json_schema

    def counting(cls: type[Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        made.append(cls)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(judge_schema_module, "model_json_schema", counting)
    first, second = _template(9141), _template(9142)
    schemas = [shared_judge_schema(cls) for cls in (first, first, second, first)]
    assert made == [first, second]
    assert schemas[0] is schemas[1] is schemas[3]
    assert schemas[0] == judge_schema(first) and schemas[2] == judge_schema(second)
