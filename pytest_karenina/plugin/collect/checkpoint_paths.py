"""The checkpoint files a run names: a directory stands for every checkpoint under it, and a
checkpoint given as a plain test path gets a hint instead of pytest's "not found".

The entry module imports this, so it imports only pytest and the standard library.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

SUFFIX = ".jsonld"
"""What a checkpoint file's name ends with (Karenina saves benchmarks as JSON-LD)."""
VENV_MARKER = "pyvenv.cfg"
"""A directory holding this file is a virtual environment: installed packages, never the
project's checkpoints."""


def _skipped(directory: Path, norecurse: Sequence[str]) -> bool:
    """Directories pytest would not look into either: names matching ``norecursedirs``
    (by default hidden ones, ``build``, ``dist``, ``node_modules``, ``venv``...), and
    virtual environments."""
    name = directory.name
    if any(fnmatch.fnmatch(name, pattern) for pattern in norecurse):
        return True
    return (directory / VENV_MARKER).is_file()


def checkpoints_under(directory: Path, norecurse: Sequence[str]) -> list[Path]:
    """Every ``*.jsonld`` file under ``directory`` but hidden ones, in pytest's order (sorted
    by path), not looking into the directories :func:`_skipped` names nor following
    symlinked ones."""
    found: list[Path] = []
    for root, directories, files in os.walk(directory):
        here = Path(root)
        directories[:] = [d for d in directories if not _skipped(here / d, norecurse)]
        found.extend(
            here / name for name in files if name.endswith(SUFFIX) and not name.startswith(".")
        )
    return sorted(found)


def expand_directories(given: Iterable[str], norecurse: Sequence[str], source: str) -> list[str]:
    """``given`` (``PATH`` or ``PATH::ID`` arguments) with each directory replaced by the
    checkpoints under it; usage errors, naming ``source`` (the option or ini key), for a
    directory without checkpoints or with a question id."""
    expanded: list[str] = []
    for arg in given:
        path, sep, _ = arg.partition("::")
        if not Path(path).is_dir():
            expanded.append(arg)
            continue
        if sep:
            raise pytest.UsageError(
                f"{source} {arg}: a question id needs its checkpoint file, not a directory"
            )
        found = checkpoints_under(Path(path), norecurse)
        if not found:
            raise pytest.UsageError(
                f"{source} {path}: no checkpoint (*{SUFFIX} file) in this directory or below it"
            )
        expanded.extend(str(checkpoint) for checkpoint in found)
    return expanded


def check_test_paths(positional: Iterable[str], checkpoints: Iterable[Path]) -> None:
    """A usage error for a checkpoint given as a test path only (``pytest bench.jsonld``),
    which pytest would call "not found": it says how to run it."""
    named = set(checkpoints)
    for arg in positional:
        path = Path(arg)
        if path.suffix == SUFFIX and path.is_file() and path.resolve() not in named:
            raise pytest.UsageError(
                f"{arg} is a Karenina checkpoint: collect it with --karenina "
                f"(pytest --karenina {arg} --karenina-answering-model provider:model)"
            )
