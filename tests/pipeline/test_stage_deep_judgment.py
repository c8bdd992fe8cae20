"""Template deep judgment through the pipeline: ParseTemplate's deep path, stage 10
(DeepJudgmentAutoFail) and the ``deep_judgment`` result section (seed 000 sections 7 and 10,
seed 001)."""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.pipeline.stage_list import default_stages
from tests.pipeline.pipeline_helpers import ANSWER, CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, question, run_one

PARIS = {"capital": "Paris"}
QUOTED = {"capital": [{"text": "capital of France is Paris", "confidence": "high"}]}
INVENTED = {"capital": [{"text": "Paris has been the capital since 987", "confidence": "high"}]}
REASONED = {"capital": "The response names Paris as the capital."}


def _judge(*excerpt_replies: dict[str, Any]) -> FakeLLM:
    fake = FakeLLM().answer(ANSWER)
    for reply in excerpt_replies:
        fake.on("deep_judgment_excerpts", reply=json.dumps(reply), times=1)
    return fake.on("deep_judgment_reasoning", reply=json.dumps(REASONED)).parse_as(PARIS)


def test_grounded_attributes_pass_and_the_section_records_every_step() -> None:
    config = fake_config(deep_judgment_mode="full")
    fake = _judge(QUOTED)

    result = run_one(question(CLASSIC), config, fake)

    assert result.verify_result is True and result.metadata.failure is None
    section = result.deep_judgment
    assert section is not None and section.deep_judgment_performed
    assert section.deep_judgment_mode == "full" and section.deep_judgment_enabled
    assert section.deep_judgment_stages_completed == ["excerpts", "reasoning", "parameters"]
    assert section.deep_judgment_model_calls == 3
    assert section.attributes_without_excerpts == []
    assert section.attribute_reasoning == REASONED
    usage = (result.template.usage_metadata or {}) if result.template else {}
    assert {"deep_judgment_excerpts", "deep_judgment_reasoning", "parsing"} <= set(usage)


def test_an_attribute_without_a_quote_fails_the_answer_at_stage_10() -> None:
    config = fake_config(deep_judgment_mode="full", deep_judgment_excerpt_retry_attempts=1)
    fake = _judge(INVENTED, INVENTED)

    result = run_one(question(CLASSIC), config, fake)

    assert fake.count("deep_judgment_excerpts") == 2  # one retry
    assert result.verify_result is False
    failure = result.metadata.failure
    assert failure is not None and (failure.category, failure.stage) == (
        "deep_judgment",
        "DeepJudgmentAutoFail",
    )
    section = result.deep_judgment
    assert section is not None and section.attributes_without_excerpts == ["capital"]
    assert section.deep_judgment_excerpt_retry_count == 1
    (warning,) = [w for w in result.metadata.warnings if w.startswith("deep judgment:")]
    assert warning.startswith(
        'deep judgment: no verbatim quote for capital; rejected "Paris has been the capital'
        ' since 987" (similarity 0.'
    ) and warning.endswith(" < 0.80)")


def test_reasoning_only_never_auto_fails() -> None:
    config = fake_config(deep_judgment_mode="reasoning_only")
    fake = FakeLLM().answer(ANSWER)
    fake.on("deep_judgment_reasoning", reply=json.dumps(REASONED)).parse_as(PARIS)
    result = run_one(question(CLASSIC), config, fake)
    assert result.verify_result is True
    assert fake.count("deep_judgment_excerpts") == 0
    section = result.deep_judgment
    assert section is not None and section.deep_judgment_stages_completed == [
        "reasoning",
        "parameters",
    ]


def test_abstention_skips_deep_judgment_and_the_section_says_not_performed() -> None:
    config = fake_config(deep_judgment_mode="full", abstention_enabled=True)
    fake = FakeLLM().answer("I cannot answer that.").abstention(True)
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count("deep_judgment_excerpts") == 0
    failure = result.metadata.failure
    assert failure is not None and failure.stage != "DeepJudgmentAutoFail"
    section = result.deep_judgment
    assert section is not None and section.deep_judgment_performed is False


def test_stage_10_follows_the_embedding_check_only_with_deep_judgment_on() -> None:
    names = [stage.name for stage in default_stages(fake_config(deep_judgment_mode="full"))]
    assert names[names.index("EmbeddingCheck") + 1] == "DeepJudgmentAutoFail"
    assert "DeepJudgmentAutoFail" not in [stage.name for stage in default_stages(fake_config())]
    assert (
        run_one(
            question(CLASSIC), fake_config(), FakeLLM().answer(ANSWER).parse_as(PARIS)
        ).deep_judgment
        is None
    )


def test_the_section_survives_an_export_round_trip() -> None:
    from pytest_karenina.results import VerificationResult

    result = run_one(question(CLASSIC), fake_config(deep_judgment_mode="full"), _judge(QUOTED))
    exported = result.export_dict()
    assert "deep_judgment_enabled" not in exported["deep_judgment"]  # seed-only, rebuilt on load
    loaded = VerificationResult.model_validate(exported)
    assert loaded.deep_judgment == result.deep_judgment


def test_an_insufficient_answer_skips_deep_judgment() -> None:
    config = fake_config(deep_judgment_mode="full", sufficiency_enabled=True)
    fake = FakeLLM().answer(ANSWER).sufficiency(False, "No city is named.")
    result = run_one(question(CLASSIC), config, fake)
    assert fake.count("deep_judgment_excerpts") == 0
    failure = result.metadata.failure
    assert failure is not None and failure.category == "sufficiency"
    assert result.deep_judgment is not None and not result.deep_judgment.deep_judgment_performed


def test_rubric_only_has_no_template_deep_judgment() -> None:
    from pytest_karenina.rubrics.traits import RegexTrait, Rubric

    config = fake_config(deep_judgment_mode="full", evaluation_mode="rubric_only")
    item = question(CLASSIC).model_copy(
        update={"rubric": Rubric.from_traits([RegexTrait(name="Paris", pattern="Paris")])}
    )
    fake = FakeLLM().answer(ANSWER)
    result = run_one(item, config, fake)
    assert fake.count("deep_judgment_excerpts") == fake.count("parsing") == 0
    assert result.deep_judgment is None
    assert "DeepJudgmentAutoFail" not in [s.name for s in default_stages(config, rubric=True)]


def test_template_and_rubric_runs_both() -> None:
    from pytest_karenina.rubrics.traits import RegexTrait, Rubric

    config = fake_config(deep_judgment_mode="full", evaluation_mode="template_and_rubric")
    item = question(CLASSIC).model_copy(
        update={"rubric": Rubric.from_traits([RegexTrait(name="Paris", pattern="Paris")])}
    )
    result = run_one(item, config, _judge(QUOTED))
    assert result.verify_result is True
    assert result.deep_judgment is not None and result.deep_judgment.deep_judgment_performed
    assert result.rubric is not None and result.rubric.regex_trait_scores == {"Paris": True}


def test_a_failed_deep_parse_counts_the_calls_it_made() -> None:
    """Three excerpt replies that are not JSON end the parse; the section said 0 calls."""
    config = fake_config(deep_judgment_mode="full")
    fake = FakeLLM().answer(ANSWER).malformed("deep_judgment_excerpts")

    result = run_one(question(CLASSIC), config, fake)

    assert result.metadata.error is not None and "not a JSON object" in result.metadata.error
    section = result.deep_judgment
    assert section is not None and section.deep_judgment_performed is False
    assert section.deep_judgment_model_calls == fake.count("deep_judgment_excerpts") == 3
    assert section.deep_judgment_stages_completed == []
    usage = (result.template.usage_metadata or {}) if result.template else {}
    assert usage["deep_judgment_excerpts"]["input_tokens"] == 3 * 11


def test_a_failed_final_parse_keeps_the_stages_done_before_it() -> None:
    config = fake_config(deep_judgment_mode="full")
    fake = FakeLLM().answer(ANSWER)
    fake.on("deep_judgment_excerpts", reply=json.dumps(QUOTED))
    fake.on("deep_judgment_reasoning", reply=json.dumps(REASONED)).malformed("parsing")

    result = run_one(question(CLASSIC), config, fake)

    section = result.deep_judgment
    assert result.metadata.error is not None and section is not None
    assert section.deep_judgment_performed is False
    assert section.deep_judgment_stages_completed == ["excerpts", "reasoning"]
    assert section.deep_judgment_model_calls == 2  # a parse that fails for good reports no calls
    assert section.attribute_reasoning == REASONED
