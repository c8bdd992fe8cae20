"""The ``report.karenina`` payload: built from verdicts, builtins only, read back unchanged."""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.plugin.payload import (
    PAYLOAD_VERSION,
    ItemPayload,
    ResultSummary,
    RubricTally,
    tokens,
)
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results import (
    VerificationResultDeepJudgment,
    VerificationResultDeepJudgmentRubric,
)
from pytest_karenina.rubrics.gates import TraitCheck
from tests.plugin_units.units_helpers import (
    FACTS,
    errored,
    fields_result,
    graded,
    verdicts_of,
)

BUILTINS = (dict, list, str, int, float, bool, type(None))
USAGE = {"total": {"input_tokens": 120, "output_tokens": 30}}


def _payload(include_trace: bool = True) -> ItemPayload:
    """Three results: a failed template verdict with rubric scores, a pass, an error."""
    failing = fields_result(
        symbol="Ag",
        raw_llm_response="The metal is silver (Ag).",
        usage_metadata=USAGE,
        verify_granular_result=0.5,
        regex_validation_results={"cites": False},
        abstention_reasoning="not an abstention",
    ).model_copy(
        update={
            "rubric": graded(
                None,
                reasoning={"Clarity": "clear enough"},
                skipped={"Tone": "not applicable"},
                Clarity=4,
                Safe=False,
                extraction={"precision": 1.0, "f1": 0.5},
            ).rubric
        }
    )
    passing = fields_result(
        symbol="Au",
        usage_metadata={"total": {"input_tokens": 80, "output_tokens": 20}},
        verify_granular_result=1.0,
    )
    verdicts = verdicts_of(failing, passing, errored("timeout"), gating=True)
    return ItemPayload.of_verdicts(
        nodeid="bench.jsonld::metal[gpt-4o-r1]",
        question_id="urn:q:metal",
        question_text="Which metal has the symbol Au?",
        answering_model="gpt-4o",
        replicate=1,
        facts=FACTS,
        verdicts=verdicts,
        include_trace=include_trace,
    )


def _non_builtins(value: Any, path: str = "$") -> list[str]:
    """Paths of every value (or dict key) whose exact type is not a JSON builtin."""
    found = [] if type(value) in BUILTINS else [f"{path}: {type(value).__name__}"]
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str:
                found.append(f"{path} key {key!r}: {type(key).__name__}")
            found.extend(_non_builtins(item, f"{path}.{key}"))
    elif type(value) is list:
        for index, item in enumerate(value):
            found.extend(_non_builtins(item, f"{path}[{index}]"))
    return found


def test_of_verdicts_summarises_the_item() -> None:
    """Worst category, lowest granular score, summed tokens and the rubric tally."""
    payload = _payload()
    assert payload.category is Outcome.TIMEOUT_ERROR
    assert payload.question_id == "urn:q:metal"
    assert payload.question == "Which metal has the symbol Au?"
    assert (payload.answering_model, payload.replicate) == ("gpt-4o", 1)
    assert payload.score == 0.5
    assert (payload.input_tokens, payload.output_tokens) == (200, 50)
    # Clarity passes, Safe fails (both gated); extraction has a value, Tone was skipped.
    assert payload.rubric == RubricTally(passed=1, gated=2, traits=3)
    assert [s.category for s in payload.summaries] == [
        Outcome.VERIFY_FAIL,
        Outcome.PASS,
        Outcome.TIMEOUT_ERROR,
    ]
    assert [r["metadata"]["error"] for r in payload.results] == [
        None,
        None,
        "LLM call timed out after 3 attempts",
    ]


def test_result_summary_holds_the_facts() -> None:
    """Stage, field rows, regex, reasoning, tokens and trait checks of one result."""
    first = _payload().summaries[0]
    assert first.verify_result is False
    assert first.granular_score == 0.5
    assert first.parsing_model == "gpt-4o"
    assert first.deciding_stage == "VerifyTemplate"
    assert first.fields[0] == {
        "field": "symbol", "expected": "Au", "parsed": "Ag", "primitive": "ExactMatch",
        "passed": False, "differs": None,
        "spec": {"type": "ExactMatch", "normalize": ["lowercase", "strip"]},
    }  # fmt: skip
    assert first.regex == {"cites": False}
    assert first.abstention_reasoning == "not an abstention"
    assert (first.input_tokens, first.output_tokens) == (120, 30)
    assert first.raw_response == "The metal is silver (Ag)."
    assert [(c.name, c.passed, c.skipped) for c in first.rubric] == [
        ("Clarity", True, None),
        ("Safe", False, None),
        ("extraction", None, None),
        ("Tone", None, "not applicable"),
    ]
    assert first.rubric[0].reasoning == "clear enough"
    assert first.rubric_gates == (1, 2)
    errored_summary = _payload().summaries[2]
    assert errored_summary.error == "LLM call timed out after 3 attempts"
    assert errored_summary.deciding_stage == "GenerateAnswer"


def test_to_json_is_builtins_only() -> None:
    """No enums, str subclasses, tuples or dataclasses anywhere in the payload."""
    data = _payload().to_json()
    assert _non_builtins(data) == []
    json.dumps(data)
    assert data["version"] == PAYLOAD_VERSION
    assert data["category"] == "error:timeout"
    assert [s["category"] for s in data["summaries"]] == ["verify_fail", "pass", "error:timeout"]
    assert data["summaries"][0]["rubric_gates"] == [1, 2]
    assert data["rubric"] == {"passed": 1, "gated": 2, "traits": 3}


def test_payload_round_trips() -> None:
    """from_json(to_json()) gives the same payload, also through a JSON text."""
    payload = _payload()
    assert ItemPayload.from_json(payload.to_json()) == payload
    assert ItemPayload.from_json(json.loads(json.dumps(payload.to_json()))) == payload


def test_read_back_categories_are_outcomes() -> None:
    """The reporting side gets Outcome members back, not strings."""
    back = ItemPayload.from_json(json.loads(json.dumps(_payload().to_json())))
    assert back.category is Outcome.TIMEOUT_ERROR
    assert back.summaries[0].category is Outcome.VERIFY_FAIL
    assert isinstance(back.summaries[0].rubric[0], TraitCheck)


def test_worker_crashed_payload() -> None:
    """An error with no results and no tokens, that survives the trip."""
    crashed = ItemPayload.worker_crashed("bench.jsonld::q3")
    assert crashed.nodeid == "bench.jsonld::q3"
    assert crashed.category is Outcome.WORKER_CRASHED
    assert crashed.category.value == "error:worker_crashed"
    assert (crashed.results, crashed.summaries) == ([], [])
    assert (crashed.input_tokens, crashed.output_tokens) == (0, 0)
    assert crashed.rubric == RubricTally(0, 0, 0)
    data = crashed.to_json()
    assert _non_builtins(data) == []
    assert ItemPayload.from_json(json.loads(json.dumps(data))) == crashed


def test_from_json_fills_defaults() -> None:
    """Missing keys (and nulls) take the dataclass defaults."""
    payload = ItemPayload.from_json(
        {"nodeid": "b.jsonld::q1", "category": "pass", "input_tokens": None}
    )
    assert payload == ItemPayload(nodeid="b.jsonld::q1", category=Outcome.PASS)
    assert payload.input_tokens == 0 and payload.summaries == [] and payload.score is None
    empty = ItemPayload.from_json({})
    assert (empty.nodeid, empty.category) == ("", Outcome.NO_VERDICT)
    summary = ResultSummary.from_json({"category": "verify_fail", "regex": None})
    assert summary == ResultSummary(category=Outcome.VERIFY_FAIL)
    assert summary.regex == {} and summary.rubric == []


def test_without_trace_raw_response_is_none() -> None:
    """``include_trace=False`` leaves the answer text out of every summary."""
    assert [s.raw_response for s in _payload(include_trace=False).summaries] == [None] * 3
    assert _payload(include_trace=True).summaries[1].raw_response == ""


def test_tokens_of_a_result() -> None:
    """``(input, output)`` from the ``total`` usage, zero when absent."""
    assert tokens(fields_result(usage_metadata=USAGE)) == (120, 30)
    assert tokens(fields_result(usage_metadata={"parse": {"input_tokens": 5}})) == (0, 0)
    assert tokens(errored()) == (0, 0)


def test_boolean_granular_result_is_no_score() -> None:
    """A boolean granular result is not a score."""
    (verdict,) = verdicts_of(fields_result(symbol="Au", verify_granular_result=True))
    summary = ResultSummary.of_verdict(verdict, FACTS, include_trace=False)
    assert summary.granular_score is None


def test_what_a_summary_keeps_of_an_item() -> None:
    full = _payload(include_trace=True)
    kept = full.for_summary()

    assert full.results and full.summaries[0].fields and full.summaries[0].raw_response
    assert (kept.results, kept.summaries, kept.question) == ([], [], None)
    assert (kept.category, kept.input_tokens, kept.rubric) == (
        full.category, full.input_tokens, full.rubric,
    )  # fmt: skip


def test_deep_judgment_quotes_risks_and_unquoted_traits_of_both_sections() -> None:
    template = VerificationResultDeepJudgment(
        deep_judgment_mode="full", deep_judgment_performed=True,
        extracted_excerpts={"symbol": [{"text": "silver (Ag)", "confidence": "high"}]},
        hallucination_risk_assessment={"symbol": "low"},
    )  # fmt: skip
    rubric = VerificationResultDeepJudgmentRubric(
        deep_judgment_rubric_performed=True,
        extracted_rubric_excerpts={"Clarity": [{"text": "The metal is silver"}]},
        traits_without_valid_excerpts=["Safe"],
        rubric_hallucination_risk_assessment={
            "Clarity": {"overall_risk": "medium", "per_excerpt_risks": ["medium"]}
        },
    )
    result = graded(Clarity=4).model_copy(
        update={"deep_judgment": template, "deep_judgment_rubric": rubric}
    )
    (verdict,) = verdicts_of(result)

    summary = ResultSummary.of_verdict(verdict, FACTS, include_trace=False)

    assert summary.excerpts == {
        "symbol": ["silver (Ag)"],
        "rubric: Clarity": ["The metal is silver"],
    }
    assert summary.risks == {"symbol": "low", "rubric: Clarity": "medium"}
    assert summary.unquoted == [] and summary.unquoted_traits == ["Safe"]
    assert ResultSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
