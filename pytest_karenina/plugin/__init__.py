"""pytest entry point (``pytest11`` name ``karenina``): bootstrap hooks only.

Imported by every pytest run in an environment where pytest-karenina is installed, so it
imports nothing but pytest, the standard library and the plugin's own light modules
(options, stash keys, hook specifications). The engine and the role plugins load only when
a checkpoint is named (``--karenina`` or the ini ``karenina_checkpoints``):
:func:`pytest_configure` then registers the plugins of this process's role.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin import hookspecs, stage_import_paths
from pytest_karenina.plugin.collect.checkpoint_paths import check_test_paths, expand_directories
from pytest_karenina.plugin.options.declare import add_options
from pytest_karenina.plugin.options.workers import start_workers
from pytest_karenina.plugin.stash import CHECKPOINTS_KEY


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Turn each checkpoint into a collection argument (the ini list acts like testpaths); a
    directory stands for the checkpoints under it."""
    namespace = early_config.known_args_namespace
    positional = [str(arg).partition("::")[0] for arg in (namespace.file_or_dir or [])]
    given = [str(path) for path in (namespace.karenina_checkpoints or [])]
    source = "--karenina"
    if not given and not positional:
        given = [str(path) for path in early_config.getini("karenina_checkpoints")]
        source = "karenina_checkpoints"
    given = expand_directories(given, early_config.getini("norecursedirs"), source)
    # ``--karenina b.jsonld::q1`` selects like the positional ``b.jsonld::q1``.
    wanted = [arg.partition("::")[0] for arg in given]
    named = {Path(arg).resolve() for arg in positional}
    missing = [a for a, c in zip(given, wanted, strict=True) if Path(c).resolve() not in named]
    # In front: a bare yes/no flag at the end (``--karenina-abstention``) must not take a
    # checkpoint path as its value.
    args[:0] = missing
    resolved = dict.fromkeys(Path(p).resolve() for p in wanted)  # ordered, no duplicates
    check_test_paths(positional, resolved)
    early_config.stash[CHECKPOINTS_KEY] = tuple(resolved)
    if resolved:  # before pytest imports the conftest files
        stage_import_paths.install()
        early_config.add_cleanup(stage_import_paths.uninstall)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, int | pytest.ExitCode, Any]:
    """``--karenina-workers``: before xdist's own hook reads ``-n`` (a wrapper runs first)."""
    start_workers(config, bool(config.stash.get(CHECKPOINTS_KEY, ())))
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "karenina: a question of a Karenina benchmark checkpoint")
    checkpoints = config.stash.get(CHECKPOINTS_KEY, ())
    if not checkpoints:
        return
    # Imported here, not at the top: this loads the engine, which runs without
    # checkpoints must not pay for.
    from pytest_karenina.plugin.activate import activate

    activate(config, checkpoints)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    checkpoints = parent.config.stash.get(CHECKPOINTS_KEY, ())
    if checkpoints and file_path.resolve() in checkpoints:
        # Imported here for the same reason as in pytest_configure.
        from pytest_karenina.plugin.collect.items import CheckpointFile

        rootpath = parent.config.rootpath
        if file_path.is_relative_to(rootpath):
            return CheckpointFile.from_parent(parent, path=file_path)
        # Outside the rootdir pytest would name it "" (or ../../..): its file name reads best.
        return CheckpointFile.from_parent(parent, path=file_path, nodeid=file_path.name)
    return None
