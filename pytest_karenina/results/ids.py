"""Result identifiers and timestamps (spec 5.8).

``result_id`` is a deterministic hash of who answered, who judged, which question, which
replicate and when: the same inputs always give the same id, so ids can deduplicate results
across files.
"""

from __future__ import annotations

import hashlib
import json
import time

from pytest_karenina.results.identity import ModelIdentity

PIPELINE_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
EXPORT_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


def compute_result_id(
    answering: ModelIdentity,
    parsing: ModelIdentity,
    question_id: str,
    replicate: int | None,
    timestamp: str,
    scenario_id: str | None = None,
    scenario_node: str | None = None,
    scenario_turn: int | None = None,
    *,
    judge_replicate: int | None = None,
) -> str:
    """The 16-hex-character ``metadata.result_id`` Karenina computes for these inputs.

    It is the start of the SHA-256 of the JSON object of the two identities' canonical keys,
    the question id, replicate, scenario id/node/turn and timestamp, serialised with sorted keys,
    ASCII escapes and the default separators. ``judge_replicate`` (ours: Karenina has no
    judge replicates) joins the object only when given, so the results of one answer's judge
    replicates have ids of their own and every other id stays Karenina's.
    """
    payload = {
        "answering": answering.canonical_key,
        "parsing": parsing.canonical_key,
        "question_id": question_id,
        "replicate": replicate,
        "scenario_id": scenario_id,
        "scenario_node": scenario_node,
        "scenario_turn": scenario_turn,
        "timestamp": timestamp,
    }
    if judge_replicate is not None:
        payload["judge_replicate"] = judge_replicate
    text = json.dumps(payload, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pipeline_timestamp(when: float | None = None) -> str:
    """``metadata.timestamp``: local wall-clock time ``YYYY-MM-DD HH:MM:SS``, no zone.

    ``when`` is an epoch time (default: now).
    """
    return time.strftime(PIPELINE_TIMESTAMP_FORMAT, time.localtime(when))


def export_timestamp(when: float | None = None) -> str:
    """``metadata.export_timestamp`` of an export file: UTC ``YYYY-MM-DD HH:MM:SS UTC``."""
    return time.strftime(EXPORT_TIMESTAMP_FORMAT, time.gmtime(when))
