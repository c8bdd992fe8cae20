"""The rubric a question is evaluated with: global traits, then its own (spec 1.10).

Names must be unique across every trait kind of the merged rubric; a clash is a
:class:`RubricConflictError` naming both traits and where each comes from.
Karenina aborts the whole run on it; here it errors the questions concerned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_karenina.rubrics.traits import Rubric, RubricTrait

GLOBAL = "global"
QUESTION_SPECIFIC = "question_specific"
DYNAMIC = "dynamic"


class RubricConflictError(ValueError):
    """Two traits of one merged rubric share a name."""


def _describe(trait: RubricTrait, origin: str) -> str:
    return f"{origin.replace('_', '-')} {trait.trait_type} trait {trait.name!r}"


@dataclass(frozen=True)
class MergedRubric:
    """The traits to evaluate, in order, and where each came from."""

    traits: tuple[RubricTrait, ...] = ()
    provenance: dict[str, str] = field(default_factory=dict)

    @property
    def rubric(self) -> Rubric:
        return Rubric.from_traits(self.traits)

    @property
    def is_empty(self) -> bool:
        return not self.traits

    def add(self, traits: Iterable[RubricTrait], origin: str) -> MergedRubric:
        """This rubric with ``traits`` appended; a name already present is a conflict."""
        found = {trait.name: trait for trait in self.traits}
        kept = list(self.traits)
        provenance = dict(self.provenance)
        for trait in traits:
            other = found.get(trait.name)
            if other is not None:
                raise RubricConflictError(
                    f"rubric trait name clash: {_describe(other, provenance[other.name])} and "
                    f"{_describe(trait, origin)} share the name {trait.name!r}"
                )
            found[trait.name] = trait
            kept.append(trait)
            provenance[trait.name] = origin
        return MergedRubric(tuple(kept), provenance)

    def only(self, names: Sequence[str] | None) -> MergedRubric:
        """The traits named in ``names`` (None keeps all), as ``rubric_trait_names`` asks."""
        if names is None:
            return self
        wanted = set(names)
        kept = tuple(trait for trait in self.traits if trait.name in wanted)
        return MergedRubric(kept, {t.name: self.provenance[t.name] for t in kept})


def merge_rubrics(
    global_rubric: Rubric | None,
    question_rubric: Rubric | None,
    *,
    trait_names: Sequence[str] | None = None,
) -> MergedRubric:
    """Global traits followed by the question's (``RubricConflictError`` on a name clash),
    limited to ``trait_names`` when given."""
    merged = MergedRubric()
    if global_rubric is not None:
        merged = merged.add(global_rubric.traits(), GLOBAL)
    if question_rubric is not None:
        merged = merged.add(question_rubric.traits(), QUESTION_SPECIFIC)
    return merged.only(trait_names)
