"""Verification primitives: deterministic rules comparing extracted values with ground truth."""

from pytest_karenina.templates.normalizers import (
    NORMALIZER_NAMES,
    Normalizer,
    SynonymMap,
    apply_normalizer,
    apply_normalizers,
)
from pytest_karenina.templates.primitives.base import (
    TracePrimitive,
    VerificationPrimitive,
    primitive_from_dict,
    primitive_types,
    serialize_primitive,
)
from pytest_karenina.templates.primitives.collections import OrderedMatch, SetContainment
from pytest_karenina.templates.primitives.dates import DateMatch, DateRange, DateTolerance
from pytest_karenina.templates.primitives.graded import (
    NumericGraded,
    NumericRangeGraded,
    NumericThresholdGraded,
)
from pytest_karenina.templates.primitives.numeric import (
    NumericExact,
    NumericMaximum,
    NumericMinimum,
    NumericRange,
    NumericTolerance,
)
from pytest_karenina.templates.primitives.semantic import (
    SemanticMatch,
    SemanticMatchUnavailable,
    set_similarity_function,
)
from pytest_karenina.templates.primitives.text import (
    BooleanMatch,
    ContainsAll,
    ContainsAny,
    ExactMatch,
    LiteralMatch,
    RegexMatch,
)
from pytest_karenina.templates.primitives.trace import TraceContains, TraceLength, TraceRegex

COMPARISON_PRIMITIVES: tuple[type[VerificationPrimitive], ...] = (
    BooleanMatch,
    ExactMatch,
    ContainsAny,
    ContainsAll,
    RegexMatch,
    SemanticMatch,
    NumericExact,
    NumericTolerance,
    NumericGraded,
    NumericRangeGraded,
    NumericThresholdGraded,
    NumericMinimum,
    NumericMaximum,
    NumericRange,
    SetContainment,
    OrderedMatch,
    LiteralMatch,
    DateMatch,
    DateTolerance,
    DateRange,
)
TRACE_PRIMITIVES: tuple[type[TracePrimitive], ...] = (TraceRegex, TraceContains, TraceLength)

__all__ = [
    "COMPARISON_PRIMITIVES",
    "NORMALIZER_NAMES",
    "TRACE_PRIMITIVES",
    "BooleanMatch",
    "ContainsAll",
    "ContainsAny",
    "DateMatch",
    "DateRange",
    "DateTolerance",
    "ExactMatch",
    "LiteralMatch",
    "Normalizer",
    "NumericExact",
    "NumericGraded",
    "NumericMaximum",
    "NumericMinimum",
    "NumericRange",
    "NumericRangeGraded",
    "NumericThresholdGraded",
    "NumericTolerance",
    "OrderedMatch",
    "RegexMatch",
    "SemanticMatch",
    "SemanticMatchUnavailable",
    "SetContainment",
    "SynonymMap",
    "TraceContains",
    "TraceLength",
    "TracePrimitive",
    "TraceRegex",
    "VerificationPrimitive",
    "apply_normalizer",
    "apply_normalizers",
    "primitive_from_dict",
    "primitive_types",
    "serialize_primitive",
    "set_similarity_function",
]
