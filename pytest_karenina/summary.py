"""Run-level aggregation on the reporting process: pass rates, outcome counts, tokens, gate."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class Gate:
    """The ``--karenina-min-pass-rate`` decision."""

    threshold: float
    pass_rate: float
    passed: bool

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        op = ">=" if self.passed else "<"
        return f"pass rate {self.pass_rate:.1%} {op} {self.threshold:.1%}: gate {verdict}"


@dataclass
class RunSummary:
    """Payloads by node id (first one wins: a rerun item reports again) and the gate."""

    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    gate: Gate | None = None

    def add(self, payload: dict[str, Any]) -> bool:
        nodeid = str(payload.get("nodeid"))
        if nodeid in self.payloads:
            return False
        self.payloads[nodeid] = payload
        return True

    def add_skip(self, nodeid: str) -> None:
        self.skipped.add(nodeid)

    @property
    def total(self) -> int:
        return len(self.payloads)

    @property
    def passed(self) -> int:
        return sum(1 for p in self.payloads.values() if p.get("category") == "pass")

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    def by_model(self) -> dict[str, tuple[int, int]]:
        """Answering model -> (passed, total)."""
        found: dict[str, tuple[int, int]] = {}
        for payload in self.payloads.values():
            model = str(payload.get("answering_model") or "?")
            passed, total = found.get(model, (0, 0))
            found[model] = (passed + (payload.get("category") == "pass"), total + 1)
        return found

    def categories(self) -> Counter[str]:
        return Counter(str(p.get("category")) for p in self.payloads.values())

    def tokens(self) -> tuple[int, int]:
        return (
            sum(int(p.get("input_tokens") or 0) for p in self.payloads.values()),
            sum(int(p.get("output_tokens") or 0) for p in self.payloads.values()),
        )

    def apply_gate(self, session: pytest.Session, threshold: float | None) -> None:
        """Exit 0 at or above the threshold even with failed items, else 1 (errors count as
        not passed). Interrupted, usage-error and empty runs keep their exit codes."""
        if threshold is None or self.total == 0:
            return
        rate = self.pass_rate or 0.0
        self.gate = Gate(threshold, rate, rate >= threshold)
        status = session.exitstatus
        if status in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            ok = self.gate.passed
            session.exitstatus = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED

    def write(self, terminal: Any) -> None:
        if not self.payloads and not self.skipped:
            return
        terminal.write_sep("=", "karenina summary")
        rate = self.pass_rate
        overall = f"{rate:.1%}" if rate is not None else "n/a"
        terminal.write_line(f"pass rate {overall} ({self.passed}/{self.total} items)")
        for model, (passed, total) in sorted(self.by_model().items()):
            terminal.write_line(f"  {model}: {passed / total:.1%} ({passed}/{total})")
        counts = self.categories()
        if self.skipped:
            counts["skipped"] = len(self.skipped)
        terminal.write_line(
            "outcomes: " + ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        )
        input_tokens, output_tokens = self.tokens()
        terminal.write_line(f"tokens: {input_tokens} in, {output_tokens} out")
        if self.gate is not None:
            terminal.write_line(f"karenina gate: {self.gate.describe()}")


def write_junit_gate(path: str, summary: RunSummary) -> None:
    """Add ``karenina.gate*`` properties to every ``<testsuite>`` of a written JUnit file.

    Suite properties recorded through pytest's fixture do not survive xdist, so the
    reporting process adds them to the finished file.
    """
    gate = summary.gate
    if gate is None:
        return
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite in suites:
        properties = suite.find("properties")
        if properties is None:
            properties = ET.Element("properties")
            suite.insert(0, properties)
        for name, value in (
            ("karenina.gate", "passed" if gate.passed else "failed"),
            ("karenina.pass_rate", f"{gate.pass_rate:.4f}"),
            ("karenina.min_pass_rate", f"{gate.threshold:g}"),
        ):
            ET.SubElement(properties, "property", name=name, value=value)
    tree.write(path, encoding="utf-8", xml_declaration=True)
