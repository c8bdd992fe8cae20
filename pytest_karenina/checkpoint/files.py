"""Load and save checkpoint files, and the in-memory equivalents."""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_karenina.checkpoint.decode import decode_document
from pytest_karenina.checkpoint.encode import encode_benchmark
from pytest_karenina.checkpoint.errors import CheckpointError
from pytest_karenina.checkpoint.gc_pause import collection_paused
from pytest_karenina.checkpoint.models import Benchmark
from pytest_karenina.results.text import encodable_tree, may_hold_surrogates

DEFAULT_SOURCE = "<checkpoint>"


def _parse_json(data: str | bytes, source: str) -> Any:
    if isinstance(data, bytes):
        try:
            # utf-8-sig: a leading byte-order mark is tolerated, anything else must be UTF-8.
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            bad = exc.object[exc.start : exc.start + 1].hex()
            raise CheckpointError(
                source, "", f"not UTF-8 text: {exc.reason} (byte 0x{bad} at offset {exc.start})"
            ) from None
    try:
        parsed = json.loads(data)
    except json.JSONDecodeError as exc:
        raise CheckpointError(
            source, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    # A lone surrogate escape decodes into text no writer can encode: replaced here, once.
    return encodable_tree(parsed) if may_hold_surrogates(data) else parsed


def parse_checkpoint(
    document: Mapping[str, Any] | str | bytes, *, source: str = DEFAULT_SOURCE
) -> Benchmark:
    """The Benchmark in ``document``: parsed JSON, or JSON text (``str``, or UTF-8 ``bytes``).

    ``source`` names the data in error messages. Raises ``CheckpointError``.
    """
    parsed = _parse_json(document, source) if isinstance(document, str | bytes) else document
    return decode_document(parsed, source)


def dump_checkpoint(benchmark: Benchmark) -> dict[str, Any]:
    """The checkpoint JSON document for ``benchmark`` (what ``save_checkpoint`` writes)."""
    return encode_benchmark(benchmark)


def load_checkpoint(path: str | os.PathLike[str]) -> Benchmark:
    """Read a Karenina checkpoint (JSON-LD) file.

    Questions keep their file order; templates are not compiled. Any problem (missing
    file, invalid UTF-8 or JSON, a missing key, a wrong type, an unknown trait type,
    duplicate question ids...) raises ``CheckpointError`` naming the file as given, the
    JSON path and what was expected.
    """
    source = os.fspath(path)
    try:
        # Read as text: holding the file's bytes beside its text and the parsed tree would
        # add the file's size to a large checkpoint's peak memory.
        with open(source, encoding="utf-8-sig", newline="") as handle:
            data: str | bytes = handle.read()
    except UnicodeDecodeError:
        data = _read_bytes(source)  # _parse_json names the bad byte and its offset
    except OSError as exc:
        raise _unreadable(source, exc) from None
    with collection_paused():
        parsed = _parse_json(data, source)
        del data
        # The parsed tree is ours alone: its questions go as they are decoded.
        return decode_document(parsed, source, consume=True)


def _read_bytes(source: str) -> bytes:
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise _unreadable(source, exc) from None


def _unreadable(source: str, exc: OSError) -> CheckpointError:
    reason = exc.strerror or str(exc)
    return CheckpointError(source, "", f"cannot read the checkpoint: {reason}")


def save_checkpoint(
    benchmark: Benchmark, path: str | os.PathLike[str], *, touch: bool = False
) -> Benchmark:
    """Write ``benchmark`` as a Karenina-loadable checkpoint; return what was written.

    The file is UTF-8 JSON (indent 2, non-ASCII kept), replaced atomically: a partly
    written file never takes the place of the old one. ``dateModified`` is kept as is
    unless ``touch`` is true, which stamps the local time as Karenina does on every save;
    the returned Benchmark then carries the new date. Raises ``CheckpointError`` when the
    file cannot be written.
    """
    if touch:
        benchmark = benchmark.model_copy(update={"date_modified": datetime.now().isoformat()})
    text = json.dumps(encode_benchmark(benchmark), indent=2, ensure_ascii=False)
    target = os.fspath(path)
    try:
        _write_atomically(Path(target), text.encode("utf-8"))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CheckpointError(target, "", f"cannot write the checkpoint: {reason}") from None
    return benchmark


def _write_atomically(target: Path, data: bytes) -> None:
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    # Mode 0o666 lets the umask decide, as for a plain open(); an existing file keeps its mode.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        except FileNotFoundError:
            pass
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
