"""Question ids derived from question text, as Karenina derives them."""

from __future__ import annotations

import hashlib

_PREFIX_LENGTH = 50


def generate_question_id(text: str) -> str:
    """The id Karenina gives a question that has no explicit ``@id``.

    ``urn:uuid:question-<prefix>-<hash>``: the prefix is the text lower-cased, with
    spaces turned into ``-`` and ``?``, ``.`` and ``,`` removed, cut to 50 characters;
    the hash is the first 8 hex digits of the MD5 of the UTF-8 text.

    >>> generate_question_id("What is the capital of France?")
    'urn:uuid:question-what-is-the-capital-of-france-cb0b4aaf'
    """
    prefix = text.lower().replace(" ", "-")
    for removed in "?.,":
        prefix = prefix.replace(removed, "")
    digest = hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"urn:uuid:question-{prefix[:_PREFIX_LENGTH]}-{digest[:8]}"
