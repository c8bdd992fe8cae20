"""Catching a configuration pytest read from the wrong place because of a checkpoint path.

pytest decides its rootdir and configuration file before any plugin of the environment is
loaded, from the command line's paths: in ``pytest --karenina /data/bench.jsonld`` it takes
the checkpoint for a test path and looks for its configuration from ``/data`` upwards. Run
from a project whose configuration holds the ``karenina_*`` settings, those settings would be
silently ignored. No public hook comes early enough to change that, so the run stops and says
how to run it: ``--karenina=/data/bench.jsonld`` (an option pytest does not take for a path)
or ``-c`` naming the configuration file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

CONFIG_FILES: dict[str, str | None] = {
    "pytest.toml": None,
    ".pytest.toml": None,
    "pytest.ini": None,
    ".pytest.ini": None,
    "pyproject.toml": "[tool.pytest",
    "tox.ini": "[pytest]",
    "setup.cfg": "[tool:pytest]",
}
"""pytest's configuration files in its order of preference, with the section that makes a
shared file a pytest configuration (None: the file always is one)."""


def invocation_config(start: Path) -> Path | None:
    """The configuration file plain ``pytest`` run in ``start`` without paths would read."""
    for directory in (start, *start.parents):
        for name, section in CONFIG_FILES.items():
            path = directory / name
            if path.is_file() and (section is None or section in _text(path)):
                return path
    return None


def misplaced_config(config: pytest.Config, checkpoints: Sequence[Path]) -> str | None:
    """Why the run would ignore the ``karenina_*`` settings of the invocation directory's
    configuration (a usage message), or None when pytest read that configuration."""
    expected = invocation_config(config.invocation_params.dir)
    if expected is None or expected == config.inipath or "karenina_" not in _text(expected):
        return None
    outside = [path for path in checkpoints if not path.is_relative_to(expected.parent)]
    if not outside:
        return None
    read = str(config.inipath) if config.inipath else "no configuration file"
    return (
        f"--karenina {outside[0]}: pytest took the checkpoint for a test path and looked for "
        f"its configuration from {outside[0].parent}, so it read {read} and would ignore the "
        f"karenina_* settings of {expected}. Write --karenina={outside[0]} (with '=', pytest "
        f"does not take it for a path), or pass -c {expected}."
    )


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
