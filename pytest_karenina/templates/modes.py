"""Template modes (which parts of the pipeline a template needs)."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pytest_karenina.templates.base_answer import BaseAnswer

TemplateMode: TypeAlias = Literal["classic", "verified", "mixed", "regex_only", "trace_only"]


def template_mode(answer_class: type[BaseAnswer]) -> TemplateMode:
    """Classify a template.

    ``regex_only``: no fields but ``id`` (no judge call, only ``self.regex``);
    ``trace_only``: every field is a trace-primitive VerifiedField (no judge call);
    ``verified``: every field is a VerifiedField; ``mixed``: some are;
    ``classic``: none are (hand-written ``verify()``).
    """
    fields = {name for name in answer_class.model_fields if name != "id"}
    if not fields:
        return "regex_only"
    verified = answer_class.verified_fields()
    if not verified:
        return "classic"
    if set(verified) != fields:
        return "mixed"
    if all(meta.is_trace for meta in verified.values()):
        return "trace_only"
    return "verified"


def needs_judge(answer_class: type[BaseAnswer]) -> bool:
    """Whether parsing this template needs a judge (parsing model) call."""
    return template_mode(answer_class) not in ("regex_only", "trace_only")
