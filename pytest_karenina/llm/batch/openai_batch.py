"""OpenAI's Batch API: the Files upload, ``/batches`` create, poll, cancel, and the output
and error files, over ``urllib3`` with the ``openai_endpoint`` adapter's wire code.

One batch is a JSONL file of ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}`` lines uploaded with purpose ``batch``; its output file holds ``{"custom_id",
"response": {"status_code", "body"}, "error"}`` lines for the requests that ran, its error
file those that failed (expired and cancelled requests too, with the provider's code).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from pytest_karenina.llm.adapters.openai_wire import (
    EndpointHTTPError,
    body_options,
    error_message,
    parse_reply,
)
from pytest_karenina.llm.batch.http import BatchHTTP
from pytest_karenina.llm.batch.protocol import BatchReply, BatchRequest, BatchStatus
from pytest_karenina.llm.ports import ModelReply, ModelRequest
from pytest_karenina.llm.strict_schema import ResponseFormats

CHAT_PATH = "/v1/chat/completions"
FINISHED = frozenset({"completed", "expired", "cancelled", "failed"})
"""Batch states after which nothing changes any more (results can be read)."""


class OpenAIBatchProvider:
    """OpenAI's Batch API at ``base_url`` (``.../v1``) with ``key`` (none: no header).

    Limits are OpenAI's: 50,000 requests and 200 MB per input file, a 24 h window.
    """

    name = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024
    completion_window_s = 24 * 3600.0

    def __init__(
        self, base_url: str, key: str | None, headers: Mapping[str, str] | None = None
    ) -> None:
        self._http = BatchHTTP(base_url, key, headers or {}, read_timeout=120.0)
        self._base = self._http.base
        self.lane = f"openai:{self._base}"
        if key:
            self._http.headers["Authorization"] = f"Bearer {key}"

    def _call(
        self, method: str, path: str, *, body: bytes | None = None,
        fields: dict[str, Any] | None = None, json_reply: bool = True,
    ) -> Any:  # fmt: skip
        url = f"{self._base}{path}"
        response = self._http.send(method, url, body=body, fields=fields)
        if response.status >= 300:
            message = self._http.redact(error_message(response.data))
            raise EndpointHTTPError(response.status, f"{method} {url}: {message}", response)
        return orjson.loads(response.data) if json_reply else response.data

    def submit(self, requests: Sequence[BatchRequest]) -> str:
        lines = b"".join(
            orjson.dumps({"custom_id": r.key, "method": "POST", "url": CHAT_PATH, "body": r.body})
            + b"\n"
            for r in requests
        )
        upload = self._call(
            "POST", "/files",
            fields={"purpose": "batch", "file": ("karenina.jsonl", lines, "application/jsonl")},
        )  # fmt: skip
        created = self._call(
            "POST", "/batches",
            body=orjson.dumps({
                "input_file_id": upload["id"], "endpoint": CHAT_PATH, "completion_window": "24h",
                "metadata": {"client": "pytest-karenina"},
            }),
        )  # fmt: skip
        return str(created["id"])

    def poll(self, batch_id: str) -> BatchStatus:
        batch = self._call("GET", f"/batches/{batch_id}")
        counts = batch.get("request_counts") or {}
        state = str(batch.get("status", "unknown"))
        return BatchStatus(
            batch_id, state, int(counts.get("completed") or 0), int(counts.get("failed") or 0),
            int(counts.get("total") or 0), state in FINISHED,
            _batch_errors(batch) if state == "failed" else None,
        )  # fmt: skip

    def results(self, batch_id: str) -> list[BatchReply]:
        batch = self._call("GET", f"/batches/{batch_id}")
        replies: list[BatchReply] = []
        for field in ("output_file_id", "error_file_id"):
            file_id = batch.get(field)
            if file_id:
                data = self._call("GET", f"/files/{file_id}/content", json_reply=False)
                replies.extend(_reply(line) for line in data.splitlines() if line.strip())
        return replies

    def cancel(self, batch_id: str) -> None:
        self._call("POST", f"/batches/{batch_id}/cancel", body=b"{}")


def _reply(line: bytes) -> BatchReply:
    entry = orjson.loads(line)
    key = str(entry.get("custom_id"))
    error = entry.get("error")
    response = entry.get("response") or {}
    body = response.get("body") if isinstance(response, dict) else None
    if error:
        code, message = (error.get("code"), error.get("message")) if isinstance(error, dict) else (
            None, error)  # fmt: skip
        return BatchReply(key, None, ": ".join(str(p) for p in (code, message) if p) or "error")
    status = response.get("status_code", 200) if isinstance(response, dict) else 200
    if not isinstance(body, dict) or status >= 400:
        found = body.get("error") if isinstance(body, dict) else None
        message = found.get("message") if isinstance(found, dict) else str(body)[:200]
        return BatchReply(key, None, f"HTTP {status}: {message}")
    return BatchReply(key, body, None)


def _batch_errors(batch: Mapping[str, Any]) -> str:
    errors = (batch.get("errors") or {}).get("data") or []
    found = [f"{e.get('code')}: {e.get('message')}" for e in errors if isinstance(e, dict)]
    return "; ".join(found) or str(batch.get("status"))


class ChatCompletionsCodec:
    """Chat-completions bodies for a model: ``model``, ``messages``, the model's fixed body
    fields (``temperature``, ``max_tokens``, ``extra_kwargs`` as the adapter reads them) and
    the ``response_format`` of a structured call; replies parsed as the live adapter does."""

    def __init__(self, model: str, options: Mapping[str, Any], fallback_model: str | None) -> None:
        self._model, self._options, self._fallback = model, dict(options), fallback_model
        self._formats = ResponseFormats()

    def encode(self, request: ModelRequest) -> dict[str, Any] | None:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            **self._options,
        }
        if request.json_schema is not None:
            name = request.schema_name or "Output"
            body["response_format"] = self._formats.get(name, request.json_schema)
        return body

    def decode(self, body: dict[str, Any]) -> ModelReply:
        return parse_reply(orjson.dumps(body), self._fallback)


def chat_codec(
    model_name: str | None, temperature: float | None, max_tokens: int | None,
    extra: Mapping[str, Any] | None,
) -> tuple[ChatCompletionsCodec, dict[str, str]]:  # fmt: skip
    """The codec of a model and the extra headers its ``extra_kwargs`` ask for."""
    options, headers = body_options(temperature, max_tokens, extra)
    return ChatCompletionsCodec(model_name or "", options, model_name), headers
