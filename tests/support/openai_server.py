"""A scripted OpenAI-compatible chat-completions server for tests (standard library only).

Real HTTP on ``127.0.0.1`` (a free port) from a daemon thread, so code under test talks to it
through the real ``openai``/``langchain-openai`` client stack::

    with OpenAIServer() as server:              # or the ``openai_server`` pytest fixture
        server.add_rule("Paris", contains="capital of France")
        llm = ChatOpenAI(base_url=server.base_url, api_key="k", model="test-model")
        assert llm.invoke("What is the capital of France?").content == "Paris"
        assert len(server.requests) == 1

Endpoints: ``POST /v1/chat/completions`` (``stream: true`` answers with SSE chunks: one delta,
a finish chunk, a usage chunk when ``stream_options.include_usage``, then ``[DONE]``) and
``GET /v1/models``. By default every response carries ``Connection: close`` so client pools
never hold sockets across tests; ``keep_alive=True`` keeps connections open between requests
the way hosted APIs do (the benchmarks use it). Anything else gets a 404 error JSON.

Rules (``add_rule(reply, **options)`` returns the :class:`Rule`; first match in order wins):

* ``contains`` / ``last_contains``: substring(s), case-insensitive, that must all occur in the
  newline-joined text of all messages / of the last message.
* ``model``: exact request model; ``role``: role of the last message.
* ``structured``: True matches calls that ask for JSON (``response_format`` of type
  ``json_schema``/``json_object``, or any ``tools``), False only plain calls.
* ``when``: any callable on the parsed request body returning a truth value.
* ``times``: the rule is used up after N matches (``rule.uses`` counts them); later requests
  fall through to the next rule. ``script(*replies, **options)`` adds one ``times=1`` rule per
  reply, so ``script(Fault.server_error(), "ok")`` answers a 500 first, then ``"ok"``.
* ``latency``: seconds to wait before answering (overrides the server-wide ``latency``).
* ``usage``: override of ``prompt_tokens``/``completion_tokens``/``total_tokens``. By default
  one token per whitespace-separated word: prompt = all message texts, completion = the answer.
* ``finish_reason`` (default ``"stop"``, ``"tool_calls"`` for non-forced tool calls), ``tool``
  (function name to call when the request offers several), ``name`` (label in the log).
* ``faults`` + ``fault_rate``: answer with a fault drawn from ``faults`` with that probability
  (seeded RNG, see ``seed``), else the reply.

Replies: a ``str`` is the message content; a pydantic model instance or any JSON value is sent
as a JSON string. When the request has ``tools`` (and ``tool_choice`` is not ``"none"``), a
non-``str`` reply -- or any reply when ``tool_choice`` forces a function or is ``"required"``,
or the rule sets ``tool`` -- becomes a tool call whose ``arguments`` are that JSON, to the
forced function (else the rule's ``tool``, else the first tool). So one JSON reply answers both
``with_structured_output`` methods. A callable reply gets the parsed body and returns any of
these (it may block, e.g. on a barrier; it runs outside the server lock).

Faults (a :class:`Fault` as the reply; what langchain-openai 1.x raises in brackets):

* ``Fault.rate_limit(retry_after=1.0)``: 429 + ``Retry-After`` [``openai.RateLimitError``].
* ``Fault.server_error(status=500)``: 5xx error JSON [``openai.InternalServerError``];
  ``Fault.http_error(status, message, retry_after=None)`` for any other status.
* ``Fault.timeout(seconds=30)``: no answer for ``seconds`` (cut short by ``stop()``), then an RST
  [``openai.APITimeoutError`` once the client's ``timeout`` passes].
* ``Fault.connection_reset()``: RST, no response [``openai.APIConnectionError``].
* ``Fault.malformed_body()``: 200 with truncated JSON [``json.JSONDecodeError``, not wrapped].
* ``Fault.malformed_content(text)``: valid completion whose content (json_schema) or forced tool
  arguments (function_calling) is ``text`` [json_schema: ``pydantic.ValidationError``;
  function_calling: result ``None``, the call lands in ``invalid_tool_calls``].
* ``Fault.missing_field(path="choices", text="")``: valid completion for ``text`` minus the dotted
  ``path`` [``choices``: ``TypeError``; ``choices.0.message``: ``AttributeError``; ``usage``: fine].
* ``Fault.empty_answer()``: ``content: ""``, no tool call [plain: ``""``; function_calling:
  ``None``; json_schema: ``ValueError``].

The langchain-openai exceptions are its subclasses of the openai ones (``OpenAIRateLimitError``
is an ``openai.RateLimitError`` and a ``langchain_core`` ``ModelRateLimitError``).

Unmatched requests get the default reply: ``set_default(reply)``, or by default an HTTP 400
``no_rule_matched`` error (``openai.BadRequestError``) naming the request, so tests fail loudly.

Server-wide: ``OpenAIServer(default=..., latency=0.0, seed=0, models=("test-model",),
keep_alive=False)``, ``set_latency(s)``, ``set_faults(rate, *faults, seed=None)`` (checked
before any rule; a request answered by a global fault consumes no rule). ``requests`` /
``chat_requests`` give a snapshot of :class:`RecordedRequest` (method, path, lower-cased
headers, credentials redacted, parsed JSON body, rule label, fault kind; ``.text``,
``.messages``, ``.model``, ``.structured``). ``unused_rules()`` lists rules with ``times``
left. ``reset()`` drops rules, log, faults and default. ``connections`` counts accepted TCP
connections. ``errors`` holds unexpected handler exceptions (e.g. a reply callable that
raised); the fixtures fail the test when it is not empty. All methods are thread-safe.

Fixtures (tests/support/openai_fixtures.py, registered in tests/conftest.py): ``openai_server``
(fresh per test) and ``openai_server_session`` (one per session; ``reset()`` it first).
Layout: this module holds the state, :mod:`.openai_rules` what to answer (rules, faults,
bodies), :mod:`.openai_http` the HTTP handler.
"""

from __future__ import annotations

import random
import threading
import time
import traceback
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from .openai_http import NO_MATCH, Decision, Handler, ScriptedHTTPServer
from .openai_rules import Body, Fault, RecordedRequest, Reply, Rule, redact_header

__all__ = ["Fault", "OpenAIServer", "RecordedRequest", "Rule"]


class OpenAIServer:
    """The scripted server; see the module docstring for the API."""

    def __init__(
        self,
        *,
        default: Reply | None = None,
        latency: float = 0.0,
        seed: int = 0,
        models: Sequence[str] = ("test-model",),
        keep_alive: bool = False,
    ) -> None:
        self.models = list(models)
        self.keep_alive = keep_alive
        self.errors: list[str] = []
        self._lock = threading.RLock()  # re-entrant: `when` predicates may inspect the server
        self._stopping = threading.Event()
        self._initial = (default, latency, seed)
        self._rules: list[Rule] = []
        self._log: list[RecordedRequest] = []
        self._httpd: ScriptedHTTPServer | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._configure(default, latency, seed)

    def _configure(self, default: Reply | None, latency: float, seed: int) -> None:
        self._default = default
        self._latency = latency
        self._rng = random.Random(seed)
        self._fault_rate = 0.0
        self._faults: tuple[Fault, ...] = ()

    # lifecycle -------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        if self._httpd is not None or self._stopping.is_set():
            raise RuntimeError("an OpenAIServer can be started once")
        self._httpd = ScriptedHTTPServer(self)
        self._port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any held (latency/timeout) handler, and join all threads."""
        httpd, thread = self._httpd, self._thread
        self._stopping.set()
        if httpd is None or thread is None:
            return
        httpd.shutdown()
        httpd.drop_connections()
        httpd.server_close()  # also joins the handler threads
        thread.join()
        self._httpd = self._thread = None

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (one per request unless ``keep_alive``)."""
        httpd = self._httpd
        return httpd.accepted if httpd is not None else 0

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (still readable after stop, to test a server that went away)."""
        if self._port is None:
            raise RuntimeError("server was never started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # scripting -------------------------------------------------------------------------
    def add_rule(self, reply: Reply, **options: Any) -> Rule:
        rule = Rule(reply, **options)
        with self._lock:
            self._rules.append(rule)
        return rule

    def script(self, *replies: Reply, **options: Any) -> list[Rule]:
        return [self.add_rule(reply, times=1, **options) for reply in replies]

    def set_default(self, reply: Reply | None) -> None:
        with self._lock:
            self._default = reply

    def set_latency(self, seconds: float) -> None:
        with self._lock:
            self._latency = seconds

    def set_faults(self, rate: float, *faults: Fault, seed: int | None = None) -> None:
        if (rate > 0 and not faults) or not 0 <= rate <= 1:
            raise ValueError("set_faults needs a rate in [0, 1] and at least one fault")
        with self._lock:
            self._fault_rate, self._faults = rate, faults
            if seed is not None:
                self._rng.seed(seed)

    def reset(self) -> None:
        """Forget rules, requests, errors, faults, latency and default (back to __init__)."""
        with self._lock:
            self._rules.clear()
            self._log.clear()
            self.errors.clear()
            self._configure(*self._initial)

    # inspection ------------------------------------------------------------------------
    @property
    def rules(self) -> list[Rule]:
        with self._lock:
            return list(self._rules)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def unused_rules(self) -> list[Rule]:
        """Rules with a ``times`` budget that was not used up."""
        return [r for r in self.rules if r.times is not None and not r.exhausted]

    # request handling (called from handler threads) ------------------------------------
    def _hold(self, seconds: float) -> bool:
        """Wait at least ``seconds`` unless the server stops first; True when it stopped."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.wait(left):
                return True
        return self._stopping.is_set()

    def _record(
        self, handler: Handler, body: Any, rule: Rule | None = None, fault: str | None = None
    ) -> int:
        headers = {name.lower(): redact_header(name, v) for name, v in handler.headers.items()}
        with self._lock:
            seq = len(self._log)
            label = rule.label if rule is not None else None
            path = handler.path
            self._log.append(
                RecordedRequest(seq, handler.command, path, headers, body, label, fault)
            )
        return seq

    def _decide(self, handler: Handler, body: Body) -> Decision:
        with self._lock:
            rule = None
            reply: Reply = NO_MATCH if self._default is None else self._default
            if self._fault_rate and self._rng.random() < self._fault_rate:
                reply = self._rng.choice(self._faults)
            else:
                try:
                    rule = next(r for r in self._rules if not r.exhausted and r.matches(body))
                except StopIteration:
                    pass
                except Exception:
                    self.errors.append(traceback.format_exc())
                    reply = Fault.http_error(500, "a rule's `when` predicate raised")
            if rule is not None:
                rule.uses += 1
                reply = rule.reply
                if rule.faults and self._rng.random() < rule.fault_rate:
                    reply = self._rng.choice(list(rule.faults))
            latency = (
                rule.latency if rule is not None and rule.latency is not None else self._latency
            )
        fault = reply.kind if isinstance(reply, Fault) else None
        seq = self._record(handler, body, rule, fault)
        return Decision(seq, rule, reply, latency)
