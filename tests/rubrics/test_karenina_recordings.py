"""Karenina's own recorded rubric judge calls, replayed through our rubric stage.

Each recording under ``tests/data/karenina_rubric_recordings/<scenario>/`` is a judge call
Karenina made against claude-haiku-4-5 (copied unchanged from the shared fixtures). From
the recorded human message we recover the question, the answer and the traits, rebuild
them as a question-specific rubric, and run the question in ``rubric_only`` mode with a
fake judge that replies the recorded text verbatim. Our prompts are worded differently,
but the reply shapes are Karenina's, so the scores we read must be the recorded ones.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.results import VerificationResultRubric
from pytest_karenina.rubrics.traits import LLMRubricTrait, Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, request_text, run_one

RECORDINGS = Path(__file__).parent.parent / "data" / "karenina_rubric_recordings"
SHARED = Path("/work/shared/fixtures/karenina/llm_responses/claude-haiku-4-5")
BATCH_SCENARIOS = ("rubric_evaluation", "e2e_rubric_batch")
SINGLE_SCENARIOS = ("e2e_rubric", "e2e_rubric_sequential")
SCENARIOS = BATCH_SCENARIOS + SINGLE_SCENARIOS

# "- **clarity** (boolean): ..." or "- **completeness** (score 1-5): ..."
BATCH_TRAIT = re.compile(
    r"^- \*\*(?P<name>[^*]+)\*\* \((?:(?P<boolean>boolean)|score (?P<low>-?\d+)-(?P<high>-?\d+))\):"
    r" (?P<description>.+)$",
    re.MULTILINE,
)
# "- 1 = Poor; ..." lines of a single score trait's scoring guidelines.
GUIDELINE_SCORE = re.compile(r"^- (-?\d+) = ", re.MULTILINE)


@dataclass(frozen=True)
class Recording:
    """One recorded judge call and what its prompt and reply say."""

    path: Path
    scenario: str
    question: str
    answer: str
    traits: list[LLMRubricTrait]
    reply: str

    @property
    def batch(self) -> bool:
        return self.scenario in BATCH_SCENARIOS

    def expected_scores(self) -> dict[str, Any]:
        """The trait values the recorded reply gives, read with our own small parser."""
        data = reply_json(self.reply)
        if self.batch:
            scores: dict[str, Any] = data["scores"]
            return scores
        (trait,) = self.traits
        key = "result" if trait.kind == "boolean" else "score"
        return {trait.name: data[key]}


def reply_json(text: str) -> dict[str, Any]:
    """The JSON object in a recorded reply, with a markdown fence or prose around it removed."""
    fenced = re.search(r"```(?:json)?\s*\n(.*?)\n\s*```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    assert 0 <= start < end, f"no JSON object in the recorded reply {text!r}"
    value: dict[str, Any] = json.loads(body[start : end + 1])
    return value


def message(data: dict[str, Any], kind: str) -> str:
    """The content of the recorded message of ``kind`` ("system" or "human")."""
    aliases = {kind, f"{kind.capitalize()}Message"}
    found = [m["content"] for m in data["request"]["messages"] if m["type"] in aliases]
    assert len(found) == 1, f"expected one {kind} message, got {len(found)}"
    content: str = found[0]
    return content


def section(text: str, heading: str) -> str:
    """The text after ``**HEADING:**`` up to the next blank line followed by ``**``."""
    match = re.search(rf"\*\*{re.escape(heading)}:\*\*\n(.*?)(?:\n\n\*\*|\Z)", text, re.DOTALL)
    assert match is not None, f"no **{heading}:** section"
    return match.group(1).strip()


def batch_traits(human: str) -> list[LLMRubricTrait]:
    traits = []
    for match in BATCH_TRAIT.finditer(human):
        fields: dict[str, Any] = {
            "name": match["name"],
            "description": match["description"].strip(),
        }
        if match["boolean"]:
            fields["kind"] = "boolean"
        else:
            fields.update(kind="score", min_score=int(match["low"]), max_score=int(match["high"]))
        traits.append(LLMRubricTrait(**fields))
    return traits


def single_trait(system: str, human: str) -> LLMRubricTrait:
    name = re.search(r"^\*\*TRAIT:\*\* (.+)$", human, re.MULTILINE)
    criteria = re.search(r"^\*\*CRITERIA:\*\* (.+)$", human, re.MULTILINE)
    assert name is not None and criteria is not None, "no **TRAIT:** / **CRITERIA:** lines"
    fields: dict[str, Any] = {
        "name": name.group(1).strip(),
        "description": criteria.group(1).strip(),
    }
    if "SCORING GUIDELINES" in system:
        points = [int(value) for value in GUIDELINE_SCORE.findall(system)]
        assert points, "a score trait's system text without scoring guideline values"
        fields.update(kind="score", min_score=min(points), max_score=max(points))
    else:
        assert "`true`" in system and "`false`" in system, "neither a score nor a boolean trait"
        fields["kind"] = "boolean"
    return LLMRubricTrait(**fields)


def load(path: Path) -> Recording:
    data = json.loads(path.read_text(encoding="utf-8"))
    human = message(data, "human")
    scenario = path.parent.name
    if scenario in BATCH_SCENARIOS:
        traits = batch_traits(human)
    else:
        traits = [single_trait(message(data, "system"), human)]
    return Recording(
        path=path,
        scenario=scenario,
        question=section(human, "QUESTION"),
        answer=section(human, "ANSWER TO EVALUATE"),
        traits=traits,
        reply=data["response"]["content"],
    )


def recording_paths() -> list[Path]:
    return sorted(path for scenario in SCENARIOS for path in (RECORDINGS / scenario).glob("*.json"))


PATHS = recording_paths()


def recording_id(path: Path) -> str:
    return f"{path.parent.name}-{path.stem[:8]}"


def test_every_scenario_has_recordings() -> None:
    """Guards the parametrization below against an emptied or renamed data folder."""
    per_scenario = {
        scenario: len(list((RECORDINGS / scenario).glob("*.json"))) for scenario in SCENARIOS
    }
    assert per_scenario == {
        "rubric_evaluation": 3,
        "e2e_rubric_batch": 1,
        "e2e_rubric": 1,
        "e2e_rubric_sequential": 1,
    }


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared Karenina fixtures are not mounted")
@pytest.mark.parametrize("path", PATHS, ids=recording_id)
def test_recordings_are_unchanged_copies(path: Path) -> None:
    original = SHARED / path.parent.name / path.name
    assert path.read_bytes() == original.read_bytes()


@pytest.mark.parametrize("path", PATHS, ids=recording_id)
def test_recording_is_read_back_from_the_prompt(path: Path) -> None:
    """The prompt parser itself: each recording yields a question, an answer and traits
    whose kinds agree with the recorded reply's keys."""
    recording = load(path)
    assert recording.question and recording.answer
    assert "**" not in recording.answer
    assert recording.traits
    expected = recording.expected_scores()
    assert sorted(expected) == sorted(t.name for t in recording.traits)
    for trait in recording.traits:
        value = expected[trait.name]
        if trait.kind == "boolean":
            assert isinstance(value, bool)
        else:
            assert isinstance(value, int) and not isinstance(value, bool)
            assert (trait.min_score, trait.max_score) == (1, 5)


def run_recording(recording: Recording) -> tuple[VerificationResultRubric, FakeLLM]:
    fake = FakeLLM()
    fake.answer(recording.answer)
    fake.on("rubric_evaluation", reply=recording.reply)
    strategy = "batch" if recording.batch else "sequential"
    item = question(CLASSIC, text=recording.question).model_copy(
        update={"rubric": Rubric(llm_traits=recording.traits)}
    )
    config = fake_config(evaluation_mode="rubric_only", rubric_evaluation_strategy=strategy)
    result = run_one(item, config, fake)
    fake.assert_all_scripted()
    assert result.rubric is not None, "the rubric stage produced no result"
    return result.rubric, fake


@pytest.mark.parametrize("path", PATHS, ids=recording_id)
def test_recorded_reply_gives_the_recorded_scores(path: Path) -> None:
    recording = load(path)
    rubric, _ = run_recording(recording)
    assert rubric.trait_errors is None
    assert rubric.llm_trait_scores == recording.expected_scores()
    assert rubric.rubric_evaluation_performed is True
    assert rubric.rubric_evaluation_strategy == ("batch" if recording.batch else "sequential")


@pytest.mark.parametrize("path", PATHS, ids=recording_id)
def test_our_prompt_shows_the_recorded_material(path: Path) -> None:
    recording = load(path)
    _, fake = run_recording(recording)
    calls = fake.calls("rubric_evaluation")
    assert len(calls) == 1  # one batch call, or one call for the single trait
    (request,) = calls
    text = request_text(request)
    assert recording.question in text
    assert f"--- AI Message ---\n{recording.answer}" in text
    for trait in recording.traits:
        assert trait.name in text
        assert trait.description is not None and trait.description in text
    if recording.batch:
        assert request.schema_name == "TraitScoresReply"
    else:
        (trait,) = recording.traits
        single = {"boolean": "BooleanTraitReply", "score": "ScoreTraitReply"}[trait.kind]
        assert request.schema_name == single
