"""The fault matrix: a 200-question benchmark run through pytest against the test server while
one kind of fault hits 20% of the calls (tests/plugin/test_fault_matrix.py asserts on it,
benchmarks/bench_reliability.py measures it for docs/reliability.md).

Question ``i`` asks for the number ``i``; the model answers it right except for every tenth
question, so a fault-free run gives 180 passes and 20 failures.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.support.openai_rules import Fault
from tests.support.openai_server import OpenAIServer

QUESTIONS = 200
RATE = 0.2
WRONG_EVERY = 10
TEMPLATE = """
class Answer(BaseAnswer):
    value: int = Field(description="The number the response gives")

    def ground_truth(self):
        self.correct = {{"value": {n}}}

    def verify(self) -> bool:
        return self.value == self.correct["value"]
"""
_ASKED = re.compile(r"which number is (\d+)\?")
_GIVEN = re.compile(r"The number is (\d+)\.")
FAST_RETRIES = {
    name: {"max_attempts": 8, "backoff_min": 0.01, "backoff_max": 0.05}
    for name in ("connection", "timeout", "rate_limit", "server_error")
}
"""Generous budgets and short waits: a 20% fault rate then never exhausts a budget."""


@dataclass(frozen=True)
class FaultCase:
    """A fault and where it strikes: every call, answering calls or judge calls."""

    name: str
    fault: Fault
    target: str = "all"  # all | answer | judge
    extra: tuple[str, ...] = ()


FAULTS: tuple[FaultCase, ...] = (
    FaultCase("429 with Retry-After", Fault.rate_limit(retry_after=0.05)),
    FaultCase("500", Fault.server_error()),
    FaultCase("connection reset", Fault.connection_reset()),
    FaultCase("timeout", Fault.timeout(seconds=5), extra=("--karenina-request-timeout=0.3",)),
    FaultCase(
        "malformed judge JSON", Fault.malformed_content("value: four, I think"), target="judge"
    ),
    FaultCase(
        "judge JSON without a required field",
        Fault.malformed_content('{"number": 4}'),
        target="judge",
    ),
    FaultCase("empty answer", Fault.empty_answer(), target="answer"),
)


def write_checkpoint(path: Path, questions: int = QUESTIONS) -> Path:
    items = [
        Question(
            id=f"urn:karenina:faults:q{n:03d}",
            text=f"Question {n}: which number is {n}?",
            raw_answer=str(n),
            template_code=TEMPLATE.format(n=n),
            finished=True,
        )
        for n in range(1, questions + 1)
    ]
    save_checkpoint(Benchmark(name="fault matrix", questions=items), path)
    return path


def _is_answer_call(body: dict[str, Any]) -> bool:
    """The answering model gets the bare question as its last message."""
    return _ASKED.fullmatch(str(body["messages"][-1]["content"]).split(": ", 1)[-1]) is not None


def _answer(body: dict[str, Any]) -> str:
    asked = _ASKED.search(str(body["messages"][-1]["content"]))
    number = int(asked.group(1)) if asked else 0
    return f"The number is {number + 1 if number % WRONG_EVERY == 0 else number}."


def _parse(body: dict[str, Any]) -> dict[str, Any]:
    text = "\n".join(str(message["content"]) for message in body["messages"])
    given = _GIVEN.search(text)
    return {"value": int(given.group(1)) if given else None}


def script(server: OpenAIServer, case: FaultCase | None, seed: int = 7) -> None:
    """Answer and judge rules, with ``case``'s fault at :data:`RATE` where it strikes."""

    def faulty(target: str) -> dict[str, Any]:
        if case is None or case.target != target:
            return {}
        return {"faults": [case.fault], "fault_rate": RATE}

    server.add_rule(_answer, when=_is_answer_call, name="answer", **faulty("answer"))
    # Judge calls: the structured first attempt and the plain-text retries after a bad reply.
    server.add_rule(_parse, when=lambda body: not _is_answer_call(body), name="judge",
                    **faulty("judge"))  # fmt: skip
    if case is not None and case.target == "all":
        server.set_faults(RATE, case.fault, seed=seed)
    elif case is not None:
        server.set_faults(0.0, seed=seed)


def pytest_args(server: OpenAIServer, checkpoint: Path, results: Path) -> list[str]:
    preset = checkpoint.with_name("fast-retries.json")
    model = {"id": "test-model", "model_name": "test-model", "interface": "openai_endpoint",
             "endpoint_base_url": server.base_url}  # fmt: skip
    config = {"answering_models": [model], "parsing_models": [model], "retry_policy": FAST_RETRIES}
    preset.write_text(json.dumps({"config": config}))
    return [
        "--karenina", str(checkpoint), "--karenina-config", str(preset),
        "--karenina-endpoint", server.base_url, "--karenina-answering-model", "test-model",
        "--karenina-parsing-model", "test-model", "--karenina-concurrency", "16",
        f"--karenina-results={results}", "-p", "no:cacheprovider", "-q",
    ]  # fmt: skip


@dataclass(frozen=True)
class MatrixOutcome:
    """What the results export of one fault run holds."""

    results: int
    passed: int
    failed: int
    errors: Counter[str]
    retries: int
    retried_and_passed: int


def read_outcome(results: Path) -> MatrixOutcome:
    data = json.loads(results.read_text())["results"]
    passed = failed = retries = rescued = 0
    errors: Counter[str] = Counter()
    for result in data:
        meta, verdict = result["metadata"], result["template"]["verify_result"]
        used = sum(e.get("used", 0) for e in (meta.get("retry_counts") or {}).values())
        retries += used
        failure = meta.get("failure") or {}
        if (failure.get("details") or {}).get("error_message"):  # a pipeline error
            errors[failure["category"]] += 1
        elif verdict is True:
            passed += 1
            rescued += used > 0
        elif verdict is False:
            failed += 1
    return MatrixOutcome(len(data), passed, failed, errors, retries, rescued)
