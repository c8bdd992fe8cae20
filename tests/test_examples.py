"""The shipped example benchmark stays valid: every template accepts a right answer and
rejects a wrong one (the pipeline runs are in tests/plugin/test_example.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_karenina import Question, compile_template, load_checkpoint, save_checkpoint
from pytest_karenina.templates import BaseAnswer

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart.jsonld"
BENCHMARK = load_checkpoint(QUICKSTART)
PREFIX = "urn:karenina:quickstart:"

RIGHT_AND_WRONG: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "chromosome-count": ({"chromosome_count": 46}, {"chromosome_count": 23}),
    "hemoglobin-subunits": (
        {"hemoglobin_a_subunit_count": 4},
        {"hemoglobin_a_subunit_count": 2},
    ),
    "venetoclax-target": (
        {"identifies_bcl2_as_target": True},
        {"identifies_bcl2_as_target": False},
    ),
    "capital-of-france": ({"capital": " paris"}, {"capital": "Lyon"}),
    "blood-type": ({"blood_type": "O  Positive"}, {"blood_type": "A positive"}),
    "body-temperature": ({"temperature_celsius": 36.6}, {"temperature_celsius": 38.2}),
    "strawberry-letters": ({"r_count": 3}, {"r_count": 2}),
    "penicillin-discovery": ({"discovery_year": 1928}, {"discovery_year": 1945}),
    "dna-bases": ({}, {}),
    "mrna-vaccine": (
        {
            "delivery_mechanism": "mRNA in lipid nanoparticles",
            "target_protein": "the spike protein",
            "describes_immune_response": True,
        },
        {
            "delivery_mechanism": "messenger RNA",
            "target_protein": "spike protein",
            "describes_immune_response": False,
        },
    ),
    "aspirin-mechanism": (
        {"enzyme": "COX-1", "says_irreversible": True, "says_acetylation": False},
        {"enzyme": "COX-1", "says_irreversible": False, "says_acetylation": False},
    ),
    "caffeine-half-life": ({"half_life_hours": 5.5}, {"half_life_hours": 12.0}),
}
"""Judge extractions (question slug -> right, wrong) that must verify True / False."""

TRACES: dict[str, tuple[str, str]] = {
    "penicillin-discovery": (
        "Alexander Fleming noticed it in 1928.",
        "Howard Florey and Ernst Chain purified it.",
    ),
    "dna-bases": (
        "Adenine, cytosine, guanine and thymine.",
        "Adenine, cytosine, guanine and uracil.",
    ),
}
"""Raw answers (right, wrong) for the templates that also check the answer text; the
judge extractions above are correct for both, so the text alone decides."""

DEFAULT_TRACE = "(no answer text needed)"


def verdict(answer_class: type[BaseAnswer], fields: dict[str, Any], trace: str) -> bool:
    """What the VerifyTemplate stage decides: ``verify()`` and the regex checks."""
    answer = answer_class.model_construct(**fields)
    answer._raw_trace = trace
    verify = getattr(answer, "verify", None)
    fields_ok = verify() if verify is not None else True
    return bool(fields_ok) and answer.verify_regex(trace)["success"]


def slug(question: Question) -> str:
    return question.id.removeprefix(PREFIX)


def test_quickstart_is_a_finished_benchmark_with_a_rubric() -> None:
    assert [q.id for q in BENCHMARK.questions] == [PREFIX + name for name in RIGHT_AND_WRONG]
    assert all(q.finished for q in BENCHMARK.questions)
    assert BENCHMARK.global_rubric is not None
    assert BENCHMARK.global_rubric.trait_names() == ["Conciseness"]


@pytest.mark.parametrize("question", BENCHMARK.questions, ids=slug)
def test_quickstart_templates_verify(question: Question) -> None:
    answer_class = compile_template(question.template_code, question.id)
    right, wrong = RIGHT_AND_WRONG[slug(question)]
    right_trace, wrong_trace = TRACES.get(slug(question), (DEFAULT_TRACE, DEFAULT_TRACE))
    assert verdict(answer_class, right, right_trace) is True
    assert verdict(answer_class, wrong, wrong_trace) is False


@pytest.mark.parametrize(
    ("name", "fields", "passes", "score"),
    [
        # weights 2, 2, 1 and the immune response missing: fails with partial credit
        ("mrna-vaccine", RIGHT_AND_WRONG["mrna-vaccine"][1], False, 0.8),
        # AtLeastN(2) of three fields: passes with two of them, scores their share
        ("aspirin-mechanism", RIGHT_AND_WRONG["aspirin-mechanism"][0], True, 2 / 3),
        ("aspirin-mechanism", RIGHT_AND_WRONG["aspirin-mechanism"][1], False, 1 / 3),
    ],
)
def test_partial_credit(name: str, fields: dict[str, Any], passes: bool, score: float) -> None:
    (question,) = [q for q in BENCHMARK.questions if slug(q) == name]
    answer = compile_template(question.template_code, question.id)(**fields)
    assert answer.verify() is passes
    assert answer.verify_granular() == pytest.approx(score)


def test_quickstart_round_trips(tmp_path: Path) -> None:
    copy = tmp_path / "quickstart.jsonld"
    save_checkpoint(BENCHMARK, copy)
    assert load_checkpoint(copy) == BENCHMARK
