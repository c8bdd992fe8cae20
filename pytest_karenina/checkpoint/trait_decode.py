"""Build typed trait models from a rating's properties (or a legacy trait object).

Each per-kind decoder consumes the properties it knows from ``Props.values``;
what remains becomes the trait's ``extra_properties``. Values are type-checked here
and the cross-field rules come from ``pytest_karenina.rubrics.traits``, so the models
are built with ``model_construct`` (no second validation).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, cast

from pytest_karenina.checkpoint.access import wrong_type
from pytest_karenina.checkpoint.errors import DecodeFailure
from pytest_karenina.checkpoint.props import (
    ABSENT,
    Props,
    take_bool,
    take_choice,
    take_classes,
    take_float,
    take_int,
    take_kind,
    take_opt_bool,
    take_str,
    take_str_list,
)
from pytest_karenina.rubrics.rules import (
    CallableTraitKind,
    ContextMode,
    EvaluationMode,
    LLMTraitKind,
    TraitConfigError,
    check_agentic_config,
    check_classes,
    check_metric_config,
    check_pattern,
    check_template_kind,
    literal_bounds,
)
from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    RubricTrait,
)


def _classes_and_bounds(
    props: Props, kind: str, min_score: int | None, max_score: int | None
) -> tuple[dict[str, str] | None, int | None, int | None]:
    """The validated ``classes`` and the score bounds (0..n-1 for the literal kind)."""
    classes = take_classes(props)
    if classes is not None:
        check_classes(classes)
    bounds = literal_bounds(kind, classes)
    if bounds is not None:
        return classes, bounds[0], bounds[1]
    return classes, min_score, max_score


def _llm(name: str, description: str | None, props: Props, best: float, worst: float) -> Any:
    dj_enabled = take_bool(props, "deep_judgment_enabled", False)
    dj_excerpt = take_bool(props, "deep_judgment_excerpt_enabled", True)
    dj_search = take_bool(props, "deep_judgment_search_enabled", False)
    dj_max_excerpts = take_int(props, "deep_judgment_max_excerpts", None)
    dj_threshold = take_float(props, "deep_judgment_fuzzy_match_threshold")
    dj_retries = take_int(props, "deep_judgment_excerpt_retry_attempts", None)
    higher = take_opt_bool(props, "higher_is_better", True)
    # Karenina's rule: without an explicit kind, best 1 / worst 0 means boolean.
    inferred = "boolean" if best == 1 and worst == 0 else "score"
    kind, schema = take_kind(props, ("boolean", "score", "literal"), inferred)
    min_score = take_int(props, "min_score", 1)
    max_score = take_int(props, "max_score", 5)
    check_template_kind(kind, schema)
    classes, min_score, max_score = _classes_and_bounds(props, kind, min_score, max_score)
    return LLMRubricTrait.model_construct(
        name=name,
        description=description,
        summary=take_str(props, "summary", None),
        kind=cast(LLMTraitKind, kind),
        min_score=min_score,
        max_score=max_score,
        classes=classes,
        template_schema=schema,
        higher_is_better=None if kind == "template" else (True if higher is None else higher),
        deep_judgment_enabled=dj_enabled,
        deep_judgment_excerpt_enabled=dj_excerpt,
        deep_judgment_search_enabled=dj_search,
        deep_judgment_max_excerpts=dj_max_excerpts,
        deep_judgment_fuzzy_match_threshold=dj_threshold,
        deep_judgment_excerpt_retry_attempts=dj_retries,
        include_ground_truth=False,
        extra_properties=props.values,
    )


def _regex(name: str, description: str | None, props: Props, best: float, worst: float) -> Any:
    pattern = take_str(props, "pattern", "") or ""
    check_pattern(pattern)
    return RegexTrait.model_construct(
        name=name,
        description=description,
        summary=take_str(props, "summary", None),
        pattern=pattern,
        case_sensitive=take_bool(props, "case_sensitive", True),
        invert_result=take_bool(props, "invert_result", False),
        higher_is_better=take_bool(props, "higher_is_better", True),
        extra_properties=props.values,
    )


def _callable(name: str, description: str | None, props: Props, best: float, worst: float) -> Any:
    encoded = take_str(props, "callable_code", "") or ""
    try:
        code = base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise DecodeFailure(
            props.path("callable_code"), f"expected base64 text in callable_code: {exc}"
        ) from exc
    kind = take_choice(props, "kind", ("boolean", "score", "literal"), "boolean")
    min_score = take_int(props, "min_score", None)
    max_score = take_int(props, "max_score", None)
    classes, min_score, max_score = _classes_and_bounds(props, kind, min_score, max_score)
    return CallableTrait.model_construct(
        name=name,
        description=description,
        summary=take_str(props, "summary", None),
        callable_code=code,
        kind=cast(CallableTraitKind, kind),
        invert_result=take_bool(props, "invert_result", False),
        min_score=min_score,
        max_score=max_score,
        classes=classes,
        higher_is_better=take_bool(props, "higher_is_better", True),
        extra_properties=props.values,
    )


def _metric(name: str, description: str | None, props: Props, best: float, worst: float) -> Any:
    metrics = take_str_list(props, "metrics")
    mode = take_choice(props, "evaluation_mode", ("tp_only", "full_matrix"), "tp_only")
    tp_instructions = take_str_list(props, "tp_instructions")
    tn_instructions = take_str_list(props, "tn_instructions")
    check_metric_config(metrics, mode, tp_instructions, tn_instructions)
    return MetricRubricTrait.model_construct(
        name=name,
        description=description,
        summary=take_str(props, "summary", None),
        metrics=metrics,
        evaluation_mode=cast(EvaluationMode, mode),
        tp_instructions=tp_instructions,
        tn_instructions=tn_instructions,
        repeated_extraction=take_bool(props, "repeated_extraction", True),
        higher_is_better=take_opt_bool(props, "higher_is_better", None),
        extra_properties=props.values,
    )


def _agentic(name: str, description: str | None, props: Props, best: float, worst: float) -> Any:
    kind, schema = take_kind(props, ("boolean", "score", "literal"), "boolean")
    higher = take_opt_bool(props, "higher_is_better", ABSENT)
    if kind == "template":
        if higher is not ABSENT and higher is not None:
            raise TraitConfigError(
                "higher_is_better", "higher_is_better must be null for a template-kind trait"
            )
        higher = None
    elif higher is ABSENT or higher is None:
        higher = True
    context_mode = take_choice(
        props,
        "context_mode",
        ("trace_and_workspace", "workspace_only", "trace_only"),
        "trace_and_workspace",
    )
    materialize = take_bool(props, "materialize_trace", False)
    max_turns = take_int(props, "max_turns", 15)
    timeout = take_int(props, "timeout_seconds", 120)
    max_turns = 15 if max_turns is None else max_turns
    timeout = 120 if timeout is None else timeout
    check_agentic_config(description, context_mode, materialize, max_turns, timeout)
    override = props.values.pop("model_override", None)
    if override is not None and not isinstance(override, dict):
        raise wrong_type(props.path("model_override"), "a ModelConfig object", override)
    # Older writers kept score bounds only in best/worst; use them when the
    # min_score/max_score properties are absent.
    score_kind = kind == "score"
    min_score = take_int(props, "min_score", int(worst) if score_kind else 1)
    max_score = take_int(props, "max_score", int(best) if score_kind else 5)
    classes, min_score, max_score = _classes_and_bounds(props, kind, min_score, max_score)
    return AgenticRubricTrait.model_construct(
        name=name,
        description=description,
        summary=take_str(props, "summary", None),
        kind=cast(LLMTraitKind, kind),
        template_schema=schema,
        higher_is_better=higher,
        context_mode=cast(ContextMode, context_mode),
        materialize_trace=materialize,
        persist_trace=take_bool(props, "persist_trace", False),
        max_turns=max_turns,
        timeout_seconds=timeout,
        classes=classes,
        model_override=override,
        min_score=min_score,
        max_score=max_score,
        extra_properties=props.values,
    )


_DECODERS: Mapping[str, Callable[[str, str | None, Props, float, float], Any]] = MappingProxyType(
    {"llm": _llm, "regex": _regex, "callable": _callable, "metric": _metric, "agentic": _agentic}
)


def decode_trait(
    trait_type: str,
    name: str,
    description: str | None,
    props: Props,
    best: float = 1,
    worst: float = 0,
) -> RubricTrait:
    """A trait of ``trait_type`` (llm/regex/callable/metric/agentic) from ``props``.

    ``best``/``worst`` are the rating's bestRating/worstRating (used to infer an LLM
    trait's kind). Raises ``DecodeFailure`` pointing at the offending property.
    """
    try:
        trait: RubricTrait = _DECODERS[trait_type](name, description, props, best, worst)
    except TraitConfigError as exc:
        raise DecodeFailure(props.path(exc.field), exc.reason) from None
    return trait
