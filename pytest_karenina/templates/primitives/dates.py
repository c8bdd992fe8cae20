"""Date primitives. Unparseable dates make the check fail, never raise."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from dateutil import parser as date_parser
from pydantic import Field

from pytest_karenina.templates.primitives.base import VerificationPrimitive, builtin_primitive


def parse_date(value: Any, fmt: str | None = None) -> dt.datetime:
    """A datetime from a date/datetime object, or from text (``strptime`` with
    ``fmt``, else dateutil's flexible parser). Raises ``ValueError`` on failure."""
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    text = str(value)
    if fmt is not None:
        return dt.datetime.strptime(text, fmt)
    try:
        return date_parser.parse(text)
    except (OverflowError, date_parser.ParserError) as exc:
        raise ValueError(f"cannot parse {text!r} as a date") from exc


@builtin_primitive
class DateMatch(VerificationPrimitive):
    """Both sides parse to the same calendar date."""

    format: str | None = None

    def check(self, extracted: Any, expected: Any) -> bool:
        try:
            return (
                parse_date(extracted, self.format).date()
                == parse_date(expected, self.format).date()
            )
        except (ValueError, TypeError):
            return False


_UNITS = {"days": "days", "hours": "hours", "minutes": "minutes"}


@builtin_primitive
class DateTolerance(VerificationPrimitive):
    """The two moments are at most ``tolerance`` days/hours/minutes apart."""

    tolerance: int = Field(ge=0)
    unit: Literal["days", "hours", "minutes"] = "days"

    def check(self, extracted: Any, expected: Any) -> bool:
        limit = dt.timedelta(**{_UNITS[self.unit]: self.tolerance})
        try:
            return abs(parse_date(extracted) - parse_date(expected)) <= limit
        except (ValueError, TypeError):
            return False


@builtin_primitive
class DateRange(VerificationPrimitive):
    """The extracted date lies within ``[min, max]`` (date strings); ground truth unused."""

    min: str | None = None
    max: str | None = None

    def check(self, extracted: Any, expected: Any) -> bool:
        try:
            moment = parse_date(extracted)
            if self.min is not None and moment < parse_date(self.min):
                return False
            return not (self.max is not None and moment > parse_date(self.max))
        except (ValueError, TypeError):
            return False
