"""The shipped example benchmark stays valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina import Question, compile_template, load_checkpoint, save_checkpoint

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart.jsonld"
BENCHMARK = load_checkpoint(QUICKSTART)

RIGHT_AND_WRONG = {
    "urn:karenina:quickstart:chromosome-count": (
        {"chromosome_count": 46},
        {"chromosome_count": 23},
    ),
    "urn:karenina:quickstart:hemoglobin-subunits": (
        {"hemoglobin_a_subunit_count": 4},
        {"hemoglobin_a_subunit_count": 2},
    ),
    "urn:karenina:quickstart:venetoclax-target": (
        {"identifies_bcl2_as_target": True},
        {"identifies_bcl2_as_target": False},
    ),
    "urn:karenina:quickstart:capital-of-france": ({"capital": " paris"}, {"capital": "Lyon"}),
}


def test_quickstart_is_a_finished_benchmark_with_a_rubric() -> None:
    assert [q.id for q in BENCHMARK.questions] == list(RIGHT_AND_WRONG)
    assert all(q.finished for q in BENCHMARK.questions)
    assert BENCHMARK.global_rubric is not None
    assert BENCHMARK.global_rubric.trait_names() == ["Conciseness"]


@pytest.mark.parametrize("question", BENCHMARK.questions, ids=lambda q: q.id.rsplit(":", 1)[-1])
def test_quickstart_templates_verify(question: Question) -> None:
    answer_class = compile_template(question.template_code, question.id)
    right, wrong = RIGHT_AND_WRONG[question.id]
    assert answer_class(**right).verify() is True
    assert answer_class(**wrong).verify() is False


def test_quickstart_round_trips(tmp_path: Path) -> None:
    copy = tmp_path / "quickstart.jsonld"
    save_checkpoint(BENCHMARK, copy)
    assert load_checkpoint(copy) == BENCHMARK
