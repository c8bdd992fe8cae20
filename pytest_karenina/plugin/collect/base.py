"""What every item made from a checkpoint offers, questions and scenarios alike: the id that
selection acts on (``--karenina-shard``, ``--karenina-changed-since``) and whether it runs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest


class KareninaItem(pytest.Item):
    """An item of a checkpoint (a question or a scenario, x answering model x replicate)."""

    runnable: bool = True
    """False: the item is skipped without a pipeline run (an unfinished question)."""

    @property
    def selection_id(self) -> str:
        """What shards hash and changed-since compares: a question's id, ``scenario:<name>``."""
        raise NotImplementedError


def karenina_items(items: Sequence[pytest.Item]) -> list[KareninaItem]:
    """The checkpoint items among ``items`` (questions and scenarios), in order."""
    return [item for item in items if isinstance(item, KareninaItem)]
