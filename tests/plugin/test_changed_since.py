"""``--karenina-changed-since REF`` against a temporary git repository, through pytest over
real HTTP: changed and new questions run, unchanged ones are deselected and keep their
baseline verdicts; shared settings that changed run everything."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.rubrics.traits import CallableTrait, Rubric
from tests.plugin.plugin_helpers import (
    CAPITAL_TEMPLATE,
    COUNTRIES,
    capitals_checkpoint,
    endpoint_args,
)
from tests.support.openai_server import OpenAIServer

FOUR = {**COUNTRIES, "q4": ("Spain", "Madrid")}


def git(directory: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=directory, check=True, capture_output=True, timeout=60)  # fmt: skip


@pytest.fixture
def repo(pytester: pytest.Pytester, openai_server: OpenAIServer) -> Path:
    """A repository whose last commit holds the three capitals; the model answers all four
    countries right."""
    git(pytester.path, "init", "-q")
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    capitals_checkpoint(pytester.path)
    git(pytester.path, "add", ".")
    git(pytester.path, "commit", "-q", "-m", "benchmark")
    script_capitals(openai_server)
    return pytester.path


def script_capitals(server: OpenAIServer) -> None:
    """The model answers all four countries right."""
    for country, capital in FOUR.values():
        server.add_rule(f"It is {capital}.", structured=False,
                        contains=f"capital of {country}")  # fmt: skip
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def edit(directory: Path) -> Path:
    """Ask q2 differently and add q4."""
    path = capitals_checkpoint(directory, FOUR)
    document = json.loads(path.read_text())
    text = json.dumps(document).replace("What is the capital of Italy?",
                                        "What is the capital of Italy today?")  # fmt: skip
    path.write_text(text)
    return path


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    return pytester.runpytest("--karenina", str(pytester.path / "capitals.jsonld"),
                              *endpoint_args(server), "-v", *options)  # fmt: skip


def ran(result: pytest.RunResult) -> list[str]:
    """The questions that passed (``-v`` lines, with or without xdist's prefix)."""
    found = [line.split("capitals.jsonld::")[1].split(" ")[0] for line in result.stdout.lines
             if "capitals.jsonld::" in line and "PASSED" in line]  # fmt: skip
    return sorted(found)


def test_only_changed_and_new_questions_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path, dist: list[str]
) -> None:
    edit(repo)

    result = run(pytester, openai_server, "--karenina-changed-since=HEAD", *dist)

    assert result.ret == pytest.ExitCode.OK
    assert ran(result) == ["q2", "q4"]
    result.stdout.fnmatch_lines(
        ["karenina: changed since HEAD: 2 of 4 questions run (1 changed, 1 new)"]
    )
    if not dist:  # xdist's controller does not count its workers' deselections
        result.stdout.fnmatch_lines(["*2 deselected*"])


def test_nothing_changed_runs_nothing_and_passes(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path
) -> None:
    result = run(pytester, openai_server, "--karenina-changed-since=HEAD")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["karenina: changed since HEAD: 0 of 3 questions run*"])
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("ini", "everything"),
    [
        ("karenina_answering_model = other-model\n", True),
        ("console_output_style = classic\n", False),
    ],
    ids=["a model setting", "an unrelated setting"],
)
def test_a_changed_model_setting_runs_everything(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path, ini: str, everything: bool
) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n" + ini)

    result = run(pytester, openai_server, "--karenina-changed-since=HEAD")  # the CLI's model

    assert ran(result) == (["q1", "q2", "q3"] if everything else [])
    if everything:
        result.stdout.fnmatch_lines(["*3 of 3 questions run (3 changed, 0 new); all of them, "
                                     "tox.ini changed"])  # fmt: skip


def test_unchanged_questions_keep_their_baseline_verdicts(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path
) -> None:
    baseline = repo / "baseline.json"
    run(pytester, openai_server, f"--karenina-baseline={baseline}", "--karenina-baseline-update")
    git(repo, "add", "baseline.json")
    git(repo, "commit", "-q", "-m", "baseline")
    edit(repo)
    options = ["--karenina-changed-since=HEAD", f"--karenina-baseline={baseline}"]

    result = run(pytester, openai_server, *options)

    assert result.ret == pytest.ExitCode.OK
    # q2 was asked differently: its verdict is not comparable with the baseline's (issue 26).
    result.stdout.fnmatch_lines([
        "karenina baseline baseline.json: 0 regressions, 0 score drops, 0 improvements, "
        "1 not comparable, 1 new, 0 missing (0 compared): gate passed",
        "  unchanged questions keep their baseline verdicts: pass 2",
        "  not comparable: q2 [[]test-model[]]: question changed",
    ])  # fmt: skip

    updated = run(pytester, openai_server, *options, "--karenina-baseline-update")
    assert updated.ret == pytest.ExitCode.OK
    entries = json.loads(baseline.read_text())["entries"]
    assert [e["question_id"] for e in entries] == ["q1", "q2", "q3", "q4"]


def test_an_unknown_ref_is_a_usage_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path
) -> None:
    result = run(pytester, openai_server, "--karenina-changed-since=no-such-branch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--karenina-changed-since: git cannot find 'no-such-branch'*"])


def callable_checkpoint(directory: Path) -> Path:
    """The three capitals with a pickled callable trait in each question's rubric and in the
    global rubric, as a checkpoint saved from Karenina holds them (base64 of cloudpickle
    bytes, which are not UTF-8)."""
    cloudpickle = pytest.importorskip("cloudpickle", reason="callable traits need cloudpickle")
    code: bytes = cloudpickle.dumps(lambda text: "capital" in text.lower())
    rubric = Rubric(callable_traits=[CallableTrait(name="SaysCapital", callable_code=code)])
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=CAPITAL_TEMPLATE.format(capital=capital), finished=True,
                 rubric=rubric)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions, global_rubric=rubric), path)
    return path


def test_a_checkpoint_with_a_callable_trait_compares(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Issue 23: comparing a rubric with pickled bytes raised UnicodeDecodeError (an
    INTERNALERROR), even when nothing had changed."""
    git(pytester.path, "init", "-q")
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    path = callable_checkpoint(pytester.path)
    git(pytester.path, "add", ".")
    git(pytester.path, "commit", "-q", "-m", "benchmark")
    script_capitals(openai_server)

    unchanged = run(pytester, openai_server, "--karenina-changed-since=HEAD")

    assert unchanged.ret == pytest.ExitCode.OK, unchanged.stdout.str()
    unchanged.stdout.fnmatch_lines(["karenina: changed since HEAD: 0 of 3 questions run*"])
    assert openai_server.requests == []

    path.write_text(path.read_text().replace("capital of Italy?", "capital of Italy today?"))
    changed = run(pytester, openai_server, "--karenina-changed-since=HEAD")

    assert changed.ret == pytest.ExitCode.OK, changed.stdout.str()
    assert ran(changed) == ["q2"]
    changed.stdout.fnmatch_lines(
        ["karenina: changed since HEAD: 1 of 3 questions run (1 changed, 0 new)"]
    )


def workspace_checkpoint(directory: Path) -> Path:
    """The three capitals; q1 and q2 each with a workspace directory holding a file."""
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=CAPITAL_TEMPLATE.format(capital=capital), finished=True,
                 workspace_path=f"ws/{qid}" if qid != "q3" else None)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    for qid in ("q1", "q2"):
        (directory / "ws" / qid).mkdir(parents=True)
        (directory / "ws" / qid / "notes.txt").write_text(f"notes of {qid}\n")
    (directory / ".gitignore").write_text("*.log\n")
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("commit an edit", ["q1"]),
        ("edit", ["q1"]),
        ("add an untracked file", ["q1"]),
        ("remove", ["q1"]),
        ("add an ignored file", []),
    ],
)
def test_a_changed_workspace_file_runs_its_question(
    pytester: pytest.Pytester, openai_server: OpenAIServer, change: str, expected: list[str]
) -> None:
    """Issue 24 (item 14): a change to a question's workspace directory alone ran nothing."""
    git(pytester.path, "init", "-q")
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    workspace_checkpoint(pytester.path)
    git(pytester.path, "add", ".")
    git(pytester.path, "commit", "-q", "-m", "benchmark")
    script_capitals(openai_server)
    notes, ref = pytester.path / "ws" / "q1" / "notes.txt", "HEAD"
    if change in ("commit an edit", "edit"):
        notes.write_text("other notes\n")
    elif change == "remove":
        notes.unlink()
    else:
        name = "extra.log" if change == "add an ignored file" else "extra.txt"
        notes.with_name(name).write_text("more\n")
    if change == "commit an edit":
        git(pytester.path, "commit", "-q", "-am", "workspace only")
        ref = "HEAD~1"

    result = run(pytester, openai_server, f"--karenina-changed-since={ref}")

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert ran(result) == expected
    result.stdout.fnmatch_lines([f"karenina: changed since {ref}: {len(expected)} of 3 questions "
                                 f"run ({len(expected)} changed, 0 new)"])  # fmt: skip


@pytest.mark.parametrize(
    ("addopts", "everything"),
    [
        ("--karenina-sufficiency=no", True),
        ("--karenina-embedding-check-threshold 0.9", True),
        ("-o karenina_mode=template_only", True),
        ("-q", False),
    ],
    ids=["an option", "an option and its value", "an ini override", "an unrelated option"],
)
def test_an_answer_changing_option_in_addopts_runs_everything(
    pytester: pytest.Pytester, openai_server: OpenAIServer, repo: Path, addopts: str,
    everything: bool,
) -> None:  # fmt: skip
    """Issue 24 (item 14): an ``addopts`` change of an answer-changing option ran nothing."""
    pytester.makeini(f"[pytest]\naddopts = -p no:cacheprovider {addopts}\n")

    result = run(pytester, openai_server, "--karenina-changed-since=HEAD")

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert ran(result) == (["q1", "q2", "q3"] if everything else [])
    if everything:
        result.stdout.fnmatch_lines(["*3 of 3 questions run (3 changed, 0 new); all of them, "
                                     "tox.ini changed"])  # fmt: skip
