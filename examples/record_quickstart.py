"""Re-create ``examples/quickstart.replay.jsonl``, the recorded LLM replies of the quickstart.

The replies in that store are **scripted stand-ins written by the pytest-karenina authors**,
not outputs of gpt-4.1-mini: we have no API key in CI, and a benchmark example needs answers
that are right, wrong and refused on purpose. This script serves them from the scripted
OpenAI-compatible test server (``tests/support/openai_server.py``) to the real
langchain-openai client, while pytest records every call::

    python examples/record_quickstart.py          # from the repository root, dev install

It points ``OPENAI_BASE_URL`` at the server, sets a dummy ``OPENAI_API_KEY``, deletes the old
store, runs ``pytest --karenina examples/quickstart.jsonld --karenina-replay record`` (models,
abstention check and replay mode come from ``[tool.pytest.ini_options]`` of pyproject.toml, so
the replay keys are those of ``openai:gpt-4.1-mini``), then checks that every scripted reply
was used and that a strict offline replay gives :data:`EXPECTED` outcomes.

Recording against the real model replaces the stand-ins (delete the store first, or the
stand-in judge replies stay next to the new ones; the outcomes then depend on the model)::

    rm examples/quickstart.replay.jsonl
    OPENAI_API_KEY=... pytest --karenina examples/quickstart.jsonld --karenina-replay record

Edit :data:`CASES` when you add or change a question of the checkpoint, then run this script.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = Path("examples") / "quickstart.jsonld"
STORE = ROOT / "examples" / "quickstart.replay.jsonl"
MODEL = "gpt-4.1-mini"
DUMMY_KEY = "quickstart-recording-dummy-key"
"""Sent to the local test server only; it is not a credential."""
ANSWERS_DIRECTLY = "The response answers the question directly; it neither refuses nor deflects."

EXPECTED = {"passed": 9, "failed": 3}
"""Outcomes of the quickstart in strict replay (README and tests/plugin/test_example.py)."""


@dataclass(frozen=True)
class Scripted:
    """What the answering model says to one question, and what the judge makes of it."""

    slug: str
    """The question id after ``urn:karenina:quickstart:`` (the pytest node name)."""
    asks: str
    """A piece of the question text, unique to it: how the answering call is recognised."""
    answer: str
    parsed: Mapping[str, Any] | None = None
    """The judge's extraction; None for a template that needs no judge (trace or regex only)."""
    abstains: bool = False
    """The answer is a refusal: the abstention check says so and parsing is skipped."""
    abstention_reasoning: str = ANSWERS_DIRECTLY
    passes: bool = True

    @property
    def judged(self) -> bool:
        return self.parsed is not None and not self.abstains


CASES: tuple[Scripted, ...] = (
    Scripted(
        "chromosome-count",
        "How many chromosomes are in a human somatic cell?",
        "A human somatic cell has 46 chromosomes, arranged in 23 pairs: 22 pairs of "
        "autosomes and one pair of sex chromosomes.",
        {"chromosome_count": 46},
    ),
    Scripted(
        "hemoglobin-subunits",
        "How many protein subunits does hemoglobin A have?",
        "Hemoglobin A is a tetramer of two alpha-globin and two beta-globin chains, so it has "
        "four protein subunits, each carrying one heme group.",
        {"hemoglobin_a_subunit_count": 4},
    ),
    Scripted(
        "venetoclax-target",
        "What is the approved drug target of Venetoclax?",
        "Venetoclax is a selective inhibitor of BCL-2 (B-cell lymphoma 2). Binding BCL-2 "
        "releases pro-apoptotic proteins so that malignant cells can undergo apoptosis; it is "
        "approved for chronic lymphocytic leukaemia and acute myeloid leukaemia.",
        {"identifies_bcl2_as_target": True},
    ),
    Scripted(
        "capital-of-france",
        "What is the capital of France?",
        "The capital of France is Paris.",
        {"capital": "Paris"},
    ),
    Scripted(
        "blood-type",
        "most common ABO/Rh blood type worldwide",
        "O positive is the most common blood type worldwide, carried by roughly 38% of people; "
        "it is especially frequent in Latin America.",
        {"blood_type": "O positive"},
    ),
    Scripted(
        "body-temperature",
        "normal body temperature of a healthy adult",
        "Normal body temperature for a healthy adult is about 36.8 °C (98.2 °F) when measured "
        "orally, and it varies by roughly half a degree over the day.",
        {"temperature_celsius": 36.8},
    ),
    Scripted(
        "strawberry-letters",
        "letter r occur in the word strawberry",
        "There are 2 r's in 'strawberry': one in 'straw' and one in 'berry'.",
        {"r_count": 2},
        passes=False,
    ),
    Scripted(
        "penicillin-discovery",
        "Who discovered penicillin",
        "Penicillin was discovered by the Scottish bacteriologist Alexander Fleming in 1928, "
        "when he noticed that a Penicillium mould had killed the Staphylococcus colonies around "
        "it. Florey and Chain later turned it into a medicine, and the three shared the 1945 "
        "Nobel Prize.",
        {"discovery_year": 1928},
    ),
    Scripted(
        "dna-bases",
        "four nucleobases found in DNA",
        "DNA contains four nucleobases: adenine (A), cytosine (C), guanine (G) and thymine (T). "
        "Adenine pairs with thymine, and guanine with cytosine.",
        None,
    ),
    Scripted(
        "mrna-vaccine",
        "How do mRNA vaccines against COVID-19",
        "An mRNA vaccine carries messenger RNA, wrapped in lipid nanoparticles, into cells near "
        "the injection site. The cells read it and make the SARS-CoV-2 spike protein, and the "
        "mRNA itself is broken down within days.",
        {
            "delivery_mechanism": "messenger RNA",
            "target_protein": "spike protein",
            "describes_immune_response": False,
        },
        passes=False,
    ),
    Scripted(
        "aspirin-mechanism",
        "How does aspirin inhibit its target enzyme?",
        "Aspirin blocks cyclooxygenase (COX-1 and COX-2) irreversibly, so the enzyme stays "
        "inactive until the cell makes new enzyme; platelets cannot, so they stay affected for "
        "their whole lifespan.",
        {
            "enzyme": "cyclooxygenase (COX-1 and COX-2)",
            "says_irreversible": True,
            "says_acetylation": False,
        },
    ),
    Scripted(
        "caffeine-half-life",
        "elimination half-life of caffeine",
        "I'm sorry, but I can't provide medical or pharmacological information. Please ask a "
        "doctor or pharmacist how caffeine affects you.",
        {"half_life_hours": 5.0},
        abstains=True,
        abstention_reasoning=(
            "The response declines to state the half-life and refers the user to a doctor or "
            "pharmacist; it gives no answer to the question."
        ),
        passes=False,
    ),
)


def expected_calls(case: Scripted) -> dict[str, int]:
    """LLM calls one question makes (and the store keeps): call kind -> count."""
    calls = {"answer_generation": 1, "abstention_check": 1}
    if case.judged:
        calls["parsing"] = 1
    return calls


def schema_name(body: Mapping[str, Any]) -> str | None:
    """The name of the JSON schema a structured request asks for."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and isinstance(response_format.get("json_schema"), dict):
        return response_format["json_schema"].get("name")
    return None


def script(server: Any) -> list[Any]:
    """One answer, abstention and (if judged) parse rule per case; returns the rules."""
    return [rule for case in CASES for rule in script_case(server, case)]


def script_case(server: Any, case: Scripted) -> list[Any]:
    """The answer, abstention and (if judged) parse rule of one case (record_scenario.py too)."""

    def is_abstention(body: Mapping[str, Any]) -> bool:
        return schema_name(body) == "AbstentionVerdict"

    def is_parse(body: Mapping[str, Any]) -> bool:
        return schema_name(body) not in (None, "AbstentionVerdict", "SufficiencyVerdict")

    rules = [
        server.add_rule(
            case.answer, last_contains=case.asks, structured=False, name=f"answer {case.slug}"
        )
    ]
    verdict = {"reasoning": case.abstention_reasoning, "abstention_detected": case.abstains}
    rules.append(
        server.add_rule(
            verdict, contains=case.answer, when=is_abstention, name=f"abstention {case.slug}"
        )
    )
    if case.judged:
        rules.append(
            server.add_rule(
                dict(case.parsed or {}),
                contains=case.answer,
                when=is_parse,
                name=f"parse {case.slug}",
            )
        )
    return rules


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without ``OPENAI_*`` and ``PYTEST_*`` variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTEST_"))}
    env.update(extra)
    return env


def run_pytest(store: Path, *args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "--karenina", str(CHECKPOINT), *args]
    command += ["--karenina-replay-store", str(store), "-p", "no:cacheprovider", "-q"]
    return subprocess.run(
        command, cwd=ROOT, env=dict(env), capture_output=True, text=True, check=False
    )


def outcome_counts(output: str) -> dict[str, int]:
    """``{"passed": 9, "failed": 3}`` from pytest's final summary line."""
    lines = [line for line in output.splitlines() if " in " in line and line.strip()]
    summary = lines[-1] if lines else ""
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|skipped)", summary)}


def record(store: Path) -> None:
    """Serve :data:`CASES` and record the quickstart run into ``store`` (replaced)."""
    sys.path.insert(0, str(ROOT))
    from tests.support.openai_server import OpenAIServer

    store.unlink(missing_ok=True)  # stale entries would otherwise survive
    with OpenAIServer(models=(MODEL,)) as server:
        rules = script(server)
        env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=DUMMY_KEY)
        recorded = run_pytest(store, "--karenina-replay", "record", env=env)
        unused = [rule.name for rule in rules if rule.uses == 0]
        problems = list(server.errors)
    Path(f"{store}.lock").unlink(missing_ok=True)
    if unused or problems or outcome_counts(recorded.stdout) != EXPECTED:
        sys.stdout.write(recorded.stdout + recorded.stderr)
        raise SystemExit(f"recording went wrong: unused rules {unused}, server errors {problems}")


def check_replay(store: Path) -> str:
    """Run the quickstart offline from ``store`` in strict replay; its summary line."""
    replayed = run_pytest(store, "--karenina-replay", "strict", env=clean_env(OPENAI_API_KEY=""))
    if outcome_counts(replayed.stdout) != EXPECTED:
        sys.stdout.write(replayed.stdout + replayed.stderr)
        raise SystemExit("strict replay of the new store did not give the expected outcomes")
    return replayed.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
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
