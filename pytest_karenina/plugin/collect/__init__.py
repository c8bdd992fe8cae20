"""Checkpoint -> items (questions and scenarios), and which of them run (selection, shards,
changed since a revision)."""
