"""The batch state file: which batches a run submitted and which request keys each holds.

Written before the run starts waiting on a batch, so a run killed while it waits (Ctrl-C,
SIGTERM, a CI timeout) leaves what the next run needs to re-attach instead of paying again.
It holds batch ids, provider lanes (provider and base URL, never a credential), waves and
request keys (replay keys: SHA-256 hashes), plus the benchmark and a fingerprint of the
settings that made them; a file from another benchmark or other settings is refused by name.
Workers of one run (``-n``) share it: every write re-reads and merges under a file lock.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if sys.platform != "win32":
    import fcntl

STATE_FORMAT = 1
STATE_SUFFIX = ".batches.json"
"""Appended to the replay store's path: the state file lives beside the store."""


class BatchStateMismatch(ValueError):
    """The state file was written by another benchmark or under other settings."""


@dataclass(frozen=True)
class StoredBatch:
    """A batch a run submitted: where (``lane``), which ``keys``, for which ``wave``."""

    batch_id: str
    provider: str
    lane: str
    wave: str
    keys: tuple[str, ...]
    submitted_at: str


def state_path(store: Path) -> Path:
    """The state file beside replay store ``store``."""
    return store.with_name(store.name + STATE_SUFFIX)


class BatchState:
    """The state file at ``path`` for ``benchmark`` under settings ``fingerprint``.

    :meth:`load` refuses a file of another benchmark or fingerprint
    (:class:`BatchStateMismatch`); :meth:`add` records a batch (durably: written and synced
    before it returns); :meth:`forget` drops collected batches, deleting the file when none
    is left.
    """

    def __init__(self, path: Path, benchmark: str, fingerprint: str, described: str) -> None:
        self.path, self.benchmark, self.fingerprint = path, benchmark, fingerprint
        self.described = described
        self._lock = threading.Lock()

    def load(self) -> list[StoredBatch]:
        """The batches recorded by earlier runs with the same benchmark and settings."""
        data = self._read()
        if data is None:
            return []
        if data.get("benchmark") != self.benchmark:
            raise BatchStateMismatch(
                f"batch state file {self.path} belongs to benchmark {data.get('benchmark')!r}, "
                f"not {self.benchmark!r}: its batches are not reused (delete the file, or run "
                "that benchmark to collect them)"
            )
        if data.get("settings") != self.fingerprint:
            raise BatchStateMismatch(
                f"batch state file {self.path} was written under other settings "
                f"({data.get('described', '?')}; this run: {self.described}): its batches are "
                "not reused (delete the file, or run again with those settings to collect them)"
            )
        return [_stored(batch_id, entry) for batch_id, entry in data["batches"].items()]

    def add(self, batch: StoredBatch) -> None:
        entry = {
            "provider": batch.provider, "lane": batch.lane, "wave": batch.wave,
            "keys": list(batch.keys), "submitted_at": batch.submitted_at,
        }  # fmt: skip
        with self._locked() as data:
            data["batches"][batch.batch_id] = entry

    def forget(self, batch_ids: set[str]) -> None:
        if not batch_ids or not self.path.exists():
            return
        with self._locked() as data:
            for batch_id in batch_ids:
                data["batches"].pop(batch_id, None)

    def _read(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            data = json.loads(text) if text.strip() else None
            if data is not None and not isinstance(data.get("batches"), dict):
                raise ValueError("no 'batches' object")
        except (ValueError, AttributeError) as exc:
            raise BatchStateMismatch(
                f"batch state file {self.path} is not readable: {exc}"
            ) from None
        return data

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """The file's data, locked for this process and the others; written back after."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            if sys.platform != "win32":
                fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read() or {}
            data.update(
                format=STATE_FORMAT, benchmark=self.benchmark, settings=self.fingerprint,
                described=self.described,
            )  # fmt: skip
            data.setdefault("batches", {})
            yield data
            if not data["batches"]:
                self.path.unlink(missing_ok=True)
                return
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            with open(temporary, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=1, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)


def _stored(batch_id: str, entry: dict[str, Any]) -> StoredBatch:
    return StoredBatch(
        batch_id, str(entry["provider"]), str(entry["lane"]), str(entry.get("wave", "")),
        tuple(entry["keys"]), str(entry.get("submitted_at", "")),
    )  # fmt: skip


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
