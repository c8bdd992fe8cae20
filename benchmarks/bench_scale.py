"""Fixed costs and scale through pytest: start-up, end of session, 50,000-question runs.

    python benchmarks/bench_scale.py [--only fixed,collect,full] [--runs 5]
                                     [--fixed-questions 200] [--collect 50000]
                                     [--full 50000] [--workers 0] [--code PATH]

1. fixed: ``--fixed-questions`` questions at 0 ms against the scripted server child
   (benchmarks/bench_pipeline.py), ``--runs`` times with every installed plugin and as many
   with ``-p no:langsmith_plugin``: from spawning ``pytest`` to its run loop's start, and from
   the loop's end to the process's exit (a probe conftest stamps both), medians.
2. collect: ``--collect-only`` of ``--collect`` questions: pytest's collection (from
   ``pytest_collection`` to ``pytest_collection_finish``), the whole process, peak RSS.
3. full: ``--full`` questions at 0 ms with the HTML report, JUnit XML and the
   ``--karenina-results`` export, ``--karenina-workers W`` when ``--workers`` is given:
   the whole process, its CPU (with its xdist workers), the run loop, end of loop to exit,
   peak RSS (of the largest process), and the CPU-bound line when the summary printed one.

``--code PATH`` runs another checkout's ``pytest_karenina`` (``PYTHONPATH=PATH``), e.g. a
``git worktree`` of the previous commit, to compare old and new back to back. Bytecode is
cached under a temporary ``PYTHONPYCACHEPREFIX`` (warm after the first run), as an installed
package's is, even where ``PYTHONDONTWRITEBYTECODE`` is set.

Targets (docs/performance.md): collection of 50,000 questions under 5 s and 400 MB; a full
50,000-question run at 0 ms under 10 minutes on 2 cores with the reports written.
"""

from __future__ import annotations

import argparse
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

LANGSMITH_OFF = ["-p", "no:langsmith_plugin"]
HYPOTHESIS_OFF = ["-p", "no:hypothesispytest"]
CPU_BOUND = re.compile(r"^CPU-bound: .*$", re.MULTILINE)
PROBE = """
import time

import pytest

def _kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0

STAMPS = {}

def pytest_collection(session):
    STAMPS["collect"] = time.perf_counter()

def pytest_collection_finish(session):
    took = time.perf_counter() - STAMPS["collect"]
    with open("collect_probe.txt", "w") as out:
        out.write(f"{took} {_kb('VmHWM:')}")

@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):  # a wrapper: xdist's controller loop returns first
    if not hasattr(session.config, "workerinput"):
        STAMPS["loop"] = time.time()
    return (yield)

def pytest_sessionfinish(session):
    if "loop" in STAMPS and not hasattr(session.config, "workerinput"):
        with open("loop_probe.txt", "w") as out:
            out.write(f"{STAMPS['loop']} {time.time()} {_kb('VmHWM:')}")
"""


def environment(code: Path | None, cache: Path) -> dict[str, str]:
    env = {**os.environ, "OPENAI_API_KEY": "bench-key", "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    return env


def write_checkpoint(count: int, directory: Path) -> Path:
    from pytest_karenina import save_checkpoint

    path = directory / f"bench{count}.jsonld"
    if not path.exists():
        save_checkpoint(bench_pipeline.make_benchmark(count), path)
    return path


def karenina_args(path: Path, base_url: str) -> list[str]:
    return [
        "-p", "no:cacheprovider", "--karenina", str(path), "--karenina-endpoint", base_url,
        "--karenina-answering-model", "test-model", "--karenina-concurrency", "32", "-q",
    ]  # fmt: skip


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, float, float, float]:
    """(stdout, spawn time.time(), exit time.time(), CPU seconds of the process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    spawned = time.time()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, spawned, ended, cpu


def fixed(questions: int, runs: int, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as temp, bench_pipeline.server_process(0.0) as server:
        cwd = Path(temp)
        (cwd / "conftest.py").write_text(PROBE)
        path = write_checkpoint(questions, cwd)
        args = karenina_args(path, server.base_url) + HYPOTHESIS_OFF
        run(args, cwd, env)  # warm the bytecode cache and the file cache
        for label, extra in (("all plugins", []), ("-p no:langsmith_plugin", LANGSMITH_OFF)):
            starts, tails = [], []
            for _ in range(runs):
                _, spawned, ended, _ = run(args + extra, cwd, env)
                loop, loop_end, _ = (cwd / "loop_probe.txt").read_text().split()
                starts.append(float(loop) - spawned)
                tails.append(ended - float(loop_end))
            print(
                f"fixed costs, {questions} questions, {label}: spawn to run loop "
                f"{statistics.median(starts):.2f} s (runs {_spread(starts)}), end of loop to "
                f"exit {statistics.median(tails):.2f} s (runs {_spread(tails)})"
            )


def collect(count: int, env: dict[str, str], directory: Path) -> None:
    with tempfile.TemporaryDirectory() as temp:
        cwd = Path(temp)
        (cwd / "conftest.py").write_text(PROBE)
        path = write_checkpoint(count, directory)
        args = [
            "-p", "no:cacheprovider", "--karenina", str(path), "--karenina-answering-model",
            "openai:gpt-4.1-mini", "--collect-only", "-q", *LANGSMITH_OFF, *HYPOTHESIS_OFF,
        ]  # fmt: skip
        out, spawned, ended, cpu = run(args, cwd, env)
        took, peak = (cwd / "collect_probe.txt").read_text().split()
    if f"{count} tests collected" not in out:
        raise SystemExit(f"collection failed:\n{out[-3000:]}")
    print(
        f"collect-only, {count} questions ({path.stat().st_size / 1e6:.1f} MB): collection "
        f"{float(took):.2f} s, whole process {ended - spawned:.2f} s (CPU {cpu:.2f} s), "
        f"peak RSS {int(peak) / 1024:.0f} MB"
    )


def full(count: int, workers: int, env: dict[str, str], directory: Path) -> None:
    path = write_checkpoint(count, directory)
    with tempfile.TemporaryDirectory() as temp, bench_pipeline.server_process(0.0) as server:
        cwd = Path(temp)
        (cwd / "conftest.py").write_text(PROBE)
        args = [
            *karenina_args(path, server.base_url), "--html", "report.html",
            "--self-contained-html", "--junitxml", "junit.xml",
            "--karenina-results", "results.json", *LANGSMITH_OFF, *HYPOTHESIS_OFF,
        ]  # fmt: skip
        if workers:
            args += ["--karenina-workers", str(workers)]
        before = server.stats()
        out, spawned, ended, cpu = run(args, cwd, env)
        after = server.stats()
        loop, loop_end, peak = (cwd / "loop_probe.txt").read_text().split()
        sizes = {name: (cwd / name).stat().st_size / 1e6 for name in ("report.html", "junit.xml")}
        sizes["results.json"] = (cwd / "results.json").stat().st_size / 1e6
    found = CPU_BOUND.search(out)
    label = f"--karenina-workers {workers}" if workers else "one process"
    print(
        f"full run, {count} questions at 0 ms, {label}: whole process {ended - spawned:.1f} s, "
        f"CPU {cpu:.1f} s ({cpu / count * 1000:.1f} ms/question, server child "
        f"{after['cpu_s'] - before['cpu_s']:.1f} s), run loop {float(loop_end) - float(loop):.1f}"
        f" s, end of loop to exit {ended - float(loop_end):.2f} s, peak RSS of the reporting "
        f"process {int(peak) / 1024:.0f} MB; "
        + ", ".join(f"{name} {size:.0f} MB" for name, size in sizes.items())
    )
    print(f"  summary: {found.group(0) if found else '(no CPU-bound line)'}")
    print(f"  {out.strip().splitlines()[-1]}")


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default="fixed,collect,full")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fixed-questions", type=int, default=200)
    parser.add_argument("--collect", type=int, default=50000)
    parser.add_argument("--full", type=int, default=50000)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--code", type=Path, default=None)
    parser.add_argument("--checkpoints", type=Path, default=None, help="keep checkpoints here")
    args = parser.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as made:
        env = environment(args.code, Path(cache))
        directory = args.checkpoints or Path(made)
        if "fixed" in only:
            fixed(args.fixed_questions, args.runs, env)
        if "collect" in only:
            collect(args.collect, env, directory)
        if "full" in only:
            full(args.full, args.workers, env, directory)


if __name__ == "__main__":
    main()
