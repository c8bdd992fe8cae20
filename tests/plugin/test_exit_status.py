"""The exit status is decided once, by the gates, from marks rather than message text; the
merge command's job summary states the status it exits with (pytester runs over real HTTP)."""

from __future__ import annotations

import pytest

from pytest_karenina.plugin.cli import main
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

ALL = {**COUNTRIES, "q4": ("Spain", "Madrid")}


def answers(server: OpenAIServer) -> None:
    """Every capital right."""
    for country, capital in ALL.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def test_a_plain_test_skipped_in_the_cost_caps_words_is_no_capped_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Only an item the cost cap did not start counts as capped (its report is marked): a
    plain test whose skip reason reads like the cap's neither fails the run nor is counted."""
    answers(openai_server)
    checkpoint = capitals_checkpoint(pytester.path)
    pytester.makepyfile(
        test_plain="""
        import pytest

        @pytest.mark.skip(reason="karenina: cost cap $1 reached ($1.2 spent here): not started")
        def test_waits_for_money():
            pass
        """
    )

    result = pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(openai_server), "test_plain.py"
    )

    result.assert_outcomes(passed=3, skipped=1)
    assert result.ret == pytest.ExitCode.OK
    assert "cost cap reached" not in result.stdout.str()


def test_an_incomplete_merge_says_failed_in_its_job_summary(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A merge missing a shard exits 1 even when its pass-rate gate passes, and its job
    summary says so (the status is decided before anything is written)."""
    answers(openai_server)
    checkpoint = capitals_checkpoint(pytester.path, ALL)
    for index in (1, 3):
        pytester.runpytest(
            "--karenina", str(checkpoint), *endpoint_args(openai_server),
            f"--karenina-shard={index}/3", f"--karenina-results=s{index}.json",
        )  # fmt: skip
    summary = pytester.path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    capsys.readouterr()

    code = main([
        "merge", str(pytester.path / "m.json"), str(pytester.path / "s1.json"),
        str(pytester.path / "s3.json"), "--min-pass-rate=0", "--github",
    ])  # fmt: skip

    assert code == pytest.ExitCode.TESTS_FAILED
    markdown = summary.read_text()
    assert "**Result: failed (exit 1)**" in markdown, markdown
    assert "- pytest-karenina merge: incomplete: shard 2/3 missing" in markdown, markdown
    out = capsys.readouterr().out
    assert "pytest-karenina merge: incomplete: shard 2/3 missing" in out
