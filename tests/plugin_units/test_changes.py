"""What ``--karenina-changed-since`` compares: question fingerprints, unfinished questions,
and the answer-changing settings of ini files (pytest 9's native table too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_karenina.checkpoint import Benchmark, Question, load_checkpoint, save_checkpoint
from pytest_karenina.plugin.changes import changes_since, ini_answer_settings


def question(qid: str, finished: bool = True, text: str = "Q?") -> Question:
    return Question(id=qid, text=text, raw_answer="A", template_code="", finished=finished)


def commit(directory: Path, benchmark: Benchmark) -> Path:
    path = directory / "bench.jsonld"
    save_checkpoint(benchmark, path)
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                       cwd=directory, check=True, capture_output=True)  # fmt: skip
    return path


def test_finishing_a_question_is_a_change_and_unfinished_ones_take_no_part(tmp_path: Path) -> None:
    path = commit(tmp_path, Benchmark(name="b", questions=[
        question("q1"), question("q2", finished=False), question("q3", finished=False),
    ]))  # fmt: skip
    save_checkpoint(Benchmark(name="b", questions=[
        question("q1"), question("q2", finished=True), question("q3", finished=False),
    ]), path)  # fmt: skip
    found = changes_since("HEAD", [(path, load_checkpoint(path))], [])
    assert (found.changed, found.unchanged, found.new) == ({"q2"}, {"q1"}, set())
    everything = changes_since("HEAD", [(path, load_checkpoint(path))], [], True)
    assert everything.unchanged == {"q1", "q3"}


def test_ini_settings_of_every_format() -> None:
    native = '[tool.pytest]\nkarenina_answering_model = ["a"]\naddopts = ["-q"]\n'
    legacy = '[tool.pytest.ini_options]\nkarenina_mode = "rubric_only"\n'
    assert ini_answer_settings(native, "pyproject.toml") == {"answering_model": ["a"]}
    assert ini_answer_settings(legacy, "pyproject.toml") == {"mode": "rubric_only"}
    assert ini_answer_settings("[pytest]\nkarenina_endpoint = x\n", "tox.ini") == {"endpoint": "x"}
    assert ini_answer_settings("[tool:pytest]\nkarenina_results = r\n", "setup.cfg") == {}
    assert ini_answer_settings(None, "pytest.ini") == {}
