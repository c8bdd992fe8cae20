"""VerificationConfig: Karenina's 60 fields and defaults (4.1), constructor side effects (4.2)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from pytest_karenina.config.model import ModelConfig, RetryPolicy
from pytest_karenina.config.sections import DEFAULT_ANSWERING_SYSTEM_PROMPT, PromptConfig
from pytest_karenina.config.verification import VerificationConfig
from tests.config.helpers import config, model

DEFAULTS: dict[str, Any] = {
    "answering_models": "<given>",
    "parsing_models": "<given>",
    "replicate_count": 1,
    "parsing_only": False,
    "rubric_trait_names": None,
    "rubric_evaluation_strategy": "batch",
    "evaluation_mode": "template_only",
    "use_full_trace_for_template": False,
    "use_full_trace_for_rubric": True,
    "allow_partial_trace_scoring": True,
    "abstention_enabled": False,
    "sufficiency_enabled": False,
    "include_extraction_hints": True,
    "embedding_check_enabled": False,
    "embedding_check_model": "all-MiniLM-L6-v2",
    "embedding_check_threshold": 0.85,
    "async_enabled": True,
    "async_max_workers": 2,
    "max_concurrent_requests": None,
    "batch_timeout_seconds": None,
    "task_ordering": "auto",
    "answerer_concurrency_limits": None,
    "deep_judgment_mode": "disabled",
    "deep_judgment_max_excerpts_per_attribute": 3,
    "deep_judgment_fuzzy_match_threshold": 0.8,
    "deep_judgment_excerpt_retry_attempts": 2,
    "deep_judgment_search_enabled": False,
    "deep_judgment_search_tool": "tavily",
    "deep_judgment_rubric_max_excerpts_default": 7,
    "deep_judgment_rubric_fuzzy_match_threshold_default": 0.8,
    "deep_judgment_rubric_excerpt_retry_attempts_default": 2,
    "deep_judgment_rubric_search_tool": "tavily",
    "deep_judgment_rubric_mode": "disabled",
    "deep_judgment_rubric_global_excerpts": True,
    "deep_judgment_rubric_config": None,
    "few_shot_config": None,
    "prompt_config": None,
    "agentic_parsing": False,
    "agentic_parsing_trigger": "always",
    "agentic_judge_context": "workspace_only",
    "agentic_parsing_max_turns": 15,
    "agentic_parsing_timeout": 120.0,
    "agentic_parsing_materialize_trace": False,
    "agentic_parsing_persist_trace": False,
    "agentic_rubric_strategy": "individual",
    "agentic_rubric_parallel": False,
    "workspace_copy": True,
    "workspace_cleanup": True,
    "workspace_output_mode": "none",
    "workspace_output_dir": None,
    "workspace_output_exclude_patterns": [],
    "db_config": None,
    "request_timeout": 120.0,
    "scenario_turn_limit": 20,
    "replay_store": None,
    "replay_parse_on_hydration_mismatch": "fall_through",
    "skip_triples": None,
    "retry_policy": RetryPolicy(),
    "custom_error_patterns": [],
    "max_requeue_count": 5,
    # pytest-karenina's own fields, after Karenina's:
    "requests_per_minute": None,
    "max_call_seconds": 600.0,
    "template_time_limit": 10.0,
    "judge_replicate_count": 1,
}


def test_sixty_fields_with_the_defaults_of_spec_4_1() -> None:
    assert list(VerificationConfig.model_fields) == list(DEFAULTS)
    built = config()
    for name, default in DEFAULTS.items():
        if default != "<given>":
            assert getattr(built, name) == default, name


def test_parsing_models_are_required() -> None:
    with pytest.raises(ValidationError) as caught:
        VerificationConfig(answering_models=[model()])
    assert caught.value.errors()[0]["loc"] == ("parsing_models",)


@pytest.mark.parametrize(
    ("mode", "enabled"),
    [("template_only", False), ("template_and_rubric", True), ("rubric_only", True)],
)
def test_rubric_enabled_is_computed(mode: str, enabled: bool) -> None:
    built = config(evaluation_mode=mode)
    assert built.rubric_enabled is enabled
    assert built.model_dump()["rubric_enabled"] is enabled


def test_rubric_enabled_in_the_input_is_accepted_when_it_agrees() -> None:
    assert config(evaluation_mode="rubric_only", rubric_enabled=True).rubric_enabled
    assert not config(rubric_enabled=False).rubric_enabled


def test_rubric_enabled_contradicting_the_mode_is_refused() -> None:
    with pytest.raises(ValidationError, match="rubric_enabled=True contradicts"):
        config(rubric_enabled=True)


def test_deep_judgment_rubric_search_enabled_is_dropped() -> None:
    built = config(deep_judgment_rubric_search_enabled=True)
    assert "deep_judgment_rubric_search_enabled" not in built.model_dump()


def test_extra_keys_are_rejected_by_name() -> None:
    with pytest.raises(ValidationError) as caught:
        config(abstention_enabeld=True)
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("abstention_enabeld",), "extra_forbidden")
    ]
    with pytest.raises(ValidationError) as nested:
        config(parsing_models=[model(modle_name="x")])
    assert nested.value.errors()[0]["loc"] == ("parsing_models", 0, "modle_name")


def test_lists_of_models_and_replicates() -> None:
    built = config(
        answering_models=[model(id="a"), model(id="b", model_name="gpt-4.1")],
        parsing_models=[model(id="j1"), model(id="j2")],
        replicate_count=3,
    )
    assert [m.id for m in built.answering_models] == ["a", "b"]
    assert [m.id for m in built.parsing_models] == ["j1", "j2"]
    assert built.replicate_count == 3
    with pytest.raises(ValidationError, match="replicate_count"):
        config(replicate_count=0)


def test_dump_and_reload_round_trip() -> None:
    built = config(
        evaluation_mode="template_and_rubric",
        few_shot_config={"pool_mode": "k-shot", "pool_k": 2},
        custom_error_patterns=[{"pattern": "queue is full", "category": "rate_limit"}],
        scenario_turn_limit=5,
    )
    again = VerificationConfig.model_validate_json(built.model_dump_json())
    assert again == built


class TestSystemPrompts:
    def test_answering_models_without_one_get_the_default(self) -> None:
        built = config(answering_models=[model(), model(id="b", system_prompt="")])
        assert [m.system_prompt for m in built.answering_models] == [
            DEFAULT_ANSWERING_SYSTEM_PROMPT
        ] * 2
        assert DEFAULT_ANSWERING_SYSTEM_PROMPT == (
            "You are an expert assistant. Answer the question accurately and concisely."
        )

    def test_own_prompt_is_kept(self) -> None:
        built = config(answering_models=[model(system_prompt="Be terse.")])
        assert built.answering_models[0].system_prompt == "Be terse."

    def test_model_instances_are_copied_not_changed(self) -> None:
        instance = ModelConfig(id="a", model_provider="openai", model_name="gpt-4o")
        built = config(answering_models=[instance])
        assert built.answering_models[0].system_prompt == DEFAULT_ANSWERING_SYSTEM_PROMPT
        assert instance.system_prompt is None

    def test_parsing_models_get_none(self) -> None:
        assert config().parsing_models[0].system_prompt is None

    def test_input_dict_is_not_changed(self) -> None:
        data: dict[str, Any] = {"answering_models": [model()], "parsing_models": [model()]}
        VerificationConfig.model_validate(data)
        assert "system_prompt" not in data["answering_models"][0]


class TestInstructionShortcuts:
    def test_shortcuts_fill_prompt_config(self) -> None:
        built = config(
            generation_instructions="Answer in one word.",
            parsing_instructions="Numbers without units.",
            deep_judgment_instructions=None,
        )
        assert built.prompt_config == PromptConfig(
            generation="Answer in one word.", parsing="Numbers without units."
        )

    def test_shortcuts_only_fill_empty_slots(self) -> None:
        built = config(
            prompt_config={"parsing": "kept"},
            parsing_instructions="ignored",
            rubric_evaluation_instructions="added",
        )
        assert built.prompt_config is not None
        assert built.prompt_config.parsing == "kept"
        assert built.prompt_config.rubric_evaluation == "added"

    def test_shortcuts_with_a_prompt_config_instance(self) -> None:
        built = config(
            prompt_config=PromptConfig(generation="kept"),
            sufficiency_detection_instructions="added",
            abstention_detection_instructions="added too",
            agentic_parsing_instructions="also",
        )
        assert built.prompt_config == PromptConfig(
            generation="kept",
            sufficiency_detection="added",
            abstention_detection="added too",
            agentic_parsing="also",
        )

    def test_prompt_config_task_lookup(self) -> None:
        prompts = PromptConfig(parsing="p", rubric_evaluation="r", deep_judgment="d")
        assert prompts.get_for_task("parsing") == "p"
        assert prompts.get_for_task("rubric_llm_trait_batch") == "r"
        assert prompts.get_for_task("dj_template_reasoning") == "d"
        assert prompts.get_for_task("agentic_parsing_extraction") is None
        assert prompts.get_for_task("generation") is None
        assert prompts.get_for_task("model_config") is None


class TestStamping:
    def test_models_without_their_own_get_the_run_settings(self) -> None:
        policy = RetryPolicy.model_validate({"timeout": {"max_attempts": 1}})
        own = RetryPolicy.model_validate({"timeout": {"max_attempts": 9}})
        built = config(
            request_timeout=30.0,
            retry_policy=policy,
            answering_models=[model(), model(id="slow", request_timeout=600.0)],
            parsing_models=[model(id="judge", retry_policy=own.model_dump())],
        )
        answering, parsing = built.stamped_models()
        assert [(m.request_timeout, m.retry_policy) for m in answering] == [
            (30.0, policy),
            (600.0, policy),
        ]
        assert (parsing[0].request_timeout, parsing[0].retry_policy) == (30.0, own)

    def test_the_configuration_itself_is_unchanged(self) -> None:
        built = config()
        built.stamped_models()
        assert built.answering_models[0].request_timeout is None
        assert built.answering_models[0].retry_policy is None
        assert built.model_dump(mode="json")["answering_models"][0]["request_timeout"] is None

    def test_stamp_returns_the_same_model_when_nothing_is_missing(self) -> None:
        built = config()
        complete = ModelConfig(
            id="a", model_name="b", request_timeout=5.0, retry_policy=RetryPolicy()
        )
        assert built.stamp(complete) is complete


def test_few_shot_enabled() -> None:
    assert not config().is_few_shot_enabled()
    assert config(few_shot_config={}).is_few_shot_enabled()
    assert not config(few_shot_config={"source": "disabled"}).is_few_shot_enabled()
