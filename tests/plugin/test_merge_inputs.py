"""``pytest-karenina merge`` and its inputs (issue 24, items 5 and 15): every field of a real
shard export, damaged or removed, is an error naming the file and the field (exit 4, no
traceback); unknown versions are refused; the merged export (and the baseline an update
writes) never replaces an input, a checkpoint, another kind of file or a device node."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from pytest_karenina.plugin.cli import main
from pytest_karenina.rubrics.traits import RegexTrait, Rubric
from tests.plugin.plugin_helpers import (
    CAPITAL_TEMPLATE,
    COUNTRIES,
    capitals_checkpoint,
    endpoint_args,
)
from tests.plugin.test_judge_check import LABELS, judge
from tests.support.openai_server import OpenAIServer

GRANULAR = (
    CAPITAL_TEMPLATE
    + """
    def verify_granular(self) -> float:
        return 1.0 if self.verify() else 0.25
"""
)
_EXPORTS: dict[str, bytes] = {}
"""Shard exports by name, made once per process: every case damages a copy."""
_JUDGED: dict[str, bytes] = {}
"""The export of a judge check, made once per process."""


def checkpoint(directory: Path) -> Path:
    """The capitals with a granular score and a regex rubric trait, so that every field of an
    item record holds a value (scores, rubric tallies and checks)."""
    rubric = Rubric(regex_traits=[RegexTrait(name="SaysIt", pattern="It is")])
    questions = [
        Question(id=qid, text=f"What is the capital of {country}?", raw_answer=capital,
                 template_code=GRANULAR.format(capital=capital), finished=True, rubric=rubric)
        for qid, (country, capital) in COUNTRIES.items()
    ]  # fmt: skip
    path = directory / "capitals.jsonld"
    save_checkpoint(Benchmark(name="capitals", questions=questions), path)
    return path


def shard_exports(pytester: pytest.Pytester, server: OpenAIServer) -> dict[str, bytes]:
    """``whole.json`` (shard 1/1), ``s1.json`` and ``s2.json`` (shards 1/2 and 2/2) of the
    capitals, run with a price table (costs) and the rubric; q2 answered wrong (a failed
    item, with its reason)."""
    if _EXPORTS:
        return _EXPORTS
    for qid, (country, capital) in COUNTRIES.items():
        city = "Milan" if qid == "q2" else capital
        server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    path = checkpoint(pytester.path)
    prices = pytester.path / "prices.txt"
    prices.write_text("test-model = 1 2\n")
    for name, shard in (("whole.json", "1/1"), ("s1.json", "1/2"), ("s2.json", "2/2")):
        pytester.runpytest(
            "--karenina", str(path), *endpoint_args(server), f"--karenina-shard={shard}",
            f"--karenina-results={name}", f"--karenina-prices={prices}",
            "--karenina-mode=template_and_rubric",
        )  # fmt: skip
        _EXPORTS[name] = (pytester.path / name).read_bytes()
    return _EXPORTS


@pytest.fixture
def judged(pytester: pytest.Pytester, openai_server: OpenAIServer) -> Path:
    """A fresh copy of ``judged.json``: the export of a judge check of the capitals (the labels
    of test_judge_check, two of which the judge gets wrong)."""
    if not _JUDGED:
        judge(openai_server)
        path = capitals_checkpoint(pytester.path)
        (pytester.path / "labels.csv").write_text(LABELS, encoding="utf-8")
        pytester.runpytest(
            "--karenina", str(path), *endpoint_args(openai_server),
            "--karenina-judge-check=labels.csv", "--karenina-results=judged.json",
        )  # fmt: skip
        _JUDGED["judged.json"] = (pytester.path / "judged.json").read_bytes()
    export = pytester.path / "judged.json"
    export.write_bytes(_JUDGED["judged.json"])
    return export


@pytest.fixture
def shards(pytester: pytest.Pytester, openai_server: OpenAIServer) -> tuple[Path, Path, Path]:
    """The three exports, fresh copies in the test's directory with the checkpoint."""
    found = shard_exports(pytester, openai_server)
    checkpoint(pytester.path)
    paths = tuple(pytester.path / name for name in ("whole.json", "s1.json", "s2.json"))
    for path in paths:
        path.write_bytes(found[path.name])
    return paths  # type: ignore[return-value]


def merge(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["merge", *(str(a) for a in args)])  # a traceback would fail the test here
    return code, capsys.readouterr().err


# Every field of a shard export (a ".N" is an index): Karenina's header, the run's settings,
# and one failed item's record with its result summary and rubric check. Values typed Any
# (a check's value, custom fields, field rows, verification_config) are not damaged; the
# results are Karenina's and go through the merge unread.
HEADER = [
    "format_version", "metadata", "metadata.export_timestamp", "metadata.karenina_version",
    "metadata.job_id", "metadata.verification_config", "metadata.job_summary",
    *(f"metadata.job_summary.{name}" for name in (
        "total_questions", "successful_count", "failed_count", "start_time", "end_time",
        "total_duration", "is_complete")),
    "shared_data", "shared_data.rubric_definition", "results", "pytest_karenina",
]  # fmt: skip
RUN = [
    "pytest_karenina.run", "pytest_karenina.items",
    *(f"pytest_karenina.run.{name}" for name in (
        "version", "checkpoints", "shard", "replicate_policy", "replicate_policy.kind",
        "replicate_policy.k", "compare_to", "min_pass_rate", "gate_on", "score_tolerance",
        "selection", "selection.collected", "selection.selected", "selection.digest",
        "selection.unchanged", "skipped", "other_failures", "cost_capped", "baseline_models",
        "baseline_fail_on", "judge_check", "min_judge_kappa")),
]  # fmt: skip
SUMMARY = [
    "category", "verify_result", "granular_score", "parsing_model", "deciding_stage", "reason",
    "regex", "overrides", "abstention_reasoning", "sufficiency_reasoning", "error",
    "input_tokens", "output_tokens", "raw_response", "rubric", "unquoted", "unquoted_traits",
    "excerpts", "risks", "deep_judgment_notes", "agent", "rubric_gates",
    *(f"rubric.0.{name}" for name in (
        "name", "kind", "gated", "passed", "bound", "reasoning", "error", "skipped",
        "lower_is_better")),
]  # fmt: skip
ITEM = [
    "version", "nodeid", "category", "question_id", "question", "answering_model", "replicate",
    "score", "input_tokens", "output_tokens", "rubric", "rubric.passed", "rubric.gated",
    "rubric.traits", "summaries", "results", "flaky", "replicates", "replicate_passes",
    "seconds", "cost", "unpriced", "outcome", "reason", "answers", "fingerprint", "judges",
    "flaky_sides", "stage_cost", "stage_cost.answer_generation", "stage_cost.parsing",
    *(f"fingerprint.{part}" for part in ("question", "template", "rubric", "judge", "prompts")),
    *(f"summaries.0.{name}" for name in SUMMARY),
]  # fmt: skip
FAILED_ITEM = "pytest_karenina.items.1"
"""q2 in ``whole.json``: the failed item, with a reason."""
FIELDS = HEADER + RUN + [f"{FAILED_ITEM}.{name}" for name in ITEM]
READING = [
    "judge", "outcome", "stage", "fields", "extraction",
    *(f"fields.0.{name}" for name in ("field", "agrees")),
]  # fmt: skip
JUDGED = [
    *(f"pytest_karenina.run.judge_check.{name}" for name in ("labels_file", "labels")),
    f"{FAILED_ITEM}.label_check",
    *(f"{FAILED_ITEM}.label_check.{name}" for name in (
        "label", "order", "source", "question_id", "people_pass", "readings", "answer",
        *(f"readings.0.{name}" for name in READING))),
]  # fmt: skip
"""The fields a judge check's export has besides :data:`FIELDS`: its labels file, and each
item's label check (in ``judged.json``, the item of q1's second label: people and the judge
read Lyon and fail it)."""
ANY = {"value", "custom_fields", "summaries.0.fields", "people", "parsed"}
"""Fields whose values may be anything (by name, or by the end of their path)."""
WHOLE = {"verification_config", "rubric_definition", "results", "extraction"}
"""Fields damaged as a whole (the merge compares or copies them, it does not read them)."""
OPTIONAL = {
    "shared_data", f"{FAILED_ITEM}.reason", f"{FAILED_ITEM}.fingerprint",
    f"{FAILED_ITEM}.answers", f"{FAILED_ITEM}.judges", f"{FAILED_ITEM}.flaky_sides",
    *(f"{FAILED_ITEM}.stage_cost{part}" for part in ("", ".answer_generation", ".parsing")),
    "pytest_karenina.run.baseline_models", "pytest_karenina.run.baseline_fail_on",
    "pytest_karenina.run.judge_check", "pytest_karenina.run.min_judge_kappa",
}  # fmt: skip
"""Fields a shard export may leave out (all but the first two: exports written before issue
26, or 30 for ``stage_cost``): the merge reads the others."""


def parts(field: str) -> list[str | int]:
    return [int(part) if part.isdigit() else part for part in field.split(".")]


def where(field: str) -> tuple[str, str]:
    """What the message must name: the item record (when the field is in one) and the field,
    as the message writes them."""
    rendered = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts(field))
    rendered = rendered.lstrip(".")
    prefix = "pytest_karenina.items[1]"
    if rendered.startswith(prefix + "."):
        return prefix, rendered[len(prefix) + 1 :]
    return "", rendered


def wrong(value: Any) -> Any:
    """A value of another type than ``value``'s."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 12345
    if isinstance(value, int | float):
        return "many"
    if value is None:
        return [{}]
    return "damaged"


def all_fields(node: Any, prefix: str = "") -> list[str]:
    """The field paths of ``node`` as :data:`FIELDS` writes them (of lists, the first entry;
    of the item records, the failed one)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if any(f".{prefix}{key}".endswith(f".{name}") for name in ANY):
                continue
            found.append(f"{prefix}{key}")
            if key not in WHOLE:
                found += all_fields(value, f"{prefix}{key}.")
    elif isinstance(node, list) and node and isinstance(node[0], dict):
        index = 1 if prefix == "pytest_karenina.items." else 0
        found += all_fields(node[index], f"{prefix}{index}.")
    return found


def test_the_fields_cover_a_real_shard_export(shards: tuple[Path, Path, Path]) -> None:
    """:data:`FIELDS` is every field of a shard export: a field the writer gains joins the
    damage test below."""
    document = json.loads(shards[0].read_bytes())
    assert sorted(all_fields(document)) == sorted(FIELDS)
    assert document["pytest_karenina"]["items"][1]["outcome"] == "failed"


def test_the_judged_fields_cover_a_judge_checks_export(judged: Path) -> None:
    """:data:`JUDGED` is every field a judge check's export adds to :data:`FIELDS`."""
    document = json.loads(judged.read_bytes())
    assert sorted(set(all_fields(document)) - set(FIELDS)) == sorted(JUDGED)
    assert document["pytest_karenina"]["items"][1]["label_check"]["readings"][0]["fields"]


def damage(export: Path, field: str, how: str) -> None:
    """Give ``field`` of ``export`` a value of another type, or remove it."""
    document = json.loads(export.read_bytes())
    *path, name = parts(field)
    parent = document
    for part in path:
        parent = parent[part]
    if how == "missing":
        del parent[name]
    else:
        parent[name] = wrong(parent[name])
    export.write_text(json.dumps(document))


def assert_refused(code: int, err: str, export: Path, field: str) -> None:
    assert code == pytest.ExitCode.USAGE_ERROR
    assert err.startswith(f"pytest-karenina merge: {export}: ") and err.count("\n") == 1
    record, named = where(field)
    assert record in err and named in err
    assert not export.with_name("m.json").exists()


@pytest.mark.parametrize("how", ["wrong type", "missing"])
@pytest.mark.parametrize("field", FIELDS)
def test_a_damaged_field_is_refused_naming_the_file_and_field(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], field: str, how: str
) -> None:
    """Issue 24 (item 15): 9 of 27 damaged fields gave a traceback naming no file."""
    export = shards[0]
    damage(export, field, how)

    code, err = merge(capsys, export.with_name("m.json"), export)

    if how == "missing" and field in OPTIONAL:
        assert (code, err) == (pytest.ExitCode.TESTS_FAILED, "")  # q2 failed
        return
    assert_refused(code, err, export, field)


@pytest.mark.parametrize("how", ["wrong type", "missing"])
@pytest.mark.parametrize("field", ["pytest_karenina.run.judge_check", *JUDGED])
def test_a_damaged_judge_check_field_is_refused_naming_the_file_and_field(
    judged: Path, capsys: pytest.CaptureFixture[str], field: str, how: str
) -> None:
    """A judge check's records too: a label check or labels file damaged or removed (which
    would drop a label from the judge health, or make the merge no judge check) is refused."""
    damage(judged, field, how)

    code, err = merge(capsys, judged.with_name("m.json"), judged)

    assert_refused(code, err, judged, field)


def test_a_label_nothing_judged_has_no_label_check(
    judged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The item of a label whose xdist worker died is an error without a label check."""
    document = json.loads(judged.read_bytes())
    item = document["pytest_karenina"]["items"][1]
    del item["label_check"]
    item.update(category="error:worker_crashed", summaries=[], outcome="failed")
    judged.write_text(json.dumps(document))

    code, err = merge(capsys, judged.with_name("m.json"), judged)

    assert (code, err) == (pytest.ExitCode.TESTS_FAILED, "")


def test_a_label_check_in_a_run_that_checks_no_judge_is_refused(
    shards: tuple[Path, Path, Path], judged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = shards[0]
    document = json.loads(export.read_bytes())
    check = json.loads(judged.read_bytes())["pytest_karenina"]["items"][1]["label_check"]
    document["pytest_karenina"]["items"][1]["label_check"] = check
    export.write_text(json.dumps(document))

    code, err = merge(capsys, export.with_name("m.json"), export)

    assert_refused(code, err, export, f"{FAILED_ITEM}.label_check")
    assert "the run is no judge check (pytest_karenina.run.judge_check is missing or null)" in err


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("format_version", "2.3", "format_version '2.3' is not one this version reads ('2.2')"),
        ("pytest_karenina.run.version", 2,
         "pytest_karenina.run.version 2 is not one this version reads (1)"),
        ("pytest_karenina.run.version", True,
         "pytest_karenina.run.version True is not one this version reads (1)"),
        ("pytest_karenina.items.0.version", 3,
         "pytest_karenina.items[0].version 3 is not one this version reads (2)"),
    ],
)  # fmt: skip
def test_an_unknown_version_is_refused(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], field: str, value: Any,
    message: str,
) -> None:  # fmt: skip
    """Issue 24 (item 15): an unknown export version was accepted."""
    export = shards[0]
    document = json.loads(export.read_bytes())
    *path, name = parts(field)
    parent = document
    for part in path:
        parent = parent[part]
    parent[name] = value
    export.write_text(json.dumps(document))

    code, err = merge(capsys, export.with_name("m.json"), export)

    assert code == pytest.ExitCode.USAGE_ERROR
    assert f"pytest-karenina merge: {export}: {message}" in err


def device(path: Path, kind: str) -> Path:
    """A character device node (the null device's numbers) or a FIFO at ``path``."""
    if kind == "FIFO":
        os.mkfifo(path)
        return path
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD (root)")
    return path


def test_the_merged_export_never_replaces_a_shard(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24 (item 5): ``merge s1.json s1.json s2.json`` overwrote shard 1."""
    _, s1, s2 = shards
    before = s1.read_bytes()
    linked = s1.with_name("linked.json")
    os.link(s1, linked)

    for out in (s1, linked):
        code, err = merge(capsys, out, s1, s2)
        assert code == pytest.ExitCode.USAGE_ERROR
        assert f"pytest-karenina merge: OUT.json {out}: that is an input of this merge" in err
    assert s1.read_bytes() == before


def test_the_merged_export_never_replaces_a_checkpoint(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24 (item 5): ``merge b.jsonld out.json`` overwrote the checkpoint."""
    _, s1, s2 = shards
    bench = s1.with_name("capitals.jsonld")
    before = bench.read_bytes()

    code, err = merge(capsys, bench, s1, s2)

    assert code == pytest.ExitCode.USAGE_ERROR
    assert f"OUT.json {bench}: the file exists and is not a results export" in err
    assert bench.read_bytes() == before


@pytest.mark.parametrize("kind", ["character device", "FIFO"])
def test_the_merged_export_never_replaces_a_device_node(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """Issue 24 (item 5): merging onto a device file replaced the device node. A node made
    in the test's directory stands for ``/dev/null``: as root, a merge that went wrong would
    have replaced the system's own."""
    _, s1, s2 = shards
    node = device(s1.with_name("node"), kind)
    mode = node.lstat().st_mode

    code, err = merge(capsys, node, s1, s2)

    assert code == pytest.ExitCode.USAGE_ERROR
    assert f"OUT.json {node}: that is a {kind}, not a regular file" in err
    assert node.lstat().st_mode == mode
    assert [p.name for p in node.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--baseline", "{s1}", "--baseline-update"],
         "--baseline {s1}: that is an input of this merge"),
        (["--baseline", "{out}", "--baseline-update"],
         "OUT.json {out}: that is the --baseline file"),
        (["--baseline", "{out}"], "OUT.json {out}: that is the --baseline file"),
    ],
    ids=["baseline onto a shard", "baseline onto the merged export", "merged onto the baseline"],
)  # fmt: skip
def test_the_outputs_never_replace_each_other_or_a_shard(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], options: list[str],
    message: str,
) -> None:  # fmt: skip
    _, s1, s2 = shards
    out = s1.with_name("merged.json")
    before = s1.read_bytes()
    filled = [option.format(s1=s1, out=out) for option in options]

    code, err = merge(capsys, out, s1, s2, *filled)

    assert code == pytest.ExitCode.USAGE_ERROR
    assert message.format(s1=s1, out=out) in err
    assert s1.read_bytes() == before and not out.exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--score-tolerance=nan", "expected a finite number of at least 0, got 'nan'"),
        ("--score-tolerance=-1", "expected a finite number of at least 0, got '-1'"),
        ("--min-pass-rate=nan", "expected a finite number from 0 to 1, got 'nan'"),
        ("--min-pass-rate=1.5", "expected a finite number from 0 to 1, got '1.5'"),
    ],
)  # fmt: skip
def test_gate_settings_are_finite_numbers(
    shards: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], option: str,
    message: str,
) -> None:  # fmt: skip
    """A NaN tolerance never sees a score drop (the pytest options refuse it already)."""
    _, s1, s2 = shards
    with pytest.raises(SystemExit) as stopped:
        main(["merge", str(s1.with_name("m.json")), str(s1), str(s2), option])
    assert stopped.value.code == pytest.ExitCode.USAGE_ERROR
    assert f"argument {option.split('=')[0]}: {message}" in capsys.readouterr().err
