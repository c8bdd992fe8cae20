"""Naming checkpoints: a directory collects every checkpoint under it (as pytest collects test
files), and a checkpoint given as a plain test path says how to run it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import DATA
from tests.plugin.plugin_helpers import MULTI, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer

MINIMAL = "minimal.jsonld"
"""One question, unfinished."""


def bench_tree(root: Path) -> Path:
    """``bench/`` with two checkpoints (one a level down) and checkpoints where pytest does
    not look: a hidden directory, ``venv``, a virtual environment by another name, a hidden
    file; a JSON file that is no checkpoint."""
    bench = root / "bench"
    for place, name in [
        (bench, MULTI), (bench / "more", MINIMAL), (bench / ".cache", MINIMAL),
        (bench / "venv", MINIMAL), (bench / "env", MINIMAL), (bench / "more", f".{MINIMAL}"),
    ]:  # fmt: skip
        place.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / name.lstrip("."), place / name)
    (bench / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (bench / "notes.json").write_text("{}")
    return bench


def test_a_directory_collects_the_checkpoints_under_it_in_order(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    bench_tree(pytester.path)
    args = endpoint_args(openai_server, "--collect-only", "-q")
    result = pytester.runpytest("--karenina", "bench", *args)
    assert result.ret == pytest.ExitCode.OK
    assert [line for line in result.stdout.lines if "::" in line] == [
        "bench/more/minimal.jsonld::q001",
        *(f"bench/multi_question.jsonld::mq00{n}" for n in range(1, 6)),
    ]


def test_a_directory_runs_alike_in_one_process_and_on_workers(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    """Every worker finds the same checkpoints in the same order (xdist would stop the run
    if they differed); the two unfinished questions (q001, mq005) are skipped."""
    scripted(openai_server)
    bench_tree(pytester.path)
    result = pytester.runpytest("--karenina", "bench", *endpoint_args(openai_server), *dist)
    result.assert_outcomes(passed=2, failed=2, skipped=2)


def test_the_ini_list_takes_a_directory_too(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    bench_tree(pytester.path)
    pytester.makeini("[pytest]\nkarenina_checkpoints = bench/more\n")
    result = pytester.runpytest(*endpoint_args(openai_server, "--collect-only", "-q"))
    result.stdout.fnmatch_lines(["bench/more/minimal.jsonld::q001", "1 test collected*"])


@pytest.mark.parametrize(
    ("target", "message"),
    [("empty", "--karenina empty: no checkpoint (*.jsonld file) in this directory or below it"),
     ("bench::q001", "--karenina bench::q001: a question id needs its checkpoint file, "
                     "not a directory")],
)  # fmt: skip
def test_a_directory_without_checkpoints_or_with_an_id_is_refused(
    pytester: pytest.Pytester, target: str, message: str
) -> None:
    bench_tree(pytester.path)
    (pytester.path / "empty" / ".hidden").mkdir(parents=True)
    shutil.copy(DATA / MINIMAL, pytester.path / "empty" / ".hidden" / MINIMAL)
    result = pytester.runpytest("--karenina", target, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == f"ERROR: {message}"


def test_a_checkpoint_given_as_a_test_path_says_how_to_run_it(pytester: pytest.Pytester) -> None:
    shutil.copy(DATA / MULTI, pytester.path / "bench.jsonld")
    result = pytester.runpytest("bench.jsonld", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == (
        "ERROR: bench.jsonld is a Karenina checkpoint: collect it with --karenina "
        "(pytest --karenina bench.jsonld --karenina-answering-model provider:model)"
    )
    assert "not found" not in result.stderr.str()
