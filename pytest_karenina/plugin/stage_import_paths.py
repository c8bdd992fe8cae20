"""Karenina's custom-stage import paths for ``conftest.py`` files, without Karenina installed.

Seed 002's stages import from ``karenina.benchmark.verification.stages.core.base`` (and
``.orchestrator``, ``.check_stage_base``, ``.autofail_stage_base``). While a run with
checkpoints is configured, a finder at the end of ``sys.meta_path`` serves those modules
(and their parent packages) from ``pytest_karenina.pipeline``, so such a conftest runs
unchanged. It is last in line: an installed Karenina is found first and used as it is, and
no module is served under a real ``karenina`` package. The finder and its modules leave when
the session's configuration is cleaned up.

This module loads in every pytest run: it imports nothing heavy until a conftest asks.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

_CORE = "karenina.benchmark.verification.stages.core"
_MODULES: dict[str, tuple[str, ...]] = {
    f"{_CORE}.base": ("ArtifactKeys", "BaseVerificationStage", "VerificationContext",
                      "VerificationStage"),
    f"{_CORE}.orchestrator": ("StageOrchestrator", "StageRegistry"),
    f"{_CORE}.check_stage_base": ("BaseCheckStage",),
    f"{_CORE}.autofail_stage_base": ("BaseAutoFailStage",),
}  # fmt: skip
_PACKAGES = ("karenina", "karenina.benchmark", "karenina.benchmark.verification",
             "karenina.benchmark.verification.stages", _CORE)  # fmt: skip
_MARK = "__pytest_karenina_stage_paths__"


class StagePathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves :data:`_MODULES` and their packages, and nothing under a real Karenina."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MODULES and fullname not in _PACKAGES:
            return None
        if fullname != "karenina" and not getattr(sys.modules.get("karenina"), _MARK, False):
            return None  # the parent is a real Karenina (or not imported through us)
        return importlib.util.spec_from_loader(fullname, self, is_package=fullname in _PACKAGES)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        setattr(module, _MARK, True)
        names = _MODULES.get(module.__name__, ())
        if names:
            from pytest_karenina import pipeline  # the engine, only when a conftest asks

            for name in names:
                setattr(module, name, getattr(pipeline, name))


def install() -> None:
    """Put the finder at the end of ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, StagePathFinder) for finder in sys.meta_path):
        sys.meta_path.append(StagePathFinder())


def uninstall() -> None:
    """Remove the finder and every module it served."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, StagePathFinder)]
    for name in (*_MODULES, *_PACKAGES):
        if getattr(sys.modules.get(name), _MARK, False):
            del sys.modules[name]
