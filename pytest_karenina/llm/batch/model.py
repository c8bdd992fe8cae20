"""``BatchingModel``: a raw model whose calls go through a provider's batch API.

It stands where the live transport stood, under the replay layer: a recorded call is
answered by the store and never reaches a batch, and a batched reply is recorded under the
same key as a live one (the key is the request's ``custom_id``). Calls the codec cannot
encode run live through the transport (retries, limits) and are counted as unbatched.
"""

from __future__ import annotations

from typing import Any

from pytest_karenina.llm.batch.collector import BatchCollector
from pytest_karenina.llm.batch.protocol import (
    BatchCallError,
    BatchCodec,
    BatchProvider,
    BatchRequest,
)
from pytest_karenina.llm.errors import redact
from pytest_karenina.llm.ports import ModelReply, ModelRequest, RawModel
from pytest_karenina.llm.replay import replay_key


class BatchingModel:
    """Sends each call that ``codec`` encodes as one request of a batch of ``provider``
    (through ``collector``); the others through ``live``. Failed requests raise
    :class:`BatchCallError` with the provider's reason (not retried: the item errors)."""

    enforces_timeout = True  # the batch wait bounds a batched call, not the request timeout

    def __init__(
        self, live: RawModel, codec: BatchCodec, provider: BatchProvider,
        collector: BatchCollector, secrets: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.live, self.codec, self.provider, self.collector = live, codec, provider, collector
        self.secrets = secrets

    @property
    def replay_identity(self) -> dict[str, Any]:
        return self.live.replay_identity

    def invoke(self, request: ModelRequest) -> ModelReply:
        body = self.codec.encode(request)
        if body is None:
            self.collector.count_unbatched()
            return self.live.invoke(request)
        key = replay_key(self.replay_identity, request)
        reply = self.collector.call(self.provider, BatchRequest(key, body), request.call_kind)
        retry = getattr(self.codec, "retry", None)  # optional: a codec's second try, next wave
        again = retry(request, body, reply.error or "") if reply.body is None and retry else None
        if again is not None:
            reply = self.collector.call(self.provider, BatchRequest(key, again), request.call_kind)
        if reply.body is None:
            reason = redact(reply.error or "no result", self.secrets)
            raise BatchCallError(request.call_kind, reason)
        try:
            found = self.codec.decode(reply.body)
        except Exception as exc:
            reason = redact(f"{type(exc).__name__}: {exc}", self.secrets)
            raise BatchCallError(request.call_kind, reason) from None
        identity = self.replay_identity
        label = f"{identity.get('adapter')}:{identity.get('model')}"
        self.collector.count_tokens(label, found.usage.input_tokens, found.usage.output_tokens)
        return found
