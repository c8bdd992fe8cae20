"""Baselines: an accepted run's verdicts and scores, and the regression-only gate.

A baseline holds one entry per question and answering model: the verdict of its items
(``pass`` when every item passed, ``error`` when any errored, else ``fail``, or
``no_verdict``), how many passed, the mean granular score and the mean of each numeric
rubric trait (booleans as 0/1, metric parts as ``trait.part``). The file is sorted, indented
JSON so that a change to it reads well in review.

Against a baseline, a run regresses where an entry passed and now does not, or where a
score dropped by more than the tolerance (absolute, in the score's own unit).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, FiniteFloat, NonNegativeInt, ValidationError

from pytest_karenina.plugin.options.results_path import replacing
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.strict_json import STRICT, problems, unique_keys
from pytest_karenina.plugin.report.tallies import rounded_mean
from pytest_karenina.plugin.verdict.outcome import Outcome

FORMAT = "pytest-karenina-baseline"
VERSION = 1
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

    @property
    def key(self) -> Key:
        return (self.question_id, self.answering_model)

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
        entries[key] = BaselineEntry(
            question_id=key[0],
            answering_model=key[1],
            verdict=_verdict([p.category for p in items]),
            passed=sum(1 for p in items if p.category is Outcome.PASS),
            items=len(items),
            score=rounded_mean(item_scores) if item_scores else None,
            rubric={name: rounded_mean(found) for name, found in sorted(traits.items())},
        )
    return entries


def write_baseline(path: Path, entries: Mapping[Key, BaselineEntry]) -> None:
    """Write ``entries`` to ``path`` atomically (a temporary file of its own, then a rename)."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "entries": [asdict(entries[key]) for key in sorted(entries)],
    }
    with replacing(path) as out:
        json.dump(document, out, indent=2, sort_keys=True, ensure_ascii=False)
        out.write("\n")


class _Entry(BaseModel):
    model_config = STRICT

    question_id: str
    answering_model: str
    verdict: Literal["pass", "fail", "error", "no_verdict"]
    passed: NonNegativeInt = 0
    items: NonNegativeInt = 0
    score: FiniteFloat | None = None
    rubric: dict[str, FiniteFloat] = Field(default_factory=dict)


class _Document(BaseModel):
    model_config = STRICT

    format: str
    version: int
    entries: list[_Entry]


def read_baseline(path: Path) -> dict[Key, BaselineEntry]:
    """The entries of the baseline at ``path``; :class:`BaselineError` naming the file and the
    entry when it cannot be read, is not a baseline, or is damaged: a field of a wrong type,
    missing or unknown, a score that is not a finite number, an unknown verdict, a question
    and answering model listed twice."""
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
    if type(version) is not int or version != VERSION:
        raise BaselineError(f"{path}: baseline version {version!r} is not {VERSION}")
    raw = document.get("entries")

    def label(loc: tuple[int | str, ...]) -> tuple[int, str | None]:
        if len(loc) < 2 or not isinstance(raw, list) or not isinstance(loc[1], int):
            return 0, None
        qid = found.get("question_id") if isinstance(found := raw[loc[1]], dict) else None
        return 2, qid if isinstance(qid, str) else None

    try:
        checked = _Document.model_validate(document)
    except ValidationError as exc:
        raise BaselineError(f"{path}: {problems(exc, labeler=label)}") from None
    entries: dict[Key, BaselineEntry] = {}
    where: dict[Key, int] = {}
    for index, found in enumerate(checked.entries):
        entry = BaselineEntry(**found.model_dump())
        if entry.key in entries:
            raise BaselineError(
                f"{path}: entries[{index}] ({entry.label()}): listed twice (first as "
                f"entries[{where[entry.key]}]); a baseline holds one entry per question and "
                "answering model"
            )
        entries[entry.key] = entry
        where[entry.key] = index
    return entries
