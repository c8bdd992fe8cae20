"""Call 1, answer generation: the answering model's system prompt and question.

The user message is the bare question text or, with few-shot examples, the
plain-text block of spec 4.6. :func:`resolve_few_shot` picks the examples for
one question from its pool and the global list.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import append_instructions

GENERATION_TASK = "generation"
"""Task id (and PromptConfig field) of this call."""

QUESTION_LINE = "Question: {}"
ANSWER_LINE = "Answer: {}"
FINAL_ANSWER_LINE = "Answer:"

SEED_MASK = 0x7FFFFFFF
"""k-shot sampling seeds ``random`` with ``int(md5(question_id), 16) & SEED_MASK``."""


def few_shot_prompt(question_text: str, examples: Sequence[Mapping[str, str]]) -> str:
    """The few-shot user text: each example with both ``question`` and ``answer``
    as ``Question: q`` / ``Answer: a`` / blank line, then ``Question: <question>``
    and a final ``Answer:`` line, joined with newlines."""
    lines: list[str] = []
    for example in examples:
        if "question" in example and "answer" in example:
            question, answer = example["question"], example["answer"]
            lines += [QUESTION_LINE.format(question), ANSWER_LINE.format(answer), ""]
    lines += [QUESTION_LINE.format(question_text), FINAL_ANSWER_LINE]
    return "\n".join(lines)


def generation_messages(
    question_text: str,
    *,
    system_prompt: str | None,
    few_shot_examples: Sequence[Mapping[str, str]] | None = None,
    instructions: str | None = None,
    history: Sequence[ChatMessage] = (),
) -> list[ChatMessage]:
    """Messages for the answering model.

    System: ``system_prompt`` plus ``instructions`` after a blank line; no
    system message at all when both are blank. User: the bare question, or the
    few-shot block when ``few_shot_examples`` is non-empty. ``history``: a scenario's
    earlier messages, sent between the system message and the question; when it holds a
    system message already, ``system_prompt`` is not repeated (``instructions`` still are).
    """
    repeated = any(message.role == "system" for message in history)
    base = system_prompt if system_prompt and system_prompt.strip() and not repeated else ""
    system = append_instructions(base, instructions)
    user = few_shot_prompt(question_text, few_shot_examples) if few_shot_examples else question_text
    messages = [ChatMessage(role="system", content=system)] if system else []
    messages.extend(history)
    messages.append(ChatMessage(role="user", content=user))
    return messages


def example_hash(question: str) -> str:
    """MD5 hex of an example's question text (how examples are named by hash)."""
    return hashlib.md5(question.encode("utf-8"), usedforsecurity=False).hexdigest()


def _pick(pool: Sequence[dict[str, str]], chosen: Sequence[int | str]) -> list[dict[str, str]]:
    by_hash = {example_hash(str(example.get("question", ""))): i for i, example in enumerate(pool)}
    picked: list[dict[str, str]] = []
    for ref in chosen:
        index = ref if isinstance(ref, int) else by_hash.get(ref, -1)
        if 0 <= index < len(pool):
            picked.append(pool[index])
    return picked


def select_few_shot(
    question_id: str,
    pool: Sequence[dict[str, str]] | None,
    *,
    source: str = "both",
    mode: str = "all",
    k: int = 3,
    selected: Sequence[int | str] | None = None,
    excluded: Sequence[int | str] | None = None,
    global_examples: Sequence[dict[str, str]] | None = None,
) -> list[dict[str, str]]:
    """The examples for one question from already-resolved settings (spec 4.6).

    ``source``: ``disabled`` gives none; ``question_pool``/``both`` use
    ``pool`` with ``mode`` (``all``; ``k-shot``: all if at most ``k``, else a
    sample seeded by the question id; ``custom``: ``selected`` indices or
    question hashes, in that order); ``global``/``both`` append
    ``global_examples``. ``excluded`` removes picked examples: an int is a
    position in the picked list, a hash removes the examples with that question.
    """
    if source == "disabled":
        return []
    picked: list[dict[str, str]] = []
    if source in ("question_pool", "both"):
        examples = list(pool or [])
        if mode == "all":
            picked = examples
        elif mode == "k-shot":
            seed = int(hashlib.md5(question_id.encode(), usedforsecurity=False).hexdigest(), 16)
            rng = random.Random(seed & SEED_MASK)  # same draw as Karenina's seeded global RNG
            picked = examples if len(examples) <= k else rng.sample(examples, max(k, 0))
        elif mode == "custom":
            picked = _pick(examples, selected or [])
        positions = {ref for ref in excluded or [] if isinstance(ref, int)}
        hashes = {ref for ref in excluded or [] if isinstance(ref, str)}
        picked = [
            example
            for i, example in enumerate(picked)
            if i not in positions and example_hash(str(example.get("question", ""))) not in hashes
        ]
    if source in ("global", "both"):
        picked = [*picked, *(global_examples or [])]
    return picked


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def resolve_few_shot(
    question_id: str, pool: Sequence[dict[str, str]] | None, config: Any
) -> list[dict[str, str]]:
    """The few-shot examples for ``question_id`` under a FewShotConfig.

    ``config`` is a FewShotConfig or anything with its attributes/keys
    (``source``, ``pool_mode``, ``pool_k``, ``question_configs``,
    ``global_examples``); ``None`` means few-shot is off. A question config with
    mode ``inherit`` (the default) takes the pool mode and k but keeps its own
    selections and exclusions; otherwise its ``k`` falls back to ``pool_k``.
    """
    if config is None:
        return []
    pool_k = int(_get(config, "pool_k", 3))
    own = (_get(config, "question_configs") or {}).get(question_id)
    mode = _get(own, "mode", "inherit") if own is not None else "inherit"
    own_k = _get(own, "k") if own is not None else None
    if mode == "inherit":
        mode, k = _get(config, "pool_mode", "all"), pool_k
    else:
        k = int(own_k) if own_k is not None else pool_k
    return select_few_shot(
        question_id,
        pool,
        source=str(_get(config, "source", "both")),
        mode=str(mode),
        k=k,
        selected=_get(own, "selected_examples") if own is not None else None,
        excluded=_get(own, "excluded_examples") if own is not None else None,
        global_examples=_get(config, "global_examples"),
    )
