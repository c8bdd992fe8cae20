"""``--karenina-changed-since REF``: which questions changed since a git revision.

A question changed when its text, expected answer, template code, rubric, few-shot examples
or workspace differ from the checkpoint at ``REF`` (``git show REF:./<file>``), or when it
is new. Every question counts as changed when what applies to all of them changed since
``REF``: the checkpoint's global rubrics, the ``--karenina-config`` preset, or a
``karenina_*`` setting of the ini file that changes answers or verdicts (models, mode,
checks). Dates and other bookkeeping are not compared.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import subprocess
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_jsonable_python

from pytest_karenina.checkpoint import (
    Benchmark,
    CheckpointError,
    Question,
    load_checkpoint,
    parse_checkpoint,
)
from pytest_karenina.plugin.selection import deselect
from pytest_karenina.plugin.stash import UNCHANGED_ITEMS_KEY
from pytest_karenina.rubrics.traits import Rubric

ANSWER_SETTINGS = (
    "config", "answering_model", "parsing_model", "interface", "endpoint", "mode",
    "replicates", "abstention", "sufficiency", "embedding_check", "embedding_check_model",
    "embedding_check_threshold", "deep_judgment", "deep_judgment_rubric", "rubric_strategy",
    "rubric_gate", "rubric_gates", "rubric_score_threshold", "replicate_policy", "flaky",
)  # fmt: skip
"""The ``karenina_<name>`` ini settings that change answers or verdicts."""


class GitError(Exception):
    """git cannot answer: not a repository, an unknown revision, no git at all."""


@dataclass(frozen=True)
class ChangeSet:
    """The questions of the checkpoints, sorted by what happened to them since ``ref``."""

    ref: str
    changed: frozenset[str] = frozenset()
    new: frozenset[str] = frozenset()
    unchanged: frozenset[str] = frozenset()
    everything: str | None = None
    """Why every question counts as changed (None when questions were compared)."""

    def header(self) -> str:
        runs = len(self.changed) + len(self.new)
        total = runs + len(self.unchanged)
        text = f"karenina: changed since {self.ref}: {runs} of {total} questions run "
        text += f"({len(self.changed)} changed, {len(self.new)} new)"
        if self.everything:
            text += f"; all of them, {self.everything}"
        return text


def git_show(ref: str, path: Path) -> str | None:
    """``path``'s content at ``ref`` (None when it did not exist there)."""
    directory = path.parent
    try:
        known = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            cwd=directory, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        if known.returncode != 0:
            why = known.stderr.strip() or "not a commit of this repository"
            raise GitError(f"git cannot find {ref!r} from {directory} ({why})")
        shown = subprocess.run(
            ["git", "show", f"{ref}:./{path.name}"],
            cwd=directory, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git could not run in {directory}: {exc}") from None
    # Not UTF-8 there: the checkpoint or ini file does not parse, and compares as changed.
    return shown.stdout.decode("utf-8", errors="replace") if shown.returncode == 0 else None


def fingerprint(question: Question) -> str:
    """A hash of what a question is evaluated with."""
    data = {
        "text": question.text, "raw_answer": question.raw_answer,
        "template_code": question.template_code,
        "rubric": _rubric_data(question.rubric),
        "few_shot_examples": question.few_shot_examples,
        "workspace_path": question.workspace_path, "finished": question.finished,
    }  # fmt: skip
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def _rubric_data(rubric: Rubric | None) -> Any:
    """A rubric as JSON-native data; a callable trait's pickled bytes (not UTF-8) as base64,
    so two versions compare byte for byte."""
    if rubric is None:
        return None
    return to_jsonable_python(rubric.model_dump(), bytes_mode="base64")


def _globals(benchmark: Benchmark) -> Any:
    return [_rubric_data(benchmark.global_rubric), _rubric_data(benchmark.global_dynamic_rubric)]


def ini_answer_settings(text: str | None, name: str) -> dict[str, Any]:
    """The answer-changing ``karenina_*`` settings of an ini file's text (``name``: its file
    name, which says its format)."""
    if not text:
        return {}
    try:
        if name == "pyproject.toml":
            section = dict(tomllib.loads(text).get("tool", {}).get("pytest", {}))
            # [tool.pytest.ini_options], or pytest 9's native [tool.pytest] table
            values = {**section, **dict(section.pop("ini_options", None) or {})}
        else:
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(text)
            found = [s for s in ("pytest", "tool:pytest") if parser.has_section(s)]
            values = dict(parser[found[0]]) if found else {}
    except (ValueError, configparser.Error):
        return {"unreadable": text}
    return {
        key: values[f"karenina_{key}"] for key in ANSWER_SETTINGS if f"karenina_{key}" in values
    }


def changes_since(
    ref: str,
    benchmarks: Iterable[tuple[Path, Benchmark]],
    shared: Iterable[Path],
    include_unfinished: bool = False,
) -> ChangeSet:
    """Compare each checkpoint (with its loaded benchmark) with its version at ``ref``;
    ``shared``: files whose change makes every question changed (preset, ini file).
    Questions marked ``finished: false`` take part only with ``include_unfinished`` (the
    run skips them otherwise)."""
    everything = None
    for path in shared:
        before = git_show(ref, path)
        now = path.read_text(encoding="utf-8") if path.is_file() else None
        if path.suffix in (".toml", ".ini", ".cfg"):
            differs = ini_answer_settings(before, path.name) != ini_answer_settings(now, path.name)
        else:
            differs = before != now
        if differs and everything is None:
            everything = f"{path.name} changed"
    changed: set[str] = set()
    new: set[str] = set()
    unchanged: set[str] = set()
    for path, benchmark in benchmarks:
        text = git_show(ref, path)
        try:
            old = parse_checkpoint(text, source=f"{path.name} at {ref}") if text else None
        except CheckpointError:
            old = None
        if old is not None and _globals(old) != _globals(benchmark) and everything is None:
            everything = f"the global rubrics of {path.name} changed"
        prints = {q.id: fingerprint(q) for q in old.questions} if old is not None else {}
        for question in benchmark.questions:
            if not (question.finished or include_unfinished):
                continue
            known = prints.get(question.id)
            target = (
                new if known is None else changed if known != fingerprint(question) else unchanged
            )
            target.add(question.id)
    if everything is not None:
        changed, unchanged = changed | unchanged, set()
    return ChangeSet(ref, frozenset(changed), frozenset(new), frozenset(unchanged), everything)


class ChangedSincePlugin:
    """Deselects the items of unchanged questions and says so in the header."""

    def __init__(self, changes: ChangeSet) -> None:
        self.changes = changes

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        unchanged = self.changes.unchanged
        dropped = deselect(config, items, lambda item: item.question.id in unchanged)
        config.stash[UNCHANGED_ITEMS_KEY] = dropped

    def pytest_report_header(self) -> list[str]:
        return [self.changes.header()]


def change_set(
    ref: str, checkpoints: Iterable[Path], shared: Iterable[Path], include_unfinished: bool
) -> ChangeSet:
    """:func:`changes_since` for checkpoint files (one that cannot be read is left to its
    collection error); a usage error when git cannot answer."""
    loaded = []
    for path in checkpoints:
        try:
            loaded.append((path, load_checkpoint(path)))
        except CheckpointError:
            continue
    try:
        return changes_since(ref, loaded, shared, include_unfinished)
    except GitError as exc:
        raise pytest.UsageError(f"--karenina-changed-since: {exc}") from None
