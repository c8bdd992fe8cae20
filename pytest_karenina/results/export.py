"""Karenina's results export, ``format_version`` 2.2 (spec 7.1), and the other loadable shapes.

An export is one JSON object written as a stream: the header object without its closing
brace, ``,"results":[`` and a newline, one result per line separated by ``,`` + newline, a
newline and ``]``, optionally ``,"scenario_results":[`` ... ``]`` and ``,"errors":[`` ... ``]``
(failed scenario executions, ``[description, error]`` pairs) in the same layout, then
optionally ``,"pytest_karenina":{"run":{...},"items":[`` ... ``]}`` (what a pytest run adds:
its settings and one record per test item; Karenina's loaders read ``results`` and ignore
it), then ``}`` and a newline. It is plain JSON: read it with ``json.load``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from importlib import metadata as importlib_metadata
from typing import Any, TextIO

from pydantic import BaseModel

from pytest_karenina.results.ids import export_timestamp as utc_export_timestamp
from pytest_karenina.results.result import VerificationResult, strip_seed_only
from pytest_karenina.results.text import encodable

FORMAT_VERSION = "2.2"


def default_karenina_version() -> str:
    """The ``metadata.karenina_version`` we write: ``"pytest-karenina <version>"``."""
    try:
        version = importlib_metadata.version("pytest-karenina")
    except importlib_metadata.PackageNotFoundError:
        version = "unknown"
    return f"pytest-karenina {version}"


def export_header(
    *,
    total: int,
    successful: int,
    job_id: str | None = None,
    karenina_version: str | None = None,
    verification_config: Mapping[str, Any] | None = None,
    rubric_definition: Mapping[str, Any] | None = None,
    start_time: float | None = None,
    end_time: float | None = None,
    is_complete: bool = True,
    export_timestamp: str | None = None,
) -> dict[str, Any]:
    """The header object of an export (everything but ``results``).

    ``total`` is the number of results and ``successful`` those whose ``metadata.failure`` is
    null. ``job_id`` defaults to a new UUID4, ``karenina_version`` to
    :func:`default_karenina_version`, ``export_timestamp`` to the current UTC time.
    ``verification_config`` is the reduced ``{answering_models: [{provider, name,
    temperature, interface}], parsing_models: [...]}`` dict (both lists empty when None);
    ``rubric_definition`` the global rubric dumped with only its explicitly set fields.
    """
    duration = end_time - start_time if start_time is not None and end_time is not None else None
    return {
        "format_version": FORMAT_VERSION,
        "metadata": {
            "export_timestamp": export_timestamp or utc_export_timestamp(),
            "karenina_version": karenina_version or default_karenina_version(),
            "job_id": job_id or str(uuid.uuid4()),
            "verification_config": (
                dict(verification_config)
                if verification_config is not None
                else {"answering_models": [], "parsing_models": []}
            ),
            "job_summary": {
                "total_questions": total,
                "successful_count": successful,
                "failed_count": total - successful,
                "start_time": start_time,
                "end_time": end_time,
                "total_duration": duration,
                "is_complete": is_complete,
            },
        },
        "shared_data": {
            "rubric_definition": dict(rubric_definition) if rubric_definition is not None else None
        },
    }


def result_line(result: VerificationResult | Mapping[str, Any]) -> str:
    """One result as the single JSON line it occupies in an export.

    A mapping is taken to be a ``model_dump(mode="json")`` of a result; seed-only fields are
    dropped from it as from :meth:`VerificationResult.export_dict`.
    """
    data = (
        result.export_dict() if isinstance(result, VerificationResult) else strip_seed_only(result)
    )
    line = json.dumps(data, ensure_ascii=False)
    # Text should be encodable where it entered; a line that still is not stays valid JSON
    # with its surrogates escaped rather than stopping the writer.
    return line if encodable(line) is line else json.dumps(data, ensure_ascii=True)


def is_successful(result: VerificationResult | Mapping[str, Any]) -> bool:
    """Whether the result counts as successful in ``job_summary`` (its failure is null)."""
    if isinstance(result, VerificationResult):
        return result.metadata.failure is None
    meta = result.get("metadata")
    return isinstance(meta, Mapping) and meta.get("failure") is None


RUN_KEY = "pytest_karenina"
"""The top-level key of a pytest run's settings and item records in an export."""


def write_export(
    out: TextIO,
    header: Mapping[str, Any],
    result_lines: Iterable[str],
    scenario_results: Iterable[Any] | None = None,
    run: tuple[Mapping[str, Any], Iterable[str]] | None = None,
    *,
    errors: Iterable[tuple[str, str]] | None = None,
) -> None:
    """Write an export with the header object and pre-rendered result lines to ``out``;
    ``run``: a pytest run's settings and its pre-rendered item record lines; ``errors``: the
    failed scenario executions as ``[description, "<Type>: <message>"]`` pairs."""
    out.write(json.dumps(header, ensure_ascii=False)[:-1])
    _write_array(out, "results", result_lines)
    if scenario_results is not None:
        lines = (json.dumps(_jsonable(item), ensure_ascii=False) for item in scenario_results)
        _write_array(out, "scenario_results", lines)
    if errors is not None:
        pairs = (json.dumps([desc, text], ensure_ascii=False) for desc, text in errors)
        _write_array(out, "errors", pairs)
    if run is not None:
        settings, item_lines = run
        out.write(f',"{RUN_KEY}":{{"run":{json.dumps(settings, ensure_ascii=False)}')
        _write_array(out, "items", item_lines)
        out.write("}")
    out.write("}\n")


def _write_array(out: TextIO, key: str, lines: Iterable[str]) -> None:
    out.write(f',"{key}":[\n')
    first = True
    for line in lines:
        if not first:
            out.write(",\n")
        out.write(line)
        first = False
    out.write("\n]")


def _jsonable(item: Any) -> Any:
    return item.model_dump(mode="json") if isinstance(item, BaseModel) else item


def read_export_errors(data: Any) -> list[tuple[str, str]] | None:
    """The ``errors`` of a parsed export object: ``(description, error)`` pairs (None when
    it has none). Raises ValueError naming the entry that is not a pair of strings."""
    if not isinstance(data, dict) or data.get("errors") is None:
        return None
    found = data["errors"]
    if not isinstance(found, list):
        raise ValueError("Invalid results export: errors must be an array")
    pairs: list[tuple[str, str]] = []
    for index, entry in enumerate(found):
        if not (
            isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, str) for x in entry)
        ):
            raise ValueError(
                f"Invalid results export: errors[{index}] must be [description, error], "
                f"got {entry!r}"
            )
        pairs.append((entry[0], entry[1]))
    return pairs


def read_export_payload(text: str) -> tuple[list[Any], list[Any] | None]:
    """``(result dicts, scenario_results)`` from any result file shape Karenina loads.

    Accepted: the format-2.x object (``results`` array, optional ``scenario_results``), a bare
    array of results (``export_verification_results`` JSON, extra ``row_index`` keys are
    ignored later), ``{"runs": {run_name: [results]}}`` and a mapping of keys to results.
    Raises ValueError for anything else.
    """
    return export_payload_from(json.loads(text))


def export_payload_from(data: Any) -> tuple[list[Any], list[Any] | None]:
    """:func:`read_export_payload` for a file already parsed."""
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict):
        if isinstance(data.get("results"), list):
            scenarios = data.get("scenario_results")
            return data["results"], scenarios if isinstance(scenarios, list) else None
        runs = data.get("runs")
        if isinstance(runs, dict):
            return [item for run in runs.values() if isinstance(run, list) for item in run], None
        if data and all(isinstance(v, dict) and "metadata" in v for v in data.values()):
            return list(data.values()), None
    raise ValueError(
        "not a Karenina results file: expected a format-2.x export, a list of results, "
        '{"runs": {...}} or a mapping of results'
    )
