"""Call 3, abstention detection: did the answering model decline to answer?

The judge replies with :class:`AbstentionVerdict` (``reasoning`` first, so the
verdict follows the argument).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from pytest_karenina.llm.ports import ChatMessage
from pytest_karenina.prompts.messages import system_and_user

ABSTENTION_TASK = "abstention_detection"
"""Task id (and PromptConfig field) of this call."""


class AbstentionVerdict(BaseModel):
    """The judge's decision on whether a response abstains."""

    reasoning: str = Field(
        description="The sentence that declines to answer, quoted, and why it does or "
        "does not amount to abstention"
    )
    abstention_detected: bool = Field(
        description="True only if the response explicitly declines to give an answer"
    )


ABSTENTION_SYSTEM = """\
<role>
You check whether a model's response to a question is an abstention: the model \
says outright that it will not or cannot answer, and then gives no answer.
</role>

<procedure>
1. Search the response for a sentence in which the model states that it cannot, \
will not or is not able to answer (for lack of ability, knowledge, access or \
permission). Quote it word for word in your reasoning.
2. If there is no such sentence, it is not an abstention.
3. If there is one but the response still commits to a concrete answer to the \
question somewhere, it is not an abstention.
4. Otherwise it is an abstention.
</procedure>

<guidance>
- Hedged, uncertain or caveated answers are answers, not abstentions.
- Partial answers and answers that ask for clarification but still commit to \
something are not abstentions.
- Declining and offering only general background, or only pointing the user \
elsewhere, instead of answering is an abstention.
- A response that reports a failed tool call or missing data but still answers \
is not an abstention; a failed tool is not a refusal.
- Judge the whole response, not only its opening lines.
</guidance>

<output_format>
Reply with only this JSON object, "reasoning" first:
{
  "reasoning": "<the quoted sentence, if any, and your argument>",
  "abstention_detected": <true or false>
}
</output_format>"""

ABSTENTION_USER = """\
<original_question>
{question}
</original_question>

<model_response>
{response}
</model_response>

Decide whether the response above abstains from answering the question, and \
reply with the JSON object."""


def abstention_messages(
    question_text: str, response_text: str, *, instructions: str | None = None
) -> list[ChatMessage]:
    """``[system, user]`` asking whether ``response_text`` abstains from ``question_text``.

    ``instructions`` (PromptConfig ``abstention_detection``) are appended to
    the system text. The reply is an :class:`AbstentionVerdict`.
    """
    user = ABSTENTION_USER.format(question=question_text, response=response_text)
    return system_and_user(ABSTENTION_SYSTEM, user, instructions)
