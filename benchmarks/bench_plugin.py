"""The plugin through pytest: throughput, startup cost, collection time (run by hand).

    python benchmarks/bench_plugin.py [--questions 500] [--concurrency 32] [--latency 0.2]
                                      [--collect 10000] [--startup-runs 15]

1. Throughput: the pipeline benchmark's 500 generated questions (three LLM calls each)
   in a checkpoint file, ``pytest --karenina FILE --karenina-concurrency C`` against the
   scripted server child (benchmarks/bench_pipeline.py) at ``--latency``; then the same
   with ``-n 2``. Wall time is pytest's own session time (the "in X s" of its last line,
   from session start to end, so interpreter start-up is not counted) against the ideal
   ``ceil(N / C) x calls x latency`` (with ``-n 2``: C per worker, so N / 2 per worker;
   run once with C per worker and once with C / 2, the same total in flight).
2. Start-up: median wall time of ``pytest --co -q`` in an empty directory with the plugin
   installed but inactive, against ``-p no:karenina``.
3. Collection: ``pytest --karenina FILE --collect-only -q`` on a 10,000-question
   checkpoint, pytest's session time.

Targets (docs/performance.md): throughput within 1.2x of ideal, with and without ``-n 2``;
start-up cost < 50 ms; collecting 10,000 questions < 3 s.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pipeline  # noqa: E402  (a sibling script, not a package)

SESSION_TIME = re.compile(r" in ([0-9.]+)s")
API_KEY = "bench-key"


def session_seconds(output: str) -> float:
    found = SESSION_TIME.findall(output.strip().splitlines()[-1])
    if not found:
        raise SystemExit(f"no session time in pytest's output:\n{output[-2000:]}")
    return float(found[-1])


def write_checkpoint(count: int, directory: Path, name: str) -> Path:
    from pytest_karenina import save_checkpoint

    path = directory / name
    save_checkpoint(bench_pipeline.make_benchmark(count), path)
    return path


def pytest_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": API_KEY}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def throughput(questions: int, concurrency: int, latency: float, workers: int) -> None:
    with tempfile.TemporaryDirectory() as temp, bench_pipeline.server_process(latency) as server:
        path = write_checkpoint(questions, Path(temp), "bench.jsonld")
        args = [
            "--karenina", str(path), "--karenina-endpoint", server.base_url,
            "--karenina-answering-model", "test-model", "--karenina-abstention",
            "--karenina-concurrency", str(concurrency), "-q",
        ]  # fmt: skip
        if workers > 1:
            args += ["-n", str(workers)]
        before = server.stats()
        done = pytest_run(args, Path(temp))
        after = server.stats()
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    seconds = session_seconds(done.stdout)
    calls = (after["requests"] - before["requests"]) / questions
    per_worker = math.ceil(questions / workers)
    ideal = math.ceil(per_worker / concurrency) * round(calls) * latency
    label = f"-n {workers}" if workers > 1 else "one process"
    print(
        f"throughput, {label}: {questions} questions, concurrency {concurrency}, "
        f"{latency * 1000:.0f} ms, {calls:g} calls/question: session {seconds:.2f} s, "
        f"ideal {ideal:.2f} s, ratio {seconds / ideal:.3f}"
    )


def startup(runs: int) -> None:
    def median(extra: list[str]) -> float:
        times = []
        with tempfile.TemporaryDirectory() as temp:
            for _ in range(runs):
                start = time.perf_counter()
                pytest_run(["--co", "-q", *extra], Path(temp))
                times.append(time.perf_counter() - start)
        return statistics.median(times)

    pytest_run(["--co", "-q"], ROOT)  # warm the file cache
    with_plugin, without = median([]), median(["-p", "no:karenina"])
    print(
        f"start-up (median of {runs}): plugin inactive {with_plugin * 1000:.0f} ms, "
        f"-p no:karenina {without * 1000:.0f} ms, cost {(with_plugin - without) * 1000:.0f} ms"
    )


def collection(count: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        path = write_checkpoint(count, Path(temp), "big.jsonld")
        size = path.stat().st_size / 1e6
        args = ["--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
                "--collect-only", "-q"]  # fmt: skip
        done = pytest_run(args, Path(temp))
    if f"{count} tests collected" not in done.stdout:
        raise SystemExit(f"collection failed:\n{done.stdout[-3000:]}")
    print(f"collection: {count} questions ({size:.1f} MB): {session_seconds(done.stdout):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--collect", type=int, default=10000)
    parser.add_argument("--startup-runs", type=int, default=15)
    args = parser.parse_args()
    throughput(args.questions, args.concurrency, args.latency, 1)
    throughput(args.questions, args.concurrency, args.latency, 2)
    throughput(args.questions, args.concurrency // 2, args.latency, 2)  # same total in flight
    startup(args.startup_runs)
    collection(args.collect)


if __name__ == "__main__":
    main()
