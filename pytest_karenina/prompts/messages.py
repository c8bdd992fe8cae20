"""Helpers shared by the prompt builders: message assembly and extra instructions.

Every judge call is ``[system, user]``. PromptConfig-style extra instructions
(spec 4.7) are appended to the system text after a blank line; the text used
for a task id is the PromptConfig field of that name, falling back to the
field of its family (``rubric_*``, ``agentic_parsing_*``, ``dj_*``).
"""

from __future__ import annotations

from pytest_karenina.llm.ports import ChatMessage

SEPARATOR = "\n\n"
"""What joins the parts of one message (task text, additions, instructions)."""

TASK_FAMILIES = (
    ("rubric_", "rubric_evaluation"),
    ("agentic_parsing_", "agentic_parsing"),
    ("dj_", "deep_judgment"),
)
"""Task-id prefixes and the PromptConfig field that serves a whole family."""


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def append_instructions(system: str, instructions: str | None) -> str:
    """``system`` followed by a blank line and ``instructions``.

    ``None``, empty or whitespace-only instructions leave ``system`` unchanged;
    when ``system`` is empty the instructions stand alone.
    """
    extra = _text(instructions)
    if extra is None:
        return system
    return f"{system}{SEPARATOR}{extra}" if system else extra


def system_and_user(system: str, user: str, instructions: str | None = None) -> list[ChatMessage]:
    """The two messages of a judge call, with ``instructions`` appended to the system."""
    return [
        ChatMessage(role="system", content=append_instructions(system, instructions)),
        ChatMessage(role="user", content=user),
    ]


def instructions_for(prompt_config: object | None, task_id: str) -> str | None:
    """The extra instructions a PromptConfig gives for ``task_id`` (spec 4.7).

    ``prompt_config`` is any object with PromptConfig's string attributes (or
    ``None``). The attribute named exactly ``task_id`` wins; otherwise the
    family field applies to ``rubric_*``, ``agentic_parsing_*`` and ``dj_*``
    tasks. Blank values count as unset.
    """
    if prompt_config is None:
        return None
    exact = _text(getattr(prompt_config, task_id, None))
    if exact is not None:
        return exact
    for prefix, family in TASK_FAMILIES:
        if task_id.startswith(prefix):
            return _text(getattr(prompt_config, family, None))
    return None
