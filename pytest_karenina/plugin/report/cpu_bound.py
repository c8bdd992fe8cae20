"""Whether a run was CPU-bound, and the summary line that says so.

Each process that runs items measures its run loop: CPU seconds (every thread's, from
``time.process_time``) against wall seconds. Pipelines wait on the network with the GIL
released, so a run limited by latency or by its concurrency keeps the CPU mostly idle; one
whose CPU time nearly equals its wall time spent the run computing, and more pipelines in
flight would only queue for the GIL. Then only more processes make it faster: the line says
how many cores the machine offers and names ``--karenina-workers`` when some were idle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BUSY_SHARE = 0.8
"""CPU seconds per wall second of a run loop, averaged over its processes, from which the run
counts as CPU-bound (one Python process rarely passes 1.0: the GIL)."""
MIN_LOOP_SECONDS = 10.0
"""Shorter runs say nothing: a worker process costs seconds to start, more than it would save."""


@dataclass(frozen=True)
class LoopUse:
    """The CPU one process spent in its run loop, and how long the loop took."""

    cpu_seconds: float
    wall_seconds: float


def cpu_bound_line(loops: Sequence[LoopUse], cores: int) -> str | None:
    """The summary's line for a run whose processes' run loops are ``loops`` (one without
    xdist, one per worker with it) on a machine of ``cores`` usable cores; None when the run
    was not CPU-bound or too short to tell."""
    measured = [loop for loop in loops if loop.wall_seconds > 0]
    if not measured:
        return None
    wall = max(loop.wall_seconds for loop in measured)
    cpu = sum(loop.cpu_seconds for loop in measured)
    share = cpu / sum(loop.wall_seconds for loop in measured)
    if wall < MIN_LOOP_SECONDS or share < BUSY_SHARE:
        return None
    processes = len(measured)
    who = "the run loop kept" if processes == 1 else f"each of {processes} workers kept"
    line = f"CPU-bound: {who} {share:.0%} of one core busy ({cpu:.1f} s of CPU in {wall:.1f} s)"
    idle = cores - processes
    if idle <= 0:
        return f"{line}; every usable core ran a process ({cores})"
    cores_word = "core" if idle == 1 else "cores"
    return f"{line}; --karenina-workers {cores} would use the {idle} idle {cores_word}"
