"""Merging the global rubric with a question's own: order, provenance, clashes, filtering."""

from __future__ import annotations

import re

import pytest

from pytest_karenina.rubrics.merge import (
    DYNAMIC,
    GLOBAL,
    QUESTION_SPECIFIC,
    MergedRubric,
    RubricConflictError,
    merge_rubrics,
)
from pytest_karenina.rubrics.traits import (
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    Rubric,
)


def llm(name: str) -> LLMRubricTrait:
    return LLMRubricTrait(name=name, kind="score")


def regex(name: str) -> RegexTrait:
    return RegexTrait(name=name, pattern=r"\d")


def callable_trait(name: str) -> CallableTrait:
    return CallableTrait(name=name)


def metric(name: str) -> MetricRubricTrait:
    return MetricRubricTrait(name=name, metrics=["f1"], tp_instructions=["mentions BCL2"])


@pytest.fixture
def global_rubric() -> Rubric:
    return Rubric(llm_traits=[llm("Clarity")], regex_traits=[regex("HasNumbers")])


@pytest.fixture
def question_rubric() -> Rubric:
    return Rubric(
        llm_traits=[llm("Depth")],
        callable_traits=[callable_trait("Short")],
        metric_traits=[metric("Extraction")],
    )


def test_origin_constants() -> None:
    assert (GLOBAL, QUESTION_SPECIFIC, DYNAMIC) == ("global", "question_specific", "dynamic")


def test_global_traits_come_first_then_the_question_traits(
    global_rubric: Rubric, question_rubric: Rubric
) -> None:
    merged = merge_rubrics(global_rubric, question_rubric)
    assert [trait.name for trait in merged.traits] == [
        "Clarity",
        "HasNumbers",
        "Depth",
        "Short",
        "Extraction",
    ]
    assert not merged.is_empty


def test_provenance_marks_each_trait_origin(global_rubric: Rubric, question_rubric: Rubric) -> None:
    merged = merge_rubrics(global_rubric, question_rubric)
    assert merged.provenance == {
        "Clarity": "global",
        "HasNumbers": "global",
        "Depth": "question_specific",
        "Short": "question_specific",
        "Extraction": "question_specific",
    }


def test_the_merged_rubric_groups_traits_by_kind(
    global_rubric: Rubric, question_rubric: Rubric
) -> None:
    rubric = merge_rubrics(global_rubric, question_rubric).rubric
    # Grouping by kind puts the question's LLM trait before the global regex trait,
    # while each kind keeps global-then-question order.
    assert rubric.trait_names() == ["Clarity", "Depth", "HasNumbers", "Short", "Extraction"]
    assert [t.name for t in rubric.llm_traits] == ["Clarity", "Depth"]
    assert [t.name for t in rubric.regex_traits] == ["HasNumbers"]
    assert [t.name for t in rubric.callable_traits] == ["Short"]
    assert [t.name for t in rubric.metric_traits] == ["Extraction"]


def test_the_same_trait_objects_are_kept(global_rubric: Rubric) -> None:
    merged = merge_rubrics(global_rubric, None)
    assert merged.traits[0] is global_rubric.llm_traits[0]


def test_only_a_global_rubric(global_rubric: Rubric) -> None:
    merged = merge_rubrics(global_rubric, None)
    assert [t.name for t in merged.traits] == ["Clarity", "HasNumbers"]
    assert set(merged.provenance.values()) == {"global"}


def test_only_a_question_rubric(question_rubric: Rubric) -> None:
    merged = merge_rubrics(None, question_rubric)
    assert [t.name for t in merged.traits] == ["Depth", "Short", "Extraction"]
    assert set(merged.provenance.values()) == {"question_specific"}


def test_no_rubric_at_all_is_empty() -> None:
    merged = merge_rubrics(None, None)
    assert merged.is_empty
    assert merged.traits == ()
    assert merged.provenance == {}
    assert merged.rubric.is_empty


def test_empty_rubrics_merge_to_nothing() -> None:
    assert merge_rubrics(Rubric(), Rubric()).is_empty


def test_same_kind_name_clash_names_both_traits_and_origins() -> None:
    with pytest.raises(RubricConflictError) as info:
        merge_rubrics(Rubric(llm_traits=[llm("Clarity")]), Rubric(llm_traits=[llm("Clarity")]))
    message = str(info.value)
    assert "global llm trait 'Clarity'" in message
    assert "question-specific llm trait 'Clarity'" in message
    assert "share the name 'Clarity'" in message


def test_cross_kind_name_clash_is_a_conflict() -> None:
    global_rubric = Rubric(llm_traits=[llm("Citations")])
    question_rubric = Rubric(regex_traits=[regex("Citations")])
    expected = (
        "rubric trait name clash: global llm trait 'Citations' and "
        "question-specific regex trait 'Citations' share the name 'Citations'"
    )
    with pytest.raises(RubricConflictError, match=re.escape(expected)):
        merge_rubrics(global_rubric, question_rubric)


def test_clash_between_a_global_metric_and_a_question_callable() -> None:
    with pytest.raises(RubricConflictError) as info:
        merge_rubrics(
            Rubric(metric_traits=[metric("Recall")]),
            Rubric(callable_traits=[callable_trait("Recall")]),
        )
    assert "global metric trait 'Recall'" in str(info.value)
    assert "question-specific callable trait 'Recall'" in str(info.value)


def test_conflict_error_is_a_value_error() -> None:
    assert issubclass(RubricConflictError, ValueError)


def test_names_differing_only_by_case_do_not_clash() -> None:
    merged = merge_rubrics(Rubric(llm_traits=[llm("clarity")]), Rubric(llm_traits=[llm("Clarity")]))
    assert [t.name for t in merged.traits] == ["clarity", "Clarity"]


def test_a_clash_is_raised_even_when_trait_names_would_filter_it_out() -> None:
    # Filtering happens after merging, so the clash is found first.
    with pytest.raises(RubricConflictError):
        merge_rubrics(
            Rubric(llm_traits=[llm("Clarity"), llm("Depth")]),
            Rubric(regex_traits=[regex("Clarity")]),
            trait_names=["Depth"],
        )


def test_trait_names_keeps_only_the_named_traits_with_their_provenance(
    global_rubric: Rubric, question_rubric: Rubric
) -> None:
    merged = merge_rubrics(global_rubric, question_rubric, trait_names=["Extraction", "Clarity"])
    # Merge order is kept, not the order of trait_names.
    assert [t.name for t in merged.traits] == ["Clarity", "Extraction"]
    assert merged.provenance == {"Clarity": "global", "Extraction": "question_specific"}


def test_trait_names_ignores_unknown_names(global_rubric: Rubric) -> None:
    merged = merge_rubrics(global_rubric, None, trait_names=["HasNumbers", "Nonexistent"])
    assert [t.name for t in merged.traits] == ["HasNumbers"]
    assert merged.provenance == {"HasNumbers": "global"}


def test_empty_trait_names_keeps_nothing_but_none_keeps_everything(
    global_rubric: Rubric,
) -> None:
    assert merge_rubrics(global_rubric, None, trait_names=[]).is_empty
    assert len(merge_rubrics(global_rubric, None, trait_names=None).traits) == 2


def test_add_returns_a_new_rubric_and_leaves_the_original_alone() -> None:
    base = MergedRubric().add([llm("A")], GLOBAL)
    extended = base.add([regex("B")], DYNAMIC)
    assert [t.name for t in base.traits] == ["A"]
    assert base.provenance == {"A": "global"}
    assert [t.name for t in extended.traits] == ["A", "B"]
    assert extended.provenance == {"A": "global", "B": "dynamic"}


def test_add_reports_a_dynamic_clash_with_its_origin() -> None:
    base = MergedRubric().add([llm("A")], QUESTION_SPECIFIC)
    with pytest.raises(RubricConflictError, match="question-specific llm trait 'A' and dynamic"):
        base.add([callable_trait("A")], DYNAMIC)


def test_add_rejects_duplicates_within_the_added_batch() -> None:
    with pytest.raises(RubricConflictError, match="global llm trait 'X' and global regex"):
        MergedRubric().add([llm("X"), regex("X")], GLOBAL)
