"""What the prefetcher reads off every item it runs, question or scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pytest_karenina.rubrics.traits import Rubric


class JobItem(Protocol):
    """The members a question item and a scenario item both offer the prefetcher."""

    @property
    def nodeid(self) -> str: ...

    @property
    def path(self) -> Path: ...

    @property
    def ihook(self) -> Any: ...

    @property
    def global_rubric(self) -> Rubric | None: ...

    @property
    def dynamic_rubric(self) -> Rubric | None: ...
