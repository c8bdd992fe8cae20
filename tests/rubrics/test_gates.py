"""Rubric gates: parsing gate rules, and judging hand-built rubric results trait by trait."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from pytest_karenina.results.rubric import VerificationResultRubric
from pytest_karenina.rubrics.gates import (
    DEFAULT_SCORE_THRESHOLD,
    GateRule,
    GateSpecError,
    RubricGatePolicy,
    TraitCheck,
    check_traits,
    gate_summary,
    investigation_finding,
    kind_label,
    parse_gate_rules,
    unknown_gate_traits,
)
from pytest_karenina.rubrics.traits import (
    AgenticRubricTrait,
    CallableTrait,
    LLMRubricTrait,
    MetricRubricTrait,
    RegexTrait,
    RubricTrait,
)

FORM_SCHEMA = {
    "type": "object",
    "properties": {"tone": {"type": "string"}, "sections": {"type": "integer"}},
}
TONES = {"formal": "Stiff", "casual": "Relaxed", "angry": "Hostile"}


def definitions(*traits: RubricTrait) -> dict[str, RubricTrait]:
    return {trait.name: trait for trait in traits}


def result(names: Iterable[str], **fields: Any) -> VerificationResultRubric:
    """A rubric result whose ``trait_provenance`` lists ``names`` (all global)."""
    return VerificationResultRubric(
        rubric_evaluation_performed=True,
        trait_provenance=dict.fromkeys(names, "global"),
        **fields,
    )


def policy(*entries: str, threshold: float = DEFAULT_SCORE_THRESHOLD) -> RubricGatePolicy:
    return RubricGatePolicy(score_threshold=threshold, rules=parse_gate_rules(entries))


def only_check(
    trait: RubricTrait, gate_policy: RubricGatePolicy | None = None, **fields: Any
) -> TraitCheck:
    checks = check_traits(
        result([trait.name], **fields), definitions(trait), gate_policy or RubricGatePolicy()
    )
    assert len(checks) == 1
    return checks[0]


def score(
    name: str = "Completeness", *, low: int = 1, high: int = 5, **extra: Any
) -> LLMRubricTrait:
    return LLMRubricTrait(name=name, kind="score", min_score=low, max_score=high, **extra)


# --- parse_gate_rules ----------------------------------------------------------------------


def test_parse_the_documented_examples() -> None:
    rules = parse_gate_rules(
        [
            "Completeness>=4, extraction.f1>=0.8",
            "Clarity off",
            "HasCitations==false",
            "tone==formal",
        ]
    )
    assert rules == (
        GateRule("Completeness", ">=", 4),
        GateRule("extraction.f1", ">=", 0.8),
        GateRule("Clarity"),
        GateRule("HasCitations", "==", False),
        GateRule("tone", "==", "formal"),
    )


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        ("A>=1", GateRule("A", ">=", 1)),
        ("A<=1", GateRule("A", "<=", 1)),
        ("A==1", GateRule("A", "==", 1)),
        ("A!=1", GateRule("A", "!=", 1)),
        ("A>1", GateRule("A", ">", 1)),
        ("A<1", GateRule("A", "<", 1)),
        ("  A  >=  2  ", GateRule("A", ">=", 2)),
        ("A>=4.0", GateRule("A", ">=", 4)),  # whole floats become ints
        ("A>=-0.5", GateRule("A", ">=", -0.5)),
        ("A==TRUE", GateRule("A", "==", True)),
        ("A=='formal'", GateRule("A", "==", "formal")),
        ('A=="formal"', GateRule("A", "==", "formal")),
        ("A OFF", GateRule("A")),
        ("A   off  ", GateRule("A")),
    ],
)
def test_parse_operators_and_values(entry: str, rule: GateRule) -> None:
    assert parse_gate_rules([entry]) == (rule,)


def test_whole_float_values_are_ints_and_others_stay_floats() -> None:
    (whole,) = parse_gate_rules(["A>=4.0"])
    (fraction,) = parse_gate_rules(["A>=0.8"])
    assert type(whole.value) is int
    assert type(fraction.value) is float


def test_parse_several_entries_and_blank_parts() -> None:
    rules = parse_gate_rules(["A>=1,, B off,", "", "  ", "C==x"])
    assert [rule.key for rule in rules] == ["A", "B", "C"]
    assert parse_gate_rules([]) == ()


@pytest.mark.parametrize(
    "entry", ["Completeness", ">=4", "Completeness=4", "A=>4", "A 4", "off", "A==", "A!="]
)
def test_unreadable_rules_raise(entry: str) -> None:
    with pytest.raises(GateSpecError, match="cannot read rubric gate"):
        parse_gate_rules(["Clarity>=3", entry])


def test_gate_spec_error_quotes_the_bad_part() -> None:
    with pytest.raises(GateSpecError, match="'Oops'"):
        parse_gate_rules(["A>=1,  Oops  "])


@pytest.mark.parametrize("entry", ["Completeness>=", "Completeness<="])
def test_a_rule_without_a_value_raises(entry: str) -> None:
    with pytest.raises(GateSpecError):
        parse_gate_rules([entry])


def test_a_comparison_with_the_value_off_is_a_comparison() -> None:
    assert parse_gate_rules(["tone == off"]) == (GateRule("tone", "==", "off"),)


def test_gate_rule_text() -> None:
    assert str(GateRule("A", ">=", 4)) == "A>=4"
    assert str(GateRule("A")) == "A off"


def test_policy_rules_for_a_trait_and_its_parts() -> None:
    gate_policy = policy("extraction.f1>=0.8, extraction>=0, extractionX>=1, Other off")
    assert [str(rule) for rule in gate_policy.rules_for("extraction")] == [
        "extraction.f1>=0.8",
        "extraction>=0",
    ]
    assert gate_policy.rules_for("Missing") == []


# --- kind labels -----------------------------------------------------------------------------


def test_kind_labels() -> None:
    assert kind_label(score()) == "llm score 1-5"
    assert kind_label(LLMRubricTrait(name="B", kind="boolean")) == "llm boolean"
    assert kind_label(RegexTrait(name="R")) == "regex"
    assert kind_label(CallableTrait(name="C", kind="score", min_score=0, max_score=9)) == (
        "callable score 0-9"
    )
    assert kind_label(CallableTrait(name="C")) == "callable boolean"
    metric = MetricRubricTrait(name="M", metrics=["f1"], tp_instructions=["x"])
    assert kind_label(metric) == "metric tp_only"
    agentic = AgenticRubricTrait(name="A", description="d", kind="score", max_score=10)
    assert kind_label(agentic) == "agentic score 1-10"
    assert kind_label(AgenticRubricTrait(name="A", description="d")) == "agentic boolean"


# --- default gates: booleans -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("trait", "field"),
    [
        (LLMRubricTrait(name="T", kind="boolean"), "llm_trait_scores"),
        (RegexTrait(name="T", pattern="x"), "regex_trait_scores"),
        (CallableTrait(name="T"), "callable_trait_scores"),
        (AgenticRubricTrait(name="T", description="inspect"), "agentic_trait_scores"),
    ],
    ids=["llm", "regex", "callable", "agentic"],
)
@pytest.mark.parametrize("higher_is_better", [True, False])
@pytest.mark.parametrize("value", [True, False])
def test_boolean_passes_when_its_value_equals_higher_is_better(
    trait: RubricTrait, field: str, higher_is_better: bool, value: bool
) -> None:
    trait = trait.model_copy(update={"higher_is_better": higher_is_better})
    scores: dict[str, Any] = {field: {"T": value}}
    check = only_check(trait, None, **scores)
    assert check.gated is True
    assert check.passed is (value == higher_is_better)
    assert check.bound == f"== {str(higher_is_better).lower()}"
    assert check.value is value
    assert check.error is None
    assert check.unmeasured is False


def test_boolean_gate_wants_a_real_bool() -> None:
    # The default boolean gate compares with `is`, so the integer 1 is not a pass.
    check = only_check(LLMRubricTrait(name="T", kind="boolean"), llm_trait_scores={"T": 1})
    assert check.passed is False


# --- default gates: scores -------------------------------------------------------------------


@pytest.mark.parametrize(("value", "passed"), [(1, False), (2, False), (3, True), (5, True)])
def test_score_1_to_5_at_threshold_half_needs_3(value: int, passed: bool) -> None:
    # cut = low + threshold * (high - low) = 1 + 0.5 * 4 = 3
    check = only_check(score(), llm_trait_scores={"Completeness": value})
    assert check.gated is True
    assert check.passed is passed
    assert check.bound == ">= 3 (of 1-5)"


@pytest.mark.parametrize(("value", "passed"), [(1, True), (3, True), (4, False), (5, False)])
def test_lower_is_better_score_needs_at_most_3(value: int, passed: bool) -> None:
    # cut = high - threshold * (high - low) = 5 - 0.5 * 4 = 3
    check = only_check(score(higher_is_better=False), llm_trait_scores={"Completeness": value})
    assert check.passed is passed
    assert check.bound == "<= 3 (of 1-5)"


@pytest.mark.parametrize(("value", "passed"), [(3, False), (4, True), (5, True)])
def test_threshold_three_quarters_needs_4(value: int, passed: bool) -> None:
    # cut = 1 + 0.75 * 4 = 4
    gate_policy = RubricGatePolicy(score_threshold=0.75)
    check = only_check(score(), gate_policy, llm_trait_scores={"Completeness": value})
    assert check.passed is passed
    assert check.bound == ">= 4 (of 1-5)"


def test_lower_is_better_at_three_quarters_needs_at_most_2() -> None:
    # cut = 5 - 0.75 * 4 = 2
    trait = score(higher_is_better=False)
    gate_policy = RubricGatePolicy(score_threshold=0.75)
    assert only_check(trait, gate_policy, llm_trait_scores={"Completeness": 2}).passed is True
    assert only_check(trait, gate_policy, llm_trait_scores={"Completeness": 3}).passed is False


def test_fractional_cut_on_an_even_range() -> None:
    # 1-4: cut = 1 + 0.5 * 3 = 2.5, so 3 passes and 2 fails.
    trait = score(low=1, high=4)
    assert only_check(trait, llm_trait_scores={"Completeness": 3}).passed is True
    check = only_check(trait, llm_trait_scores={"Completeness": 2})
    assert check.passed is False
    assert check.bound == ">= 2.5 (of 1-4)"


def test_callable_score_with_both_bounds_is_gated() -> None:
    trait = CallableTrait(name="Len", kind="score", min_score=0, max_score=10)
    # cut = 0 + 0.5 * 10 = 5
    assert only_check(trait, callable_trait_scores={"Len": 5}).passed is True
    assert only_check(trait, callable_trait_scores={"Len": 4}).passed is False


@pytest.mark.parametrize(("low", "high"), [(None, 10), (0, None), (None, None)])
def test_callable_score_without_both_bounds_is_not_gated(low: int | None, high: int | None) -> None:
    trait = CallableTrait(name="Len", kind="score", min_score=low, max_score=high)
    check = only_check(trait, callable_trait_scores={"Len": 7})
    assert (check.gated, check.passed, check.bound) == (False, None, None)
    assert check.value == 7


# --- traits not gated by default ---------------------------------------------------------------


def test_literal_metric_and_template_traits_are_reported_but_not_gated() -> None:
    tone = LLMRubricTrait(name="Tone", kind="literal", classes=TONES)
    form = LLMRubricTrait(name="Form", kind="template", template_schema=FORM_SCHEMA)
    extraction = MetricRubricTrait(name="extraction", metrics=["f1"], tp_instructions=["x"])
    literal_callable = CallableTrait(name="CTone", kind="literal", classes=TONES)
    agent_tone = AgenticRubricTrait(name="ATone", description="d", kind="literal", classes=TONES)
    agent_form = AgenticRubricTrait(
        name="AForm", description="d", kind="template", template_schema=FORM_SCHEMA
    )
    defs = definitions(tone, form, extraction, literal_callable, agent_tone, agent_form)
    rubric = result(
        defs,
        llm_trait_scores={"Tone": 1, "Form.tone": "formal", "Form.sections": 3},
        llm_trait_labels={"Tone": "casual"},
        metric_trait_scores={"extraction": {"f1": 0.9}},
        callable_trait_scores={"CTone": 2},
        agentic_trait_scores={"ATone": 0, "AForm.tone": "casual", "AForm.sections": 1},
    )
    checks = check_traits(rubric, defs, RubricGatePolicy())
    assert [check.name for check in checks] == [
        "Tone", "Form", "extraction", "CTone", "ATone", "AForm",
    ]  # fmt: skip
    assert all(not check.gated and check.passed is None for check in checks)
    values = {check.name: check.value for check in checks}
    assert values == {
        "Tone": "casual",  # the label, not the index
        "Form": {"tone": "formal", "sections": 3},
        "extraction": {"f1": 0.9},
        "CTone": list(TONES)[2],  # callable literal traits show their class name too
        "ATone": next(iter(TONES)),  # agentic ones too (Karenina stores only the index)
        "AForm": {"tone": "casual", "sections": 1},
    }
    assert gate_summary(checks) == (0, 0)


def test_agentic_score_traits_are_gated_like_llm_ones() -> None:
    trait = AgenticRubricTrait(name="Tidy", description="d", kind="score", min_score=1)
    check = only_check(trait, None, agentic_trait_scores={"Tidy": 2})
    assert (check.gated, check.passed, check.bound) == (True, False, ">= 3 (of 1-5)")
    assert only_check(trait, None, agentic_trait_scores={"Tidy": 3}).passed is True
    rule = policy("Tidy>=2")
    assert only_check(trait, rule, agentic_trait_scores={"Tidy": 2}).passed is True


def test_agentic_literal_and_template_rules() -> None:
    tone = AgenticRubricTrait(name="ATone", description="d", kind="literal", classes=TONES)
    assert only_check(tone, policy("ATone==formal"), agentic_trait_scores={"ATone": 0}).passed
    by_index = only_check(tone, policy("ATone>=1"), agentic_trait_scores={"ATone": 0})
    assert by_index.passed is False  # a number compares with the class index
    form = AgenticRubricTrait(
        name="AForm", description="d", kind="template", template_schema=FORM_SCHEMA
    )
    fields = {"AForm.tone": "formal", "AForm.sections": 3}
    assert only_check(form, policy("AForm.sections>=3"), agentic_trait_scores=fields).passed
    assert not only_check(form, policy("AForm.tone==casual"), agentic_trait_scores=fields).passed


def test_an_agentic_traits_reasoning_is_its_investigation() -> None:
    trait = AgenticRubricTrait(name="Tidy", description="d")
    trace = "--- AI Message ---\nLooking.\n\n--- AI Message ---\nThe files are tidy."
    check = only_check(
        trait, None, agentic_trait_scores={"Tidy": True},
        agentic_trait_investigation_traces={"Tidy": trace},
    )  # fmt: skip
    assert check.reasoning == trace
    assert investigation_finding(trace) == "The files are tidy."
    assert investigation_finding("no header") == "no header"


# --- rules override the defaults ---------------------------------------------------------------


@pytest.mark.parametrize(("f1", "passed"), [(0.85, True), (0.8, True), (0.79, False)])
def test_metric_rule(f1: float, passed: bool) -> None:
    trait = MetricRubricTrait(name="extraction", metrics=["f1", "recall"], tp_instructions=["x"])
    check = only_check(
        trait,
        policy("extraction.f1>=0.8"),
        metric_trait_scores={"extraction": {"f1": f1, "recall": 0.1}},
    )
    assert check.gated is True
    assert check.passed is passed
    assert check.bound == "f1>=0.8"


def test_metric_rule_on_a_metric_that_was_not_computed_fails() -> None:
    trait = MetricRubricTrait(name="extraction", metrics=["f1"], tp_instructions=["x"])
    check = only_check(
        trait, policy("extraction.recall>=0.5"), metric_trait_scores={"extraction": {"f1": 1.0}}
    )
    assert check.passed is False


def test_several_rules_on_one_trait_must_all_hold() -> None:
    trait = MetricRubricTrait(
        name="extraction", metrics=["precision", "recall"], tp_instructions=["x"]
    )
    gate_policy = policy("extraction.precision>=0.5, extraction.recall>=0.5")
    good = {"extraction": {"precision": 0.9, "recall": 0.6}}
    bad = {"extraction": {"precision": 0.9, "recall": 0.4}}
    assert only_check(trait, gate_policy, metric_trait_scores=good).passed is True
    check = only_check(trait, gate_policy, metric_trait_scores=bad)
    assert check.passed is False
    assert check.bound == "precision>=0.5, recall>=0.5"


def test_template_field_rules() -> None:
    trait = LLMRubricTrait(name="Form", kind="template", template_schema=FORM_SCHEMA)
    fields = {"Form.tone": "formal", "Form.sections": 3}
    # String comparison ignores case.
    check = only_check(trait, policy("Form.tone==Formal"), llm_trait_scores=fields)
    assert (check.gated, check.passed, check.bound) == (True, True, "tone==Formal")
    assert only_check(trait, policy("Form.tone==casual"), llm_trait_scores=fields).passed is False
    assert only_check(trait, policy("Form.sections>=3"), llm_trait_scores=fields).passed is True
    assert only_check(trait, policy("Form.sections>3"), llm_trait_scores=fields).passed is False
    # A field the judge did not fill fails the rule.
    assert only_check(trait, policy("Form.missing==x"), llm_trait_scores=fields).passed is False


def test_template_trait_without_any_field_has_no_value() -> None:
    trait = LLMRubricTrait(name="Form", kind="template", template_schema=FORM_SCHEMA)
    check = only_check(trait, policy("Form.tone==formal"), llm_trait_scores={"Other": 1})
    assert check.value is None
    assert check.passed is None
    assert check.error == "no value"
    assert check.unmeasured is True


def test_literal_rule_by_label_is_case_insensitive() -> None:
    trait = LLMRubricTrait(name="Tone", kind="literal", classes=TONES)
    fields: dict[str, Any] = {
        "llm_trait_scores": {"Tone": 0},
        "llm_trait_labels": {"Tone": "formal"},
    }
    assert only_check(trait, policy("Tone==FORMAL"), **fields).passed is True
    assert only_check(trait, policy("Tone==casual"), **fields).passed is False
    assert only_check(trait, policy("Tone!=angry"), **fields).passed is True


def test_literal_rule_by_index_reads_the_class_index() -> None:
    trait = LLMRubricTrait(name="Tone", kind="literal", classes=TONES)
    fields: dict[str, Any] = {
        "llm_trait_scores": {"Tone": 1},
        "llm_trait_labels": {"Tone": "casual"},
    }
    check = only_check(trait, policy("Tone==1"), **fields)
    assert (check.gated, check.passed, check.bound) == (True, True, "==1")
    assert check.value == "casual"
    assert only_check(trait, policy("Tone>=2"), **fields).passed is False
    assert only_check(trait, policy("Tone<2"), **fields).passed is True


def test_label_rule_on_a_literal_callable_trait() -> None:
    trait = CallableTrait(name="CTone", kind="literal", classes=TONES)
    check = only_check(trait, policy("CTone==formal"), callable_trait_scores={"CTone": 0})
    assert check.passed is True


def test_score_rule_replaces_the_default_threshold() -> None:
    trait = score()
    gate_policy = policy("Completeness>=4")
    check = only_check(trait, gate_policy, llm_trait_scores={"Completeness": 3})
    # The default (>= 3) would pass this; the rule asks for 4.
    assert (check.passed, check.bound) == (False, ">=4")
    assert only_check(trait, gate_policy, llm_trait_scores={"Completeness": 4}).passed is True


def test_boolean_rule_replaces_higher_is_better() -> None:
    trait = RegexTrait(name="HasCitations", pattern=r"\[\d+\]")
    gate_policy = policy("HasCitations==false")
    check = only_check(trait, gate_policy, regex_trait_scores={"HasCitations": False})
    assert check.passed is True
    # The bound shows the parsed value (Python's "False"); compare without case.
    assert check.bound is not None and check.bound.lower() == "==false"
    assert only_check(trait, gate_policy, regex_trait_scores={"HasCitations": True}).passed is False


def test_off_ungates_a_trait_but_keeps_its_value() -> None:
    check = only_check(score(), policy("Completeness off"), llm_trait_scores={"Completeness": 1})
    assert (check.gated, check.passed, check.bound) == (False, None, None)
    assert check.value == 1


def test_an_active_rule_wins_over_off() -> None:
    gate_policy = policy("Completeness off", "Completeness>=2")
    check = only_check(score(), gate_policy, llm_trait_scores={"Completeness": 2})
    assert (check.gated, check.passed) == (True, True)


def test_rules_on_other_traits_leave_the_default_alone() -> None:
    gate_policy = policy("Clarity>=5, Other off")
    check = only_check(score(), gate_policy, llm_trait_scores={"Completeness": 3})
    assert (check.gated, check.passed, check.bound) == (True, True, ">= 3 (of 1-5)")


# --- errors, missing values, skipped dynamic traits --------------------------------------------


def test_a_gated_trait_with_an_error_is_unmeasured() -> None:
    trait = CallableTrait(name="Cites")
    check = only_check(trait, trait_errors={"Cites": "callable trait: boom"})
    assert check.gated is True
    assert check.passed is None
    assert check.error == "callable trait: boom"
    assert check.unmeasured is True


def test_an_error_wins_even_when_a_value_is_present() -> None:
    check = only_check(
        score(), llm_trait_scores={"Completeness": 5}, trait_errors={"Completeness": "late"}
    )
    assert (check.passed, check.error, check.unmeasured) == (None, "late", True)


def test_an_ungated_trait_with_an_error_is_not_unmeasured() -> None:
    tone = LLMRubricTrait(name="Tone", kind="literal", classes=TONES)
    check = only_check(tone, trait_errors={"Tone": "judge failed"})
    assert (check.gated, check.error, check.unmeasured) == (False, "judge failed", False)


def test_a_gated_trait_without_value_or_error_says_no_value() -> None:
    check = only_check(score())
    assert (check.gated, check.passed, check.error, check.unmeasured) == (
        True,
        None,
        "no value",
        True,
    )


def test_an_ungated_trait_without_value_has_no_error() -> None:
    check = only_check(score(), policy("Completeness off"))
    assert (check.value, check.error, check.unmeasured) == (None, None, False)


def test_reasoning_is_attached() -> None:
    check = only_check(
        score(),
        llm_trait_scores={"Completeness": 4},
        llm_trait_reasoning={"Completeness": "covers every part"},
    )
    assert check.reasoning == "covers every part"


def test_skipped_dynamic_traits_follow_the_graded_ones() -> None:
    graded = LLMRubricTrait(name="Clarity", kind="boolean")
    known_skip = RegexTrait(name="Cites", pattern="x")
    defs = definitions(graded, known_skip)
    rubric = result(
        ["Clarity"],
        llm_trait_scores={"Clarity": True},
        dynamic_rubric_skipped_traits={"Cites": "not relevant", "Ghost": "off topic"},
    )
    checks = check_traits(rubric, defs, RubricGatePolicy())
    assert [(c.name, c.kind, c.skipped) for c in checks] == [
        ("Clarity", "llm boolean", None),
        ("Cites", "regex", "not relevant"),
        ("Ghost", "dynamic", "off topic"),
    ]
    for skipped in checks[1:]:
        assert (skipped.gated, skipped.passed, skipped.value) == (False, None, None)


def test_only_traits_in_provenance_with_a_definition_are_checked() -> None:
    a, b = score("A"), score("B")
    rubric = VerificationResultRubric(
        llm_trait_scores={"A": 5, "B": 5, "Unknown": 5},
        trait_provenance={"Unknown": "global", "B": "question_specific"},
    )
    checks = check_traits(rubric, definitions(a, b), RubricGatePolicy())
    # "A" is not in the provenance and "Unknown" has no definition.
    assert [check.name for check in checks] == ["B"]


def test_checks_follow_provenance_order() -> None:
    a, b, c = score("A"), score("B"), score("C")
    rubric = VerificationResultRubric(
        llm_trait_scores={"A": 1, "B": 2, "C": 3},
        trait_provenance={"C": "global", "A": "global", "B": "question_specific"},
    )
    assert [
        check.name for check in check_traits(rubric, definitions(a, b, c), RubricGatePolicy())
    ] == [
        "C",
        "A",
        "B",
    ]


def test_no_result_means_no_checks() -> None:
    assert check_traits(None, definitions(score()), RubricGatePolicy()) == []
    assert check_traits(VerificationResultRubric(), definitions(score()), RubricGatePolicy()) == []


# --- gate_summary --------------------------------------------------------------------------


def test_gate_summary_counts_passed_and_gated() -> None:
    traits: list[RubricTrait] = [
        score("Good"),
        score("Bad"),
        score("Broken"),
        RegexTrait(name="Cites", pattern="x"),
        LLMRubricTrait(name="Tone", kind="literal", classes=TONES),
    ]
    defs = definitions(*traits)
    rubric = result(
        defs,
        llm_trait_scores={"Good": 5, "Bad": 1, "Tone": 0},
        llm_trait_labels={"Tone": "formal"},
        regex_trait_scores={"Cites": True},
        trait_errors={"Broken": "judge timed out"},
        dynamic_rubric_skipped_traits={"Extra": "not relevant"},
    )
    checks = check_traits(rubric, defs, RubricGatePolicy())
    # Gated: Good (pass), Bad (fail), Broken (unmeasured), Cites (pass); Tone and Extra are not.
    assert gate_summary(checks) == (2, 4)
    assert [c.name for c in checks if c.unmeasured] == ["Broken"]


def test_gate_summary_of_nothing() -> None:
    assert gate_summary([]) == (0, 0)


def test_rules_on_traits_no_source_has_are_named_with_the_known_traits() -> None:
    rules = parse_gate_rules(["Completness>=4, Clarity>=3, extraction.f1>=0.8, Tone off"])
    sources = {"a.jsonld": ["Clarity", "extraction"], "b.jsonld": []}

    message = unknown_gate_traits(rules, sources)

    assert message == (
        "rubric gate names an unknown trait: Completness>=4, Tone off. "
        "Known traits: a.jsonld: Clarity, extraction; b.jsonld: (no traits)"
    )
    assert unknown_gate_traits(rules[1:3], sources) is None


def test_a_trait_deep_judgment_could_not_ground_fails_its_gate_unless_turned_off() -> None:
    depth = score("Depth")
    why = {"Depth": "deep judgment: no valid quote after 2 excerpt retries"}
    rubric = result(["Depth"])  # no value: without the reason it would be unmeasured

    (check,) = check_traits(rubric, definitions(depth), RubricGatePolicy(), why)
    assert (check.gated, check.passed, check.unmeasured) == (True, False, False)
    assert check.reasoning == why["Depth"] and check.bound == "a verbatim quote of the answer"

    (off,) = check_traits(rubric, definitions(depth), policy("Depth off"), why)
    assert (off.gated, off.passed) == (False, None)
    (plain,) = check_traits(rubric, definitions(depth), RubricGatePolicy())
    assert plain.unmeasured
