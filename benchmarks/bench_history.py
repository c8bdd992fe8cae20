"""Reading a run history (run by hand; docs/performance.md).

    python benchmarks/bench_history.py [--runs 200] [--questions 5000] [--models 1]
                                       [--repeat 3]

Writes a history file of ``--runs`` records of ``--questions`` items per answering model
(verdicts, scores, costs and seconds varying run to run; each record appended the way a run
appends it), then times, best of ``--repeat``:

* ``read``: parsing the file into runs (what a run does when it starts, and the command);
* ``trends``: each model's pass rate, cost and duration per run;
* ``items``: every item's history (its marks, failing streak and flakiness);
* ``report``: what a run's report asks for, one lookup per item of the run;
* ``command``: ``pytest-karenina history --json`` on the file, whole.

The target: reading and the aggregates in under a second at 200 runs x 5,000 questions.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.history import History, run_history_record
from pytest_karenina.plugin.report.history_command import show_history
from pytest_karenina.plugin.report.history_file import append_record, read_history
from pytest_karenina.plugin.verdict.outcome import Outcome

BENCHMARK = ["benchmark.jsonld"]
OUTCOMES = (Outcome.PASS,) * 8 + (Outcome.VERIFY_FAIL, Outcome.TIMEOUT_ERROR)


def write_history(path: Path, runs: int, questions: int, models: int) -> None:
    rng = random.Random(7)
    for run in range(runs):
        payloads = [
            ItemPayload(
                nodeid=f"benchmark.jsonld::q{index}[m{model}]", category=rng.choice(OUTCOMES),
                question_id=f"urn:uuid:question-{index:06d}-of-the-benchmark",
                answering_model=f"model-{model}", score=rng.random(),
                seconds=rng.uniform(0.5, 30.0), cost=[rng.random() / 1e3, rng.random() / 1e4],
            )
            for model in range(models)
            for index in range(questions)
        ]  # fmt: skip
        commit = f"{run:040x}"
        record = run_history_record(payloads, BENCHMARK, "0123456789ab", (commit, "main"))
        append_record(path, record)


def best(repeat: int, work: Callable[[], Any]) -> tuple[float, float]:
    """The best wall time and the best CPU time of ``repeat`` calls (on a shared machine
    the CPU time says what the work costs, the wall time what waiting for a core added)."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--models", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "history.jsonl"
        start = time.perf_counter()
        write_history(path, args.runs, args.questions, args.models)
        written = time.perf_counter() - start
        size = path.stat().st_size
        print(
            f"{args.runs} runs x {args.questions} questions x {args.models} models: "
            f"{size / 1e6:.1f} MB ({size / args.runs / 1e3:.0f} KB a run), written in "
            f"{written:.1f} s ({written / args.runs * 1e3:.0f} ms a run, payloads included)"
        )
        read = read_history(path, BENCHMARK)
        assert len(read.runs) == args.runs and not read.problems
        models = [f"model-{m}" for m in range(args.models)]
        last = read.runs[-1]
        keys = [(model, key) for model in models for key in last.models[model].ids]

        def trends() -> None:
            history = History(read.runs)
            for model in models:
                history.trend(model)

        def items() -> None:
            history = History(read.runs)
            for model in models:
                history.items(model)

        def report() -> None:
            history = History(read.runs[:-1])
            for model, key in keys:
                history.item(model, key, "p")

        timings = {
            "read": best(args.repeat, lambda: read_history(path, BENCHMARK)),
            "trends": best(args.repeat, trends),
            "items": best(args.repeat, items),
            "report": best(args.repeat, report),
            "command": best(args.repeat, lambda: show_history(path, None, True, io.StringIO())),
        }
        for name, (wall, cpu) in timings.items():
            print(f"  {name:<8} {wall:6.3f} s wall, {cpu:6.3f} s CPU")
        parts = [timings[name] for name in ("read", "trends", "items")]
        wall, cpu = sum(p[0] for p in parts), sum(p[1] for p in parts)
        print(f"  read + trends + every item's history: {wall:.3f} s wall, {cpu:.3f} s CPU")


if __name__ == "__main__":
    main()
