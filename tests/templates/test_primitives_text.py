"""Text and boolean primitives (spec 3.2).

BooleanMatch, ExactMatch, ContainsAny, ContainsAll, RegexMatch.

Each table row is ``(primitive, extracted, expected, check result[, score])``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_karenina.templates import (
    BooleanMatch,
    ContainsAll,
    ContainsAny,
    ExactMatch,
    RegexMatch,
    SynonymMap,
    TemplateWarning,
    VerificationPrimitive,
)
from tests.templates.primitive_helpers import rows as _rows

# ---------------------------------------------------------------------------
# BooleanMatch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extracted", "expected", "result"),
    [
        pytest.param(True, True, True, id="true-true"),
        pytest.param(False, False, True, id="false-false"),
        pytest.param(True, False, False, id="true-false"),
        pytest.param(False, True, False, id="false-true"),
        pytest.param(None, None, True, id="none-none"),
        pytest.param(None, False, False, id="none-vs-false"),
        pytest.param(False, None, False, id="false-vs-none"),
        pytest.param(None, True, False, id="none-vs-true"),
        pytest.param("false", True, True, id="string-false-is-truthy"),
        pytest.param("false", False, False, id="string-false-not-false"),
        pytest.param("", False, True, id="empty-string-falsy"),
        pytest.param(0, False, True, id="zero-falsy"),
        pytest.param(1, True, True, id="one-truthy"),
        pytest.param([], False, True, id="empty-list-falsy"),
    ],
)
def test_boolean_match(extracted: Any, expected: Any, result: bool) -> None:
    assert BooleanMatch().check(extracted, expected) is result
    assert BooleanMatch().score(extracted, expected) == (1.0 if result else 0.0)


# ---------------------------------------------------------------------------
# ExactMatch, ContainsAny, ContainsAll
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "expected", "result"),
    _rows(
        [
            ("default-case", ExactMatch(), "bcl2", "BCL2", True),
            ("default-strip", ExactMatch(), "  BCL2\n", "BCL2", True),
            ("default-keeps-punctuation", ExactMatch(), "Bcl-2", "BCL2", False),
            ("default-keeps-inner-space", ExactMatch(), "O  +", "O +", False),
            ("default-str-of-int", ExactMatch(), 42, "42", True),
            ("default-str-of-float", ExactMatch(), 42.0, "42", False),
            ("no-normalize-case-sensitive", ExactMatch(normalize=[]), "bcl2", "BCL2", False),
            ("no-normalize-equal", ExactMatch(normalize=[]), "BCL2", "BCL2", True),
            (
                "remove-punctuation",
                ExactMatch(normalize=["lowercase", "remove_punctuation"]),
                "Bcl-2",
                "BCL2",
                True,
            ),
            (
                "collapse-whitespace",
                ExactMatch(normalize=["collapse_whitespace"]),
                " spike \t  protein ",
                "spike protein",
                True,
            ),
            (
                "synonym-after-lowercase",
                ExactMatch(normalize=["lowercase", SynonymMap(mapping={"o positive": "o+"})]),
                "O Positive",
                "o+",
                True,
            ),
            (
                "synonym-before-lowercase-misses",
                ExactMatch(normalize=[SynonymMap(mapping={"o positive": "o+"}), "lowercase"]),
                "O Positive",
                "o+",
                False,
            ),
            (
                "synonym-whole-string-only",
                ExactMatch(normalize=[SynonymMap(mapping={"positive": "+"})]),
                "O positive",
                "O+",
                False,
            ),
        ]
    ),
)
def test_exact_match(primitive: ExactMatch, extracted: Any, expected: Any, result: bool) -> None:
    assert primitive.check(extracted, expected) is result


def test_exact_match_default_normalizers() -> None:
    assert ExactMatch().normalize == ["lowercase", "strip"]


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(
            ContainsAny(substrings=["mrna", "messenger rna"]),
            "uses mrna",
            True,
            id="any-one-present",
        ),
        pytest.param(
            ContainsAny(substrings=["mrna", "messenger rna"]),
            "uses mRNA",
            False,
            id="any-case-sensitive-by-default",
        ),
        pytest.param(
            ContainsAny(substrings=["mrna"], normalize=["lowercase"]),
            "uses mRNA",
            True,
            id="any-lowercase",
        ),
        pytest.param(
            ContainsAny(substrings=["MRNA"], normalize=["lowercase"]),
            "uses mRNA",
            True,
            id="any-substrings-normalized-too",
        ),
        pytest.param(ContainsAny(substrings=["spike"]), "nucleocapsid", False, id="any-none"),
        pytest.param(ContainsAny(substrings=[]), "anything", False, id="any-empty-list"),
        pytest.param(ContainsAny(substrings=["4"]), 42, True, id="any-str-of-int"),
        pytest.param(
            ContainsAny(substrings=["bcl2"], normalize=["remove_punctuation"]),
            "the bcl-2 protein",
            True,
            id="any-remove-punctuation",
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]), "egfr then kras", True, id="all-both"
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]), "egfr only", False, id="all-missing-one"
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"], normalize=["lowercase"]),
            "EGFR and KRAS",
            True,
            id="all-lowercase",
        ),
        pytest.param(
            ContainsAll(substrings=["egfr", "kras"]),
            "EGFR and KRAS",
            False,
            id="all-case-sensitive-by-default",
        ),
        pytest.param(ContainsAll(substrings=[]), "anything", True, id="all-empty-list"),
    ],
)
def test_contains(primitive: VerificationPrimitive, extracted: Any, result: bool) -> None:
    # The ground truth is ignored: pass an unrelated value.
    assert primitive.check(extracted, "ignored ground truth") is result


# ---------------------------------------------------------------------------
# RegexMatch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("primitive", "extracted", "result"),
    [
        pytest.param(RegexMatch(pattern=r"BCL-?2"), "the BCL2 protein", True, id="search-anywhere"),
        pytest.param(RegexMatch(pattern=r"^BCL-?2$"), "the BCL2 protein", False, id="anchored"),
        pytest.param(RegexMatch(pattern=r"bcl-?2"), "BCL-2", False, id="case-sensitive"),
        pytest.param(
            RegexMatch(pattern=r"bcl-?2", flags=["IGNORECASE"]), "BCL-2", True, id="ignorecase"
        ),
        pytest.param(RegexMatch(pattern=r"^b", flags=["MULTILINE"]), "a\nb", True, id="multiline"),
        pytest.param(RegexMatch(pattern=r"^b"), "a\nb", False, id="no-multiline"),
        pytest.param(RegexMatch(pattern=r"a.b", flags=["DOTALL"]), "a\nb", True, id="dotall"),
        pytest.param(
            RegexMatch(pattern=r"a.b", flags=["DOTALL", "IGNORECASE"]), "A\nB", True, id="two-flags"
        ),
        pytest.param(RegexMatch(pattern=r"^\d+$"), 1928, True, id="str-of-int"),
    ],
)
def test_regex_match(primitive: RegexMatch, extracted: Any, result: bool) -> None:
    assert primitive.check(extracted, "ignored") is result


def test_regex_match_unknown_flag_warns_and_is_ignored() -> None:
    with pytest.warns(TemplateWarning, match="NOT_A_FLAG"):
        primitive = RegexMatch(pattern="abc", flags=["NOT_A_FLAG"])
        lower = primitive.check("xabcx", None)
        upper = primitive.check("ABC", None)
    assert lower is True
    assert upper is False


def test_regex_match_unknown_flag_next_to_known_one() -> None:
    with pytest.warns(TemplateWarning):
        primitive = RegexMatch(pattern="abc", flags=["IGNORECASE", "BOGUS"])
        result = primitive.check("ABC", None)
    assert result is True


@pytest.mark.parametrize(
    "pattern", [pytest.param("(", id="open-group"), pytest.param("[a-", id="class")]
)
def test_regex_match_invalid_pattern_is_a_value_error_at_construction(pattern: str) -> None:
    with pytest.raises(ValueError):
        RegexMatch(pattern=pattern)


def test_a_pattern_too_deeply_nested_to_compile_is_a_value_error() -> None:
    # re's parser overflows the stack on deep nesting: a RecursionError, not re.error.
    with pytest.raises(ValueError, match="invalid regular expression"):
        RegexMatch(pattern="(" * 100_000)
