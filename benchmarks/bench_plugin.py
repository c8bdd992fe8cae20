"""The plugin through pytest: throughput, CPU, end of session, memory, start-up, collection.

    python benchmarks/bench_plugin.py [--questions 500] [--concurrency 32] [--latency 0.2]
                                      [--large 5000] [--collect 10000] [--startup-runs 15]
                                      [--only throughput,cpu,xdist,startup,collect]

1. Throughput: the pipeline benchmark's generated questions (``template_only``, two LLM
   calls each) in a checkpoint file, ``pytest --karenina FILE --karenina-concurrency C``
   against the scripted server child (benchmarks/bench_pipeline.py) at ``--latency``, at
   concurrency C and 4 C. Reported: pytest's own session time (the "in X s" of its last
   line) against the ideal ``ceil(N / C) x calls x latency``, and the whole process (``time
   pytest ...``) against ideal + 1.5 s; with all plugins of the environment and with ``-p
   no:langsmith_plugin -p no:hypothesispytest`` (plugins other packages install, loaded by
   every pytest run).
2. CPU: the same at 0 ms latency for N and for ``--large`` questions; the process's CPU
   (user + system) per question, and the marginal CPU per question between the two sizes.
   The large run also reports the time from the end of the run loop to the exit of the
   process (end of session, summary, exit) and the peak RSS growth per question from the
   start of the run loop, recorded by a ``conftest.py`` probe.
3. ``-n 2``; start-up with the plugin installed but inactive against ``-p no:karenina``
   (median); ``--collect-only`` of a ``--collect``-question checkpoint.

Targets (docs/performance.md): session within 1.10x of ideal at C=32 and 1.3x at C=128;
the process within 1.10x of ideal + 1.5 s; CPU under 8 ms per question; end of session
plus exit under 3 s and peak RSS growth under 20 KB per question for 5,000 questions;
start-up cost < 50 ms; collecting 10,000 questions < 3 s.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
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
OTHER_PLUGINS_OFF = ["-p", "no:langsmith_plugin", "-p", "no:hypothesispytest"]
PROBE = """
import time
import pytest

def _kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    start_rss = _kb("VmRSS:")
    try:
        return (yield)
    finally:
        with open("probe.txt", "w") as out:
            out.write(f"{time.time()} {start_rss} {_kb('VmHWM:')}")
"""


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


def timed_pytest(args: list[str], cwd: Path) -> tuple[str, float, float, float]:
    """(stdout, process wall seconds, process CPU seconds, time.time() at its exit)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = pytest_run(args, cwd)
    wall, ended = time.perf_counter() - start, time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, wall, cpu, ended


def karenina_args(path: Path, base_url: str, concurrency: int) -> list[str]:
    return [
        "--karenina", str(path), "--karenina-endpoint", base_url,
        "--karenina-answering-model", "test-model",
        "--karenina-concurrency", str(concurrency), "-q",
    ]  # fmt: skip


def throughput(questions: int, concurrency: int, latency: float, workers: int = 1) -> None:
    for extra in ([], OTHER_PLUGINS_OFF):
        with (
            tempfile.TemporaryDirectory() as temp,
            bench_pipeline.server_process(latency) as server,
        ):
            path = write_checkpoint(questions, Path(temp), "bench.jsonld")
            args = karenina_args(path, server.base_url, concurrency) + extra
            if workers > 1:
                args += ["-n", str(workers)]
            before = server.stats()
            output, wall, cpu, _ = timed_pytest(args, Path(temp))
            after = server.stats()
        seconds = session_seconds(output)
        calls = (after["requests"] - before["requests"]) / questions
        per_worker = math.ceil(questions / workers)
        ideal = math.ceil(per_worker / concurrency) * round(calls) * latency
        label = f"-n {workers}" if workers > 1 else "one process"
        plugins = "other plugins off" if extra else "all plugins"
        print(
            f"throughput, {label}, {plugins}: {questions} questions, concurrency "
            f"{concurrency}, {latency * 1000:.0f} ms, {calls:g} calls/question: session "
            f"{seconds:.2f} s, ideal {ideal:.2f} s, ratio {seconds / ideal:.3f}; process "
            f"{wall:.2f} s, ratio to ideal + 1.5 s {wall / (ideal + 1.5):.3f}, CPU {cpu:.2f} s"
        )


def cpu_run(questions: int, concurrency: int) -> tuple[float, float, float, int, int]:
    """A 0 ms run: (process CPU s, process wall s, end of run loop to exit s, RSS at the
    run loop's start KB, peak RSS KB)."""
    with tempfile.TemporaryDirectory() as temp, bench_pipeline.server_process(0.0) as server:
        path = write_checkpoint(questions, Path(temp), "bench.jsonld")
        (Path(temp) / "conftest.py").write_text(PROBE)
        args = karenina_args(path, server.base_url, concurrency) + OTHER_PLUGINS_OFF
        _, wall, cpu, ended = timed_pytest(args, Path(temp))
        loop_end, start_rss, peak = (Path(temp) / "probe.txt").read_text().split()
    return cpu, wall, ended - float(loop_end), int(start_rss), int(peak)


def cpu_and_large(questions: int, large: int, concurrency: int) -> None:
    small_cpu, small_wall, _, _, small_peak = cpu_run(questions, concurrency)
    big_cpu, big_wall, tail, start_rss, peak = cpu_run(large, concurrency)
    marginal = (big_cpu - small_cpu) / (large - questions) * 1000
    print(
        f"CPU at 0 ms, concurrency {concurrency}: {questions} questions {small_cpu:.2f} s "
        f"({small_cpu / questions * 1000:.1f} ms/question, wall {small_wall:.2f} s); {large} "
        f"questions {big_cpu:.2f} s ({big_cpu / large * 1000:.1f} ms/question, wall "
        f"{big_wall:.2f} s); marginal {marginal:.1f} ms/question"
    )
    print(
        f"large run, {large} questions at 0 ms: end of run loop to process exit {tail:.2f} s; "
        f"peak RSS {peak / 1024:.0f} MB, growth from the run loop's start "
        f"{(peak - start_rss) / large:.1f} KB/question; against {questions} questions "
        f"{(peak - small_peak) / (large - questions):.1f} KB/question"
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


COLLECT_PROBE = """
def pytest_collection_finish(session):
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    with open("collect_probe.txt", "w") as out:
        out.write(f"{peak}")
"""


def collection(count: int) -> None:
    """``--collect-only`` of ``count`` questions: session seconds and peak RSS."""
    with tempfile.TemporaryDirectory() as temp:
        path = write_checkpoint(count, Path(temp), "big.jsonld")
        size = path.stat().st_size / 1e6
        (Path(temp) / "conftest.py").write_text(COLLECT_PROBE)
        args = ["--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
                "--collect-only", "-q", *OTHER_PLUGINS_OFF]  # fmt: skip
        stdout, wall, _, _ = timed_pytest(args, Path(temp))
        peak = int((Path(temp) / "collect_probe.txt").read_text())
    if f"{count} tests collected" not in stdout:
        raise SystemExit(f"collection failed:\n{stdout[-3000:]}")
    print(
        f"collection: {count} questions ({size:.1f} MB): session {session_seconds(stdout):.2f} s,"
        f" whole process {wall:.2f} s, peak RSS {peak / 1024:.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--collect", type=int, default=10000)
    parser.add_argument("--startup-runs", type=int, default=15)
    parser.add_argument("--only", default="throughput,cpu,xdist,startup,collect")
    args = parser.parse_args()
    only = set(args.only.split(","))
    n, concurrency, latency = args.questions, args.concurrency, args.latency
    if "throughput" in only:
        throughput(n, concurrency, latency)
        throughput(n, concurrency * 4, latency)
    if "cpu" in only:
        cpu_and_large(n, args.large, concurrency)
    if "xdist" in only:
        throughput(n, concurrency, latency, 2)
    if "startup" in only:
        startup(args.startup_runs)
    if "collect" in only:
        collection(args.collect)


if __name__ == "__main__":
    main()
