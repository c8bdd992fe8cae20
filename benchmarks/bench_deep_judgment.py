"""Deep judgment's own CPU, engine only (run by hand; figures in docs/performance.md).

    python benchmarks/bench_deep_judgment.py [--repeat 2000] [--questions 300] [--rounds 3]
    python benchmarks/bench_deep_judgment.py --hostile-only

Quote validation: a 20 KB response, 3 attributes x 3 excerpts, checked against the response
the way a deep-judgment parse does it (the response prepared once, every quote matched).
Three replies: every quote verbatim (the usual case), every quote with one character
changed (the fuzzy path), and every quote invented (rejected after the fuzzy search).
Prints the median time per reply; the target is under 1 ms.

Hostile replies (issue 24), each checked once: a paraphrased quote (every pair of words
swapped) of 4 KB against a 20 KB response and of 10 KB against 10 KB, three 850 KB paraphrases
against an 850 KB response, an invented sentence that contains a short answer, and the work
limit's worst case: nine 1,000-character quotes (the longest aligned) against a 20 KB response
where every window nearly matches (``a`` repeated), so each needs the whole search. Prints
the time per reply, what was decided and how many alignments ran.

Pipeline: the same questions (a classic template, one field) run in one thread with the
scripted in-process judge, deep judgment disabled and full, alternately; the difference in
CPU per question is what deep judgment costs the engine (target: under 3 ms). The first
round warms up. Then rubric_only questions with two LLM traits, rubric deep judgment off (one
batch call) and ``enable_all`` (excerpts, reasoning and verdict per trait), alike.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_karenina.checkpoint import Benchmark, Question
from pytest_karenina.pipeline.deep_judgment import quotes as quote_matching
from pytest_karenina.pipeline.deep_judgment.excerpts import ResponseText, check_excerpts
from pytest_karenina.pipeline.run import run_verification
from pytest_karenina.rubrics.traits import LLMRubricTrait, Rubric
from tests.pipeline.pipeline_helpers import CLASSIC
from tests.support.fake_llm import FakeLLM, fake_config, fake_factory

ANSWER = "The capital of France is Paris, on the Seine."

WORDS = (
    "the protein binds receptor signalling pathway cells tumour apoptosis expression gene "
    "regulation mitochondria membrane kinase inhibitor response patient clinical trial dose"
).split()
ATTRIBUTES = ["gene", "function", "pathway"]


def response_text(size: int, rng: random.Random) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        words.append(rng.choice(WORDS))
        if rng.random() < 0.08:
            words[-1] += "."
        length += len(words[-1]) + 1
    return " ".join(words)


def quotes(text: str, rng: random.Random, change: str) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    for attribute in ATTRIBUTES:
        entries = []
        for _ in range(3):
            start = rng.randrange(0, len(text) - 80)
            quote = text[start : start + rng.randrange(30, 80)]
            if change == "one character":
                at = rng.randrange(len(quote))
                quote = quote[:at] + "x" + quote[at + 1 :]
            elif change == "invented":
                quote = " ".join(rng.choice(WORDS) for _ in range(8)) + " zebra"
            entries.append({"text": quote, "confidence": "high"})
        reply[attribute] = entries
    return reply


def paraphrase(text: str) -> str:
    """Every pair of words swapped: nothing verbatim to anchor on."""
    words = text.split()
    for at in range(0, len(words) - 1, 2):
        words[at], words[at + 1] = words[at + 1], words[at]
    return " ".join(words)


def hostile_cases(rng: random.Random) -> list[tuple[str, str, dict[str, Any], float]]:
    """``(name, response, reply, threshold)`` of the hostile replies (see the module doc)."""
    big = response_text(850_000, rng)
    flat = "a" * 20_000
    nearly = ("a" * 49 + "b") * 20
    return [
        ("4 KB paraphrase, 20 KB response", (text := response_text(20_000, rng)),
         {"gene": [{"text": paraphrase(text[5_000:9_000])}]}, 0.8),
        ("10 KB paraphrase, 10 KB response", (ten := response_text(10_000, rng)),
         {"gene": [{"text": paraphrase(ten)}]}, 0.8),
        ("3 x 850 KB paraphrases, 850 KB", big,
         {"gene": [{"text": paraphrase(response_text(850_000, rng))} for _ in range(3)]}, 0.8),
        ("invented, contains the answer", "Zorblat.",
         {"gene": [{"text": "Napoleon discovered Zorblat. on Mars in 1802..."}]}, 0.8),
        ("9 x 1,000 chars, worst text", flat,
         {name: [{"text": nearly}] * 3 for name in ATTRIBUTES}, 0.99),
    ]  # fmt: skip


def hostile(rng: random.Random) -> None:
    calls = 0
    align = quote_matching.fuzz.partial_ratio_alignment

    def counted(*args: Any, **options: Any) -> Any:
        nonlocal calls
        calls += 1
        return align(*args, **options)

    quote_matching.fuzz.partial_ratio_alignment = counted  # type: ignore[assignment]
    for name, text, reply, threshold in hostile_cases(rng):
        calls = 0
        start = time.perf_counter()
        check = check_excerpts(
            reply, list(reply), ResponseText(text), threshold=threshold, max_per_attribute=3
        )
        took = time.perf_counter() - start
        kept = sum(len(v) for v in check.accepted.values())
        gone = sum(len(v) for v in check.rejected.values())
        print(
            f"{name:>34}: {took * 1e3:8.1f} ms, {kept} accepted, {gone} rejected, "
            f"{calls} partial_ratio alignments"
        )
    quote_matching.fuzz.partial_ratio_alignment = align  # type: ignore[assignment]


def pipeline_cost(count: int, mode: str) -> float:
    """CPU ms per question of ``count`` questions with deep judgment ``mode``."""
    questions = [
        Question(id=f"q{i}", text=f"What is the capital of France? ({i})", raw_answer="Paris",
                 template_code=CLASSIC, finished=True)
        for i in range(count)
    ]  # fmt: skip
    fake = FakeLLM().answer(ANSWER).parse_as({"capital": "Paris"})
    quote = {"capital": [{"text": "capital of France is Paris", "confidence": "high"}]}
    fake.on("deep_judgment_excerpts", reply=json.dumps(quote))
    fake.on("deep_judgment_reasoning", reply=json.dumps({"capital": "It names Paris."}))
    config = fake_config(deep_judgment_mode=mode)
    cpu = time.process_time()
    run_verification(
        Benchmark(name="dj", questions=questions), config,
        llm=fake_factory(config, fake), max_workers=1,
    )  # fmt: skip
    return (time.process_time() - cpu) / count * 1000


RUBRIC = Rubric.from_traits([
    LLMRubricTrait(name="Grounded", description="Names the capital", kind="boolean"),
    LLMRubricTrait(name="Detail", description="Level of detail", kind="score"),
])  # fmt: skip


def rubric_cost(count: int, mode: str) -> float:
    """CPU ms per question of ``count`` rubric_only questions with two LLM traits, rubric deep
    judgment ``mode`` (``disabled``: one batch call; ``enable_all``: three calls per trait)."""
    questions = [
        Question(id=f"r{i}", text=f"What is the capital of France? ({i})", raw_answer="Paris",
                 template_code=CLASSIC, finished=True, rubric=RUBRIC)
        for i in range(count)
    ]  # fmt: skip
    fake = FakeLLM().answer(ANSWER)
    quote = {"excerpts": [{"text": "capital of France is Paris", "confidence": "high"}]}
    fake.on("rubric_evaluation", reply=json.dumps(quote), contains="You collect evidence")
    fake.on("rubric_evaluation", reply="Conclusion: yes.", contains="reasoning before you")
    fake.on("rubric_evaluation", reply='{"result": true, "score": 4}', contains="You turn a")
    fake.on("rubric_evaluation", reply=json.dumps({"scores": {"Grounded": True, "Detail": 4}}))
    config = fake_config(evaluation_mode="rubric_only", deep_judgment_rubric_mode=mode)
    cpu = time.process_time()
    run_verification(
        Benchmark(name="rdj", questions=questions), config,
        llm=fake_factory(config, fake), max_workers=1,
    )  # fmt: skip
    return (time.process_time() - cpu) / count * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hostile-only", action="store_true", help="only the hostile replies")
    args = parser.parse_args()
    if args.hostile_only:
        hostile(random.Random(7))
        return
    for round_ in range(1, args.rounds + 1):
        off = pipeline_cost(args.questions, "disabled")
        full = pipeline_cost(args.questions, "full")
        print(
            f"round {round_}: {off:.2f} ms CPU per question without deep judgment, "
            f"{full:.2f} ms with full: +{full - off:.2f} ms"
        )
        off = rubric_cost(args.questions, "disabled")
        deep = rubric_cost(args.questions, "enable_all")
        print(
            f"round {round_}: {off:.2f} ms CPU per rubric_only question (2 LLM traits) without "
            f"rubric deep judgment, {deep:.2f} ms with enable_all: +{deep - off:.2f} ms"
        )
    rng = random.Random(7)
    text = response_text(20_000, rng)
    for change in ("verbatim", "one character", "invented"):
        reply = quotes(text, rng, change)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            check = check_excerpts(
                reply, ATTRIBUTES, ResponseText(text), threshold=0.8, max_per_attribute=3
            )
            times.append(time.perf_counter() - start)
        kept = sum(len(v) for v in check.accepted.values())
        print(
            f"{change:>13}: {statistics.median(times) * 1e3:.3f} ms per reply "
            f"({len(text)} chars, 9 quotes, {kept} accepted)"
        )
    hostile(rng)


if __name__ == "__main__":
    main()
