"""A scenario item's HTML extras: its verdict, the path taken (a list of the nodes visited),
and the conversation turn by turn with each turn's verdict. Every text is escaped."""

from __future__ import annotations

from html import escape
from typing import Any


def _text(value: object) -> str:
    return escape("-" if value is None else str(value))


def _verdict(value: object) -> str:
    if value is True:
        return "pass"
    return "fail" if value is False else "no verdict"


def scenario_extras(scenario: dict[str, Any], category: str, answering: str | None) -> str:
    """The extras block of a scenario item's payload (``ItemPayload.scenario``)."""
    broke = scenario.get("turn")
    head = (
        f'<p class="karenina-scenario"><strong>Scenario </strong>{_text(scenario.get("name"))}'
        f"</p><p><strong>Verdict </strong>{_text(category)}, status "
        f"{_text(scenario.get('status'))}, {_text(scenario.get('turns'))} turn(s), answering "
        f"{_text(answering)}</p>"
    )
    if scenario.get("criterion") is not None:
        head += f"<p><strong>Failing criterion </strong>{_text(scenario['criterion'])}</p>"
    path = "".join(f"<li>{_text(node)}</li>" for node in scenario.get("path") or ())
    head += f'<p><strong>Path</strong></p><ol class="karenina-scenario-path">{path}</ol>'
    rows = []
    for index, turn in enumerate(scenario.get("conversation") or ()):
        mark = ' class="karenina-broke"' if index == broke and category != "pass" else ""
        rows.append(
            f"<tr{mark}><td>{index}</td><td>{_text(turn.get('node'))}</td>"
            f"<td>{_text(turn.get('question'))}</td><td>{_text(turn.get('answer'))}</td>"
            f"<td>{_text(_verdict(turn.get('verify_result')))}</td></tr>"
        )
    table = (
        '<table class="karenina-scenario-turns"><tr><th>turn</th><th>node</th>'
        "<th>question</th><th>answer</th><th>verdict</th></tr>" + "".join(rows) + "</table>"
    )
    return '<div class="karenina-extras">' + head + table + "</div>"
