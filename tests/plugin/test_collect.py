"""Collection: node ids, variants, selection, unfinished questions, broken input."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import DATA
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer


def test_node_ids_carry_model_and_replicate_when_there_are_several(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-replicates", "2", "--collect-only", "-q")
    result = pytester.runpytest("--karenina", str(path), *args)
    result.stdout.fnmatch_lines([
        "multi_question.jsonld::mq001[[]test-model-r1]",
        "multi_question.jsonld::mq001[[]test-model-r2]",
        "multi_question.jsonld::mq002[[]test-model-r1]",
    ])  # fmt: skip
    assert "10 tests collected" in result.stdout.str()


def test_path_and_name_select_every_variant_and_k_matches_keywords(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-replicates", "2", "--collect-only", "-q")
    picked = pytester.runpytest("--karenina", str(path), f"{path.name}::mq003", *args)
    picked.stdout.fnmatch_lines(["*mq003[[]test-model-r1]", "*mq003[[]test-model-r2]"])
    assert "2 tests collected" in picked.stdout.str()
    by_model = pytester.runpytest("--karenina", str(path), "-k", "test-model and mq004", *args)
    assert "2/10 tests collected (8 deselected)" in by_model.stdout.str()
    marked = pytester.runpytest("--karenina", str(path), "-m", "not karenina", *args)
    assert "no tests collected (10 deselected)" in marked.stdout.str()


def test_last_failed_reruns_only_the_failures(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    args = [a for a in endpoint_args(openai_server) if a not in ("-p", "no:cacheprovider")]
    args += ["--karenina-replicates", "2"]
    pytester.runpytest("--karenina", str(path), *args).assert_outcomes(
        passed=4, failed=4, skipped=2
    )
    again = pytester.runpytest("--karenina", str(path), "--lf", *args)
    again.assert_outcomes(failed=4)
    assert "run-last-failure: rerun previous 4 failures" in again.stdout.str()


def test_unfinished_questions_run_on_request(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--collect-only", "-q", "-rs")
    result = pytester.runpytest("--karenina", str(path), "--karenina-include-unfinished", *args)
    assert "5 tests collected" in result.stdout.str()


def test_broken_checkpoint_is_one_collection_error(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    data = json.loads((DATA / "multi_question.jsonld").read_text())
    del data["dataFeedElement"][1]["item"]["text"]
    broken = pytester.path / "broken.jsonld"
    broken.write_text(json.dumps(data))
    result = pytester.runpytest("--karenina", str(broken), *endpoint_args(openai_server))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broken.jsonld*", "*text*"])


def test_broken_template_errors_only_its_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    data = json.loads((DATA / "multi_question.jsonld").read_text())
    data["dataFeedElement"][0]["item"]["hasPart"]["text"] = (
        "class Answer(BaseAnswer):\n    x: int ="
    )
    path = pytester.path / "multi_question.jsonld"
    path.write_text(json.dumps(data))
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))
    result.assert_outcomes(passed=1, failed=2, errors=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of question mq001*",
            "error in validate_template (template_validation): Template validation failed:*",
            "ERROR *::mq001 - PipelineError: error in validate_templat*",
        ]
    )


@pytest.mark.subprocess
def test_plugin_is_inert_without_checkpoints(pytester: pytest.Pytester) -> None:
    shutil.copy(DATA / "multi_question.jsonld", pytester.path / "bench.jsonld")
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    probe = pytester.makepyfile(
        probe="import sys\n\ndef test_light():\n"
        "    assert 'pytest_karenina.pipeline' not in sys.modules\n"
        "    assert 'langchain_core' not in sys.modules\n"
    )
    # A fresh interpreter: this process has imported everything already.
    pytester.runpytest_subprocess(str(probe)).assert_outcomes(passed=1)


def test_karenina_option_takes_a_node_id(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--collect-only", "-q")
    result = pytester.runpytest("--karenina", f"{path}::mq002", *args)
    assert "1 test collected" in result.stdout.str()
    result.stdout.fnmatch_lines(["multi_question.jsonld::mq002"])


def test_deselect_drops_one_variant(pytester: pytest.Pytester, openai_server: OpenAIServer) -> None:
    path = copy_checkpoint(pytester)
    args = endpoint_args(openai_server, "--karenina-replicates", "2", "--collect-only", "-q")
    result = pytester.runpytest(
        "--karenina", str(path), "--deselect", f"{path.name}::mq002[test-model-r2]", *args
    )
    assert "9/10 tests collected (1 deselected)" in result.stdout.str()
    assert "mq002[test-model-r2]" not in result.stdout.str()


def test_a_checkpoint_outside_the_project_keeps_the_projects_configuration(
    pytester: pytest.Pytester, openai_server: OpenAIServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:  # fmt: skip
    scripted(openai_server)
    elsewhere = tmp_path_factory.mktemp("benchmarks") / MULTI
    shutil.copy(DATA / MULTI, elsewhere)
    pytester.makepyprojecttoml(
        f"""
        [tool.pytest.ini_options]
        karenina_endpoint = "{openai_server.base_url}"
        karenina_answering_model = ["test-model"]
        """
    )

    # As a separate argument pytest takes the path for a test path and reads no project
    # configuration: the run stops and says how to run it.
    stopped = pytester.runpytest("--karenina", str(elsewhere), "-p", "no:cacheprovider")
    assert stopped.ret == pytest.ExitCode.USAGE_ERROR
    stopped.stderr.fnmatch_lines([f"*Write --karenina={elsewhere} (with '='*or pass -c *"])

    result = pytester.runpytest(f"--karenina={elsewhere}", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines([f"PASSED {MULTI}::mq001"])


def test_question_ids_that_slug_alike_keep_an_item_each(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    data = json.loads((DATA / MULTI).read_text(encoding="utf-8"))
    elements = data["dataFeedElement"][:3]
    for element, question_id in zip(elements, ["urn:x:Q1", "urn:x:q1", "urn:x:q1-2"], strict=True):
        element["@id"] = question_id
    data["dataFeedElement"] = elements
    path = pytester.path / "colliding.jsonld"
    path.write_text(json.dumps(data), encoding="utf-8")

    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "--co", "-q"
    )

    names = [line.split("::")[1] for line in result.stdout.lines if "::" in line]
    assert len(names) == 3 == len(set(names)), names
    assert names[0] == "q1" and names[2] == "q1-2"


def test_collect_only_of_a_large_checkpoint_freezes_the_heap(pytester: pytest.Pytester) -> None:
    """Without a run loop the heap is settled after collection, so that pytest's and the
    interpreter's collections at exit skip the items (seconds at 50,000 questions)."""
    from pytest_karenina.plugin.run.heap import SETTLE_FROM_ITEMS
    from tests.support.fault_matrix import write_checkpoint

    path = write_checkpoint(pytester.path / "large.jsonld", SETTLE_FROM_ITEMS)
    pytester.makeconftest(
        """
import gc

def pytest_collection_modifyitems(items):
    print(f"frozen before: {gc.get_freeze_count()}")

def pytest_sessionfinish(session):
    print(f"frozen after: {gc.get_freeze_count()}")
"""
    )
    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
        "--collect-only", "-q", "-s",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    counts = {
        line.split(":")[0]: int(line.split(": ")[1])
        for line in result.stdout.lines
        if line.startswith("frozen ")
    }
    assert counts["frozen after"] > counts["frozen before"] + SETTLE_FROM_ITEMS


def test_collection_freezes_a_large_checkpoints_items_with_the_collector_on(
    pytester: pytest.Pytester,
) -> None:
    """The questions and items of a large checkpoint are built with the collector paused and
    frozen as soon as they are made: no later pass walks them, in collection or after."""
    from pytest_karenina.plugin.run.heap import SETTLE_FROM_ITEMS
    from tests.support.fault_matrix import write_checkpoint

    path = write_checkpoint(pytester.path / "large.jsonld", SETTLE_FROM_ITEMS)
    pytester.makeconftest(
        """
import gc

def pytest_collection(session):
    print(f"frozen at start: {gc.get_freeze_count()}")

def pytest_collection_modifyitems(items):
    print(f"frozen when collected: {gc.get_freeze_count()} enabled: {gc.isenabled()}")
"""
    )
    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-answering-model", "openai:gpt-4.1-mini",
        "--collect-only", "-q", "-s",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    start = int(result.stdout.str().split("frozen at start: ")[1].split()[0])
    line = result.stdout.str().split("frozen when collected: ")[1].splitlines()[0]
    collected, _, enabled = line.split()
    assert int(collected) > start + SETTLE_FROM_ITEMS
    assert enabled == "True"
