"""Text from models and benchmarks, made safe to print: nothing in it moves the cursor,
starts a line of its own, or reads as a CI runner's command.

The GitHub Actions runner reads every line of a step's output (split at ``\\r``, ``\\n`` and
``\\r\\n``) as a workflow command when it starts with ``::`` after leading whitespace, and
when ``##[`` appears anywhere in it (``ActionCommand.TryParseV2`` and ``TryParse`` in
``actions/runner``). A question id, a model's reply or a tool name the model chose is printed
through :func:`terminal_safe` (one line) or :func:`terminal_safe_lines` (log records and other
blocks); the run's whole output is also bracketed by ``::stop-commands::``
(:mod:`.report.github`). Escapes are visible and Python-like (``\\r``, ``\\x1b``, ``\\x3a``), as
``repr`` writes them.
"""

from __future__ import annotations

COMMAND_PREFIX = "::"
LEGACY_PREFIX = "##["
_LEGACY_ESCAPED = "##\\x5b"
_COLON_ESCAPED = "\\x3a"


def _escaped(char: str) -> str:
    return repr(char)[1:-1]


def _printable_line(text: str) -> str:
    """``text`` with every non-printable character but tab escaped: ``\\r``, ``\\n``,
    ``\\x1b``, ``\\x85``, ``\\u2028``..."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == "\t" else _escaped(c) for c in text)


def _defused(line: str) -> str:
    """``line`` with ``##[`` broken everywhere and a ``::`` at its start (after whitespace)
    broken, so that no runner reads it as a command."""
    if LEGACY_PREFIX in line:
        line = line.replace(LEGACY_PREFIX, _LEGACY_ESCAPED)
    body = line.lstrip()
    if body.startswith(COMMAND_PREFIX):
        indent = line[: len(line) - len(body)]
        line = f"{indent}{_COLON_ESCAPED}{body[1:]}"
    return line


def terminal_safe(text: str) -> str:
    """One line of ``text`` for the terminal: control and other non-printable characters
    (tab aside) escaped, so it stays one line and leaves the terminal alone; ``##[`` and a
    leading ``::`` broken, so that no CI runner takes it for a command."""
    return _defused(_printable_line(text))


def terminal_safe_lines(text: str) -> str:
    """``text`` of several lines (a log record with its traceback) for the terminal: each
    line as :func:`terminal_safe` makes it, the newlines kept (a ``\\r`` is escaped: the
    runner would start a line there)."""
    if text.isprintable():
        return _defused(text)
    return "\n".join(terminal_safe(line) for line in text.split("\n"))
