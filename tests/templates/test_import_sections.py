"""Imports in template code: an import of what is loaded already is no uninterrupted section.

Only an import that loads or initialises something can be left half-done by the time limit;
one that finds its module (and every name it asks for) loaded takes no import lock, and
pydantic makes several of those while a template class is built.
"""

from __future__ import annotations

import builtins
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pytest_karenina.templates import process_guard
from pytest_karenina.templates.time_limit import time_limit


@pytest.fixture
def sections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The imports that ran as uninterrupted sections (the guard's section, counted)."""
    seen: list[str] = []
    real = process_guard.uninterrupted

    @contextmanager
    def counting() -> Iterator[None]:
        seen.append("section")
        with real():
            yield

    monkeypatch.setattr(process_guard, "uninterrupted", counting)
    return seen


def _write_package(root: Path, name: str) -> None:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n")
    (package / "child.py").write_text(textwrap.dedent("CHILD = 2\n"))


def test_imports_of_loaded_modules_are_no_sections(sections: list[str]) -> None:
    package_globals = {"__package__": "pydantic._internal", "__name__": "pydantic._internal.x"}
    with time_limit(30.0, "template code"):
        import json  # noqa: F401

        from pydantic import main  # noqa: F401

        builtins.__import__("_typing_extra", package_globals, None, ("eval_type",), 1)
        builtins.__import__("pydantic.main", None, None, ("BaseModel",), 0)
    assert sections == []


def test_imports_that_load_something_are_sections(
    sections: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_package(tmp_path, "karenina_fast_path_probe")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("karenina_fast_path_probe", "karenina_fast_path_probe.child"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with time_limit(30.0, "template code"):
        import karenina_fast_path_probe  # type: ignore[import-not-found]

        assert sections == ["section"]  # the package itself, loaded here
        from karenina_fast_path_probe import child  # type: ignore[import-not-found]

        assert sections == ["section"] * 2  # a submodule not loaded yet
        from karenina_fast_path_probe import VALUE, child  # type: ignore[import-not-found]  # noqa: F401, F811

        assert sections == ["section"] * 2  # both loaded now: no section
        builtins.__import__("child", {"__package__": "karenina_fast_path_probe"}, None, ("*",), 1)
        assert sections == ["section"] * 3  # a star import may load the package's submodules
    assert karenina_fast_path_probe.VALUE == 1 and child.CHILD == 2
