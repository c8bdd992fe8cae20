"""``--karenina-judge-check``: one labelled answer's outcome, the judge against people.

A :class:`Label` is one entry of the labels file (read in ``collect/labels.py``): a question,
an answer, the people's verdict and, optionally, the field values people read in the answer.
The pipeline judges the answer (no answering call); :func:`check_label` compares each
judge's verdict and extraction with the label. The item passes when every judge agrees on
the verdict and on every labelled field (:attr:`LabelCheck.agrees`), fails otherwise
(:class:`JudgeDisagrees`), and is unmeasured when a judge reached no verdict.

The :class:`LabelCheck` travels from the process that ran the item to the one that reports
(xdist) as JSON on the report (:func:`attach_check`, :func:`reported_check`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.evidence import short
from pytest_karenina.plugin.verdict.outcome import FieldFacts, Outcome, Verdict, deciding_stage
from pytest_karenina.templates.normalizers import SynonymMap, apply_normalizers

JUDGE_CHECK = "karenina_judge_check"
"""The report attribute holding a label's :meth:`LabelCheck.to_json`."""
ANSWER_EXCERPT = 300
"""Characters of the answer a check keeps for the reports."""


@dataclass(frozen=True)
class FieldLabel:
    """The value people read in the answer for one field of the template, and how the
    template normalises the field: its type (``adapter``: "3" and 3 are one int) and its
    primitive's text normalisers (``lowercase``, ``strip``...)."""

    name: str
    given: Any
    """As the labels file writes it (JSON-native), for the reports."""
    value: Any
    """Validated through the field's type."""
    adapter: TypeAdapter[Any] | None = None
    normalize: tuple[str | SynonymMap, ...] = ()

    def _normal(self, value: Any) -> Any:
        if self.adapter is not None:
            try:
                value = self.adapter.validate_python(value)
            except ValidationError:
                pass
        if not self.normalize:
            return value
        if isinstance(value, list | tuple):
            return [apply_normalizers(self.normalize, item) for item in value]
        return apply_normalizers(self.normalize, value) if isinstance(value, str) else value

    def agrees(self, parsed: Any) -> bool:
        """Whether the judge's ``parsed`` value is the people's, once both are normalised."""
        return bool(self._normal(parsed) == self._normal(self.value))


@dataclass(frozen=True)
class Label:
    """One labelled answer; ``source`` is where it is written (``labels.csv, line 4``)."""

    label_id: str
    order: int
    """Its position in the labels file (reports list labels in this order)."""
    source: str
    question_id: str
    people_pass: bool
    answer: Mapping[str, Any]
    """The answer's artifacts as the pipeline takes a cached answer (``raw_llm_response``,
    ``trace_messages``...)."""
    fields: tuple[FieldLabel, ...] = ()

    @property
    def answer_text(self) -> str:
        return str(self.answer.get("raw_llm_response") or "")


@dataclass(frozen=True)
class FieldReading:
    """One labelled field: the people's value, the judge's, and whether they agree."""

    field: str
    people: Any
    parsed: Any
    agrees: bool


def _verdict(outcome: str) -> bool | None:
    category = Outcome(outcome)
    return category is Outcome.PASS if category.decided else None


@dataclass(frozen=True)
class JudgeReading:
    """What one result (one judge, one judging) made of the answer."""

    judge: str
    outcome: str
    """The result's :class:`Outcome` value."""
    stage: str
    """The stage that decided the verdict."""
    fields: tuple[FieldReading, ...] = ()
    extraction: Mapping[str, Any] = field(default_factory=dict)
    """Every field the judge parsed from the answer."""

    @property
    def passed(self) -> bool | None:
        """The judge's verdict; None when it reached none (an error, no verdict)."""
        return _verdict(self.outcome)


def _bounded(text: str) -> str:
    return text if len(text) <= ANSWER_EXCERPT else text[: ANSWER_EXCERPT - 3] + "..."


@dataclass(frozen=True)
class LabelCheck:
    """A label against its judges' readings."""

    label: str
    order: int
    source: str
    question_id: str
    people_pass: bool
    readings: tuple[JudgeReading, ...]
    answer: str = ""
    """The beginning of the answer (:data:`ANSWER_EXCERPT` characters)."""

    def judge_verdicts(self) -> dict[str, bool | None]:
        """Each judge's verdict: the majority of its judgings (several with judge
        replicates); None when one of them reached no verdict, or for a tie."""
        found: dict[str, list[bool | None]] = {}
        for reading in self.readings:
            found.setdefault(reading.judge, []).append(reading.passed)
        verdicts: dict[str, bool | None] = {}
        for judge, votes in found.items():
            passes = sum(1 for vote in votes if vote)
            tie = passes * 2 == len(votes)
            verdicts[judge] = None if None in votes or tie else passes * 2 > len(votes)
        return verdicts

    @property
    def agrees(self) -> bool | None:
        """Every judge gave the people's verdict and read every labelled field as people
        did; None when a judge reached no verdict (nothing to compare)."""
        verdicts = self.judge_verdicts()
        if not verdicts or None in verdicts.values():
            return None
        fields_agree = all(f.agrees for r in self.readings for f in r.fields)
        return fields_agree and all(v is self.people_pass for v in verdicts.values())

    def headline(self) -> str:
        """Why the label fails, in one line."""
        verdicts = self.judge_verdicts()
        wrong = [judge for judge, verdict in verdicts.items() if verdict is not self.people_pass]
        people = "pass" if self.people_pass else "fail"
        if wrong:
            said = "fail" if self.people_pass else "pass"
            text = f"judge {', '.join(wrong)} says {said}, people say {people}"
        else:
            text = f"judge agrees on {people} but misreads fields"
        differing = [f for r in self.readings for f in r.fields if not f.agrees]
        if differing:
            first = differing[0]
            text += f"; {first.field}: judge {short(first.parsed)}, people {short(first.people)}"
        return terminal_safe(f"{text} ({self.source})")

    def explain(self) -> str:
        """The failure text: the headline, each judge's verdict and deciding stage, each
        labelled field, the judge's extraction and the answer."""
        people = "pass" if self.people_pass else "fail"
        lines = [self.headline(), f"label {terminal_safe(self.label)}: people say {people}"]
        for reading in self.readings:
            said = {True: "pass", False: "fail", None: "no verdict"}[reading.passed]
            lines.append(
                f"judge {terminal_safe(reading.judge)}: {said} ({reading.outcome}, decided by "
                f"{terminal_safe(reading.stage)})"
            )
            for found in reading.fields:
                mark = "agrees" if found.agrees else "DIFFERS"
                lines.append(
                    f"  {terminal_safe(found.field)}: judge {short(found.parsed)}, "
                    f"people {short(found.people)}: {mark}"
                )
            if reading.fields and all(f.agrees for f in reading.fields):
                if reading.passed is not self.people_pass:
                    lines.append(
                        f"  the labelled fields agree: {terminal_safe(reading.stage)} decided "
                        "the verdict, not the extraction"
                    )
            lines.append(f"  extraction: {short(dict(reading.extraction), 200)}")
        lines.append(f"answer: {short(self.answer, 200)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Builtins only (lists, dicts, strings, numbers): what xdist ships."""
        data: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(self), default=str))
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LabelCheck:
        readings = tuple(
            JudgeReading(
                judge=str(r["judge"]),
                outcome=str(r["outcome"]),
                stage=str(r.get("stage") or ""),
                extraction=dict(r.get("extraction") or {}),
                fields=tuple(FieldReading(**f) for f in r.get("fields") or ()),
            )
            for r in data.get("readings") or ()
        )
        return cls(
            label=str(data["label"]),
            order=int(data.get("order") or 0),
            source=str(data.get("source") or ""),
            question_id=str(data.get("question_id") or ""),
            people_pass=bool(data["people_pass"]),
            readings=readings,
            answer=str(data.get("answer") or ""),
        )


def judge_name(verdict: Verdict) -> str:
    """The judge of a result: its parsing model's id (else its model name)."""
    parsing = verdict.result.metadata.parsing
    return parsing.config_id or parsing.model_name


def check_label(label: Label, verdicts: Sequence[Verdict], facts: FieldFacts) -> LabelCheck:
    """``label`` against the item's ``verdicts`` (one per judge and judging); ``facts``: what
    the template's trace checks found in the answer (their fields are read, not parsed)."""
    readings = []
    for verdict in verdicts:
        template = verdict.result.template
        parsed = dict((template.parsed_llm_response if template else None) or {})
        parsed.update(facts.observed)
        decided = verdict.category.decided
        fields = [
            FieldReading(
                found.name,
                found.given,
                parsed.get(found.name),
                found.agrees(parsed.get(found.name)),
            )
            for found in (label.fields if decided else ())
        ]
        readings.append(
            JudgeReading(
                judge=judge_name(verdict),
                outcome=verdict.category.value,
                stage=deciding_stage(verdict) if decided else "",
                fields=tuple(fields),
                extraction=parsed,
            )
        )
    return LabelCheck(
        label=label.label_id,
        order=label.order,
        source=label.source,
        question_id=label.question_id,
        people_pass=label.people_pass,
        readings=tuple(readings),
        answer=_bounded(label.answer_text),
    )


class JudgeDisagrees(AssertionError):
    """A labelled answer the judge did not judge as people did (the item fails)."""

    def __init__(self, check: LabelCheck) -> None:
        super().__init__(check.headline())
        self.check = check


def attach_check(report: Any, check: LabelCheck) -> None:
    """Put ``check`` on ``report`` (it travels with the report under xdist)."""
    setattr(report, JUDGE_CHECK, check.to_json())


def reported_check(report: Any) -> LabelCheck | None:
    """The label check a report carries, if any."""
    sent = getattr(report, JUDGE_CHECK, None)
    return LabelCheck.from_json(sent) if isinstance(sent, dict) else None
