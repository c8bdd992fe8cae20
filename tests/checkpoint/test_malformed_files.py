"""Malformed checkpoint *files* (hypothesis): truncated, corrupted bytes, invalid UTF-8, huge
strings. Loading either succeeds or raises a CheckpointError naming the file; nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import CheckpointError, load_checkpoint
from tests.helpers import DATA

hypothesis = pytest.importorskip(
    "hypothesis", reason="property tests need the dev extra: pip install -e '.[dev]'"
)
HealthCheck, given, settings = hypothesis.HealthCheck, hypothesis.given, hypothesis.settings
st = hypothesis.strategies

SOURCE = (DATA / "with_rubrics.jsonld").read_bytes()
FILE_SETTINGS = settings(max_examples=60, deadline=None,
                         suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


def load_or_named_error(path: Path) -> None:
    try:
        load_checkpoint(path)
    except CheckpointError as exc:
        assert path.name in str(exc)


@FILE_SETTINGS
@given(cut=st.integers(min_value=0, max_value=len(SOURCE) - 1))
def test_truncated_files(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "cut.jsonld"
    path.write_bytes(SOURCE[:cut])
    load_or_named_error(path)


@FILE_SETTINGS
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(SOURCE) - 1), st.integers(0, 255)), min_size=1, max_size=8
    )
)
def test_corrupted_bytes_including_invalid_utf8(
    tmp_path: Path, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(SOURCE)
    for offset, byte in edits:
        data[offset] = byte
    path = tmp_path / "corrupt.jsonld"
    path.write_bytes(bytes(data))
    load_or_named_error(path)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    where=st.sampled_from(["name", "text", "description", "pattern", "template"]),
    size=st.integers(min_value=10_000, max_value=1_000_000),
)
def test_huge_strings(tmp_path: Path, where: str, size: int) -> None:
    document = json.loads(SOURCE)
    huge = "x" * size
    item = document["dataFeedElement"][0]["item"]
    if where == "name":
        document["name"] = huge
    elif where == "text":
        item["text"] = huge
    elif where == "description":
        document["rating"][0]["description"] = huge
    elif where == "pattern":
        document["rating"][3]["additionalProperty"][0]["value"] = "(" * size
    else:
        item["hasPart"]["text"] = huge
    path = tmp_path / "huge.jsonld"
    path.write_text(json.dumps(document))
    load_or_named_error(path)
