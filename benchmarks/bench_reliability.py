"""The fault matrix, measured (run by hand; figures go to docs/reliability.md).

    python benchmarks/bench_reliability.py [--questions 200]

For each fault of tests/support/fault_matrix.py (20% of the calls it targets), runs
``pytest --karenina`` on the generated benchmark against the scripted test server and
prints one Markdown table row: faults injected, requests the server saw, items passed /
failed / errored (by failure category), retries the results record, results in the export
and pytest's session time. A fault-free run comes first as the baseline.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fault_matrix import (  # noqa: E402  (the repository root is on the path now)
    FAULTS,
    FaultCase,
    pytest_args,
    read_outcome,
    script,
    write_checkpoint,
)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    options = parser.parse_args()
    print("| fault (20%) | faults injected | requests | passed | failed | errors | retries "
          "| results | session |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as temp:
        for case in (None, *FAULTS):
            print(run_case(case, options.questions, Path(temp)), flush=True)


if __name__ == "__main__":
    main()
