"""A compact failure summary for runs with many failed questions.

pytest's full failure layout looks up teardown sections per failure across every report:
at the end of a 5,000-failure run that costs 20 s. Past :data:`COMPACT_SUMMARY_FAILURES`
failed questions, and unless ``--tb`` was given, the summary is ``--tb=line``.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest

COMPACT_SUMMARY_FAILURES = 200


def _tb_unchosen(config: pytest.Config) -> bool:
    return bool(config.getoption("tbstyle", "auto") == "auto")


def compact_notice(config: pytest.Config, questions: int) -> list[str]:
    """Under the collection count: a run that could fail more questions than the full
    failure summary can take says that it would be compact."""
    if questions <= COMPACT_SUMMARY_FAILURES or not _tb_unchosen(config):
        return []
    return [
        f"karenina: past {COMPACT_SUMMARY_FAILURES} failed questions the failure summary is "
        "compact (--tb=line); pass --tb to choose"
    ]


def compact_failure_summary(config: pytest.Config, questions: Collection[str]) -> list[str]:
    """Switch to ``--tb=line`` when many of ``questions`` (node ids) failed and the user
    chose no style; the line that says so."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not _tb_unchosen(config):
        return []
    failed = sum(1 for report in reporter.stats.get("failed", ()) if report.nodeid in questions)
    if failed <= COMPACT_SUMMARY_FAILURES:
        return []
    config.option.tbstyle = "line"
    return [
        f"karenina: {failed} failed questions: compact failure summary (--tb=line); "
        "pass --tb=short for pytest's full layout"
    ]
