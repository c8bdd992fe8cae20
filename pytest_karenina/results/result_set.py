"""``VerificationResultSet``: all results of one run, with export to and import from files."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_karenina.results.export import (
    export_header,
    export_payload_from,
    is_successful,
    read_export_errors,
    result_line,
    write_export,
)
from pytest_karenina.results.result import VerificationResult
from pytest_karenina.results.scenario import ScenarioResultRecord


class VerificationResultSet(BaseModel):
    """The results of a ``run_verification`` call.

    ``scenario_results`` is only set for scenario runs. ``errors`` lists failed scenario
    executions as ``(description, error)`` pairs; unlike Karenina (which keeps the exception
    objects) the error is a string, ``"<ExceptionType>: <message>"``, so the set stays
    JSON-serialisable (use :meth:`record_error`).

    Iterating a set yields its results (not pydantic's field pairs).
    """

    model_config = ConfigDict(extra="ignore")

    results: list[VerificationResult] = Field(default_factory=list)
    scenario_results: list[Any] | None = None
    errors: list[tuple[str, str]] | None = None

    def __len__(self) -> int:
        return len(self.results)

    # BaseModel.__iter__ yields (field, value) pairs; a result set iterates its results.
    def __iter__(self) -> Iterator[VerificationResult]:  # type: ignore[override]
        return iter(self.results)

    def record_error(self, description: str, error: BaseException | str) -> None:
        """Append ``(description, "<Type>: <message>")`` (or the given string) to ``errors``."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.errors = [*(self.errors or []), (description, text)]

    def by_question(self) -> dict[str, list[VerificationResult]]:
        """Results grouped by ``metadata.question_id``, in first-seen order."""
        grouped: dict[str, list[VerificationResult]] = {}
        for result in self.results:
            grouped.setdefault(result.metadata.question_id, []).append(result)
        return grouped

    def passed(self) -> list[VerificationResult]:
        """Results whose template verdict is True."""
        return [r for r in self.results if r.verify_result is True]

    def failed(self) -> list[VerificationResult]:
        """Results whose template verdict is False (results without a verdict are in neither
        :meth:`passed` nor :meth:`failed`)."""
        return [r for r in self.results if r.verify_result is False]

    def to_export_json(
        self,
        *,
        job_id: str | None = None,
        karenina_version: str | None = None,
        verification_config: Mapping[str, Any] | None = None,
        rubric_definition: Mapping[str, Any] | None = None,
        start_time: float | None = None,
        end_time: float | None = None,
        is_complete: bool = True,
        export_timestamp: str | None = None,
    ) -> str:
        """The set as a format-2.2 export file's text (see :mod:`.export` for the layout).

        ``job_summary`` counts the results (``total_questions``), those with a null
        ``metadata.failure`` (``successful_count``) and the rest (``failed_count``);
        ``total_duration`` is ``end_time - start_time`` (epoch seconds) when both are given.
        The other arguments are as for :func:`~pytest_karenina.results.export.export_header`.
        ``scenario_results`` and ``errors`` are written after the results when not None.
        """
        header = export_header(
            total=len(self.results),
            successful=sum(1 for r in self.results if is_successful(r)),
            job_id=job_id,
            karenina_version=karenina_version,
            verification_config=verification_config,
            rubric_definition=rubric_definition,
            start_time=start_time,
            end_time=end_time,
            is_complete=is_complete,
            export_timestamp=export_timestamp,
        )
        out = io.StringIO()
        lines = (result_line(r) for r in self.results)
        write_export(out, header, lines, self.scenario_results, errors=self.errors)
        return out.getvalue()

    @classmethod
    def from_export_json(cls, text: str) -> VerificationResultSet:
        """Load a result file: a format-2.x export or another shape Karenina accepts.

        See :func:`~pytest_karenina.results.export.read_export_payload` for the shapes.
        ``scenario_results`` entries load as
        :class:`~pytest_karenina.results.scenario.ScenarioResultRecord`.
        Raises ValueError (pydantic's ValidationError included) for malformed content.
        """
        data = json.loads(text)
        results, scenarios = export_payload_from(data)
        records: list[Any] | None = None
        if scenarios is not None:
            records = []
            for index, item in enumerate(scenarios):
                try:
                    records.append(ScenarioResultRecord.model_validate(item))
                except ValueError as exc:
                    raise ValueError(f"Invalid scenario result at index {index}: {exc}") from exc
        return cls(
            results=[VerificationResult.model_validate(item) for item in results],
            scenario_results=records,
            errors=read_export_errors(data),
        )
