"""Declarative outcome checks over a finished execution (Karenina's check nodes).

Boolean checks: ``TurnCheck`` (a field of the turns a scope selects), ``ResultCheck`` (a field
of the execution: status, turn_count, path, scenario_id), ``CrossTurnCheck`` (a field of one
turn against another's) and the compositions ``AllOf``, ``AnyOf``, ``AtLeastN``. Counts:
``CountTurns`` and ``FirstMatchIndex`` (-1 when no turn matches). Checkpoints name a node's
kind by class name (``"TurnCheck"``) or by Karenina's discriminator (``"turn_check"``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from pytest_karenina.templates.normalizers import Normalizer, apply_normalizers
from pytest_karenina.templates.primitives import VerificationPrimitive
from pytest_karenina.templates.primitives.base import primitive_from_dict

if TYPE_CHECKING:
    from pytest_karenina.scenarios.state import ExecutionView, TurnRecord


@dataclass(frozen=True)
class Scope:
    """Which turns: ``last_turn``, ``first_turn``, ``turn_at`` (``index``, negative from the
    end), ``any_turn`` / ``all_turns`` (optionally only at ``node_id``: one or several)."""

    kind: str
    index: int = 0
    node_id: str | tuple[str, ...] | None = None


@dataclass(frozen=True)
class TurnCheck:
    scope: Scope
    field: str
    verify_with: VerificationPrimitive
    expected: Any = None


@dataclass(frozen=True)
class ResultCheck:
    field: str
    verify_with: VerificationPrimitive
    expected: Any = None


@dataclass(frozen=True)
class CrossTurnCheck:
    source_turn: Scope
    source_field: str
    target_turn: Scope
    target_field: str
    comparison: str
    normalize: tuple[Normalizer, ...] = ()


@dataclass(frozen=True)
class Composition:
    """``all_of`` / ``any_of`` / ``at_least_n`` (with ``n``) over other checks."""

    kind: str
    conditions: tuple[OutcomeCheck, ...]
    n: int = 0


@dataclass(frozen=True)
class TurnCount:
    """``count_turns`` / ``first_match_index`` over turns at ``node_id`` with ``verify_result``."""

    kind: str
    node_id: str | tuple[str, ...] | None = None
    verify_result: bool | None = None


OutcomeCheck: TypeAlias = TurnCheck | ResultCheck | CrossTurnCheck | Composition | TurnCount

_KINDS = {
    "TurnCheck": "turn_check",
    "ResultCheck": "result_check",
    "CrossTurnCheck": "cross_turn_check",
    "AllOf": "all_of",
    "AnyOf": "any_of",
    "AtLeastN": "at_least_n",
    "CountTurns": "count_turns",
    "FirstMatchIndex": "first_match_index",
    "LastTurn": "last_turn",
    "FirstTurn": "first_turn",
    "TurnAt": "turn_at",
    "AnyTurn": "any_turn",
    "AllTurns": "all_turns",
}
_SCOPES = ("last_turn", "first_turn", "turn_at", "any_turn", "all_turns")
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "neq": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "contains": lambda t, s: str(s) in str(t),
}


def parse_check(data: Any, where: str) -> OutcomeCheck:
    """A check from its checkpoint form; ValueError names ``where`` (a dotted field path)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object, got {data!r}")
    kind = _kind(data, where)
    if kind == "turn_check":
        return TurnCheck(
            _scope(data.get("scope"), f"{where}.scope"),
            _text(data, "field", where),
            _primitive(data, where),
            data.get("expected"),
        )
    if kind == "result_check":
        return ResultCheck(
            _text(data, "field", where), _primitive(data, where), data.get("expected")
        )
    if kind == "cross_turn_check":
        comparison = _text(data, "comparison", where)
        if comparison not in _COMPARISONS:
            raise ValueError(f"{where}.comparison: unknown comparison {comparison!r}")
        normalize = data.get("normalize") or []
        if not isinstance(normalize, list) or not all(isinstance(n, str) for n in normalize):
            raise ValueError(f"{where}.normalize: expected a list of normalizer names")
        return CrossTurnCheck(
            _scope(data.get("source_turn"), f"{where}.source_turn"),
            _text(data, "source_field", where),
            _scope(data.get("target_turn"), f"{where}.target_turn"),
            _text(data, "target_field", where),
            comparison,
            tuple(normalize),
        )
    if kind in ("all_of", "any_of", "at_least_n"):
        items = data.get("conditions", [])
        if not isinstance(items, list):
            raise ValueError(f"{where}.conditions: expected a list")
        conditions = tuple(parse_check(c, f"{where}.conditions[{i}]") for i, c in enumerate(items))
        n = data.get("n", 0)
        if kind == "at_least_n" and (not isinstance(n, int) or n < 0):
            raise ValueError(f"{where}.n: expected a whole number >= 0, got {n!r}")
        return Composition(kind, conditions, n)
    if kind in ("count_turns", "first_match_index"):
        verify_result = data.get("verify_result")
        if verify_result is not None and not isinstance(verify_result, bool):
            raise ValueError(f"{where}.verify_result: expected true, false or null")
        return TurnCount(kind, _nodes(data.get("node_id"), f"{where}.node_id"), verify_result)
    raise ValueError(f"{where}.type: unknown outcome check {data.get('type')!r}")


def _kind(data: Mapping[str, Any], where: str) -> str:
    raw = data.get("type")
    if not isinstance(raw, str):
        raise ValueError(f"{where}.type: missing (the kind of check)")
    return _KINDS.get(raw, raw)


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{where}.{key}: expected a string, got {value!r}")
    return value


def _primitive(data: Mapping[str, Any], where: str) -> VerificationPrimitive:
    raw = data.get("verify_with")
    if not isinstance(raw, dict):
        raise ValueError(f"{where}.verify_with: expected a primitive object, got {raw!r}")
    try:
        return primitive_from_dict(raw)
    except ValueError as exc:
        raise ValueError(f"{where}.verify_with: {exc}") from exc


def primitive_at(data: Mapping[str, Any], where: str) -> VerificationPrimitive:
    """The ``verify_with`` primitive of a stored condition (ValueError naming ``where``)."""
    return _primitive(data, where)


def _nodes(value: Any, where: str) -> str | tuple[str, ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"{where}: expected a node id or a list of them, got {value!r}")


def _scope(data: Any, where: str) -> Scope:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a scope object, got {data!r}")
    kind = _kind(data, where)
    if kind not in _SCOPES:
        raise ValueError(f"{where}.type: unknown scope {data.get('type')!r}")
    index = data.get("index", 0)
    if kind == "turn_at" and not isinstance(index, int):
        raise ValueError(f"{where}.index: expected a whole number, got {index!r}")
    return Scope(kind, index, _nodes(data.get("node_id"), f"{where}.node_id"))


def evaluate_check(check: OutcomeCheck, run: ExecutionView) -> bool | int:
    """The check's value over ``run``: a bool, or an int for the two counts."""
    if isinstance(check, TurnCount):
        matches = [i for i, t in enumerate(run.history) if _matches(t, check)]
        if check.kind == "count_turns":
            return len(matches)
        return matches[0] if matches else -1
    if isinstance(check, Composition):
        values = [evaluate_check(c, run) is True for c in check.conditions]
        if check.kind == "all_of":
            return all(values)
        if check.kind == "any_of":
            return any(values)
        return sum(values) >= check.n
    if isinstance(check, ResultCheck):
        return bool(check.verify_with.check(getattr(run, check.field, None), check.expected))
    if isinstance(check, TurnCheck):
        turns = _selected(check.scope, run.history)
        if not turns:
            return False  # no vacuous truth, as Karenina
        verdicts = [
            check.verify_with.check(turn_field(check.field, t), check.expected) for t in turns
        ]
        return any(verdicts) if check.scope.kind == "any_turn" else all(verdicts)
    return _cross(check, run.history)


def _cross(check: CrossTurnCheck, history: Sequence[TurnRecord]) -> bool:
    source = _selected(check.source_turn, history)
    target = _selected(check.target_turn, history)
    if len(source) != 1 or len(target) != 1 or check.source_turn.kind in ("any_turn", "all_turns"):
        return False
    source_value = turn_field(check.source_field, source[0])
    target_value = turn_field(check.target_field, target[0])
    if check.normalize:
        source_value = apply_normalizers(check.normalize, str(source_value))
        target_value = apply_normalizers(check.normalize, str(target_value))
    try:
        return bool(_COMPARISONS[check.comparison](target_value, source_value))
    except (TypeError, ValueError):
        return False


def _selected(scope: Scope, history: Sequence[TurnRecord]) -> list[TurnRecord]:
    if not history:
        return []
    if scope.kind == "last_turn":
        return [history[-1]]
    if scope.kind == "first_turn":
        return [history[0]]
    if scope.kind == "turn_at":
        return [history[scope.index]] if -len(history) <= scope.index < len(history) else []
    return [t for t in history if _at(t.node_id, scope.node_id)]


def _at(node_id: str, wanted: str | tuple[str, ...] | None) -> bool:
    if wanted is None:
        return True
    return node_id == wanted if isinstance(wanted, str) else node_id in wanted


def _matches(turn: TurnRecord, check: TurnCount) -> bool:
    if not _at(turn.node_id, check.node_id):
        return False
    return check.verify_result is None or turn.verify_result == check.verify_result


def turn_field(path: str, turn: TurnRecord) -> Any:
    """``node_id``, ``verify_result``, ``raw_response``, ``question_text`` or
    ``parsed.<field>`` of a turn (None when missing)."""
    root, _, rest = path.partition(".")
    if root == "parsed" and rest:
        return turn.parsed_fields.get(rest)
    return getattr(turn, root, None)


def breaking_turn(check: OutcomeCheck, run: ExecutionView) -> int | None:
    """The index of the turn that made a false boolean check false, when one turn did: the
    turn a single-turn scope names, the first selected turn an ``all_turns`` check refuses, the
    target turn of a cross-turn check, the last turn of a ``ResultCheck`` on an execution
    stopped by its turn limit, the first breaking turn of a composition's false parts."""
    history = run.history
    if not history:
        return None
    if isinstance(check, TurnCheck):
        scope = check.scope
        if scope.kind == "all_turns":
            for index, turn in enumerate(history):
                value = turn_field(check.field, turn)
                if _at(turn.node_id, scope.node_id) and not check.verify_with.check(
                    value, check.expected
                ):
                    return index
            return None
        return _single_index(scope, len(history))
    if isinstance(check, CrossTurnCheck):
        return _single_index(check.target_turn, len(history))
    if isinstance(check, ResultCheck):
        return len(history) - 1 if run.status == "limit_reached" else None
    if isinstance(check, Composition):
        found = [
            breaking_turn(c, run) for c in check.conditions if evaluate_check(c, run) is not True
        ]
        return min((i for i in found if i is not None), default=None)
    return None


def _single_index(scope: Scope, count: int) -> int | None:
    if scope.kind == "last_turn":
        return count - 1
    if scope.kind == "first_turn":
        return 0
    if scope.kind == "turn_at" and -count <= scope.index < count:
        return scope.index % count
    return None
