"""CPU per question through pytest, this checkout against another one, back to back.

    python benchmarks/bench_question_cpu.py [--questions 200,1000] [--concurrency 32]
        [--latency 0.0] [--rounds 2] [--against /tmp/old-checkout] [--profile DIR]

The pipeline benchmark's generated questions (``template_only``, two calls each, every
question with its own template) are saved as checkpoints of each size and run with ``pytest
--karenina FILE`` against the scripted server child (benchmarks/bench_pipeline.py), other
plugins off (``-p no:langsmith_plugin -p no:hypothesispytest``). Reported per run: the
``pytest`` process's CPU (user + system, the server child's not included) per question, its
wall time and pytest's session line; with two sizes, the marginal CPU per question between
them (what a question costs past the fixed start-up and end). ``--against DIR`` runs the
checkout in DIR too (first on ``PYTHONPATH``), alternating with this one round by round (e.g.
``git worktree add /tmp/old HEAD~5``): on a shared machine only such ratios compare.
``--profile DIR`` records each run with ``py-spy record --gil`` (if installed) into DIR as
collapsed stacks (py-spy's pauses inflate the CPU figures of those runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pipeline  # noqa: E402  (a sibling script, not a package)

OTHER_PLUGINS_OFF = ["-p", "no:langsmith_plugin", "-p", "no:hypothesispytest"]


def run_pytest(
    code: Path, checkpoint: Path, base_url: str, concurrency: int, cwd: Path, spy: Path | None
) -> tuple[float, float, str]:
    """(process CPU seconds, wall seconds, pytest's last line) of one run of ``code``."""
    env = {**os.environ, "OPENAI_API_KEY": bench_pipeline.API_KEY, "PYTHONPATH": str(code)}
    pytest_command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *OTHER_PLUGINS_OFF,
        "--karenina", str(checkpoint), "--karenina-endpoint", base_url,
        "--karenina-answering-model", "test-model", "--karenina-concurrency", str(concurrency),
    ]  # fmt: skip
    if spy is not None:
        command = ["py-spy", "record", "--gil", "-r", "250", "-f", "raw", "-o", str(spy), "--"]
        command += pytest_command
    else:
        command = pytest_command
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stdout.splitlines() if " in " in line and "passed" in line]
    return cpu, wall, lines[-1].strip("= ") if lines else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", default="200,1000")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--against", type=Path, default=None)
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args()
    sizes = [int(size) for size in args.questions.split(",")]
    codes = [ROOT] + ([args.against.resolve()] if args.against else [])
    if args.profile is not None and shutil.which("py-spy") is None:
        raise SystemExit("--profile needs py-spy (pip install py-spy)")
    from pytest_karenina import save_checkpoint

    with (
        tempfile.TemporaryDirectory() as temp,
        bench_pipeline.server_process(args.latency) as server,
    ):
        checkpoints = {}
        for size in sizes:
            checkpoints[size] = Path(temp) / f"bench{size}.jsonld"
            save_checkpoint(bench_pipeline.make_benchmark(size), checkpoints[size])
        for round_number in range(args.rounds):
            for code in codes:
                cpu: dict[int, float] = {}
                for size in sizes:
                    cwd = Path(temp) / f"run{round_number}-{len(str(code))}-{code.name}-{size}"
                    cwd.mkdir()
                    spy = None
                    if args.profile is not None:
                        args.profile.mkdir(parents=True, exist_ok=True)
                        spy = args.profile / f"{code.name}-{size}-{round_number}.txt"
                    cpu[size], wall, line = run_pytest(
                        code, checkpoints[size], server.base_url, args.concurrency, cwd, spy
                    )
                    print(
                        f"round {round_number} {code}: {size} questions, concurrency "
                        f"{args.concurrency}, {args.latency * 1000:.0f} ms: CPU {cpu[size]:.2f} s "
                        f"({cpu[size] / size * 1000:.2f} ms/question), wall {wall:.2f} s ({line})",
                        flush=True,
                    )
                if len(sizes) == 2:
                    small, large = sizes
                    marginal = (cpu[large] - cpu[small]) / (large - small) * 1000
                    print(f"round {round_number} {code}: marginal {marginal:.2f} ms/question")


if __name__ == "__main__":
    main()
