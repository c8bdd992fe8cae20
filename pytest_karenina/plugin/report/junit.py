"""JUnit XML: scalar ``karenina.*`` properties per item, and the pass-rate gate per suite."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Sequence

from pytest_karenina.plugin.payload import tokens
from pytest_karenina.plugin.report.judge_agreement import item_properties
from pytest_karenina.plugin.verdict.outcome import Verdict
from pytest_karenina.plugin.verdict.replicates import ReplicateVote
from pytest_karenina.results import VerificationResult
from pytest_karenina.results.agent_metrics import is_agent_run
from pytest_karenina.results.cost import PriceTable, results_cost
from pytest_karenina.rubrics.gates import gate_summary


def rubric_properties(verdict: Verdict) -> list[tuple[str, object]]:
    """``karenina.rubric.<trait>`` (metric and template-kind traits: one per part) and
    ``karenina.rubric_gates`` (passed/gated) when traits are gated."""
    found: list[tuple[str, object]] = []
    for check in verdict.checks:
        if check.skipped is not None:
            continue
        key = f"karenina.rubric.{check.name}"
        if isinstance(check.value, dict):
            found.extend((f"{key}.{part}", value) for part, value in check.value.items())
        else:
            found.append((key, check.value))
    passed, gated = gate_summary(verdict.checks)
    if gated:
        found.append(("karenina.rubric_gates", f"{passed}/{gated}"))
    return found


def deep_judgment_properties(result: VerificationResult) -> list[tuple[str, object]]:
    """``karenina.deep_judgment.*`` when template deep judgment was on: mode, whether it ran,
    model calls, excerpt retries and the attributes left without a quote."""
    section = result.deep_judgment
    if section is None:
        return []
    return [
        ("karenina.deep_judgment.mode", section.deep_judgment_mode),
        ("karenina.deep_judgment.performed", section.deep_judgment_performed),
        ("karenina.deep_judgment.model_calls", section.deep_judgment_model_calls),
        ("karenina.deep_judgment.excerpt_retries", section.deep_judgment_excerpt_retry_count),
        (
            "karenina.deep_judgment.attributes_without_excerpts",
            ",".join(section.attributes_without_excerpts or ()),
        ),
    ]


def deep_judgment_rubric_properties(result: VerificationResult) -> list[tuple[str, object]]:
    """``karenina.deep_judgment_rubric.*`` when rubric deep judgment was on: whether it ran,
    traits judged, model calls, excerpt retries and the traits left without a quote."""
    section = result.deep_judgment_rubric
    if section is None:
        return []
    prefix = "karenina.deep_judgment_rubric"
    return [
        (f"{prefix}.performed", section.deep_judgment_rubric_performed),
        (f"{prefix}.traits", section.total_traits_evaluated),
        (f"{prefix}.model_calls", section.total_deep_judgment_model_calls),
        (f"{prefix}.excerpt_retries", section.total_excerpt_retries),
        (
            f"{prefix}.traits_without_excerpts",
            ",".join(section.traits_without_valid_excerpts or ()),
        ),
    ]


def agent_properties(result: VerificationResult) -> list[tuple[str, object]]:
    """``karenina.agent.*`` when the answer came from an agent run: model calls, tool calls,
    failed tool calls, calls the tool call limit refused, whether it hit its call limit or its
    time limit."""
    template = result.template
    metrics = template.agent_metrics if template is not None else None
    if template is None or metrics is None or not is_agent_run(metrics):
        return []
    return [
        ("karenina.agent.model_calls", metrics.get("iterations")),
        ("karenina.agent.tool_calls", metrics.get("tool_calls")),
        ("karenina.agent.failed_tool_calls", metrics.get("suspect_failed_tool_calls")),
        ("karenina.agent.refused_tool_calls", metrics.get("refused_tool_calls", 0)),
        ("karenina.agent.limit_reached", bool(metrics.get("limit_reached"))),
        ("karenina.agent.timed_out", template.response_timeout_partial),
    ]


def user_properties(
    verdicts: Sequence[Verdict],
    vote: ReplicateVote | None = None,
    prices: PriceTable | None = None,
) -> list[tuple[str, object]]:
    """Scalar ``karenina.*`` JUnit properties of an item (its first result decides; under a
    replicate policy or with judge replicates also ``karenina.replicates``,
    ``karenina.flaky`` and ``karenina.flaky_side``; with judge replicates
    ``karenina.judge_agreement`` and ``karenina.judge_disagreed``; with a price table
    ``karenina.cost_usd``)."""
    if not verdicts:
        return []
    results = [verdict.result for verdict in verdicts]
    result = results[0]
    template = result.template
    granular = template.verify_granular_result if template else None
    found: list[tuple[str, object]] = [
        ("karenina.question_id", result.metadata.question_id),
        ("karenina.verify_result", template.verify_result if template else None),
        ("karenina.granular_score", granular if isinstance(granular, int | float) else None),
        ("karenina.answering_model", result.metadata.answering.model_name),
        ("karenina.parsing_model", ",".join(r.metadata.parsing.model_name for r in results)),
        ("karenina.category", (vote.outcome if vote else verdicts[0].category).value),
        ("karenina.input_tokens", sum(tokens(r)[0] for r in results)),
        ("karenina.output_tokens", sum(tokens(r)[1] for r in results)),
        *rubric_properties(verdicts[0]),
        *deep_judgment_properties(result),
        *deep_judgment_rubric_properties(result),
        *agent_properties(result),
    ]
    if vote is not None:
        flipped = {"answer": vote.answer_flaky, "judge": vote.judge_flaky}
        sides = [side for side, flips in flipped.items() if flips]
        found += [
            ("karenina.replicates", vote.describe()),
            ("karenina.flaky", vote.flaky_text() or ""),
            ("karenina.flaky_side", ",".join(sides)),
        ]
        if vote.judge_replicates > 1:
            found += item_properties(vote.judges)
    if prices is not None:
        found.append(("karenina.cost_usd", f"{results_cost(results, prices).total:.6f}"))
    return [(name, "" if value is None else value) for name, value in found]


def write_suite_properties(path: str, found: Sequence[tuple[str, str]]) -> None:
    """Add ``karenina.*`` properties to every ``<testsuite>`` of a written JUnit file.

    Suite properties recorded through pytest's fixture do not survive xdist, so the
    reporting process adds them to the finished file. They are spliced into the file as
    pytest wrote it (UTF-8), right after each suite's opening tag (into its leading
    ``<properties>`` when it has one): parsing and rewriting the whole tree took seconds at
    20,000 test cases. A file that is missing or is no well-formed XML is left alone.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        xml.parsers.expat.ParserCreate().Parse(data, True)
    except (OSError, xml.parsers.expat.ExpatError):
        return
    holder = ET.Element("properties")
    for name, value in found:
        ET.SubElement(holder, "property", name=name, value=value)
    inner = ET.tostring(holder, encoding="utf-8", xml_declaration=False)
    inner = inner[len(b"<properties>") : -len(b"</properties>")]
    pieces: list[bytes] = []
    done = 0
    for tag in _SUITE_TAG.finditer(data):
        pieces.append(data[done : tag.start()])
        done = tag.end()
        if tag.group("closed"):
            pieces.append(tag.group("open") + b"><properties>" + inner + b"</properties>")
            pieces.append(b"</testsuite>")
            continue
        pieces.append(tag.group(0))
        leading = _PROPERTIES.match(data, done)
        if leading is None:
            pieces.append(b"<properties>" + inner + b"</properties>")
        elif leading.group("empty"):
            pieces.append(leading.group("space") + b"<properties>" + inner + b"</properties>")
            done = leading.end()
        else:  # before the properties' end tag: after the suite's own properties
            end = data.index(b"</properties>", leading.end())
            pieces.append(data[done:end] + inner)
            done = end
    pieces.append(data[done:])
    with open(path, "wb") as handle:
        handle.write(b"".join(pieces))


# The file is ElementTree's output (pytest's junitxml): every "<" of a value is escaped, so a
# literal "<testsuite" is always a tag, and ">" within its attributes is escaped too.
_SUITE_TAG = re.compile(rb"(?P<open><testsuite(?=[\s/>])[^>]*?)\s*(?P<closed>/)?>")
_PROPERTIES = re.compile(rb"(?P<space>\s*)<properties\s*(?P<empty>/)?>")


def scenario_properties(scenario: dict[str, object], verdict: str) -> list[tuple[str, object]]:
    """``karenina.scenario.*`` of a scenario item: id, verdict, status, path (``a -> b``),
    turns, and what broke it (the failing criterion and turn, when there is one)."""
    path = scenario.get("path")
    found: list[tuple[str, object]] = [
        ("karenina.scenario.id", scenario.get("name")),
        ("karenina.scenario.verdict", verdict),
        ("karenina.scenario.status", scenario.get("status")),
        ("karenina.scenario.path", " -> ".join(map(str, path)) if isinstance(path, list) else ""),
        ("karenina.scenario.turns", scenario.get("turns")),
    ]
    if scenario.get("criterion") is not None:
        found.append(("karenina.scenario.failing_criterion", scenario["criterion"]))
    if scenario.get("turn") is not None and verdict != "pass":
        found.append(("karenina.scenario.failing_turn", scenario["turn"]))
    return found
