"""The value sets of configuration choices, as ``Literal`` types.

One source for each set: the config models type their fields with these, and the pytest
plugin's options take their ``choices`` from them. Imports only :mod:`typing`, because the
plugin declares its options in every pytest run of an environment.
"""

from __future__ import annotations

from typing import Literal

EvaluationMode = Literal["template_only", "template_and_rubric", "rubric_only"]
"""What decides a result: the answer template, the template and rubrics, or rubrics only."""

DeepJudgmentMode = Literal["disabled", "reasoning_only", "full"]
"""Template deep judgment: off, reasoning from the response, or quoted evidence first."""

DeepJudgmentRubricMode = Literal["disabled", "enable_all", "use_checkpoint", "custom"]
"""Which LLM rubric traits are deep-judged (``disabled``: those that ask for it themselves)."""

FlakyMode = Literal["policy", "pass", "fail"]
"""What an item whose replicates disagree counts as (``--karenina-flaky``)."""

GateOn = Literal["point", "lower"]
"""What the pass-rate gate compares with its threshold: the rate, or its interval's lower bound."""

RubricStrategy = Literal["batch", "sequential"]
"""LLM rubric traits in one judge call, or one call per trait."""

ReplayMode = Literal["off", "record", "replay", "strict"]
"""Record/replay of LLM calls: strict replays only and never opens a connection."""

RunReplayMode = Literal["off", "record", "replay", "strict", "answers"]
"""``--karenina-replay``: a :data:`ReplayMode` for every call, or ``answers``: answering
calls strictly from the store, judge calls live (or through a judge store of their own)."""

SupportedInterface = Literal[
    "langchain",
    "openai_endpoint",
    "openrouter",
    "claude_tool",
    "manual",
    "langchain_deep_agents",
    "claude_agent_sdk",
]
"""The model interfaces pytest-karenina runs (Karenina names more; see ``ModelConfig``)."""
