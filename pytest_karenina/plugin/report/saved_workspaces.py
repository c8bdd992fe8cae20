"""Where the final workspaces of a run went (``workspace_output_mode``): the header's line,
each item's JUnit properties and its pytest-html link to the saved copies."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import pytest

from pytest_karenina.config.verification import VerificationConfig
from pytest_karenina.results import VerificationResult

PROPERTY = "karenina.saved_workspace"


def header_line(vconfig: VerificationConfig) -> str | None:
    """``karenina: workspaces saved to DIR (mode[, excluding ...])``; None when none are."""
    directory = vconfig.workspace_output_dir
    if vconfig.workspace_output_mode == "none" or directory is None:
        return None
    patterns = vconfig.workspace_output_exclude_patterns
    excluding = f", excluding {' '.join(patterns)}" if patterns else ""
    return (
        f"karenina: workspaces saved to {directory.absolute()} "
        f"({vconfig.workspace_output_mode}{excluding})"
    )


def saved_paths(results: Sequence[VerificationResult]) -> list[str]:
    """The saved workspaces of an item's results, each once, in order (one per replicate)."""
    return list(dict.fromkeys(r.saved_workspace for r in results if r.saved_workspace))


def saved_properties(results: Sequence[VerificationResult]) -> list[tuple[str, object]]:
    """One ``karenina.saved_workspace`` property per saved workspace of the item."""
    return [(PROPERTY, path) for path in saved_paths(results)]


def report_directory(config: pytest.Config) -> Path | None:
    """The directory of the pytest-html report (``--html``), as pytest-html places it."""
    given = config.getoption("htmlpath", None)
    if not given:
        return None
    return (Path.cwd() / Path(os.path.expandvars(str(given))).expanduser()).parent


def links_html(paths: Sequence[str], report_dir: Path | None) -> str:
    """The item's links to its saved workspaces, relative to the report (so the report and
    the saved copies can move together), as escaped HTML."""
    links = []
    for path in paths:
        target = os.path.relpath(path, report_dir) if report_dir is not None else path
        href = html.escape(quote(Path(target).as_posix()), quote=True)
        links.append(
            f'<a href="{href}" title="{html.escape(path, quote=True)}">'
            f"{html.escape(Path(path).name)}</a>"
        )
    return '<div class="karenina-saved-workspace">Saved workspace: ' + ", ".join(links) + "</div>"


def add_links(
    report: pytest.TestReport, results: Sequence[VerificationResult], report_dir: Path | None
) -> None:
    """Append the item's saved-workspace links to ``report.extras`` (pytest-html)."""
    paths = saved_paths(results)
    if not paths:
        return
    from pytest_html import extras  # type: ignore[import-untyped]

    found = getattr(report, "extras", None)
    if found is None:
        found = []
        report.extras = found  # type: ignore[attr-defined]
    found.append(extras.html(links_html(paths, report_dir)))
