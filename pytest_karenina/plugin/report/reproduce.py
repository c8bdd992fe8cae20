"""The one-line command that reproduces an item offline: pytest on its node id under strict
replay, with the run's options that decide how an item is judged (models, endpoint, modes,
presets, ``-c``/``-o``/``-p``) and without those that only select, gate or report."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from pytest_karenina.plugin.options.declare import OPTIONS
from pytest_karenina.plugin.options.spec import BOOL_WORDS

DROPPED = frozenset({
    "results", "baseline", "baseline-update", "baseline-model", "baseline-fail-on",
    "baseline-results", "score-tolerance", "replay", "replay-prune", "judge-replay",
    "shard", "changed-since", "min-pass-rate", "gate-on", "github", "github-annotations",
    "github-known-failures", "max-cost", "estimate", "estimate-answer-tokens", "history",
    "history-keep", "compare-to",
})  # fmt: skip
"""Options that select which items run, gate the run or say where reports go: the command
leaves them out (its replay mode is its own: strict)."""
KEPT_PYTEST = frozenset({"-c", "--config-file", "-o", "--override-ini", "-p", "--rootdir"})
"""pytest's own options that change how an item is judged (the configuration read, the
plugins loaded): kept with their values."""


def _kinds() -> dict[str, str]:
    return {option.flag: option.kind for option in OPTIONS}


def run_options(args: Sequence[str]) -> list[str]:
    """The options of ``args`` (pytest's invocation arguments) the command keeps, in order."""
    kinds = _kinds()
    kept: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        flag, has_value, _ = token.partition("=")
        index += 1
        if flag in kinds or flag == "--karenina":
            kind = kinds.get(flag, "string")
            takes_next = not has_value and index < len(args)
            if takes_next and kind == "bool":
                takes_next = args[index].strip().lower() in BOOL_WORDS
            value = [args[index]] if takes_next else []
            index += len(value)
            if flag != "--karenina" and flag.removeprefix("--karenina-") not in DROPPED:
                kept += [token, *value]
        elif flag in KEPT_PYTEST or (token[:2] in ("-c", "-o", "-p") and len(token) > 2):
            value = [args[index]] if not has_value and token in KEPT_PYTEST else []
            value = value if index < len(args) else []
            index += len(value)
            kept += [token, *value]
    return kept


def reproduce_command(nodeid: str, options: Sequence[str]) -> str:
    """``pytest --karenina NODEID <options> --karenina-replay strict``, shell-quoted, to be
    run from the run's directory (node ids are relative to pytest's rootdir)."""
    parts = ["pytest", "--karenina", nodeid, *options, "--karenina-replay", "strict"]
    return shlex.join(parts)
