"""``--karenina-changed-since REF``: which questions changed since a git revision.

A question changed when its text, expected answer, template code, rubric, few-shot examples
or workspace path differ from the checkpoint at ``REF`` (``git show REF:./<file>``), when a
file of its workspace directory differs from ``REF`` (changed, added, removed; untracked
files that git does not ignore count), or when it is new. Every question counts as changed
when what applies to all of them changed since ``REF``: the checkpoint's global rubrics, the
``--karenina-config`` preset, or a setting of the ini file that changes answers or verdicts
(models, mode, checks), as a ``karenina_*`` key or in its ``addopts``. Dates and other
bookkeeping are not compared. A scenario (``scenario:<name>``) changed when anything of its
checkpoint form differs, or is new when no scenario of that name was there.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
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
from pytest_karenina.plugin.collect.selection import deselect
from pytest_karenina.plugin.options.answer_settings import ini_answer_settings
from pytest_karenina.plugin.stash import UNCHANGED_ITEMS_KEY
from pytest_karenina.rubrics.traits import Rubric


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


def _git(args: list[str], directory: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args], cwd=directory, capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git could not run in {directory}: {exc}") from None


def commit_of(ref: str, directory: Path) -> str:
    """The commit ``ref`` names, seen from ``directory``; :class:`GitError` when none."""
    known = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], directory)
    if known.returncode != 0:
        why = known.stderr.decode("utf-8", "replace").strip() or "not a commit of this repository"
        raise GitError(f"git cannot find {ref!r} from {directory} ({why})")
    return known.stdout.decode("ascii", "replace").strip()


def git_show(ref: str, path: Path) -> str | None:
    """``path``'s content at ``ref`` (None when it did not exist there)."""
    commit = commit_of(ref, path.parent)
    shown = _git(["show", f"{commit}:./{path.name}"], path.parent)
    # Not UTF-8 there: the checkpoint or ini file does not parse, and compares as changed.
    return shown.stdout.decode("utf-8", errors="replace") if shown.returncode == 0 else None


def changed_files(ref: str, directory: Path, root: Path) -> tuple[Path, frozenset[Path]] | None:
    """The top of the repository of ``directory``, and the files under ``root`` that differ
    between ``ref`` and the working tree there (changed, added or removed since ``ref``, and
    untracked files git does not ignore); None when git cannot tell (``root`` is missing or
    outside that repository)."""
    commit = commit_of(ref, directory)
    top = _git(["rev-parse", "--show-toplevel"], directory)
    if top.returncode != 0 or not root.is_dir():
        return None
    base = Path(top.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
    where = str(root.resolve())
    listings = (
        ["diff", "--no-renames", "--name-only", "-z", commit, "--", where],
        ["ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", where],
    )
    found: set[Path] = set()
    for args in listings:
        listed = _git(["--literal-pathspecs", *args], directory)
        if listed.returncode != 0:  # e.g. the root is outside the repository
            return None
        names = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
        found.update(base / name for name in names if name)
    return base, frozenset(found)


class WorkspaceChanges:
    """Whether a question's workspace directory changed since ``ref`` (one ``git diff`` and
    one ``git ls-files`` per workspace root, on first use)."""

    def __init__(self, ref: str, directory: Path, root: Path) -> None:
        self.ref, self.directory, self.root = ref, directory, root
        self._found: tuple[Path, frozenset[Path]] | None = None
        self._listed = False

    def changed(self, workspace_path: str) -> bool:
        """True also when git cannot tell (the workspace is outside the repository)."""
        if not self._listed:
            self._found = changed_files(self.ref, self.directory, self.root)
            self._listed = True
        workspace = (self.root / workspace_path).resolve()
        if self._found is None or not workspace.is_relative_to(self._found[0]):
            return True
        return any(name.is_relative_to(workspace) for name in self._found[1])


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


def _scenario_prints(raw: list[Any] | None) -> dict[str, str]:
    """``scenario:<name>`` -> a hash of the scenario's checkpoint form (its nodes' questions
    and templates, edges, code and criteria), for every named scenario."""
    found = {}
    for data in raw or []:
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name:
            text = json.dumps(data, sort_keys=True, default=str)
            found[f"scenario:{name}"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return found


def _rubric_data(rubric: Rubric | None) -> Any:
    """A rubric as JSON-native data; a callable trait's pickled bytes (not UTF-8) as base64,
    so two versions compare byte for byte."""
    if rubric is None:
        return None
    return to_jsonable_python(rubric.model_dump(), bytes_mode="base64")


def _globals(benchmark: Benchmark) -> Any:
    return [_rubric_data(benchmark.global_rubric), _rubric_data(benchmark.global_dynamic_rubric)]


def changes_since(
    ref: str,
    benchmarks: Iterable[tuple[Path, Benchmark]],
    shared: Iterable[Path],
    include_unfinished: bool = False,
    workspace_root: Path | None = None,
) -> ChangeSet:
    """Compare each checkpoint (with its loaded benchmark) with its version at ``ref``;
    ``shared``: files whose change makes every question changed (preset, ini file).
    Questions marked ``finished: false`` take part only with ``include_unfinished`` (the
    run skips them otherwise). ``workspace_root``: where question workspaces live (default:
    each checkpoint's directory, as for the run)."""
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
        workspaces = WorkspaceChanges(ref, path.parent, workspace_root or path.parent)
        scenario_prints = _scenario_prints(old.scenarios if old is not None else None)
        for key, known_print in _scenario_prints(benchmark.scenarios).items():
            before = scenario_prints.get(key)
            (new if before is None else changed if before != known_print else unchanged).add(key)
        for question in benchmark.questions:
            if not (question.finished or include_unfinished):
                continue
            known = prints.get(question.id)
            if known is None:
                new.add(question.id)
            elif known != fingerprint(question) or (
                question.workspace_path and workspaces.changed(question.workspace_path)
            ):
                changed.add(question.id)
            else:
                unchanged.add(question.id)
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
        dropped = deselect(config, items, lambda item: item.selection_id in unchanged)
        config.stash[UNCHANGED_ITEMS_KEY] = dropped

    def pytest_report_header(self) -> list[str]:
        return [self.changes.header()]


def change_set(
    ref: str,
    checkpoints: Iterable[Path],
    shared: Iterable[Path],
    include_unfinished: bool,
    workspace_root: Path | None = None,
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
        return changes_since(ref, loaded, shared, include_unfinished, workspace_root)
    except GitError as exc:
        raise pytest.UsageError(f"--karenina-changed-since: {exc}") from None
