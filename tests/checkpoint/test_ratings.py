"""Rubric traits in ratings: every kind, the encoding quirks, scopes and lossless saving."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, dump_checkpoint, parse_checkpoint
from pytest_karenina.rubrics import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    Rubric,
)
from tests.checkpoint.builders import Document, document, first_item, prop, rating

SCHEMA = {"type": "object", "properties": {"year": {"type": "integer"}}, "required": ["year"]}


def with_global(*ratings: dict[str, Any]) -> Document:
    doc = document()
    doc["rating"] = list(ratings)
    return doc


def global_rubric(*ratings: dict[str, Any]) -> Rubric:
    rubric = parse_checkpoint(with_global(*ratings)).global_rubric
    assert rubric is not None
    return rubric


def reparsed(benchmark: Benchmark) -> Benchmark:
    return parse_checkpoint(json.dumps(dump_checkpoint(benchmark)))


@pytest.mark.parametrize(
    ("best", "worst", "kind"),
    [(1, 0, "boolean"), (1.0, 0.0, "boolean"), (5, 1, "score"), (1, 1, "score"), (0, 1, "score")],
)
def test_llm_kind_is_inferred_from_best_and_worst_only_when_absent(
    best: float, worst: float, kind: str
) -> None:
    rubric = global_rubric(rating("T", "karenina:GlobalRubricTrait", best=best, worst=worst))
    (trait,) = rubric.llm_traits
    assert trait.kind == kind
    assert (trait.min_score, trait.max_score) == (1, 5)
    assert trait.higher_is_better is True
    assert trait.deep_judgment_excerpt_enabled is True


def test_score_bounds_come_from_properties_never_from_best_and_worst() -> None:
    (trait,) = global_rubric(
        rating("T", "GlobalRubricTrait", {"min_score": 0, "max_score": 10}, best=3, worst=2)
    ).llm_traits
    assert (trait.kind, trait.min_score, trait.max_score) == ("score", 0, 10)


def test_zero_to_one_score_trait_round_trips_as_a_score() -> None:
    (trait,) = global_rubric(
        rating("T", "GlobalRubricTrait", {"kind": "score", "min_score": 0, "max_score": 1})
    ).llm_traits
    benchmark = parse_checkpoint(
        with_global(
            rating("T", "GlobalRubricTrait", {"kind": "score", "min_score": 0, "max_score": 1})
        )
    )
    assert trait.kind == "score"
    again = reparsed(benchmark)
    assert again.global_rubric is not None
    assert again.global_rubric.llm_traits[0].kind == "score"
    assert again == benchmark


def test_literal_trait_bounds_follow_the_classes() -> None:
    classes = {"poor": "bad", "fair": "ok", "good": "fine"}
    (from_object, from_string) = global_rubric(
        rating("A", "GlobalLLMRubricTrait", {"kind": "literal", "classes": classes}, best=9),
        rating(
            "B",
            "GlobalLLMRubricTrait",
            {"kind": "literal", "classes": json.dumps(classes), "min_score": 4},
        ),
    ).llm_traits
    for trait in (from_object, from_string):
        assert trait.kind == "literal"
        assert trait.classes == classes
        assert list(trait.classes) == ["poor", "fair", "good"]
        assert (trait.min_score, trait.max_score) == (0, 2)


def test_template_kind_keeps_its_schema_and_has_no_direction() -> None:
    kind = {"type": "template", "schema": SCHEMA}
    (trait,) = global_rubric(
        rating("T", "GlobalLLMRubricTrait", {"kind": kind, "higher_is_better": True})
    ).llm_traits
    assert trait.kind == "template"
    assert trait.template_schema == SCHEMA
    assert trait.higher_is_better is None


def test_regex_trait_properties_and_defaults() -> None:
    explicit, default = global_rubric(
        rating(
            "R1",
            "GlobalRegexTrait",
            {"pattern": "^yes", "case_sensitive": False, "invert_result": True},
        ),
        rating("R2", "GlobalRegexTrait"),
    ).regex_traits
    assert (explicit.pattern, explicit.case_sensitive, explicit.invert_result) == (
        "^yes",
        False,
        True,
    )
    assert (default.pattern, default.case_sensitive, default.invert_result) == ("", True, False)
    assert default.higher_is_better is True


def test_callable_code_is_base64_decoded_to_bytes_and_never_unpickled() -> None:
    payload = b"\x80\x05not really a pickle"
    (trait,) = global_rubric(
        rating(
            "C",
            "GlobalCallableTrait",
            {"callable_code": base64.b64encode(payload).decode(), "kind": "literal"}
            | {"classes": {"a": "first", "b": "second"}},
        )
    ).callable_traits
    assert trait.callable_code == payload
    assert (trait.kind, trait.min_score, trait.max_score) == ("literal", 0, 1)


def test_metric_trait_accepts_lists_or_json_strings() -> None:
    listed, encoded = global_rubric(
        rating(
            "M1",
            "GlobalMetricRubricTrait",
            {
                "metrics": ["precision", "accuracy"],
                "evaluation_mode": "full_matrix",
                "tp_instructions": ["mentions BCL2"],
                "tn_instructions": ["mentions TP53"],
                "repeated_extraction": False,
            },
        ),
        rating(
            "M2",
            "GlobalMetricRubricTrait",
            {"metrics": '["f1"]', "tp_instructions": '["a", "b"]'},
        ),
    ).metric_traits
    assert listed.metrics == ["precision", "accuracy"]
    assert listed.evaluation_mode == "full_matrix"
    assert (listed.tn_instructions, listed.repeated_extraction) == (["mentions TP53"], False)
    assert (encoded.metrics, encoded.tp_instructions) == (["f1"], ["a", "b"])
    assert (encoded.evaluation_mode, encoded.higher_is_better) == ("tp_only", None)


def test_agentic_trait_properties() -> None:
    override = {"id": "judge", "model_name": "m", "interface": "claude_agent_sdk"}
    score, template = global_rubric(
        rating(
            "G1",
            "GlobalAgenticRubricTrait",
            {"kind": "score", "max_turns": 3, "context_mode": "trace_only"}
            | {"materialize_trace": True, "model_override": override},
            best=7,
            worst=2,
        ),
        rating("G2", "GlobalAgenticRubricTrait", {"kind": {"type": "template", "schema": SCHEMA}}),
    ).agentic_traits
    assert (score.kind, score.max_turns, score.timeout_seconds) == ("score", 3, 120)
    assert (score.context_mode, score.materialize_trace, score.persist_trace) == (
        "trace_only",
        True,
        False,
    )
    assert score.model_override == override
    assert (score.min_score, score.max_score) == (2, 7)
    assert (template.kind, template.template_schema, template.higher_is_better) == (
        "template",
        SCHEMA,
        None,
    )


def test_missing_prefix_is_added_and_unknown_properties_are_kept() -> None:
    (trait,) = global_rubric(
        rating("R", "GlobalRegexTrait", {"pattern": "x", "colour": "blue", "weight": None})
    ).regex_traits
    assert trait.extra_properties == {"colour": "blue", "weight": None}
    saved = dump_checkpoint(parse_checkpoint(with_global(rating("R", "GlobalRegexTrait"))))
    assert saved["rating"][0]["additionalType"] == "karenina:GlobalRegexTrait"


def test_dynamic_rubric_members_load_by_their_dynamic_trait_type() -> None:
    benchmark = parse_checkpoint(
        with_global(
            rating("Tone", "GlobalDynamicRubricTrait", {"summary": "tone"}, best=5, worst=1),
            rating(
                "Cites",
                "karenina:GlobalDynamicRubricTrait",
                {"pattern": r"\[\d\]", "dynamic_trait_type": "regex", "summary": "citations"},
            ),
            rating("Plain", "GlobalRegexTrait"),
        )
    )
    assert benchmark.global_rubric is not None
    assert benchmark.global_rubric.trait_names() == ["Plain"]
    dynamic = benchmark.global_dynamic_rubric
    assert dynamic is not None
    (tone,) = dynamic.llm_traits
    (cites,) = dynamic.regex_traits
    assert (tone.kind, tone.summary) == ("score", "tone")
    assert (cites.pattern, cites.summary, cites.extra_properties) == (r"\[\d\]", "citations", {})
    written = dump_checkpoint(benchmark)["rating"]
    assert [entry["additionalType"] for entry in written] == [
        "karenina:GlobalRegexTrait",
        "karenina:GlobalDynamicRubricTrait",
        "karenina:GlobalDynamicRubricTrait",
    ]
    cites_props = [(p["name"], p.get("value")) for p in written[2]["additionalProperty"]]
    assert cites_props[-2:] == [("dynamic_trait_type", "regex"), ("summary", "citations")]
    assert reparsed(benchmark) == benchmark


def test_question_level_global_and_dynamic_ratings_are_kept_raw_not_loaded() -> None:
    doc = document()
    ignored = [
        rating("G", "GlobalRegexTrait", {"pattern": "a"}),
        rating("D", "karenina:QuestionSpecificDynamicRubricTrait", {"summary": "s"}),
    ]
    first_item(doc)["rating"] = [
        ignored[0],
        rating("Q", "QuestionSpecificRegexTrait", {"pattern": "b"}),
        ignored[1],
    ]
    benchmark = parse_checkpoint(doc)
    (question,) = benchmark.questions
    assert question.rubric is not None and question.rubric.trait_names() == ["Q"]
    assert question.ignored_ratings == ignored
    assert benchmark.global_rubric is None and benchmark.global_dynamic_rubric is None
    written = dump_checkpoint(benchmark)["dataFeedElement"][0]["item"]["rating"]
    assert written[1:] == ignored
    assert reparsed(benchmark) == benchmark


def test_question_specific_traits_of_every_kind() -> None:
    doc = document()
    first_item(doc)["rating"] = [
        rating(
            "L",
            "QuestionSpecificLLMRubricTrait",
            {"kind": "literal"} | {"classes": {"a": "1", "b": "2"}},
        ),
        rating("S", "QuestionSpecificRubricTrait", best=10, worst=1),
        rating("R", "QuestionSpecificRegexTrait"),
        rating("C", "QuestionSpecificCallableTrait"),
        rating(
            "M", "QuestionSpecificMetricRubricTrait", {"metrics": ["f1"], "tp_instructions": ["x"]}
        ),
        rating("A", "QuestionSpecificAgenticRubricTrait"),
    ]
    rubric = parse_checkpoint(doc).questions[0].rubric
    assert rubric is not None
    assert [type(trait) for trait in rubric.traits()] == [
        LLMRubricTrait,
        LLMRubricTrait,
        RegexTrait,
        CallableTrait,
        MetricRubricTrait,
        AgenticRubricTrait,
    ]
    written = dump_checkpoint(parse_checkpoint(doc))["dataFeedElement"][0]["item"]["rating"]
    assert {entry["additionalType"].split(":")[1] for entry in written} == {
        "QuestionSpecificLLMRubricTrait",
        "QuestionSpecificRubricTrait",
        "QuestionSpecificRegexTrait",
        "QuestionSpecificCallableTrait",
        "QuestionSpecificMetricRubricTrait",
        "QuestionSpecificAgenticRubricTrait",
    }


def test_legacy_global_trait_properties_join_the_global_rubric() -> None:
    regex = [{"name": "Old", "pattern": "x", "invert": True, "case_sensitive": False}]
    code = base64.b64encode(b"payload").decode()
    callables = [{"name": "OldC", "callable_code": code, "kind": "boolean"}]
    metrics = [{"name": "OldM", "metrics": ["recall"], "tp_instructions": ["t"]}]
    doc = with_global(rating("New", "GlobalRegexTrait", {"pattern": "y"}))
    doc["additionalProperty"] = [
        prop("benchmark_format_version", "3.0.0-jsonld"),
        prop("global_regex_rubric_traits", json.dumps(regex)),
        prop("global_callable_rubric_traits", json.dumps(callables)),
        prop("global_metric_rubric_traits", "{not json"),
    ]
    benchmark = parse_checkpoint(doc)
    rubric = benchmark.global_rubric
    assert rubric is not None
    assert rubric.trait_names() == ["New", "Old", "OldC"]
    old = rubric.regex_traits[1]
    assert (old.invert_result, old.case_sensitive) == (True, False)
    assert rubric.callable_traits[0].callable_code == b"payload"
    assert benchmark.properties == {"benchmark_format_version": "3.0.0-jsonld"}
    doc["additionalProperty"][3] = prop("global_metric_rubric_traits", json.dumps(metrics))
    assert parse_checkpoint(doc).global_rubric.trait_names()[-1] == "OldM"  # type: ignore[union-attr]
    saved = dump_checkpoint(benchmark)
    assert [p["name"] for p in saved["additionalProperty"]] == ["benchmark_format_version"]
    assert [r["name"] for r in saved["rating"]] == ["New", "Old", "OldC"]
    assert reparsed(benchmark) == benchmark


def test_every_kind_round_trips_losslessly() -> None:
    doc = with_global(
        rating("L", "GlobalLLMRubricTrait", {"kind": "literal", "classes": {"a": "1", "b": "2"}}),
        rating("T", "GlobalLLMRubricTrait", {"kind": {"type": "template", "schema": SCHEMA}}),
        rating(
            "S",
            "GlobalRubricTrait",
            {"deep_judgment_enabled": True, "deep_judgment_max_excerpts": 3}
            | {"deep_judgment_fuzzy_match_threshold": 0.8, "summary": "sum", "min_score": None},
            best=10,
            worst=0,
        ),
        rating("C", "GlobalCallableTrait", {"kind": "score", "min_score": 2, "max_score": 4}),
        rating(
            "M",
            "GlobalMetricRubricTrait",
            {"metrics": ["f1"], "tp_instructions": ["x"], "higher_is_better": True},
        ),
        rating(
            "A",
            "GlobalAgenticRubricTrait",
            {"kind": "literal", "classes": {"x": "1", "y": "2"}, "model_override": {"id": "m"}},
        ),
        rating("B", "GlobalAgenticRubricTrait", {"kind": {"type": "template", "schema": SCHEMA}}),
    )
    benchmark = parse_checkpoint(doc)
    llm = benchmark.global_rubric.llm_traits  # type: ignore[union-attr]
    assert llm[2].min_score is None and llm[2].deep_judgment_fuzzy_match_threshold == 0.8
    first = dump_checkpoint(benchmark)
    again = parse_checkpoint(json.dumps(first))
    assert again == benchmark
    assert dump_checkpoint(again) == first


@pytest.mark.parametrize(
    ("trait", "rating_type"),
    [
        (LLMRubricTrait(name="b", kind="boolean"), "karenina:GlobalRubricTrait"),
        (LLMRubricTrait(name="s", kind="score"), "karenina:GlobalRubricTrait"),
        (
            LLMRubricTrait(name="l", kind="literal", classes={"a": "x", "b": "y"}),
            "karenina:GlobalLLMRubricTrait",
        ),
        (
            LLMRubricTrait(name="t", kind="template", template_schema=SCHEMA),
            "karenina:GlobalLLMRubricTrait",
        ),
        (RegexTrait(name="r", pattern="a"), "karenina:GlobalRegexTrait"),
        (CallableTrait(name="c", callable_code=b"\x00"), "karenina:GlobalCallableTrait"),
        (
            MetricRubricTrait(name="m", metrics=["f1"], tp_instructions=["t"]),
            "karenina:GlobalMetricRubricTrait",
        ),
        (AgenticRubricTrait(name="a", description="d"), "karenina:GlobalAgenticRubricTrait"),
    ],
)
def test_constructed_traits_save_with_karenina_types_and_reload_equal(
    trait: Any, rating_type: str
) -> None:
    benchmark = Benchmark(name="b", global_rubric=Rubric.from_traits([trait]))
    (written,) = dump_checkpoint(benchmark)["rating"]
    assert written["additionalType"] == rating_type
    assert reparsed(benchmark) == benchmark
