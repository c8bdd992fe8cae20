"""``template.agent_metrics``: what an agent did, counted from its ``trace_messages``.

``iterations`` counts model turns (assistant messages), ``tool_calls`` the calls made (the
larger of calls requested and results returned, so a trace cut between the two still
counts), ``tools_used`` the distinct tool names, ``tool_call_counts`` the calls per tool.
``refused_tool_calls`` counts the calls the tool call limit refused (the runtime's refusal,
``Tool call limit exceeded. ...``, was their result): they were never made, so they are in
none of the other counts.
A tool call failed when its result says ``is_error``; a result whose text *starts* with a
tool runtime's own failure wording (``Error executing tool ...``) counts as well, since some
runtimes return failures as plain text. Answers that merely mention an error, a 500 or
"not found" are not failures (Karenina counts any of those words).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

_FAILURE_OPENINGS = re.compile(
    r"^\s*(\[ERROR\]|Error executing tool\b|Error calling tool\b|Tool '[^']*' failed\b"
    r"|ToolException\b|Error: tool\b)",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"Tool call limit exceeded\. Do not (make additional tool calls|call '[^']*' again)\."
)
"""LangChain's ToolCallLimitMiddleware's whole result for a call it refused."""


def refused_tool_result(message: Mapping[str, Any]) -> bool:
    """Whether a ``tool`` trace message is the tool call limit's refusal of the call."""
    content = message.get("content")
    return isinstance(content, str) and bool(_REFUSAL.fullmatch(content.strip()))


def failed_tool_result(message: Mapping[str, Any]) -> bool:
    """Whether a ``tool`` trace message reports a failed call (a refused call was not made,
    so it did not fail)."""
    if refused_tool_result(message):
        return False
    result = message.get("tool_result") or {}
    if result.get("is_error"):
        return True
    content = message.get("content")
    return isinstance(content, str) and bool(_FAILURE_OPENINGS.match(content))


def agent_metrics(
    trace: Sequence[Mapping[str, Any]], *, limit_reached: bool = False
) -> dict[str, Any]:
    """The ``agent_metrics`` of an agent trace (see the module docstring)."""
    calls: list[str] = []
    names_by_id: dict[str, str] = {}
    iterations = 0
    for message in trace:
        if message.get("role") in ("assistant", "ai"):
            iterations += 1
            for call in message.get("tool_calls") or []:
                name = str(call.get("name") or "?")
                calls.append(name)
                names_by_id[str(call.get("id") or "")] = name
    results = [m for m in trace if m.get("role") == "tool"]
    refused = [m for m in results if refused_tool_result(m)]
    failed = [m for m in results if failed_tool_result(m)]
    failed_names = sorted({_tool_name(m, names_by_id) for m in failed})
    counts = Counter(calls)
    counts.subtract(_tool_name(m, names_by_id) for m in refused)
    made = {name: count for name, count in counts.items() if count > 0}
    return {
        "iterations": iterations,
        "tool_calls": max(len(calls), len(results)) - len(refused),
        "tools_used": sorted(made),
        "tool_call_counts": dict(sorted(made.items())),
        "refused_tool_calls": len(refused),
        "suspect_failed_tool_calls": len(failed),
        "suspect_failed_tools": failed_names,
        "limit_reached": limit_reached,
    }


def _tool_name(message: Mapping[str, Any], names_by_id: Mapping[str, str]) -> str:
    call_id = str((message.get("tool_result") or {}).get("tool_use_id") or "")
    return str(message.get("name") or names_by_id.get(call_id) or "?")


def is_agent_run(metrics: Mapping[str, Any] | None) -> bool:
    """Whether ``template.agent_metrics`` describes an agent run (a plain answer's has only
    ``iterations`` and ``limit_reached``)."""
    return bool(metrics) and "tool_calls" in (metrics or {})


def describe_agent(metrics: Mapping[str, Any]) -> str:
    """``3 model calls, 2 tool calls (lookup_capital 2); 1 failed (broken); call limit
    reached``: one line for failure explanations and reports."""
    counts = metrics.get("tool_call_counts") or {}
    used = ", ".join(f"{name} {count}" for name, count in counts.items())
    line = f"{metrics.get('iterations', 0)} model calls, {metrics.get('tool_calls', 0)} tool calls"
    if used:
        line += f" ({used})"
    failed = metrics.get("suspect_failed_tool_calls") or 0
    if failed:
        line += f"; {failed} failed ({', '.join(metrics.get('suspect_failed_tools') or [])})"
    refused = metrics.get("refused_tool_calls") or 0
    if refused:
        line += f"; {refused} refused by the tool call limit"
    if metrics.get("limit_reached"):
        line += "; call limit reached"
    return line
