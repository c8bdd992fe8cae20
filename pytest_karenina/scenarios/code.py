"""Checkpoint code of a scenario: state updates, edge conditions and outcome functions.

A checkpoint stores them as the source of a lambda (what Karenina writes) or of a ``def``.
They are compiled once, when the scenario loads, with the builtins templates get, and every
call runs under the run's template time limit (``template_time_limit``), as template code does:
a condition that loops forever costs its own scenario, not the run.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_karenina.templates.compiler import describe_exception, injected_names
from pytest_karenina.templates.karenina_shim import template_builtins
from pytest_karenina.templates.time_limit import TemplateTimeout, time_limit


class ScenarioCodeError(Exception):
    """Checkpoint code of a scenario raised, ran past its time limit or returned nonsense;
    the message says which code (``what``) and why."""


@dataclass(frozen=True)
class SourceFunction:
    """A function compiled from ``source``; ``what`` names it in errors (e.g. ``edge ask ->
    dose: conditionSource``)."""

    source: str
    what: str
    function: Callable[..., Any] = field(repr=False, compare=False)

    def __call__(self, *args: Any, limit: float | None) -> Any:
        """Call the function under ``limit`` seconds (None: no limit); ScenarioCodeError
        for anything it raises."""
        try:
            with time_limit(limit, f"{self.what}"):
                return self.function(*args)
        except TemplateTimeout as exc:
            raise ScenarioCodeError(f"{self.what}: {exc}") from exc
        except Exception as exc:
            raise ScenarioCodeError(f"{self.what} raised {describe_exception(exc)}") from exc


def compile_source(source: str, what: str, limit: float | None) -> SourceFunction:
    """Compile ``source``: an expression evaluating to a callable (``lambda state: ...``), or
    statements defining functions (the last one defined is used). ValueError says why not."""
    text = textwrap.dedent(source).strip()
    if not text:
        raise ValueError("empty source")
    namespace: dict[str, Any] = {**injected_names(), "__builtins__": template_builtins()}
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        tree = None
    try:
        with time_limit(limit, f"compiling {what}"):
            if tree is not None:
                function = eval(compile(tree, f"<{what}>", "eval"), namespace)
            else:
                function = _defined(text, what, namespace)
    except SyntaxError as exc:
        raise ValueError(f"syntax error: {exc.msg} (line {exc.lineno})") from exc
    except TemplateTimeout as exc:
        raise ValueError(str(exc)) from exc
    except Exception as exc:
        raise ValueError(f"compiling it raised {describe_exception(exc)}") from exc
    if not callable(function):
        raise ValueError(f"it is not a function but {type(function).__name__}")
    return SourceFunction(source, what, function)


def _defined(text: str, what: str, namespace: dict[str, Any]) -> Any:
    module = ast.parse(text, mode="exec")
    names = [node.name for node in module.body if isinstance(node, ast.FunctionDef)]
    if not names:
        raise ValueError("neither a lambda nor a function definition")
    exec(compile(module, f"<{what}>", "exec"), namespace)
    return namespace[names[-1]]
