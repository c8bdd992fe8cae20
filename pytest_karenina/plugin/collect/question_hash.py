"""Stable hashes of question ids: for shards, and for telling benchmarks apart."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

_MASK = (1 << 64) - 1


def question_hash(question_id: str) -> int:
    """The first 64 bits of the id's SHA-256: the same on every machine and Python."""
    return int.from_bytes(hashlib.sha256(question_id.encode("utf-8")).digest()[:8], "big")


def questions_digest(ids: Iterable[str], start: int = 0) -> int:
    """``start`` plus :func:`question_hash` of each id, modulo 2**64: the same for the same
    questions in any order and over any split into files."""
    return (start + sum(question_hash(question_id) for question_id in ids)) & _MASK
