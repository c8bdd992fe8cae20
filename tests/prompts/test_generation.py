"""Answer-generation messages and few-shot selection (spec 4.6, 4.7)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts import (
    example_hash,
    few_shot_prompt,
    generation_messages,
    resolve_few_shot,
    select_few_shot,
)
from pytest_karenina.prompts.generation import SEED_MASK

POOL = [{"question": f"q{i}?", "answer": f"a{i}"} for i in range(6)]


def test_bare_question_with_system_prompt() -> None:
    assert generation_messages("Why?", system_prompt="Be brief.") == [
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "Why?"),
    ]


def test_instructions_follow_the_system_prompt_after_a_blank_line() -> None:
    messages = generation_messages("Why?", system_prompt="Be brief.", instructions="Cite.")
    assert messages[0] == ChatMessage("system", "Be brief.\n\nCite.")


@pytest.mark.parametrize(
    ("system_prompt", "instructions", "systems"),
    [(None, None, []), ("", "  ", []), (None, "Cite.", ["Cite."]), ("  ", "Cite.", ["Cite."])],
)
def test_system_message_only_when_there_is_text(
    system_prompt: str | None, instructions: str | None, systems: list[str]
) -> None:
    messages = generation_messages("Why?", system_prompt=system_prompt, instructions=instructions)
    assert [m.content for m in messages if m.role == "system"] == systems
    assert messages[-1] == ChatMessage("user", "Why?")


def test_few_shot_layout_is_exact() -> None:
    examples = [
        {"question": "2+2?", "answer": "4"},
        {"question": "no answer key"},
        {"question": "Capital of France?", "answer": "Paris"},
    ]
    messages = generation_messages("3+3?", system_prompt=None, few_shot_examples=examples)
    assert messages == [
        ChatMessage(
            "user",
            "Question: 2+2?\nAnswer: 4\n\n"
            "Question: Capital of France?\nAnswer: Paris\n\n"
            "Question: 3+3?\nAnswer:",
        )
    ]


def test_few_shot_without_usable_examples() -> None:
    assert few_shot_prompt("Q?", [{"answer": "orphan"}]) == "Question: Q?\nAnswer:"
    assert generation_messages("Q?", system_prompt=None, few_shot_examples=[])[0].content == "Q?"


def test_all_mode_and_global_examples() -> None:
    extra = [{"question": "g?", "answer": "g"}]
    assert select_few_shot("qid", POOL, global_examples=extra) == [*POOL, *extra]
    assert select_few_shot("qid", POOL, source="question_pool", global_examples=extra) == POOL
    assert select_few_shot("qid", POOL, source="global", global_examples=extra) == extra
    assert select_few_shot("qid", POOL, source="disabled", global_examples=extra) == []
    assert select_few_shot("qid", None) == []


def test_k_shot_is_seeded_by_the_question_id() -> None:
    first = select_few_shot("urn:q:1", POOL, mode="k-shot", k=3)
    assert len(first) == 3 and all(example in POOL for example in first)
    assert select_few_shot("urn:q:1", POOL, mode="k-shot", k=3) == first
    assert select_few_shot("qid", POOL[:2], mode="k-shot", k=3) == POOL[:2]
    # the same draw Karenina makes with the seeded global generator
    seed = int(example_hash("urn:q:1"), 16) & SEED_MASK
    state = random.getstate()
    try:
        random.seed(seed)
        assert random.sample(POOL, 3) == first
    finally:
        random.setstate(state)


def test_custom_selection_by_index_and_hash_in_listed_order() -> None:
    chosen = select_few_shot(
        "q", POOL, mode="custom", selected=[4, example_hash("q1?"), 99, "f" * 32]
    )
    assert chosen == [POOL[4], POOL[1]]
    assert select_few_shot("q", POOL, mode="custom") == []


def test_exclusions() -> None:
    # an int is a position in the picked list; a hash removes that example
    assert select_few_shot("q", POOL, excluded=[0, example_hash("q3?")]) == [
        POOL[1],
        POOL[2],
        POOL[4],
        POOL[5],
    ]
    picked = select_few_shot("q", POOL, mode="custom", selected=[5, 2, 3], excluded=[0])
    assert picked == [POOL[2], POOL[3]]
    by_hash = select_few_shot(
        "q", POOL, mode="custom", selected=[5, 2], excluded=[example_hash("q2?")]
    )
    assert by_hash == [POOL[5]]


def test_resolve_few_shot_reads_a_config_object_or_mapping() -> None:
    extra = [{"question": "g?", "answer": "g"}]
    config: Any = SimpleNamespace(
        source="both",
        pool_mode="k-shot",
        pool_k=2,
        question_configs={
            "custom": SimpleNamespace(
                mode="custom", k=None, selected_examples=[3], excluded_examples=[]
            ),
            "inherit": {
                "mode": "inherit",
                "k": 5,
                "selected_examples": None,
                "excluded_examples": [0],
            },
            "own-k": {"mode": "k-shot", "k": None},
        },
        global_examples=extra,
    )
    assert resolve_few_shot("custom", POOL, config) == [POOL[3], *extra]
    inherited = resolve_few_shot("inherit", POOL, config)
    assert len(inherited) == 2  # pool k (2) used, own k ignored; first pick excluded; + global
    assert inherited[-1] == extra[0]
    assert len(resolve_few_shot("own-k", POOL, config)) == 3  # k falls back to pool_k
    assert resolve_few_shot("other", POOL, config)[:2] == select_few_shot(
        "other", POOL, mode="k-shot", k=2
    )
    as_mapping = {"source": "question_pool", "pool_mode": "all", "global_examples": extra}
    assert resolve_few_shot("q", POOL, as_mapping) == POOL
    assert resolve_few_shot("q", POOL, None) == []
