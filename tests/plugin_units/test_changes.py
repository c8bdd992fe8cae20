"""What ``--karenina-changed-since`` compares: question fingerprints, unfinished questions,
and the answer-changing settings of ini files (pytest 9's native table too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, load_checkpoint, save_checkpoint
from pytest_karenina.plugin.collect.changed_since import changes_since, ini_answer_settings
from pytest_karenina.plugin.options.answer_settings import ANSWER_SETTINGS, UNREADABLE
from pytest_karenina.plugin.options.declare import OPTIONS


def question(
    qid: str, finished: bool = True, text: str = "Q?", workspace: str | None = None
) -> Question:
    return Question(id=qid, text=text, raw_answer="A", template_code="", finished=finished,
                    workspace_path=workspace)  # fmt: skip


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


@pytest.mark.parametrize(
    ("ini", "expected"),
    [
        ("[pytest]\naddopts = -p no:x --karenina-mode=rubric_only -q\n", {"mode": "rubric_only"}),
        ("[pytest]\naddopts = --karenina-answering-model a --karenina-answering-model b\n",
         {"answering_model": ["a", "b"]}),
        ("[pytest]\naddopts = --karenina-abstention\n", {"abstention": "yes"}),
        ("[pytest]\naddopts = -o karenina_mode=x -o karenina_results=r\n", {"mode": "x"}),
        ("[pytest]\nkarenina_mode = x\naddopts = --karenina-mode=y\n", {"mode": "y"}),
        ('[tool.pytest]\naddopts = ["--karenina-replicates", "3"]\n', {"replicates": "3"}),
        ("[pytest]\naddopts = --karenina-mode\n", {UNREADABLE: ["--karenina-mode"]}),
        ("[pytest]\naddopts = --karenina-mode='x\n", {UNREADABLE: "--karenina-mode='x"}),
    ],
    ids=["option", "repeated", "flag", "override", "addopts wins", "native toml", "no value",
         "unclosed quote"],
)  # fmt: skip
def test_addopts_give_answer_settings(ini: str, expected: dict[str, object]) -> None:
    name = "pyproject.toml" if ini.startswith("[tool") else "tox.ini"
    assert ini_answer_settings(ini, name) == expected


def test_every_answer_setting_is_an_option() -> None:
    names = {option.dest.removeprefix("karenina_") for option in OPTIONS}
    assert set(ANSWER_SETTINGS) <= names


def test_a_key_that_addopts_overrides_is_no_change() -> None:
    before = "[pytest]\nkarenina_mode = a\naddopts = --karenina-mode=c\n"
    after = "[pytest]\nkarenina_mode = b\naddopts = --karenina-mode=c\n"
    assert ini_answer_settings(before, "tox.ini") == ini_answer_settings(after, "tox.ini")


def test_a_workspace_git_cannot_see_counts_as_changed(tmp_path: Path) -> None:
    """A workspace root outside the checkpoint's repository: git cannot say what changed
    there, so its questions run; questions without a workspace are compared as usual."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    (outside / "w1").mkdir(parents=True)
    benchmark = Benchmark(name="b", questions=[question("q1", workspace="w1"), question("q2")])
    path = commit(repo, benchmark)

    found = changes_since("HEAD", [(path, load_checkpoint(path))], [], workspace_root=outside)
    assert (found.changed, found.unchanged) == ({"q1"}, {"q2"})

    inside = changes_since("HEAD", [(path, load_checkpoint(path))], [])
    assert (inside.changed, inside.unchanged) == (set(), {"q1", "q2"})
