"""Karenina preset files (spec 4.9): ``{id, name, description, config, created_at, updated_at}``.

Only ``config`` is read; the other top-level keys (and any ``_comment_*`` keys)
are ignored. Every problem is a :class:`ConfigError` naming the file and, for
an invalid configuration, the path of each offending field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_karenina.config.sections import ConfigError
from pytest_karenina.config.verification import VerificationConfig


def _location(loc: tuple[int | str, ...]) -> str:
    text = "config"
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def describe_validation_error(err: ValidationError) -> list[str]:
    """One ``<field path>: <message>`` line per error, paths rooted at ``config``."""
    lines = []
    for detail in err.errors(include_url=False):
        message = detail["msg"].removeprefix("Value error, ")
        lines.append(f"{_location(tuple(detail['loc']))}: {message}")
    return lines


def load_preset(path: str | Path) -> VerificationConfig:
    """The ``VerificationConfig`` stored in the preset file at ``path``."""
    source = str(path)
    try:
        document: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read preset: {exc}", source=source) from exc
    except ValueError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}", source=source) from exc
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise ConfigError(
            f"{source}: a preset is a JSON object with a 'config' object", source=source
        )
    try:
        return VerificationConfig.model_validate(document["config"])
    except ConfigError as exc:
        lines = [f"config.{item}" for item in exc.problems] or [str(exc)]
        text = lines[0] if len(lines) == 1 else "\n" + "\n".join(f"  {line}" for line in lines)
        raise ConfigError(f"{source}: {text}", problems=exc.problems, source=source) from exc
    except ValidationError as exc:
        lines = describe_validation_error(exc)
        raise ConfigError(
            f"{source}: invalid configuration:\n" + "\n".join(f"  {line}" for line in lines),
            problems=lines,
            source=source,
        ) from exc
