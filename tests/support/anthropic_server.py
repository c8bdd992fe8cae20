"""A scripted Anthropic-compatible Messages API server for tests (standard library only).

Real HTTP on ``127.0.0.1`` (a free port) from a daemon thread, beside
:mod:`tests.support.openai_server` and built on it (lifecycle, rules, latency, faults,
request log, ``reset()``), so code under test talks to it through the real ``anthropic``
SDK, or the Claude CLI through ``ANTHROPIC_BASE_URL``::

    with AnthropicServer() as server:           # or the ``anthropic_server`` pytest fixture
        server.add_rule("Paris", contains="capital of France")
        client = anthropic.Anthropic(base_url=server.url, api_key="fake-key")
        message = client.messages.create(model="claude-test", max_tokens=100, messages=[...])

Routes: ``POST /v1/messages`` (any query string, e.g. the CLI's ``?beta=true``), JSON or, with
``stream: true``, SSE events (``message_start``, ``ping``, per block ``content_block_start``,
two ``text_delta`` / ``input_json_delta`` deltas and ``content_block_stop``,
``message_delta`` with the stop reason and usage, ``message_stop``);
``POST /v1/messages/count_tokens``; ``GET /v1/models``; ``HEAD`` / ``GET /api/hello`` (200,
the CLI's probe). Anything else gets a 404 error in Anthropic's shape
(``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``).

Every ``/v1/messages`` request must carry ``x-api-key`` or ``Authorization: Bearer`` (401
``authentication_error`` otherwise) and ``anthropic-version`` (400); ``require_auth=False``
lifts both checks. ``api_key="..."`` makes any other key a 401 (the key is compared, never
logged: recorded headers are redacted). A body with a ``thread`` (the SDK's server-side
threads, which ``tool_runner`` uses by default) is refused with a 400 naming it: this
server keeps no conversation state.

Rules: ``add_rule(reply, **options)`` takes the options of the OpenAI server's rules
(``contains``, ``last_contains``, ``model``, ``role``, ``structured``, ``when``, ``times``,
``latency``, ``usage``, ``tool``, ``faults``, ``fault_rate``, ``name``) plus ``stop_reason``;
``contains`` searches the system prompt and every message's text, tool_use input and
tool_result content; ``role="tool"`` matches a last user turn of tool results;
``structured`` means the request gives tools or ``output_config.format``. ``usage``
overrides ``input_tokens`` / ``output_tokens`` (one token per word by default).

Replies: a ``str`` is a text block. A pydantic model or JSON value is a ``tool_use`` block
(to the tool ``tool_choice`` forces, else the rule's ``tool``, else the first tool) when the
request offers tools, else JSON text (what ``output_config.format`` asks for). A ``str``
reply to a forced tool is parsed as its JSON input. :class:`ToolUse` ``(name, input)`` calls
a tool; :class:`Turn` ``(*parts)`` answers several blocks (text and tool calls). The stop
reason is ``tool_use`` when a tool is called, else ``end_turn``. A callable reply gets the
parsed body and returns any of these.

Faults (:class:`AnthropicFault`): ``rate_limit(retry_after=1.0)`` (429),
``overloaded(retry_after=1.0)`` (529 ``overloaded_error``), ``server_error(status)``,
``http_error(status, message, retry_after=None)``, ``timeout(seconds)``,
``connection_reset()``, ``malformed_body()``, ``malformed_content(text)`` (a text block instead
of the forced tool call), ``empty_answer()`` (no blocks), ``stream_cut(after_events, reset=False)``
(the first events of a stream, then the connection closes: a FIN, or an RST with ``reset``;
half a JSON body for a non-streaming call), ``stream_error(after_events, error_type)`` (events,
then an SSE ``error`` event; a 529/500 for a non-streaming call).

Message Batches: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
``GET .../results`` and ``POST .../cancel``, each request answered by the rules when its
batch ends; ``batches`` (a :class:`~.anthropic_batch_book.BatchBook`) holds them and their
settings: polls before the end, a hold, expiry, errors; see that module.

Inspection: ``requests`` (every request, as :class:`AnthropicRequest`: ``.text``,
``.messages``, ``.model``, ``.structured``, ``.stream``, ``.tools``, ``.tool_results``, lower-cased
``.headers`` with credentials redacted), ``messages_requests`` (the ``/v1/messages`` calls),
``unused_rules()``, ``errors`` (the fixture fails the test when not empty).

Fixture (tests/support/anthropic_fixtures.py, registered in tests/conftest.py):
``anthropic_server``, a fresh server per test.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Sequence
from typing import Any

from .anthropic_batch_book import BatchBook
from .anthropic_http import AnthropicHandler, AnthropicHTTPServer
from .anthropic_rules import AnthropicFault, AnthropicRequest, AnthropicRule, ToolUse, Turn
from .openai_http import NO_MATCH, Handler
from .openai_rules import Fault, Reply, Rule, redact_header
from .openai_server import OpenAIServer

__all__ = [
    "AnthropicFault",
    "AnthropicHandler",
    "AnthropicRequest",
    "AnthropicRule",
    "AnthropicServer",
    "ToolUse",
    "Turn",
]


class AnthropicServer(OpenAIServer):
    """The scripted Messages API server; see the module docstring for the API."""

    def __init__(
        self,
        *,
        default: Reply | None = None,
        latency: float = 0.0,
        seed: int = 0,
        models: Sequence[str] = ("claude-test",),
        keep_alive: bool = False,
        require_auth: bool = True,
        api_key: str | None = None,
    ) -> None:
        super().__init__(
            default=default, latency=latency, seed=seed, models=models, keep_alive=keep_alive
        )
        self.require_auth = require_auth
        self.api_key = api_key
        self.batches = BatchBook(self)
        self._batch_seq = 100_000  # message ids of batch results, apart from the log's

    def reset(self) -> None:
        super().reset()
        self.batches = BatchBook(self)

    def choose(self, body: dict[str, Any]) -> tuple[int, Rule | None, Any]:
        """The rule and reply ``POST /v1/messages`` would give ``body`` (a batch request's
        params), with a sequence number, and no entry in the request log."""
        with self._lock:
            self._batch_seq += 1
            rule = None
            reply: Any = NO_MATCH if self._default is None else self._default
            try:
                rule = next((r for r in self._rules if not r.exhausted and r.matches(body)), None)
            except Exception:
                self.errors.append(traceback.format_exc())
                reply = Fault.http_error(500, "a rule's `when` predicate raised")
            if rule is not None:
                rule.uses += 1
                reply = rule.reply
                if rule.faults and self._rng.random() < rule.fault_rate:
                    reply = self._rng.choice(list(rule.faults))
            return self._batch_seq, rule, reply

    def start(self) -> AnthropicServer:
        if self._httpd is not None or self._stopping.is_set():
            raise RuntimeError("an AnthropicServer can be started once")
        self._httpd = AnthropicHTTPServer(self)
        self._port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __enter__(self) -> AnthropicServer:
        return self.start()

    @property
    def base_url(self) -> str:
        """What ``anthropic.Anthropic(base_url=...)`` and ``ANTHROPIC_BASE_URL`` take."""
        return self.url

    def add_rule(self, reply: Reply, **options: Any) -> Rule:
        rule = AnthropicRule(reply, **options)
        with self._lock:
            self._rules.append(rule)
        return rule

    @property
    def requests(self) -> list[AnthropicRequest]:  # type: ignore[override]
        with self._lock:
            return [r for r in self._log if isinstance(r, AnthropicRequest)]

    @property
    def messages_requests(self) -> list[AnthropicRequest]:
        return [
            r
            for r in self.requests
            if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"
        ]

    def _record(
        self, handler: Handler, body: Any, rule: Rule | None = None, fault: str | None = None
    ) -> int:
        headers = {name.lower(): redact_header(name, v) for name, v in handler.headers.items()}
        with self._lock:
            seq = len(self._log)
            label = rule.label if rule is not None else None
            self._log.append(
                AnthropicRequest(seq, handler.command, handler.path, headers, body, label, fault)
            )
        return seq
