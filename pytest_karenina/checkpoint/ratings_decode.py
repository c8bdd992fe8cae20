"""Read ``rating`` arrays: trait-type dispatch, scope rules and legacy global traits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pytest_karenina.checkpoint.access import (
    as_object,
    at,
    check_type_tag,
    join,
    opt_str,
    property_values,
    req_number,
    req_str,
)
from pytest_karenina.checkpoint.errors import DecodeFailure
from pytest_karenina.checkpoint.props import Props
from pytest_karenina.checkpoint.trait_decode import decode_trait
from pytest_karenina.rubrics.rules import (
    TRAIT_TYPES,
    TraitConfigError,
    check_trait_name,
)
from pytest_karenina.rubrics.traits import (
    Rubric,
    RubricTrait,
    group_traits,
)

#: additionalType -> (scope, trait type); "dynamic" marks dynamic-rubric members.
ADDITIONAL_TYPES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "karenina:GlobalRubricTrait": ("global", "llm"),
        "karenina:QuestionSpecificRubricTrait": ("question", "llm"),
        "karenina:GlobalLLMRubricTrait": ("global", "llm"),
        "karenina:QuestionSpecificLLMRubricTrait": ("question", "llm"),
        "karenina:GlobalRegexTrait": ("global", "regex"),
        "karenina:QuestionSpecificRegexTrait": ("question", "regex"),
        "karenina:GlobalCallableTrait": ("global", "callable"),
        "karenina:QuestionSpecificCallableTrait": ("question", "callable"),
        "karenina:GlobalMetricRubricTrait": ("global", "metric"),
        "karenina:QuestionSpecificMetricRubricTrait": ("question", "metric"),
        "karenina:GlobalAgenticRubricTrait": ("global", "agentic"),
        "karenina:QuestionSpecificAgenticRubricTrait": ("question", "agentic"),
        "karenina:GlobalDynamicRubricTrait": ("global", "dynamic"),
        "karenina:QuestionSpecificDynamicRubricTrait": ("question", "dynamic"),
    }
)

#: Root additionalProperty names of Karenina's legacy global-trait storage.
LEGACY_TRAIT_PROPERTIES: Mapping[str, str] = MappingProxyType(
    {
        "global_regex_rubric_traits": "regex",
        "global_callable_rubric_traits": "callable",
        "global_metric_rubric_traits": "metric",
    }
)


@dataclass(slots=True)
class _Rating:
    path: str
    scope: str
    trait_type: str
    name: str
    description: str | None
    best: float
    worst: float
    props: Props


def _read_rating(value: Any, path: str) -> _Rating:
    rating = as_object(value, path, "a Rating object")
    check_type_tag(rating, path, "Rating")
    name = req_str(rating, "name", path, "a string: the trait name")
    description = opt_str(rating, "description", path)
    best = req_number(rating, "bestRating", path)
    worst = req_number(rating, "worstRating", path)
    raw_type = req_str(
        rating, "additionalType", path, "a string: the trait type, e.g. karenina:GlobalRubricTrait"
    )
    additional_type = raw_type if raw_type.startswith("karenina:") else f"karenina:{raw_type}"
    kinds = ADDITIONAL_TYPES.get(additional_type)
    if kinds is None:
        raise DecodeFailure(
            join(path, "additionalType"),
            f"unknown trait type {raw_type!r} (expected one of: {', '.join(ADDITIONAL_TYPES)})",
        )
    values: dict[str, Any] = {}
    positions: dict[str, int] = {}
    for position, (prop_name, prop_value) in enumerate(property_values(rating, path)):
        values[prop_name] = prop_value
        positions[prop_name] = position
    props = Props(values, path, positions)
    return _Rating(path, kinds[0], kinds[1], name, description, best, worst, props)


def _trait(trait_type: str, rating: _Rating) -> RubricTrait:
    try:
        check_trait_name(rating.name)
    except TraitConfigError as exc:
        raise DecodeFailure(join(rating.path, "name"), exc.reason) from None
    return decode_trait(
        trait_type, rating.name, rating.description, rating.props, rating.best, rating.worst
    )


def _dynamic_member(rating: _Rating) -> RubricTrait:
    tag = rating.props.values.pop("dynamic_trait_type", None)
    if tag is None:
        tag = "llm"
    if tag not in TRAIT_TYPES:
        raise DecodeFailure(
            rating.props.path("dynamic_trait_type"),
            f"unknown dynamic_trait_type {tag!r} (expected one of: {', '.join(TRAIT_TYPES)})",
        )
    trait = _trait(tag, rating)
    if trait.summary is None and trait.description is None:
        raise DecodeFailure(
            rating.path, "a dynamic rubric trait needs a 'summary' property or a description"
        )
    return trait


class TraitScope:
    """The traits of one scope, refusing a name used twice."""

    __slots__ = ("paths", "traits")

    def __init__(self) -> None:
        self.traits: list[RubricTrait] = []
        self.paths: dict[str, str] = {}

    def add(self, trait: RubricTrait, path: str) -> None:
        """Add ``trait``, read at ``path``; a repeated name is an error naming both paths."""
        earlier = self.paths.get(trait.name)
        if earlier is not None:
            raise DecodeFailure(
                join(path, "name"),
                f"trait name {trait.name!r} is already used by {earlier} "
                "(trait names must be unique within a rubric)",
            )
        self.paths[trait.name] = path
        self.traits.append(trait)

    def rubric(self) -> Rubric | None:
        """The scope's traits as a Rubric (already checked), or None when empty."""
        if not self.traits:
            return None
        return Rubric.model_construct(None, **group_traits(self.traits))


def decode_root_ratings(
    ratings: list[Any], path: str, rubric: TraitScope, dynamic: TraitScope
) -> None:
    """Read the root ``rating`` array into the global and global-dynamic scopes."""
    for index, value in enumerate(ratings):
        rating = _read_rating(value, at(path, index))
        if rating.scope != "global":
            raise DecodeFailure(
                join(rating.path, "additionalType"),
                "dataset-level rating must be a global trait type "
                f"(found {value['additionalType']!r})",
            )
        if rating.trait_type == "dynamic":
            dynamic.add(_dynamic_member(rating), rating.path)
        else:
            rubric.add(_trait(rating.trait_type, rating), rating.path)


def decode_question_ratings(
    ratings: list[Any], path: str
) -> tuple[Rubric | None, list[dict[str, Any]]]:
    """A question's rubric and the raw ratings Karenina ignores at question level.

    Only the six question-specific, non-dynamic types are loaded; global types and
    question-level dynamic members are checked for shape and kept raw.
    """
    scope = TraitScope()
    ignored: list[dict[str, Any]] = []
    for index, value in enumerate(ratings):
        rating = _read_rating(value, at(path, index))
        if rating.scope == "question" and rating.trait_type != "dynamic":
            scope.add(_trait(rating.trait_type, rating), rating.path)
        else:
            ignored.append(value)
    return scope.rubric(), ignored


def decode_legacy_traits(trait_type: str, value: Any, path: str, scope: TraitScope) -> None:
    """Append the traits of a legacy root property (a JSON string of trait objects).

    As in Karenina, a value that is not a string holding a JSON array is skipped.
    """
    if not isinstance(value, str):
        return
    try:
        entries = json.loads(value)
    except json.JSONDecodeError:
        return
    if not isinstance(entries, list):
        return
    for index, entry in enumerate(entries):
        entry_path = at(path, index)
        fields = dict(as_object(entry, entry_path, "a trait object"))
        name = req_str(fields, "name", entry_path, "a string: the trait name")
        description = opt_str(fields, "description", entry_path)
        del fields["name"]
        fields.pop("description", None)
        if trait_type == "regex" and "invert" in fields and "invert_result" not in fields:
            fields["invert_result"] = fields.pop("invert")
        legacy = _Rating(
            entry_path,
            "global",
            trait_type,
            name,
            description,
            1,
            0,
            Props(fields, entry_path, None),
        )
        scope.add(_trait(trait_type, legacy), entry_path)
