"""Re-create ``examples/scenario.replay.jsonl``, the recorded LLM replies of the scenario example.

As for the quickstart (``examples/record_quickstart.py``, whose helpers this script reuses), the
replies are **scripted stand-ins written by the pytest-karenina authors**, served by the
scripted OpenAI-compatible test server to the real langchain-openai client while pytest
records every call::

    python examples/record_scenario.py            # from the repository root, dev install

``examples/scenario.jsonld`` holds two questions and the scenario ``headache-triage``: the
answering model first names ibuprofen (a wrong answer: the scenario asks again), then aspirin
(the scenario moves on to the dose), so the path is ``ask -> ask -> dose`` and the outcome
criterion (the last answer names aspirin) holds.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = Path("examples") / "scenario.jsonld"
STORE = ROOT / "examples" / "scenario.replay.jsonl"


def _quickstart() -> Any:
    spec = importlib.util.spec_from_file_location(
        "record_quickstart", ROOT / "examples" / "record_quickstart.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


QUICKSTART = _quickstart()
MODEL: str = QUICKSTART.MODEL
DUMMY_KEY: str = QUICKSTART.DUMMY_KEY
QUESTIONS = tuple(c for c in QUICKSTART.CASES if c.slug in ("capital-of-france", "blood-type"))
"""The two questions, scripted as in the quickstart."""

ASK = "Which drug would you suggest first for a tension headache"
DOSE = "What single dose of that drug"
TURNS = (
    # (what the question asks, the answer, the judge's extraction); in the order they are asked
    (ASK, "Ibuprofen, I think.", "ibuprofen"),
    (ASK, "Aspirin.", "aspirin"),
    (DOSE, "Aspirin, 500 mg.", "aspirin"),
)
PATH = ["ask", "ask", "dose"]
EXPECTED = {"passed": 3}
"""Outcomes in strict replay: both questions and the scenario pass."""
CALLS = {"answer_generation": 5, "abstention_check": 5, "parsing": 5}
"""The calls the store keeps: two questions and three turns, each answered, checked, parsed."""


def script(server: Any) -> list[Any]:
    """The questions' rules as in the quickstart, then one rule per turn; returns the rules."""
    rules: list[Any] = []
    for case in QUESTIONS:
        rules += QUICKSTART.script_case(server, case)
    schema_name = QUICKSTART.schema_name
    for asks, answer, _ in TURNS:
        # times=1: the first ask is answered wrong, the second right
        rules.append(
            server.add_rule(answer, last_contains=asks, structured=False, times=1, name=answer)
        )
    verdict = {"reasoning": QUICKSTART.ANSWERS_DIRECTLY, "abstention_detected": False}
    # the last turn first: a judge call matches the first rule whose answer it holds, and a
    # turn's judge call may hold earlier answers, never later ones
    for _, answer, drug in reversed(TURNS):
        rules.append(
            server.add_rule(
                verdict,
                contains=answer,
                when=lambda b: schema_name(b) == "AbstentionVerdict",
                name=f"abstention {answer}",
            )
        )
        rules.append(
            server.add_rule(
                {"drug": drug},
                contains=answer,
                when=lambda b: schema_name(b) not in (None, "AbstentionVerdict"),
                name=f"parse {answer}",
            )
        )
    return rules


def run_pytest(store: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "--karenina", str(CHECKPOINT), *args]
    command += ["--karenina-replay-store", str(store), "-p", "no:cacheprovider", "-q"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def record(store: Path) -> None:
    """Serve the scripted replies and record the example's run into ``store`` (replaced)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.openai_server import OpenAIServer

    store.unlink(missing_ok=True)  # stale entries would otherwise survive
    with OpenAIServer(models=(MODEL,)) as server:
        rules = script(server)
        env = QUICKSTART.clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=DUMMY_KEY)
        recorded = run_pytest(store, "--karenina-replay", "record", env=env)
        unused = [rule.name for rule in rules if rule.uses == 0]
        problems = list(server.errors)
    Path(f"{store}.lock").unlink(missing_ok=True)
    if unused or problems or QUICKSTART.outcome_counts(recorded.stdout) != EXPECTED:
        sys.stdout.write(recorded.stdout + recorded.stderr)
        raise SystemExit(f"recording went wrong: unused rules {unused}, server errors {problems}")


def check_replay(store: Path) -> str:
    """Run the example offline from ``store`` in strict replay; its summary line."""
    env = QUICKSTART.clean_env(OPENAI_API_KEY="")
    replayed = run_pytest(store, "--karenina-replay", "strict", env=env)
    if QUICKSTART.outcome_counts(replayed.stdout) != EXPECTED:
        sys.stdout.write(replayed.stdout + replayed.stderr)
        raise SystemExit("strict replay of the new store did not give the expected outcomes")
    return str(replayed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--store", type=Path, default=STORE, help="where to write the store (default: %(default)s)"
    )
    store = parser.parse_args(argv).store.resolve()
    record(store)
    entries = len(store.read_text("utf-8").splitlines())
    print(f"recorded {entries} replies in {store}")
    print(f"strict replay: {check_replay(store)}")


if __name__ == "__main__":
    main()
