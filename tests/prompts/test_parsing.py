"""The parsing prompt: layout, hints, instructions, and no ground truth ever."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_karenina.checkpoint import load_checkpoint
from pytest_karenina.prompts import parsing_messages, parsing_system_text, sufficiency_messages
from pytest_karenina.prompts.parsing import PARSING_SYSTEM
from pytest_karenina.templates import BaseAnswer, compile_template, judge_schema
from pytest_karenina.templates.extraction import relaxed_class
from tests.helpers import FIXTURE_CHECKPOINTS, fixture_templates

CANARY = "CANARY"
CANARY_TEMPLATES = {
    "verified": """
class Answer(BaseAnswer):
    gene: str = VerifiedField(description="The gene symbol named", ground_truth="CANARY-GT-1",
        verify_with=ExactMatch(normalize=["lowercase"]), extraction_hint="Use the HGNC symbol")
    count: int = VerifiedField(description="How many", ground_truth=987654321,
        verify_with=NumericTolerance(tolerance=0.5, mode="absolute"))
    aliases: list[str] = VerifiedField(description="Other names", ground_truth=["CANARY-GT-2"],
        verify_with=ContainsAny(substrings=["CANARY-SUB"]))
""",
    "conditional": """
class Answer(BaseAnswer):
    level: str = VerifiedField(description="Severity level",
        ground_truth=ConditionalGroundTruth(source="node_results.a.parsed.x",
            cases={"1": GroundTruthCase(value="CANARY-CASE",
                verify_with=ContainsAny(substrings=["CANARY-CASE-SUB"]))},
            default=GroundTruthCase(value="CANARY-DEFAULT")),
        verify_with=ExactMatch())
""",
    "trace": """
class Answer(BaseAnswer):
    year: int = VerifiedField(description="Year of the discovery", ground_truth=1928,
        verify_with=NumericExact())
    cites: bool = VerifiedField(description="True if the trace cites", ground_truth=True,
        verify_with=TraceRegex(pattern="CANARY-TRACE-PATTERN"))
""",
    "classic": """
class Answer(BaseAnswer):
    target: str = Field(description="The drug target named in the answer")

    def ground_truth(self):
        self.correct = {"target": "CANARY-GT-3"}
        self.regex = {"cite": {"pattern": "CANARY-RX", "expected": "CANARY-RX-EXPECTED"}}

    def verify(self) -> bool:
        return self.target == self.correct["target"]
""",
}


def _hints(answer_class: type[BaseAnswer]) -> dict[str, str]:
    return {
        name: meta.extraction_hint
        for name, meta in answer_class.verified_fields().items()
        if meta.extraction_hint and not meta.is_trace
    }


def _text(messages: list[Any]) -> str:
    return "\n".join(message.content for message in messages)


@pytest.mark.parametrize("name", sorted(CANARY_TEMPLATES))
def test_no_ground_truth_reaches_any_judge_prompt(name: str) -> None:
    answer_class = compile_template(CANARY_TEMPLATES[name], question_id="urn:q:canary")
    parsing = parsing_messages(
        "Question?",
        "Some answer.",
        judge_schema(answer_class),
        extraction_hints=_hints(answer_class),
        instructions="Extra.",
    )
    sufficiency = sufficiency_messages(
        "Question?", "Some answer.", answer_class.model_json_schema()
    )
    relaxed_schema = json.dumps(relaxed_class(answer_class).model_json_schema())
    for text in (_text(parsing), _text(sufficiency), relaxed_schema):
        assert CANARY not in text
        assert "987654321" not in text
        assert "__verification__" not in text and "ground_truth" not in text


def test_fixture_templates_are_all_found() -> None:
    """The fixture template list holds one template per question of the fixture checkpoints
    (counted by loading them), so the loops over it cannot pass vacuously."""
    templates = fixture_templates()
    questions = sum(len(load_checkpoint(path).questions) for path in FIXTURE_CHECKPOINTS)
    assert len(FIXTURE_CHECKPOINTS) >= 4
    assert len(templates) == questions >= 10
    assert all(code.strip() for _, _, code in templates)


def test_fixture_templates_never_leak_verification_metadata() -> None:
    templates = fixture_templates()
    assert len(templates) >= 10
    for _, question_id, code in templates:
        answer_class = compile_template(code, question_id=question_id)
        text = _text(parsing_messages("Q?", "A.", judge_schema(answer_class)))
        assert "__verification__" not in text and "ground_truth" not in text


def test_parsing_layout() -> None:
    schema = {"properties": {"value": {"type": "string", "description": "The value"}}}
    system, user = parsing_messages("What {is} it?", "It is {42}.", schema)
    assert system.role == "system" and system.content == PARSING_SYSTEM
    assert user.role == "user"
    content = user.content
    question, response = content.index("What {is} it?"), content.index("It is {42}.")
    fence = content.index(f"```json\n{json.dumps(schema, indent=2)}\n```")
    assert question < response < fence
    assert content.rstrip().endswith(":")
    for duty in ("final answer", "description", "null", "JSON object"):
        assert duty in system.content


def test_extraction_hints_and_instructions_follow_the_protocol() -> None:
    system, _ = parsing_messages(
        "Q?",
        "A.",
        {},
        extraction_hints={"gene": "Use the HGNC symbol", "blank": "  "},
        instructions="Prefer SI units.",
    )
    assert system.content.startswith(PARSING_SYSTEM + "\n\n")
    assert "- **gene**: Use the HGNC symbol" in system.content
    assert "**blank**" not in system.content
    assert system.content.endswith("\n\nPrefer SI units.")
    assert system.content.index("**gene**") < system.content.index("Prefer SI units.")
    assert parsing_system_text({}) == PARSING_SYSTEM
