"""The fault matrix, measured (run by hand; figures go to docs/reliability.md).

    python benchmarks/bench_reliability.py [--questions 200]
    python benchmarks/bench_reliability.py --load [--questions 2000]

For each fault of tests/support/fault_matrix.py (20% of the calls it targets), runs
``pytest --karenina`` on the generated benchmark against the scripted test server and
prints one Markdown table row: faults injected, requests the server saw, items passed /
failed / errored (by failure category), retries the results record, results in the export
and pytest's session time. A fault-free run comes first as the baseline.

``--load``: one run with ``-n 2`` in which 20% of all calls meet one of the transport faults
(429, 500, a reset connection, a hung request), mixed. It prints what reached the export:
results, distinct questions, duplicates, and how every question ended, so a lost or doubled
result shows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fault_matrix import (  # noqa: E402  (the repository root is on the path now)
    FAULTS,
    RATE,
    FaultCase,
    pytest_args,
    read_outcome,
    script,
    write_checkpoint,
)
from tests.support.openai_rules import Fault  # noqa: E402
from tests.support.openai_server import OpenAIServer  # noqa: E402

SESSION_TIME = re.compile(r" in ([0-9.]+)s")


def run_case(case: FaultCase | None, questions: int, directory: Path) -> str:
    with OpenAIServer() as server:
        script(server, case)
        checkpoint = write_checkpoint(directory / "faults.jsonld", questions)
        results = directory / "results.json"
        results.unlink(missing_ok=True)
        extra = list(case.extra) if case is not None else []
        command = [sys.executable, "-m", "pytest", *pytest_args(server, checkpoint, results),
                   *extra]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "bench-key"}
        done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True)
        requests = server.chat_requests
        faults = sum(1 for request in requests if request.fault is not None)
    found = SESSION_TIME.findall(done.stdout.strip().splitlines()[-1])
    seconds = float(found[-1]) if found else float("nan")
    outcome = read_outcome(results)
    errors = ", ".join(f"{n} {kind}" for kind, n in sorted(outcome.errors.items())) or "0"
    name = case.name if case is not None else "none (baseline)"
    return (
        f"| {name} | {faults} | {len(requests)} | {outcome.passed} | {outcome.failed} | "
        f"{errors} | {outcome.retries} | {outcome.results} | {seconds:.1f} s |"
    )


def run_load(questions: int, directory: Path) -> None:
    """Mixed transport faults at 20% under ``-n 2``: nothing may be lost or doubled."""
    mixed = (Fault.rate_limit(retry_after=0.05), Fault.server_error(), Fault.connection_reset(),
             Fault.timeout(seconds=5))  # fmt: skip
    with OpenAIServer() as server:
        script(server, None)
        server.set_faults(RATE, *mixed, seed=11)
        checkpoint = write_checkpoint(directory / "load.jsonld", questions)
        results = directory / "results.json"
        command = [sys.executable, "-m", "pytest", *pytest_args(server, checkpoint, results),
                   "-n", "2", "--karenina-request-timeout=0.3"]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": "bench-key"}
        done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True)
        requests = server.chat_requests
    faults = sum(1 for request in requests if request.fault is not None)
    data = json.loads(results.read_text())["results"]
    ids = Counter(result["metadata"]["question_id"] for result in data)
    outcome = read_outcome(results)
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    print(f"questions {questions}, requests {len(requests)}, faults injected {faults}")
    print(f"results {len(data)}, distinct questions {len(ids)}, "
          f"duplicated {sum(1 for n in ids.values() if n > 1)}")  # fmt: skip
    print(
        f"passed {outcome.passed}, failed {outcome.failed}, errors {dict(outcome.errors)}, "
        f"retries {outcome.retries}, passed after a retry {outcome.retried_and_passed}"
    )
    print(f"pytest exit {done.returncode}: {tail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=None)
    parser.add_argument("--load", action="store_true", help="one mixed-fault run under -n 2")
    options = parser.parse_args()
    if options.load:
        with tempfile.TemporaryDirectory() as temp:
            run_load(options.questions or 2000, Path(temp))
        return
    options.questions = options.questions or 200
    print("| fault (20%) | faults injected | requests | passed | failed | errors | retries "
          "| results | session |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as temp:
        for case in (None, *FAULTS):
            print(run_case(case, options.questions, Path(temp)), flush=True)


if __name__ == "__main__":
    main()
