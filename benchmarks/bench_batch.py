"""Batch mode, measured (run by hand; figures go to docs/performance.md).

    python benchmarks/bench_batch.py [--questions 1000]

Runs the two waves of a template_only run (answers, then judge calls with a JSON schema)
of N questions through the batch core against the scripted Batch API server (real HTTP),
one thread per question, and prints: batches per run, requests per batch, CPU per question
(the whole process's, the scripted servers' included), batched and the same calls live
through ``openai_endpoint``, and the resume overhead: the CPU and wall time of a second run
that re-attaches to the first run's batches through the state file instead of submitting.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_karenina.config.model import ModelConfig  # noqa: E402
from pytest_karenina.llm.adapters.openai_endpoint import OpenAIEndpointModel  # noqa: E402
from pytest_karenina.llm.batch.collector import BatchCollector  # noqa: E402
from pytest_karenina.llm.batch.model import BatchingModel  # noqa: E402
from pytest_karenina.llm.batch.registry import batch_parts  # noqa: E402
from pytest_karenina.llm.batch.state import BatchState  # noqa: E402
from pytest_karenina.llm.ports import ChatMessage, ModelRequest, RawModel  # noqa: E402
from tests.support.batch_server import BatchServer  # noqa: E402
from tests.support.openai_server import OpenAIServer  # noqa: E402

SCHEMA = {"type": "object", "properties": {"capital": {"type": "string"}},
          "required": ["capital"]}  # fmt: skip


def waves(model: RawModel, count: int) -> None:
    """Answers, then judge calls: each question's thread makes both, in order."""

    def question(number: int) -> None:
        asked = f"What is the capital of Country{number}?"
        answer = model.invoke(ModelRequest((ChatMessage("user", asked),), "answer_generation"))
        judge = (ChatMessage("system", "Extract the capital."), ChatMessage("user", answer.text))
        model.invoke(ModelRequest(judge, "parsing", json_schema=SCHEMA, schema_name="Answer"))

    threads = [threading.Thread(target=question, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=1000)
    count = parser.parse_args().questions
    chat = OpenAIServer(keep_alive=True).start()
    chat.add_rule(lambda body: f"It is {body['messages'][-1]['content'][23:-1]} City.",
                  structured=False)  # fmt: skip
    chat.add_rule({"capital": "Paris"}, structured=True)
    server = BatchServer(chat).start()
    config = ModelConfig(id="m", model_name="test-model", interface="openai_endpoint",
                         endpoint_base_url=server.base_url, endpoint_api_key="k")  # fmt: skip
    live = OpenAIEndpointModel(config)
    parts = batch_parts(config)
    assert parts is not None
    with tempfile.TemporaryDirectory() as folder:
        state = BatchState(Path(folder) / "s.batches.json", "bench", "f", "bench")
        collector = BatchCollector(state, active=lambda: count, poll=0.05, quiet=0.5)
        cpu, wall = time.process_time(), time.perf_counter()
        waves(BatchingModel(live, parts[1], parts[0], collector), count)
        batched_cpu, batched_wall = time.process_time() - cpu, time.perf_counter() - wall
        sizes = [len(lines) for lines in server.submitted]
        # A second run over the same state file: the batches are re-attached, not sent.
        again = BatchCollector(state, active=lambda: count, poll=0.05, quiet=0.5)
        cpu, wall = time.process_time(), time.perf_counter()
        waves(BatchingModel(live, parts[1], parts[0], again), count)
        resume_cpu, resume_wall = time.process_time() - cpu, time.perf_counter() - wall
        assert len(server.submitted) == len(sizes) and again.tally.recovered == 2 * count
        collector.close()
        again.close()
    direct = OpenAIEndpointModel(config.model_copy(update={"endpoint_base_url": chat.base_url}))
    cpu = time.process_time()
    waves(direct, count)
    live_cpu = time.process_time() - cpu
    print(f"| questions | {count} |")
    print(f"| batches per run | {len(sizes)} |")
    print(f"| requests per batch | {', '.join(map(str, sizes))} |")
    print(f"| process CPU per question, batched | {batched_cpu / count * 1000:.2f} ms |")
    print(f"| process CPU per question, live | {live_cpu / count * 1000:.2f} ms |")
    print(f"| wall time of the batched run | {batched_wall:.1f} s |")
    print(f"| resume (re-attach, download) CPU per question | {resume_cpu / count * 1000:.2f} ms |")
    print(f"| resume wall time | {resume_wall:.1f} s |")
    server.stop()
    chat.stop()


if __name__ == "__main__":
    main()
