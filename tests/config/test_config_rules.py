"""The validation rules of spec 4.3 and the ConfigError for features not built yet."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from pytest_karenina.config.rules import rule_violations
from pytest_karenina.config.sections import UnsupportedFeature
from pytest_karenina.config.verification import ConfigError, VerificationConfig
from tests.config.helpers import config, model

DEEP_AGENT_JUDGE = model(id="judge", interface="langchain_deep_agents")


def rule_error(**overrides: Any) -> str:
    """The message of the ValueError-based ValidationError ``config(**overrides)`` raises."""
    with pytest.raises(ValidationError) as caught:
        config(**overrides)
    assert isinstance(caught.value, ValueError)
    return str(caught.value)


class TestRules:
    def test_at_least_one_parsing_model(self) -> None:
        assert "at least one parsing (judge) model" in rule_error(parsing_models=[])

    def test_at_least_one_answering_model(self) -> None:
        assert "at least one answering model" in rule_error(answering_models=[])

    def test_no_answering_model_needed_for_parsing_only(self) -> None:
        # parsing_only passes the rules, then stops at "not supported" instead.
        with pytest.raises(ConfigError, match="parsing_only=True"):
            config(answering_models=[], parsing_only=True)

    def test_every_model_has_a_model_name(self) -> None:
        message = rule_error(parsing_models=[model(model_name="")])
        assert "parsing_models[0].model_name is required" in message

    @pytest.mark.parametrize("interface", ["langchain", "langchain_deep_agents"])
    def test_provider_interfaces_need_a_provider(self, interface: str) -> None:
        message = rule_error(answering_models=[model(model_provider=None, interface=interface)])
        assert f"answering_models[0].model_provider is required for interface {interface!r}" in (
            message
        )

    def test_openai_endpoint_needs_no_provider_but_a_url(self) -> None:
        endpoint = model(model_provider=None, interface="openai_endpoint")
        assert "endpoint_base_url is required" in rule_error(answering_models=[endpoint])
        endpoint["endpoint_base_url"] = "http://localhost:8000/v1"
        assert config(answering_models=[endpoint]).answering_models[0].model_provider is None

    def test_a_deep_agent_endpoint_needs_its_key(self) -> None:
        judge = {**DEEP_AGENT_JUDGE, "endpoint_base_url": "http://localhost:8000/v1"}
        message = rule_error(parsing_models=[judge])
        assert "parsing_models[0].endpoint_api_key is required with endpoint_base_url" in message
        judge["endpoint_api_key"] = "local-key"
        assert config(parsing_models=[judge]).parsing_models[0].endpoint_api_key is not None

    def test_manual_needs_no_provider(self) -> None:
        built = config(answering_models=[{"interface": "manual"}])
        assert built.answering_models[0].id == "manual"

    def test_answering_models_need_a_system_prompt(self) -> None:
        # Validation always supplies the default first, so only a copy that
        # skipped validation can break this rule.
        built = config()
        stripped = built.answering_models[0].model_copy(update={"system_prompt": None})
        broken = built.model_copy(update={"answering_models": [stripped]})
        assert rule_violations(broken) == [
            "answering_models[0].system_prompt is required for an answering model"
        ]

    def test_few_shot_k_at_least_one(self) -> None:
        message = rule_error(few_shot_config={"pool_mode": "k-shot", "pool_k": 0})
        assert "few_shot_config.pool_k must be at least 1" in message
        per_question = {"question_configs": {"q1": {"mode": "k-shot", "k": 0}}}
        assert "question_configs['q1'].k must be at least 1" in rule_error(
            few_shot_config=per_question
        )

    def test_few_shot_k_not_checked_when_disabled(self) -> None:
        off = {"source": "disabled", "pool_mode": "k-shot", "pool_k": 0}
        assert config(few_shot_config=off).few_shot_config is not None

    def test_reasoning_only_with_search_is_invalid(self) -> None:
        message = rule_error(deep_judgment_mode="reasoning_only", deep_judgment_search_enabled=True)
        assert "deep_judgment_mode='reasoning_only'" in message

    def test_any_search_tool_name_is_accepted(self) -> None:
        """Names other than tavily come from a conftest's pytest_karenina_search_tool."""
        built = config(deep_judgment_search_enabled=True, deep_judgment_search_tool="our-index")
        assert built.deep_judgment_search_tool == "our-index"
        assert config(deep_judgment_search_enabled=True, deep_judgment_search_tool=len)

    def test_dynamic_trigger_needs_agentic_parsing(self) -> None:
        message = rule_error(agentic_parsing_trigger="dynamic")
        assert "agentic_parsing_trigger='dynamic' needs agentic_parsing=True" in message

    def test_agentic_parsing_needs_a_deep_agent_judge(self) -> None:
        message = rule_error(agentic_parsing=True)
        assert "parsing_models[0].interface is 'langchain'" in message

    def test_agentic_parsing_not_with_rubric_only(self) -> None:
        message = rule_error(
            agentic_parsing=True, parsing_models=[DEEP_AGENT_JUDGE], evaluation_mode="rubric_only"
        )
        assert "evaluation_mode='rubric_only'" in message

    def test_materialized_trace_needs_a_trace_context(self) -> None:
        message = rule_error(
            agentic_parsing=True,
            parsing_models=[DEEP_AGENT_JUDGE],
            agentic_parsing_materialize_trace=True,
        )
        assert "agentic_judge_context='workspace_only'" in message

    def test_saving_workspaces_needs_a_directory(self) -> None:
        message = rule_error(workspace_output_mode="produced")
        assert "workspace_output_mode='produced' needs workspace_output_dir" in message
        built = config(workspace_output_mode="full", workspace_output_dir="saved",
                       workspace_output_exclude_patterns=["*.log"])  # fmt: skip
        assert (built.workspace_output_mode, built.workspace_output_exclude_patterns) == (
            "full", ["*.log"],
        )  # fmt: skip

    def test_custom_rubric_deep_judgment_needs_its_config(self) -> None:
        message = rule_error(deep_judgment_rubric_mode="custom")
        assert "needs deep_judgment_rubric_config" in message

    def test_all_broken_rules_are_reported_together(self) -> None:
        message = rule_error(answering_models=[], agentic_parsing_trigger="dynamic")
        assert "answering_models" in message
        assert "agentic_parsing_trigger" in message


UNSUPPORTED = [
    ({"parsing_only": True}, "parsing_only=True: parsing-only (TaskEval) runs"),
    (
        {
            "parsing_models": [
                model(
                    id="judge",
                    interface="claude_agent_sdk",
                    mcp_tool_description_overrides={"add": "Adds."},
                )
            ]
        },
        "parsing_models[0].mcp_tool_description_overrides='<set>': MCP tool descriptions of a "
        "claude_agent_sdk model",
    ),
    ({"db_config": {"storage_url": "sqlite:///x.db"}}, "db_config='<set>'"),
]


class TestUnsupportedFeatures:
    @pytest.mark.parametrize(("settings", "message"), UNSUPPORTED)
    def test_a_clear_config_error(self, settings: dict[str, Any], message: str) -> None:
        with pytest.raises(ConfigError) as caught:
            config(**settings)
        assert message in str(caught.value)
        assert "is not supported yet by pytest-karenina" in str(caught.value)
        assert isinstance(caught.value, ValueError)
        assert all(isinstance(item, UnsupportedFeature) for item in caught.value.problems)

    @pytest.mark.parametrize(("settings", "message"), UNSUPPORTED)
    def test_every_validation_path_raises_it(self, settings: dict[str, Any], message: str) -> None:
        data = {"answering_models": [model()], "parsing_models": [model(id="judge")], **settings}
        with pytest.raises(ConfigError, match="not supported yet"):
            VerificationConfig.model_validate(data)

    def test_json_path(self) -> None:
        text = '{"parsing_models": [{"id": "j", "model_name": "m", "model_provider": "p"}],'
        text += ' "answering_models": [{"interface": "manual"}],'
        text += ' "parsing_only": true}'
        with pytest.raises(ConfigError, match="parsing_only=True"):
            VerificationConfig.model_validate_json(text)

    def test_agentic_parsing_with_a_deep_agent_judge_is_supported(self) -> None:
        built = config(agentic_parsing=True, parsing_models=[DEEP_AGENT_JUDGE])
        built.check_supported()
        assert built.agentic_parsing

    def test_nested_in_another_model_it_is_a_validation_error(self) -> None:
        class Holder(BaseModel):
            config: VerificationConfig

        with pytest.raises(ValidationError, match="parsing_only=True"):
            Holder.model_validate(
                {
                    "config": {
                        "answering_models": [model()],
                        "parsing_models": [model()],
                        "parsing_only": True,
                    }
                }
            )

    def test_check_supported_after_model_copy(self) -> None:
        copied = config().model_copy(update={"parsing_only": True})
        with pytest.raises(ConfigError, match="parsing-only"):
            copied.check_supported()

    @pytest.mark.parametrize("mode", ["enable_all", "use_checkpoint", "custom"])
    def test_rubric_deep_judgment_is_supported(self, mode: str) -> None:
        built = config(
            deep_judgment_rubric_mode=mode,
            deep_judgment_rubric_config={"global": {"Clarity": {}}},
        )
        built.check_supported()
        assert built.deep_judgment_rubric_mode == mode

    def test_agents_are_supported(self) -> None:
        built = config(
            answering_models=[model(mcp_urls_dict={"web": "http://w"})],
            parsing_models=[DEEP_AGENT_JUDGE],
        )
        built.check_supported()
        assert built.answering_models[0].mcp_urls_dict == {"web": "http://w"}

    def test_accepted_settings_of_unbuilt_features_when_off(self) -> None:
        built = config(
            deep_judgment_max_excerpts_per_attribute=5,
            deep_judgment_rubric_config={"global": {"Clarity": {"max_excerpts": 2}}},
            agentic_judge_context="trace_only",
            scenario_turn_limit=5,
            few_shot_config={"source": "global", "global_examples": [{"question": "q"}]},
            answering_models=[model(agent_middleware={"limits": {"model_call_limit": 3}})],
        )
        built.check_supported()
        assert built.deep_judgment_rubric_config is not None
        assert built.deep_judgment_rubric_config.global_traits["Clarity"].max_excerpts == 2


class TestDeepJudgmentEnabled:
    """Seed 000's ``deep_judgment_enabled`` flag is read as ``deep_judgment_mode``."""

    def test_true_means_full_and_false_disabled(self) -> None:
        assert config(deep_judgment_enabled=True).deep_judgment_mode == "full"
        assert config(deep_judgment_enabled=False).deep_judgment_mode == "disabled"
        assert (
            config(deep_judgment_enabled=True, deep_judgment_mode="reasoning_only")
        ).deep_judgment_mode == "reasoning_only"

    def test_a_contradicting_mode_is_an_error(self) -> None:
        message = rule_error(deep_judgment_enabled=False, deep_judgment_mode="full")
        assert "deep_judgment_enabled=False contradicts deep_judgment_mode='full'" in message


def test_a_search_function_dumps_as_its_name() -> None:
    """A callable search tool has no JSON form; exports get its name, Python keeps it."""

    def our_search(queries: list[str]) -> list[list[dict[str, str]]]:
        return [[] for _ in queries]

    built = config(deep_judgment_mode="full", deep_judgment_search_tool=our_search)
    dumped = built.model_dump(mode="json")
    assert dumped["deep_judgment_search_tool"].startswith("<callable ")
    assert dumped["deep_judgment_search_tool"].endswith("our_search>")
    assert built.model_dump()["deep_judgment_search_tool"] is our_search
