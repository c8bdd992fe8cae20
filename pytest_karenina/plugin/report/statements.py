"""What the reports hand over to be written: terminal lines, and what a decided gate says.

Reports compute text and the plugin writes it (the controller to pytest's terminal reporter,
``pytest-karenina merge`` to its output), so both print the same lines through one path. A
:class:`Line` says what it is (a plain line, a warning, a section title); the writer decides
how that looks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Line:
    """One line of terminal text."""

    text: str
    red: bool = False
    """A warning: the terminal shows it in red."""
    sep: str | None = None
    """A section title, written between rows of this character (pytest's ``write_sep``)."""


def title(text: str) -> Line:
    """The title line of a section of the terminal summary."""
    return Line(text, sep="=")


def plain_text(lines: Iterable[Line], width: int) -> list[str]:
    """``lines`` as plain text for a stream ``width`` characters wide (no colour; a title
    centred between its separator characters)."""
    found = []
    for line in lines:
        if line.sep is None:
            found.append(line.text)
            continue
        fill = max(width - len(line.text) - 2, 2)
        found.append(f"{line.sep * (fill // 2)} {line.text} {line.sep * (fill - fill // 2)}")
    return found


class GateStatement(Protocol):
    """What the reports (the GitHub job summary, the HTML report) read of a decided gate."""

    def headline(self) -> str | None:
        """The gate's decision in one line (None when it has nothing to say)."""
        ...

    def details(self) -> Sequence[tuple[str, Sequence[str]]]:
        """Lists worth showing beside the headline: ``(title, entries)`` pairs."""
        ...
