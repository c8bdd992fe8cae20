"""Run history (``--karenina-history``) through real pytest runs over real HTTP, in a real git
repository made here: records appended once per run (also under ``-n 2``, by shards and by
``pytest-karenina merge``), damaged lines reported and kept, pruning, the terminal's lines and
``pytest-karenina history``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.cli import main
from tests.plugin.plugin_helpers import (
    COUNTRIES,
    capitals_checkpoint,
    endpoint_args,
    rendered_dom,
    rendered_rows,
    screenshot,
)
from tests.support.openai_server import OpenAIServer

HISTORY = "history.jsonl"


def answers(server: OpenAIServer, **cities: str) -> None:
    """The model names each question's capital, or the city given for it (``q3="Osaka"``)."""
    server.reset()
    for qid, (country, capital) in COUNTRIES.items():
        city = cities.get(qid, capital)
        server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=directory, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def repository(directory: Path, branch: str = "trunk") -> str:
    """A git repository holding the capitals checkpoint, on ``branch``; its commit."""
    git(directory, "init", "-q", "-b", branch)
    capitals_checkpoint(directory)
    git(directory, "add", "capitals.jsonld")
    git(directory, "commit", "-q", "-m", "capitals")
    return git(directory, "rev-parse", "HEAD")


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    return pytester.runpytest(
        "--karenina", str(pytester.path / "capitals.jsonld"), *endpoint_args(server),
        f"--karenina-history={pytester.path / HISTORY}", *options,
    )  # fmt: skip


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_run_appends_one_record_with_its_commit_and_branch(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    commit = repository(pytester.path)
    for wrong in ({}, {"q3": "Osaka"}, {"q3": "Osaka"}):
        answers(openai_server, **wrong)
        run(pytester, openai_server, *dist)
    found = records(pytester.path / HISTORY)
    assert len(found) == 3  # one per run: only the reporting process writes
    assert {(r["commit"], r["branch"], r["benchmark"][0]) for r in found} == {
        (commit, "trunk", "capitals.jsonld")
    }
    columns = found[-1]["models"]["test-model"]
    assert sorted(zip(columns["ids"], columns["verdict"], strict=True)) == [
        ("q1", "p"), ("q2", "p"), ("q3", "f"),
    ]  # fmt: skip
    assert columns["category"] == {str(columns["ids"].index("q3")): "verify_fail"}
    assert all(seconds >= 0 for seconds in columns["seconds"])
    answers(openai_server, q3="Osaka")
    result = run(pytester, openai_server, *dist)
    result.stdout.fnmatch_lines([
        "karenina history history.jsonl: 4 runs",
        "  test-model: pass rate 67% (last 4 runs: 100 67 67 67), *",
        "  1 item failing since an earlier run, 0 flaky (pytest-karenina history history.jsonl*",
    ])  # fmt: skip


def test_outside_a_repository_a_run_has_no_commit(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    capitals_checkpoint(pytester.path)
    answers(openai_server)
    assert run(pytester, openai_server).ret == pytest.ExitCode.OK
    (record,) = records(pytester.path / HISTORY)
    assert (record["commit"], record["branch"]) == (None, None)


def test_a_damaged_file_is_reported_by_line_and_kept_whole(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    repository(pytester.path)
    answers(openai_server)
    run(pytester, openai_server)
    (ours,) = (pytester.path / HISTORY).read_text().splitlines()
    other = json.loads(ours) | {"benchmark": ["other.jsonld"]}
    newer = json.loads(ours) | {"version": 99}
    damaged = "\n".join(["{not json", json.dumps(other), json.dumps(newer), ours, '{"torn": '])
    (pytester.path / HISTORY).write_text(damaged)
    result = run(pytester, openai_server, "--junitxml=out.xml")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "karenina history history.jsonl: 2 runs",
        "karenina history: skipped history.jsonl line 1: not JSON *",
        "karenina history: skipped history.jsonl line 2: a run of another benchmark "
        "(other.jsonld, not capitals.jsonld)",
        "karenina history: skipped history.jsonl line 3: format version 99, newer than this "
        "pytest-karenina reads (1)*",
    ])  # fmt: skip
    assert "line 5" not in result.stdout.str()  # a torn last line: the next append ends it
    assert (pytester.path / "out.xml").exists()
    after = (pytester.path / HISTORY).read_text()
    assert after.startswith(damaged + "\n")  # nothing lost; the torn line ended
    assert len(after.splitlines()) == 6


def test_pruning_keeps_the_last_runs_and_every_other_line(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    repository(pytester.path)
    (pytester.path / HISTORY).write_text('{"format": "elsewhere"}\n')
    for wrong in ({}, {"q1": "Lyon"}, {"q2": "Milan"}, {"q3": "Osaka"}):
        answers(openai_server, **wrong)
        result = run(pytester, openai_server, "--karenina-history-keep=2")
    result.stdout.fnmatch_lines(["  pruned 1 older record (keeping 2 runs)"])
    lines = (pytester.path / HISTORY).read_text().splitlines()
    assert lines[0] == '{"format": "elsewhere"}'
    kept = [json.loads(line)["models"]["test-model"] for line in lines[1:]]
    failed = [dict(zip(c["ids"], c["verdict"], strict=True)) for c in kept]
    assert [next(q for q, v in f.items() if v == "f") for f in failed] == ["q2", "q3"]


def test_keep_without_a_history_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    capitals_checkpoint(pytester.path)
    result = pytester.runpytest(
        "--karenina", str(pytester.path / "capitals.jsonld"), *endpoint_args(openai_server),
        "--karenina-history-keep=3",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--karenina-history-keep: name the file with --karenina-history*"]
    )


@pytest.mark.xdist
def test_shards_and_their_merge_append_to_one_history(
    pytester: pytest.Pytester,
    openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commit = repository(pytester.path)
    answers(openai_server, q2="Milan")
    for index in (1, 2):
        extra = ["-n", "2"] if index == 2 else []
        run(pytester, openai_server, f"--karenina-shard={index}/2",
            f"--karenina-results=s{index}.json", *extra)  # fmt: skip
    merged_history = pytester.path / "merged.jsonl"
    capsys.readouterr()  # the runs' output
    parts = [str(pytester.path / name) for name in ("out.json", "s1.json", "s2.json")]
    step_summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    code = main(["merge", *parts, f"--history={merged_history}", "--github"])
    out, err = capsys.readouterr()
    assert code == pytest.ExitCode.TESTS_FAILED, err
    assert "karenina history merged.jsonl: 1 run" in out
    assert "**Run history merged.jsonl: 1 run**" in step_summary.read_text()
    (merged,) = records(merged_history)
    shards = records(pytester.path / HISTORY)
    assert [r["shard"] for r in shards] == [[1, 2], [2, 2]]
    assert {r["settings"] for r in shards} == {merged["settings"]}
    assert merged["commit"] == commit and merged["shard"] is None
    code = main(["history", str(pytester.path / HISTORY), "--json"])
    shown = json.loads(capsys.readouterr().out)
    (joined,) = shown["runs"]  # the two shard records are one run
    assert joined["lines"] == [1, 2]
    assert joined["models"]["test-model"] == merged_models(merged)
    assert shown["items"]["test-model"]["q2"]["marks"] == "f"


def merged_models(record: dict[str, Any]) -> dict[str, Any]:
    columns = record["models"]["test-model"]
    return {
        "passed": columns["verdict"].count("p"), "total": len(columns["ids"]),
        "cost": None, "seconds": sum(columns["seconds"]),
    }  # fmt: skip


def test_the_history_command_prints_trends_failing_and_flaky_items(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    commit = repository(pytester.path)
    for wrong in ({"q1": "Lyon"}, {}, {"q1": "Lyon"}, {"q3": "Osaka"}, {"q3": "Osaka"}):
        answers(openai_server, **wrong)
        run(pytester, openai_server)
    capsys.readouterr()  # the runs' output
    assert main(["history", str(pytester.path / HISTORY)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("history.jsonl: 5 runs of capitals.jsonld\n")
    assert f"  {commit[:8]}" in out.splitlines()[1]
    assert "test-model: pass rate 67% (last 5 runs: 67 100 67 67 67)" in out
    assert f"  q3 [test-model] pppff: failing since {commit[:8]} (2 runs)" in out
    assert "  q1 [test-model] fpfpp: flaky in 2 of the last 5 runs" in out
    assert main(["history", str(pytester.path / HISTORY), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [run["commit"] for run in document["runs"]] == [commit] * 5
    assert document["items"]["test-model"]["q3"] == {
        "marks": "pppff", "failing_runs": 2, "failing_since": commit[:8], "flaky": 0, "window": 5
    }  # fmt: skip
    assert main(["history", str(pytester.path / "missing.jsonl")]) == 4
    assert "missing.jsonl: cannot be read" in capsys.readouterr().err


@pytest.mark.subprocess  # Chromium
def test_the_report_shows_each_items_runs_and_the_models_trends_in_chromium(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    commit = repository(pytester.path)
    for wrong in ({"q1": "Lyon"}, {}, {"q1": "Lyon", "q3": "Osaka"}):
        answers(openai_server, **wrong)
        run(pytester, openai_server)
    answers(openai_server, q3="Osaka")
    report = pytester.path / "report.html"
    run(pytester, openai_server, f"--html={report}", "--self-contained-html")
    page = report.read_text()
    # The summary is static HTML: there without a script.
    summary = page.split('<div class="karenina-history">', 1)[1].split("</div></div>", 1)[0]
    assert "<h3>Run history (4 runs, history.jsonl)</h3>" in summary
    assert "test-model: pass rate 67% (last 4 runs: 67 100 33 67)" in summary
    assert (
        'data-history-chart="pass-rate"' in summary and 'data-history-chart="duration"' in summary
    )
    assert 'data-history-chart="cost"' not in summary  # no price table, no cost chart
    assert "<figcaption>pass rate (%): 67 (last 4 runs: 67 100 33 67)</figcaption>" in summary
    dom = rendered_dom(pytester, report)
    assert '<th data-column-type="khistory">History</th>' in dom
    (q3,) = rendered_rows(dom, "capitals.jsonld::q3")
    cell = q3.split('<td class="col-khistory">', 1)[1].split("</td>", 1)[0]
    assert 'aria-label="last 4 runs, oldest first: pass x2, fail x2"' in cell
    assert cell.count('<path fill="#2e7d32"') == cell.count('<path fill="#c62828"') == 1
    assert f"failing since {commit[:8]} (2 runs)" in cell
    (q1,) = rendered_rows(dom, "capitals.jsonld::q1")
    assert "flaky in 2 of the last 4 runs" in q1
    (q2,) = rendered_rows(dom, "capitals.jsonld::q2")  # passed every run: words, no strip
    assert '<span class="karenina-history-note">passed the last 4 runs</span>' in q2
    # The History cell follows the Flaky one in every row, the header too.
    assert q1.index('class="col-kflaky"') < q1.index('class="col-khistory"')
    picture = screenshot(pytester, report)
    assert picture.startswith(b"\x89PNG\r\n\x1a\n") and len(picture) > 20_000


def test_an_estimate_leaves_the_history_alone(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    repository(pytester.path)
    answers(openai_server)
    store = pytester.path / "store.jsonl"
    run(pytester, openai_server, "--karenina-replay=record", f"--karenina-replay-store={store}")
    kept = (pytester.path / HISTORY).read_text()
    result = run(pytester, openai_server, "--karenina-estimate", f"--karenina-replay-store={store}")
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / HISTORY).read_text() == kept
    assert "karenina history" not in result.stdout.str()


def test_the_github_job_summary_gives_the_history(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository(pytester.path)
    step_summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    for wrong in ({"q3": "Osaka"}, {"q3": "Osaka"}):
        answers(openai_server, **wrong)
        run(pytester, openai_server)
    markdown = step_summary.read_text().split("### pytest-karenina")[-1]
    section = markdown.split("**Run history history.jsonl: 2 runs**\n\n", 1)[1].split("\n\n")[0]
    trend, failing = section.splitlines()
    assert trend.startswith("- test-model: pass rate 67% (last 2 runs: 67 67), ")
    assert trend.endswith(" s")  # the pipelines' seconds
    assert failing == (
        "- 1 item failing since an earlier run, 0 flaky (pytest-karenina history history.jsonl "
        "lists them)"
    )


def test_a_history_that_cannot_be_written_costs_only_itself(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    repository(pytester.path)
    (pytester.path / HISTORY).mkdir()  # neither readable nor writable as a file
    answers(openai_server)
    result = run(pytester, openai_server, "--junitxml=out.xml", "--karenina-results=out.json")
    assert result.ret == pytest.ExitCode.OK  # the history is no gate
    result.stdout.fnmatch_lines([
        "karenina history: skipped history.jsonl: cannot be read (IsADirectoryError*",
        f"karenina history: this run was not recorded in {pytester.path / HISTORY} "
        "(IsADirectoryError*",
    ])  # fmt: skip
    assert (pytester.path / "out.xml").exists() and (pytester.path / "out.json").exists()
