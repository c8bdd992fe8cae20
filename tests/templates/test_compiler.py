"""Compiling template source: namespace, discovery, validation and error messages."""

from __future__ import annotations

import pytest

from pytest_karenina.templates import (
    BaseAnswer,
    TemplateError,
    compile_template,
    normalize_source,
    template_id,
    template_mode,
)

QID = "urn:karenina:test:q042"
HEAD = "class Answer(BaseAnswer):\n"


def compile_error(code: str) -> TemplateError:
    with pytest.raises(TemplateError) as caught:
        compile_template(code, question_id=QID)
    return caught.value


def test_top_level_imports_and_helpers_work_inside_methods() -> None:
    # Karenina's two-dict exec raises NameError here; we run one namespace.
    code = """
import re

def canonical(symbol):
    return re.sub(r"[^A-Z0-9]", "", symbol.upper())

class Answer(BaseAnswer):
    target: str = Field(description="The target gene symbol")

    def ground_truth(self):
        self.correct = {"target": "BCL2"}

    def verify(self) -> bool:
        return canonical(self.target) == self.correct["target"]
"""
    answer_class = compile_template(code)
    assert answer_class(target="Bcl-2").verify() is True
    assert answer_class(target="BCL6").verify() is False


def test_helper_model_referenced_in_an_annotation() -> None:
    code = """
from pydantic import BaseModel

class Citation(BaseModel):
    title: str
    year: int | None = None

class Answer(BaseAnswer):
    citations: list[Citation] = Field(description="Works cited")

    def verify(self) -> bool:
        return any(c.year == 1928 for c in self.citations)
"""
    answer = compile_template(code)(citations=[{"title": "On penicillin", "year": 1928}])
    assert answer.verify() is True


def test_injected_names_need_no_imports() -> None:
    code = """
class Answer(BaseAnswer):
    kind: Literal["a", "b"] = VerifiedField(description="The kind", ground_truth="a",
        verify_with=LiteralMatch())
    tags: List[str] = VerifiedField(description="Tags", ground_truth=["x"],
        verify_with=SetContainment(mode="superset"))
    note: Optional[str] = Field(default=None, description="Free note")
"""
    answer_class = compile_template(code)
    assert answer_class(kind="a", tags=["x", "y"]).verify() is True
    assert template_mode(answer_class) == "mixed"


def test_any_class_name_is_discovered() -> None:
    code = """
class VenetoclaxAnswer(BaseAnswer):
    target: str = VerifiedField(description="Drug target protein", ground_truth="BCL2",
        verify_with=ExactMatch())
"""
    answer_class = compile_template(code, question_id=QID)
    assert answer_class.__name__ == "VenetoclaxAnswer"
    assert answer_class(target=" bcl2 ").verify() is True


def test_an_intermediate_base_class_is_not_a_second_answer() -> None:
    code = """
class GeneAnswerBase(BaseAnswer):
    def verify(self) -> bool:
        return self.gene.upper() == self.correct["gene"]

class Answer(GeneAnswerBase):
    gene: str = Field(description="Gene symbol")
    def ground_truth(self):
        self.correct = {"gene": "TP53"}
"""
    answer_class = compile_template(code)
    assert answer_class.__name__ == "Answer"
    assert answer_class(gene="tp53").verify() is True


def test_optional_fields_are_not_rejected_by_validation() -> None:
    # Karenina's dummy-value probe gives "" to `int | None` and rejects this template.
    code = """
class Answer(BaseAnswer):
    gene_name: str = Field(description="Gene symbol")
    synonyms: list[str] | None = Field(default=None, description="Other names")
    omim_id: int | None = Field(default=None, description="OMIM number")

    def model_post_init(self, __context):
        self.correct = {"gene_name": "BRCA1", "omim_id": 113705}

    def verify(self) -> bool:
        return self.gene_name.upper() == self.correct["gene_name"]
"""
    assert compile_template(code)(gene_name="brca1").verify() is True


def test_regex_only_template_needs_no_verify() -> None:
    code = """
class Answer(BaseAnswer):
    def ground_truth(self):
        self.regex = {"cites": {"pattern": r"\\[\\d+\\]", "expected": 2, "match_type": "count"}}
"""
    answer_class = compile_template(code)
    assert template_mode(answer_class) == "regex_only"
    assert answer_class().verify_regex("see [1] and [2]")["success"] is True


def test_indented_source_is_dedented() -> None:
    code = "    class Answer(BaseAnswer):\n        x: int = Field(description='x')\n" + (
        "        def verify(self):\n            return self.x == 1\n"
    )
    assert compile_template(code)(x=1).verify() is True


@pytest.mark.parametrize(
    ("code", "line", "fragment"),
    [
        pytest.param("class Answer(BaseAnswer):\n    x: int =\n", 2, "syntax error", id="syntax"),
        pytest.param("import math\n\nratio = 1 / 0\n", 3, "ZeroDivisionError", id="runtime"),
        pytest.param(
            "from karenina.schemas.entities.answer import VerifiedField\n",
            1,
            "cannot import name 'VerifiedField'",
            id="wrong-import-path",
        ),
        pytest.param(
            "import karenina.domain.answers\n", 1, "karenina.domain.answers", id="no-module"
        ),
        pytest.param(
            "class Answer(BaseAnswer):\n    x: float = VerifiedField(description='x',\n"
            "        ground_truth=1.0, verify_with=NumericTolerance())\n",
            3,
            "NumericTolerance: tolerance: Field required",
            id="primitive-missing-param",
        ),
        pytest.param(
            HEAD + "    x: str = VerifiedField(description='x', ground_truth='a',\n"
            "        verify_with=ExactMatch(normalize=['lowercase', 'uppercase']))\n",
            3,
            "unknown normalizer 'uppercase'",
            id="bad-normalizer",
        ),
        pytest.param(
            "\nclass Answer(BaseAnswer):\n    correct: dict = Field(description='x')\n",
            2,
            "reserved field(s) ['correct']",
            id="reserved-correct",
        ),
        pytest.param(
            HEAD + "    x: str = VerifiedField(description='x', ground_truth=True,\n"
            "        verify_with=TraceContains(substring='[1]'))\n",
            1,
            "must be typed bool",
            id="trace-field-not-bool",
        ),
        pytest.param(
            HEAD + "    x: int = VerifiedField(description='x', ground_truth=1,\n"
            "        verify_with=NumericExact())\n    class VerificationStrategy:\n"
            "        verify_strategy = AnyOf(conditions=[FieldCheck(field='y')])\n",
            1,
            "refers to ['y'], which are not VerifiedFields",
            id="strategy-unknown-field",
        ),
        pytest.param(
            "\n\nclass Answer(BaseAnswer):\n    x: int = Field(description='x')\n",
            3,
            "has no verify() method",
            id="classic-without-verify",
        ),
        pytest.param(
            "class Answer(BaseAnswer):\n    x: int = Field(description='x')\n"
            "    def ground_truth(self):\n        self.correct = ['x']\n"
            "    def verify(self):\n        return True\n",
            1,
            "self.correct must be a dict, got list",
            id="correct-not-dict",
        ),
        pytest.param(
            "class Answer(BaseAnswer):\n    x: int = Field(description='x')\n"
            "    def ground_truth(self):\n        raise RuntimeError('lookup failed')\n"
            "    def verify(self):\n        return True\n",
            4,
            "RuntimeError: lookup failed",
            id="ground-truth-raises",
        ),
        pytest.param(
            "\nclass Answer(BaseAnswer):\n    x: 'Missing' = Field(description='x')\n"
            "    def verify(self):\n        return True\n",
            2,
            "name 'Missing' is not defined",
            id="unresolved-annotation",
        ),
    ],
)
def test_errors_name_question_line_and_reason(code: str, line: int, fragment: str) -> None:
    error = compile_error(code)
    assert error.question_id == QID
    assert error.line == line
    assert fragment in error.reason
    assert str(error).startswith(f"answer template of question {QID}, line {line}: ")


def test_no_answer_class() -> None:
    error = compile_error("x = 1\n")
    assert "no answer class" in str(error) and QID in str(error)
    assert error.line is None


def test_two_leaf_classes_are_refused_with_their_names() -> None:
    code = """
class Citation(BaseAnswer):
    title: str = Field(description="Title")
    def verify(self):
        return True

class Answer(BaseAnswer):
    citation: Citation | None = Field(default=None, description="The citation")
    def verify(self):
        return True
"""
    error = compile_error(code)
    assert "2 answer classes (Citation, Answer)" in error.reason
    assert "pydantic.BaseModel" in error.reason


def test_empty_template() -> None:
    assert template_id("") == template_id("  \n\t ") == "no_template"
    assert "no answer class" in compile_error("").reason


def test_template_id_normalisation() -> None:
    code = "class Answer(BaseAnswer):\n    x: int = Field(description='x')\n"
    variants = [
        code.replace("\n", "\r\n"),
        "  " + code.replace("\n", "\n  "),
        code.replace("\n", "   \n") + "\n\n",
    ]
    assert {template_id(v) for v in variants} == {template_id(code)}
    assert normalize_source(code.replace("\n", "\r")) == code.strip()
    assert template_id(code + "# changed\n") != template_id(code)


def test_compiled_classes_are_cached_by_source() -> None:
    code = "class Answer(BaseAnswer):\n    x: int = Field(description='x')\n    def verify(self):\n        return True\n"  # noqa: E501
    first = compile_template(code)
    assert compile_template(code) is first
    assert compile_template(code, QID) is compile_template(code, QID)
    assert compile_template(code, QID).__bases__ == (first,)
    assert first._source_code == code


def test_karenina_import_paths_resolve_to_our_classes() -> None:
    code = """
import karenina.schemas.entities as entities
from karenina.schemas import BaseAnswer as SchemaBase
from karenina.schemas.entities import BaseAnswer, VerifiedField, AllOf, FieldCheck, ExactMatch
from karenina.schemas.entities.answer import BaseAnswer as AnswerBase
from karenina.schemas.entities.verified_field import VerifiedField as VF
from karenina.schemas.entities.composition import AnyOf, AtLeastN
from karenina.schemas.entities.conditional import ConditionalGroundTruth, GroundTruthCase
from karenina.schemas.primitives import BooleanMatch, NumericTolerance, SynonymMap
from karenina.schemas.primitives.comparisons import RegexMatch
from pydantic import Field, BaseModel
from typing import Any
assert SchemaBase is BaseAnswer is AnswerBase is entities.BaseAnswer
assert VF is VerifiedField

class Answer(entities.BaseAnswer):
    gene: str = VF(description="Gene", ground_truth="TP53",
                   verify_with=RegexMatch(pattern="^TP53$", flags=["IGNORECASE"]))
"""
    answer_class = compile_template(code)
    assert issubclass(answer_class, BaseAnswer)
    assert answer_class(gene="tp53").verify() is True


def test_shim_does_not_touch_sys_modules() -> None:
    import sys

    compile_template(
        "from karenina.schemas.entities import BaseAnswer\nx = 1\n"
        + ("class Answer(BaseAnswer):\n    def ground_truth(self):\n        self.regex = {}\n")
    )
    assert not any(name == "karenina" or name.startswith("karenina.") for name in sys.modules)


def test_linecache_keeps_only_the_most_recent_template_sources() -> None:
    """Template sources stay readable for tracebacks, but a large run does not keep all."""
    import linecache

    from pytest_karenina.templates.compiler import _SourceLines

    lines = _SourceLines(keep=3)
    names = [f"<karenina template bound-test-{n}>" for n in range(5)]
    try:
        for n, name in enumerate(names):
            lines.register(name, f"x = {n}\n")
        assert [name in linecache.cache for name in names] == [False, False, True, True, True]
        assert linecache.getline(names[-1], 1) == "x = 4\n"
    finally:
        for name in names:
            linecache.cache.pop(name, None)
