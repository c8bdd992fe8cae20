"""Reading a ``--karenina-judge-check`` labels file, checked against the run's checkpoints.

CSV (a header row, then one label per line) or JSON (a list of objects, or ``{"labels":
[...]}``), with these columns (keys):

* ``question_id`` (required): a question of one of the checkpoints (the first that has it);
* ``answer`` or ``answer_ref`` (exactly one): the answer, or a reference to a recorded one
  (:mod:`.label_answers`);
* ``verdict`` (required): ``pass`` or ``fail``, what people say of the answer;
* ``field.<name>`` (CSV) or ``fields: {name: value}`` (JSON), optional: the value people
  read in the answer for a field of the question's template (an empty CSV cell labels
  nothing); checked against the field's type;
* ``label`` (optional): the label's name in node ids (default: 8 hex digits of a hash of the
  question id and the answer, stable when other labels change); ``note`` (ignored).

Anything that does not fit (an unknown column or question, a duplicate label, a verdict
other than pass or fail, a field the template does not have, a missing referenced answer)
raises :class:`LabelError` naming the file and the line (CSV) or entry (JSON).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from pytest_karenina.checkpoint import CheckpointError, Question, load_checkpoint
from pytest_karenina.plugin.collect.items import slug
from pytest_karenina.plugin.collect.label_answers import (
    AnswerError,
    RecordedAnswers,
    answer_digest_text,
    given_answer,
)
from pytest_karenina.plugin.verdict.judge_check import FieldLabel, Label
from pytest_karenina.templates import BaseAnswer, TemplateError, compile_template

COLUMNS = ("question_id", "answer", "answer_ref", "verdict", "label", "note")
FIELD_PREFIX = "field."
VERDICTS = {"pass": True, "fail": False}


class LabelError(ValueError):
    """A labels file that does not fit the run; the message names the file and the place."""


@dataclass(frozen=True)
class LabelSet:
    """The labels of a run, each with the checkpoint holding its question."""

    path: Path
    labels: tuple[Label, ...]
    checkpoints: Mapping[str, Path]
    """Label id -> the checkpoint whose question it labels."""

    def of_checkpoint(self, checkpoint: Path) -> list[Label]:
        """The labels of ``checkpoint``'s questions, in the labels file's order."""
        return [label for label in self.labels if self.checkpoints[label.label_id] == checkpoint]


def shown(path: Path) -> str:
    """``path`` as error messages name it: relative to the working directory when inside."""
    try:
        return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)
    except ValueError:
        return str(path)


def _csv_entries(path: Path, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        header = [column.strip() for column in next(reader, [])]
        unknown = [c for c in header if c not in COLUMNS and not c.startswith(FIELD_PREFIX)]
        if unknown or not header:
            what = f"unknown column {unknown[0]!r}" if unknown else "no header row"
            raise LabelError(
                f"{name}, line 1: {what} (columns: {', '.join(COLUMNS)}, field.<name>)"
            )
        while True:
            line = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                return
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise LabelError(f"{name}, line {line}: more cells than columns")
            cells = dict(zip(header, row, strict=False))
            entry: dict[str, Any] = {k: v for k, v in cells.items() if k in COLUMNS and v != ""}
            entry["fields"] = {
                column.removeprefix(FIELD_PREFIX): value
                for column, value in cells.items()
                if column.startswith(FIELD_PREFIX) and value != ""
            }
            yield f"{name}, line {line}", entry


def _json_entries(path: Path, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise LabelError(f"{name}: not JSON ({exc})") from None
    entries = data.get("labels") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise LabelError(f'{name}: expected a list of labels, or {{"labels": [...]}}')
    for number, entry in enumerate(entries, 1):
        where = f"{name}, entry {number}"
        if not isinstance(entry, dict):
            raise LabelError(f"{where}: a label is an object, not {type(entry).__name__}")
        unknown = [key for key in entry if key not in (*COLUMNS, "fields")]
        if unknown:
            raise LabelError(
                f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(COLUMNS)}, fields)"
            )
        if not isinstance(entry.get("fields", {}), dict):
            raise LabelError(f"{where}: fields must be an object of field name -> value")
        yield where, {**entry, "fields": dict(entry.get("fields") or {})}


def read_entries(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(where, entry)`` of every label of ``path`` (CSV or JSON, by its suffix)."""
    name = shown(path)
    if not path.is_file():
        raise LabelError(f"{name}: no such labels file")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise LabelError(f"{name}: a labels file is .csv or .json")
    try:
        read = _csv_entries if suffix == ".csv" else _json_entries
        return list(read(path, name))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise LabelError(f"{name}: cannot read it ({exc})") from None


class _Templates:
    """The answer classes of the labelled questions, compiled once (None: no compile)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._found: dict[str, type[BaseAnswer] | None] = {}

    def of(self, question: Question) -> type[BaseAnswer] | None:
        if question.id not in self._found:
            try:
                found = compile_template(question.template_code, seconds=self.seconds)
            except TemplateError:
                found = None  # the item errors at ValidateTemplate, as any broken template
            self._found[question.id] = found
        return self._found[question.id]


def _field_label(
    where: str, question: Question, answer_class: type[BaseAnswer] | None, name: str, given: Any
) -> FieldLabel:
    if answer_class is None:
        return FieldLabel(name, given, given)
    fields = {key: info for key, info in answer_class.model_fields.items() if key != "id"}
    info = fields.get(name)
    if info is None:
        raise LabelError(
            f"{where}: field {name!r} is not a field of the template of question "
            f"{question.id!r} (fields: {', '.join(fields) or 'none'})"
        )
    kind: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    try:
        value = adapter.validate_python(given)
    except ValidationError as first:
        try:  # a CSV cell holding JSON: a list, an object, null
            value = adapter.validate_python(json.loads(given) if isinstance(given, str) else given)
        except (ValueError, ValidationError):
            problem = first.errors()[0].get("msg", "invalid")
            raise LabelError(
                f"{where}: field {name!r}: {given!r} does not fit its type ({problem})"
            ) from None
    meta = answer_class.verified_fields().get(name)
    normalize = getattr(meta.verify_with, "normalize", None) if meta is not None else None
    return FieldLabel(name, given, value, adapter, tuple(normalize or ()))


def _questions(checkpoints: Sequence[Path]) -> dict[str, tuple[Path, Question]]:
    found: dict[str, tuple[Path, Question]] = {}
    for checkpoint in checkpoints:
        try:
            benchmark = load_checkpoint(checkpoint)
        except CheckpointError as exc:
            raise LabelError(str(exc)) from None
        for question in benchmark.questions:
            found.setdefault(question.id, (checkpoint, question))
    return found


def _label_id(given: Any, question_id: str, answer: Mapping[str, Any]) -> str:
    if given not in (None, ""):
        return slug(str(given), 40)
    text = f"{question_id}\0{answer_digest_text(answer)}"
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def load_labels(path: Path, checkpoints: Sequence[Path], seconds: float | None) -> LabelSet:
    """Read and check ``path`` against the questions (and templates) of ``checkpoints``;
    ``seconds``: the run's template time limit (templates with labelled fields compile)."""
    entries = read_entries(path)
    questions = _questions(checkpoints)
    recorded = RecordedAnswers(path.parent)
    templates = _Templates(seconds)
    labels: list[Label] = []
    homes: dict[str, Path] = {}
    seen: dict[str, str] = {}
    for order, (where, entry) in enumerate(entries):
        question_id = str(entry.get("question_id") or "").strip()
        if not question_id:
            raise LabelError(f"{where}: no question_id")
        if question_id not in questions:
            names = ", ".join(shown(c) for c in checkpoints)
            raise LabelError(f"{where}: question {question_id!r} is in none of {names}")
        checkpoint, question = questions[question_id]
        verdict = entry.get("verdict")
        people = VERDICTS.get(verdict.strip().lower()) if isinstance(verdict, str) else None
        if people is None:
            raise LabelError(f"{where}: verdict {verdict!r} is not pass or fail")
        text, reference = entry.get("answer"), entry.get("answer_ref")
        if (text is None) == (reference is None):
            raise LabelError(f"{where}: give either answer or answer_ref")
        try:
            if reference is not None:
                answer = recorded.answer(str(reference), question_id)
            else:
                answer = given_answer(text)
        except AnswerError as exc:
            raise LabelError(f"{where}: {exc}") from None
        label_id = _label_id(entry.get("label"), question_id, answer)
        if label_id in seen:
            twice = (
                f"label {label_id!r} is also {seen[label_id]}"
                if entry.get("label") not in (None, "")
                else f"the same answer to {question_id!r} as {seen[label_id]}"
            )
            raise LabelError(f"{where}: duplicate label: {twice}")
        seen[label_id] = where
        answer_class = templates.of(question) if entry["fields"] else None
        fields = tuple(
            _field_label(where, question, answer_class, name, value)
            for name, value in entry["fields"].items()
        )
        labels.append(Label(label_id, order, where, question_id, people, answer, fields))
        homes[label_id] = checkpoint
    if not labels:
        raise LabelError(f"{shown(path)}: no labels")
    return LabelSet(path, tuple(labels), homes)
