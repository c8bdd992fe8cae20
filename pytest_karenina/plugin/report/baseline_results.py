"""The baseline run's results export (``--karenina-baseline-results``), read for the side by
side of each regression in the HTML report.

The file is the export ``--karenina-results`` writes: a header line, one result per line, then
the run's records. It is read line by line, so a damaged line costs only itself: it is named
with its line number and the other lines are still used. A file that is not such an export,
that a newer version wrote, or that another benchmark's run wrote is not used at all. Either
way the problems are lines for the terminal and the report; nothing stops the run's own
reports, and the file is never written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_karenina.plugin.report.item_record import RECORD_VERSION
from pytest_karenina.results.export import FORMAT_VERSION, RUN_KEY

ResultKey = tuple[str, str, int | None]
"""``(question id, answering model, replicate)``."""
LISTED = 3
"""Damaged lines a message names (it counts the others)."""
_SECTION = re.compile(r'^\],"(\w+)":\[$')
_RUN_HEAD = f'],"{RUN_KEY}":{{"run":'
_RUN_TAIL = ',"items":['
_RESULTS = ',"results":['


def model_key(identity: Any) -> str | None:
    """How an item names its answering model (the model config's id, else its name), from a
    result's ``metadata.answering``."""
    if not isinstance(identity, Mapping):
        return None
    found = identity.get("config_id") or identity.get("model_name")
    return found if isinstance(found, str) else None


def _version(text: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in str(text).split("."))
    except ValueError:
        return None


@dataclass
class BaselineRun:
    """The baseline run's results by question, answering model and replicate, and what was
    wrong with the file (empty when nothing was)."""

    path: Path
    results: dict[ResultKey, list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def of(self, question_id: str, model: str, replicate: int | None) -> list[dict[str, Any]]:
        return self.results.get((question_id, model, replicate), [])

    def _refuse(self, why: str) -> BaselineRun:
        self.results = {}
        self.problems.append(f"{self.path}: {why}: not used")
        return self


def read_baseline_run(path: Path, checkpoints: Collection[str] = ()) -> BaselineRun:
    """Read ``path``; ``checkpoints``: the file names of this run's checkpoints (an export
    of a run of none of them is another benchmark's)."""
    found = BaselineRun(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return found._refuse(f"cannot be read ({exc})")
    head = lines[0].strip() if lines else ""
    try:
        header = json.loads(head.removesuffix(_RESULTS) + "}") if head.endswith(_RESULTS) else None
    except ValueError:
        header = None
    if not isinstance(header, dict):
        return found._refuse(
            "line 1: not the header of a results export (write it with pytest --karenina-results)"
        )
    written = _version(header.get("format_version"))
    if written is None or written > _version(FORMAT_VERSION):  # type: ignore[operator]
        return found._refuse(
            f"line 1: format_version {header.get('format_version')!r} is newer than this "
            f"version reads ({FORMAT_VERSION})"
        )
    damaged: list[int] = []
    section = "results"
    run: Any = None
    for number, line in enumerate(lines[1:], start=2):
        text = line.strip()
        if text in ("", "]", "]}", "]}}", "}"):
            continue
        if text.startswith(_RUN_HEAD) and text.endswith(_RUN_TAIL):
            section = "items"
            try:
                run = json.loads(text[len(_RUN_HEAD) : -len(_RUN_TAIL)])
            except ValueError:
                damaged.append(number)
            continue
        if (match := _SECTION.match(text)) is not None:
            section = match.group(1)
            continue
        try:
            record = json.loads(text.rstrip(",")) if text.startswith("{") else None
        except ValueError:
            record = None
        if not isinstance(record, dict):
            damaged.append(number)
        elif section == "results" and not _add(found, record):
            damaged.append(number)
    if isinstance(run, dict):
        problem = _other_run(run, checkpoints)
        if problem is not None:
            return found._refuse(problem)
    if damaged:
        shown = ", ".join(str(n) for n in damaged[:LISTED])
        more = f" and {len(damaged) - LISTED} more" if len(damaged) > LISTED else ""
        noun = "line" if len(damaged) == 1 else "lines"
        found.problems.append(
            f"{path}: {noun} {shown}{more}: damaged (not a whole result): left out"
        )
    return found


def _add(found: BaselineRun, record: Mapping[str, Any]) -> bool:
    """Index one result; False when it is not one."""
    metadata = record.get("metadata")
    if not isinstance(metadata, Mapping):
        return False
    question, model = metadata.get("question_id"), model_key(metadata.get("answering"))
    replicate = metadata.get("replicate")
    if not isinstance(question, str) or model is None:
        return False
    if metadata.get("scenario_id") is not None:  # a scenario's turn: no question item
        return True
    if not (replicate is None or isinstance(replicate, int)):
        return False
    found.results.setdefault((question, model, replicate), []).append(dict(record))
    return True


def _other_run(run: Mapping[str, Any], checkpoints: Collection[str]) -> str | None:
    """Why the run records say the file is not this benchmark's baseline (None when they
    do not)."""
    version = run.get("version")
    if isinstance(version, int) and version > RECORD_VERSION:
        return (
            f"its run records are version {version}, newer than this version reads "
            f"({RECORD_VERSION})"
        )
    names = run.get("checkpoints")
    if isinstance(names, list) and checkpoints and not set(names) & set(checkpoints):
        return (
            f"a run of another benchmark ({', '.join(map(str, names))}; this run: "
            f"{', '.join(sorted(checkpoints))})"
        )
    return None
