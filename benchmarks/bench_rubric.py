"""What rubric evaluation adds per question, engine only (run by hand; docs/performance.md).

    python benchmarks/bench_rubric.py [--questions 300] [--rounds 3]

Runs the same benchmark (a classic template; a global rubric of three LLM score traits and a
regex trait) with the scripted in-process model in one thread, template_only and
template_and_rubric alternately, and prints wall and CPU time per question. The first round
warms up imports and caches.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.rubrics.traits import LLMRubricTrait, RegexTrait, Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory

SCORES = {"scores": {"T0": 4, "T1": 3, "T2": 5}}


def benchmark(count: int) -> Benchmark:
    traits = [LLMRubricTrait(name=f"T{i}", description="A quality", kind="score") for i in range(3)]
    questions = [
        Question(id=f"q{i}", text=f"What is the capital of France? ({i})", raw_answer="Paris",
                 template_code=CLASSIC, finished=True)
        for i in range(count)
    ]  # fmt: skip
    rubric = Rubric.from_traits([*traits, RegexTrait(name="R", pattern="Paris")])
    return Benchmark(name="rubric cost", questions=questions, global_rubric=rubric)


def measure(bench: Benchmark, mode: str) -> tuple[float, float]:
    fake = FakeLLM().answer("The capital of France is Paris.").parse_as({"capital": "Paris"})
    fake.on("rubric_evaluation", reply=json.dumps(SCORES))
    config = fake_config(evaluation_mode=mode)
    wall, cpu = time.perf_counter(), time.process_time()
    run_verification(bench, config, llm=fake_factory(config, fake), max_workers=1)
    count = len(bench.questions)
    return (time.perf_counter() - wall) / count * 1000, (time.process_time() - cpu) / count * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    bench = benchmark(options.questions)
    for round_ in range(1, options.rounds + 1):
        for mode in ("template_only", "template_and_rubric"):
            wall, cpu = measure(bench, mode)
            print(f"round {round_} {mode:20} {wall:5.2f} ms wall, {cpu:5.2f} ms CPU per question")


if __name__ == "__main__":
    main()
