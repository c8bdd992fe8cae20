"""What karenina adds to pytest-html's page below its summary: the filter bar, the style, and
the script that draws the results table a page at a time and filters it (``web/``), with
what the script needs to know of the run (the items of the questions the models disagree on).

pytest-html has no hook for a script or a style sheet of a plugin's own: both go into its
summary, which the page holds above its data and its own script (so this script runs first).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources

from pytest_karenina.plugin.payload import ItemPayload
from pytest_karenina.plugin.report.comparison import compare_models

CONFIG_VERSION = 1


@cache
def asset(name: str) -> str:
    """The text of ``web/<name>`` (the script or the style sheet)."""
    return resources.files(__package__).joinpath("web", name).read_text(encoding="utf-8")


def disagreeing_items(payloads: Iterable[ItemPayload], reference: str | None) -> list[str] | None:
    """The node ids of the items of every question the answering models do not all pass or
    all fail; None with fewer than two models compared (no such filter then)."""
    found = list(payloads)
    comparison = compare_models(found, reference)
    if comparison is None:
        return None
    split = set(comparison.disagreements)
    return sorted(payload.nodeid for payload in found if payload.question_id in split)


def script_data(value: object) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element (no ``</script>``)."""
    return json.dumps(value, ensure_ascii=True).replace("<", "\\u003c")


def page_html(payloads: Iterable[ItemPayload], reference: str | None) -> str:
    """The filter bar (filled and shown by the script), the style and the script."""
    config = {"version": CONFIG_VERSION, "disagree": disagreeing_items(payloads, reference)}
    return (
        '<div id="karenina-filters" class="karenina-filters" hidden></div>'
        f"<style>{asset('report.css')}</style>"
        '<script type="application/json" id="karenina-report-config">'
        f"{script_data(config)}</script><script>{asset('report.js')}</script>"
    )
