"""``ModelRequest.with_timeout``: the transport's copy of a request with its attempt's limit."""

from __future__ import annotations

from dataclasses import fields, replace

from pytest_karenina.llm.ports import ChatMessage, ModelRequest


def test_with_timeout_is_replace_of_the_timeout() -> None:
    request = ModelRequest(
        (ChatMessage("user", "hi"),), "parsing", {"type": "object"}, "Answer", "q1",
        None, 2, 3,
    )  # fmt: skip
    copied = request.with_timeout(4.5)
    assert copied == replace(request, timeout=4.5)
    assert copied is not request and request.timeout is None
    assert [getattr(copied, f.name) for f in fields(copied) if f.name != "timeout"] == [
        getattr(request, f.name) for f in fields(request) if f.name != "timeout"
    ]
