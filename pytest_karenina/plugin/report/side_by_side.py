"""What changed since the baseline, side by side, in a regression's row of the HTML report.

A regression here is an item that does not pass now while its baseline entry passed (the
baseline gate's entries, paired by model). Its row gets, from the baseline run's export
(:mod:`.baseline_results`) and the item's own results: the answers with a word-level diff
(:mod:`.word_diff`), the parsed fields side by side (expected, baseline, now; the fields that
flipped marked), the judge's reasoning both times where recorded, both answers with deep
judgment's quotes highlighted (:mod:`.highlight`), and the command that reproduces the item
offline (:mod:`.reproduce`). Everything is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from html import escape
from typing import Any

from pytest_karenina.plugin.payload import RUBRIC_KEY, ItemPayload
from pytest_karenina.plugin.report.baseline_results import BaselineRun
from pytest_karenina.plugin.report.highlight import highlighted
from pytest_karenina.plugin.report.reproduce import reproduce_command
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.report.word_diff import diff_counted
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.outcome import Outcome

MAX_VALUE = 200
FLIPPED = ' class="karenina-flipped" style="background:#fef3c7"'
PassedBefore = Callable[[str, str], str | None]
"""``(question id, run model)`` -> the baseline model whose entry passed (None: no entry, or
it did not pass)."""


def _value(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return escape(text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 3] + "...")


def _section(result: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    found = result.get(name)
    return found if isinstance(found, Mapping) else {}


def _answer(result: Mapping[str, Any]) -> str:
    return str(_section(result, "template").get("raw_llm_response") or "")


def _excerpts(result: Mapping[str, Any]) -> dict[str, list[str]]:
    """Deep judgment's accepted quotes per attribute (and per rubric trait)."""
    found: dict[str, list[str]] = {}
    template = _section(result, "deep_judgment").get("extracted_excerpts") or {}
    rubric = _section(result, "deep_judgment_rubric").get("extracted_rubric_excerpts") or {}
    named = [*template.items(), *((RUBRIC_KEY.format(k), v) for k, v in rubric.items())]
    for name, quotes in named:
        texts = [str(q.get("text")) for q in quotes or () if isinstance(q, dict) and q.get("text")]
        if texts:
            found[str(name)] = texts
    return found


def _fields(before: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    old, new = _section(before, "template"), _section(now, "template")
    expected = new.get("parsed_gt_response") or old.get("parsed_gt_response") or {}
    parsed_old = old.get("parsed_llm_response") or {}
    parsed_new = new.get("parsed_llm_response") or {}
    verdict_old = old.get("field_results") or {}
    verdict_new = new.get("field_results") or {}
    names = list(dict.fromkeys([*expected, *parsed_old, *parsed_new]))
    if not names:
        return ""
    rows = []
    for name in names:
        flipped = (verdict_old.get(name) is True and verdict_new.get(name) is False) or (
            not verdict_new
            and parsed_old.get(name) != parsed_new.get(name)
            and name in expected
            and parsed_new.get(name) != expected.get(name)
        )
        rows.append(
            f"<tr{FLIPPED if flipped else ''}><td>{escape(name)}"
            + (" <strong>flipped</strong>" if flipped else "")
            + f"</td><td>{_value(expected[name]) if name in expected else '-'}</td>"
            f"<td>{_value(parsed_old.get(name))}</td><td>{_value(parsed_new.get(name))}</td></tr>"
        )
    head = "".join(f"<th>{t}</th>" for t in ("field", "expected", "baseline", "now"))
    return f'<table class="karenina-sbs-fields"><tr>{head}</tr>{"".join(rows)}</table>'


def _reasoning(result: Mapping[str, Any]) -> dict[str, str]:
    """The judge's recorded reasoning, by what it was about."""
    template = _section(result, "template")
    found = {
        "abstention check": template.get("abstention_reasoning"),
        "sufficiency check": template.get("sufficiency_reasoning"),
        "dynamic parsing": template.get("dynamic_decision_reasoning"),
    }
    for name, text in (_section(result, "deep_judgment").get("attribute_reasoning") or {}).items():
        found[f"deep judgment: {name}"] = text
    for name, text in (_section(result, "rubric").get("llm_trait_reasoning") or {}).items():
        found[f"rubric: {name}"] = text
    deep_rubric = _section(result, "deep_judgment_rubric").get("rubric_trait_reasoning") or {}
    for name, text in deep_rubric.items():
        found[f"rubric deep judgment: {name}"] = text
    return {name: str(text) for name, text in found.items() if text}


def _reasoning_table(before: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    old, new = _reasoning(before), _reasoning(now)
    names = list(dict.fromkeys([*old, *new]))
    if not names:
        return ""
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(old.get(name, '-'))}</td>"
        f"<td>{escape(new.get(name, '-'))}</td></tr>"
        for name in names
    )
    return (
        '<table class="karenina-sbs-reasoning"><tr><th>judge reasoning</th><th>baseline</th>'
        f"<th>now</th></tr>{rows}</table>"
    )


def _answers(before: Mapping[str, Any], now: Mapping[str, Any]) -> Iterator[str]:
    old, new = _answer(before), _answer(now)
    marked, removed, added = diff_counted(old, new)
    yield (
        f'<details class="karenina-sbs-diff" open><summary>answer, word by word '
        f"(-{removed} +{added} words)</summary>"
        f'<pre style="white-space: pre-wrap">{marked}</pre></details>'
    )
    panes = []
    for title, text, result in (("baseline", old, before), ("now", new, now)):
        legend, body = highlighted(text, _excerpts(result))
        panes.append(
            f'<div class="karenina-sbs-answer" style="flex:1;min-width:0"><strong>{title}'
            f'</strong>{legend}<pre style="white-space: pre-wrap">{body}</pre></div>'
        )
    yield (
        '<details class="karenina-sbs-answers"><summary>both answers, quoted evidence '
        f'highlighted</summary><div style="display:flex;gap:1em">{"".join(panes)}</div>'
        "</details>"
    )


def side_by_side_html(
    before: Mapping[str, Any], now: Mapping[str, Any], title: str, command: str
) -> str:
    """The side by side of one result of the baseline (``before``) and its result now, both
    in the export's JSON form; ``title`` heads it, ``command`` reproduces the item."""
    parts = [
        f"<h4>{escape(title)}</h4>",
        '<p class="karenina-reproduce"><strong>Reproduce offline </strong>'
        f"<code>{escape(command)}</code></p>",
        _fields(before, now),
        *_answers(before, now),
        _reasoning_table(before, now),
    ]
    return '<section class="karenina-side-by-side">' + "".join(parts) + "</section>"


def _pick(results: Sequence[Mapping[str, Any]], like: Mapping[str, Any]) -> Mapping[str, Any]:
    """The baseline result of the same parsing model and judge replicate as ``like``, else
    the first one."""
    parsing = _section(_section(like, "metadata"), "parsing").get("model_name")
    for result in results:
        same_judge = _section(_section(result, "metadata"), "parsing").get("model_name")
        if same_judge == parsing and result.get("judge_replicate") == like.get("judge_replicate"):
            return result
    return results[0]


class SideBySide:
    """The side by side of a run's regressions (:meth:`extra_html` per item as it reports)
    and the baseline export's problems (:meth:`lines`)."""

    def __init__(self, run: BaselineRun, passed_before: PassedBefore, options: Sequence[str]):
        self.run = run
        self.passed_before = passed_before
        self.options = list(options)
        self.shown = 0

    def extra_html(self, payload: ItemPayload) -> str | None:
        """The item's side by side when it regressed and both runs' results are at hand."""
        question, model = payload.question_id, payload.answering_model
        if payload.category is Outcome.PASS or payload.scenario is not None or not question:
            return None
        old_model = self.passed_before(question, model or "?")
        if old_model is None:
            return None
        baseline = self.run.of(question, old_model, payload.replicate)
        summaries = payload.summaries
        index = next((i for i, s in enumerate(summaries) if s.category is not Outcome.PASS), 0)
        if not baseline or index >= len(payload.results):
            return None
        now = payload.results[index]
        title = f"Since the baseline ({self.run.path.name}): pass -> {payload.category.value}"
        if old_model != model:
            title += f" (baseline model {old_model})"
        self.shown += 1
        command = reproduce_command(payload.nodeid, self.options)
        return side_by_side_html(_pick(baseline, now), now, title, command)

    def lines(self) -> list[Line]:
        """The baseline export's problems, as warnings."""
        prefix = "karenina baseline results "
        return [Line(terminal_safe(prefix + problem), red=True) for problem in self.run.problems]

    def summary_html(self) -> str:
        """The HTML summary's note: how many regressions are shown side by side, and the
        baseline export's problems."""
        if not self.shown and not self.run.problems:
            return ""
        said = f"{self.shown} regressions shown side by side with {self.run.path.name}"
        problems = "".join(
            f'<p class="karenina-error">baseline results {escape(problem)}</p>'
            for problem in self.run.problems
        )
        return f'<div class="karenina-sbs-summary"><p>{escape(said)}</p>{problems}</div>'
