"""Karenina checkpoints (JSON-LD): read them into ``Benchmark`` models and write them back.

``load_checkpoint`` / ``save_checkpoint`` work on files; ``parse_checkpoint`` /
``dump_checkpoint`` do the same for in-memory JSON. See docs/checkpoints.md.
"""

from pytest_karenina.checkpoint.errors import CheckpointError
from pytest_karenina.checkpoint.files import (
    dump_checkpoint,
    load_checkpoint,
    parse_checkpoint,
    save_checkpoint,
)
from pytest_karenina.checkpoint.ids import generate_question_id
from pytest_karenina.checkpoint.models import Benchmark, JsonLdIds, Person, Question

__all__ = [
    "Benchmark",
    "CheckpointError",
    "JsonLdIds",
    "Person",
    "Question",
    "dump_checkpoint",
    "generate_question_id",
    "load_checkpoint",
    "parse_checkpoint",
    "save_checkpoint",
]
