"""The two wings and the engine's layers, read from the source: which package may import which.

Every import counts, function-local ones included; imports under ``if TYPE_CHECKING:`` do not
(they never run). The root ``pytest_karenina/__init__.py`` (the lazy public API) is left out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import pytest_karenina

ROOT = Path(pytest_karenina.__file__).parent
PACKAGE = ROOT.name
ENGINE = ("results", "templates", "rubrics", "checkpoint", "config", "llm", "prompts", "pipeline")
ALLOWED: dict[str, set[str]] = {
    "results": set(),
    "templates": {"results"},
    "rubrics": {"results"},
    "checkpoint": {"rubrics", "results"},
    "config": {"results", "checkpoint"},
    "llm": {"config", "results"},
    "prompts": {"llm", "rubrics", "templates", "config", "results"},
    "pipeline": set(ENGINE) - {"pipeline"},
}
"""Engine package -> the other packages of ``pytest_karenina`` it may import."""
PYTEST_NAMES = {"pytest", "_pytest", "pluggy", "xdist", "pytest_html"}
"""Distributions only the plugin wing may import."""


@dataclass(frozen=True)
class Import:
    """One imported module name, where it is imported."""

    module: str
    """The importing module, dotted."""
    line: int
    target: str
    """The imported module (or, for ``from m import name``, ``m.name``: the name may be a
    submodule)."""

    def __str__(self) -> str:
        return f"{self.module} (line {self.line}) imports {self.target}"


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of ``path`` and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _walk(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node under ``nodes``, skipping the body of ``if TYPE_CHECKING:`` (its ``else``
    runs, so it is kept)."""
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from _walk(node.orelse)
            continue
        yield node
        yield from _walk(ast.iter_child_nodes(node))


def imports_in(source: str, module: str, is_package: bool = False) -> list[Import]:
    """The imports that run in ``source``, the text of ``module``."""
    found: list[Import] = []
    for node in _walk(ast.parse(source).body):
        if isinstance(node, ast.Import):
            found.extend(Import(module, node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source_module = _absolute(node, module, is_package)
            found.extend(
                Import(module, node.lineno, f"{source_module}.{alias.name}") for alias in node.names
            )
    return found


def imports_of(path: Path) -> list[Import]:
    module, is_package = _module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), module, is_package)


def _package_of(dotted: str) -> str | None:
    """The package of ``pytest_karenina`` a dotted name lies in; ``""`` for the root itself;
    None outside ``pytest_karenina``."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) > 1 and (ROOT / parts[1]).is_dir():
        return parts[1]
    return ""


def _all_imports() -> list[Import]:
    return [
        found
        for path in sorted(ROOT.rglob("*.py"))
        if path != ROOT / "__init__.py"
        for found in imports_of(path)
    ]


IMPORTS = _all_imports()


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for found in IMPORTS:
        source, target = _package_of(found.module), _package_of(found.target)
        if source and target is not None and target != source:
            graph.setdefault(source, set()).add(target or PACKAGE)
    return graph


SAMPLE = """\
from typing import TYPE_CHECKING
from . import sibling
if TYPE_CHECKING:
    import hidden
else:
    import shown
def run():
    import local
    from ..up import name
    if TYPE_CHECKING:
        import hidden_too
"""


def test_the_reader_counts_what_runs() -> None:
    """Function-local imports count, ``if TYPE_CHECKING:`` bodies do not (their else does),
    relative imports are made absolute, line numbers kept."""
    found = imports_in(SAMPLE, "pkg.sub.mod")
    assert [(i.line, i.target) for i in found] == [
        (1, "typing.TYPE_CHECKING"),
        (2, "pkg.sub.sibling"),
        (6, "shown"),
        (8, "local"),
        (9, "pkg.up.name"),
    ]
    assert [i.target for i in imports_in(SAMPLE, "pkg.sub", is_package=True)][1] == (
        "pkg.sub.sibling"
    )
    assert str(found[4]) == "pkg.sub.mod (line 9) imports pkg.up.name"


def test_module_names() -> None:
    """Paths become dotted module names; a package's ``__init__`` is the package."""
    assert _module_name(ROOT / "plugin" / "report" / "junit.py") == (
        f"{PACKAGE}.plugin.report.junit",
        False,
    )
    assert _module_name(ROOT / "plugin" / "__init__.py") == (f"{PACKAGE}.plugin", True)
    assert _package_of(f"{PACKAGE}.templates.compiler.compile_template") == "templates"
    assert _package_of(f"{PACKAGE}.load_checkpoint") == ""
    assert _package_of("pydantic.BaseModel") is None


def test_every_engine_package_is_known() -> None:
    """A new package under ``pytest_karenina/`` must be placed in the layers first."""
    packages = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert packages == {*ENGINE, "plugin"}


@pytest.mark.parametrize("package", ENGINE)
def test_engine_package_imports_only_lower_layers(package: str) -> None:
    """Each engine package imports only the packages its layer allows (never the plugin, nor
    the lazy root package)."""
    allowed = ALLOWED[package] | {package}
    offending = [
        str(found)
        for found in IMPORTS
        if _package_of(found.module) == package
        and _package_of(found.target) is not None
        and _package_of(found.target) not in allowed
    ]
    assert offending == [], "\n".join(offending)


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of ``graph`` (its nodes in order), or ``[]``."""
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        return list(error.args[1])
    return []


def test_the_layers_have_no_cycle() -> None:
    """The allowed package graph, and the measured one, are acyclic."""
    assert _cycle(ALLOWED) == []
    assert _cycle(_graph()) == []


def test_no_module_cycle() -> None:
    """No import cycle between modules either (design, section 2: lazy imports included)."""
    modules = {_module_name(path)[0] for path in ROOT.rglob("*.py")}

    def resolved(target: str) -> str | None:
        parts = target.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in modules:
                return ".".join(parts[:end])
        return None

    graph: dict[str, set[str]] = {}
    for found in IMPORTS:
        target = resolved(found.target)
        if target not in (None, PACKAGE, found.module):
            graph.setdefault(found.module, set()).add(str(target))
    assert len(graph) > 50
    assert _cycle(graph) == []


def test_engine_never_imports_pytest() -> None:
    """The engine runs without pytest: no pytest, _pytest, pluggy or pytest plugin import."""
    offending = [
        str(found)
        for found in IMPORTS
        if _package_of(found.module) in ENGINE and found.target.split(".")[0] in PYTEST_NAMES
    ]
    assert offending == [], "\n".join(offending)


def test_plugin_uses_public_pytest_only() -> None:
    """The plugin never reaches into ``_pytest``."""
    offending = [
        str(found)
        for found in IMPORTS
        if _package_of(found.module) == "plugin" and found.target.split(".")[0] == "_pytest"
    ]
    assert offending == [], "\n".join(offending)


def test_the_reader_finds_the_plugins_own_imports() -> None:
    """A sanity floor: the plugin imports pytest and the pipeline; the pipeline imports llm."""
    graph = _graph()
    assert {"pipeline", "config", "rubrics"} <= graph["plugin"]
    assert "llm" in graph["pipeline"]
    plugin_imports = {f.target.split(".")[0] for f in IMPORTS if _package_of(f.module) == "plugin"}
    assert "pytest" in plugin_imports
