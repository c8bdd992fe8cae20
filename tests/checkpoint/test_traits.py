"""Trait models built directly: defaults, Karenina's validation rules, Rubric helpers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pytest_karenina.rubrics import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    Rubric,
)

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_llm_defaults_match_karenina() -> None:
    trait = LLMRubricTrait(name="t", kind="score")
    assert (trait.trait_type, trait.min_score, trait.max_score) == ("llm", 1, 5)
    assert trait.higher_is_better is True
    assert (trait.deep_judgment_enabled, trait.deep_judgment_excerpt_enabled) == (False, True)
    assert trait.deep_judgment_search_enabled is False
    assert trait.include_ground_truth is False
    assert trait.extra_properties == {}


def test_literal_bounds_are_derived_and_classes_may_be_a_json_string() -> None:
    trait = LLMRubricTrait(
        name="t", kind="literal", classes='{"low": "a", "mid": "b", "high": "c"}', max_score=9
    )
    assert trait.classes == {"low": "a", "mid": "b", "high": "c"}
    assert (trait.min_score, trait.max_score) == (0, 2)


@pytest.mark.parametrize(
    ("classes", "message"),
    [
        ({"only": "one"}, "needs 2 to 20 classes, found 1"),
        ({f"c{n}": "d" for n in range(21)}, "found 21"),
        ({"Good": "a", "good": "b"}, r"repeated \(names are case-insensitive\)"),
        ({"a": "x", " ": "y"}, "must not be blank"),
        ({"a": "x", "b": " "}, "needs a non-blank description"),
    ],
)
def test_literal_class_rules(classes: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        LLMRubricTrait(name="t", kind="literal", classes=classes)


def test_literal_needs_classes_and_template_needs_a_schema() -> None:
    with pytest.raises(ValidationError, match="needs 'classes'"):
        LLMRubricTrait(name="t", kind="literal")
    with pytest.raises(ValidationError, match="needs a JSON schema"):
        LLMRubricTrait(name="t", kind="template")
    with pytest.raises(ValidationError, match="cannot carry a template schema"):
        LLMRubricTrait(name="t", kind="score", template_schema=SCHEMA)
    template = LLMRubricTrait(name="t", kind="template", template_schema=SCHEMA)
    assert template.higher_is_better is None


@pytest.mark.parametrize("name", ["", "a.b"])
def test_trait_names_are_non_empty_and_dot_free(name: str) -> None:
    with pytest.raises(ValidationError, match="name"):
        RegexTrait(name=name)


def test_regex_pattern_must_compile() -> None:
    assert RegexTrait(name="r").pattern == ""
    with pytest.raises(ValidationError, match="invalid regular expression"):
        RegexTrait(name="r", pattern="[")


def test_callable_code_accepts_bytes_or_base64_text() -> None:
    assert CallableTrait(name="c", callable_code=b"\x00\x01").callable_code == b"\x00\x01"
    assert CallableTrait(name="c", callable_code="aW1wb3J0").callable_code == b"import"
    with pytest.raises(ValidationError, match="not valid base64"):
        CallableTrait(name="c", callable_code="***")
    literal = CallableTrait(name="c", kind="literal", classes={"a": "x", "b": "y"})
    assert (literal.min_score, literal.max_score) == (0, 1)


def test_metric_rules() -> None:
    trait = MetricRubricTrait(name="m", metrics='["f1", "recall"]', tp_instructions=["x"])
    assert trait.metrics == ["f1", "recall"]
    assert trait.higher_is_better is None and trait.repeated_extraction is True
    with pytest.raises(ValidationError, match="not available in tp_only mode"):
        MetricRubricTrait(name="m", metrics=["accuracy"], tp_instructions=["x"])
    with pytest.raises(ValidationError, match="tp_instructions must not be empty"):
        MetricRubricTrait(name="m", metrics=["f1"])
    with pytest.raises(ValidationError, match="tn_instructions must not be empty"):
        MetricRubricTrait(
            name="m", metrics=["accuracy"], evaluation_mode="full_matrix", tp_instructions=["x"]
        )


def test_agentic_rules() -> None:
    trait = AgenticRubricTrait(name="a", description="d")
    assert (trait.kind, trait.max_turns, trait.timeout_seconds) == ("boolean", 15, 120)
    assert (trait.context_mode, trait.higher_is_better) == ("trace_and_workspace", True)
    template = AgenticRubricTrait(name="a", description="d", kind="template", template_schema={})
    assert template.higher_is_better is None
    with pytest.raises(ValidationError, match="must be null for a template-kind trait"):
        AgenticRubricTrait(
            name="a", description="d", kind="template", template_schema={}, higher_is_better=True
        )
    with pytest.raises(ValidationError, match="needs a non-empty description"):
        AgenticRubricTrait(name="a")
    with pytest.raises(ValidationError, match="materialize_trace needs a trace"):
        AgenticRubricTrait(
            name="a", description="d", materialize_trace=True, context_mode="workspace_only"
        )
    with pytest.raises(ValidationError, match="max_turns must be positive"):
        AgenticRubricTrait(name="a", description="d", max_turns=0)


def test_extra_properties_may_not_shadow_known_properties() -> None:
    assert RegexTrait(name="r", extra_properties={"colour": 1}).extra_properties == {"colour": 1}
    with pytest.raises(ValidationError, match="repeats known properties"):
        RegexTrait(name="r", extra_properties={"pattern": "x"})


def test_traits_are_frozen() -> None:
    trait = RegexTrait(name="r")
    with pytest.raises(ValidationError, match="frozen"):
        trait.pattern = "x"  # type: ignore[misc]
    assert trait.model_copy(update={"pattern": "x"}).pattern == "x"


def test_rubric_helpers_and_unique_names() -> None:
    regex = RegexTrait(name="r")
    llm = LLMRubricTrait(name="l", kind="boolean")
    metric = MetricRubricTrait(name="m", metrics=["f1"], tp_instructions=["x"])
    rubric = Rubric.from_traits([metric, regex, llm])
    assert rubric.traits() == [llm, regex, metric]
    assert rubric.trait_names() == ["l", "r", "m"]
    assert not rubric.is_empty and Rubric().is_empty
    with pytest.raises(ValidationError, match="'r' is used twice"):
        Rubric.from_traits([regex, CallableTrait(name="r")])
