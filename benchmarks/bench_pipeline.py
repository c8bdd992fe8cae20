"""Verification pipeline throughput and engine overhead over real HTTP (run by hand).

    python benchmarks/bench_pipeline.py [--questions 500] [--workers 32] [--latency 0.2]
                                        [--abstention] [--profile] [--top 25]

Generates a benchmark of distinct VerifiedField templates (three fields each) and runs
it in ``template_only`` mode -- two LLM calls per question (answer, parse), three with
``--abstention`` (an abstention check too) -- through the ``openai_endpoint`` adapter
(urllib3 + orjson) against the scripted OpenAI-compatible test server
(``tests/support/openai_server.py``, keeping connections alive as hosted APIs do). The
server runs in a child process, so this process's CPU time is the client's alone (the
engine plus its HTTP client); the child reports its own CPU.

1. Throughput: server latency ``--latency`` s, ``run_verification(..., max_workers=W)``;
   wall time against the ideal ``ceil(N / W) x calls_per_question x latency``.
2. Overhead: latency 0, same run (and with one worker); ``time.process_time()`` of this
   process over the run divided by the number of questions, and the share spent inside
   ``LangChainModel.invoke`` (the langchain-openai / openai / httpx client stack).
3. The same two runs (and the overhead run with one worker) with :class:`LocalModel`,
   an in-process model giving the same replies without HTTP: the engine without the
   langchain-openai/openai/httpx client stack.

Each phase first runs a few other questions to warm imports and code paths; every run
generates questions no earlier run of the process saw, so the measured questions'
templates are compiled during the measured run (that is engine work, paid once per
template in a real run).
``--profile`` repeats phase 2 under cProfile in every thread and prints the top functions.

Targets (docs/performance.md): wall time within 1.10x of ideal; CPU (client and engine)
under 5 ms per question at 0 ms latency.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import pstats
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
WARMUP_QUESTIONS = 8
_FRESH = [0]


def fresh_start(count: int) -> int:
    """The first number of ``count`` questions no earlier run of this process generated, so
    every measured run compiles its templates (caches keyed by template source stay cold)."""
    start = _FRESH[0]
    _FRESH[0] += count
    return start


API_KEY = "bench-key"

TEMPLATE = '''from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import BooleanMatch, ExactMatch, NumericTolerance


class Answer(BaseAnswer):
    """Answer template for generated question {i}."""

    gene: str = VerifiedField(
        description="The gene symbol the response names as the main target of C{i}",
        ground_truth="GENE{i}",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    count: float = VerifiedField(
        description="How many interacting partners the response reports",
        ground_truth={i},
        verify_with=NumericTolerance(tolerance=0.1),
        weight=2.0,
    )
    approved: bool = VerifiedField(
        description="True if the response says the drug is approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )
'''
QUESTION = (
    "Question {i}: which gene is the main target of compound C{i}, how many interacting "
    "partners does that gene have, and is the drug approved?"
)


# --- what the scripted models say ---------------------------------------------------------
NUMBER = re.compile(r"Question (\d+):")
ABSTENTION_SCHEMA = "AbstentionVerdict"


def question_number(text: str) -> int:
    found = NUMBER.search(text)
    if found is None:
        raise ValueError("not a generated question")
    return int(found.group(1))


def answer_text(i: int) -> str:
    return f"Compound C{i} targets GENE{i}, which has {i} interacting partners. It is approved."


ABSTENTION = {"reasoning": "The response gives an answer.", "abstention_detected": False}


def parsed(i: int) -> dict[str, Any]:
    return {"gene": f"GENE{i}", "count": i, "approved": True}


# --- the server child ----------------------------------------------------------------------
def serve(latency: float, stdin: IO[str], stdout: IO[str]) -> None:
    """Run the scripted server; answer ``stats`` lines with JSON, stop on ``quit``/EOF."""
    sys.path.insert(0, str(ROOT))
    from tests.support.openai_rules import request_text
    from tests.support.openai_server import OpenAIServer

    def number(body: dict[str, Any]) -> int:
        return question_number(request_text(body))

    def wants(body: dict[str, Any], schema: str) -> bool:
        return schema in json.dumps(body.get("response_format") or body.get("tools"))

    with OpenAIServer(latency=latency, keep_alive=True) as server:
        server.add_rule(
            ABSTENTION, structured=True, when=lambda body: wants(body, ABSTENTION_SCHEMA)
        )
        server.add_rule(lambda body: parsed(number(body)), structured=True)
        server.add_rule(lambda body: answer_text(number(body)), structured=False)
        stdout.write(f"{server.port}\n")
        stdout.flush()
        for line in stdin:
            if line.strip() != "stats":
                break
            stats = {
                "cpu_s": time.process_time(),
                "requests": len(server.chat_requests),
                "errors": len(server.errors),
            }
            stdout.write(json.dumps(stats) + "\n")
            stdout.flush()


class ServerProcess:
    """The scripted server in a child process (``python bench_pipeline.py --serve``)."""

    def __init__(self, latency: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.port = int(self.stdout.readline())
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        self.stdin.write("stats\n")
        self.stdin.flush()
        stats: dict[str, Any] = json.loads(self.stdout.readline())
        return stats

    def close(self) -> None:
        self.stdin.write("quit\n")
        self.stdin.close()
        self.process.wait(timeout=30)
        self.stdout.close()


@contextmanager
def server_process(latency: float) -> Iterator[ServerProcess]:
    server = ServerProcess(latency)
    try:
        yield server
    finally:
        server.close()


# --- the engine side -----------------------------------------------------------------------
def make_benchmark(count: int, start: int = 0) -> Any:
    from pytest_karenina.checkpoint import Benchmark, Question

    questions = [
        Question(
            id=f"urn:bench:q{i:05d}",
            text=QUESTION.format(i=i),
            raw_answer=f"GENE{i}, {i} partners, approved",
            template_code=TEMPLATE.format(i=i),
            finished=True,
        )
        for i in range(start, start + count)
    ]
    return Benchmark(name="bench-pipeline", questions=questions)


def make_config(base_url: str, abstention: bool = False) -> Any:
    from pytest_karenina.config.verification import VerificationConfig

    model = {
        "id": "bench",
        "interface": "openai_endpoint",
        "model_name": "test-model",
        "endpoint_base_url": base_url,
        "endpoint_api_key": API_KEY,
    }
    return VerificationConfig(
        answering_models=[model], parsing_models=[model], abstention_enabled=abstention
    )


class LocalModel:
    """A raw model answering like the server, in process and without HTTP (for the
    breakdown: the engine without its HTTP client)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def replay_identity(self) -> dict[str, Any]:
        return {"adapter": "bench-local", "model": "test-model"}

    def invoke(self, request: Any) -> Any:
        from pytest_karenina.llm.ports import ModelReply, Usage

        with self._lock:
            self.calls += 1
        if self.latency:
            time.sleep(self.latency)
        i = question_number("\n".join(m.content for m in request.messages))
        if request.call_kind == "answer_generation":
            text = answer_text(i)
        elif request.call_kind == "abstention_check":
            text = json.dumps(ABSTENTION)
        else:
            text = json.dumps(parsed(i))
        return ModelReply(text, Usage(100, 10), "test-model")


class AdapterClock:
    """Sums the CPU time spent inside ``OpenAIEndpointModel.invoke`` (the HTTP client doing
    one request) over all threads, by wrapping the method for a block."""

    def __init__(self) -> None:
        self.cpu_s = 0.0
        self._lock = threading.Lock()

    @contextmanager
    def installed(self) -> Iterator[AdapterClock]:
        try:
            from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel
        except ImportError:  # a revision before the urllib3 client: ChatOpenAI was the client
            from pytest_karenina.llm.adapters.langchain_model import (
                LangChainModel as OpenAIEndpointModel,
            )

        original = OpenAIEndpointModel.invoke

        def timed(model: Any, request: Any) -> Any:
            start = time.thread_time()
            try:
                return original(model, request)
            finally:
                with self._lock:
                    self.cpu_s += time.thread_time() - start

        OpenAIEndpointModel.invoke = timed  # type: ignore[method-assign]
        try:
            yield self
        finally:
            OpenAIEndpointModel.invoke = original  # type: ignore[method-assign]


@dataclass(frozen=True)
class Measurement:
    questions: int
    workers: int
    latency: float
    wall_s: float
    cpu_s: float
    server_cpu_s: float
    calls: int
    passed: int
    client_cpu_s: float = 0.0

    @property
    def calls_per_question(self) -> float:
        return self.calls / self.questions

    @property
    def ideal_s(self) -> float:
        waves = math.ceil(self.questions / self.workers)
        return waves * round(self.calls_per_question) * self.latency

    @property
    def ratio(self) -> float:
        return self.wall_s / self.ideal_s

    @property
    def cpu_ms_per_question(self) -> float:
        return self.cpu_s / self.questions * 1000

    @property
    def client_cpu_ms_per_question(self) -> float:
        return self.client_cpu_s / self.questions * 1000

    @property
    def server_cpu_ms_per_question(self) -> float:
        return self.server_cpu_s / self.questions * 1000


def timed_run(benchmark: Any, config: Any, workers: int, llm: Any) -> tuple[Any, float, float]:
    """``(results, wall seconds, CPU seconds of this process)`` of one run."""
    from pytest_karenina.pipeline.run import run_verification

    wall, cpu = time.perf_counter(), time.process_time()
    results = run_verification(benchmark, config, max_workers=workers, llm=llm)
    return results, time.perf_counter() - wall, time.process_time() - cpu


def check(results: Any, server_errors: int = 0) -> int:
    """The number of passed results; exits when any result or the server had an error."""
    errors = [r.metadata.error for r in results if r.metadata.error]
    if errors or server_errors:
        raise SystemExit(f"the run had errors: {errors[:3]}; server errors: {server_errors}")
    return sum(1 for r in results if r.verify_result is True)


def measure(
    questions: int, workers: int, latency: float, abstention: bool, *, seen: bool = False
) -> Measurement:
    """One warm-up and one measured run over real HTTP to the server child; ``seen``: the
    measured questions ran once before (their templates compiled, as for a further
    replicate or answering model)."""
    from pytest_karenina.pipeline.llm_stack import LLMStack

    with server_process(latency) as server:
        config = make_config(server.base_url, abstention)
        warmup = make_benchmark(WARMUP_QUESTIONS, start=fresh_start(WARMUP_QUESTIONS))
        timed_run(warmup, config, workers, LLMStack(config))
        measured = make_benchmark(questions, start=fresh_start(questions))
        if seen:
            timed_run(measured, config, workers, LLMStack(config))
        before = server.stats()
        with AdapterClock().installed() as client:
            results, wall, cpu = timed_run(measured, config, workers, None)
        after = server.stats()
    return Measurement(
        questions, workers, latency, wall, cpu, after["cpu_s"] - before["cpu_s"],
        calls=after["requests"] - before["requests"], passed=check(results, after["errors"]),
        client_cpu_s=client.cpu_s,
    )  # fmt: skip


def measure_local(questions: int, workers: int, latency: float, abstention: bool) -> Measurement:
    """The same runs with :class:`LocalModel` instead of HTTP."""
    from pytest_karenina.pipeline.llm_stack import LLMStack

    config = make_config("http://127.0.0.1:9/v1", abstention)
    warmup = LLMStack(config, adapter_factory=lambda _: LocalModel(latency))
    warmup_questions = make_benchmark(WARMUP_QUESTIONS, start=fresh_start(WARMUP_QUESTIONS))
    timed_run(warmup_questions, config, workers, warmup)
    model = LocalModel(latency)
    factory = LLMStack(config, adapter_factory=lambda _: model)
    measured = make_benchmark(questions, start=fresh_start(questions))
    results, wall, cpu = timed_run(measured, config, workers, factory)
    return Measurement(
        questions, workers, latency, wall, cpu, 0.0, model.calls, passed=check(results)
    )


@contextmanager
def profiling_all_threads() -> Iterator[list[cProfile.Profile]]:
    """cProfile in this thread and in every thread started inside the block.

    The timer is per-thread CPU time: with dozens of threads waiting on sockets and
    locks, wall-clock profiles only show the waiting.
    """
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start(*_: Any) -> None:
        profile = cProfile.Profile(time.thread_time)
        with lock:
            profiles.append(profile)
        profile.enable()  # replaces this hook for the rest of the thread

    main = cProfile.Profile(time.thread_time)
    profiles.append(main)
    threading.setprofile(start)
    main.enable()
    try:
        yield profiles
    finally:
        main.disable()
        threading.setprofile(None)


def package_of(filename: str) -> str:
    """``site-packages/<name>/...`` -> name; the engine; the standard library; builtins."""
    path = Path(filename)
    if "site-packages" in path.parts:
        return path.parts[path.parts.index("site-packages") + 1].split(".")[0]
    if "pytest_karenina" in path.parts:
        return "pytest_karenina"
    if filename.startswith(("~", "<")):
        return "builtins"
    return f"stdlib {path.stem}"


def print_by_package(stats: pstats.Stats, out: IO[str], top: int = 15) -> None:
    """Own CPU time summed per package (builtins: C functions, e.g. socket calls)."""
    own: dict[str, float] = {}
    for (filename, _, _), entry in stats.stats.items():  # type: ignore[attr-defined]
        own[package_of(filename)] = own.get(package_of(filename), 0.0) + entry[2]
    total = sum(own.values())
    out.write(f"own CPU by package ({total:.1f} s profiled):\n")
    for name, seconds in sorted(own.items(), key=lambda item: -item[1])[:top]:
        out.write(f"  {seconds / total:6.1%}  {name}\n")


def profile(questions: int, workers: int, top: int, abstention: bool) -> str:
    """Top functions by own and by cumulative CPU time of a 0 ms run over HTTP."""
    from pytest_karenina.pipeline.run import run_verification

    with server_process(0.0) as server:
        config = make_config(server.base_url, abstention)
        warmup = make_benchmark(WARMUP_QUESTIONS, start=fresh_start(WARMUP_QUESTIONS))
        run_verification(warmup, config)
        benchmark = make_benchmark(questions, start=fresh_start(questions))
        with profiling_all_threads() as profiles:
            run_verification(benchmark, config, max_workers=workers)
    out = io.StringIO()
    stats = pstats.Stats(profiles[0], stream=out)
    for extra in profiles[1:]:
        stats.add(extra)
    print_by_package(stats, out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def report(name: str, m: Measurement) -> None:
    print(
        f"{name}: {m.questions} questions, {m.workers} workers, {m.latency * 1000:.0f} ms "
        f"latency, {m.calls_per_question:g} calls/question, {m.passed} passed"
    )
    ratio = f", ideal {m.ideal_s:.2f} s, ratio {m.ratio:.3f}" if m.latency else ""
    server = (
        f", server CPU {m.server_cpu_ms_per_question:.1f} ms/question (child process)"
        if m.server_cpu_s
        else ""
    )
    client = (
        f", of which client stack {m.client_cpu_ms_per_question:.1f} ms" if m.client_cpu_s else ""
    )
    print(
        f"  wall {m.wall_s:.2f} s{ratio}; engine CPU {m.cpu_s:.2f} s = "
        f"{m.cpu_ms_per_question:.1f} ms/question{client}{server}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--abstention", action="store_true", help="three calls per question")
    parser.add_argument("--only-http", action="store_true", help="skip the local-model runs")
    parser.add_argument("--profile", action="store_true", help="profile the 0 ms run")
    parser.add_argument("--top", type=int, default=25, help="functions to list when profiling")
    parser.add_argument("--serve", type=float, metavar="LATENCY", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, sys.stdin, sys.stdout)
        return
    n, workers, latency, calls = args.questions, args.workers, args.latency, args.abstention
    report("HTTP, throughput (target ratio <= 1.10)", measure(n, workers, latency, calls))
    report("HTTP, overhead (target < 5 ms/question)", measure(n, workers, 0.0, calls))
    report("HTTP, overhead, 1 worker", measure(n, 1, 0.0, calls))
    report("HTTP, overhead, templates seen before", measure(n, workers, 0.0, calls, seen=True))
    if not args.only_http:
        report("local model, throughput", measure_local(n, workers, latency, calls))
        report("local model, overhead", measure_local(n, workers, 0.0, calls))
        report("local model, overhead, 1 worker", measure_local(n, 1, 0.0, calls))
    if args.profile:
        print(profile(n, workers, args.top, calls))


if __name__ == "__main__":
    main()
