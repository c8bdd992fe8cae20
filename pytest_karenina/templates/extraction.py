"""What the judge's reply is validated against, and how the template is rebuilt from it.

Spec 2.8: the judge's reply is validated with a *relaxed* class (every
VerifiedField optional, so a judge can say "not stated" with null without
failing the whole parse), then the real template is rebuilt without
validation; VerifiedFields left null are recorded in ``_null_fields`` and
verify as ``None`` (neither pass nor fail by accident). Also the two parsed
views stored in results.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any, Optional, cast

from pydantic import create_model

from pytest_karenina.templates.base_answer import BaseAnswer
from pytest_karenina.templates.conditional import resolve_conditional

RELAXED_SUFFIX = "__Relaxed"
UNANSWERED_KEY = "_unanswered_fields"
"""Reply key listing fields the judge explicitly could not answer (agentic parsing)."""
CONFIG_KEYS = ("id", "correct", "regex")
"""Keys left out of ``parsed_llm_response``: the question id and the ground truth."""

_RELAXED_CACHE = "__karenina_relaxed__"
_SCHEMA_CACHE = "__karenina_reply_schema__"
_SHARED_SIZE = 512


class _SharedClasses:
    """Relaxed classes by shape (name and field types), the most recent ``size`` kept."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._classes: OrderedDict[Hashable, type[BaseAnswer]] = OrderedDict()

    def get(self, key: Hashable, answer_class: type[BaseAnswer]) -> type[BaseAnswer]:
        with self._lock:
            found = self._classes.get(key)
            if found is not None:
                self._classes.move_to_end(key)
                return found
        built = _build_relaxed(answer_class, doc=None)
        with self._lock:
            found = self._classes.setdefault(key, built)
            self._classes.move_to_end(key)
            while len(self._classes) > self._size:
                self._classes.popitem(last=False)
        return found


_SHARED = _SharedClasses(_SHARED_SIZE)


def _shape(answer_class: type[BaseAnswer]) -> Hashable | None:
    """What the relaxed class of a template made only of VerifiedFields depends on: its
    name and its fields' names and types in order (the relaxed class drops a VerifiedField's
    description and metadata, and its docstring only goes into the reply schema). None for
    a template with another field (its field information is copied whole) or a type that
    cannot be hashed: such templates get a relaxed class of their own."""
    verified = answer_class.verified_fields()
    fields: list[tuple[str, Any]] = []
    for name, info in answer_class.model_fields.items():
        if name in BaseAnswer.model_fields:
            continue
        if name not in verified:
            return None
        fields.append((name, info.annotation))
    key = (answer_class.__name__, tuple(fields))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _build_relaxed(answer_class: type[BaseAnswer], *, doc: str | None) -> type[BaseAnswer]:
    verified = answer_class.verified_fields()
    fields: dict[str, Any] = {}
    for name, info in answer_class.model_fields.items():
        if name in BaseAnswer.model_fields:
            continue
        if name in verified:
            fields[name] = (Optional[info.annotation], None)  # noqa: UP045 - runtime type
        else:
            fields[name] = (info.annotation, info)
    relaxed = create_model(
        f"{answer_class.__name__}{RELAXED_SUFFIX}",
        __base__=BaseAnswer,
        __doc__=doc,
        __module__=answer_class.__module__,
        **fields,
    )
    return cast(type[BaseAnswer], relaxed)


def relaxed_class(answer_class: type[BaseAnswer]) -> type[BaseAnswer]:
    """The extraction class ``<ClassName>__Relaxed`` for ``answer_class`` (spec 2.8 item 2).

    Built on ``BaseAnswer`` (so ``id`` and ``extra="allow"``); non-verified fields
    are copied unchanged (a required classic field stays required); every
    VerifiedField, trace fields included, becomes ``Optional[T] = None`` with no
    description and no verification metadata, so its schema carries no ground
    truth. Methods and validators of the template are not copied. Cached on the
    class.

    Templates made only of VerifiedFields with the same name and field types share one
    relaxed class (built without a docstring): it validates their replies alike, and the
    part of the reply schema that differs, the template's docstring, is added by
    :func:`relaxed_schema`. Send that schema with the class, not the class's own.
    """
    cached = answer_class.__dict__.get(_RELAXED_CACHE)
    if cached is None:
        key = _shape(answer_class)
        if key is None:
            cached = _build_relaxed(answer_class, doc=answer_class.__doc__)
        else:
            cached = _SHARED.get(key, answer_class)
        type.__setattr__(answer_class, _RELAXED_CACHE, cached)
    return cast(type[BaseAnswer], cached)


def relaxed_schema(answer_class: type[BaseAnswer]) -> dict[str, Any]:
    """The JSON schema of the judge's reply for ``answer_class``: pydantic's schema of its
    relaxed class with the template's docstring as the ``description``, exactly what pydantic
    gives for a relaxed class of the template's own (keys sorted as pydantic sorts them).
    Cached on the class; callers must not modify it."""
    cached = answer_class.__dict__.get(_SCHEMA_CACHE)
    if cached is not None:
        return cast(dict[str, Any], cached)
    relaxed = relaxed_class(answer_class)
    schema = relaxed.__dict__.get(_SCHEMA_CACHE)
    if schema is None:  # the relaxed class's own schema, once per (shared) class
        schema = relaxed.model_json_schema()
        type.__setattr__(relaxed, _SCHEMA_CACHE, schema)
    doc = answer_class.__doc__
    if relaxed.__doc__ != doc and doc:
        if "description" in schema or "$ref" in schema:
            # Not the plain object schema the docstring is added to: pydantic builds it.
            schema = _build_relaxed(answer_class, doc=doc).model_json_schema()
        else:
            schema = dict(sorted({**schema, "description": inspect.cleandoc(doc)}.items()))
    type.__setattr__(answer_class, _SCHEMA_CACHE, schema)
    return schema


def strict_rebuild(
    answer_class: type[BaseAnswer], data: Mapping[str, Any], *, raw_trace: str | None = None
) -> BaseAnswer:
    """An ``answer_class`` instance from the judge's (relaxed) reply (spec 2.8 item 3).

    VerifiedFields that are null or missing in ``data``, or named in its
    ``_unanswered_fields`` list, go to the instance's ``_null_fields``; every
    other non-null value (extra keys included) goes into
    ``answer_class.model_construct`` without validation, so the class's
    ``model_post_init`` runs (ground truth hooks, question-id injection). Null
    values are dropped, so an omitted field takes its declared default.
    ``raw_trace`` is attached for trace primitives.
    """
    listed = data.get(UNANSWERED_KEY)
    listed = listed if isinstance(listed, list | tuple) else ()
    unanswered = {name for name in listed if isinstance(name, str)}
    null_fields = frozenset(
        name
        for name in answer_class.verified_fields()
        if data.get(name) is None or name in unanswered
    )
    values = {
        key: value
        for key, value in data.items()
        if key != UNANSWERED_KEY and key not in null_fields and value is not None
    }
    answer = answer_class.model_construct(**values)
    answer._null_fields = null_fields
    if raw_trace is not None:
        answer._raw_trace = raw_trace
    return answer


def _dump(answer: BaseAnswer) -> dict[str, Any]:
    """``answer.model_dump()``; for an instance of a class whose build was deferred (the
    question-id binding subclass), through the serializer of its nearest built base, which
    has the same fields: building the subclass only to dump it once would cost more than
    the rest of the dump."""
    for cls in type(answer).__mro__:
        if isinstance(cls, type) and issubclass(cls, BaseAnswer) and cls.__pydantic_complete__:
            if cls is type(answer):
                break
            dumped: dict[str, Any] = cls.__pydantic_serializer__.to_python(answer)
            return dumped
    return answer.model_dump()


def parsed_llm_response(answer: BaseAnswer) -> dict[str, Any]:
    """``answer.model_dump()`` without ``id``, ``correct`` and ``regex``: what the judge
    extracted (extra keys from the reply included)."""
    dumped = _dump(answer)
    return {key: value for key, value in dumped.items() if key not in CONFIG_KEYS}


def parsed_gt_response(answer: BaseAnswer) -> dict[str, Any] | None:
    """The ground truth of ``answer``: ``self.correct`` merged with the ground truth of
    every VerifiedField (conditional ones resolved in the instance's scenario
    context, outside scenarios their default). A VerifiedField's own ground
    truth wins, as it is what auto-``verify()`` compares against. None when the
    template has neither."""
    correct = getattr(answer, "correct", None)
    truth: dict[str, Any] = dict(correct) if isinstance(correct, Mapping) else {}
    verified = type(answer).verified_fields()
    for name, meta in verified.items():
        if meta.is_conditional:
            truth[name], _ = resolve_conditional(meta.ground_truth, answer._scenario_context)
        else:
            truth[name] = meta.ground_truth
    if not truth and correct is None and not verified:
        return None
    return truth
