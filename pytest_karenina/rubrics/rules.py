"""Rules for rubric trait configuration, shared by the trait models and the checkpoint reader.

The checkpoint reader builds trait models without pydantic validation so that it can
report violations with a JSON path; both call these functions. Each raises
``TraitConfigError``, whose ``field`` names the offending field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

LLMTraitKind: TypeAlias = Literal["boolean", "score", "literal", "template"]
CallableTraitKind: TypeAlias = Literal["boolean", "score", "literal"]
EvaluationMode: TypeAlias = Literal["tp_only", "full_matrix"]
ContextMode: TypeAlias = Literal["trace_and_workspace", "workspace_only", "trace_only"]

TP_ONLY_METRICS = ("precision", "recall", "f1")
FULL_MATRIX_METRICS = ("precision", "recall", "specificity", "accuracy", "f1")
#: The trait kinds, in the order a Rubric lists them.
TRAIT_TYPES = ("llm", "regex", "callable", "metric", "agentic")
MIN_CLASSES = 2
MAX_CLASSES = 20


class TraitConfigError(ValueError):
    """A trait's configuration breaks a rule; ``field`` names the field at fault."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def check_trait_name(name: str) -> None:
    """Require a non-empty name without ``.`` (dots would clash with template-kind keys)."""
    if not name:
        raise TraitConfigError("name", "a trait name must not be empty")
    if "." in name:
        raise TraitConfigError("name", f"trait name {name!r} must not contain '.'")


def check_classes(classes: Mapping[str, str]) -> None:
    """Literal classes: 2 to 20 entries, non-blank names and descriptions, no case-only twins."""
    if not MIN_CLASSES <= len(classes) <= MAX_CLASSES:
        raise TraitConfigError(
            "classes",
            f"a literal trait needs {MIN_CLASSES} to {MAX_CLASSES} classes, found {len(classes)}",
        )
    seen: set[str] = set()
    for class_name, class_description in classes.items():
        if not class_name.strip():
            raise TraitConfigError("classes", "class names must not be blank")
        if not class_description.strip():
            raise TraitConfigError("classes", f"class {class_name!r} needs a non-blank description")
        folded = class_name.lower()
        if folded in seen:
            raise TraitConfigError(
                "classes", f"class name {class_name!r} is repeated (names are case-insensitive)"
            )
        seen.add(folded)


def literal_bounds(kind: str, classes: Mapping[str, str] | None) -> tuple[int, int] | None:
    """Score bounds of a literal trait (0 .. n-1), or None for other kinds.

    Raises ``TraitConfigError`` when a literal trait has no classes.
    """
    if kind != "literal":
        return None
    if classes is None:
        raise TraitConfigError("classes", "a literal trait needs 'classes'")
    return 0, len(classes) - 1


def check_template_kind(kind: str, template_schema: Mapping[str, Any] | None) -> None:
    """A template schema is given exactly when the kind is ``template``."""
    if kind == "template" and template_schema is None:
        raise TraitConfigError("kind", "a template-kind trait needs a JSON schema")
    if kind != "template" and template_schema is not None:
        raise TraitConfigError("kind", f"a {kind}-kind trait cannot carry a template schema")


def check_pattern(pattern: str) -> None:
    """The regex pattern must compile with Python's ``re``."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:  # deep nesting overflows the parser
        shown = pattern if len(pattern) <= 80 else f"{pattern[:77]}..."
        reason = str(exc) or type(exc).__name__
        raise TraitConfigError(
            "pattern", f"invalid regular expression {shown!r}: {reason}"
        ) from exc


def check_metric_config(
    metrics: list[str], mode: str, tp_instructions: list[str], tn_instructions: list[str]
) -> None:
    """Metric names must suit the evaluation mode; TP (and in full_matrix TN) lists non-empty."""
    if not metrics:
        raise TraitConfigError("metrics", "at least one metric is required")
    allowed = TP_ONLY_METRICS if mode == "tp_only" else FULL_MATRIX_METRICS
    unknown = [metric for metric in metrics if metric not in allowed]
    if unknown:
        raise TraitConfigError(
            "metrics",
            f"metric(s) {', '.join(map(repr, unknown))} not available in {mode} mode "
            f"(expected some of: {', '.join(allowed)})",
        )
    if not tp_instructions:
        raise TraitConfigError("tp_instructions", "tp_instructions must not be empty")
    if mode == "full_matrix" and not tn_instructions:
        raise TraitConfigError(
            "tn_instructions", "tn_instructions must not be empty in full_matrix mode"
        )


def check_agentic_config(
    description: str | None,
    context_mode: str,
    materialize_trace: bool,
    max_turns: int,
    timeout_seconds: int,
) -> None:
    """Agentic traits need a description, positive limits and a trace to materialize."""
    if not description:
        raise TraitConfigError("description", "an agentic trait needs a non-empty description")
    if materialize_trace and context_mode == "workspace_only":
        raise TraitConfigError(
            "materialize_trace",
            "materialize_trace needs a trace, but context_mode is workspace_only",
        )
    if max_turns <= 0:
        raise TraitConfigError("max_turns", f"max_turns must be positive, found {max_turns}")
    if timeout_seconds <= 0:
        raise TraitConfigError(
            "timeout_seconds", f"timeout_seconds must be positive, found {timeout_seconds}"
        )


def json_or_raw(value: Any) -> Any:
    """``value`` decoded if it is a string holding JSON, else ``value`` unchanged.

    Karenina stores several lists and objects as JSON-encoded strings and falls back to
    the raw value when decoding fails.
    """
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
