"""JUnit: scalar ``karenina.*`` item properties and the gate properties of a written file."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_karenina.plugin.report.junit import (
    agent_properties,
    rubric_properties,
    user_properties,
    write_suite_properties,
)
from pytest_karenina.results import ModelIdentity
from tests.plugin_units.units_helpers import errored, fields_result, graded, verdicts_of

SCALARS = (str, int, float, bool)


def test_user_properties_of_a_template_verdict() -> None:
    """Every property, in order, from the first result (tokens and judges summed over all)."""
    first = fields_result(
        symbol="Ag",
        verify_granular_result=0.5,
        usage_metadata={"total": {"input_tokens": 100, "output_tokens": 40}},
    )
    second = fields_result(
        symbol="Au", usage_metadata={"total": {"input_tokens": 1, "output_tokens": 2}}
    ).model_copy(deep=True)
    second.metadata.parsing = ModelIdentity.of("langchain", "claude-haiku")
    assert user_properties(verdicts_of(first, second)) == [
        ("karenina.question_id", "q1"),
        ("karenina.verify_result", False),
        ("karenina.granular_score", 0.5),
        ("karenina.answering_model", "gpt-4o"),
        ("karenina.parsing_model", "gpt-4o,claude-haiku"),
        ("karenina.category", "verify_fail"),
        ("karenina.input_tokens", 101),
        ("karenina.output_tokens", 42),
    ]


def test_user_properties_are_scalars_with_empty_strings_for_none() -> None:
    """An errored result has no verdict and no score: both become ``""``."""
    properties = dict(user_properties(verdicts_of(errored("timeout"))))
    assert properties["karenina.verify_result"] == ""
    assert properties["karenina.granular_score"] == ""
    assert properties["karenina.category"] == "error:timeout"
    assert type(properties["karenina.category"]) is str
    assert all(isinstance(value, SCALARS) for value in properties.values()), properties


def test_user_properties_of_no_verdicts() -> None:
    """An item without verdicts has no properties."""
    assert user_properties([]) == []


def test_agent_properties_count_refused_tool_calls_apart() -> None:
    result = fields_result(symbol="Ag").model_copy(deep=True)
    assert result.template is not None
    result.template.agent_metrics = {
        "iterations": 5, "tool_calls": 1, "refused_tool_calls": 3,
        "suspect_failed_tool_calls": 0, "limit_reached": False,
    }  # fmt: skip
    properties = dict(agent_properties(result))
    assert properties["karenina.agent.tool_calls"] == 1
    assert properties["karenina.agent.refused_tool_calls"] == 3
    assert properties["karenina.agent.failed_tool_calls"] == 0


def test_rubric_properties() -> None:
    """One property per trait, one per metric part, skipped traits left out, gates last."""
    built = graded(
        None,
        skipped={"Dyn": "not applicable"},
        Clarity=4,
        Safe=False,
        extraction={"precision": 1.0, "f1": 0.5},
    )
    (verdict,) = verdicts_of(built)
    assert rubric_properties(verdict) == [
        ("karenina.rubric.Clarity", 4),
        ("karenina.rubric.Safe", False),
        ("karenina.rubric.extraction.precision", 1.0),
        ("karenina.rubric.extraction.f1", 0.5),
        ("karenina.rubric_gates", "1/2"),
    ]


def test_rubric_properties_without_gated_traits_have_no_gate_count() -> None:
    """Only ungated traits: values, no ``karenina.rubric_gates``."""
    (verdict,) = verdicts_of(graded(None, extraction={"precision": 0.25, "f1": 0.4}))
    assert rubric_properties(verdict) == [
        ("karenina.rubric.extraction.precision", 0.25),
        ("karenina.rubric.extraction.f1", 0.4),
    ]


def test_user_properties_end_with_the_rubric_of_the_first_result() -> None:
    """An unmeasured trait's None value becomes ``""`` too."""
    built = graded(True, errors={"Safe": "judge failed"}, Clarity=5)
    properties = user_properties(verdicts_of(built))
    assert properties[-3:] == [
        ("karenina.rubric.Clarity", 5),
        ("karenina.rubric.Safe", ""),
        ("karenina.rubric_gates", "1/2"),
    ]
    assert ("karenina.category", "error:rubric") in properties


def _gate_properties(suite: ET.Element) -> dict[str, str]:
    properties = suite.find("properties")
    assert properties is not None
    return {
        p.attrib["name"]: p.attrib["value"]
        for p in properties.findall("property")
        if p.attrib["name"].startswith("karenina.")
    }


NESTED = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2"><properties>
<property name="existing" value="kept"/></properties>
<testcase classname="bench.jsonld" name="q1"/></testsuite>
<testsuite name="second" tests="0"/></testsuites>
"""
BARE = """<?xml version="1.0" encoding="utf-8"?>
<testsuite name="pytest" tests="1"><testcase classname="bench.jsonld" name="q1"/></testsuite>
"""


def test_gate_properties_under_testsuites(tmp_path: Path) -> None:
    """Every suite gets the three properties; existing properties and cases stay."""
    path = tmp_path / "junit.xml"
    path.write_text(NESTED, encoding="utf-8")
    write_suite_properties(str(path), [
        ("karenina.gate", "failed"), ("karenina.pass_rate", "0.5000"),
        ("karenina.min_pass_rate", "0.8"),
    ])  # fmt: skip
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 2
    expected = {
        "karenina.gate": "failed",
        "karenina.pass_rate": "0.5000",
        "karenina.min_pass_rate": "0.8",
    }
    for suite in suites:
        assert _gate_properties(suite) == expected
        assert suite[0].tag == "properties"
    first = suites[0].find("properties")
    assert first is not None
    assert first[0].attrib["name"] == "existing"
    assert len(suites[0].findall("testcase")) == 1


def test_gate_properties_on_a_bare_testsuite(tmp_path: Path) -> None:
    """A ``<testsuite>`` root (junit_family legacy output) gets them too."""
    path = tmp_path / "junit.xml"
    path.write_text(BARE, encoding="utf-8")
    write_suite_properties(str(path), [
        ("karenina.gate", "passed"), ("karenina.pass_rate", "0.6667"),
        ("karenina.min_pass_rate", "0.5"),
    ])  # fmt: skip
    root = ET.parse(path).getroot()
    assert root.tag == "testsuite"
    assert _gate_properties(root) == {
        "karenina.gate": "passed",
        "karenina.pass_rate": "0.6667",
        "karenina.min_pass_rate": "0.5",
    }
    assert root[0].tag == "properties"


@pytest.mark.parametrize("content", [None, "<testsuites><testsuite>"])
def test_gate_properties_leave_missing_or_broken_files_alone(
    tmp_path: Path, content: str | None
) -> None:
    """No file, or a file that is not XML: nothing written, nothing raised."""
    path = tmp_path / "junit.xml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    write_suite_properties(str(path), [("karenina.gate", "passed")])
    assert (path.read_text(encoding="utf-8") if path.exists() else None) == content


def test_gate_properties_are_spliced_into_the_file_as_written(tmp_path: Path) -> None:
    """The file keeps pytest's own text around the new properties (no parse and rewrite of
    the whole tree, which took seconds at 20,000 cases); values are escaped."""
    path = tmp_path / "junit.xml"
    path.write_text(NESTED.replace("</testsuite>", "<properties /></testsuite>"), "utf-8")

    write_suite_properties(str(path), [("karenina.gate", 'a <b> & "c" é')])

    added = '<property name="karenina.gate" value="a &lt;b&gt; &amp; &quot;c&quot; é" />'
    assert path.read_text(encoding="utf-8") == (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<testsuites><testsuite name="pytest" tests="2"><properties>\n'
        f'<property name="existing" value="kept"/>{added}</properties>\n'
        '<testcase classname="bench.jsonld" name="q1"/><properties /></testsuite>\n'
        f'<testsuite name="second" tests="0"><properties>{added}</properties></testsuite>'
        "</testsuites>\n"
    )


def test_an_empty_leading_properties_element_takes_the_gate_properties(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(BARE.replace('tests="1">', 'tests="1"><properties />'), encoding="utf-8")

    write_suite_properties(str(path), [("karenina.gate", "passed")])

    root = ET.parse(path).getroot()
    assert [child.tag for child in root] == ["properties", "testcase"]
    assert _gate_properties(root) == {"karenina.gate": "passed"}
