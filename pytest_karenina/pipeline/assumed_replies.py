"""The assumed replies of an estimate, for the pipeline's calls (``llm/assumed.py``).

An assumed answer takes the path of an ordinary answer: the abstention check finds no
abstention and the sufficiency check finds the response sufficient, so every later call of the
pipeline (template parsing, rubric traits, ...) is made and counted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.llm.assumed import DEFAULT_ANSWER_TOKENS, AssumedReplies, AssumedTally
from pytest_karenina.llm.ports import RawModel
from pytest_karenina.pipeline.llm_stack import MissModel
from pytest_karenina.pipeline.replay_sides import Side

ORDINARY_ANSWER: Mapping[str, Mapping[str, Any]] = {
    "abstention_check": {"abstention_detected": False},
    "sufficiency_check": {"sufficient": True},
}
"""What the checks' assumed replies say, by call kind: the answer neither abstains nor falls
short."""


def assumed_misses(
    tally: AssumedTally,
    answer_tokens: int = DEFAULT_ANSWER_TOKENS,
    sides: Collection[Side] = ("answering", "judge"),
) -> MissModel:
    """The ``miss_model`` of an :class:`~.llm_stack.LLMStack` whose strict stores' misses on
    ``sides`` get assumed replies, tallied in ``tally``."""

    def build(model: ModelConfig, side: Side) -> RawModel | None:
        if side not in sides:
            return None
        answering = side == "answering"
        return AssumedReplies(model, answering, tally, answer_tokens, ORDINARY_ANSWER)

    return build
