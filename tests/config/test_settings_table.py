"""docs/configuration.md gives every field of ``ModelConfig`` and ``VerificationConfig`` a
status; these tests hold the two tables to the models, so no setting is silently ignored.

* every field is in its table, and every row names a field;
* ``refused``: the value in the *Refused value* column (JSON) fails validation, and the
  error quoted in the last column (a backticked span starting with ``<field>=``) is in it;
* ``acted on``: the module named first in the last column reads the field (an attribute
  access or a string key: ``.field``, ``"field"``);
* ``carried``: another value is accepted and survives a dump and a reload.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from pytest_karenina.config.model import ModelConfig
from pytest_karenina.config.verification import VerificationConfig
from tests.config.helpers import config, model

ROOT = Path(__file__).parent.parent.parent
DOC = ROOT / "docs" / "configuration.md"
PACKAGE = ROOT / "pytest_karenina"
HEADER = "| Field | Default | Status | Refused value | Where, or the error |"
SECTIONS: dict[str, type[BaseModel]] = {"## Models": ModelConfig, "## The run": VerificationConfig}
STATUSES = ("acted on", "refused", "carried")
MODEL_PREFIX = "answering_models[0]."


@dataclass(frozen=True)
class Row:
    owner: type[BaseModel]
    fields: tuple[str, ...]
    status: str
    refused: str
    where: str

    @property
    def label(self) -> str:
        return f"{self.owner.__name__}.{'/'.join(self.fields)}"


def read_rows() -> list[Row]:
    rows: list[Row] = []
    owner: type[BaseModel] | None = None
    in_table = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            owner = SECTIONS.get(line.strip())
            in_table = False
        elif line.strip() == HEADER:
            assert owner is not None, f"a settings table outside {list(SECTIONS)}"
            in_table = True
        elif in_table and line.startswith("|---"):
            continue
        elif in_table and line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            assert len(cells) == 5, f"not five cells: {line}"
            fields = tuple(re.findall(r"`(\w+)`", cells[0]))
            rows.append(Row(owner, fields, cells[2], cells[3].strip("`"), cells[4]))
        else:
            in_table = False
    return rows


ROWS = read_rows()


def rows_with(status: str) -> list[Row]:
    return [row for row in ROWS if row.status == status]


@pytest.mark.parametrize("owner", list(SECTIONS.values()), ids=lambda cls: cls.__name__)
def test_every_field_has_exactly_one_row(owner: type[BaseModel]) -> None:
    listed = [field for row in ROWS if row.owner is owner for field in row.fields]
    assert len(listed) == len(set(listed)), "a field is listed twice"
    assert set(listed) == set(owner.model_fields), (
        f"missing from the table: {sorted(set(owner.model_fields) - set(listed))}; "
        f"not fields: {sorted(set(listed) - set(owner.model_fields))}"
    )


def test_every_row_has_a_known_status() -> None:
    assert len(ROWS) > 40
    assert {row.status for row in ROWS} <= set(STATUSES), sorted({row.status for row in ROWS})
    assert all(row.refused for row in rows_with("refused"))


def build(row: Row, value: Any) -> VerificationConfig:
    (field,) = row.fields
    if row.owner is ModelConfig:
        return config(answering_models=[model(**{field: value})])
    return config(**{field: value})


REFUSING = [row for row in ROWS if row.refused]


@pytest.mark.parametrize("row", REFUSING, ids=[row.label for row in REFUSING])
def test_a_refused_value_is_refused_with_the_quoted_error(row: Row) -> None:
    (field,) = row.fields
    value = json.loads(row.refused)

    with pytest.raises(ValueError) as caught:
        build(row, value)

    path = f"{MODEL_PREFIX}{field}" if row.owner is ModelConfig else field
    quoted = [span for span in re.findall(r"`([^`]+)`", row.where) if span.startswith(f"{path}=")]
    assert quoted, f"the row quotes no error starting with {path}="
    message = str(caught.value)
    assert any(span in message for span in quoted), f"{quoted} not in {message!r}"


def test_dynamic_agentic_parsing_is_refused_with_agentic_parsing_on() -> None:
    judge = model(id="judge", interface="langchain_deep_agents")
    with pytest.raises(ValueError, match=re.escape("agentic_parsing_trigger='dynamic': dynamic")):
        config(agentic_parsing=True, agentic_parsing_trigger="dynamic", parsing_models=[judge])


ACTED_ON = rows_with("acted on")


@pytest.mark.parametrize("row", ACTED_ON, ids=[row.label for row in ACTED_ON])
def test_the_module_named_reads_the_field(row: Row) -> None:
    found = re.search(r"`([\w/]+\.py)`", row.where)
    assert found, "an acted-on row names the module that reads the field"
    module = PACKAGE / found.group(1)
    assert not found.group(1).startswith("config/"), "the configuration itself reads nothing"
    source = module.read_text(encoding="utf-8")
    for field in row.fields:
        assert re.search(rf"[.\"']{field}\b", source), f"{module} does not read {field}"


CARRIED = rows_with("carried")


@pytest.mark.parametrize("row", CARRIED, ids=[row.label for row in CARRIED])
def test_a_carried_field_keeps_another_value_through_a_round_trip(row: Row) -> None:
    (field,) = row.fields
    default = row.owner.model_fields[field].get_default(call_default_factory=True)
    assert isinstance(default, int), "a carried field of another type needs its own value here"

    built = build(row, default + 1)

    again = VerificationConfig.model_validate_json(built.model_dump_json())
    holder: BaseModel = again.answering_models[0] if row.owner is ModelConfig else again
    assert getattr(holder, field) == default + 1
