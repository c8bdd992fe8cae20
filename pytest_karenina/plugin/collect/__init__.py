"""Checkpoint -> items, and which of them run (selection, shards, changed since a revision).

:class:`ScenariosNotRunWarning` is defined here so that its path, which warning filters
name (``-W ignore::pytest_karenina.plugin.collect.ScenariosNotRunWarning``), stays short and
stable.
"""


class ScenariosNotRunWarning(UserWarning):
    """A checkpoint holds multi-turn scenarios, which pytest-karenina does not run yet."""
