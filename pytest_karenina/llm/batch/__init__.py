"""Provider batch APIs: calls of concurrent pipelines collected into one discounted batch.

:mod:`.protocol` is what a provider (OpenAI's Batch API, Anthropic's Message Batches) and an
adapter's codec implement; the collector groups waiting calls per provider, submits them,
waits, and hands each waiting thread its reply. Importing this package loads no SDK.
"""

from pytest_karenina.llm.batch.protocol import (
    BatchCallError,
    BatchCodec,
    BatchProvider,
    BatchReply,
    BatchRequest,
    BatchStatus,
)

__all__ = [
    "BatchCallError",
    "BatchCodec",
    "BatchProvider",
    "BatchReply",
    "BatchRequest",
    "BatchStatus",
]
