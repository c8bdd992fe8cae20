"""Keeping a large run's long-lived objects out of the garbage collector's way.

A run holds its items, checkpoints and reports until the session ends, and every full
collection walks all of them: at 5,000 questions that costs about a millisecond per question
during the run, and seconds at the end, where pytest collects five times over to surface
unraisable exceptions and the interpreter collects again on its way out. So a large run
collects once and freezes what survives (``gc.freeze``) when its loop starts and when the
session finishes: later collections see only what is new.
"""

from __future__ import annotations

import atexit
import gc

import pytest

SETTLE_FROM_ITEMS = 500
"""Runs with fewer question items skip it: one collection costs more than it saves them."""

_freeze_at_exit_registered = False


class HeapSettler:
    """Freezes the heap of one session's large run, and unfreezes it at the session's end.

    Build it in ``pytest_configure``: it registers the unfreeze as a cleanup then, and
    cleanups run last-registered first, so pytest's collections at exit (registered by its
    own plugins after ours) still find the heap frozen. Unfreezing lets a process that runs
    several sessions (``pytest.main`` twice, pytester) reclaim the earlier ones; at
    interpreter exit, where nothing is reclaimed anyway, the heap is frozen again.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.frozen = False
        config.add_cleanup(self._unfreeze)

    def settle(self, items: int) -> None:
        """Collect the garbage there is now and freeze what survived, for a run of ``items``
        question items (nothing below :data:`SETTLE_FROM_ITEMS`)."""
        if items >= SETTLE_FROM_ITEMS:
            gc.collect()
            self.freeze(items)

    def freeze(self, items: int) -> None:
        """Freeze what is alive now without collecting first, for ``items`` question items
        just built (nothing below :data:`SETTLE_FROM_ITEMS`): collection freezes the
        checkpoints' questions and items it made with the collector paused, none of it
        garbage, so that no later pass walks them (a collection first would walk them all)."""
        global _freeze_at_exit_registered
        if items < SETTLE_FROM_ITEMS:
            return
        gc.freeze()
        self.frozen = True
        if not _freeze_at_exit_registered:
            atexit.register(gc.freeze)
            _freeze_at_exit_registered = True

    def _unfreeze(self) -> None:
        if self.frozen:
            gc.unfreeze()
            self.frozen = False
