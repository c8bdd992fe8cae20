"""The judge's schema never carries ground truth, verification metadata or trace fields."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_karenina.templates import BaseAnswer, compile_template, judge_schema
from tests.helpers import fixture_templates

# VerifiedField templates in the style of the seed "Answer Templates" page,
# covering every kind of ground truth it uses.
SEED_TEMPLATES = {
    "chromosome-pairs": """
class Answer(BaseAnswer):
    pair_count: int = VerifiedField(
        description="Chromosome pairs in a normal human somatic cell, as a whole number",
        ground_truth=23, verify_with=NumericExact())
""",
    "drug-target": """
from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import BooleanMatch, ExactMatch
class Answer(BaseAnswer):
    target: str = VerifiedField(description="The pharmacological target protein named",
        ground_truth="BCL2",
        verify_with=ExactMatch(normalize=["lowercase", "strip", "remove_punctuation"]))
    is_approved: bool = VerifiedField(description="True if FDA approval is stated",
        ground_truth=True, verify_with=BooleanMatch())
""",
    "temperature": """
class Answer(BaseAnswer):
    temperature_celsius: float = VerifiedField(description="Normal body temperature in Celsius",
        ground_truth=37.0, verify_with=NumericTolerance(tolerance=0.5, mode="absolute"))
""",
    "mutation": """
class Answer(BaseAnswer):
    mutation_type: Literal["missense", "nonsense", "frameshift", "silent"] = VerifiedField(
        description="The type of point mutation described", ground_truth="missense",
        verify_with=LiteralMatch())
""",
    "pathway": """
class Answer(BaseAnswer):
    signaling_proteins: list[str] = VerifiedField(
        description="Proteins named as part of the pathway, as uppercase gene symbols",
        ground_truth=["EGFR", "KRAS", "BRAF"], verify_with=SetContainment(mode="exact"))
""",
    "penicillin-trace": """
class Answer(BaseAnswer):
    discovery_year: int = VerifiedField(description="Year of the discovery",
        ground_truth=1928, verify_with=NumericExact())
    mentions_fleming: bool = VerifiedField(description="True if Fleming is mentioned",
        ground_truth=True, verify_with=TraceRegex(pattern=r"\\bFleming\\b"))
""",
    "vaccine-weights": """
class Answer(BaseAnswer):
    delivery_mechanism: str = VerifiedField(description="How instructions reach the cells",
        ground_truth="mrna", weight=2.0,
        verify_with=ContainsAny(substrings=["mrna", "messenger rna"], normalize=["lowercase"]))
    target_protein: str = VerifiedField(description="The protein the cells produce",
        ground_truth="spike protein", weight=2.0,
        verify_with=ContainsAny(substrings=["spike"], normalize=["lowercase"]))
    class VerificationStrategy:
        verify_strategy = AnyOf(conditions=[FieldCheck(field="delivery_mechanism"),
                                            FieldCheck(field="target_protein")])
""",
    "classic-with-regex": """
class Answer(BaseAnswer):
    discovery_date: str = Field(description="The date of discovery as stated")
    def ground_truth(self):
        self.correct = {"discovery_date": "1928"}
        self.regex = {"year": {"pattern": r"\\b1928\\b", "expected": "1928", "match_type": "exact"}}
    def verify(self):
        return "1928" in self.discovery_date
""",
}

ALL_TEMPLATES = {
    **{f"seed:{name}": code for name, code in SEED_TEMPLATES.items()},
    **{f"{name}:{qid}": code for name, qid, code in fixture_templates()},
}


def _ground_truth_values(answer_class: type[BaseAnswer]) -> list[Any]:
    values: list[Any] = [meta.ground_truth for meta in answer_class.verified_fields().values()]
    from pytest_karenina.templates.probe import probe_instance

    instance = probe_instance(answer_class)
    values.extend(getattr(instance, "correct", {}).values())
    for check in (getattr(instance, "regex", None) or {}).values():
        values.extend([check["pattern"], check["expected"]])
    flat: list[Any] = []
    for value in values:
        flat.extend(value if isinstance(value, list) else [value])
    return flat


_AUTHORED = ("description", "title", "enum", "const")


def _without_authored_text(schema: Any) -> Any:
    """The schema minus what the author wrote for the judge: prose may show the
    expected format ("use 'O+' notation") and a Literal type lists its options."""
    if isinstance(schema, dict):
        return {k: _without_authored_text(v) for k, v in schema.items() if k not in _AUTHORED}
    if isinstance(schema, list):
        return [_without_authored_text(item) for item in schema]
    return schema


def _leaves(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *(leaf for v in node.values() for leaf in _leaves(v))]
    if isinstance(node, list):
        return [leaf for item in node for leaf in _leaves(item)]
    return [node]


@pytest.mark.parametrize("code", ALL_TEMPLATES.values(), ids=ALL_TEMPLATES.keys())
def test_no_verification_keys_reach_the_judge(code: str) -> None:
    text = json.dumps(judge_schema(compile_template(code, "urn:q")))
    for forbidden in ("__verification__", "ground_truth", "verify_with", '"correct"', '"regex"'):
        assert forbidden not in text


@pytest.mark.parametrize("code", ALL_TEMPLATES.values(), ids=ALL_TEMPLATES.keys())
def test_no_ground_truth_value_appears_in_the_schema(code: str) -> None:
    answer_class = compile_template(code, "urn:q")
    leaves = _leaves(_without_authored_text(judge_schema(answer_class)))
    truths = _ground_truth_values(answer_class)
    assert truths, "every template here has ground truth"
    for truth in truths:
        if isinstance(truth, bool):
            continue  # a boolean cannot be told apart from schema flags
        for leaf in leaves:
            if isinstance(truth, str) and isinstance(leaf, str):
                assert truth.lower() != leaf.lower(), (truth, leaf)
            elif not isinstance(leaf, bool):
                assert leaf != truth, (truth, leaf)


def test_canary_ground_truth_is_nowhere_in_the_serialised_schema() -> None:
    code = """
class Answer(BaseAnswer):
    code_name: str = VerifiedField(description="The code name mentioned",
        ground_truth="CANARY-7f3a", verify_with=ExactMatch(), extraction_hint="Copy it verbatim")
    shifted: str = VerifiedField(description="The shifted value",
        ground_truth=ConditionalGroundTruth(source="node_results.a.parsed.x",
            cases={"1": GroundTruthCase(value="CANARY-CASE", verify_with=ContainsAny(
                substrings=["CANARY-SUB"]))},
            default=GroundTruthCase(value="CANARY-DEFAULT")),
        verify_with=ExactMatch())
"""
    answer_class = compile_template(code)
    text = json.dumps(judge_schema(answer_class))
    assert "CANARY" not in text
    # the unstripped pydantic schema would carry it: the test can fail
    from pydantic.json_schema import model_json_schema

    assert "CANARY-7f3a" in json.dumps(model_json_schema(answer_class))


def test_trace_fields_are_removed_from_properties_and_required() -> None:
    answer_class = compile_template(SEED_TEMPLATES["penicillin-trace"])
    schema = judge_schema(answer_class)
    assert set(schema["properties"]) == {"id", "discovery_year"}
    assert schema["required"] == ["discovery_year"]
    assert "mentions_fleming" in answer_class.model_fields


def test_trace_fields_of_nested_models_are_removed_from_defs() -> None:
    code = """
from pydantic import BaseModel
class Inner(BaseAnswer):
    year: int = Field(description="A year")
    cites: bool = VerifiedField(description="Has citations", ground_truth=True,
        verify_with=TraceRegex(pattern=r"\\[\\d+\\]"))
    def verify(self):
        return True
class Answer(Inner):
    inner: list[Inner] = Field(description="Nested items")
"""
    schema = judge_schema(compile_template(code))
    assert "cites" not in schema["properties"]
    inner = schema["$defs"]["Inner"]
    assert set(inner["properties"]) == {"id", "year"}
    assert inner["required"] == ["year"]


def test_schema_keeps_id_and_matches_karenina_layout() -> None:
    schema = judge_schema(compile_template(SEED_TEMPLATES["chromosome-pairs"]))
    assert schema["properties"]["id"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "title": "Id",
    }
    assert schema["additionalProperties"] is True
    assert schema["title"] == "Answer"
    assert schema["required"] == ["pair_count"]
    assert schema["properties"]["pair_count"]["type"] == "integer"


def test_model_json_schema_is_stripped_too() -> None:
    answer_class = compile_template(SEED_TEMPLATES["drug-target"])
    assert "__verification__" not in json.dumps(answer_class.model_json_schema())
    # trace-free template: the judge schema is the stripped model schema
    assert judge_schema(answer_class) == answer_class.model_json_schema()


RECORDED_PARSES = {
    "urn:karenina:quickstart:chromosome-count": "012_8c26d7cf6b9b3ecd.json",
    "urn:karenina:quickstart:hemoglobin-subunits": "013_9e35f6c6db4c423b.json",
    "urn:karenina:quickstart:venetoclax-target": "017_820e1711a48053be.json",
}


@pytest.mark.parametrize(("qid", "recording"), RECORDED_PARSES.items())
def test_quickstart_schema_is_byte_identical_to_karenina_prompt(qid: str, recording: str) -> None:
    """Karenina's recorded parsing prompts embed the schema as indented JSON; ours
    must render the same text so recorded judge calls can be replayed."""
    from pathlib import Path

    root = Path(__file__).parents[2]
    checkpoint = json.loads((root / "examples" / "quickstart.jsonld").read_text("utf-8"))
    (element,) = [e for e in checkpoint["dataFeedElement"] if e["@id"] == qid]
    answer_class = compile_template(element["item"]["hasPart"]["text"], qid)
    record = json.loads(
        (root / "tests" / "data" / "quickstart-recordings" / recording).read_text("utf-8")
    )
    prompt = record["request"]["messages"][1]["content"]
    recorded_schema = prompt.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.dumps(judge_schema(answer_class), indent=2) == recorded_schema
