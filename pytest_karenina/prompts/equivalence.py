"""Call 5, semantic equivalence: the embedding check's judge confirmation.

When the embedding similarity of the expected and parsed responses is high
enough, a judge is asked whether the two are equivalent answers to the
question. This call has no task id: neither adapter additions nor PromptConfig
instructions apply. Unlike every other judge call it necessarily shows the
expected (ground-truth) response.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.llm.ports import ChatMessage

EQUIVALENCE_SYSTEM = """\
You compare two structured answers to the same question: an expected answer and \
an answer extracted from a model's response. Decide whether they mean the same \
thing as answers to that question. Differences in wording, formatting, letter \
case, units written out or abbreviated, or ordering do not matter when the \
meaning is the same; a different fact, value or conclusion does.

Reply with exactly one word: YES if they are equivalent, NO if they are not."""

QUESTION_SECTION = "Question:\n{question}"
EQUIVALENCE_USER = """\
Expected response:
{expected}

Model response:
{parsed}

Do these two responses give the same answer? Reply YES or NO."""


def _as_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str)


def equivalence_messages(
    question_text: str | None, expected: Any, parsed: Any
) -> list[ChatMessage]:
    """``[system, user]`` asking whether ``parsed`` is equivalent to ``expected``.

    Both values are shown as sorted-key JSON (values JSON cannot hold are shown
    with ``str``); the question comes first when given and non-blank. Read the
    reply with :func:`is_equivalent`.
    """
    user = EQUIVALENCE_USER.format(expected=_as_json(expected), parsed=_as_json(parsed))
    if question_text and question_text.strip():
        user = f"{QUESTION_SECTION.format(question=question_text)}\n\n{user}"
    return [ChatMessage(role="system", content=EQUIVALENCE_SYSTEM), ChatMessage("user", user)]


def is_equivalent(reply_text: str) -> bool:
    """True iff the stripped, upper-cased reply starts with ``YES``."""
    return reply_text.strip().upper().startswith("YES")
