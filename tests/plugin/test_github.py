"""GitHub Actions output through pytest over real HTTP: ``::error`` annotations on stdout and
the Markdown job summary appended to ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_karenina.plugin.cli import main
from pytest_karenina.plugin.report.github import escape_data, escape_property, markdown_text
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer


def answers(server: OpenAIServer, **cities: str) -> None:
    for qid, (country, capital) in COUNTRIES.items():
        city = cities.get(qid, capital)
        server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")


@pytest.fixture
def step_summary(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Under GitHub Actions, with a job summary file that already holds an earlier step's."""
    path = pytester.path / "step_summary.md"
    path.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def run(pytester: pytest.Pytester, server: OpenAIServer, *options: str) -> pytest.RunResult:
    checkpoint = capitals_checkpoint(pytester.path)
    return pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(server), *options)


def error_lines(result: pytest.RunResult) -> list[str]:
    """The annotation lines (not the stop-commands lines around them)."""
    return [line for line in result.stdout.lines if line.startswith(("::error", "::notice"))]


def test_failed_questions_are_annotated_and_the_job_summary_appended(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    dist: list[str],
) -> None:  # fmt: skip
    answers(openai_server, q2="Milan | Venice", q3="Osaka")

    result = run(pytester, openai_server, "--karenina-min-pass-rate=0.5", *dist)

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert sorted(error_lines(result)) == [
        "::error file=capitals.jsonld,title=q2 [test-model]%3A verify_fail::"
        "capital: 'Milan | Venice' != 'Rome'",
        "::error file=capitals.jsonld,title=q3 [test-model]%3A verify_fail::"
        "capital: 'Osaka' != 'Tokyo'",
    ]
    markdown = step_summary.read_text()
    assert markdown.startswith("earlier step\n### pytest-karenina: capitals.jsonld\n")
    for expected in (
        "**Result: failed (exit 1)**",
        "- karenina gate: pass rate 33.3% \\< 50.0%: gate FAILED",
        "| test-model | 33.3% | 6.1%-79.2% | 1/3 |",
        "**Failed questions** (2)",
        "| q2 | test-model | verify\\_fail | capital: 'Milan \\| Venice' != 'Rome' |",
        "**Slowest questions**",
        "**Most tokens**",
    ):
        assert expected in markdown, markdown


def test_annotations_are_capped_and_the_rest_counted(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    answers(openai_server, q1="Lyon", q2="Milan", q3="Osaka")
    result = run(pytester, openai_server, "--karenina-github-annotations=1", "-p", "no:randomly")
    lines = error_lines(result)
    assert len(lines) == 2 and lines[0].startswith("::error ")
    assert lines[1] == ("::notice title=pytest-karenina::2 more failed questions are not "
                        "annotated (at most 1; see the job summary)")  # fmt: skip


def test_github_output_can_be_switched_off_and_on(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    answers(openai_server, q3="Osaka")
    assert error_lines(run(pytester, openai_server, "--karenina-github=no")) == []
    assert step_summary.read_text() == "earlier step\n"

    monkeypatch.delenv("GITHUB_ACTIONS")
    assert len(error_lines(run(pytester, openai_server))) == 0
    assert len(error_lines(run(pytester, openai_server, "--karenina-github"))) == 1


def test_regressions_and_fixes_reach_the_job_summary(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    baseline = pytester.path / "baseline.json"
    answers(openai_server, q3="Osaka")
    run(pytester, openai_server, f"--karenina-baseline={baseline}", "--karenina-baseline-update")
    openai_server.reset()
    answers(openai_server, q1="Lyon")

    result = run(pytester, openai_server, f"--karenina-baseline={baseline}")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    markdown = step_summary.read_text()
    assert (
        "**Regressions against baseline.json** (1)\n\n- q1 \\[test-model\\]: pass -\\> fail "
        "(answer-side)"
    ) in markdown
    assert "**Improvements** (1)\n\n- q3 \\[test-model\\]: fail -\\> pass (answer-side)" in (
        markdown
    )


def known_failure_run(
    pytester: pytest.Pytester, server: OpenAIServer, *options: str, **cities: str
) -> pytest.RunResult:
    """A baseline in which q3 fails, then a run in which q3 still fails (and the ``cities``
    answered)."""
    baseline = pytester.path / "baseline.json"
    answers(server, q3="Osaka")
    run(pytester, server, f"--karenina-baseline={baseline}", "--karenina-baseline-update")
    server.reset()
    answers(server, **{"q3": "Osaka", **cities})
    return run(pytester, server, f"--karenina-baseline={baseline}", *options)


KNOWN_Q3 = (
    "file=capitals.jsonld,title=q3 [test-model]%3A verify_fail (known failure)::"
    "capital: 'Osaka' != 'Tokyo'"
)


def test_a_known_failure_is_a_notice_on_a_green_build(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    dist: list[str],
) -> None:  # fmt: skip
    """q3 failed in the baseline too: the gate passes, and q3 is a notice, not an error; the
    job summary says how known failures were annotated."""
    result = known_failure_run(pytester, openai_server, *dist)

    assert result.ret == pytest.ExitCode.OK
    assert error_lines(result) == [f"::notice {KNOWN_Q3}"]
    markdown = step_summary.read_text()
    assert (
        "**Failed questions** (1)\n\n1 known failures (failed, and not regressions against "
        "baseline.json): annotated as notices, not errors (--karenina-github-known-failures "
        "notice)\n"
    ) in markdown
    assert "| q3 | test-model | verify\\_fail (known failure) | capital: 'Osaka' != 'Tokyo' |" in (
        markdown
    )


def test_a_regression_stays_an_error_beside_a_known_failure(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    result = known_failure_run(pytester, openai_server, "-p", "no:randomly", q1="Lyon")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert error_lines(result) == [
        "::error file=capitals.jsonld,title=q1 [test-model]%3A verify_fail::"
        "capital: 'Lyon' != 'Paris'",
        f"::notice {KNOWN_Q3}",
    ]


@pytest.mark.parametrize(("how", "annotated"), [("error", [f"::error {KNOWN_Q3}"]), ("none", [])])
def test_known_failures_are_annotated_as_configured(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path, how: str,
    annotated: list[str],
) -> None:  # fmt: skip
    result = known_failure_run(pytester, openai_server, f"--karenina-github-known-failures={how}")

    assert result.ret == pytest.ExitCode.OK
    assert error_lines(result) == annotated
    said = "annotated as errors" if how == "error" else "not annotated"
    assert f"{said} (--karenina-github-known-failures {how})" in step_summary.read_text()


def test_known_failures_from_the_ini_file(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path
) -> None:
    pytester.makeini("[pytest]\nkarenina_github_known_failures = none\n")
    assert error_lines(known_failure_run(pytester, openai_server)) == []


def test_known_failures_take_one_of_three_words(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    result = run(pytester, openai_server, "--karenina-github-known-failures=warning")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--karenina-github-known-failures: 'warning' is not one of notice, error, none*"]
    )


def test_merge_annotates_known_failures_as_the_plugin_does(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    baseline = pytester.path / "baseline.json"
    answers(openai_server, q3="Osaka")
    run(pytester, openai_server, f"--karenina-baseline={baseline}", "--karenina-baseline-update")
    for index in (1, 2):
        run(pytester, openai_server, f"--karenina-shard={index}/2",
            f"--karenina-results=s{index}.json", "--karenina-github=no")  # fmt: skip
    capsys.readouterr()

    code = main(["merge", "merged.json", "s1.json", "s2.json", f"--baseline={baseline}"])
    notices = capsys.readouterr().out.splitlines()
    code_none = main(["merge", "merged.json", "s1.json", "s2.json", f"--baseline={baseline}",
                      "--github-known-failures=none"])  # fmt: skip
    silent = capsys.readouterr().out.splitlines()

    assert code == code_none == pytest.ExitCode.OK
    assert [line for line in notices if line.startswith("::")] == [f"::notice {KNOWN_Q3}"]
    assert [line for line in silent if line.startswith("::")] == []


def test_merge_writes_the_same_github_output(
    pytester: pytest.Pytester, openai_server: OpenAIServer, step_summary: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    answers(openai_server, q3="Osaka")
    for index in (1, 2):
        run(pytester, openai_server, f"--karenina-shard={index}/2",
            f"--karenina-results=s{index}.json", "--karenina-github=no")  # fmt: skip
    capsys.readouterr()

    code = main(["merge", "merged.json", "s1.json", "s2.json"])

    out = capsys.readouterr().out
    assert code == pytest.ExitCode.TESTS_FAILED
    assert ("::error file=capitals.jsonld,title=q3 [test-model]%3A verify_fail::"
            "capital: 'Osaka' != 'Tokyo'") in out.splitlines()  # fmt: skip
    assert "| q3 | test-model | verify\\_fail | capital: 'Osaka' != 'Tokyo' |" in (
        step_summary.read_text()
    )


def test_workflow_command_escaping() -> None:
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("q1 [m]: 50%, x\n") == "q1 [m]%3A 50%25%2C x%0A"


def test_markdown_text_renders_as_written() -> None:
    """Backslashes before every character that could start an image, a link, an autolink,
    HTML, an entity, code, emphasis, math, a mention or a new table cell."""
    assert markdown_text("![x](https://e.x/p.png) <img src=x> &amp;") == (
        "!\\[x\\](https\\://e.x/p.png) \\<img src=x\\> \\&amp;"
    )
    assert markdown_text("www.e.x WWW.e.x e.x @me #1 `c` *b* _i_ ~s~ $m$") == (
        "www\\.e.x WWW\\.e.x e.x \\@me \\#1 \\`c\\` \\*b\\* \\_i\\_ \\~s\\~ \\$m\\$"
    )
    # A backslash of the text escapes nothing of ours: a pipe after it still stays in its cell.
    assert markdown_text("a\\|b\\[c](d)\r\ne") == "a\\\\\\|b\\\\\\[c\\](d) e"
