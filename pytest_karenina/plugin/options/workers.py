"""``--karenina-workers auto|N``: xdist workers started for the user when a run is CPU-bound.

pytest-xdist reads ``config.option.numprocesses`` in its own ``pytest_cmdline_main`` (first
of the plain implementations) and turns it into ``--dist load`` with N local workers; setting
that option before its hook runs is how its maintainers advise a plugin or conftest to ask
for workers. The entry module's ``pytest_cmdline_main`` wrapper does so: a wrapper runs before
every plain implementation. ``-n`` on the command line (or in ``addopts``) always wins.

Imports only pytest, the standard library and the plugin's light modules: every pytest run
of the environment loads it.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_karenina.plugin.options.spec import Option, option_number, option_value, sourced

WORKERS = Option(
    "workers",
    "Start N xdist worker processes for the run (auto: one per usable core; 0 or 1: none); "
    "-n, when given, decides instead",
    metavar="auto|N",
)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def worker_count(option: Option, value: Any, cores: int) -> int:
    """The xdist workers ``value`` asks for on a machine of ``cores`` usable cores; 0 runs the
    items in this process (one worker would only add a process). A usage error naming the
    option (flag or ini key) for anything but ``auto`` or a whole number >= 0."""
    if str(value).strip().lower() == "auto":
        count = cores
    else:
        count = option_number(option, str(value).strip(), int, 0)
    return count if count >= 2 else 0


def start_workers(config: pytest.Config, checkpoints_named: bool) -> None:
    """Set xdist's ``numprocesses`` from ``--karenina-workers`` (or its ini twin) when the run
    names checkpoints, runs its items (not ``--collect-only``, ``--setup-plan`` or
    ``--setup-only``, nor ``--pdb``) and ``-n`` was not given. An xdist worker never does."""
    if hasattr(config, "workerinput") or not checkpoints_named:
        return
    option = sourced(config, WORKERS)
    value = option_value(config, option)
    if value is None:
        return
    count = worker_count(option, value, usable_cores())
    if getattr(config.option, "numprocesses", None) is not None:
        return  # -n given: the user's own choice
    opts = config.option
    if opts.collectonly or opts.setupplan or opts.setuponly or config.getoption("usepdb"):
        return
    if count and not config.pluginmanager.hasplugin("xdist"):
        raise pytest.UsageError(
            f"{option.label}: needs the pytest-xdist plugin, which is not loaded "
            "(installed with pytest-karenina; was it disabled with -p no:xdist?)"
        )
    if count:
        config.option.numprocesses = count
