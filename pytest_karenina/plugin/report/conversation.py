"""An agent's trace as a readable conversation, for the HTML report.

Each assistant turn shows its text; each tool call it made is a folded ``<details>`` whose
summary names the tool and its arguments and whose body holds the arguments and the tool's
result. Failed calls are marked. The agentic judge's investigation follows, folded. All text
is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.results.agent_metrics import (
    describe_agent,
    failed_tool_result,
    refused_tool_result,
)
from pytest_karenina.results.trace import content_text

SHORT = 80


def _arguments(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def _short(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 3] + "..."


def _call(call: Mapping[str, Any], result: Mapping[str, Any] | None) -> str:
    arguments = _arguments(call.get("input"))
    failed = result is not None and failed_tool_result(result)
    state = (
        ' <strong class="karenina-fail">failed</strong>' if failed
        else ' <span class="karenina-na">no result</span>' if result is None
        else ' <span class="karenina-na">refused by tool_call_limit</span>'
        if refused_tool_result(result) else ""
    )  # fmt: skip
    css = "karenina-tool karenina-tool-failed" if failed else "karenina-tool"
    body = f"<pre>{escape(arguments)}</pre>"
    if result is not None:
        answer = escape(content_text(result.get("content")))
        body += f'<pre class="karenina-tool-result">{answer}</pre>'
    summary = f"tool {escape(str(call.get('name') or '?'))}({escape(_short(arguments))}){state}"
    return f'<details class="{css}"><summary>{summary}</summary>{body}</details>'


def conversation_html(
    messages: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Any] | None = None,
    investigation: str | None = None,
) -> str:
    """The ``<details>`` block of an agent's conversation (and the judge's investigation)."""
    results = {
        str((m.get("tool_result") or {}).get("tool_use_id") or ""): m
        for m in messages
        if m.get("role") == "tool"
    }
    shown: set[str] = set()
    turns: list[str] = []
    for message in messages:
        if message.get("role") not in ("assistant", "ai"):
            continue
        text = content_text(message.get("content"))
        parts = [f"<pre>{escape(text)}</pre>"] if text else []
        for call in message.get("tool_calls") or []:
            call_id = str(call.get("id") or "")
            shown.add(call_id)
            parts.append(_call(call, results.get(call_id)))
        turns.append(
            '<div class="karenina-turn"><strong>agent</strong>' + "".join(parts) + "</div>"
        )
    for call_id, result in results.items():
        if call_id not in shown:  # a result whose call is not in the trace
            turns.append(_call({"id": call_id, "name": result.get("name")}, result))
    head = "agent conversation"
    if metrics:
        head += f": {escape(describe_agent(metrics))}"
    block = (
        f'<details class="karenina-conversation" open><summary>{head}</summary>'
        f"{''.join(turns)}</details>"
    )
    if investigation:
        block += (
            '<details class="karenina-investigation"><summary>agentic judge investigation'
            f"</summary><pre>{escape(investigation)}</pre></details>"
        )
    return block


def result_conversation(payload: ItemPayload, index: int, summary: ResultSummary) -> str | None:
    """The agent conversation and the judge's investigation, when there are any."""
    results = payload.results
    template = (results[index].get("template") if index < len(results) else None) or {}
    investigation = template.get("investigation_trace")
    if summary.agent is None and not investigation:
        return None
    messages = template.get("trace_messages") or [] if summary.agent is not None else []
    return conversation_html(messages, summary.agent, investigation)
