"""Record/replay store for LLM calls: deterministic, offline re-runs.

Modes: ``off`` (store unused), ``record`` (always call, store the reply),
``replay`` (stored reply on a hit; on a miss call and store), ``strict`` (stored
reply or :class:`ReplayMiss`; never calls the model, never writes).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

if sys.platform != "win32":
    import fcntl

from pytest_karenina.config.choices import ReplayMode
from pytest_karenina.config.secrets import is_secret_name
from pytest_karenina.llm.errors import env_secrets, redact
from pytest_karenina.llm.ports import LLMCallError, ModelReply, ModelRequest, RawModel, Usage

logger = logging.getLogger(__name__)
REPLAY_MODES: tuple[ReplayMode, ...] = get_args(ReplayMode)


def sanitize_identity(identity: Mapping[str, Any]) -> dict[str, Any]:
    """``identity`` without secret-named fields (any depth) or ``None`` values, with
    credential-looking spans in strings replaced by ``***`` and integral floats as ints."""

    def clean(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                str(k): clean(v)
                for k, v in value.items()
                if v is not None and not is_secret_name(str(k))
            }
        if isinstance(value, list | tuple):
            return [clean(item) for item in value]
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    cleaned: dict[str, Any] = clean(identity)
    return cleaned


def keyed_replicate(replicate: int | None) -> int | None:
    """The replicate as the replay key holds it: None for replicate 1 and for runs without
    replicates (so they share a key, the one every store recorded before replicates were
    keyed has), the number from 2 on."""
    return replicate if replicate is not None and replicate > 1 else None


def replay_key(identity: Mapping[str, Any], request: ModelRequest) -> str:
    """SHA-256 hex of the canonical JSON of identity, messages, schema, call kind and, from
    replicate 2 on, the replicate (:func:`keyed_replicate`); a judge call's judge replicate
    the same way, from 2 on (judge replicate 1 keeps the key of a run without them).

    The identity is sanitized first (:func:`sanitize_identity`), so a rotated API
    key keeps every key valid; ``request.question_id`` is not part of the key.
    Raises ``TypeError`` for values that are not JSON-native.
    """
    payload: dict[str, Any] = {
        "identity": sanitize_identity(identity),
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "json_schema": request.json_schema,
        "schema_name": request.schema_name,
        "call_kind": request.call_kind,
    }
    replicate = keyed_replicate(request.replicate)
    if replicate is not None:
        payload["replicate"] = replicate
    judge_replicate = keyed_replicate(request.judge_replicate)
    if judge_replicate is not None:
        payload["judge_replicate"] = judge_replicate
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplayMiss(LLMCallError):
    """Strict replay found no recorded reply; names the question, the replicate (when the
    run has replicates), the judge replicate (a judge call of a run with judge replicates),
    the call kind and the key."""

    def __init__(
        self, call_kind: str, question_id: str | None, key: str, path: Path,
        replicate: int | None = None, judge_replicate: int | None = None,
    ) -> None:  # fmt: skip
        self.question_id = question_id
        self.replicate = replicate
        self.judge_replicate = judge_replicate
        self.key = key
        question = repr(question_id) if question_id is not None else "<unknown>"
        if replicate is not None:
            question += f", replicate {replicate}"
        if judge_replicate is not None:
            question += f", judge replicate {judge_replicate}"
        super().__init__(
            call_kind,
            f"strict replay: no recorded reply for question {question}, call kind "
            f"{call_kind!r}, key {key} in {path} (record it with replay mode 'replay' or 'record')",
        )


def _dump(entry: Mapping[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False)


def _scrub(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` with every secret in any string replaced by ``***``."""
    if isinstance(value, str):
        for secret in sorted(set(secrets), key=len, reverse=True):
            value = value.replace(secret, "***")
        return value
    if isinstance(value, Mapping):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(item, secrets) for item in value]
    return value


def _entry(
    key: str, identity: Mapping[str, Any], request: ModelRequest, reply: ModelReply,
    secrets: tuple[str, ...],
) -> dict[str, Any]:  # fmt: skip
    """The stored form of one call: sanitized identity, redacted messages, the reply, and
    the replicate and judge replicate that recorded it (informational: the key decides what
    an entry answers)."""
    messages = [{"role": m.role, "content": redact(m.content, secrets)} for m in request.messages]
    usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens}
    entry: dict[str, Any] = {
        "key": key,
        "call_kind": request.call_kind,
        "identity": sanitize_identity(identity),
        "request": {
            "messages": messages,
            "json_schema": request.json_schema,
            "schema_name": request.schema_name,
        },
        "reply": {"text": reply.text, "usage": usage, "model": reply.model},
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if request.replicate is not None:
        entry["replicate"] = request.replicate
    if request.judge_replicate is not None:
        entry["judge_replicate"] = request.judge_replicate
    return entry


def _parse(text: str, path: Path) -> dict[str, dict[str, Any]]:
    """Entries by key, last line wins. A line that is not an entry (a write cut short by a
    full disk or a kill, a merge conflict marker) is skipped with a logged warning naming
    it: the keys it held are then misses, and every other recording still answers."""
    entries: dict[str, dict[str, Any]] = {}
    lines = text.split("\n")  # not splitlines(): U+2028 and friends are valid inside JSON
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if not isinstance(entry["key"], str) or not isinstance(entry["reply"]["text"], str):
                raise TypeError("key and reply.text must be strings")
        except (ValueError, TypeError, KeyError) as exc:
            logger.warning("%s:%d: skipped, not a replay entry (%s)", path, number, exc)
            continue
        entries[entry["key"]] = entry
    return entries


def _ends_torn(path: Path) -> bool:
    """Whether the file's last line has no newline (an append cut short)."""
    try:
        with open(path, "rb") as file:
            file.seek(-1, os.SEEK_END)
            return file.read(1) != b"\n"
    except OSError:  # missing or empty
        return False


class ReplayStore:
    """A JSONL file of recorded replies, loaded lazily (a missing file is an empty store).

    One entry per line: ``key``, ``call_kind``, sanitized ``identity``, ``request``
    (messages, json_schema, schema_name), ``reply`` (text, usage, model),
    ``recorded_at`` and, when the run had replicates, ``replicate`` (and ``judge_replicate``
    for a judge call of a run with judge replicates), keys sorted.
    :meth:`record` appends under an exclusive ``flock`` on the sidecar
    ``<store>.lock`` (ignore it in git), so threads and processes may record at
    once; :meth:`compact` (alias :meth:`save`) rewrites
    the file sorted by key, de-duplicated (last write wins) and atomically, and
    is a no-op in ``off`` and ``strict`` modes. ``secrets`` are extra values never
    to be written (secret-looking environment values are always added).
    """

    def __init__(
        self, path: str | Path, mode: ReplayMode = "replay", *, secrets: Iterable[str] = ()
    ) -> None:
        if mode not in REPLAY_MODES:
            raise ValueError(f"replay mode must be one of {REPLAY_MODES}, not {mode!r}")
        self.path = Path(path)
        self.mode: ReplayMode = mode
        self._secrets = tuple(s for s in secrets if s)
        self._lock = threading.RLock()
        self._entries: dict[str, dict[str, Any]] | None = None
        self._hits = self._misses = self._added = 0
        self._used: set[str] = set()

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Also keep these values (e.g. a model's API key) out of everything written."""
        with self._lock:
            self._secrets = (*self._secrets, *(s for s in secrets if s))

    def _load(self) -> dict[str, dict[str, Any]]:
        with self._lock:  # read once, on first use
            if self._entries is None:
                text = self.path.read_text("utf-8") if self.path.exists() else ""
                self._entries = _parse(text, self.path)
            return self._entries

    def __len__(self) -> int:
        return len(self._load())

    def lookup(self, key: str) -> ModelReply | None:
        """The stored reply for ``key`` (counted as a hit), or ``None`` (a miss)."""
        entry = self._load().get(key)
        with self._lock:
            if entry is None:
                self._misses += 1
                return None
            self._hits += 1
            self._used.add(key)
        reply, usage = entry["reply"], entry["reply"].get("usage") or {}
        tokens = Usage(usage.get("input_tokens"), usage.get("output_tokens"))
        return ModelReply(reply["text"], tokens, reply.get("model"))

    def record(
        self, key: str, identity: Mapping[str, Any], request: ModelRequest, reply: ModelReply
    ) -> None:
        """Append an entry for a successful call (ValueError in ``off``/``strict`` mode)."""
        if self.mode in ("off", "strict"):
            raise ValueError(f"a replay store in {self.mode!r} mode is read-only")
        secrets = (*self._secrets, *env_secrets())
        entry = _scrub(_entry(key, identity, request, reply, secrets), secrets)
        line = _dump(entry) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._file_lock():
                # A torn last line would fuse with this entry: end it first.
                lead = "\n" if _ends_torn(self.path) else ""
                with open(self.path, "a", encoding="utf-8", newline="\n") as f:
                    f.write(lead + line)
            self._load()[key] = entry
            self._added += 1
            self._used.add(key)

    def compact(self) -> bool:
        """Rewrite the file sorted by key and de-duplicated, atomically; True if it changed.

        Reads the file afresh under the lock, so other processes' appends are kept.
        """
        if self.mode in ("off", "strict"):
            return False
        with self._lock, self._file_lock():
            current = self.path.read_text("utf-8") if self.path.exists() else None
            entries = _parse(current or "", self.path)
            text = "".join(_dump(entries[key]) + "\n" for key in sorted(entries))
            changed = current is not None and text != current
            if changed:
                self._write(entries)
            self._entries = {**self._load(), **entries}
        return changed

    save = compact

    def used_keys(self) -> set[str]:
        """Keys this store answered from or recorded since it was created."""
        with self._lock:
            return set(self._used)

    def stored_keys(self) -> set[str]:
        """Keys in the file now (read afresh: other processes may have appended). No file
        lock: appends and compaction's atomic replace never show a reader a broken file but
        for a torn last line, which reading skips; and a read-only run leaves no lock file."""
        text = self.path.read_text("utf-8") if self.path.exists() else ""
        return set(_parse(text, self.path))

    def prune(self, keep: Iterable[str]) -> int:
        """Rewrite the file with only the entries in ``keep`` (sorted, atomically); returns
        how many entries were removed. Allowed in every mode but ``off``: it is an explicit
        request to drop stale recordings."""
        if self.mode == "off":
            raise ValueError("a replay store in 'off' mode is not used, so it is not pruned")
        wanted = set(keep)
        with self._lock, self._file_lock():
            if not self.path.exists():
                return 0
            entries = _parse(self.path.read_text("utf-8"), self.path)
            kept = {key: entry for key, entry in entries.items() if key in wanted}
            self._write(kept)
            self._entries = kept
            return len(entries) - len(kept)

    def _write(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the file with ``entries`` sorted by key (caller holds the file lock)."""
        text = "".join(_dump(entries[key]) + "\n" for key in sorted(entries))
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(temp, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self.path)
        finally:
            temp.unlink(missing_ok=True)

    def stats(self) -> dict[str, int]:
        """``{"hits", "misses", "added"}`` counts since this store was created (JSON-native)."""
        with self._lock:
            return {"hits": self._hits, "misses": self._misses, "added": self._added}

    @property
    def lock_path(self) -> Path:
        """``<store>.lock``, the file :meth:`record` and :meth:`compact` lock."""
        return self.path.with_name(self.path.name + ".lock")

    def remove_lock_file(self) -> None:
        """Delete ``<store>.lock``. Only when no other process of the run uses the store any
        more (the end of the session), or two writers could lock different files."""
        self.lock_path.unlink(missing_ok=True)

    @contextmanager
    def _file_lock(self) -> Iterator[None]:
        """Exclusive lock on ``<store>.lock`` (not the store: compaction replaces it)."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if sys.platform != "win32":  # no flock there: only this process's threads serialize
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock


class ReplayingModel:
    """A :class:`~.ports.RawModel` that answers from a :class:`ReplayStore` per its mode.

    ``inner`` may be ``None`` only in ``strict`` mode, where ``identity`` (else the
    inner model's ``replay_identity``) supplies the identity part of the key.
    Failures of ``inner`` propagate and are never stored.
    """

    def __init__(
        self,
        inner: RawModel | None,
        store: ReplayStore,
        *,
        identity: Mapping[str, Any] | None = None,
    ) -> None:
        if inner is None and (store.mode != "strict" or identity is None):
            raise ValueError("an inner model is required unless strict mode with an identity")
        self.inner = inner
        self.store = store
        self._identity = dict(identity) if identity is not None else None

    @property
    def replay_identity(self) -> dict[str, Any]:
        """The given ``identity``, else the inner model's (replay does not change it)."""
        if self._identity is not None:
            return dict(self._identity)
        assert self.inner is not None
        return self.inner.replay_identity

    def invoke(self, request: ModelRequest) -> ModelReply:
        """Answer ``request`` from the store or the inner model, as the mode says."""
        mode = self.store.mode
        if mode == "off" and self.inner is not None:  # inner is None only in strict mode
            return self.inner.invoke(request)
        identity = self.replay_identity
        key = replay_key(identity, request)
        if mode != "record":
            found = self.store.lookup(key)
            if found is not None:
                return found
            if mode == "strict" or self.inner is None:
                raise ReplayMiss(
                    request.call_kind, request.question_id, key, self.store.path,
                    request.replicate, request.judge_replicate,
                )  # fmt: skip
        assert self.inner is not None
        reply = self.inner.invoke(request)
        self.store.record(key, identity, request, reply)
        return reply
