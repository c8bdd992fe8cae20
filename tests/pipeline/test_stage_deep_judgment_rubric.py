"""Rubric deep judgment through the pipeline: RubricEvaluation's deep path, stage 12
(DeepJudgmentRubricAutoFail) and the ``deep_judgment_rubric`` section (seed 000 sections 11
and 12, seed 001), with a regression test for each Karenina bug of outline B in
``spec/missing-capabilities.md`` (numbers in the test docstrings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Question, load_checkpoint
from pytest_karenina.llm.ports import LLMCallError
from pytest_karenina.llm.replay import ReplayMiss
from pytest_karenina.pipeline.stage_list import default_stages
from pytest_karenina.results import VerificationResult
from pytest_karenina.rubrics.traits import CallableTrait, LLMRubricTrait, RegexTrait, Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

DATA = Path(__file__).parent.parent / "data"
ANSWER = "The capital of France is Paris. It sits on the river Seine."
GROUNDED = LLMRubricTrait(name="Grounded", description="Names the capital", kind="boolean")
DEPTH = LLMRubricTrait(name="Depth", description="Detail", kind="score", min_score=0, max_score=3)
PLAIN = LLMRubricTrait(name="Plain", description="Plain wording", kind="boolean")
EXCERPTS = "You collect evidence"
REASONING = "reasoning before you decide"
VERDICT = "You turn a grader's reasoning"


def quotes(*texts: str) -> str:
    return json.dumps({"excerpts": [{"text": t, "confidence": "high"} for t in texts]})


def script(fake: FakeLLM, trait: str, excerpts: list[str], verdict: dict[str, Any]) -> FakeLLM:
    """The judge's three deep-judgment replies for ``trait`` (excerpts repeat on retries)."""
    tag = f'<trait name="{trait}">'
    fake.on("rubric_evaluation", reply=quotes(*excerpts), contains=[EXCERPTS, tag])
    fake.on("rubric_evaluation", reply=f"Conclusion on {trait}.", contains=[REASONING, tag])
    return fake.on("rubric_evaluation", reply=json.dumps(verdict), contains=[VERDICT, tag])


def ask(traits: list[Any]) -> Question:
    return question(CLASSIC).model_copy(update={"rubric": Rubric.from_traits(traits)})


def run(
    traits: list[Any], fake: FakeLLM, mode: str = "template_and_rubric", **config: Any
) -> VerificationResult:
    settings = {"deep_judgment_rubric_mode": "enable_all", **config}
    return run_one(ask(traits), fake_config(evaluation_mode=mode, **settings), fake)


def judge() -> FakeLLM:
    return FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})


def test_grounded_traits_are_scored_and_the_section_records_every_step() -> None:
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    script(fake, "Depth", ["sits on the river Seine"], {"score": 2})

    result = run([GROUNDED, DEPTH], fake)

    fake.assert_all_scripted()
    assert result.verify_result is True and result.metadata.failure is None
    rubric = result.rubric
    assert rubric is not None and rubric.llm_trait_scores == {"Grounded": True, "Depth": 2}
    assert rubric.llm_trait_reasoning == {
        "Grounded": "Conclusion on Grounded.", "Depth": "Conclusion on Depth.",
    }  # fmt: skip
    section = result.deep_judgment_rubric
    assert section is not None and section.deep_judgment_rubric_performed
    assert section.deep_judgment_rubric_scores == {"Grounded": True, "Depth": 2}
    assert section.standard_rubric_scores == {}  # Karenina's empty map
    excerpts = section.extracted_rubric_excerpts or {}
    assert excerpts["Depth"][0]["text"] == "sits on the river Seine"
    assert excerpts["Depth"][0]["similarity_score"] == 1.0
    assert (section.trait_metadata or {})["Grounded"] == {
        "stages_completed": ["excerpt_extraction", "reasoning_generation", "score_extraction"],
        "model_calls": 3, "had_excerpts": True, "excerpt_retry_count": 0,
        "excerpt_validation_failed": False,
    }  # fmt: skip
    assert section.traits_without_valid_excerpts == []
    assert (section.total_deep_judgment_model_calls, section.total_traits_evaluated) == (6, 2)
    usage = (result.template.usage_metadata or {}) if result.template else {}
    assert usage["rubric_evaluation"]["input_tokens"] == 6 * 11


def test_a_trait_without_a_valid_quote_fails_the_answer_at_stage_12() -> None:
    fake = script(judge(), "Grounded", ["Paris became the capital in 987"], {"result": True})

    result = run([GROUNDED], fake, deep_judgment_rubric_excerpt_retry_attempts_default=1)

    verdicts = [r for r in fake.calls("rubric_evaluation") if VERDICT in r.messages[0].content]
    assert verdicts == [] and len(fake.calls("rubric_evaluation")) == 2  # one retry, no verdict
    assert result.verify_result is False
    failure = result.metadata.failure
    assert failure is not None
    assert (failure.category, failure.stage) == (
        "deep_judgment_rubric",
        "DeepJudgmentRubricAutoFail",
    )
    section = result.deep_judgment_rubric
    assert section is not None and section.traits_without_valid_excerpts == ["Grounded"]
    assert section.total_excerpt_retries == 1 and section.deep_judgment_rubric_scores == {}
    assert section.total_traits_evaluated == 0  # traits that got a grade, as in Karenina
    assert (section.trait_metadata or {})["Grounded"] == {
        "stages_completed": [], "model_calls": 2, "had_excerpts": True,
        "excerpt_retry_count": 1, "excerpt_validation_failed": True,
    }  # fmt: skip
    rubric = result.rubric
    assert rubric is not None and rubric.llm_trait_scores is None and rubric.trait_errors is None
    (warning,) = [w for w in result.metadata.warnings if w.startswith("deep judgment:")]
    assert warning.startswith(
        "deep judgment: no verbatim quote for rubric trait Grounded after 1 excerpt retry; "
        'rejected "Paris became the capital in 987" (similarity 0.'
    )


def test_in_rubric_only_the_template_verdict_stays_unset() -> None:
    fake = FakeLLM().answer(ANSWER)
    script(fake, "Grounded", ["Lyon is the capital"], {"result": True})

    result = run([GROUNDED], fake, "rubric_only")

    assert result.template is not None and result.template.verify_result is None
    failure = result.metadata.failure
    assert failure is not None and failure.stage == "DeepJudgmentRubricAutoFail"
    section = result.deep_judgment_rubric
    assert section is not None and section.traits_without_valid_excerpts == ["Grounded"]


def test_abstention_skips_stage_12_but_the_rubric_is_still_judged() -> None:
    """Seed 000's cascade: abstention skips DeepJudgmentRubricAutoFail; RubricEvaluation runs."""
    fake = judge().abstention(True)
    script(fake, "Grounded", ["not in the answer at all"], {"result": True})

    result = run([GROUNDED], fake, abstention_enabled=True)

    failure = result.metadata.failure
    assert failure is not None and failure.category == "abstention"
    section = result.deep_judgment_rubric
    assert section is not None and section.traits_without_valid_excerpts == ["Grounded"]
    assert not [w for w in result.metadata.warnings if w.startswith("deep judgment:")]


def test_stage_12_is_included_whenever_rubric_evaluation_is() -> None:
    """Karenina bug 10: it needs template deep judgment on; the seed says rubric evaluation."""
    traits = Rubric.from_traits([GROUNDED])
    for mode in ("template_and_rubric", "rubric_only"):
        config = fake_config(evaluation_mode=mode)  # rubric and template deep judgment off
        names = [stage.name for stage in default_stages(config, rubric=traits)]
        assert names[-4:-2] == ["RubricEvaluation", "DeepJudgmentRubricAutoFail"]
    names = [s.name for s in default_stages(fake_config(), rubric=traits)]
    assert "DeepJudgmentRubricAutoFail" not in names


def test_regex_callable_and_plain_llm_traits_of_the_rubric_are_graded_as_usual() -> None:
    """Karenina bug 6: its deep path grades only LLM traits, so regex and callable traits
    of the same rubric get no score."""
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    fake.on_json("rubric_evaluation", {"scores": {"Plain": True}}, contains="Plain wording")
    regex = RegexTrait(name="MentionsSeine", pattern=r"Seine")
    cloudpickle = pytest.importorskip("cloudpickle", reason="pip install -e '.[dev]'")
    short = cloudpickle.dumps(lambda text: len(text.split()) < 50)
    words = CallableTrait(name="Short", callable_code=short, kind="boolean")

    result = run(
        [GROUNDED, PLAIN, regex, words], fake, deep_judgment_rubric_mode="custom",
        deep_judgment_rubric_config={"global": {"Grounded": {}}},
    )  # fmt: skip

    rubric = result.rubric
    assert rubric is not None
    assert rubric.llm_trait_scores == {"Plain": True, "Grounded": True}
    assert rubric.regex_trait_scores == {"MentionsSeine": True}
    assert rubric.callable_trait_scores == {"Short": True}
    section = result.deep_judgment_rubric
    assert section is not None
    assert section.deep_judgment_rubric_scores == {"Grounded": True}
    assert section.standard_rubric_scores == {"Plain": True}


def test_a_failing_call_is_a_trait_error_and_never_an_excerpt_failure() -> None:
    """Karenina bug 7: an exception lists the trait under traits_without_valid_excerpts,
    turning an infrastructure error into a content auto-fail."""
    fake = judge()
    fake.on("rubric_evaluation", reply=LLMCallError("rubric_evaluation", "server down"))

    result = run([GROUNDED], fake)

    assert result.verify_result is True and result.metadata.failure is None
    rubric = result.rubric
    assert rubric is not None and rubric.trait_errors == {"Grounded": "deep judgment: server down"}
    section = result.deep_judgment_rubric
    assert section is not None and section.traits_without_valid_excerpts == []
    assert (section.trait_metadata or {})["Grounded"] == {
        "stages_completed": [], "model_calls": 0, "had_excerpts": True,
        "excerpt_retry_count": 0, "excerpt_validation_failed": False,
        "error": "deep judgment: server down",
    }  # fmt: skip


def test_a_strict_replay_miss_errors_the_item() -> None:
    miss = ReplayMiss("rubric_evaluation", "q", "0" * 64, Path("calls.jsonl"))
    fake = judge().fail("rubric_evaluation", miss)
    result = run([GROUNDED], fake)
    assert result.metadata.error is not None and "strict replay" in result.metadata.error
    assert result.rubric is None


@pytest.mark.parametrize(
    ("reply", "expected"), [({"score": 0}, 0), ("0 of 3", 0), ({"score": 7}, 3)]
)
def test_a_zero_based_score_keeps_its_zero(reply: Any, expected: int) -> None:
    """Karenina bug 4: ``min_score or 1`` turns a declared minimum of 0 into 1."""
    fake = judge()
    tag = '<trait name="Depth">'
    fake.on("rubric_evaluation", reply=quotes("river Seine"), contains=[EXCERPTS, tag])
    fake.on("rubric_evaluation", reply="Conclusion.", contains=[REASONING, tag])
    text = reply if isinstance(reply, str) else json.dumps(reply)
    fake.on("rubric_evaluation", reply=text, contains=[VERDICT, tag])

    result = run([DEPTH], fake)

    assert result.rubric is not None and result.rubric.llm_trait_scores == {"Depth": expected}


def test_unset_trait_settings_take_the_rubric_defaults_not_the_template_ones() -> None:
    """Karenina bug 8: a trait without its own settings gets the template's (3 excerpts)."""
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})

    run([GROUNDED], fake, deep_judgment_max_excerpts_per_attribute=3)

    first = fake.calls("rubric_evaluation")[0]
    assert "up to 7 passages" in first.messages[0].content


def test_a_near_verbatim_quote_passes_the_one_threshold() -> None:
    """Karenina bug 9: its rubric path needs a hard-coded block match *and* the threshold, so
    a quote differing by a hyphen (``BCL-2`` for ``BCL2``) is rejected."""
    answer = "BCL2 is an anti-apoptotic proto-oncogene that blocks cell death."
    fake = FakeLLM().answer(answer).parse_as({"capital": "Paris"})
    script(fake, "Grounded", ["BCL-2 is an anti-apoptotic proto-oncogene"], {"result": True})

    result = run([GROUNDED], fake)

    section = result.deep_judgment_rubric
    assert section is not None and section.traits_without_valid_excerpts == []
    (quote,) = (section.extracted_rubric_excerpts or {})["Grounded"]
    assert 0.9 <= quote["similarity_score"] < 1.0


def test_a_literal_trait_asking_for_deep_judgment_is_graded_plainly_with_a_warning() -> None:
    tone = LLMRubricTrait(
        name="Tone", description="Register", kind="literal",
        classes={"formal": "Formal", "casual": "Casual"}, deep_judgment_enabled=True,
    )  # fmt: skip
    fake = judge().on_json(
        "rubric_evaluation", {"classifications": [{"trait_name": "Tone", "class_name": "formal"}]}
    )

    result = run([tone], fake, deep_judgment_rubric_mode="disabled")

    assert result.rubric is not None and result.rubric.llm_trait_labels == {"Tone": "formal"}
    assert any("literal trait was graded with a plain judge call" in w
               for w in result.metadata.warnings)  # fmt: skip
    section = result.deep_judgment_rubric
    assert section is not None and not section.deep_judgment_rubric_performed


def test_disabled_mode_honours_the_traits_own_flag_and_otherwise_has_no_section() -> None:
    own = GROUNDED.model_copy(update={"deep_judgment_enabled": True})
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    result = run([own], fake, deep_judgment_rubric_mode="disabled")
    section = result.deep_judgment_rubric
    assert section is not None and section.deep_judgment_rubric_scores == {"Grounded": True}

    fake = judge().on_json("rubric_evaluation", {"scores": {"Grounded": True}})
    plain = run([GROUNDED], fake, deep_judgment_rubric_mode="disabled")
    assert plain.deep_judgment_rubric is None


def test_the_section_survives_an_export_round_trip() -> None:
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    result = run([GROUNDED], fake)
    exported = json.loads(result.model_dump_json())
    again = VerificationResult.model_validate(exported)
    assert again.deep_judgment_rubric == result.deep_judgment_rubric
    assert exported["deep_judgment_rubric"]["trait_metadata"]["Grounded"]["model_calls"] == 3


def test_use_checkpoint_reads_each_traits_stored_settings(tmp_path: Path) -> None:
    """Per-trait settings stored in a checkpoint (``additionalProperty`` of the rating) decide
    which traits are deep-judged and how; unset ones take the rubric defaults."""
    document = json.loads((DATA / "with_rubrics.jsonld").read_text())
    stored = {"deep_judgment_enabled": True, "deep_judgment_excerpt_enabled": True,
              "deep_judgment_max_excerpts": 2}  # fmt: skip
    for rating in document["rating"]:
        if rating["name"] == "Accuracy":
            rating["additionalProperty"] = [
                p for p in rating["additionalProperty"] if p["name"] not in stored
            ] + [{"@type": "PropertyValue", "name": k, "value": v} for k, v in stored.items()]
    path = tmp_path / "stored.jsonld"
    path.write_text(json.dumps(document))
    rubric = load_checkpoint(path).global_rubric
    assert rubric is not None
    llm = [t for t in rubric.traits() if isinstance(t, LLMRubricTrait)]
    fake = script(judge(), "Accuracy", ["capital of France is Paris"], {"result": True})
    fake.on_json("rubric_evaluation", {"scores": {"Clarity": 4, "Completeness": 3}},
                 contains="Clarity")  # fmt: skip

    result = run(llm, fake, deep_judgment_rubric_mode="use_checkpoint")

    section = result.deep_judgment_rubric
    assert section is not None and section.deep_judgment_rubric_scores == {"Accuracy": True}
    assert section.standard_rubric_scores == {"Clarity": 4, "Completeness": 3}
    excerpt_request = next(r for r in fake.calls("rubric_evaluation")
                           if EXCERPTS in r.messages[0].content)  # fmt: skip
    assert "up to 2 passages" in excerpt_request.messages[0].content


def test_an_unusable_search_tool_errors_the_item_naming_the_rubric_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    fake = script(judge(), "Grounded", ["capital of France is Paris"], {"result": True})
    custom = {"global": {"Grounded": {"search_enabled": True}}}

    result = run(
        [GROUNDED], fake, deep_judgment_rubric_mode="custom", deep_judgment_rubric_config=custom
    )

    error = result.metadata.error or ""
    assert "deep_judgment_rubric_search_tool='tavily' needs" in error
