"""GitHub Actions output: an ``::error`` annotation per failed or errored question, and a
Markdown job summary appended to ``$GITHUB_STEP_SUMMARY``.

Compared with a baseline, a failed question the gate did not count against the run (it
failed in the baseline too, or changed within noise) is a known failure: a ``::notice`` by
default (``--karenina-github-known-failures``), so that a green build shows no red; errors and
regressions stay ``::error`` annotations.

Both come from the run summary alone, so the plugin and ``pytest-karenina merge`` write the
same. Annotation values are escaped as GitHub's workflow commands require (``%``, CR and LF
everywhere; ``:`` and ``,`` in properties too). Text in the job summary is escaped so that
nothing a model or a benchmark wrote renders as an image, a link, HTML or table syntax.

The runner reads every line of a step's output as a possible workflow command, whoever
printed it (failure texts, captured logs, other tests' output). :class:`CommandGuard`
stops command processing for the whole run (``::stop-commands::<random token>`` before the
session's first line) and resumes it only to print the annotations above.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.plugin.options.ci_declare import GithubKnownFailures
from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.cluster_text import top_clusters
from pytest_karenina.plugin.report.pass_rates import pass_rate, pass_rates_by_model
from pytest_karenina.plugin.report.statements import GateStatement
from pytest_karenina.plugin.report.summary import RunSummary
from pytest_karenina.plugin.safe_text import terminal_safe
from pytest_karenina.plugin.verdict.outcome import Outcome

TOP = 5
"""How many of the slowest questions, and of those using the most tokens, the job summary
lists."""
LISTED = 20
"""How many failed questions, regressions and fixes the job summary lists."""


@dataclass(frozen=True)
class KnownFailures:
    """What the baseline gate did not count against the run, and how its failed items are
    annotated."""

    baseline: str
    """The baseline's file name."""
    accepted: Collection[tuple[str, str]]
    """``(question id, answering model)`` of the entries compared and not counted against
    the run."""
    how: GithubKnownFailures = "notice"

    def of(self, payloads: Sequence[ItemPayload]) -> list[ItemPayload]:
        """The known failures among the failed ``payloads`` (errors never are)."""
        return [
            payload
            for payload in payloads
            if not payload.category.is_error
            and payload.question_id is not None
            and (payload.question_id, payload.answering_model or "?") in self.accepted
        ]

    def describe(self, count: int) -> str:
        """The job summary's line on how the ``count`` known failures were annotated."""
        how = {
            "notice": "annotated as notices, not errors",
            "error": "annotated as errors",
            "none": "not annotated",
        }[self.how]
        return (
            f"{count} known failures (failed, and not regressions against {self.baseline}): "
            f"{how} (--karenina-github-known-failures {self.how})"
        )


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _failed(summary: RunSummary) -> list[ItemPayload]:
    """Failed and errored items (not passes, not items without a verdict), in report order."""
    return [
        payload
        for payload in summary.payloads.values()
        if payload.category not in (Outcome.PASS, Outcome.NO_VERDICT)
    ]


def _label(payload: ItemPayload) -> str:
    return f"{payload.question_id or payload.nodeid} [{payload.answering_model or '?'}]"


def _reason(summary: RunSummary, payload: ItemPayload) -> str:
    return summary.reasons.get(payload.nodeid) or payload.category.value


def _annotation(summary: RunSummary, payload: ItemPayload, command: str, known: bool) -> str:
    file = payload.nodeid.split("::", 1)[0]
    title = f"{_label(payload)}: {payload.category.value}" + (" (known failure)" if known else "")
    return (
        f"::{command} file={escape_property(file)},title={escape_property(title)}"
        f"::{escape_data(_reason(summary, payload))}"
    )


def error_annotations(
    summary: RunSummary, limit: int, known: KnownFailures | None = None
) -> list[str]:
    """``::error`` lines for the first ``limit`` failed questions, and a notice counting the
    rest. With ``known``, its known failures are annotated as it says: as notices (at most
    ``limit`` of them too: GitHub counts each kind apart), as errors among the others, or not
    at all."""
    failed = _failed(summary)
    accepted = {p.nodeid for p in known.of(failed)} if known is not None else set()
    how = known.how if known is not None else "error"
    errors = [p for p in failed if p.nodeid not in accepted or how == "error"]
    lines = [_annotation(summary, p, "error", p.nodeid in accepted) for p in errors[:limit]]
    notices = [p for p in failed if p.nodeid in accepted] if how == "notice" else []
    lines += [_annotation(summary, p, "notice", True) for p in notices[:limit]]
    left = [(len(errors) - limit, "failed questions"), (len(notices) - limit, "known failures")]
    lines += [
        f"::notice title=pytest-karenina::{count} more {what} are not annotated "
        f"(at most {limit}; see the job summary)"
        for count, what in left
        if count > 0
    ]
    return lines


_MARKDOWN = re.compile(r"[\\`*_~\[\]<>&|#$@]|(?<=www)\.|:(?=//)", re.IGNORECASE)
"""What a backslash escapes in Markdown text: link and image brackets, HTML, entities,
code, emphasis, math, mentions and references, table pipes (the backslash itself, so that
none of these escapes can be undone), and the ``www.`` and ``scheme://`` of autolinks."""


def markdown_text(text: object) -> str:
    """``text`` as one line of literal Markdown text (a table cell or a list entry): it renders
    as written, and never as an image, a link, HTML or a new cell."""
    value = " ".join(str(text).splitlines())
    return _MARKDOWN.sub(lambda found: "\\" + found.group(0), value)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_text(value) for value in row) + " |" for row in rows]
    return [*lines, ""]


def _listed(title: str, entries: Sequence[str]) -> list[str]:
    if not entries:
        return []
    lines = [f"**{markdown_text(title)}** ({len(entries)})", ""]
    lines += [f"- {markdown_text(entry)}" for entry in entries[:LISTED]]
    if len(entries) > LISTED:
        lines.append(f"- ... and {len(entries) - LISTED} more")
    return [*lines, ""]


def job_summary(
    summary: RunSummary,
    title: str,
    status: int,
    gates: Sequence[GateStatement] = (),
    known: KnownFailures | None = None,
    history: Sequence[str] = (),
) -> str:
    """The Markdown job summary of a run that exits with ``status``; ``known``: the
    baseline's known failures, and how they were annotated; ``history``: the run history's
    title and lines (``--karenina-history``)."""
    overall = pass_rate(summary.payloads.values())
    verdict = "passed" if status == 0 else f"failed (exit {status})"
    lines = [f"### pytest-karenina: {markdown_text(title)}", "", f"**Result: {verdict}**", ""]
    if overall is not None:
        lines += [f"Pass rate {markdown_text(overall.describe())}", ""]
    scenarios = summary.scenario_lines()  # the pass rate covers them: say how they did
    lines += [*(markdown_text(line.text) for line in scenarios), ""] if scenarios else []
    cost = summary.cost.lines()
    lines += [*(markdown_text(line) for line in cost), ""] if cost else []
    lines += _gates(gates) + _models(summary) + _history(history) + _clusters(summary)
    lines += _failures(summary, known)
    lines += _heaviest(summary)
    return "\n".join(lines) + "\n"


def _gates(gates: Sequence[GateStatement]) -> list[str]:
    headlines = [found for gate in gates if (found := gate.headline()) is not None]
    lines = [f"- {markdown_text(headline)}" for headline in headlines]
    lines += [""] if headlines else []
    for gate in gates:
        for title, entries in gate.details():
            lines += _listed(title, entries)
    return lines


def _models(summary: RunSummary) -> list[str]:
    rates = pass_rates_by_model(summary.payloads.values())
    rows = [(model, f"{rate.rate:.1%}", f"{rate.low:.1%}-{rate.high:.1%}",
             f"{rate.passed}/{rate.total}") for model, rate in rates.items()]  # fmt: skip
    return _table(("answering model", "pass rate", "95% CI", "passed"), rows) if rows else []


def _history(history: Sequence[str]) -> list[str]:
    """The run history's title in bold, its lines as a list."""
    if not history:
        return []
    title, *rest = history
    return [f"**{markdown_text(title)}**", "", *(f"- {markdown_text(line)}" for line in rest), ""]


def _clusters(summary: RunSummary) -> list[str]:
    """The largest failure clusters (:mod:`.cluster_text`)."""
    found = top_clusters(summary.clusters)
    if not found:
        return []
    return ["**Failure clusters** (largest first)", "",
            *(f"- {markdown_text(entry)}" for entry in found), ""]  # fmt: skip


def _failures(summary: RunSummary, known: KnownFailures | None) -> list[str]:
    failed = _failed(summary)
    if not failed:
        return []
    accepted = {p.nodeid for p in known.of(failed)} if known is not None else set()
    rows = [(p.question_id or p.nodeid, p.answering_model or "?",
             p.category.value + (" (known failure)" if p.nodeid in accepted else ""),
             _reason(summary, p)) for p in failed[:LISTED]]  # fmt: skip
    more = [f"... and {len(failed) - LISTED} more", ""] if len(failed) > LISTED else []
    said = [markdown_text(known.describe(len(accepted))), ""] if known is not None else []
    return [f"**Failed questions** ({len(failed)})", "", *said,
            *_table(("question", "model", "outcome", "reason"), rows), *more]  # fmt: skip


def _heaviest(summary: RunSummary) -> list[str]:
    """The slowest questions, and the costliest (with a price table) or those that used the
    most tokens."""
    payloads = list(summary.payloads.values())
    lines: list[str] = []
    slowest = sorted((p for p in payloads if p.seconds), key=lambda p: -p.seconds)[:TOP]
    if slowest:
        timed = [(_label(p), f"{p.seconds:.2f}") for p in slowest]
        lines += ["**Slowest questions**", "", *_table(("question", "seconds"), timed)]
    if any(p.cost for p in payloads):
        priced = sorted((p for p in payloads if p.cost), key=lambda p: -sum(p.cost or ()))[:TOP]
        costs = [(_label(p), f"${sum(p.cost or ()):.4f}", str(p.input_tokens),
                  str(p.output_tokens)) for p in priced]  # fmt: skip
        columns = ("question", "cost", "tokens in", "tokens out")
        return [*lines, "**Costliest questions**", "", *_table(columns, costs)]
    used = [p for p in payloads if p.input_tokens + p.output_tokens]
    heaviest = sorted(used, key=lambda p: -(p.input_tokens + p.output_tokens))[:TOP]
    if heaviest:
        counted = [(_label(p), str(p.input_tokens), str(p.output_tokens)) for p in heaviest]
        header = ("question", "tokens in", "tokens out")
        lines += ["**Most tokens**", "", *_table(header, counted)]
    return lines


def github_output(
    summary: RunSummary,
    title: str,
    status: int,
    limit: int,
    gates: Sequence[GateStatement] = (),
    known: KnownFailures | None = None,
    history: Sequence[str] = (),
) -> list[str]:
    """The annotation lines to print, after appending the job summary (and a line saying
    why that failed, if it did); ``known``: the baseline's known failures (None: no baseline
    was compared, every failure is an error); ``history``: :func:`job_summary`'s."""
    lines = error_annotations(summary, limit, known)
    problem = append_job_summary(job_summary(summary, title, status, gates, known, history))
    return lines if problem is None else [*lines, problem]


def append_job_summary(markdown: str) -> str | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY``; returns why it could not (None when
    it was written, or when the variable is not set)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    try:
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(markdown)
    except OSError as exc:
        return terminal_safe(
            f"karenina: could not write the job summary ({type(exc).__name__}: {exc})"
        )
    return None


GUARD = "karenina-github-guard"
"""The name :class:`CommandGuard` is registered under."""


class CommandGuard:
    """Under GitHub Actions, no line of the run's output is a workflow command but the
    plugin's own annotations.

    ``::stop-commands::<token>`` goes out before the session's first line (the header; under
    xdist before the workers start), the token is random (a text that could guess it could
    resume commands), and ``::<token>::`` resumes them only around :meth:`annotate` and at
    the very end of the run.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._token: str | None = None

    def _write(self, line: str) -> None:
        terminal: Any = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line(line)
            terminal.flush()  # before anything a worker process writes

    def _stop(self) -> None:
        if self._token is None:
            self._token = secrets.token_hex(16)
            self._write(f"::stop-commands::{self._token}")

    def _resume(self) -> None:
        if self._token is not None:
            self._write(f"::{self._token}::")
            self._token = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self) -> None:
        self._stop()

    def annotate(self, lines: Sequence[str]) -> None:
        """Print the plugin's annotations (and notes) as the only commands of the run."""
        self._resume()
        for line in lines:
            self._write(line)
        self._stop()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        self._resume()  # later steps' commands (and this step's after pytest) work again
