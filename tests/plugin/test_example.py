"""The README's first command: the quickstart runs offline from its recorded store, and the
store is what examples/record_quickstart.py records."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_karenina import load_checkpoint

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
CHECKPOINT = EXAMPLES / "quickstart.jsonld"
STORE = EXAMPLES / "quickstart.replay.jsonl"
PREFIX = "urn:karenina:quickstart:"
UNREACHABLE = "http://127.0.0.1:9/v1"
"""The discard port: any call that went over the network would fail."""


def recording_script(name: str = "record_quickstart") -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


RECORDING = recording_script()


def offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))}
    env.update(OPENAI_API_KEY="", OPENAI_BASE_URL=UNREACHABLE)
    return env


def store_entries(path: Path = STORE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.mark.subprocess
def test_quickstart_runs_offline_with_failures_explained(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--karenina", "examples/quickstart.jsonld",
         f"--html={report}", "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, env=offline_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert out.strip().splitlines()[-1].startswith("3 failed, 9 passed in ")
    assert RECORDING.EXPECTED == {"passed": 9, "failed": 3}
    failed = {case.slug for case in RECORDING.CASES if not case.passes}
    assert failed == {"strawberry-letters", "mrna-vaccine", "caffeine-half-life"}
    # The short summary carries each failure's reason.
    assert "FAILED examples/quickstart.jsonld::strawberry-letters - r_count: 2 != 3" in out
    assert "FAILED examples/quickstart.jsonld::mrna-vaccine - describes_immune_response:" in out
    assert "FAILED examples/quickstart.jsonld::caffeine-half-life - abstained: " in out
    # the wrong answer: its field table
    assert "verify_result False (decided by VerifyTemplate), granular score 0.00" in out
    assert "  field | expected | parsed | primitive | result" in out
    assert "  r_count | 3 | 2 | NumericExact | FAIL" in out
    # partial credit: two of three weighted fields right
    assert "granular score 0.80" in out
    assert "  describes_immune_response | true | false | BooleanMatch | FAIL" in out
    # the refusal
    assert "verify_result False (decided by AbstentionCheck)" in out
    assert "  abstention: 'The response declines to state the half-life" in out
    assert "  override: abstention detected: verdict forced to false" in out
    assert "pass rate 75.0% (9/12 items)" in out
    html = report.read_text("utf-8")
    assert "examples/quickstart.jsonld::strawberry-letters" in html
    assert "karenina-fields" in html


def test_store_holds_the_scripted_replies_and_no_secrets() -> None:
    text = STORE.read_text("utf-8")
    entries = store_entries()
    questions = {q.id.removeprefix(PREFIX): q for q in load_checkpoint(CHECKPOINT).questions}
    cases = {case.slug: case for case in RECORDING.CASES}
    assert list(cases) == list(questions)

    expected: Counter[str] = Counter()
    for case in cases.values():
        expected.update(RECORDING.expected_calls(case))
    assert Counter(entry["call_kind"] for entry in entries) == expected
    keys = [entry["key"] for entry in entries]
    assert keys == sorted(set(keys))  # compacted: sorted, one entry per call

    def about(case: Any, kind: str) -> list[dict[str, Any]]:
        found = []
        for entry in entries:
            messages = entry["request"]["messages"]
            if entry["call_kind"] != kind:
                continue
            if kind == "answer_generation":
                if messages[-1]["content"] == questions[case.slug].text:
                    found.append(entry)
            elif any(case.answer in m["content"] for m in messages):
                found.append(entry)
        return found

    for case in cases.values():
        assert case.asks in questions[case.slug].text
        (answer,) = about(case, "answer_generation")
        assert answer["reply"]["text"] == case.answer
        (check,) = about(case, "abstention_check")
        assert json.loads(check["reply"]["text"])["abstention_detected"] is case.abstains
        parses = about(case, "parsing")
        assert [json.loads(e["reply"]["text"]) for e in parses] == (
            [case.parsed] if case.judged else []
        )

    for entry in entries:
        assert entry["identity"]["model"] == "gpt-4.1-mini"
        assert entry["identity"]["provider"] == "openai"
        assert "base_url" not in entry["identity"]
    for leak in ("sk-", RECORDING.DUMMY_KEY, "127.0.0.1", "localhost", str(ROOT), "/tmp/"):
        assert leak not in text


@pytest.mark.subprocess
def test_recording_script_reproduces_the_store(tmp_path: Path) -> None:
    """Re-recording gives the committed store, apart from the recording times."""
    store = tmp_path / "quickstart.replay.jsonl"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "record_quickstart.py"), "--store", str(store)],
        cwd=ROOT, env=offline_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "strict replay: 3 failed, 9 passed" in result.stdout

    def stable(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in entry.items() if k != "recorded_at"} for entry in entries]

    assert stable(store_entries(store)) == stable(store_entries())
    assert not Path(f"{store}.lock").exists()


@pytest.mark.parametrize("case", RECORDING.CASES, ids=lambda case: case.slug)
def test_scripted_replies_are_told_apart(case: Any) -> None:
    """The server recognises a question by ``asks`` and the judge calls by the answer text."""
    texts = {q.id.removeprefix(PREFIX): q.text for q in load_checkpoint(CHECKPOINT).questions}
    others = [c for c in RECORDING.CASES if c is not case]
    assert case.asks in texts[case.slug]
    assert not any(case.asks in texts[other.slug] for other in others)
    assert not any(case.answer in other.answer for other in others)
