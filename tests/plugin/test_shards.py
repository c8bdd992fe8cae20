"""``--karenina-shard I/N``: every question in exactly one shard, whatever N, through pytest."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.collect.shards import shard_of
from pytest_karenina.plugin.options.settings import parse_shard
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, copy_checkpoint

MODEL = ("--karenina-answering-model", "openai:gpt-4.1-mini")


@pytest.mark.parametrize("shards", range(1, 8))
def test_every_question_is_in_exactly_one_shard(shards: int) -> None:
    ids = [f"urn:karenina:q{i}" for i in range(200)]
    found = [shard_of(qid, shards) for qid in ids]
    assert set(found) <= set(range(1, shards + 1))
    if shards > 1:
        assert len(set(found)) == shards  # 200 ids spread over every shard


def test_parse_shard() -> None:
    assert parse_shard(" 2/4 ") == (2, 4)
    for bad in ("0/3", "4/3", "2", "a/b"):
        with pytest.raises(ValueError, match="I/N"):
            parse_shard(bad)


def selected(result: pytest.RunResult) -> set[str]:
    return {line.split(" ")[0] for line in result.stdout.lines if "::" in line}


@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_the_shards_of_a_run_cover_it_once(pytester: pytest.Pytester, shards: int) -> None:
    base = ["--karenina", str(copy_checkpoint(pytester)), *MODEL, "--collect-only", "-q"]
    everything = selected(pytester.runpytest(*base))
    parts = [
        selected(pytester.runpytest(*base, f"--karenina-shard={i}/{shards}"))
        for i in range(1, shards + 1)
    ]
    assert sum(len(part) for part in parts) == len(everything) == 5
    assert set().union(*parts) == everything


def test_every_model_of_a_question_stays_in_its_shard(pytester: pytest.Pytester) -> None:
    path = capitals_checkpoint(pytester.path)
    args = ["--karenina", str(path), "--karenina-answering-model", "openai:a",
            "--karenina-answering-model", "openai:b", "--collect-only", "-q"]  # fmt: skip
    for index in (1, 2):
        names = selected(pytester.runpytest(*args, f"--karenina-shard={index}/2"))
        questions = {name.split("::")[1].split("[")[0] for name in names}
        assert len(names) == 2 * len(questions)
        assert questions <= set(COUNTRIES)


def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--karenina", str(copy_checkpoint(pytester)), *MODEL,
                                "--karenina-shard=5/4")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-shard: expected I/N*"])
