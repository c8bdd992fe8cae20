"""Turn template source code into an answer class.

Template code runs in a single module-like namespace (so top-level imports and
helper functions are visible inside methods, unlike Karenina's two-dict
``exec``), pre-populated with the names Karenina injects, and with the
``karenina.*`` import shim. Exactly one leaf ``BaseAnswer`` subclass must come
out, and it is validated before any LLM call could use it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import linecache
import textwrap
import threading
import typing
from collections import OrderedDict
from collections.abc import Mapping
from types import TracebackType
from typing import Any, cast

from pydantic import Field, ValidationError

from pytest_karenina.templates.base_answer import BaseAnswer
from pytest_karenina.templates.composition import AllOf, AnyOf, AtLeastN, FieldCheck
from pytest_karenina.templates.conditional import ConditionalGroundTruth, GroundTruthCase
from pytest_karenina.templates.errors import TemplateError
from pytest_karenina.templates.karenina_shim import template_builtins
from pytest_karenina.templates.modes import template_mode
from pytest_karenina.templates.normalizers import SynonymMap
from pytest_karenina.templates.primitives import COMPARISON_PRIMITIVES, TRACE_PRIMITIVES
from pytest_karenina.templates.probe import probe_instance
from pytest_karenina.templates.time_limit import (
    DEFAULT_TEMPLATE_TIME_LIMIT,
    TemplateTimeout,
    time_limit,
)
from pytest_karenina.templates.verified_field import VerifiedField

NO_TEMPLATE_ID = "no_template"
_CACHE_SIZE = 512


def normalize_source(code: str) -> str:
    """Karenina's normalisation for template ids: dedent, LF line ends, no
    trailing whitespace on any line, stripped."""
    text = textwrap.dedent(code).replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def template_id(code: str | None) -> str:
    """MD5 hex of the normalised source; ``"no_template"`` for empty source."""
    normalized = normalize_source(code or "")
    if not normalized:
        return NO_TEMPLATE_ID
    return hashlib.md5(normalized.encode("utf-8"), usedforsecurity=False).hexdigest()


def injected_names() -> dict[str, Any]:
    """The names every template can use without importing them (Karenina's list)."""
    names: dict[str, Any] = {
        "BaseAnswer": BaseAnswer,
        "Field": Field,
        "List": list,
        "Dict": dict,
        "Optional": typing.Optional,
        "Union": typing.Union,
        "Any": typing.Any,
        "Literal": typing.Literal,
        "VerifiedField": VerifiedField,
        "SynonymMap": SynonymMap,
        "ConditionalGroundTruth": ConditionalGroundTruth,
        "GroundTruthCase": GroundTruthCase,
    }
    classes: tuple[type, ...] = (*COMPARISON_PRIMITIVES, *TRACE_PRIMITIVES)
    for cls in (*classes, AllOf, AnyOf, AtLeastN, FieldCheck):
        names[cls.__name__] = cls
    return names


def _template_line(traceback: TracebackType | None, filename: str) -> int | None:
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == filename:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


def template_line(exc: BaseException, code: str) -> int | None:
    """The line of template ``code`` that ``exc`` was raised in, or passed through last (its
    deepest frame in the template's compiled code); None when no frame is the template's."""
    return _template_line(exc.__traceback__, _filename(code))


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line; pydantic errors as ``model: field: problem``."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'value'}: {error['msg']}"
            for error in exc.errors()
        )
        return f"invalid {exc.title}: {problems}"
    lines = [line for line in str(exc).splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("For further information visit")]
    return f"{type(exc).__name__}: {' '.join(lines)}" if lines else type(exc).__name__


def _class_line(source: str, name: str) -> int | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node.lineno
    return None


def _filename(code: str) -> str:
    return f"<karenina template {template_id(code)}>"


class _SourceLines:
    """Template sources in ``linecache``, so tracebacks through template code show its lines;
    only the most recent :data:`_CACHE_SIZE` x 2 stay (one per template otherwise: a large run
    would keep every template's source twice over)."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._names: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def register(self, filename: str, source: str) -> None:
        with self._lock:
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            self._names[filename] = None
            self._names.move_to_end(filename)
            while len(self._names) > self._keep:
                oldest, _ = self._names.popitem(last=False)
                linecache.cache.pop(oldest, None)


_SOURCE_LINES = _SourceLines(keep=_CACHE_SIZE * 2)


def _execute(code: str) -> dict[str, Any]:
    source = textwrap.dedent(code)
    filename = _filename(code)
    _SOURCE_LINES.register(filename, source)
    try:
        compiled = compile(source, filename, "exec")
    except SyntaxError as exc:
        raise TemplateError(f"syntax error: {exc.msg}", line=exc.lineno) from exc
    namespace: dict[str, Any] = {
        **injected_names(),
        "__builtins__": template_builtins(),
        "__name__": f"karenina_template_{template_id(code)[:12]}",
    }
    try:
        exec(compiled, namespace)
    except (Exception, SystemExit) as exc:
        reason = f"executing the template raised {describe_exception(exc)}"
        raise TemplateError(reason, line=_template_line(exc.__traceback__, filename)) from exc
    return namespace


def _leaf_class(namespace: Mapping[str, Any]) -> type[BaseAnswer]:
    found: list[type[BaseAnswer]] = []
    for value in namespace.values():
        if isinstance(value, type) and issubclass(value, BaseAnswer) and value is not BaseAnswer:
            if value not in found:
                found.append(value)
    leaves = [cls for cls in found if not any(o is not cls and issubclass(o, cls) for o in found)]
    if not leaves:
        raise TemplateError("no answer class: define one subclass of BaseAnswer")
    if len(leaves) > 1:
        names = ", ".join(cls.__name__ for cls in leaves)
        raise TemplateError(
            f"{len(leaves)} answer classes ({names}): a template defines exactly one leaf "
            "BaseAnswer subclass; make helper models subclass pydantic.BaseModel"
        )
    return leaves[0]


def _complete(answer_class: type[BaseAnswer], namespace: Mapping[str, Any]) -> None:
    """Resolve annotations pydantic had to defer (e.g. forward references)."""
    if answer_class.__pydantic_complete__:
        return
    try:
        answer_class.model_rebuild(_types_namespace=dict(namespace))
    except Exception as exc:
        reason = f"{answer_class.__name__} cannot be built: {describe_exception(exc)}"
        raise TemplateError(reason) from exc


def _validate(answer_class: type[BaseAnswer]) -> None:
    mode = template_mode(answer_class)
    verify = getattr(answer_class, "verify", None)
    if mode == "classic" and not callable(verify):
        raise TemplateError(
            f"{answer_class.__name__} has no verify() method: classic templates (without "
            "VerifiedField) must define verify(self) -> bool"
        )
    try:
        instance = probe_instance(answer_class)
    except Exception as exc:
        raise TemplateError(
            f"building {answer_class.__name__} ran its ground-truth hook, which raised "
            f"{describe_exception(exc)}"
        ) from exc
    correct = getattr(instance, "correct", None)
    if correct is not None and not isinstance(correct, dict):
        raise TemplateError(f"self.correct must be a dict, got {type(correct).__name__}")
    regex = getattr(instance, "regex", None)
    if regex is not None and not isinstance(regex, dict):
        raise TemplateError(
            f"self.regex must be a dict of named checks, got {type(regex).__name__}"
        )


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compiled(code: str, limit: float | None) -> type[BaseAnswer] | TemplateError:
    """The class, or the error, of ``code`` (both cached: a template that loops for its time
    limit does so once, not at every compile)."""
    try:
        with time_limit(limit, "running the template's code"):
            return _compile(code)
    except TemplateError as exc:
        return exc
    except TemplateTimeout as exc:
        return TemplateError(str(exc))


def _compile(code: str) -> type[BaseAnswer]:
    namespace = _execute(code)
    answer_class = _leaf_class(namespace)
    try:
        _complete(answer_class, namespace)
        _validate(answer_class)
    except TemplateError as exc:
        cause = exc.__cause__
        line = _template_line(cause.__traceback__ if cause else None, _filename(code))
        if line is None:
            line = _class_line(textwrap.dedent(code), answer_class.__name__)
        raise TemplateError(exc.reason, line=line) from cause
    type.__setattr__(answer_class, "_source_code", code)
    return answer_class


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _bind_question_id(answer_class: type[BaseAnswer], question_id: str) -> type[BaseAnswer]:
    def model_post_init(self: BaseAnswer, context: Any, /) -> None:
        answer_class.model_post_init(self, context)
        self.id = question_id

    namespace = {
        "__module__": answer_class.__module__,
        "__qualname__": answer_class.__qualname__,
        "__doc__": answer_class.__doc__,
        "model_post_init": model_post_init,
        # Instances are made with model_construct, which needs no validator: building one
        # per question would double the cost of binding (pydantic builds it on first need).
        "model_config": {**answer_class.model_config, "defer_build": True},
    }
    metaclass = cast(Any, type(answer_class))
    bound: type[BaseAnswer] = metaclass(answer_class.__name__, (answer_class,), namespace)
    return bound


def compile_template(
    code: str,
    question_id: str | None = None,
    *,
    seconds: float | None = DEFAULT_TEMPLATE_TIME_LIMIT,
) -> type[BaseAnswer]:
    """Execute template source and return its validated answer class.

    With ``question_id`` the class is a thin subclass whose instances carry that
    id in ``id`` (Karenina's question-id injection). Compiled classes (and template
    errors) are cached by source. The template's code (module level and the ground-truth
    hook of the validation probe) may run ``seconds`` (None: no limit). Raises
    :class:`TemplateError` naming the question and, when known, the template line.
    """
    outcome = _compiled(code, seconds)
    if isinstance(outcome, TemplateError):
        raise TemplateError(outcome.reason, question_id=question_id, line=outcome.line) from (
            outcome.__cause__ or outcome
        )
    answer_class = outcome
    if question_id is None:
        return answer_class
    return _bind_question_id(answer_class, question_id)
