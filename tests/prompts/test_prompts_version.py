"""The prompt set's version follows its texts: a changed prompt text without a new
:data:`~pytest_karenina.prompts.version.PROMPTS_VERSION` fails here."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil

import pytest

import pytest_karenina.prompts as prompts
from pytest_karenina.prompts.version import PROMPTS_VERSION

KNOWN = {
    (1, "30a7c19974f45fa1"),
    # Agentic rubric traits' investigation and extraction (issue 28): new calls, none of the
    # earlier ones changed, so earlier verdicts compare as before.
    (1, "8a73f0806baaeaf8"),
}
"""``(PROMPTS_VERSION, digest of the texts)`` pairs accepted. A new text with a new version:
replace the pair; a change that asks nothing new (a typo): add its digest under the same
version."""


def texts_digest() -> str:
    """SHA-256 (16 hex) over every module-level upper-case string of ``prompts``' modules,
    by module and name."""
    digest = hashlib.sha256()
    for info in sorted(pkgutil.iter_modules(prompts.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{prompts.__name__}.{info.name}")
        for name in sorted(vars(module)):
            value = getattr(module, name)
            if name.isupper() and isinstance(value, str):
                digest.update(f"{info.name}.{name}\0{value}\0".encode())
    return digest.hexdigest()[:16]


def test_a_changed_prompt_text_bumps_the_prompts_version() -> None:
    found = (PROMPTS_VERSION, texts_digest())
    assert found in KNOWN, (
        f"the prompt texts changed (digest {found[1]}): bump PROMPTS_VERSION in "
        "pytest_karenina/prompts/version.py and pin the new pair in KNOWN here (or, when the "
        "change asks the judge nothing new, add the digest under the same version)"
    )


def test_the_digest_sees_a_text_change(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_karenina.prompts import parsing

    before = texts_digest()
    monkeypatch.setattr(parsing, "PARSING_SYSTEM", parsing.PARSING_SYSTEM + " ")
    assert texts_digest() != before
