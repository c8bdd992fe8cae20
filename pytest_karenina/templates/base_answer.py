"""``BaseAnswer``: the base class of every answer template."""

# No ``from __future__ import annotations`` here: pydantic evaluates the annotations of every
# base class each time a subclass is built (a template, its relaxed class, its question-id
# subclass), and evaluating strings costs about 0.1 ms per class build.

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from pytest_karenina.templates.composition import referenced_fields, template_strategy
from pytest_karenina.templates.field_evaluation import auto_verify, auto_verify_granular
from pytest_karenina.templates.regex_checks import RegexReport, run_regex_checks
from pytest_karenina.templates.verified_field import VERIFICATION_KEY, VerificationMeta

RESERVED_FIELDS = frozenset({"correct"})
"""Names a template may not declare as fields (``self.correct`` holds the ground truth)."""

_VERIFIED_CACHE = "__karenina_verified_fields__"


def strip_verification(schema: Any) -> Any:
    """Remove every ``__verification__`` key from a JSON schema, in place."""
    if isinstance(schema, dict):
        schema.pop(VERIFICATION_KEY, None)
        for value in schema.values():
            strip_verification(value)
    elif isinstance(schema, list):
        for item in schema:
            strip_verification(item)
    return schema


def _defines_below_base(cls: type, name: str) -> bool:
    for klass in cls.__mro__:
        if klass is BaseAnswer:
            return False
        if name in klass.__dict__:
            return True
    return False


class BaseAnswer(BaseModel):
    """Base class of answer templates.

    A template declares the fields a judge extracts from an answer. Ground
    truth is set either declaratively with ``VerifiedField`` (``verify()`` and
    ``verify_granular()`` are then generated) or in ``ground_truth()`` /
    ``model_post_init()`` by assigning ``self.correct`` (and optionally
    ``self.regex``), with a hand-written ``verify()``. Extra attributes are
    allowed; ``id`` holds the question id once the template is bound to a
    question.
    """

    model_config = ConfigDict(extra="allow")

    id: str | None = None

    _source_code: ClassVar[str | None] = None
    _raw_trace: str | None = PrivateAttr(default=None)
    _null_fields: frozenset[str] = PrivateAttr(default=frozenset())
    _scenario_context: Mapping[str, Any] | None = PrivateAttr(default=None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        reserved = RESERVED_FIELDS & set(cls.model_fields)
        if reserved:
            raise TypeError(
                f"{cls.__name__} declares reserved field(s) {sorted(reserved)}: BaseAnswer uses "
                "self.correct for the ground truth; rename the field"
            )
        verified = cls._collect_verified_fields()
        if not verified:
            return
        strategy = template_strategy(cls)
        unknown = referenced_fields(strategy) - set(verified) if strategy is not None else set()
        if unknown:
            raise TypeError(
                f"{cls.__name__}.VerificationStrategy refers to {sorted(unknown)}, which are not "
                f"VerifiedFields (known: {list(verified)})"
            )
        if not _defines_below_base(cls, "verify"):
            cls.verify = auto_verify  # type: ignore[attr-defined]
        if not _defines_below_base(cls, "verify_granular"):
            cls.verify_granular = auto_verify_granular  # type: ignore[attr-defined]

    @classmethod
    def _collect_verified_fields(cls) -> Mapping[str, VerificationMeta]:
        verified: dict[str, VerificationMeta] = {}
        for name, field in cls.model_fields.items():
            meta = VerificationMeta.from_field(field)
            if meta is None:
                continue
            if meta.is_trace and field.annotation is not bool:
                raise TypeError(
                    f"{cls.__name__}.{name} uses the trace primitive "
                    f"{type(meta.verify_with).__name__}, so it must be typed bool"
                )
            verified[name] = meta
        frozen = MappingProxyType(verified)
        setattr(cls, _VERIFIED_CACHE, frozen)
        return frozen

    @classmethod
    def verified_fields(cls) -> Mapping[str, VerificationMeta]:
        """The VerifiedFields of this template in declaration order, with their metadata."""
        cached = cls.__dict__.get(_VERIFIED_CACHE)
        return cached if cached is not None else cls._collect_verified_fields()

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Pydantic's schema with every ``__verification__`` entry removed."""
        schema: dict[str, Any] = strip_verification(super().model_json_schema(*args, **kwargs))
        return schema

    def model_post_init(self, context: Any, /) -> None:
        """Run ``ground_truth()``, then fill ``self.correct`` from VerifiedFields if unset."""
        if type(self).ground_truth is not BaseAnswer.ground_truth:
            self.ground_truth()
        verified = type(self).verified_fields()
        if verified and getattr(self, "correct", None) is None:
            truth = {
                name: meta.ground_truth
                for name, meta in verified.items()
                if not meta.is_conditional
            }
            setattr(self, "correct", truth)  # noqa: B010 - an extra attribute, not a field

    def ground_truth(self) -> None:
        """Lifecycle hook run after the instance is built: set ``self.correct`` here."""

    def verify_regex(self, raw_trace: str) -> RegexReport:
        """Run the ``self.regex`` checks against the raw trace (see :mod:`.regex_checks`)."""
        return run_regex_checks(getattr(self, "regex", None), raw_trace)
