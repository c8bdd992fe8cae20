"""Loading a large checkpoint: no garbage collection passes, the caller's data left alone, the
questions' shared fields set."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import CheckpointError, load_checkpoint, parse_checkpoint
from tests.checkpoint.builders import add_question, document

QUESTIONS = 400
"""Enough containers to start dozens of collector passes if the collector ran."""


@pytest.fixture
def passes() -> Iterator[list[int]]:
    """The generations of the collector passes that start while the test runs."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


def large_document() -> dict[str, object]:
    doc = document()
    for number in range(QUESTIONS):
        add_question(doc, f"question {number}?")
    return doc


def test_loading_a_checkpoint_starts_no_collector_pass_while_it_decodes(
    tmp_path: Path, passes: list[int]
) -> None:
    path = tmp_path / "large.jsonld"
    path.write_text(json.dumps(large_document()), encoding="utf-8")
    passes.clear()

    benchmark = load_checkpoint(path)

    seen = list(passes)
    assert len(benchmark.questions) == QUESTIONS + 1
    assert len(seen) <= 1, seen  # the one pass re-enabling may start at once
    assert gc.isenabled()


def test_the_collector_runs_again_after_a_file_that_does_not_load(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonld"
    doc = large_document()
    del doc["dataFeedElement"][QUESTIONS]["item"]["text"]  # type: ignore[index]
    path.write_text(json.dumps(doc), encoding="utf-8")

    with pytest.raises(CheckpointError, match=r"dataFeedElement\[400\]\.item"):
        load_checkpoint(path)

    assert gc.isenabled()


def test_a_caller_that_paused_the_collector_finds_it_paused(tmp_path: Path) -> None:
    path = tmp_path / "large.jsonld"
    path.write_text(json.dumps(large_document()), encoding="utf-8")
    gc.disable()
    try:
        load_checkpoint(path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_byte_order_mark_and_crlf_line_ends_load_as_before(tmp_path: Path) -> None:
    text = json.dumps(document(), indent=2).replace("\n", "\r\n")
    path = tmp_path / "bom.jsonld"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))

    assert load_checkpoint(path) == parse_checkpoint(document())


def test_parsing_a_document_leaves_it_as_it_was() -> None:
    doc = large_document()
    before = json.dumps(doc)

    parse_checkpoint(doc)

    assert json.dumps(doc) == before


def test_questions_share_their_fields_set_without_sharing_changes(tmp_path: Path) -> None:
    path = tmp_path / "large.jsonld"
    path.write_text(json.dumps(large_document()), encoding="utf-8")
    first, second = load_checkpoint(path).questions[:2]
    fields = set(type(first).model_fields)

    copied = first.model_copy(update={"text": "changed?"})

    assert first.model_fields_set == second.model_fields_set == fields
    assert copied.model_fields_set == fields and copied.text == "changed?"
    assert first.jsonld_ids.model_fields_set == {"question", "answer", "template"}
