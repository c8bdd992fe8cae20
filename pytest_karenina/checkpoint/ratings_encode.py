"""Typed traits -> schema.org ``Rating`` objects, in the layout Karenina reads.

Departures from Karenina's own writer, both so that load -> save -> load is lossless:
LLM traits always carry an explicit ``kind`` (a 0..1 score trait would otherwise be
re-read as boolean), and ``deep_judgment_*`` properties are never stripped.
"""

from __future__ import annotations

import base64
from typing import Any

from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    RubricTrait,
)

_Props = list[tuple[str, Any]]
_Encoded = tuple[str, float, float, _Props]


def property_value(name: str, value: Any) -> dict[str, Any]:
    """A PropertyValue; None is written as an entry without ``value`` (as Karenina does)."""
    entry: dict[str, Any] = {"@type": "PropertyValue", "name": name}
    if value is not None:
        entry["value"] = value
    return entry


def _score_range(min_score: int | None, max_score: int | None) -> tuple[float, float]:
    return (5 if max_score is None else max_score), (1 if min_score is None else min_score)


def _kind_value(kind: str, schema: dict[str, Any] | None) -> Any:
    return {"type": "template", "schema": schema} if kind == "template" else kind


def _bounds(kind: str, min_score: int | None, max_score: int | None) -> tuple[float, float]:
    """bestRating/worstRating for a kind (informational for Karenina, except LLM inference)."""
    if kind == "boolean":
        return 1, 0
    if kind == "template":
        return 0, 0
    return _score_range(min_score, max_score)


def _llm(trait: LLMRubricTrait) -> _Encoded:
    props: _Props = [
        ("deep_judgment_enabled", trait.deep_judgment_enabled),
        ("deep_judgment_excerpt_enabled", trait.deep_judgment_excerpt_enabled),
        ("deep_judgment_search_enabled", trait.deep_judgment_search_enabled),
    ]
    for name, value in (
        ("deep_judgment_max_excerpts", trait.deep_judgment_max_excerpts),
        ("deep_judgment_fuzzy_match_threshold", trait.deep_judgment_fuzzy_match_threshold),
        ("deep_judgment_excerpt_retry_attempts", trait.deep_judgment_excerpt_retry_attempts),
    ):
        if value is not None:
            props.append((name, value))
    props.append(("higher_is_better", trait.higher_is_better))
    props.append(("kind", _kind_value(trait.kind, trait.template_schema)))
    if trait.kind != "literal":
        props += [("min_score", trait.min_score), ("max_score", trait.max_score)]
    if trait.classes is not None:
        props.append(("classes", trait.classes))
    type_name = "RubricTrait" if trait.kind in ("boolean", "score") else "LLMRubricTrait"
    best, worst = _bounds(trait.kind, trait.min_score, trait.max_score)
    return type_name, best, worst, props


def _regex(trait: RegexTrait) -> _Encoded:
    props: _Props = [
        ("pattern", trait.pattern),
        ("case_sensitive", trait.case_sensitive),
        ("invert_result", trait.invert_result),
        ("higher_is_better", trait.higher_is_better),
    ]
    return "RegexTrait", 1, 0, props


def _callable(trait: CallableTrait) -> _Encoded:
    props: _Props = [
        ("callable_code", base64.b64encode(trait.callable_code).decode("ascii")),
        ("kind", trait.kind),
        ("invert_result", trait.invert_result),
        ("higher_is_better", trait.higher_is_better),
    ]
    if trait.kind != "literal":
        for name, value in (("min_score", trait.min_score), ("max_score", trait.max_score)):
            if value is not None:
                props.append((name, value))
    if trait.classes is not None:
        props.append(("classes", trait.classes))
    best, worst = _bounds(trait.kind, trait.min_score, trait.max_score)
    return "CallableTrait", best, worst, props


def _metric(trait: MetricRubricTrait) -> _Encoded:
    props: _Props = [
        ("metrics", trait.metrics),
        ("repeated_extraction", trait.repeated_extraction),
        ("evaluation_mode", trait.evaluation_mode),
    ]
    if trait.tp_instructions:
        props.append(("tp_instructions", trait.tp_instructions))
    if trait.tn_instructions:
        props.append(("tn_instructions", trait.tn_instructions))
    if trait.higher_is_better is not None:
        props.append(("higher_is_better", trait.higher_is_better))
    return "MetricRubricTrait", 1, 0, props


def _agentic(trait: AgenticRubricTrait) -> _Encoded:
    props: _Props = [
        ("kind", _kind_value(trait.kind, trait.template_schema)),
        ("higher_is_better", trait.higher_is_better),
        ("context_mode", trait.context_mode),
        ("materialize_trace", trait.materialize_trace),
        ("persist_trace", trait.persist_trace),
        ("max_turns", trait.max_turns),
        ("timeout_seconds", trait.timeout_seconds),
    ]
    if trait.kind != "literal":
        props += [("min_score", trait.min_score), ("max_score", trait.max_score)]
    if trait.classes is not None:
        props.append(("classes", trait.classes))
    if trait.model_override is not None:
        props.append(("model_override", trait.model_override))
    best, worst = _bounds(trait.kind, trait.min_score, trait.max_score)
    return "AgenticRubricTrait", best, worst, props


def _encode_kind(trait: RubricTrait) -> _Encoded:
    if isinstance(trait, LLMRubricTrait):
        return _llm(trait)
    if isinstance(trait, RegexTrait):
        return _regex(trait)
    if isinstance(trait, CallableTrait):
        return _callable(trait)
    if isinstance(trait, MetricRubricTrait):
        return _metric(trait)
    return _agentic(trait)


def _number(value: float) -> float:
    return int(value) if float(value).is_integer() else value


def encode_trait(trait: RubricTrait, scope: str, *, dynamic: bool = False) -> dict[str, Any]:
    """The Rating for ``trait``; ``scope`` is "Global" or "QuestionSpecific".

    A dynamic-rubric member gets the DynamicRubricTrait type plus the
    ``dynamic_trait_type`` and ``summary`` properties Karenina reads back.
    """
    type_name, best, worst, props = _encode_kind(trait)
    if trait.summary is not None and not dynamic:
        props.append(("summary", trait.summary))
    props.extend(trait.extra_properties.items())
    if dynamic:
        type_name = "DynamicRubricTrait"
        props.append(("dynamic_trait_type", trait.trait_type))
        if trait.summary is not None:
            props.append(("summary", trait.summary))
    rating: dict[str, Any] = {"@type": "Rating", "name": trait.name}
    if trait.description is not None:
        rating["description"] = trait.description
    rating["bestRating"] = _number(best)
    rating["worstRating"] = _number(worst)
    rating["additionalType"] = f"karenina:{scope}{type_name}"
    if props:
        rating["additionalProperty"] = [property_value(name, value) for name, value in props]
    return rating
