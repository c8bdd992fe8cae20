"""``pytest-karenina history PATH``: a history file's runs, trends and items as text or
JSON; and the merged run a ``pytest-karenina merge --history`` appends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history import History
from pytest_karenina.plugin.report.history_file import FORMAT, parse_history
from pytest_karenina.plugin.report.history_keeper import HistoryKeeper
from pytest_karenina.plugin.report.history_text import command_json, command_text


class HistoryCommandError(Exception):
    """The file cannot be read, or names no benchmark the command could show."""


def benchmarks_in(content: bytes) -> list[list[str]]:
    """The benchmarks (checkpoint names) of the file's records, in the order of their last
    record (the most recent last)."""
    found: dict[tuple[str, ...], None] = {}
    for raw in content.split(b"\n"):
        if b'"benchmark"' not in raw:
            continue
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        benchmark = data.get("benchmark") if isinstance(data, dict) else None
        if data.get("format") == FORMAT and isinstance(benchmark, list):
            key = tuple(str(name) for name in benchmark)
            found.pop(key, None)
            found[key] = None
    return [list(key) for key in found]


def choose(found: Sequence[list[str]], wanted: str | None, path: Path) -> list[str]:
    """The benchmark to show: the one naming checkpoint ``wanted``, else the most recent."""
    if not found:
        raise HistoryCommandError(f"{path}: no pytest-karenina history records")
    if wanted is None:
        return found[-1]
    for benchmark in reversed(found):
        if wanted in benchmark:
            return benchmark
    names = "; ".join(", ".join(b) for b in found)
    raise HistoryCommandError(f"{path}: no runs of {wanted!r} (the file has: {names})")


def show_history(path: Path, wanted: str | None, as_json: bool, out: TextIO) -> None:
    """Print the history of one benchmark in ``path`` (:class:`HistoryCommandError` when
    there is none)."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise HistoryCommandError(f"{path}: cannot be read ({exc})") from None
    benchmark = choose(benchmarks_in(content), wanted, path)
    read = parse_history(content, path, benchmark)
    history = History(read.runs)
    # Other benchmarks' records are this file's business, not problems of the one shown.
    problems = [p for p in read.problems if "another benchmark" not in p.why]
    others = [", ".join(b) for b in benchmarks_in(content) if b != benchmark]
    if as_json:
        document: Any = command_json(history, path.name, benchmark, problems)
        document["other_benchmarks"] = others
        out.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out.write(command_text(history, path.name, ", ".join(benchmark), problems))
    if others:
        out.write(
            f"other benchmarks in this file (--checkpoint NAME shows one): {'; '.join(others)}\n"
        )


def append_merged(
    path: Path,
    keep: int | None,
    run: dict[str, Any],
    config: dict[str, Any],
    payloads: Sequence[ItemPayload],
    directory: Path,
) -> HistoryKeeper:
    """Append a merged run (``run``: the shards' run record, ``config``: their verification
    config) to the history ``path``; its keeper has the lines to print."""
    benchmark = [str(name) for name in run.get("checkpoints") or ()]
    keeper = HistoryKeeper(path, benchmark, config, directory, keep)
    keeper.record(payloads)
    return keeper
