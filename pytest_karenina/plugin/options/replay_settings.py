"""The replay options checked: which store each side of the run's calls goes through.

``--karenina-replay answers`` re-judges recorded answers: the answering calls come from the
replay store, strictly, and the judge calls are live, or go through a store of their own
(``--karenina-judge-replay MODE``, ``--karenina-judge-replay-store PATH``). The judge options
mean nothing in the other modes, where one store serves every call, so they are usage errors
there rather than silently unused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pytest_karenina.config.choices import ReplayMode, RunReplayMode
from pytest_karenina.llm.provider_keys import models_without_keys

if TYPE_CHECKING:
    from pytest_karenina.config.model import ModelConfig

STORE_SUFFIX = ".replay.jsonl"
JUDGE_STORE_SUFFIX = ".judge.replay.jsonl"


def default_store(checkpoints: tuple[Path, ...], suffix: str) -> Path:
    """``<first checkpoint's stem><suffix>`` beside it."""
    first = checkpoints[0] if checkpoints else Path("karenina")
    return first.with_name(first.stem + suffix)


def check_store(flag: str, path: Path) -> None:
    """A store path must name a file (missing is fine: an empty store)."""
    if path.is_dir():
        raise pytest.UsageError(f"{flag}: {path} is a directory; name the store's file")


def judge_replay_mode(
    replay: RunReplayMode,
    mode: ReplayMode | None,
    store: Path | None,
    checkpoints: tuple[Path, ...],
    answers_store: Path,
    prune: bool,
) -> ReplayMode:
    """The judge side's store mode (``off``: live calls, not recorded).

    ``mode`` and ``store`` are the judge options as given (None: not given); a store given
    without a mode means ``replay``. Usage errors, each naming its option: a judge option
    without ``--karenina-replay answers``, a judge store that is a directory or the answers'
    store itself, a judge store with ``--karenina-judge-replay off``, and pruning in answers
    mode (the store's recorded judge calls go unused there, so pruning would drop them).
    """
    if replay != "answers":
        if mode not in (None, "off"):
            raise pytest.UsageError(
                f"--karenina-judge-replay: applies only with --karenina-replay answers "
                f"(this run's replay mode is {replay}: one store serves every call)"
            )
        if store is not None:
            raise pytest.UsageError(
                "--karenina-judge-replay-store: applies only with --karenina-replay answers"
            )
        return "off"
    if prune:
        raise pytest.UsageError(
            "--karenina-replay-prune: not with --karenina-replay answers, which reads only the "
            "answers of the store: pruning would drop its recorded judge calls"
        )
    chosen: ReplayMode = mode or ("replay" if store is not None else "off")
    if chosen == "off":
        if store is not None:
            raise pytest.UsageError(
                "--karenina-judge-replay-store: unused with --karenina-judge-replay off "
                "(the judge calls are live); choose record, replay or strict"
            )
        return chosen
    path = store if store is not None else default_store(checkpoints, JUDGE_STORE_SUFFIX)
    check_store("--karenina-judge-replay-store", path)
    if path.resolve() == answers_store.resolve():
        raise pytest.UsageError(
            f"--karenina-judge-replay-store: {path} is the answers' store "
            "(--karenina-replay-store); the judge calls need a file of their own"
        )
    return chosen


def judge_key_note(
    replay: RunReplayMode, judge_replay: ReplayMode, parsing: Iterable[ModelConfig]
) -> str | None:
    """In answers mode, when a judge that calls live has no API key in the environment:
    the header says so (its calls will fail) and how to replay them instead."""
    if replay != "answers" or judge_replay == "strict":
        return None
    missing = models_without_keys(parsing)
    if not missing:
        return None
    model, variable = missing[0]
    return (
        f"replay answers: the judge {model} calls live but no {variable} is in the "
        "environment (--karenina-judge-replay strict replays its recorded calls)"
    )
