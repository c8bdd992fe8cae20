"""What ``pytest-karenina merge`` costs on a large benchmark (run by hand; docs/performance.md).

    python benchmarks/bench_merge.py [--items 50000] [--shards 8]

Writes ``shards`` exports the way shard runs do (``ExportWriter`` with a run record, one
result and one item record per item; the result is Karenina's full fixture result, about
3 KB), then times reading, checking and writing the merged export, and rebuilding the
summary and baseline entries from the records, and reports the peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.plugin.cli import summarize
from pytest_karenina.plugin.gates.baseline import entries_of
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.item_record import item_record
from pytest_karenina.plugin.report.merge import merge_shards, write_merged
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.results.writer import ExportWriter

FIXTURE = (
    Path(__file__).resolve().parent.parent / "tests/data/export_format/results_export_full.json"
)


def write_shards(directory: Path, items: int, shards: int) -> list[Path]:
    template = json.loads(FIXTURE.read_text())["results"][0]
    paths = []
    for index in range(1, shards + 1):
        path = directory / f"shard-{index}.json"
        run = {"version": 1, "checkpoints": ["bench.jsonld"], "shard": [index, shards],
               "replicate_policy": {"kind": "each", "k": None}, "compare_to": None,
               "min_pass_rate": 0.8, "gate_on": "point", "score_tolerance": 0.0,
               "selection": {"collected": items, "selected": items // shards, "digest": 7},
               "skipped": [], "other_failures": 0, "cost_capped": 0}  # fmt: skip
        writer = ExportWriter(path, run=run)
        for n in range(index - 1, items, shards):
            qid = f"urn:q{n}"
            result = {**template, "metadata": {**template["metadata"], "question_id": qid}}
            writer.add(result)
            category = Outcome.PASS if n % 5 else Outcome.VERIFY_FAIL
            payload = ItemPayload(nodeid=f"bench.jsonld::q{n}", category=category,
                                  question_id=qid, answering_model="gpt-4.1-mini",
                                  score=1.0 if n % 5 else 0.0, input_tokens=900,
                                  output_tokens=40, seconds=1.5)  # fmt: skip
            reason = None if n % 5 else "capital: 'Lyon' != 'Paris'"
            writer.add_item(item_record(payload, "passed" if n % 5 else "failed", reason))
        writer.close()
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--shards", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        started = time.perf_counter()
        paths = write_shards(directory, args.items, args.shards)
        written = time.perf_counter() - started
        size = sum(path.stat().st_size for path in paths) / 1e6
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
        started = time.perf_counter()
        merged = merge_shards(paths)
        read = time.perf_counter() - started
        write_merged(merged, directory / "merged.json")
        wrote = time.perf_counter() - started - read
        summary, _ = summarize(merged)
        entries = entries_of(summary.payloads.values(), summary.rubric_scores)
        total = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"{args.items} items in {args.shards} shards: {size:.0f} MB of exports "
          f"(written in {written:.1f} s)")  # fmt: skip
    print(f"merge: read and check {read:.2f} s, write {wrote:.2f} s, "
          f"summary and {len(entries)} baseline entries {total - read - wrote:.2f} s; "
          f"total {total:.2f} s; peak RSS {peak:.0f} MB ({before:.0f} MB before)")  # fmt: skip


if __name__ == "__main__":
    main()
