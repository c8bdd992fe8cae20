"""Packaging: the pytest entry point, lazy public API, a cheap plugin import."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import pytest_karenina
from pytest_karenina import templates
from pytest_karenina.templates import primitives as primitives_module
from pytest_karenina.templates.primitives import SynonymMap, TracePrimitive, VerificationPrimitive

HEAVY = {
    "pydantic",
    "langchain_core",
    "langchain_openai",
    "torch",
    "sentence_transformers",
    "rapidfuzz",
    "transformers",
    "openai",
    "httpx",
    "dateutil",
}


def test_pytest11_entry_point_names_the_plugin_module() -> None:
    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.name == "karenina"]
    assert plugin.value == "pytest_karenina.plugin"


@pytest.mark.subprocess
def test_importing_the_plugin_loads_nothing_heavy() -> None:
    script = (
        "import json, sys\n"
        "import pytest_karenina.plugin\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    loaded = set(json.loads(output))
    assert "pytest_karenina" in loaded
    assert not loaded & HEAVY, loaded & HEAVY


@pytest.mark.subprocess
def test_importing_the_plugin_loads_no_engine() -> None:
    """The entry module reaches neither the engine's config models, the pipeline, nor
    pydantic (the engine's first heavy dependency)."""
    script = "import json, sys, pytest_karenina.plugin; print(json.dumps(sorted(sys.modules)))"
    output = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    loaded = set(json.loads(output))
    assert "pytest_karenina.plugin.options.declare" in loaded
    forbidden = ("pytest_karenina.config.verification", "pytest_karenina.pipeline", "pydantic")
    found = sorted(
        module
        for module in loaded
        if any(module == name or module.startswith(f"{name}.") for name in forbidden)
    )
    assert found == []


def test_public_api_is_lazy_and_complete() -> None:
    """``__all__`` is exactly the lazy names plus ``__version__``, and each lazy name is the
    object its module defines."""
    assert sorted(pytest_karenina.__all__) == sorted([*pytest_karenina._LAZY, "__version__"])
    assert len(set(pytest_karenina.__all__)) == len(pytest_karenina.__all__)
    for name, module in pytest_karenina._LAZY.items():
        assert getattr(pytest_karenina, name) is getattr(import_module(module), name), name
    assert isinstance(pytest_karenina.__version__, str) and pytest_karenina.__version__


def test_public_names_are_written_once() -> None:
    """``__all__`` derives from the lazy map (no list of its own), and the ``TYPE_CHECKING``
    block re-exports exactly the lazy names (``name as name``) from the modules the map names,
    so that type checkers see what ``__getattr__`` serves."""
    tree = ast.parse(Path(pytest_karenina.__file__).read_text(encoding="utf-8"))
    (spelled,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert not isinstance(spelled, ast.List | ast.Tuple | ast.Set)
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    found: dict[str, str | None] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom)
        for alias in statement.names:
            assert alias.asname == alias.name, alias.name
            found[alias.name] = statement.module
    assert found == pytest_karenina._LAZY


def _is_primitive(value: object) -> bool:
    return isinstance(value, type) and (
        issubclass(value, VerificationPrimitive | TracePrimitive) or value is SynonymMap
    )


def test_hand_kept_name_lists_agree() -> None:
    """Every primitive class reaches ``templates.__all__`` and the root's primitive list,
    and every root name taken from ``templates`` is exported there."""
    primitives = [name for name in primitives_module.__all__
                  if _is_primitive(getattr(primitives_module, name))]  # fmt: skip
    assert {"VerificationPrimitive", "TracePrimitive", "ExactMatch", "SynonymMap"} <= set(
        primitives
    )
    assert sorted(set(primitives) - set(templates.__all__)) == []
    assert sorted(set(primitives) - set(pytest_karenina._PRIMITIVE_NAMES)) == []
    assert sorted(set(pytest_karenina._PRIMITIVE_NAMES) - set(primitives)) == []
    from_templates = [n for n, m in pytest_karenina._LAZY.items() if m == templates.__name__]
    assert sorted(set(from_templates) - set(templates.__all__)) == []


@pytest.mark.parametrize(
    "package",
    [
        "pytest_karenina.templates",
        "pytest_karenina.templates.primitives",
        "pytest_karenina.rubrics",
        "pytest_karenina.results",
        "pytest_karenina.checkpoint",
        "pytest_karenina.pipeline",
        "pytest_karenina.llm",
        "pytest_karenina.prompts",
    ],
)
def test_every_exported_name_exists(package: str) -> None:
    """A package's ``__all__`` names only attributes it has, each once."""
    module = import_module(package)
    exported = list(module.__all__)
    assert exported, package
    assert [name for name in exported if not hasattr(module, name)] == []
    assert len(set(exported)) == len(exported)


def test_unknown_attribute_raises_attribute_error() -> None:
    try:
        pytest_karenina.does_not_exist  # noqa: B018
    except AttributeError as error:
        assert "does_not_exist" in str(error)
    else:
        raise AssertionError("expected AttributeError")
