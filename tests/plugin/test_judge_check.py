"""``--karenina-judge-check LABELS``: one item per labelled answer, judged over real HTTP
without any answering call, agreement with people reported (terminal, JUnit, HTML) and gated
on Cohen's kappa; labels files that do not fit are usage errors and nothing runs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.plugin.plugin_helpers import (
    capitals_checkpoint,
    endpoint_args,
    rendered_dom,
)
from tests.support.openai_server import OpenAIServer

LABELS = """\
question_id,answer,verdict,field.capital,label
q1,The capital is Paris.,pass,Paris,
q1,It is Lyon.,fail,Lyon,
q2,Rome of course.,pass,Rome,
q2,Milan.,fail,,milan
q3,Tokyo!,pass,Tokyo,
q3,"Kyoto, no wait: Tokyo.",pass,Tokyo,kyoto-slip
"""
JUDGE_READS = {
    "The capital is Paris.": "Paris",
    "It is Lyon.": "Lyon",
    "Rome of course.": "Rome",
    "Milan.": "Rome",  # a wrong answer the judge waves through: people fail, judge pass
    "Tokyo!": "Tokyo",
    "Kyoto, no wait: Tokyo.": "Kyoto",  # a right answer misread: people pass, judge fail
}
"""What the scripted judge extracts from each answer: 3 true positives, 1 true negative, 1
false positive, 1 false negative. Cohen's kappa: po = 4/6, pe = (4/6)(4/6) + (2/6)(2/6) = 5/9,
kappa = (4/6 - 5/9) / (4/9) = 0.25."""
HEALTH = (
    "judge test-model: accuracy 66.7% (4/6, 95% CI 30.0%-90.3%); true positive rate 75.0% "
    "(3/4); false positive rate 50.0% (1/2); Cohen's kappa 0.25 (95% CI -0.56 to 1.00)"
)


def judge(server: OpenAIServer) -> None:
    for answer, capital in JUDGE_READS.items():
        server.add_rule({"capital": capital}, structured=True, contains=answer)


def labelled_run(
    pytester: pytest.Pytester, server: OpenAIServer, *extra: str, labels: str = LABELS
) -> pytest.RunResult:
    checkpoint = capitals_checkpoint(pytester.path)
    (pytester.path / "labels.csv").write_text(labels, encoding="utf-8")
    return pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(server),
        "--karenina-judge-check", "labels.csv", *extra,
    )  # fmt: skip


def test_each_label_is_an_item_judged_without_answering(
    pytester: pytest.Pytester, openai_server: OpenAIServer, dist: list[str]
) -> None:
    judge(openai_server)
    result = labelled_run(pytester, openai_server, "--junitxml=junit.xml", *dist)

    result.assert_outcomes(passed=4, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    requests = openai_server.chat_requests
    assert len(requests) == 6 and all(r.structured for r in requests)  # the judge only
    text = result.stdout.str()
    assert "karenina judge health" in text
    assert "labels.csv: 6 of 6 labels judged (people pass 4, fail 2), 0 unmeasured" in text
    assert HEALTH in text
    assert "  fields: capital 4/5 agree" in text
    assert "disagreements (2):" in text
    result.stdout.fnmatch_lines([
        "*_ label milan (labels.csv, line 5) _*",
        "judge test-model says pass, people say fail (labels.csv, line 5)",
        "*_ label kyoto-slip (labels.csv, line 7) _*",
        "judge test-model says fail, people say pass; capital: judge 'Kyoto', people 'Tokyo' "
        "(labels.csv, line 7)",
    ])  # fmt: skip
    assert 'extraction {"capital": "Rome"}' in text

    root = ET.parse(pytester.path / "junit.xml").getroot()
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    people = [
        p.get("value")
        for case in root.iter("testcase")
        for p in case.iter("property")
        if p.get("name") == "karenina.people_verdict"
    ]
    assert sorted(people) == ["fail", "fail", "pass", "pass", "pass", "pass"]
    assert properties["karenina.judge_kappa"] == "0.2500"
    assert properties["karenina.judge_fpr"] == "0.5000"
    assert properties["karenina.judge_labels"] == "6"


def test_the_disagreement_is_explained_and_selectable_per_label(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    judge(openai_server)
    result = labelled_run(pytester, openai_server, "-k", "kyoto")

    result.assert_outcomes(failed=1)
    assert len(openai_server.chat_requests) == 1
    result.stdout.fnmatch_lines([
        "label kyoto-slip: people say pass",
        "judge test-model: fail (verify_fail, decided by VerifyTemplate)",
        "  capital: judge 'Kyoto', people 'Tokyo': DIFFERS",
        "  extraction: {*Kyoto*}",
        "answer: 'Kyoto, no wait: Tokyo.'",
    ])  # fmt: skip
    assert "labels.csv: 1 of 6 labels judged" in result.stdout.str()


def test_last_failed_reruns_the_disagreeing_labels(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    judge(openai_server)
    checkpoint = capitals_checkpoint(pytester.path)
    (pytester.path / "labels.csv").write_text(LABELS, encoding="utf-8")
    args = [a for a in endpoint_args(openai_server) if a not in ("-p", "no:cacheprovider")]
    args += ["--karenina", str(checkpoint), "--karenina-judge-check", "labels.csv"]
    pytester.runpytest(*args).assert_outcomes(passed=4, failed=2)
    before = len(openai_server.chat_requests)

    again = pytester.runpytest(*args, "--lf")

    again.assert_outcomes(failed=2)
    assert "run-last-failure: rerun previous 2 failures" in again.stdout.str()
    assert len(openai_server.chat_requests) == before + 2


@pytest.mark.parametrize(
    ("kappa", "status", "line"),
    [("0.2", pytest.ExitCode.OK, "judge kappa test-model 0.25 (95% CI -0.56 to 1.00), needs "
      "0.2: gate passed"),
     ("0.5", pytest.ExitCode.TESTS_FAILED, "needs 0.5: gate FAILED")],
    ids=["reached", "missed"],
)  # fmt: skip
def test_the_kappa_gate_decides_the_exit_status(
    pytester: pytest.Pytester, openai_server: OpenAIServer, kappa: str, status: int, line: str
) -> None:
    """A reached kappa forgives the disagreements (as the pass-rate gate forgives failed
    questions); a missed one fails the run. The pass-rate gate does not apply to labels."""
    judge(openai_server)
    result = labelled_run(
        pytester, openai_server, "--karenina-min-judge-kappa", kappa,
        "--karenina-min-pass-rate", "1",
    )  # fmt: skip
    result.assert_outcomes(passed=4, failed=2)
    assert result.ret == status
    assert line in result.stdout.str()
    assert "pass rate" not in result.stdout.str().split("karenina gate:")[-1]


def test_an_unmeasured_label_fails_the_gate(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """A label the judge could not judge (its reply cannot be parsed) is an error, counted
    apart, and the gate refuses to vouch for it."""
    judge(openai_server)
    openai_server.add_rule("not json at all", structured=True, contains="Unreadable.")
    labels = LABELS + "q1,Unreadable.,fail,,\n"
    result = labelled_run(pytester, openai_server, "--karenina-min-judge-kappa", "0", labels=labels)
    result.assert_outcomes(passed=4, failed=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    assert "7 of 7 labels judged (people pass 4, fail 3), 1 unmeasured" in text
    assert "unmeasured (no verdict, not counted): capitals.jsonld::q1[" in text
    assert HEALTH in text  # the six measured labels only
    assert "(1 labels unmeasured)" in text


def test_a_recorded_answer_is_judged_again_from_the_export(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """``answer_ref``: the answer a run recorded in its results export, judged again with no
    answering call."""
    openai_server.add_rule("It is Lyon.", structured=False, contains="capital of France")
    openai_server.add_rule({"capital": "Lyon"}, structured=True, contains="It is Lyon.")
    checkpoint = capitals_checkpoint(pytester.path, {"q1": ("France", "Paris")})
    recorded = pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(openai_server),
        "--karenina-results", "runs/export.json",
    )  # fmt: skip
    recorded.assert_outcomes(failed=1)
    before = len(openai_server.chat_requests)
    labels = pytester.path / "labels" / "labels.json"
    labels.parent.mkdir()
    entry = {"question_id": "q1", "answer_ref": "../runs/export.json#model=test-model",
             "verdict": "fail", "fields": {"capital": "Lyon"}}  # fmt: skip
    labels.write_text(json.dumps([entry]), encoding="utf-8")

    result = pytester.runpytest(
        "--karenina", str(checkpoint), *endpoint_args(openai_server),
        "--karenina-judge-check", str(labels),
    )  # fmt: skip

    result.assert_outcomes(passed=1)
    judged = openai_server.chat_requests[before:]
    assert len(judged) == 1 and judged[0].structured and "It is Lyon." in judged[0].text


def test_judge_calls_replay_offline(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    """Recorded once, a judge check replays strictly: the same verdicts, no request."""
    judge(openai_server)
    recorded = labelled_run(pytester, openai_server, "--karenina-replay", "record")
    recorded.assert_outcomes(passed=4, failed=2)
    openai_server.reset()

    replayed = labelled_run(pytester, openai_server, "--karenina-replay", "strict")

    replayed.assert_outcomes(passed=4, failed=2)
    assert openai_server.requests == []
    assert HEALTH in replayed.stdout.str()


@pytest.mark.parametrize(
    ("labels", "message"),
    [("question_id,answer,verdict\nq1,Paris.,pass\nq9,Oslo.,fail\n",
      "labels.csv, line 3: question 'q9' is in none of capitals.jsonld"),
     ("question_id,answer,verdict\nq1,Paris.,pass\nq1,Paris.,fail\n",
      "labels.csv, line 3: duplicate label: the same answer to 'q1' as labels.csv, line 2"),
     ("question_id,answer,verdict\nq1,Paris.,yes\n",
      "labels.csv, line 2: verdict 'yes' is not pass or fail"),
     ("question_id,answer,verdict,field.capitol\nq1,Paris.,pass,Paris\n",
      "labels.csv, line 2: field 'capitol' is not a field of the template of question 'q1' "
      "(fields: capital)"),
     ("question_id,answer_ref,verdict\nq1,missing.json,pass\n",
      "labels.csv, line 2: cannot read "),
     ("question_id,answer,verdict,judge\nq1,Paris.,pass,x\n",
      "labels.csv, line 1: unknown column 'judge'")],
    ids=["unknown-question", "duplicate", "verdict", "unknown-field", "missing-answer",
         "unknown-column"],
)  # fmt: skip
def test_labels_that_do_not_fit_are_usage_errors(
    pytester: pytest.Pytester, openai_server: OpenAIServer, labels: str, message: str
) -> None:
    result = labelled_run(pytester, openai_server, labels=labels)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--karenina-judge-check: {message}" in result.stderr.str()
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--karenina-min-judge-kappa", "0.5"], "needs --karenina-judge-check LABELS"),
     (["--karenina-judge-check", "labels.csv", "--karenina-min-judge-kappa", "2"],
      "must be between -1 and 1")],
    ids=["without-labels", "out-of-range"],
)  # fmt: skip
def test_the_kappa_option_is_checked(
    pytester: pytest.Pytester, openai_server: OpenAIServer, args: list[str], message: str
) -> None:
    checkpoint = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(openai_server), *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--karenina-min-judge-kappa: {message}" in result.stderr.str()


@pytest.mark.subprocess
def test_the_html_report_has_a_judge_health_section(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    judge(openai_server)
    report = pytester.path / "report.html"
    result = labelled_run(pytester, openai_server, f"--html={report}", "--self-contained-html")
    result.assert_outcomes(passed=4, failed=2)

    dom = rendered_dom(pytester, report)
    assert '<div class="karenina-judge-health"><h2>Judge health</h2>' in dom
    section = dom.split('<div class="karenina-judge-health">', 1)[1].split("</div>", 1)[0]
    assert "<td>test-model</td><td>6</td><td>66.7% (4/6, 95% CI 30.0%-90.3%)</td>" in section
    assert "<td>0.25 (95% CI -0.56 to 1.00)</td>" in section
    assert "<td>test-model</td><td>capital</td><td>80.0% (4/5)</td>" in section
    assert "Disagreements (2)" in section
    assert "judge 'Kyoto', people 'Tokyo'" in section
