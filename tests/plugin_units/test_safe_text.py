"""Terminal-safe text: a model's or benchmark's string printed in a line of the terminal
neither breaks the line nor reads as a GitHub workflow command."""

from __future__ import annotations

from pytest_karenina.plugin.safe_text import terminal_safe, terminal_safe_lines


def test_one_line_stays_one_line_and_commands_are_broken() -> None:
    hostile = "lookup\r\n::error title=x::forged\x1b[2J\u2028##[warning]w\x85end"
    assert terminal_safe(hostile) == (
        "lookup\\r\\n::error title=x::forged\\x1b[2J\\u2028##\\x5bwarning]w\\x85end"
    )
    assert terminal_safe("  ::error::x") == "  \\x3a:error::x"  # the runner trims the indent
    assert terminal_safe("\t::warning::x") == "\t\\x3a:warning::x"
    assert terminal_safe("##[error]a ###[b") == "##\\x5berror]a ###\\x5bb"


def test_plain_text_is_left_alone() -> None:
    for text in ("capital: 'Osaka' != 'Tokyo'", "tests/a.py::test_b", "a\tb", "Zürich, 東京"):
        assert terminal_safe(text) == text


def test_a_block_keeps_its_lines_and_breaks_each() -> None:
    record = "WARNING q1\r\n::error::forged\nTraceback:\n  ::warning::x ##[debug]y"
    assert terminal_safe_lines(record).split("\n") == [
        "WARNING q1\\r",
        "\\x3a:error::forged",
        "Traceback:",
        "  \\x3a:warning::x ##\\x5bdebug]y",
    ]
    assert terminal_safe_lines("::notice::one") == "\\x3a:notice::one"
