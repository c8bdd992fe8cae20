"""The two wings, the engine's layers and the plugin's rooms, read from the source: which
package (or room of the plugin) may import which.

Every import counts, function-local ones included; imports under ``if TYPE_CHECKING:`` do not
(they never run), except for cycles: no cycle between modules, type-level imports included.
The root ``pytest_karenina/__init__.py`` (the lazy public API) is left out.
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
ENGINE = (
    "results", "templates", "rubrics", "checkpoint", "config", "llm", "prompts", "pipeline",
    "scenarios",
)  # fmt: skip
ALLOWED: dict[str, set[str]] = {
    "results": set(),
    "templates": {"results"},
    "rubrics": {"results"},
    "checkpoint": {"rubrics", "results"},
    "config": {"results", "checkpoint"},
    "llm": {"config", "results"},
    "prompts": {"llm", "rubrics", "templates", "config", "results"},
    "pipeline": set(ENGINE) - {"pipeline", "scenarios"},
    "scenarios": set(ENGINE) - {"scenarios"},
}
"""Engine package -> the other packages of ``pytest_karenina`` it may import."""
PYTEST_NAMES = {"pytest", "_pytest", "pluggy", "xdist", "pytest_html"}
"""Distributions only the plugin wing may import."""
PLUGIN = f"{PACKAGE}.plugin"
_BASE = {"stash", "hookspecs", "process", "stage_import_paths", "safe_text"}
"""The plugin's lowest floor: they import nothing of the plugin at run time."""
_STAGES = {"options", "payload", "verdict", "stash", "process", "safe_text"}
PLUGIN_ALLOWED: dict[str, set[str]] = {
    **{room: set() for room in _BASE},
    "verdict": {"safe_text"},
    "payload": {"verdict"},
    "options": {"verdict"},
    "report": set(_STAGES) - {"report"},
    "run": set(_STAGES),
    "collect": _STAGES | {"run"},
    "gates": {"report", "collect", "options", "payload", "verdict", "safe_text"},
    "runner": _STAGES | {"collect", "run", "report"},
    "estimate": _STAGES | {"collect", "run", "report"},
    "controller": _STAGES | {"collect", "run", "report", "gates"},
    "cli": {"gates", "report", "options", "payload", "verdict", "safe_text"},
    "activate": _STAGES | {"collect", "run", "report", "gates", "runner", "estimate", "controller"},
    "__init__": {"activate", "collect", "hookspecs", "options", "stash", "stage_import_paths"},
}
"""Room of the plugin (a top-level module, or a sub-package) -> the rooms it may import, from
the top floor down: the entry module (``__init__``) switches the plugin on through
``activate``, which registers the role plugins (``runner``, ``controller``, ``estimate``);
the controller asks the ``gates``, which read what ``report/`` computed of the items that
``collect/`` made and ``run/`` ran; ``payload`` is the wire between the process that runs an
item and the one that reports; ``options/`` and ``verdict/`` stand below them all."""
ALLOWED_CYCLES: dict[frozenset[str], str] = {
    frozenset({f"{PACKAGE}.config.rules", f"{PACKAGE}.config.verification"}): (
        "type-level only: config/rules.py holds VerificationConfig's validators, which read "
        "the config they check by its type"
    ),
    frozenset({f"{PACKAGE}.templates.base_answer", f"{PACKAGE}.templates.field_evaluation"}): (
        "type-level only: templates/field_evaluation.py holds BaseAnswer's automatic verify(), "
        "which reads the answer it checks by its type"
    ),
}
"""Module cycles allowed, each with why (every one of them type-level only: run-time cycles
are never allowed)."""


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


def _walk(nodes: Iterable[ast.AST], types: bool = False) -> Iterator[ast.AST]:
    """Every node under ``nodes``, skipping the body of ``if TYPE_CHECKING:`` (its ``else``
    runs, so it is kept) unless ``types``."""
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node) and not types:
            yield from _walk(node.orelse)
            continue
        yield node
        yield from _walk(ast.iter_child_nodes(node), types)


def imports_in(
    source: str, module: str, is_package: bool = False, types: bool = False
) -> list[Import]:
    """The imports that run in ``source``, the text of ``module`` (with ``types``, the
    imports for type checkers too)."""
    found: list[Import] = []
    for node in _walk(ast.parse(source).body, types):
        if isinstance(node, ast.Import):
            found.extend(Import(module, node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source_module = _absolute(node, module, is_package)
            found.extend(
                Import(module, node.lineno, f"{source_module}.{alias.name}") for alias in node.names
            )
    return found


def imports_of(path: Path, types: bool = False) -> list[Import]:
    module, is_package = _module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), module, is_package, types)


def _package_of(dotted: str) -> str | None:
    """The package of ``pytest_karenina`` a dotted name lies in; ``""`` for the root itself;
    None outside ``pytest_karenina``."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) > 1 and (ROOT / parts[1]).is_dir():
        return parts[1]
    return ""


def _all_imports(types: bool = False) -> list[Import]:
    return [
        found
        for path in sorted(ROOT.rglob("*.py"))
        if path != ROOT / "__init__.py"
        for found in imports_of(path, types)
    ]


IMPORTS = _all_imports()
TYPED_IMPORTS = _all_imports(types=True)


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


MODULES = {_module_name(path)[0] for path in ROOT.rglob("*.py")}


def _resolved(target: str) -> str | None:
    """The module of ``pytest_karenina`` a dotted import names (its longest prefix)."""
    parts = target.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return ".".join(parts[:end])
    return None


def _module_graph(imports: Iterable[Import]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for found in imports:
        target = _resolved(found.target)
        if target not in (None, PACKAGE, found.module):
            graph.setdefault(found.module, set()).add(str(target))
    return graph


def test_no_module_cycle() -> None:
    """No import cycle between modules either (design, section 2: lazy imports included)."""
    graph = _module_graph(IMPORTS)
    assert len(graph) > 50
    assert _cycle(graph) == []


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The modules of each cycle of ``graph`` (strongly connected components of two or more)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(node: str, edges: dict[str, set[str]], out: list[str]) -> None:
        stack = [(node, iter(sorted(edges.get(node, ()))))]
        seen.add(node)
        while stack:
            current, rest = stack[-1]
            following = next((n for n in rest if n not in seen), None)
            if following is None:
                stack.pop()
                out.append(current)
            else:
                seen.add(following)
                stack.append((following, iter(sorted(edges.get(following, ())))))

    nodes = set(graph) | {target for targets in graph.values() for target in targets}
    for node in sorted(nodes):
        if node not in seen:
            visit(node, graph, order)
    reverse: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(source)
    seen.clear()
    found = []
    for node in reversed(order):
        if node not in seen:
            component: list[str] = []
            visit(node, reverse, component)
            if len(component) > 1:
                found.append(frozenset(component))
    return found


def test_no_module_cycle_of_type_level_imports() -> None:
    """Imports for type checkers close no cycle either, but the ones allowed with a reason."""
    assert _cycles({"a": {"b"}, "b": {"a", "c"}, "c": set()}) == [frozenset({"a", "b"})]
    cycles = _cycles(_module_graph(TYPED_IMPORTS))
    assert [sorted(cycle) for cycle in cycles if cycle not in ALLOWED_CYCLES] == []


def _room_of(dotted: str) -> str | None:
    """The room of the plugin a dotted name lies in (``__init__`` for the entry module);
    None outside the plugin."""
    if dotted != PLUGIN and not dotted.startswith(f"{PLUGIN}."):
        return None
    parts = dotted.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def test_every_plugin_room_is_placed() -> None:
    """A new top-level module or sub-package of the plugin must be placed in the map first."""
    plugin = ROOT / "plugin"
    rooms = {path.stem for path in plugin.glob("*.py")} | {
        path.name for path in plugin.iterdir() if (path / "__init__.py").is_file()
    }
    assert rooms == set(PLUGIN_ALLOWED)
    assert _cycle(PLUGIN_ALLOWED) == []


def test_plugin_rooms_import_only_the_rooms_below() -> None:
    """The plugin's internal direction: each room imports only the rooms its map allows,
    function-local imports included."""
    offending = []
    for found in IMPORTS:
        room, target = _room_of(found.module), _room_of(found.target)
        if room is None or target is None or target == room:
            continue
        if target not in PLUGIN_ALLOWED[room]:
            offending.append(f"{found} ({room} -> {target})")
    assert offending == [], "\n".join(offending)


def test_no_plugin_looks_another_up_by_name() -> None:
    """The plugin's own plugins are handed what they need when they are registered
    (``activate.py``); none finds another through the plugin manager."""
    offending = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "plugin").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if 'get_plugin("karenina' in line or "get_plugin('karenina" in line
    ]
    assert offending == []


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
