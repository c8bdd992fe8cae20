"""``pytest-karenina --version`` and ``--help``: the version, and every command of the tool."""

from __future__ import annotations

import argparse
import re

import pytest

import pytest_karenina
from pytest_karenina.plugin import cli


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The exit status and output of the command (argparse's own exits included)."""
    try:
        code = cli.main(argv)
    except SystemExit as stopped:
        code = int(stopped.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def subcommands() -> dict[str, str]:
    """Every command the parser knows, with its one-line help."""
    (group,) = [
        action
        for action in cli._parser()._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    return {choice.dest: choice.help or "" for choice in group._choices_actions}


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--version"], capsys)
    assert (code, err) == (0, "")
    assert out == f"pytest-karenina {pytest_karenina.__version__}\n"


@pytest.mark.parametrize("columns", ["40", "200"])
def test_help_lists_every_command_and_the_version_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)  # argparse wraps to the terminal's width
    code, out, err = run(["--help"], capsys)
    assert (code, err) == (0, "")
    commands = subcommands()
    assert "merge" in commands
    # One line per command under its own heading, with its help (argparse may wrap the help).
    section = out.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    flat = " ".join(section.split())
    for name, text in commands.items():
        assert re.search(rf"^  {name}\s", section, re.M), name
        assert " ".join(text.split()) in flat, name
    words = " ".join(out.split())
    assert "--version print the version of pytest-karenina" in words
    assert "pytest --karenina CHECKPOINT.jsonld" in words  # where the benchmarks run
    assert "pytest-karenina COMMAND --help" in words


def test_no_command_is_a_usage_error_naming_the_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run([], capsys)
    assert code == pytest.ExitCode.USAGE_ERROR and out == ""
    assert "COMMAND" in err and "merge" in err


def test_a_command_shows_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["merge", "--help"], capsys)
    assert code == 0
    assert "OUT.json" in out and "--baseline" in out
