"""What a run needs before its first pipeline starts: an API key for every model it calls
live, and a store of recorded calls for every side of the run it replays strictly.

Checked once, when the plugin activates (``activate.py``), in runs that answer questions
(not under ``--collect-only``, ``--setup-plan`` or ``--setup-only``, nor
``--karenina-estimate``, which never calls a model). One usage error lists everything
missing and how to give it, instead of the same error on every question. Which calls are
live, by replay mode:

- ``off``, ``record``: every call;
- ``replay``: the calls the store lacks. Without a store (no file, or an empty one) that is
  every call; with one, the run is taken to be recorded: a call it lacks goes live and, without
  a key, fails its own question only;
- ``strict``: none, and the store must exist (not empty);
- ``answers``: the answers come strictly from the store, which must exist; the judge calls
  follow ``--karenina-judge-replay`` (``off``, ``record``: live; ``replay``: live when the
  judge store does not exist; ``strict``: none, and the judge store must exist).

Only models that reach their provider with the provider's key need one
(:func:`~pytest_karenina.llm.provider_keys.key_variables`), ``claude_tool`` and
``openrouter`` models theirs (``ANTHROPIC_API_KEY``, ``OPENROUTER_API_KEY``) unless their own
settings hold it: ``openai_endpoint`` models take a key of their own or none (local servers
need none) and ``manual`` answers need none. No message holds a key's value, only the
variables' names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_karenina.config.choices import ReplayMode
from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.llm.provider_keys import key_variables
from pytest_karenina.plugin.options.settings import Settings, judge_store_path, store_path


@dataclass(frozen=True)
class Side:
    """One side of the run's calls (the answers, or the judge's calls) and how it gets them."""

    roles: str
    """``answering`` or ``parsing``."""
    mode: ReplayMode
    store: Path
    option: str
    """The option that sets ``mode``."""

    @property
    def live(self) -> bool:
        return self.mode in ("off", "record") or (
            self.mode == "replay" and not recorded(self.store)
        )


def recorded(store: Path) -> bool:
    """Whether ``store`` holds recorded calls (a file that is not empty)."""
    return store.is_file() and store.stat().st_size > 0


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it is under it."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def sides(settings: Settings) -> tuple[Side, Side]:
    """The answering side and the judge side of the run's calls."""
    answers = Side("answering", settings.store_mode, store_path(settings), "--karenina-replay")
    if settings.replay != "answers":
        return answers, Side("parsing", settings.store_mode, answers.store, answers.option)
    judge = Side(
        "parsing", settings.judge_replay, judge_store_path(settings), "--karenina-judge-replay"
    )
    return answers, judge


def keyless_models(
    settings: Settings, vconfig: VerificationConfig, environ: Mapping[str, str]
) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    """Model -> (its roles, the variables that could hold its key), for every model that
    calls live (or, under strict replay chosen by default, would) without a key."""
    answers, judge = sides(settings)
    by_default = settings.replay == "strict" and not settings.replay_chosen
    found: dict[str, tuple[list[str], tuple[str, ...]]] = {}
    groups: list[tuple[Side, list[ModelConfig]]] = [
        (answers, list(vconfig.answering_models)),
        (judge, list(vconfig.parsing_models)),
    ]
    for side, models in groups:
        if not (side.live or by_default):
            continue
        for model in models:
            names = key_variables(model)
            if not names or any(environ.get(name) for name in names):
                continue
            label = model.id or f"{model.model_provider}:{model.model_name}"
            found.setdefault(label, ([], names))[0].append(side.roles)
    return found


def missing_stores(settings: Settings) -> list[str]:
    """A line for each strictly replayed side whose store holds nothing: why it replays, and
    how to give it."""
    found: list[str] = []
    seen: set[Path] = set()
    for side in sides(settings):
        if side.mode != "strict" or recorded(side.store) or side.store in seen:
            continue
        seen.add(side.store)
        judge = side.option == "--karenina-judge-replay"
        if judge:
            why = "--karenina-judge-replay strict reads the judge calls"
        elif settings.replay == "answers":
            why = "--karenina-replay answers reads the answers"
        elif settings.replay_chosen:
            why = "--karenina-replay strict reads every call"
        else:
            why = "strict replay reads every call"
        state = "is empty" if side.store.is_file() else "does not exist"
        record = f"{side.option} record" if judge else "--karenina-replay record"
        option = f"{side.option}-store" if judge else "--karenina-replay-store"
        found.append(f"  - {why} from {shown(side.store)}, which {state}: record it with "
                     f"{record}, or name another with {option} PATH")  # fmt: skip
    return found


def needs_message(
    settings: Settings, vconfig: VerificationConfig, environ: Mapping[str, str] | None = None
) -> str | None:
    """Everything the run lacks to start, and how to give it (None: nothing is missing)."""
    env = os.environ if environ is None else environ
    keyless = keyless_models(settings, vconfig, env)
    stores = missing_stores(settings)
    by_default = settings.replay == "strict" and not settings.replay_chosen
    if not stores and (by_default or not keyless):
        return None  # strict by default with a store: the keys are not needed
    lines = ["pytest-karenina: this run cannot start:"]
    for label, (roles, names) in keyless.items():
        variables = " or ".join(names)
        if by_default:
            lines.append(f"  - {label} ({', '.join(roles)}) has no API key (set {variables}), "
                         "so replay is strict by default")  # fmt: skip
        else:
            lines.append(f"  - {label} ({', '.join(roles)}) calls live ({_live_why(settings)}) "
                         f"and has no API key: set {variables}")  # fmt: skip
    lines.extend(stores)
    if keyless and not by_default:
        lines.append(
            "  Or replay the judge's recorded calls: --karenina-judge-replay strict"
            if settings.replay == "answers"
            else "  Or replay recorded calls instead of calling live: --karenina-replay strict"
        )
    return "\n".join(lines)


def _live_why(settings: Settings) -> str:
    if settings.replay == "answers":
        return f"judge calls: --karenina-judge-replay {settings.judge_replay}"
    if settings.replay == "replay":
        return "--karenina-replay replay, and no store to replay from"
    return f"--karenina-replay {settings.replay}"


def check_needs(settings: Settings, vconfig: VerificationConfig) -> None:
    """A usage error naming what the run lacks (call it only in runs that answer questions,
    not in estimates)."""
    message = needs_message(settings, vconfig)
    if message is not None:
        raise pytest.UsageError(message)
