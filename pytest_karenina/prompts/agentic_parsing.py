"""The agentic judge's investigation (seed 004, section 3, step 1).

The judge is an agent with read-only file tools rooted at the answer's workspace. It is asked
to check the answering agent's work, reading the files it left rather than re-running
anything, and to report a value for every field of the template's schema (ground truth
stripped), saying which it could not establish. What it is shown depends on
``agentic_judge_context``: the workspace only, the answering trace and the workspace, or the
trace only (no workspace and no file tools). Step 2, the extraction of the report into the
template, uses the classic parsing prompt with the report as the response.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user

INVESTIGATION_TASK = "agentic_parsing_investigation"
EXTRACTION_TASK = "agentic_parsing_extraction"
TRACE_BLOCK = "--- ANSWERING AGENT TRACE ---"
REPORT_HEADER = "Investigation report:"

INVESTIGATION_SYSTEM = """\
You check the work of another AI agent that was given a task. Establish, from the evidence \
you can inspect, the value of each field of the schema below.

How to work:
- Read the files the agent produced and its final report; do not re-run its code or repeat \
its work.
- Judge what the agent actually produced, not what it claims: a file it says it wrote but \
that is not there does not count.
- When the evidence does not establish a field, report null for it and name it under \
"_unanswered_fields".

End with a report that gives every field's value and where you found it.

## Schema of the values to establish
```json
{schema}
```"""

WORKSPACE_LINE = "The agent's workspace is {path}; your file tools are rooted there (read only)."
TRACE_FILE_LINE = "The agent's full conversation is in the file {name} of the workspace."


def investigation_messages(
    question: str,
    schema: dict[str, Any],
    *,
    trace: str | None = None,
    workspace: str | None = None,
    trace_file: str | None = None,
    instructions: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` for the investigation: the question, then the workspace line, the
    trace (inline, or the name of the file holding it) as the judge context allows."""
    parts = [f"The task given to the agent:\n{question}"]
    if workspace is not None:
        parts.append(WORKSPACE_LINE.format(path=workspace))
    if trace_file is not None:
        parts.append(TRACE_FILE_LINE.format(name=trace_file))
    elif trace is not None:
        parts.append(f"{TRACE_BLOCK}\n{trace}\n--- END OF TRACE ---")
    system = INVESTIGATION_SYSTEM.format(schema=json.dumps(schema, indent=2))
    return system_and_user(system, "\n\n".join(parts), instructions)


def report_text(final_message: str, trace: str, limit: int = 60_000) -> str:
    """What the extraction reads: the investigation's final message, else (when it has
    none) the head and tail of its whole trace, at most ``limit`` characters."""
    body = final_message.strip() or trace
    if len(body) > limit:
        half = limit // 2
        body = f"{body[:half]}\n[... {len(body) - limit} characters left out ...]\n{body[-half:]}"
    return f"{REPORT_HEADER}\n\n{body}"
