"""``pytest-karenina merge``: shard runs (real pytest runs over real HTTP) merged back into the
unsharded run, with the same summary and gates; overlapping and inconsistent shards refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.cli import main
from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

SEVEN = {
    "q1": ("France", "Paris"), "q2": ("Italy", "Rome"), "q3": ("Japan", "Tokyo"),
    "q4": ("Spain", "Madrid"), "q5": ("Peru", "Lima"), "q6": ("Chile", "Santiago"),
    "q7": ("Kenya", "Nairobi"),
}  # fmt: skip
WRONG = {"q2": "Milan", "q6": "Valparaiso"}


def console_script() -> str:
    """The ``pytest-karenina`` script of the Python running the tests (beside its executable,
    so a venv's python called by its path finds it), else the first on PATH."""
    beside = Path(sys.executable).parent
    for name in ("pytest-karenina", "pytest-karenina.exe"):
        if (beside / name).is_file():
            return str(beside / name)
    found = shutil.which("pytest-karenina")
    if found is None:
        pytest.skip(f"no pytest-karenina console script beside {sys.executable} or on PATH "
                    "(pip install -e '.[dev]' installs it)")  # fmt: skip
    return found


def answers(server: OpenAIServer) -> None:
    """Every capital right but q2's and q6's."""
    for qid, (country, capital) in SEVEN.items():
        city = WRONG.get(qid, capital)
        server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


def shard_run(
    pytester: pytest.Pytester, server: OpenAIServer, out: str, *options: str
) -> pytest.RunResult:
    checkpoint = capitals_checkpoint(pytester.path, SEVEN)
    return pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(server),
        f"--karenina-results={pytester.path / out}", *options,
    )  # fmt: skip


def merge(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["merge", *(str(a) for a in args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def verdicts(export: Path) -> dict[str, bool | None]:
    results = json.loads(export.read_text())["results"]
    return {r["metadata"]["question_id"]: r["template"]["verify_result"] for r in results}


def summary_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "karenina summary" in line)
    return [line for line in lines[start + 1 :] if not line.startswith(("=", "FAILED", "tokens"))]


@pytest.mark.parametrize(
    "shards", [pytest.param(n, marks=[pytest.mark.xdist] if n == 2 else []) for n in range(1, 8)]
)
def test_shards_merge_back_into_the_unsharded_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str], shards: int,
) -> None:  # fmt: skip
    answers(openai_server)
    whole = shard_run(pytester, openai_server, "whole.json", "--karenina-min-pass-rate=0.5")
    parts = []
    for index in range(1, shards + 1):
        extra = ["-n", "2"] if index == 1 and shards == 2 else []  # marked xdist above
        shard_run(pytester, openai_server, f"s{index}.json", f"--karenina-shard={index}/{shards}",
                  "--karenina-min-pass-rate=0.5", *extra)  # fmt: skip
        parts.append(pytester.path / f"s{index}.json")
    capsys.readouterr()

    code, out, err = merge(capsys, pytester.path / "merged.json", *parts)

    assert (code, err) == (whole.ret, "")
    merged = pytester.path / "merged.json"
    assert verdicts(merged) == verdicts(pytester.path / "whole.json")
    assert len(json.loads(merged.read_text())["results"]) == len(SEVEN)
    assert summary_lines(out) == summary_lines(whole.stdout.str())
    assert "karenina gate: pass rate 71.4% >= 50.0%: gate passed" in out


@pytest.mark.subprocess
def test_the_console_script_merges(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    answers(openai_server)
    for index in (1, 2):
        shard_run(pytester, openai_server, f"s{index}.json", f"--karenina-shard={index}/2")
    script = console_script()

    done = subprocess.run([script, "merge", "out.json", "s1.json", "s2.json"], cwd=pytester.path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip

    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stderr
    assert "pass rate 71.4% (5/7 items)" in done.stdout
    document = json.loads((pytester.path / "out.json").read_text())
    assert document["metadata"]["job_summary"]["is_complete"] is True
    assert document["pytest_karenina"]["run"]["selection"]["selected"] == 7
    assert sorted(i["question_id"] for i in document["pytest_karenina"]["items"]) == sorted(SEVEN)


def test_a_missing_shard_makes_an_incomplete_merge(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    answers(openai_server)
    shard_run(pytester, openai_server, "s1.json", "--karenina-shard=1/3")
    shard_run(pytester, openai_server, "s3.json", "--karenina-shard=3/3")
    capsys.readouterr()

    code, out, _ = merge(capsys, pytester.path / "m.json", pytester.path / "s1.json",
                         pytester.path / "s3.json", "--min-pass-rate=0")  # fmt: skip

    assert code == pytest.ExitCode.TESTS_FAILED
    assert "pytest-karenina merge: incomplete: shard 2/3 missing" in out
    assert (
        json.loads((pytester.path / "m.json").read_text())["metadata"]["job_summary"]["is_complete"]
        is False
    )


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("--karenina-shard=1/2", "overlapping shards: shard 1/2 is both s1.json and other.json"),
        ("--karenina-shard=2/3", "inconsistent shards: different shard counts ([[]2, 3[]])"),
        ("--karenina-replicates=2", "inconsistent shards: s1.json and other.json ran different "
                                    "verification configs (replicate_count)"),
        ("--karenina-min-pass-rate=0.9", "inconsistent shards: s1.json and other.json differ in "
                                         "min_pass_rate (None != 0.9)"),
    ],
    ids=["same shard twice", "shard counts", "configs", "gate settings"],
)  # fmt: skip
def test_overlapping_or_inconsistent_shards_are_refused(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str], second: str, message: str,
) -> None:  # fmt: skip
    answers(openai_server)
    shard_run(pytester, openai_server, "s1.json", "--karenina-shard=1/2")
    options = [second] if "shard" in second else [second, "--karenina-shard=2/2"]
    shard_run(pytester, openai_server, "other.json", *options)
    capsys.readouterr()

    code, _, err = merge(capsys, pytester.path / "m.json", pytester.path / "s1.json",
                         pytester.path / "other.json")  # fmt: skip

    assert code == pytest.ExitCode.USAGE_ERROR
    pytest.LineMatcher(err.splitlines()).fnmatch_lines([f"pytest-karenina merge: {message}"])
    assert not (pytester.path / "m.json").exists()


def test_shards_of_different_benchmarks_are_refused(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    answers(openai_server)
    shard_run(pytester, openai_server, "s1.json", "--karenina-shard=1/2")
    fewer = dict(list(SEVEN.items())[:5])
    (pytester.path / "other").mkdir()
    checkpoint = capitals_checkpoint(pytester.path / "other", fewer)
    pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server),
                       "--karenina-results=s2.json", "--karenina-shard=2/2")  # fmt: skip
    capsys.readouterr()

    code, _, err = merge(capsys, "m.json", pytester.path / "s1.json", pytester.path / "s2.json")

    assert code == pytest.ExitCode.USAGE_ERROR
    assert "are shards of different benchmarks (their question ids differ)" in err


def test_an_export_without_run_records_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "karenina.json"
    plain.write_text(json.dumps({"format_version": "2.2", "metadata": {}, "results": []}))
    code, _, err = merge(capsys, tmp_path / "m.json", plain)
    assert code == pytest.ExitCode.USAGE_ERROR
    assert f"{plain}: has no pytest run records" in err


def test_merge_gates_on_a_baseline_and_updates_it(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    answers(openai_server)
    parts = []
    for index in (1, 2):
        shard_run(pytester, openai_server, f"s{index}.json", f"--karenina-shard={index}/2")
        parts.append(pytester.path / f"s{index}.json")
    baseline = pytester.path / "baseline.json"
    capsys.readouterr()

    code, out, _ = merge(capsys, "m.json", *parts, "--baseline", baseline, "--baseline-update")
    assert code == pytest.ExitCode.OK, out
    assert "karenina baseline baseline.json: written (7 entries: fail 2, pass 5)" in out

    document = json.loads(baseline.read_text())
    document["entries"][5]["verdict"] = "pass"  # q6 passed in the baseline: now a regression
    baseline.write_text(json.dumps(document))
    code, out, _ = merge(capsys, "m.json", *parts, "--baseline", baseline)
    assert code == pytest.ExitCode.TESTS_FAILED
    assert "  regression: q6 [test-model]: pass -> fail" in out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["pytest_karenina"]["items"][0].update(category="weird"),
         "pytest_karenina.items[[]0[]] (capitals.jsonld::q*): field 'category' is not one of "
         "the values it can take, got 'weird'"),
        (lambda d: d["pytest_karenina"]["items"][0].update(rubric={"x": 1}),
         "pytest_karenina.items[[]0[]] (*): field 'rubric.passed' is missing; field "
         "'rubric.gated' is missing; field 'rubric.traits' is missing (and 1 more problems)"),
        (lambda d: d["pytest_karenina"]["items"][0].pop("nodeid"),
         "pytest_karenina.items[[]0[]]: field 'nodeid' is missing"),
        (lambda d: d["pytest_karenina"]["run"].update(shard="2/2"),
         "field 'pytest_karenina.run.shard' must be a list, got '2/2'"),
        (lambda d: d["pytest_karenina"]["run"].update(shard=[2, 1]),
         "pytest_karenina.run.shard must be [[]I, N[]] with 1 <= I <= N"),
        (lambda d: d.update(metadata=None), None),
    ],
    ids=["category", "rubric", "nodeid", "shard", "shard order", "metadata"],
)  # fmt: skip
def test_a_damaged_export_is_refused_naming_the_file_and_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer, capsys: pytest.CaptureFixture[str],
    edit: Any, message: str | None,
) -> None:  # fmt: skip
    answers(openai_server)
    shard_run(pytester, openai_server, "s1.json", "--karenina-shard=1/1")
    export = pytester.path / "s1.json"
    document = json.loads(export.read_text())
    edit(document)
    export.write_text(json.dumps(document))
    capsys.readouterr()

    code, _, err = merge(capsys, "m.json", export)

    if message is None:  # a header without metadata still merges
        assert code == pytest.ExitCode.TESTS_FAILED and err == ""
        return
    assert code == pytest.ExitCode.USAGE_ERROR
    pytest.LineMatcher(err.splitlines()).fnmatch_lines(
        [f"pytest-karenina merge: {export}: {message}"]
    )


def script_model(
    server: OpenAIServer, model: str, wrong: dict[str, tuple[str, int | None]]
) -> None:
    """``model`` names each capital of :data:`SEVEN`, but ``wrong[qid] = (city, times)``: that
    city the first ``times`` answers (every answer when None)."""
    for qid, (country, capital) in SEVEN.items():
        asked = f"capital of {country}"
        if qid in wrong:
            city, times = wrong[qid]
            server.add_rule(f"It is {city}.", structured=False, contains=asked, model=model,
                            times=times)  # fmt: skip
            server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
        server.add_rule(f"It is {capital}.", structured=False, contains=asked, model=model)
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def baseline_section(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("karenina baseline "))
    return [line for line in lines[start:] if line.startswith(("karenina baseline", "  "))]


def test_merged_baseline_decisions_equal_the_unsharded_runs(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str], dist: list[str],
) -> None:  # fmt: skip
    """Issue 26: a model swap (two models each side, mapped across), four replicates, two
    questions that fail every time (p = 0.029 each: regressions alone, likely regressions once
    Holm's correction counts both) in different shards, and a noisy one. Each shard alone
    would call its question a regression; the merge decides over the whole run, as the
    unsharded run does, with the mapping and fail-on setting the shards ran with."""
    checkpoint = capitals_checkpoint(pytester.path, SEVEN)
    baseline = pytester.path / "baseline.json"
    common = [
        "--karenina", str(checkpoint), "--karenina-endpoint", openai_server.base_url,
        "--karenina-parsing-model", "judge-model", "--karenina-replicates=4",
        "-p", "no:cacheprovider", f"--karenina-baseline={baseline}",
    ]  # fmt: skip
    for model in ("a1", "a2"):
        script_model(openai_server, model, {})
    models = ["--karenina-answering-model", "a1", "--karenina-answering-model", "a2"]
    assert pytester.runpytest(*common, *models, "--karenina-baseline-update").ret == 0

    def script_run() -> None:
        openai_server.reset()
        script_model(openai_server, "b1", {"q2": ("Milan", None), "q4": ("Toledo", 1)})
        script_model(openai_server, "b2", {"q6": ("Valparaiso", None)})

    run = [
        *common, "--karenina-answering-model", "b1", "--karenina-answering-model", "b2",
        "--karenina-baseline-model=b1=a2", "--karenina-baseline-model=b2=a1",
        "--karenina-baseline-fail-on=likely",
    ]  # fmt: skip
    script_run()
    whole = pytester.runpytest(*run)
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    expected = baseline_section(whole.stdout.str())
    assert expected[0].startswith("karenina baseline baseline.json: 0 regressions, "
                                  "2 likely regressions, ")  # fmt: skip
    script_run()
    parts, alone = [], []
    for index in (1, 2, 3):
        extra = dist if index == 1 else []
        shard = pytester.runpytest(*run, f"--karenina-shard={index}/3",
                                   f"--karenina-results=s{index}.json", *extra)  # fmt: skip
        alone += [line for line in shard.stdout.lines if "regression: " in line]
        parts.append(pytester.path / f"s{index}.json")
    assert sorted(line.split(":")[0] for line in alone) == ["  regression"] * 2
    capsys.readouterr()

    code, out, err = merge(capsys, pytester.path / "merged.json", *parts, "--baseline", baseline)

    assert (code, err) == (whole.ret, "")
    assert baseline_section(out) == expected
    code, out, _ = merge(capsys, pytester.path / "merged.json", *parts, "--baseline", baseline,
                         "--baseline-fail-on", "regression")  # fmt: skip
    assert code == pytest.ExitCode.OK
