"""pytest-html 4 integration: karenina's columns (question, reason, expected and extracted
value, model, verdict, score, rubric, flaky), a per-model summary, the filter bar and its
script (:mod:`.html_page`), item extras.

:class:`HtmlPlugin` is registered on the reporting process only when pytest-html is
active; :func:`add_extras` runs on the process that ran the item. Every piece of LLM or
checkpoint text is escaped: pytest-html inserts cells and html extras with ``innerHTML``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from html import escape
from typing import Any

import pytest

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.cells import (
    decided_elsewhere,
    deciding_cell,
    item_reason,
    question_cell,
    reason_cell,
    rubric_cell,
    score_cell,
)
from pytest_karenina.plugin.report.charts import charts_html
from pytest_karenina.plugin.report.cluster_text import clusters_html
from pytest_karenina.plugin.report.comparison import comparison_html
from pytest_karenina.plugin.report.conversation import result_conversation
from pytest_karenina.plugin.report.environment import environment
from pytest_karenina.plugin.report.gate_html import gate_details_html
from pytest_karenina.plugin.report.highlight import highlighted
from pytest_karenina.plugin.report.html_page import page_html
from pytest_karenina.plugin.report.judge_agreement import item_line, item_votes
from pytest_karenina.plugin.report.pass_rates import pass_rate, pass_rates_by_model
from pytest_karenina.plugin.report.scenario_html import scenario_extras
from pytest_karenina.plugin.report.side_by_side import SideBySide
from pytest_karenina.plugin.report.statements import GateStatement
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.stash import CHECKPOINTS_KEY
from pytest_karenina.rubrics.gates import TraitCheck, investigation_finding

MAX_VALUE = 200
COLUMNS = (
    ("kquestion", "Question"),
    ("kreason", "Reason"),
    ("kexpected", "Expected \u2192 got"),
    ("kmodel", "Model"),
    ("kverdict", "Verdict"),
    ("kscore", "Score"),
    ("krubric", "Rubric"),
    ("kflaky", "Flaky"),
)
"""(column type, title) of the inserted columns, in order, after the Test column."""
UNSORTED = frozenset({"kquestion", "kexpected"})
"""Columns without a sort: pytest-html keeps a copy of a sortable cell's HTML in its data,
and these two are long (the question in full on hover) and sort nothing useful."""
FIRST_COLUMN = 2
NO_LOG = "No log output captured."
"""What pytest-html's log pane says when a report has no text at all."""


def _text(value: Any) -> str:
    return "" if value is None else escape(str(value))


def _value(value: Any) -> str:
    """A parsed or expected value as escaped, bounded text (strings quoted like repr)."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) > MAX_VALUE:
        text = text[: MAX_VALUE - 3] + "..."
    return escape(text)


def _score(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else ""


def _mark(passed: Any) -> str:
    if passed is None:
        return '<span class="karenina-na">-</span>'
    return "pass" if passed else '<strong class="karenina-fail">FAIL</strong>'


def _field_mark(row: Mapping[str, Any]) -> str:
    """pass / FAIL; for a template with its own ``verify()``, differs / same."""
    differs = row.get("differs")
    if row.get("passed") is None and differs is not None:
        return '<strong class="karenina-fail">differs</strong>' if differs else "same"
    return _mark(row.get("passed"))


def _failing(failed: bool) -> str:
    """A table row's opening tag, red (``karenina-failing``) when it failed."""
    return '<tr class="karenina-failing">' if failed else "<tr>"


def _fields_table(fields: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(f"<th>{t}</th>" for t in ("field", "expected", "parsed", "primitive", "result"))
    rows = "".join(
        _failing(
            row.get("passed") is False or bool(row.get("passed") is None and row.get("differs"))
        )
        + f"<td>{_text(row.get('field'))}</td>"
        # A field without ground truth (a classic verify()) has no expected value: "-".
        + f"<td>{_value(row['expected']) if 'expected' in row else '-'}</td>"
        f"<td>{_value(row.get('parsed'))}</td><td>{_text(row.get('primitive') or '-')}</td>"
        f"<td>{_field_mark(row)}</td></tr>"
        for row in fields
    )
    return f'<table class="karenina-fields"><tr>{head}</tr>{rows}</table>'


def _field_passed(row: Mapping[str, Any]) -> bool:
    return row.get("passed") is True or (row.get("passed") is None and row.get("differs") is False)


def _fields_line(fields: Sequence[Mapping[str, Any]]) -> str:
    """A passing result's fields in one line (what was extracted): the table is kept for
    results that did not pass, a large run's report would carry it for every pass."""
    values = ", ".join(f"{_text(row.get('field'))} {_value(row.get('parsed'))}" for row in fields)
    return f'<p class="karenina-fields-line"><strong>Fields </strong>{values}: all pass</p>'


def _trait_mark(check: TraitCheck) -> str:
    if check.skipped is not None:
        return '<span class="karenina-na">skipped</span>'
    if check.error is not None:
        return '<strong class="karenina-error">no value</strong>'
    if not check.gated:
        return '<span class="karenina-na">-</span>'
    return _mark(check.passed)


def _rubric_table(checks: list[TraitCheck]) -> str:
    titles = ("trait", "kind", "value", "bound", "result", "reasoning")
    head = "".join(f"<th>{title}</th>" for title in titles)
    rows = "".join(
        _failing(bool(check.gated and check.passed is False))
        + f"<td>{_text(check.name)}</td><td>{_text(check.kind)}</td>"
        f"<td>{_value(check.value)}</td><td>{_text(check.bound or '-')}</td>"
        f"<td>{_trait_mark(check)}</td><td>{_trait_note(check)}</td></tr>"
        for check in checks
    )
    return f'<table class="karenina-rubric"><tr>{head}</tr>{rows}</table>'


def _trait_note(check: TraitCheck) -> str:
    """Why a trait has no value, or the judge's reasoning; for an agentic trait, its
    investigation's finding with the whole investigation folded below."""
    note = check.error or check.skipped
    if not (check.reasoning and check.kind.startswith("agentic")):
        return _text(note or check.reasoning or "")
    return (
        f"{_text(note or investigation_finding(check.reasoning))}"
        '<details class="karenina-investigation"><summary>investigation</summary>'
        f'<pre style="white-space: pre-wrap">{_text(check.reasoning)}</pre></details>'
    )


def _notes(summary: ResultSummary) -> Iterator[str]:
    for name, ok in summary.regex.items():
        yield f"regex {_text(name)}: {_mark(bool(ok))}"
    for text in summary.overrides:
        yield f"override: {_text(text)}"
    if summary.abstention_reasoning:
        yield f"abstention: {_text(summary.abstention_reasoning)}"
    if summary.sufficiency_reasoning:
        yield f"sufficiency: {_text(summary.sufficiency_reasoning)}"
    for note in summary.deep_judgment_notes:
        yield _text(note)
    if summary.risks:
        risks = ", ".join(f"{name} {risk}" for name, risk in summary.risks.items())
        yield f"hallucination risk: {_text(risks)}"
    for name, value in summary.custom_fields.items():
        yield f"{_text(name)} (custom stage): {_value(value)}"
    if summary.error:
        yield f'error: <span class="karenina-error">{_text(summary.error)}</span>'


def _result_block(
    summary: ResultSummary,
    trace: str | None,
    label: str | None,
    failed: bool = False,
    agent: str | None = None,
) -> str:
    """One result's details; ``label`` (several results) also shows its category and tokens."""
    granular = _score(summary.granular_score)
    head = f"<strong>{label}</strong>{_text(summary.category)}, " if label else ""
    tokens = (
        f", tokens {_text(summary.input_tokens)} in / {_text(summary.output_tokens)} out"
        if label
        else ""
    )
    if granular and decided_elsewhere(summary):
        granular += f" (of the fields; {_text(summary.deciding_stage)} decided)"
    parts = [
        f'<p class="karenina-reason"><strong>Reason </strong>{_text(summary.reason)}</p>'
        if summary.reason
        else "",
        f"<p>{head}verify_result {_text(summary.verify_result)} "
        f"(decided by {_text(summary.deciding_stage)}), "
        f"parsing {_text(summary.parsing_model)}"
        + (f", granular score {granular}" if granular else "")
        + f"{tokens}</p>",
    ]
    if summary.fields:
        passed = summary.category == "pass" and all(map(_field_passed, summary.fields))
        parts.append(_fields_line(summary.fields) if passed else _fields_table(summary.fields))
    if summary.rubric:
        parts.append(_rubric_table(summary.rubric))
    notes = list(_notes(summary))
    if notes:
        parts.append('<ul class="karenina-notes">' + "".join(f"<li>{n}</li>" for n in notes))
        parts.append("</ul>")
    if agent is not None:
        parts.append(agent)
    if trace and (agent is None or summary.excerpts):
        # A failure's answer is what the reader came for: shown without a click.
        opened = " open" if failed else ""
        legend, body = highlighted(trace, summary.excerpts)
        parts.append(
            f'<details class="karenina-trace"{opened}><summary>model answer</summary>'
            f'{legend}<pre style="white-space: pre-wrap">{body}</pre></details>'
        )
    return '<div class="karenina-result">' + "".join(parts) + "</div>"


def _trace(payload: ItemPayload, index: int, summary: ResultSummary) -> str | None:
    raw = summary.raw_response
    if raw is None:
        results = payload.results
        template = results[index].get("template") if index < len(results) else None
        raw = (template or {}).get("raw_llm_response")
    return str(raw) if raw else None


def render_extras(payload: ItemPayload | Mapping[str, Any], include_trace: bool) -> str:
    """The item's extras block (question, verdict, per-result details) as escaped HTML;
    ``payload`` may also be its JSON form."""
    if not isinstance(payload, ItemPayload):
        payload = ItemPayload.from_json(payload)
    if payload.scenario is not None:
        return scenario_extras(payload.scenario, payload.category, payload.answering_model)
    replicate = payload.replicate
    head = (
        f'<p class="karenina-question"><strong>Question </strong>'
        f"{_text(payload.question)}</p>"
        f"<p><strong>Verdict </strong>{_text(payload.category)}, "
        f"answering {_text(payload.answering_model)}"
        + (f", replicate {_text(replicate)}" if replicate is not None else "")
        + f", tokens {_text(payload.input_tokens)} in / {_text(payload.output_tokens)} out</p>"
    )
    if payload.replicates:
        head += f"<p><strong>Replicates </strong>{_text(payload.replicates)}</p>"
    judged = item_line(item_votes(payload))
    if judged is not None:
        head += f'<p class="karenina-judge"><strong>Judge </strong>{_text(judged)}</p>'
    for side in payload.flaky_sides:
        head += f'<p class="karenina-flaky-side"><strong>Flaky </strong>{_text(side)}</p>'
    summaries = payload.summaries
    blocks = []
    for index, summary in enumerate(summaries):
        label = f"Result {index + 1}/{len(summaries)}: " if len(summaries) > 1 else None
        trace = _trace(payload, index, summary) if include_trace else None
        failed = summary.category != "pass"
        agent = result_conversation(payload, index, summary) if include_trace else None
        blocks.append(_result_block(summary, trace, label, failed, agent))
    return '<div class="karenina-extras">' + head + "".join(blocks) + "</div>"


def add_extras(report: pytest.TestReport, payload: ItemPayload, include_trace: bool) -> None:
    """Append the item's html extra to ``report.extras`` (created when missing)."""
    # Imported here: only runs that write an HTML report have pytest-html active.
    from pytest_html import extras  # type: ignore[import-untyped]

    found = getattr(report, "extras", None)
    if not isinstance(found, list):
        found = []
        report.extras = found  # type: ignore[attr-defined]
    found.append(extras.html(render_extras(payload, include_trace)))


def _escape_test_id(report: pytest.TestReport, cells: list[str]) -> None:
    """pytest-html writes the node id into its cell unescaped and draws rows with innerHTML,
    so a checkpoint file named with markup would run in the reader's browser. The cell is
    replaced only while it holds the raw id (a pytest-html that escapes it is left alone)."""
    test_id = report.nodeid if report.when == "call" else f"{report.nodeid}::{report.when}"
    raw = f'<td class="col-testId">{test_id}</td>'
    safe = f'<td class="col-testId">{escape(test_id, quote=False)}</td>'
    if raw != safe:
        cells[:] = [safe if cell == raw else cell for cell in cells]


class HtmlPlugin:
    """pytest-html hooks on the reporting process; the run's summary and gates are the
    controller's, handed over when the plugin is registered."""

    def __init__(
        self,
        config: pytest.Config,
        summary: RunSummary,
        gates: Sequence[GateStatement] = (),
        side_by_side: SideBySide | None = None,
    ) -> None:
        self.config = config
        self.summary = summary
        self.gates = gates
        self.side_by_side = side_by_side

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A regression's row gets what changed since the baseline, side by side: now, while
        its report still holds its results (the controller drops them once exported)."""
        sent = getattr(report, "karenina", None)
        if self.side_by_side is None or not isinstance(sent, dict) or not sent.get("results"):
            return
        found = self.side_by_side.extra_html(ItemPayload.from_json(sent))
        if found is not None:
            from pytest_html import extras

            extra = getattr(report, "extras", None)
            report.extras = [*(extra if isinstance(extra, list) else []), extras.html(found)]  # type: ignore[attr-defined]

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for offset, (column, title) in enumerate(COLUMNS):
            sortable = "" if column in UNSORTED else ' class="sortable"'
            cell = f'<th{sortable} data-column-type="{column}">{title}</th>'
            cells.insert(FIRST_COLUMN + offset, cell)

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        """Always inserts one cell per column (empty without a payload), or rows misalign."""
        sent = getattr(report, "karenina", None)
        payload = ItemPayload.from_json(sent) if isinstance(sent, dict) else None
        values = ("",) * len(COLUMNS)
        if isinstance(sent, dict) and payload is not None:
            values = (
                question_cell(payload),
                reason_cell(item_reason(payload, sent.get("reason"))),
                deciding_cell(payload),
                _text(payload.answering_model),
                _text(payload.category),
                score_cell(payload),
                _text(rubric_cell(payload)),
                _text(payload.flaky or ""),
            )
        for offset, ((column, _), value) in enumerate(zip(COLUMNS, values, strict=True)):
            cells.insert(FIRST_COLUMN + offset, f'<td class="col-{column}">{value}</td>')
        _escape_test_id(report, cells)

    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        """A karenina row's log pane holds what was captured (the pipeline's log records,
        output), nothing else: the Reason column and the extras already say why the item
        failed. With nothing captured the pane is left out (``data`` emptied)."""
        if not isinstance(getattr(report, "karenina", None), dict):
            return
        captured = data[1:] if report.longreprtext else data
        if captured == [NO_LOG] or not "".join(captured).strip():
            captured = []
        data[:] = captured

    def pytest_html_report_title(self, report: Any) -> None:
        names = ", ".join(path.name for path in self.config.stash[CHECKPOINTS_KEY])
        report.title = f"karenina: {names}"

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The run's facts in the report's Environment table (pytest-metadata's)."""
        try:
            from pytest_metadata.plugin import metadata_key  # type: ignore[import-untyped]
        except ImportError:  # pytest-html without pytest-metadata 3: no table to fill
            return
        metadata = self.config.stash.get(metadata_key, None)
        if metadata is not None:
            metadata.update(environment(self.config))

    def pytest_html_results_summary(
        self, prefix: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        summary = self.summary
        if not summary.total:
            return
        rows = "".join(
            f"<tr><td>{_text(model)}</td><td>{rate.rate:.1%}</td>"
            f"<td>{rate.low:.1%}-{rate.high:.1%}</td><td>{rate.passed}/{rate.total}</td></tr>"
            for model, rate in pass_rates_by_model(summary.payloads.values()).items()
        )
        overall = pass_rate(summary.payloads.values())
        interval = f", 95% CI {overall.low:.1%}-{overall.high:.1%}" if overall else ""
        headlines = [found for gate in self.gates if (found := gate.headline()) is not None]
        prefix.append(
            '<div class="karenina-summary">'
            f"<p><strong>karenina</strong> pass rate {summary.pass_rate:.1%} "
            f"({summary.passed}/{summary.total} items){interval}"
            + "".join(
                f"; {_text(line)}"
                for line in [*summary.cost.lines(), *summary.judge.lines(), *headlines]
            )
            + '</p><table class="karenina-models"><tr><th>answering model</th>'
            "<th>pass rate</th><th>95% CI</th><th>passed</th></tr>"
            f"{rows}</table>{charts_html(summary)}"
            f"{comparison_html(summary.payloads.values(), summary.compare_to)}"
            f"{gate_details_html(self.gates)}</div>"
        )
        prefix.append(clusters_html(summary.clusters))
        if self.side_by_side is not None:
            prefix.append(self.side_by_side.summary_html())
        postfix.append(page_html(summary.payloads.values(), summary.compare_to))
