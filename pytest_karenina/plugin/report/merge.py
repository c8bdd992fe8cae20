"""Merging the results exports of shard runs into one export.

Each input must carry a pytest run's records (``pytest_karenina`` in the export, written by
``--karenina-results``). Inputs are refused, with a :class:`MergeError` naming the files,
when they overlap (the same test item twice, the same shard twice) or disagree (shards of
different benchmarks or shard counts, different verification configs, different gate
settings or labels files). Missing shards and incomplete inputs make an incomplete merge: it
is written and summarised, but :attr:`Merged.incomplete` says why.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_karenina.plugin.options.results_path import replacing
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.merge_records import shard_problem
from pytest_karenina.results.export import RUN_KEY, export_header, is_successful, write_export
from pytest_karenina.results.fast_json import dumps, loads

GATE_SETTINGS = (
    "replicate_policy", "compare_to", "min_pass_rate", "gate_on", "score_tolerance",
    "baseline_models", "baseline_fail_on", "judge_check", "min_judge_kappa",
)  # fmt: skip
"""Run settings the merged summary and gates depend on: every input must agree on them."""


class MergeError(ValueError):
    """Inputs that cannot be merged; the message names the files and what is wrong."""


@dataclass
class ShardExport:
    """One input export, checked: its run settings, item records (as payloads) and header."""

    path: Path
    data: dict[str, Any]
    run: dict[str, Any]
    items: list[dict[str, Any]]
    payloads: list[ItemPayload]
    metadata: dict[str, Any]

    @property
    def complete(self) -> bool:
        summary = self.metadata.get("job_summary")
        return not isinstance(summary, dict) or summary.get("is_complete") is not False

    @property
    def config(self) -> Any:
        return self.metadata.get("verification_config")


@dataclass
class Merged:
    """The merged run: its settings, items (records and payloads), results, and what keeps
    it from being whole."""

    run: dict[str, Any]
    items: list[dict[str, Any]]
    payloads: list[ItemPayload]
    results: list[Any]
    inputs: list[ShardExport]
    incomplete: list[str] = field(default_factory=list)


def read_shard(path: Path) -> ShardExport:
    """Read and check one export; a :class:`MergeError` names the file and the part."""
    try:
        data = loads(path.read_bytes())
    except FileNotFoundError:
        raise MergeError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: not a readable export ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise MergeError(f'{path}: not a results export (no "results" list)')
    block = data.get(RUN_KEY)
    if not isinstance(block, dict):
        raise MergeError(
            f'{path}: has no pytest run records ("{RUN_KEY}"): write shard exports with '
            "pytest --karenina-results"
        )
    problem = shard_problem(data)
    if problem is not None:
        raise MergeError(f"{path}: {problem}")
    run, items = block["run"], block["items"]
    shard = run["shard"]
    if shard is not None and shard[0] > shard[1]:
        raise MergeError(f"{path}: {RUN_KEY}.run.shard must be [I, N] with 1 <= I <= N")
    payloads = [_payload(path, index, item) for index, item in enumerate(items)]
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return ShardExport(path, data, run, items, payloads, metadata)


def _payload(path: Path, index: int, item: Any) -> ItemPayload:
    where = f"{path}: {RUN_KEY}.items[{index}]"
    if not isinstance(item, dict) or not isinstance(item.get("nodeid"), str):
        raise MergeError(f'{where}: expected an item record with a "nodeid"')
    try:
        return ItemPayload.from_json(item)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise MergeError(f"{where} ({item['nodeid']}): not an item record ({exc})") from None


def merge_shards(paths: Sequence[Path]) -> Merged:
    """Read, check and combine the exports at ``paths``."""
    if not paths:
        raise MergeError("name at least one export to merge")
    inputs = [read_shard(path) for path in paths]
    first = inputs[0]
    for other in inputs[1:]:
        _check_agree(first, other)
    shards = _check_shards(inputs)
    seen: dict[str, Path] = {}
    for shard in inputs:
        for payload in shard.payloads:
            if payload.nodeid in seen:
                raise MergeError(
                    f"overlapping shards: {payload.nodeid} is in both "
                    f"{seen[payload.nodeid].name} and {shard.path.name}"
                )
            seen[payload.nodeid] = shard.path
    items = [item for shard in inputs for item in shard.items]
    payloads = [payload for shard in inputs for payload in shard.payloads]
    incomplete = [f"{shard.path.name} is incomplete" for shard in inputs if not shard.complete]
    if shards is not None:
        count = shards[0]
        missing = sorted(set(range(1, count + 1)) - set(shards[1]))
        if missing:
            names = ", ".join(f"{index}/{count}" for index in missing)
            incomplete.append(f"shard{'s' if len(missing) > 1 else ''} {names} missing")
    run = _merged_run(inputs)
    results = [result for shard in inputs for result in shard.data["results"]]
    return Merged(run, items, payloads, results, inputs, incomplete)


def _check_agree(first: ShardExport, other: ShardExport) -> None:
    pair = f"{first.path.name} and {other.path.name}"
    # Labels files of other names are other answering models too: the loop below names them.
    same_labels = first.run.get("judge_check") == other.run.get("judge_check")
    if first.config != other.config and same_labels:
        keys = sorted(_differing(first.config, other.config))
        raise MergeError(f"inconsistent shards: {pair} ran different verification configs "
                         f"({', '.join(keys) or 'verification_config'})")  # fmt: skip
    for name in ("checkpoints", *GATE_SETTINGS):
        if first.run.get(name) != other.run.get(name):
            raise MergeError(f"inconsistent shards: {pair} differ in {name} "
                             f"({first.run.get(name)!r} != {other.run.get(name)!r})")  # fmt: skip
    digests = [(shard.run.get("selection") or {}).get("digest") for shard in (first, other)]
    if None not in digests and digests[0] != digests[1]:
        raise MergeError(f"inconsistent shards: {pair} are shards of different benchmarks "
                         "(their question ids differ)")  # fmt: skip


def _differing(a: Any, b: Any) -> list[str]:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return []
    return [key for key in a.keys() | b.keys() if a.get(key) != b.get(key)]


def _check_shards(inputs: list[ShardExport]) -> tuple[int, list[int]] | None:
    """``(N, indices)`` when the inputs are shards of one ``I/N`` split, None when none is a
    shard; a MergeError for a mix, different N or the same shard twice."""
    found = [(shard, shard.run.get("shard")) for shard in inputs]
    sharded = [(shard, tuple(value)) for shard, value in found if value]
    if not sharded:
        return None
    if len(sharded) != len(inputs):
        plain = next(shard for shard, value in found if not value)
        raise MergeError(f"inconsistent shards: {plain.path.name} is not a shard run, "
                         f"{sharded[0][0].path.name} is")  # fmt: skip
    counts = {value[1] for _, value in sharded}
    if len(counts) > 1:
        raise MergeError(f"inconsistent shards: different shard counts ({sorted(counts)})")
    taken: dict[int, Path] = {}
    for shard, (index, _) in sharded:
        if index in taken:
            raise MergeError(f"overlapping shards: shard {index}/{counts.pop()} is both "
                             f"{taken[index].name} and {shard.path.name}")  # fmt: skip
        taken[index] = shard.path
    return counts.pop(), sorted(taken)


def _merged_run(inputs: list[ShardExport]) -> dict[str, Any]:
    """The first input's settings; the shards' selections, skips and failures added up (N
    shards of a benchmark together select what each of them collected)."""
    run = dict(inputs[0].run)
    run["shard"] = None
    selections = [shard.run.get("selection") for shard in inputs]
    if all(isinstance(s, dict) for s in selections):
        summed = {key: sum(int((s or {}).get(key, 0)) for s in selections)
                  for key in ("selected", "unchanged")}  # fmt: skip
        run["selection"] = {**(selections[0] or {}), **summed}
    else:
        run["selection"] = None
    run["skipped"] = sorted(
        {nodeid for shard in inputs for nodeid in shard.run.get("skipped") or ()}
    )
    for count in ("other_failures", "cost_capped"):
        run[count] = sum(int(shard.run.get(count) or 0) for shard in inputs)
    run["merged_from"] = [shard.path.name for shard in inputs]
    return run


def _rubric_definition(data: dict[str, Any]) -> Any:
    shared = data.get("shared_data")
    return shared.get("rubric_definition") if isinstance(shared, dict) else None


def write_merged(merged: Merged, out: Path) -> None:
    """Write the merged export to ``out`` atomically (a temporary file of its own, then a
    rename)."""
    metas = [shard.metadata for shard in merged.inputs]
    summaries = [s if isinstance(s := meta.get("job_summary"), dict) else {} for meta in metas]
    starts = [s["start_time"] for s in summaries if isinstance(s.get("start_time"), int | float)]
    ends = [s["end_time"] for s in summaries if isinstance(s.get("end_time"), int | float)]
    header = export_header(
        total=len(merged.results),
        successful=sum(1 for result in merged.results if is_successful(result)),
        job_id=str(uuid.uuid4()),
        karenina_version=metas[0].get("karenina_version"),
        verification_config=merged.inputs[0].config,
        rubric_definition=_rubric_definition(merged.inputs[0].data),
        start_time=min(starts) if starts else None,
        end_time=max(ends) if ends else time.time(),
        is_complete=not merged.incomplete,
    )
    found = [shard.data.get("scenario_results") for shard in merged.inputs]
    scenarios = [s for listed in found if isinstance(listed, list) for s in listed]
    listed_errors = [shard.data.get("errors") for shard in merged.inputs]
    errors = [
        (str(pair[0]), str(pair[1]))
        for listed in listed_errors if isinstance(listed, list)
        for pair in listed if isinstance(pair, list) and len(pair) == 2
    ]  # fmt: skip
    result_lines = (dumps(result) for result in merged.results)
    item_lines = (dumps(item) for item in merged.items)
    with replacing(out) as stream:
        write_export(
            stream, header, result_lines, scenarios or None, (merged.run, item_lines),
            errors=errors or None,
        )  # fmt: skip
