"""Failure clusters in words: one line each (``dose (ExactMatch): '5 mg' vs '5mg' x 9 ->
the SynonymMap ... would pass 9 of 9``), the terminal's top lines, the HTML report's section
(each cluster expands to its items, linked to their rows) and the GitHub job summary's."""

from __future__ import annotations

import json
from collections import Counter
from html import escape
from urllib.parse import quote

from pytest_karenina.plugin.report.clusters import Cluster, ClusterTally, pair_pattern
from pytest_karenina.plugin.report.statements import Line
from pytest_karenina.plugin.safe_text import terminal_safe

TOP = 5
"""Clusters the terminal and the job summary list (the HTML report lists them all)."""
LISTED_ITEMS = 200
"""Items a cluster of the HTML report lists (it counts the others)."""


SHOWN = 60
"""Characters of a value a cluster's line shows."""


def _shown(value: object) -> str:
    """``value`` as written (strings quoted, whitespace kept: it may be the difference)."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _pair(expected: object, parsed: object) -> str:
    return f"{_shown(expected)} vs {_shown(parsed)}"


def _field_part(found: Cluster) -> str:
    misses = [f.miss for f in found.failures if f.miss is not None]
    first = misses[0]
    pairs = Counter(
        (json.dumps(m.expected, sort_keys=True, default=str),
         json.dumps(m.parsed, sort_keys=True, default=str))
        for m in misses
    )  # fmt: skip
    head = f"{first.field} ({first.primitive}): "
    if len(pairs) == 1:
        return head + _pair(first.expected, first.parsed)
    (want, got), _ = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
    pattern = pair_pattern(first.expected, first.parsed)
    return head + f"{pattern} (e.g. {_pair(json.loads(want), json.loads(got))})"


def describe(found: Cluster, several_models: bool) -> str:
    """The cluster in one line; ``several_models``: the run had several answering models,
    so say which ones the cluster's items are on."""
    first = found.failures[0]
    if first.miss is not None:
        text = _field_part(found)
    elif first.trait is not None:
        text = f"{first.outcome}: trait {first.trait}"
    elif first.outcome == "verify_fail" and first.stage and first.stage != "VerifyTemplate":
        text = f"{first.outcome} (decided by {first.stage})"
    else:
        text = first.outcome
    text += f" x {found.size}"
    if several_models:
        if len(found.models) == 1:
            text += f" (all on {next(iter(found.models))})"
        else:
            ranked = sorted(found.models.items(), key=lambda kv: (-kv[1], kv[0]))
            text += " (" + ", ".join(f"{model} {count}" for model, count in ranked) + ")"
    if found.suggestion is not None:
        text += (
            f" -> {found.suggestion.change} would pass {found.suggestion.passing} of {found.size}"
        )
    return text


def cluster_lines(tally: ClusterTally, top: int = TOP) -> list[Line]:
    """The terminal summary's ``failure clusters`` lines: the largest ``top`` clusters."""
    clusters = tally.clusters()
    if not clusters:
        return []
    several = len(tally.models) > 1
    more = len(clusters) - top
    lines = [Line(f"failure clusters ({len(clusters)}, by size):")]
    lines += [Line(terminal_safe("  " + describe(found, several))) for found in clusters[:top]]
    if more > 0:
        lines.append(Line(f"  ... and {more} more (the HTML report lists them all)"))
    return lines


def row_anchor(nodeid: str) -> str:
    """The ``href`` of an item's row in the pytest-html report (rows have their node id as
    ``id``)."""
    return "#" + quote(nodeid, safe="/:[]-_.~")


def clusters_html(tally: ClusterTally) -> str:
    """The HTML report's ``Failure clusters`` section (empty when nothing failed): each
    cluster a ``<details>`` listing its items, linked to their rows."""
    clusters = tally.clusters()
    if not clusters:
        return ""
    several = len(tally.models) > 1
    parts = [
        '<section class="karenina-clusters"><h3>Failure clusters</h3>'
        f"<p>{len(tally.failures)} failed or errored items in {len(clusters)} clusters, "
        "grouped by outcome, deciding field, primitive and value pattern.</p>"
    ]
    for index, found in enumerate(clusters):
        items = "".join(
            f'<li><a href="{escape(row_anchor(nodeid))}">{escape(nodeid)}</a></li>'
            for nodeid in found.nodeids[:LISTED_ITEMS]
        )
        if found.size > LISTED_ITEMS:
            items += f"<li>... and {found.size - LISTED_ITEMS} more</li>"
        parts.append(
            f'<details class="karenina-cluster" data-cluster="{index}" '
            f'data-size="{found.size}"><summary>{escape(describe(found, several))}</summary>'
            f"<ul>{items}</ul></details>"
        )
    return "".join(parts) + "</section>"


def top_clusters(tally: ClusterTally, top: int = TOP) -> list[str]:
    """The largest ``top`` clusters in words (the GitHub job summary lists them), with a
    last entry counting the others."""
    clusters = tally.clusters()
    several = len(tally.models) > 1
    found = [describe(cluster, several) for cluster in clusters[:top]]
    if len(clusters) > top:
        found.append(f"... and {len(clusters) - top} more")
    return found
