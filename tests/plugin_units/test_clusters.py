"""Failure clusters: grouping by outcome, deciding field, primitive and value pattern, and the
checkable suggestions (a primitive rebuilt from its stored form and re-run on the values)."""

from __future__ import annotations

from typing import Any

from pytest_karenina.plugin.payload import ItemPayload, ResultSummary
from pytest_karenina.plugin.report.cluster_text import cluster_lines, describe, top_clusters
from pytest_karenina.plugin.report.clusters import ClusterTally, pair_pattern
from pytest_karenina.plugin.verdict.outcome import Outcome
from pytest_karenina.rubrics.gates import TraitCheck
from pytest_karenina.templates.normalizers import SynonymMap
from pytest_karenina.templates.primitives import ExactMatch
from pytest_karenina.templates.primitives.base import serialize_primitive

EXACT = serialize_primitive(ExactMatch())


def failed(
    nodeid: str, expected: Any, parsed: Any, field: str = "dose", model: str = "m1",
    spec: dict[str, Any] | None = EXACT,
) -> ItemPayload:  # fmt: skip
    row: dict[str, Any] = {
        "field": field, "expected": expected, "parsed": parsed,
        "primitive": "ExactMatch" if spec else None, "passed": False if spec else None,
        "differs": None if spec else True,
    }  # fmt: skip
    if spec is not None:
        row["spec"] = spec
    summary = ResultSummary(Outcome.VERIFY_FAIL, False, fields=[row])
    return ItemPayload(nodeid, Outcome.VERIFY_FAIL, answering_model=model, summaries=[summary])


def other(nodeid: str, outcome: Outcome, model: str = "m1", **summary: Any) -> ItemPayload:
    results = [ResultSummary(outcome, **summary)]
    return ItemPayload(nodeid, outcome, answering_model=model, summaries=results)


def tally(*payloads: ItemPayload) -> ClusterTally:
    found = ClusterTally()
    for payload in payloads:
        found.add(payload)
    return found


def test_pair_patterns_say_how_the_values_differ() -> None:
    assert pair_pattern("5 mg", "5mg") == "whitespace differs"
    assert pair_pattern("Paris", "PARIS") == "case differs"
    assert pair_pattern("Saint-Denis", "Saint Denis!") == "punctuation differs"
    assert pair_pattern("Tokyo", None) == "nothing extracted"
    assert pair_pattern("Tokyo", "Tokyo, Japan") == "the answer says more"
    assert pair_pattern(4, 5) == "different number"
    assert pair_pattern("Rome", "Milan") == "different text"


def test_one_repeated_pair_is_offered_the_synonym_that_passes_it() -> None:
    """No named normalizer joins '5 mg' and '5mg' (ExactMatch lowercases and strips already):
    the fix offered is the synonym of that pair, re-run on all nine."""
    found = tally(*(failed(f"b.jsonld::q{i}[m1]", "5 mg", "5mg") for i in range(9)))
    (cluster,) = found.clusters()
    assert cluster.size == 9 and cluster.suggestion is not None
    fixed = ExactMatch(normalize=["lowercase", "strip", SynonymMap(mapping={"5mg": "5 mg"})])
    assert cluster.suggestion.passing == 9 == sum(fixed.check("5mg", "5 mg") for _ in range(9))
    assert describe(cluster, False) == (
        "dose (ExactMatch): '5 mg' vs '5mg' x 9 -> a SynonymMap {'5mg': '5 mg'} would pass 9 of 9"
    )


def test_a_normalizer_suggestion_counts_what_it_would_pass() -> None:
    """Five whitespace misses, three of which collapse_whitespace fixes: the count is the
    primitive's own verdicts with the normalizer added."""
    pairs = [("5 mg", "5  mg")] * 3 + [("5 mg", "5mg")] * 2
    found = tally(*(failed(f"b::q{i}", want, got) for i, (want, got) in enumerate(pairs)))
    (cluster,) = found.clusters()
    rebuilt = ExactMatch(normalize=["lowercase", "strip", "collapse_whitespace"])
    expected = sum(rebuilt.check(got, want) for want, got in pairs)
    assert cluster.suggestion is not None and cluster.suggestion.passing == expected == 3
    assert describe(cluster, False) == (
        "dose (ExactMatch): whitespace differs (e.g. '5 mg' vs '5  mg') x 5 -> the normalizer "
        "'collapse_whitespace' would pass 3 of 5"
    )


def test_no_suggestion_without_a_checkable_primitive() -> None:
    """A template's own verify(): nothing to re-run, so nothing offered; different texts: no
    normalizer passes any, and several pairs get no synonym."""
    own = tally(*(failed(f"b::q{i}", "5 mg", "5mg", spec=None) for i in range(3)))
    (cluster,) = own.clusters()
    assert cluster.suggestion is None and describe(cluster, False).startswith(
        "dose (verify()): '5 mg' vs '5mg' x 3"
    )
    wrong = tally(failed("b::q1", "Rome", "Milan"), failed("b::q2", "Paris", "Lyon"))
    assert [c.suggestion for c in wrong.clusters()] == [None]
    # One wrong value repeated: a synonym would only accept the wrong answer.
    repeated = tally(*(failed(f"b::w{i}", "5 mg", "10 mg") for i in range(3)))
    assert [c.suggestion for c in repeated.clusters()] == [None]


def test_errors_and_verdicts_cluster_by_outcome_with_their_models() -> None:
    found = tally(
        *(other(f"b::t{i}[m2]", Outcome.TIMEOUT_ERROR, "m2") for i in range(3)),
        *(other(f"b::a{i}[m{1 + i % 2}]", Outcome.ABSTAINED, f"m{1 + i % 2}") for i in range(4)),
        other("b::r1[m1]", Outcome.RUBRIC_FAIL,
              rubric=[TraitCheck("clarity", "llm", 2, passed=False, gated=True)]),
        other("b::p1[m1]", Outcome.PASS),
        other("b::n1[m1]", Outcome.NO_VERDICT),
    )  # fmt: skip
    assert [line.text for line in cluster_lines(found)] == [
        "failure clusters (3, by size):",
        "  abstained x 4 (m1 2, m2 2)",
        "  error:timeout x 3 (all on m2)",
        "  rubric_fail: trait clarity x 1 (all on m1)",
    ]
    assert found.clusters()[1].nodeids == ["b::t0[m2]", "b::t1[m2]", "b::t2[m2]"]


def test_clusters_do_not_depend_on_the_order_items_reported_in() -> None:
    """Under xdist items report in any order: the clusters, their order and items are the
    same."""
    payloads = [
        failed("b::q1", "Rome", "Milan", field="capital"),
        failed("b::q2", "5 mg", "5mg"),
        other("b::q3", Outcome.ABSTAINED),
        failed("b::q4", "5 mg", "5mg"),
        other("b::q5", Outcome.ABSTAINED),
    ]
    forward, backward = tally(*payloads), tally(*reversed(payloads))
    assert [describe(c, False) for c in forward.clusters()] == [
        describe(c, False) for c in backward.clusters()
    ]
    assert [c.nodeids for c in forward.clusters()] == [c.nodeids for c in backward.clusters()]


def test_the_terminal_and_job_summary_list_the_five_largest() -> None:
    payloads = [
        other(f"b::q{n}-{i}", outcome)
        for n, outcome in enumerate([
            Outcome.ABSTAINED, Outcome.INSUFFICIENT, Outcome.TIMEOUT_ERROR,
            Outcome.PARSING_ERROR, Outcome.REPLAY_ERROR, Outcome.SERVER_ERROR,
            Outcome.CONNECTION_ERROR,
        ])
        for i in range(7 - n)
    ]  # fmt: skip
    lines = [line.text for line in cluster_lines(tally(*payloads))]
    assert lines[0] == "failure clusters (7, by size):"
    assert lines[1:6] == [
        "  abstained x 7", "  insufficient x 6", "  error:timeout x 5", "  error:parsing x 4",
        "  error:replay x 3",
    ]  # fmt: skip
    assert lines[6] == "  ... and 2 more (the HTML report lists them all)"
    assert top_clusters(tally(*payloads))[-1] == "... and 2 more"
    assert cluster_lines(tally(other("b::ok", Outcome.PASS))) == []
