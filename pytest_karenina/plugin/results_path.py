"""Checks on ``--karenina-results PATH`` before anything is written there.

The export is assembled at the end of the run and replaces ``PATH`` atomically: pointing it at
a checkpoint, or at any other file that is not an export, would destroy that file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

EXPORT_MARKERS = (b'"format_version"', b'"job_summary"')
"""Either appears near the start of an export (format 2.2 or an older one)."""
HEAD_BYTES = 4096


def check_results_path(path: Path, checkpoints: Sequence[Path]) -> None:
    """Raise :class:`pytest.UsageError` when the run must not write its export to ``path``."""
    flag = "--karenina-results"
    resolved = path.resolve()
    if resolved in {checkpoint.resolve() for checkpoint in checkpoints}:
        raise pytest.UsageError(f"{flag} {path}: that is a checkpoint of this run")
    for parent in resolved.parents:
        if parent.exists() and not parent.is_dir():
            raise pytest.UsageError(f"{flag} {path}: {parent} is a file, not a directory")
    if resolved.is_dir():
        raise pytest.UsageError(f"{flag} {path}: that is a directory; name a file in it")
    if resolved.is_file() and not _is_export(resolved):
        raise pytest.UsageError(
            f"{flag} {path}: the file exists and is not a results export; the run would "
            "replace it (delete it or choose another path)"
        )


def _is_export(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(HEAD_BYTES)
    except OSError:
        return False
    return not head.strip() or any(marker in head for marker in EXPORT_MARKERS)
