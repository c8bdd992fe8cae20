"""What a replicate costs the engine compared with a question run once (run by hand;
docs/performance.md).

    python benchmarks/bench_replicates.py [--questions 300] [--replicates 3] [--rounds 3]

Runs ``questions`` distinct questions once, then ``questions / replicates`` questions
``replicates`` times each (the same number of pipelines), in one thread with the scripted
in-process model, and prints the CPU per pipeline of both. Replicates of a question share the
compiled template and its judge schema, so the target is within 10% of a single run. The
first round warms up.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.pipeline.run import run_verification
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory

TEMPLATE = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response ({n}, {salt})")

    def ground_truth(self):
        self.correct = {{"capital": "Paris"}}

    def verify(self) -> bool:
        return self.capital.strip().lower() == self.correct["capital"].lower()
"""


def cpu_per_pipeline(questions: int, replicates: int, salt: str) -> float:
    """CPU ms per pipeline; every question has its own template (as in a real benchmark),
    never compiled before (``salt``)."""
    benchmark = Benchmark(name="replicates", questions=[
        Question(id=f"q{i}", text=f"What is the capital of France? ({i})", raw_answer="Paris",
                 template_code=TEMPLATE.format(n=i, salt=salt), finished=True)
        for i in range(questions)
    ])  # fmt: skip
    fake = FakeLLM().answer("The capital of France is Paris.").parse_as({"capital": "Paris"})
    config = fake_config(replicate_count=replicates)
    cpu = time.process_time()
    results = run_verification(benchmark, config, llm=fake_factory(config, fake), max_workers=1)
    return (time.process_time() - cpu) / len(results.results) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for round_ in range(1, args.rounds + 1):
        once = cpu_per_pipeline(args.questions, 1, f"once {round_}")
        shared = cpu_per_pipeline(
            args.questions // args.replicates, args.replicates, f"shared {round_}"
        )
        print(
            f"round {round_}: {once:.2f} ms CPU per pipeline run once, {shared:.2f} ms per "
            f"replicate ({args.replicates} per question): {shared / once:.2f} x"
        )


if __name__ == "__main__":
    main()
