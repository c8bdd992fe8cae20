"""Running pytest with the plugin against the scripted server (pytester, real HTTP)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import API_KEY, script
from tests.helpers import DATA
from tests.support.openai_server import OpenAIServer

MULTI = "multi_question.jsonld"


def copy_checkpoint(pytester: pytest.Pytester, name: str = MULTI) -> Path:
    target = pytester.path / name
    shutil.copy(DATA / name, target)
    return target


def endpoint_args(server: OpenAIServer, *extra: str) -> list[str]:
    return [
        "--karenina-endpoint", server.base_url, "--karenina-answering-model", "test-model",
        "-p", "no:cacheprovider", *extra,
    ]  # fmt: skip


def scripted(server: OpenAIServer, name: str = MULTI) -> None:
    script(server, CHECKPOINT_CASES[name])


def use_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)


CHROMIUM = "/usr/bin/chromium"


def rendered_dom(pytester: pytest.Pytester, report: Path) -> str:
    """The DOM of ``report`` after headless Chromium ran its scripts (skips without chromium)."""
    chromium = shutil.which("chromium") or shutil.which(CHROMIUM)
    if chromium is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--virtual-time-budget=5000",
         f"--user-data-dir={pytester.path / 'chromium-profile'}",
         "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip


def screenshot(pytester: pytest.Pytester, report: Path) -> bytes:
    """A PNG of ``report`` as headless Chromium draws it (skips without chromium)."""
    chromium = shutil.which("chromium") or shutil.which(CHROMIUM)
    if chromium is None:
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    target = pytester.path / "report.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--virtual-time-budget=5000",
         "--hide-scrollbars", "--window-size=1400,2200",
         f"--user-data-dir={pytester.path / 'chromium-shot'}",
         f"--screenshot={target}", report.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return target.read_bytes()


def rendered_rows(dom: str, nodeid: str) -> list[str]:
    """The rendered results-table bodies of the test ``nodeid``."""
    bodies = {b.split("</tbody>")[0] for b in dom.split('<tbody class="results-table-row')}
    return [b for b in bodies if f'<td class="col-testId">{nodeid}</td>' in b]


CAPITAL_TEMPLATE = """
class Answer(BaseAnswer):
    capital: str = Field(description="The capital city named in the response")

    def ground_truth(self):
        self.correct = {{"capital": "{capital}"}}

    def verify(self) -> bool:
        return self.capital.strip().lower() == self.correct["capital"].lower()
"""
COUNTRIES = {"q1": ("France", "Paris"), "q2": ("Italy", "Rome"), "q3": ("Japan", "Tokyo")}


def capitals_checkpoint(
    directory: Path, countries: Mapping[str, tuple[str, str]] = COUNTRIES, **question: Any
) -> Path:
    """``capitals.jsonld``: per question id, "What is the capital of <country>?" with a
    template whose ground truth is the capital."""
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=CAPITAL_TEMPLATE.format(capital=capital), finished=True,
                 **question)
        for qid, (country, capital) in countries.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path
