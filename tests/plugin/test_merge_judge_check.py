"""``pytest-karenina merge`` of a sharded ``--karenina-judge-check``: the shards' exports carry
the labels file, the kappa threshold and each label's check, and the merge prints the same
judge health, decides the same kappa gate and exits as the unsharded run (real pytest runs
over real HTTP); shards of different labels files or thresholds are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_karenina.plugin.cli import main
from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.plugin.test_judge_check import LABELS, judge
from tests.support.openai_server import OpenAIServer


def judge_run(
    pytester: pytest.Pytester, server: OpenAIServer, *extra: str, labels: str = "labels.csv"
) -> pytest.RunResult:
    """A judge check of the capitals against ``labels`` (the labels of test_judge_check:
    q1's two agree, q2's and q3's second labels do not: kappa 0.25)."""
    checkpoint = capitals_checkpoint(pytester.path)
    (pytester.path / labels).write_text(LABELS, encoding="utf-8")
    return pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(server),
        "--karenina-judge-check", labels, *extra,
    )  # fmt: skip


def shards(pytester: pytest.Pytester, server: OpenAIServer, *extra: str) -> list[str]:
    """Shards 1/2 (q1's labels) and 2/2 (q2's and q3's), exported to s1.json and s2.json."""
    for index in (1, 2):
        judge_run(pytester, server, f"--karenina-shard={index}/2",
                  f"--karenina-results=s{index}.json", *extra)  # fmt: skip
    return ["s1.json", "s2.json"]


def merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["merge", "merged.json", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def section(text: str, title: str) -> list[str]:
    """The lines of the terminal section ``title``, up to the next title (workflow commands
    left out: the plugin's guard wraps its annotations in them, the merge does not)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("=") and title in line)
    found = []
    for line in lines[start + 1 :]:
        if line.startswith("="):
            break
        if not line.startswith("::"):
            found.append(line)
    return found


def job_summary_head(path: Path) -> list[str]:
    """The job summary's title, result, pass rate and gate headlines (the tables below them
    list the slowest questions: timings differ from run to run)."""
    lines = path.read_text().splitlines()
    return lines[: next(i for i, line in enumerate(lines) if line.startswith("|"))]


@pytest.mark.parametrize(
    ("kappa", "status", "gate"),
    [(None, pytest.ExitCode.TESTS_FAILED, None),
     ("0.2", pytest.ExitCode.OK, "needs 0.2: gate passed"),
     ("0.5", pytest.ExitCode.TESTS_FAILED, "needs 0.5: gate FAILED")],
    ids=["no-gate", "gate-passed", "gate-failed"],
)  # fmt: skip
def test_a_merged_judge_check_decides_as_the_unsharded_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, dist: list[str], kappa: str | None, status: int,
    gate: str | None,
) -> None:  # fmt: skip
    judge(openai_server)
    options = [*dist, *(["--karenina-min-judge-kappa", kappa] if kappa else [])]
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "whole.md"))
    whole = judge_run(pytester, openai_server, "--karenina-github", *options)
    parts = shards(pytester, openai_server, "--karenina-github=no", *options)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "merged.md"))

    code, out, err = merge(capsys, *parts, "--github")

    assert (code, err) == (whole.ret, "")
    assert code == status
    health = section(out, "karenina judge health")
    assert health == section(whole.stdout.str(), "karenina judge health")
    assert health[0] == "labels.csv: 6 of 6 labels judged (people pass 4, fail 2), 0 unmeasured"
    assert "disagreements (2):" in health
    summary = section(out, "karenina summary")
    assert summary == section(whole.stdout.str(), "karenina summary")
    kappas = [line for line in summary if line.startswith("karenina gate: judge kappa")]
    assert [gate in line for line in kappas] == ([] if gate is None else [True])
    head = job_summary_head(pytester.path / "merged.md")
    assert head == job_summary_head(pytester.path / "whole.md")
    assert gate is None or any(gate in line for line in head)
    run = json.loads((pytester.path / "merged.json").read_text())["pytest_karenina"]["run"]
    assert run["judge_check"] == {"labels_file": "labels.csv", "labels": 6}
    assert run["min_judge_kappa"] == (float(kappa) if kappa else None)


def test_the_merge_can_set_the_kappa_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--min-judge-kappa`` overrides the shards' threshold, as ``--min-pass-rate`` does."""
    judge(openai_server)
    parts = shards(pytester, openai_server, "--karenina-min-judge-kappa", "0.2")

    assert merge(capsys, *parts)[0] == pytest.ExitCode.OK
    code, out, _ = merge(capsys, *parts, "--min-judge-kappa", "0.5")

    assert code == pytest.ExitCode.TESTS_FAILED
    assert "karenina gate: judge kappa test-model 0.25 (95% CI -0.56 to 1.00), needs 0.5: gate " \
        "FAILED" in out  # fmt: skip


@pytest.mark.parametrize(
    ("second", "message"),
    [(["--karenina-min-judge-kappa", "0.5"], "differ in min_judge_kappa (0.2 != 0.5)"),
     (["--karenina-min-judge-kappa", "0.2", "--labels=people.csv"],
      "differ in judge_check ({'labels_file': 'labels.csv', 'labels': 6} != "
      "{'labels_file': 'people.csv', 'labels': 6})")],
    ids=["threshold", "labels-file"],
)  # fmt: skip
def test_shards_of_different_judge_checks_are_refused(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str],
    second: list[str], message: str,
) -> None:  # fmt: skip
    judge(openai_server)
    judge_run(pytester, openai_server, "--karenina-shard=1/2", "--karenina-results=s1.json",
              "--karenina-min-judge-kappa", "0.2")  # fmt: skip
    labels = [a.split("=", 1)[1] for a in second if a.startswith("--labels=")] or ["labels.csv"]
    options = [a for a in second if not a.startswith("--labels=")]
    judge_run(pytester, openai_server, "--karenina-shard=2/2", "--karenina-results=s2.json",
              *options, labels=labels[0])  # fmt: skip

    code, _, err = merge(capsys, "s1.json", "s2.json")

    assert code == pytest.ExitCode.USAGE_ERROR
    assert err == f"pytest-karenina merge: inconsistent shards: s1.json and s2.json {message}\n"
    assert not (pytester.path / "merged.json").exists()


@pytest.mark.parametrize(
    ("judged", "option", "message"),
    [(False, ["--min-judge-kappa", "0.5"],
      "--min-judge-kappa: the shards ran no judge check (--karenina-judge-check)"),
     (True, ["--min-pass-rate", "0.5"], "--min-pass-rate: the shards ran a judge check "
      "(labels.csv): the pass-rate and baseline gates do not apply to labels"),
     (True, ["--baseline", "baseline.json"], "--baseline: the shards ran a judge check")],
    ids=["kappa-without-labels", "pass-rate-of-labels", "baseline-of-labels"],
)  # fmt: skip
def test_a_gate_that_does_not_apply_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str],
    judged: bool, option: list[str], message: str,
) -> None:  # fmt: skip
    judge(openai_server)
    if judged:
        parts = shards(pytester, openai_server)
    else:
        checkpoint = capitals_checkpoint(pytester.path)
        pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                           "--karenina-results=s1.json")  # fmt: skip
        parts = ["s1.json"]

    code, _, err = merge(capsys, *parts, *option)

    assert code == pytest.ExitCode.USAGE_ERROR
    assert err.startswith(f"pytest-karenina merge: {message}")
