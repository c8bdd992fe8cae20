"""Saving files: atomic replacement, file modes, touch, encoding and write errors."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import (
    Benchmark,
    CheckpointError,
    Question,
    load_checkpoint,
    parse_checkpoint,
    save_checkpoint,
)
from tests.checkpoint.builders import document, fixture_path
from tests.helpers import DATA


def test_load_accepts_str_and_pathlike() -> None:
    path = fixture_path("minimal")
    assert load_checkpoint(str(path)) == load_checkpoint(path)


def test_parse_accepts_text_bytes_and_documents() -> None:
    doc = document()
    text = json.dumps(doc)
    assert parse_checkpoint(text) == parse_checkpoint(text.encode()) == parse_checkpoint(doc)
    assert parse_checkpoint(b"\xef\xbb\xbf" + text.encode()) == parse_checkpoint(doc)


def test_save_keeps_date_modified_unless_touched(tmp_path: Path) -> None:
    benchmark = load_checkpoint(fixture_path("minimal"))
    target = tmp_path / "out.jsonld"
    save_checkpoint(benchmark, target)
    assert json.loads(target.read_text("utf-8"))["dateModified"] == "2025-01-11T00:00:00Z"
    touched = save_checkpoint(benchmark, target, touch=True)
    assert touched.date_modified != benchmark.date_modified
    assert touched.date_modified.startswith(("20", "21"))
    assert benchmark.date_modified == "2025-01-11T00:00:00Z"
    assert load_checkpoint(target) == touched


def test_save_replaces_atomically_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "bench.jsonld"
    target.write_text("old content", encoding="utf-8")
    target.chmod(0o640)
    save_checkpoint(load_checkpoint(fixture_path("with_rubrics")), target)
    assert [p.name for p in tmp_path.iterdir()] == ["bench.jsonld"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert load_checkpoint(target).name == "with-rubrics-test"


def test_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    save_checkpoint(Benchmark(name="b"), target)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_non_ascii_text_is_written_as_utf8(tmp_path: Path) -> None:
    question = Question(text="Quelle est la capitale ? 東京", raw_answer="Tōkyō", template_code="")
    target = tmp_path / "utf8.jsonld"
    save_checkpoint(Benchmark(name="bénch", questions=[question]), target)
    raw = target.read_bytes()
    assert "東京".encode() in raw and b"\\u" not in raw
    assert load_checkpoint(target).questions[0].raw_answer == "Tōkyō"


def test_unwritable_target_is_a_checkpoint_error(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "bench.jsonld"
    with pytest.raises(CheckpointError) as caught:
        save_checkpoint(Benchmark(name="b"), target)
    assert caught.value.file == str(target)
    assert "cannot write the checkpoint" in caught.value.reason


def test_a_lone_surrogate_in_question_text_is_replaced_where_it_enters(tmp_path: Path) -> None:
    data = json.loads((DATA / "with_rubrics.jsonld").read_text(encoding="utf-8"))
    data["dataFeedElement"][0]["item"]["text"] = "What is \ud800 here?"
    path = tmp_path / "surrogate.jsonld"
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii: "\\ud800" in the file

    benchmark = load_checkpoint(path)

    assert benchmark.questions[0].text == "What is \ufffd here?"
    benchmark.questions[0].text.encode("utf-8")  # every writer can encode it
