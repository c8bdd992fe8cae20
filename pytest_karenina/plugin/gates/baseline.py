"""Baselines: an accepted run's verdicts and scores, and the file that keeps them.

A baseline holds one entry per question and answering model: the verdict of its items
(``pass`` when every item passed, ``error`` when any errored, else ``fail``, or
``no_verdict``), how many passed, how many of its replicates were judged and passed, the mean
granular score and the mean of each numeric rubric trait (booleans as 0/1, metric parts as
``trait.part``), its fingerprint (what the verdict was measured with:
:mod:`~..collect.fingerprint`) and a hash of each replicate's answer. The file is sorted,
indented JSON so that a change to it reads well in review.

Version 2 added the replicate counts, the fingerprint and the answers; version 1 files are
still read (their entries have no fingerprint, and their item counts stand for the
replicates). How a run is compared with its baseline: :mod:`.baseline_diff`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, Field, FiniteFloat, NonNegativeInt, ValidationError, model_validator

from pytest_karenina.plugin.options.results_path import replacing
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.strict_json import STRICT, problems, unique_keys
from pytest_karenina.plugin.report.tallies import rounded_mean
from pytest_karenina.plugin.verdict.outcome import Outcome

FORMAT = "pytest-karenina-baseline"
VERSION = 2
"""The version this writes."""
READS = (1, 2)
"""The versions this reads."""
Key = tuple[str, str]
"""``(question id, answering model)``."""


class BaselineError(ValueError):
    """A baseline file that cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class BaselineEntry:
    """One question and answering model of an accepted run."""

    question_id: str
    answering_model: str
    verdict: str
    passed: int = 0
    items: int = 0
    score: float | None = None
    rubric: dict[str, float] = field(default_factory=dict)
    replicates: int = 0
    """Replicates judged (a verdict each); 0 in a version 1 file: :attr:`runs` counts
    items then."""
    replicates_passed: int = 0
    fingerprint: dict[str, str] | None = None
    """A hash per part of what the verdict was measured with; None: unknown (a version 1
    file), comparable with anything."""
    answers: tuple[str, ...] = ()
    """A hash of each replicate's answer, in replicate order."""

    @property
    def key(self) -> Key:
        return (self.question_id, self.answering_model)

    @property
    def runs(self) -> tuple[int, int]:
        """``(passed, judged)`` over the replicates (over the items for a version 1 entry)."""
        if self.replicates:
            return self.replicates_passed, self.replicates
        return self.passed, self.items

    def label(self) -> str:
        return f"{self.question_id} [{self.answering_model}]"


def _verdict(categories: list[Outcome]) -> str:
    if any(category.is_error for category in categories):
        return "error"
    if all(category is Outcome.PASS for category in categories):
        return "pass"
    if any(category.decided for category in categories):
        return "fail"
    return "no_verdict"


def entries_of(
    payloads: Iterable[ItemPayload], scores: Mapping[str, Mapping[str, float]]
) -> dict[Key, BaselineEntry]:
    """The run's entries from its items' payloads and rubric scores (by node id)."""
    grouped: dict[Key, list[ItemPayload]] = {}
    for payload in payloads:
        if payload.question_id is None:  # a crashed worker's item names no question
            continue
        grouped.setdefault((payload.question_id, payload.answering_model or "?"), []).append(
            payload
        )
    entries = {}
    for key, items in sorted(grouped.items()):
        item_scores = [p.score for p in items if p.score is not None]
        traits: dict[str, list[float]] = {}
        for payload in items:
            for name, value in scores.get(payload.nodeid, {}).items():
                traits.setdefault(name, []).append(value)
        passed, judged = _replicate_counts(items)
        in_order = sorted(items, key=lambda p: (p.replicate or 0, p.nodeid))
        entries[key] = BaselineEntry(
            question_id=key[0],
            answering_model=key[1],
            verdict=_verdict([p.category for p in items]),
            passed=sum(1 for p in items if p.category is Outcome.PASS),
            items=len(items),
            score=rounded_mean(item_scores) if item_scores else None,
            rubric={name: rounded_mean(found) for name, found in sorted(traits.items())},
            replicates=judged,
            replicates_passed=passed,
            fingerprint=next((p.fingerprint for p in items if p.fingerprint), None),
            answers=tuple(answer for p in in_order for answer in p.answers),
        )
    return entries


def _replicate_counts(items: list[ItemPayload]) -> tuple[int, int]:
    """``(passed, judged)`` over the replicates of ``items``: a policy's counts, else one
    per item that reached a verdict."""
    passed = judged = 0
    for payload in items:
        if payload.replicate_passes:
            passed, judged = (
                passed + payload.replicate_passes[0],
                judged + payload.replicate_passes[1],
            )
        elif payload.category.decided:
            passed, judged = passed + (payload.category is Outcome.PASS), judged + 1
    return passed, judged


def write_baseline(path: Path, entries: Mapping[Key, BaselineEntry]) -> None:
    """Write ``entries`` to ``path`` atomically (a temporary file of its own, then a rename)."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "entries": [_written(entries[key]) for key in sorted(entries)],
    }
    with replacing(path) as out:
        json.dump(document, out, indent=2, sort_keys=True, ensure_ascii=False)
        out.write("\n")


def _written(entry: BaselineEntry) -> dict[str, object]:
    found = asdict(entry)
    found["answers"] = list(entry.answers)
    return found


class _Fingerprint(BaseModel):
    model_config = STRICT

    question: str
    template: str
    rubric: str
    judge: str
    prompts: str


class _EntryV1(BaseModel):
    model_config = STRICT

    question_id: str
    answering_model: str
    verdict: Literal["pass", "fail", "error", "no_verdict"]
    passed: NonNegativeInt = 0
    items: NonNegativeInt = 0
    score: FiniteFloat | None = None
    rubric: dict[str, FiniteFloat] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _counts(self) -> Self:
        if self.passed > self.items:
            raise ValueError(f"passed ({self.passed}) is more than items ({self.items})")
        return self


class _EntryV2(_EntryV1):
    replicates: NonNegativeInt = 0
    replicates_passed: NonNegativeInt = 0
    fingerprint: _Fingerprint | None = None
    answers: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _replicate_counts(self) -> Self:
        if self.replicates_passed > self.replicates:
            raise ValueError(
                f"replicates_passed ({self.replicates_passed}) is more than replicates "
                f"({self.replicates})"
            )
        return self


class _DocumentV1(BaseModel):
    model_config = STRICT

    format: str
    version: int
    entries: list[_EntryV1]


class _DocumentV2(_DocumentV1):
    entries: list[_EntryV2]  # type: ignore[assignment]


@dataclass(frozen=True)
class Baseline:
    """A baseline file's entries, and its version."""

    entries: dict[Key, BaselineEntry]
    version: int = VERSION

    @property
    def models(self) -> list[str]:
        """The answering models of its entries, sorted."""
        return sorted({model for _, model in self.entries})


def read_baseline(path: Path) -> dict[Key, BaselineEntry]:
    """The entries of the baseline at ``path`` (:func:`read_baseline_file`)."""
    return read_baseline_file(path).entries


def read_baseline_file(path: Path) -> Baseline:
    """The baseline at ``path``; :class:`BaselineError` naming the file and the entry when it
    cannot be read, is not a baseline, or is damaged: a field of a wrong type, missing or
    unknown, a score that is not a finite number, an unknown verdict, more passed than
    judged, a question and answering model listed twice."""
    if path.exists() and not path.is_file():  # a FIFO would block the read
        raise BaselineError(f"{path}: not a regular file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
    except FileNotFoundError:
        raise BaselineError(
            f"{path}: no such baseline (write one with --karenina-baseline-update)"
        ) from None
    except (OSError, ValueError) as exc:
        raise BaselineError(f"{path}: not a readable baseline ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BaselineError(f'{path}: not a pytest-karenina baseline (no "format": "{FORMAT}")')
    version = document.get("version")
    if type(version) is not int or version not in READS:
        known = " or ".join(map(str, READS))
        raise BaselineError(
            f"{path}: baseline version {version!r} is not one this version reads ({known})"
        )
    raw = document.get("entries")

    def label(loc: tuple[int | str, ...]) -> tuple[int, str | None]:
        if len(loc) < 2 or not isinstance(raw, list) or not isinstance(loc[1], int):
            return 0, None
        qid = found.get("question_id") if isinstance(found := raw[loc[1]], dict) else None
        return 2, qid if isinstance(qid, str) else None

    model = _DocumentV1 if version == 1 else _DocumentV2
    try:
        checked = model.model_validate(document)
    except ValidationError as exc:
        raise BaselineError(f"{path}: {problems(exc, labeler=label)}") from None
    entries: dict[Key, BaselineEntry] = {}
    where: dict[Key, int] = {}
    for index, found in enumerate(checked.entries):
        fields = found.model_dump()
        fields["answers"] = tuple(fields.get("answers") or ())
        entry = BaselineEntry(**fields)
        if entry.key in entries:
            raise BaselineError(
                f"{path}: entries[{index}] ({entry.label()}): listed twice (first as "
                f"entries[{where[entry.key]}]); a baseline holds one entry per question and "
                "answering model"
            )
        entries[entry.key] = entry
        where[entry.key] = index
    return Baseline(entries, version)
