"""The gates' lists in the pytest-html summary: what each decided gate lists beside its
headline (for the baseline: the regressions with their p-values, the likely regressions,
noise, entries not comparable, what was compared with what)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from pytest_karenina.plugin.report.statements import GateStatement

LISTED = 10
"""Entries of each list shown by name; the rest are counted."""


def gate_details_html(gates: Sequence[GateStatement]) -> str:
    """One ``<details>`` block per non-empty list of the gates, every text escaped; empty
    when no gate lists anything."""
    blocks = []
    for gate in gates:
        for title, entries in gate.details():
            if not entries:
                continue
            items = "".join(f"<li>{escape(entry)}</li>" for entry in entries[:LISTED])
            if len(entries) > LISTED:
                items += f"<li>... and {len(entries) - LISTED} more</li>"
            blocks.append(
                f'<details class="karenina-gate-list" open><summary><strong>{escape(title)}'
                f"</strong> ({len(entries)})</summary><ul>{items}</ul></details>"
            )
    return f'<div class="karenina-gates">{"".join(blocks)}</div>' if blocks else ""
