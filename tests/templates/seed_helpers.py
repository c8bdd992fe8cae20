"""Objects shared by the test_seed_*.py modules (seed page "Answer Templates")."""

from __future__ import annotations

from pytest_karenina.templates import BaseAnswer, ExactMatch, NumericExact, VerifiedField

PENICILLIN_TRACE = (
    "--- AI Message ---\n"
    "Penicillin was discovered in 1928 by Alexander Fleming, who noticed that a mold of the "
    "genus Penicillium inhibited bacterial growth on an agar plate."
)

# The import block at the top of the seed page, used verbatim by compiled templates.
SEED_IMPORTS = """\
from typing import Literal
from pydantic import Field
from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import (
    BooleanMatch,
    ContainsAny,
    ExactMatch,
    LiteralMatch,
    NumericExact,
    NumericTolerance,
    SetContainment,
    TraceRegex,
)
from karenina.schemas.entities.composition import (
    AllOf,
    AnyOf,
    AtLeastN,
    FieldCheck,
)
"""


# 1.3 Walkthrough template; also used by 2.3, 8.3 and the pitfalls.
class PairCountAnswer(BaseAnswer):
    pair_count: int = VerifiedField(
        description="Number of chromosome pairs in a normal human somatic cell",
        ground_truth=23,
        verify_with=NumericExact(),
    )


# 5.2 Quick example; also used by the pitfalls.
class GeneAnswer(BaseAnswer):
    gene: str = VerifiedField(
        description="The gene symbol identified",
        ground_truth="TP53",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
