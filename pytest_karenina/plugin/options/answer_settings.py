"""The settings of an ini file that change answers or verdicts, as ``--karenina-changed-since``
compares them: the ``karenina_*`` keys, and the same options given in the file's
``addopts`` (``--karenina-mode=...``, or ``-o karenina_mode=...``), which win over the keys
as they do when pytest runs.

Options given on the command line or in ``PYTEST_ADDOPTS`` are not read: they are the same in
every run of a workflow.
"""

from __future__ import annotations

import argparse
import configparser
import shlex
import tomllib
from collections.abc import Sequence
from typing import Any, NoReturn

from pytest_karenina.plugin.options.declare import OPTIONS

ANSWER_SETTINGS = (
    "config", "answering_model", "parsing_model", "interface", "endpoint", "mode",
    "replicates", "judge_replicates", "abstention", "sufficiency", "embedding_check",
    "embedding_check_model", "embedding_check_threshold", "deep_judgment",
    "deep_judgment_rubric", "rubric_strategy",
    "rubric_gate", "rubric_gates", "rubric_score_threshold", "replicate_policy", "flaky",
)  # fmt: skip
"""The ``karenina_<name>`` ini settings (``--karenina-<name>`` options) that change answers
or verdicts."""
UNREADABLE = "unreadable"
"""The key under which a file (or its ``addopts``) that cannot be read is kept whole, so that
any change to it counts."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _parser() -> argparse.ArgumentParser:
    """The answer-changing options, declared as the plugin declares them."""
    parser = _Parser(add_help=False, allow_abbrev=False)
    parser.add_argument("-o", "--override-ini", action="append", dest="override_ini")
    for option in OPTIONS:
        key = option.dest.removeprefix("karenina_")
        if key not in ANSWER_SETTINGS:
            continue
        if option.kind == "linelist":
            parser.add_argument(option.flag, action="append", dest=key)
        elif option.kind == "bool":
            parser.add_argument(option.flag, nargs="?", const="yes", dest=key)
        else:
            parser.add_argument(option.flag, dest=key)
    return parser


def addopts_answer_settings(args: Sequence[str]) -> dict[str, Any]:
    """The answer-changing settings that ``addopts`` arguments give: ``--karenina-*`` options
    and ``-o karenina_*=value`` overrides (the options win, as in pytest)."""
    try:
        found, _ = _parser().parse_known_args(list(args))
    except ValueError:
        return {UNREADABLE: list(args)}
    values = vars(found)
    overrides = {}
    for text in values.pop("override_ini") or ():
        name, _, value = str(text).partition("=")
        key = name.strip().removeprefix("karenina_")
        if name.strip().startswith("karenina_") and key in ANSWER_SETTINGS:
            overrides[key] = value
    return {**overrides, **{key: value for key, value in values.items() if value is not None}}


def ini_answer_settings(text: str | None, name: str) -> dict[str, Any]:
    """The answer-changing settings of an ini file's text (``name``: its file name, which says
    its format): its ``karenina_*`` keys, and its ``addopts``, which win over them."""
    if not text:
        return {}
    try:
        if name == "pyproject.toml":
            section = dict(tomllib.loads(text).get("tool", {}).get("pytest", {}))
            # [tool.pytest.ini_options], or pytest 9's native [tool.pytest] table
            values = {**section, **dict(section.pop("ini_options", None) or {})}
        else:
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(text)
            found = [s for s in ("pytest", "tool:pytest") if parser.has_section(s)]
            values = dict(parser[found[0]]) if found else {}
    except (ValueError, configparser.Error):
        return {UNREADABLE: text}
    keys = {
        key: values[f"karenina_{key}"] for key in ANSWER_SETTINGS if f"karenina_{key}" in values
    }
    addopts = values.get("addopts") or ""
    try:
        if isinstance(addopts, list):  # pytest 9's native table: one argument per string
            args = [str(argument) for argument in addopts]
        elif isinstance(addopts, str):
            args = shlex.split(addopts)
        else:
            raise ValueError(addopts)
    except ValueError:  # an unclosed quote, or not a string
        return {**keys, UNREADABLE: str(addopts)}
    return {**keys, **addopts_answer_settings(args)}
