"""The second example benchmark, examples/scenario.jsonld: its scenario runs offline from the
committed store, and the store is what examples/record_scenario.py records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.results import VerificationResultSet
from tests.plugin.test_example import recording_script
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
STORE = EXAMPLES / "scenario.replay.jsonl"
RECORDING = recording_script("record_scenario")


def env_for(server: OpenAIServer) -> dict[str, str]:
    """No key; the base URL is a scripted server without rules, to count stray calls."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))}
    env.update(OPENAI_API_KEY="", OPENAI_BASE_URL=server.base_url)
    return env


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.subprocess
def test_the_scenario_example_runs_offline_and_takes_its_branch(tmp_path: Path) -> None:
    export = tmp_path / "results.json"
    with OpenAIServer(models=(RECORDING.MODEL,)) as server:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "--karenina", "examples/scenario.jsonld", "-rA",
             "--karenina-results", str(export), "-p", "no:cacheprovider", "-q"],
            cwd=ROOT, env=env_for(server), capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
        requests = list(server.requests)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert requests == []
    assert out.strip().splitlines()[-1].startswith("3 passed in ")
    assert "PASSED examples/scenario.jsonld::scenario:headache-triage" in out
    assert "scenarios: 1/1 passed (pass 1)" in out
    assert "karenina replay: 15 entries used, 0 added, 0 unused of 15" in out

    loaded = VerificationResultSet.from_export_json(export.read_text(encoding="utf-8"))
    (record,) = loaded.scenario_results or []
    assert (record.scenario_id, record.status, record.path) == (
        "headache-triage", "completed", RECORDING.PATH
    )  # fmt: skip
    assert record.outcome_results == {"ends_right": True}
    assert not loaded.errors
    turns = sorted(
        (r.metadata.scenario_turn, r.metadata.scenario_node, r.template.raw_llm_response)
        for r in loaded.results
        if r.metadata.scenario_id == "headache-triage"
    )
    assert [(turn, node) for turn, node, _ in turns] == [(0, "ask"), (1, "ask"), (2, "dose")]
    for (_, _, trace), (_, answer, _) in zip(turns, RECORDING.TURNS, strict=True):
        assert trace.endswith(answer)  # after the trace's message header


def test_the_store_holds_the_scripted_calls_and_no_secrets() -> None:
    text = STORE.read_text("utf-8")
    stored = entries(STORE)
    assert Counter(entry["call_kind"] for entry in stored) == RECORDING.CALLS
    keys = [entry["key"] for entry in stored]
    assert keys == sorted(set(keys))
    answers = [e["reply"]["text"] for e in stored if e["call_kind"] == "answer_generation"]
    for _, answer, _ in RECORDING.TURNS:
        assert answer in answers
    for leak in ("sk-", RECORDING.DUMMY_KEY, "127.0.0.1", "localhost", str(ROOT), "/tmp/"):
        assert leak not in text


@pytest.mark.subprocess
def test_the_recording_script_reproduces_the_store(tmp_path: Path) -> None:
    store = tmp_path / "scenario.replay.jsonl"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "record_scenario.py"), "--store", str(store)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "strict replay: 3 passed" in result.stdout

    def stable(path: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "recorded_at"} for e in entries(path)]

    assert stable(store) == stable(STORE)
