"""Measuring each run loop's CPU against its wall time, for the CPU-bound summary line.

The process that runs items times its run loop (every thread's CPU, ``time.process_time``);
an xdist worker hands its figures to the controller in ``workeroutput``, which xdist sends
when the worker finishes (``pytest_testnodedown``). The reporting process decides and prints
the line after the karenina summary (:func:`~.cpu_bound.cpu_bound_line`).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import pytest

from pytest_karenina.plugin.options.workers import usable_cores
from pytest_karenina.plugin.report.cpu_bound import LoopUse, cpu_bound_line

WORKER_OUTPUT = "karenina_loop_use"
"""The ``workeroutput`` key of a worker's ``[cpu_seconds, wall_seconds]``."""


class CpuMeter:
    """Times this process's run loop, gathers the workers' (on the xdist controller), and
    writes the CPU-bound line in the terminal summary of the process that reports."""

    def __init__(self, config: pytest.Config, runs_items: bool, reports: bool) -> None:
        self.config = config
        self.runs_items = runs_items
        self.reports = reports
        self.loops: list[LoopUse] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if not self.runs_items or session.config.option.collectonly:
            return (yield)
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return (yield)
        finally:
            use = LoopUse(time.process_time() - cpu, time.perf_counter() - wall)
            workeroutput: dict[str, Any] | None = getattr(self.config, "workeroutput", None)
            if workeroutput is not None:
                workeroutput[WORKER_OUTPUT] = [use.cpu_seconds, use.wall_seconds]
            else:
                self.loops.append(use)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist's controller: a worker finished (its ``workeroutput`` holds its loop)."""
        found = (getattr(node, "workeroutput", None) or {}).get(WORKER_OUTPUT)
        if isinstance(found, list | tuple) and len(found) == 2:
            self.loops.append(LoopUse(float(found[0]), float(found[1])))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.reports:
            return
        line = cpu_bound_line(self.loops, usable_cores())
        if line is not None:
            terminalreporter.write_line(line)
