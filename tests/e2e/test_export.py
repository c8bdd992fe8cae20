"""The export file of a real run: plain JSON that loads back into the same results."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_karenina.results import VerificationResultSet
from tests.e2e.cases import CHECKPOINT_CASES, MQ, MULTI, checkpoint
from tests.e2e.scripting import API_KEY, MODEL_NAME, CallLog, make_config, run, script
from tests.support.openai_server import Fault, OpenAIServer

CASES = CHECKPOINT_CASES[MULTI]
BROKEN = f"{MQ}3"


def test_export_of_a_real_run_round_trips(openai_server: OpenAIServer, tmp_path: Path) -> None:
    broken = next(case for case in CASES if case.question_id == BROKEN)
    openai_server.add_rule(
        Fault.http_error(401, "bad key"), last_contains=broken.asks, structured=False
    )
    script(openai_server, CASES)
    results = run(checkpoint(MULTI), make_config(openai_server), CallLog())
    reduced = {"provider": None, "name": MODEL_NAME, "temperature": 0.1}
    config = {"answering_models": [reduced], "parsing_models": [reduced]}

    path = tmp_path / "results.json"
    path.write_text(
        results.to_export_json(verification_config=config, start_time=10.0, end_time=12.5),
        encoding="utf-8",
    )

    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    assert data["format_version"] == "2.2"
    assert data["metadata"]["verification_config"] == config
    summary = data["metadata"]["job_summary"]
    # mq001 passes; mq002 and mq004 fail on content; mq003 errors (401)
    assert (summary["total_questions"], summary["successful_count"]) == (4, 1)
    assert (summary["failed_count"], summary["total_duration"]) == (3, 2.5)
    rows = data["results"]
    assert [row["metadata"]["question_id"] for row in rows] == [c.question_id for c in CASES]
    assert all("completed_without_errors" not in row["metadata"] for row in rows)
    assert [row["template"]["verify_result"] for row in rows] == [True, False, None, False]
    assert API_KEY not in path.read_text(encoding="utf-8")

    loaded = VerificationResultSet.from_export_json(path.read_text(encoding="utf-8"))

    assert [r.model_dump(mode="json") for r in loaded] == [
        r.model_dump(mode="json") for r in results
    ]
    error = loaded.results[2].metadata
    assert error.completed_without_errors is False
    assert error.error is not None and "HTTP 401" in error.error
