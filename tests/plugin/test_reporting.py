"""JUnit properties, the streamed results export, the pass-rate gate; with and without xdist."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

import pytest

from pytest_karenina.plugin.report.logged import LOGGED_KEEPS
from tests.e2e.cases import CHECKPOINT_CASES
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import Fault, OpenAIServer


def run(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> pytest.RunResult:
    scripted(server)
    path = copy_checkpoint(pytester)
    return pytester.runpytest("--karenina", str(path), *endpoint_args(server), *extra)


def test_junit_properties_and_outcomes(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    dist: list[str],
) -> None:  # fmt: skip
    junit = pytester.path / "junit.xml"
    result = run(pytester, openai_server, f"--junitxml={junit}", *dist)
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"mq001", "mq002", "mq003", "mq004", "mq005"}
    props = {p.get("name"): p.get("value") for p in cases["mq002"].iter("property")}
    assert props["karenina.verify_result"] == "False"
    assert props["karenina.answering_model"] == "test-model"
    assert props["karenina.category"] == "verify_fail"
    assert int(props["karenina.input_tokens"]) > 0
    assert cases["mq002"].find("failure") is not None
    assert cases["mq005"].find("skipped") is not None
    # every question ran exactly once: one answer and one parse call each
    assert len(openai_server.chat_requests) == 8


def test_results_stream_into_a_karenina_export(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    dist: list[str],
) -> None:  # fmt: skip
    export = pytester.path / "out" / "results.json"
    run(pytester, openai_server, f"--karenina-results={export}", *dist)
    data = json.loads(export.read_text())
    assert data["format_version"] == "2.2"
    ids = sorted(r["metadata"]["question_id"] for r in data["results"])
    assert ids == [f"urn:karenina:test:mq00{i}" for i in range(1, 5)]
    assert data["metadata"]["job_summary"]["is_complete"] is True
    assert not export.with_name("results.json.results.jsonl").exists()


@pytest.mark.parametrize(
    ("rate", "code", "decision"), [("0.5", 0, "gate passed"), ("0.75", 1, "gate FAILED")]
)
def test_min_pass_rate_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    rate: str, code: int, decision: str,
) -> None:  # fmt: skip
    junit = pytester.path / "junit.xml"
    result = run(pytester, openai_server, "--karenina-min-pass-rate", rate, f"--junitxml={junit}")
    assert result.ret == code
    result.stdout.fnmatch_lines([f"karenina gate: pass rate 50.0% * {decision}"])
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["karenina.gate"] == ("passed" if code == 0 else "failed")


def test_without_gate_any_failure_fails_the_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    assert run(pytester, openai_server).ret == 1


@pytest.mark.parametrize("tb", [None, "--tb=short"])
def test_many_failures_get_the_compact_summary_unless_tb_is_chosen(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch,
    tb: str | None,
) -> None:  # fmt: skip
    monkeypatch.setattr("pytest_karenina.plugin.report.compact.COMPACT_SUMMARY_FAILURES", 1)
    result = run(pytester, openai_server, *([tb] if tb else []))

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    headline = "_* question mq002 _*"  # pytest's per-failure title, absent in the line style
    if tb is None:
        result.stdout.fnmatch_lines(
            ["karenina: past * failed questions the failure summary is compact (--tb=line)*",
             "karenina: 2 failed questions: compact failure summary (--tb=line)*",
             "*FAILURES*", "*verify*"]
        )  # fmt: skip
        result.stdout.no_fnmatch_line(headline)
    else:
        result.stdout.fnmatch_lines([headline])
        result.stdout.no_fnmatch_line("karenina:*compact*")


def test_result_dumps_reach_logreport_hooks_and_are_not_kept_after(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    pytester.makeconftest(
        """
        SEEN = {}

        def pytest_runtest_logreport(report):
            payload = getattr(report, "karenina", None)
            if payload is not None:
                SEEN[report.nodeid] = len(payload["results"])

        def pytest_terminal_summary(terminalreporter):
            kept = sorted({
                key
                for name in ("passed", "failed")
                for report in terminalreporter.stats.get(name, [])
                for key in getattr(report, "karenina", {})
            })
            terminalreporter.write_line(f"seen {sorted(SEEN.values())} kept {kept}")
        """
    )
    result = run(pytester, openai_server)

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    # Once the item's teardown is logged only the payload's scalars stay: no result dumps,
    # field tables or question text.
    kept = sorted(LOGGED_KEEPS)
    assert f"seen [1, 1, 1, 1] kept {kept}" in result.stdout.lines


def test_the_results_path_cannot_be_the_checkpoint(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    before = path.read_bytes()

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), f"--karenina-results={path}"
    )

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-results*that is a checkpoint of this run*"])
    assert path.read_bytes() == before and openai_server.chat_requests == []


def test_a_lone_surrogate_in_a_reply_costs_nothing(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    openai_server.add_rule(
        "Water boils at 100 \ud800 °C.", last_contains="boiling point", structured=False
    )
    boiling = CHECKPOINT_CASES[MULTI][0]
    openai_server.add_rule(boiling.parsed, contains="100 \ufffd", structured=True)
    export = pytester.path / "results.json"
    result = run(pytester, openai_server, f"--karenina-results={export}", *dist)

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    data = json.loads(export.read_text(encoding="utf-8"))
    assert data["metadata"]["job_summary"]["is_complete"] is True
    answers = {
        r["metadata"]["question_id"]: r["template"]["raw_llm_response"] for r in data["results"]
    }
    assert "100 \ufffd °C" in answers["urn:karenina:test:mq001"]


def test_the_gate_forgives_only_the_questions(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 == 2\n")
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest(
        "--karenina", str(path), "test_plain.py", *endpoint_args(openai_server),
        "--karenina-min-pass-rate", "0.5",
    )  # fmt: skip

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["karenina gate: pass rate 50.0% >= 50.0%: gate FAILED (1 failures outside the questions)"]
    )


def test_a_run_where_every_question_errored_never_passes_the_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    openai_server.set_default(Fault.http_error(401, "bad key"))
    path = copy_checkpoint(pytester)
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--karenina-min-pass-rate", "0"
    )

    result.assert_outcomes(errors=4, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*gate FAILED (no question reached a verdict)"])


@pytest.mark.parametrize("stop", ["-x", "internal error"], ids=["stopped by -x", "internal error"])
def test_a_run_that_did_not_finish_every_item_is_not_complete(
    pytester: pytest.Pytester, openai_server: OpenAIServer, stop: str
) -> None:
    if stop == "internal error":
        pytester.makeconftest(
            """
            def pytest_runtest_logfinish(nodeid, location):
                if nodeid.endswith("mq002"):
                    raise RuntimeError("a plugin broke")
            """
        )
    export = pytester.path / "results.json"
    extra = ["-x"] if stop == "-x" else []
    result = run(pytester, openai_server, f"--karenina-results={export}", *extra)

    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERNAL_ERROR)
    data = json.loads(export.read_text(encoding="utf-8"))
    assert data["metadata"]["job_summary"]["is_complete"] is False


FULL_DISK_CONFTEST = """
import errno

from pytest_karenina.results import writer

ORIGINAL = writer.ExportWriter.add
CALLS = []


def full_after_one(self, result):
    CALLS.append(result)
    if len(CALLS) > 1:
        raise OSError(errno.ENOSPC, "No space left on device")
    return ORIGINAL(self, result)


def pytest_configure(config):
    writer.ExportWriter.add = full_after_one


def pytest_unconfigure(config):
    writer.ExportWriter.add = ORIGINAL
"""


def test_a_full_disk_for_the_export_costs_only_the_export(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    pytester.makeconftest(FULL_DISK_CONFTEST)
    export, junit = pytester.path / "results.json", pytester.path / "junit.xml"
    result = run(
        pytester, openai_server, f"--karenina-results={export}", f"--junitxml={junit}",
        "--karenina-min-pass-rate", "0.5",
    )  # fmt: skip

    result.assert_outcomes(passed=2, failed=2, skipped=1)  # every item ran
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the gate passed, the export did not
    warning = f"karenina: the export to {export} failed (OSError: *No space left*)"
    result.stdout.fnmatch_lines([f"{warning}; 3 results not written"])
    assert junit.exists()
    data = json.loads(export.read_text(encoding="utf-8"))
    assert len(data["results"]) == 1 and data["metadata"]["job_summary"]["is_complete"] is False


def test_an_earlier_runs_unrecovered_sidecar_is_recovered_not_truncated(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    export = pytester.path / "results.json"
    run(pytester, openai_server, f"--karenina-results={export}")
    earlier = json.loads(export.read_text(encoding="utf-8"))["results"]
    export.unlink()
    # What a killed run leaves: the sidecar with its header and results, no export.
    sidecar = export.with_name(export.name + ".results.jsonl")
    header = {"pytest_karenina_export_sidecar": 1, "job_id": "killed", "start_time": 1.0}
    sidecar.write_text(
        "\n".join(json.dumps(line) for line in [header, *earlier]) + "\n", encoding="utf-8"
    )

    result = run(pytester, openai_server, f"--karenina-results={export}")

    result.stdout.fnmatch_lines(["karenina: an earlier run to results.json did not finish*"])
    [recovered] = pytester.path.glob("results.recovered-*.json")
    data = json.loads(recovered.read_text(encoding="utf-8"))
    assert len(data["results"]) == len(earlier) == 4
    assert data["metadata"]["job_summary"]["is_complete"] is False
    assert len(json.loads(export.read_text(encoding="utf-8"))["results"]) == 4


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_a_second_run_writing_the_same_export_is_told_not_to(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    import fcntl

    export = pytester.path / "results.json"
    with open(export.with_name(export.name + ".lock"), "w") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # the first run, still writing
        second = run(pytester, openai_server, f"--karenina-results={export}")
    assert second.ret == pytest.ExitCode.USAGE_ERROR
    second.stderr.fnmatch_lines(["*another run is writing this export now*"])
    assert not export.exists()

    third = run(pytester, openai_server, f"--karenina-results={export}")
    third.assert_outcomes(passed=2, failed=2, skipped=1)
    assert export.exists() and not export.with_name(export.name + ".lock").exists()
