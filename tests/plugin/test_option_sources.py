"""A bad option value is named where it was given: the flag on the command line, the ini key
and its file in the configuration, ``-o KEY`` for an override."""

from __future__ import annotations

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint

MODEL = ["--karenina-answering-model", "openai:gpt-4.1-mini", "-p", "no:cacheprovider"]


def usage_error(pytester: pytest.Pytester, *args: str) -> str:
    result = pytester.runpytest("--karenina", str(copy_checkpoint(pytester)), *MODEL, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    return result.stderr.lines[0]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('karenina_replicates = "three"',
         "karenina_replicates in tox.ini: expected a number, got '\"three\"'"),
        ("karenina_abstention = perhaps",
         "karenina_abstention in tox.ini: expected yes or no, got 'perhaps'"),
        ("karenina_mode = fast",
         "karenina_mode in tox.ini: 'fast' is not one of template_only, template_and_rubric, "
         "rubric_only"),
        ("karenina_min_pass_rate = 1.5",
         "karenina_min_pass_rate in tox.ini: must be between 0 and 1, got 1.5"),
        ("karenina_shard = 5/4",
         "karenina_shard in tox.ini: expected I/N with 1 <= I <= N (e.g. 2/4), got '5/4'"),
        ("karenina_github_annotations = many",
         "karenina_github_annotations in tox.ini: expected a number, got 'many'"),
        ("karenina_github_known_failures = hide",
         "karenina_github_known_failures in tox.ini: 'hide' is not one of notice, error, none"),
    ],
)  # fmt: skip
def test_a_bad_ini_value_names_the_ini_key_and_file(
    pytester: pytest.Pytester, line: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{line}\n")
    assert usage_error(pytester) == f"ERROR: {message}"


def test_the_command_line_names_its_flag_and_wins_over_the_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini('[pytest]\nkarenina_replicates = "three"\n')
    assert usage_error(pytester, "--karenina-replicates", "x") == (
        "ERROR: --karenina-replicates: expected a number, got 'x'"
    )
    assert usage_error(pytester, "-o", "karenina_replicates=4x") == (
        "ERROR: -o karenina_replicates: expected a number, got '4x'"
    )
    fine = pytester.runpytest(
        "--karenina", str(copy_checkpoint(pytester)), *MODEL, "--karenina-replicates", "2",
        "--collect-only", "-q",
    )  # fmt: skip
    assert fine.ret == pytest.ExitCode.OK  # the ini's bad value is never read


def test_pyproject_is_named_as_the_file(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\nkarenina_concurrency = "0"\n')
    assert usage_error(pytester) == (
        "ERROR: karenina_concurrency in pyproject.toml: must be >= 1, got '0'"
    )
