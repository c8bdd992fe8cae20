"""Scenarios in their checkpoint form (Karenina's ``karenina:Scenario`` objects) for tests."""

from __future__ import annotations

from typing import Any

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.scenarios import ScenarioExecutionResult, parse_scenario, run_scenario
from tests.support.fake_llm import FakeLLM, fake_factory

DRUG = """
class Answer(BaseAnswer):
    drug: str = Field(description="The drug the response recommends")

    def ground_truth(self):
        self.correct = {"drug": "aspirin"}

    def verify(self) -> bool:
        return self.drug.strip().lower() == "aspirin"
"""
"""One template for every node: the verdict is whether the answer names aspirin."""


def node(node_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "@type": "karenina:ScenarioNode",
        "nodeId": node_id,
        "question": {
            "@type": "Question",
            "text": text,
            "acceptedAnswer": {"@type": "Answer", "text": "aspirin"},
            "hasPart": {"@type": "SoftwareSourceCode", "text": DRUG},
        },
        **extra,
    }


def on_verdict(expected: bool) -> dict[str, Any]:
    """A condition: the turn's template verdict is ``expected``."""
    return {
        "type": "state_check",
        "field": "verify_result",
        "expected": expected,
        "verify_with": {"type": "BooleanMatch"},
    }


def edge(source: str, target: str, **extra: Any) -> dict[str, Any]:
    return {"source": source, "target": target, **extra}


def scenario(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    *,
    name: str = "triage",
    criteria: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "@type": "karenina:Scenario",
        "name": name,
        "entryNode": nodes[0]["nodeId"],
        "nodes": {n["nodeId"]: n for n in nodes},
        "edges": edges,
        "outcomeCriteria": criteria or [],
    }


def execute(
    data: dict[str, Any], config: VerificationConfig, fake: FakeLLM, replicate: int | None = None
) -> ScenarioExecutionResult:
    """Load ``data`` as a checkpoint would and run it with the config's first models."""
    definition = parse_scenario(data, checkpoint="bench.jsonld", limit=config.template_time_limit)
    llm = fake_factory(config, fake)
    answering, parsing = (models[0] for models in config.stamped_models())
    return run_scenario(definition, config, llm, answering, parsing, replicate=replicate)


def answers(fake: FakeLLM, *turns: tuple[str, str]) -> FakeLLM:
    """Script ``(question text, answer)`` turns: the answering rule of each question (later
    questions first: a later turn's request also holds the earlier questions) and the judge's
    parse of each answer (the drug is the answer's first word)."""
    for question_text, answer in reversed(turns):
        fake.answer(answer, contains=question_text)
    for _, answer in turns:
        fake.parse_as({"drug": answer.split()[0].strip(".,")}, contains=answer)
    return fake
