"""What an option is, and reading its value: the CLI, else its ini twin, else None.

Imports only pytest and the standard library: every pytest run of the environment loads it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Option:
    """One ``--karenina-<name>`` flag; ``kind`` is how its ini twin is read."""

    name: str
    help: str
    kind: str = "string"  # string | bool | linelist
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    source: str | None = None
    """Where the value read came from when not from the command line (:func:`sourced`)."""

    @property
    def flag(self) -> str:
        return f"--karenina-{self.name}"

    @property
    def label(self) -> str:
        """How a message names the option: its flag, or the ini key and file that gave it."""
        return self.source or self.flag

    @property
    def dest(self) -> str:
        return "karenina_" + self.name.replace("-", "_")


BOOL_WORDS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


def parse_bool(flag: str, text: str) -> bool:
    value = BOOL_WORDS.get(text.strip().lower())
    if value is None:
        raise pytest.UsageError(
            f"{flag}: expected yes or no, got {text!r} (a bare {flag} takes the next "
            f"argument as its value; write {flag}=yes before paths)"
        )
    return value


def option_value(config: pytest.Config, option: Option) -> Any:
    """The CLI value, else the ini value, else None."""
    value = config.getoption(option.dest)
    if value is not None:
        return value
    ini = config.getini(option.dest)
    if option.kind == "linelist":
        return list(ini) or None
    return ini if ini not in (None, "") else None


def sourced(config: pytest.Config, option: Option) -> Option:
    """``option`` knowing where :func:`option_value` finds its value, for messages: the
    command line (its flag), ``-o KEY=VALUE``, or the ini key in the configuration file."""
    if config.getoption(option.dest) is not None:
        return option
    overrides = getattr(config.option, "override_ini", None) or ()
    if any(str(line).partition("=")[0].strip() == option.dest for line in overrides):
        return dataclasses.replace(option, source=f"-o {option.dest}")
    if config.getini(option.dest) in (None, "", []):
        return option
    place = config.inipath
    if place is None:
        return dataclasses.replace(option, source=option.dest)
    here = config.invocation_params.dir
    shown = place.relative_to(here) if place.is_relative_to(here) else place
    return dataclasses.replace(option, source=f"{option.dest} in {shown}")


def option_number(option: Option, value: Any, kind: type[int] | type[float], low: float) -> Any:
    """``value`` as a ``kind`` of at least ``low``; a usage error naming the option otherwise."""
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{option.label}: expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise pytest.UsageError(f"{option.label}: expected a finite number, got {value!r}")
    if number < low:
        raise pytest.UsageError(f"{option.label}: must be >= {low:g}, got {value!r}")
    return number


def option_flag(option: Option, value: Any) -> bool | None:
    """A yes/no option's value (None when not given); a usage error for other words."""
    if value is None or isinstance(value, bool):
        return value
    if option.source is None:
        return parse_bool(option.flag, str(value))
    word = BOOL_WORDS.get(str(value).strip().lower())
    if word is None:  # no advice on bare flags: the value is no command-line argument
        raise pytest.UsageError(f"{option.label}: expected yes or no, got {value!r}")
    return word
