"""The conftest.py hooks: custom stages (the seed's WordCountCheck), custom adapters."""

from __future__ import annotations

import json

import pytest

from tests.plugin.plugin_helpers import copy_checkpoint, endpoint_args, scripted
from tests.support.openai_server import OpenAIServer

STAGES_CONFTEST = '''
from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, VerificationContext

SEEN = []


class WordCountCheckStage(BaseVerificationStage):
    """Fail verification if the response is too short (seed "Writing Custom Stages")."""

    def __init__(self, min_words: int = 10):
        self.min_words = min_words

    @property
    def name(self):
        return "WordCountCheck"

    @property
    def requires(self):
        return [ArtifactKeys.RAW_LLM_RESPONSE]

    @property
    def produces(self):
        return ["word_count", "word_count_passed"]

    def should_run(self, context: VerificationContext) -> bool:
        if not super().should_run(context):
            return False
        return context.has_artifact(ArtifactKeys.RAW_LLM_RESPONSE)

    def execute(self, context: VerificationContext) -> None:
        words = len(context.get_artifact(ArtifactKeys.RAW_LLM_RESPONSE).split())
        passed = words >= self.min_words
        context.set_artifact("word_count", words)
        context.set_artifact("word_count_passed", passed)
        context.set_result_field("word_count", words)
        if not passed:
            context.set_artifact(ArtifactKeys.VERIFY_RESULT, False)
            context.set_result_field(ArtifactKeys.VERIFY_RESULT, False)


def pytest_karenina_modify_stages(item, stages):
    at = next(i for i, s in enumerate(stages) if s.name == "VerifyTemplate")
    stages.insert(at + 1, WordCountCheckStage(min_words=10))


def pytest_karenina_verification_result(item, result):
    SEEN.append(item.name)


def pytest_sessionfinish(session):
    print("results observed:", sorted(SEEN))
'''


def test_conftest_stage_runs_in_every_pipeline(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    pytester.makeconftest(STAGES_CONFTEST)
    path = copy_checkpoint(pytester)
    export = pytester.path / "results.json"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server), "-s",
        f"--karenina-results={export}",
    )  # fmt: skip
    # The raw response carries the 4-word "--- AI Message ---" header: mq001 (5 more words)
    # now fails, mq003 (6 more) still passes.
    result.assert_outcomes(passed=1, failed=3, skipped=1)
    assert "results observed: ['mq001', 'mq002', 'mq003', 'mq004']" in result.stdout.str()
    # Seed 002: the stage's result field is in the result, the export and the explanation.
    result.stdout.fnmatch_lines(["*question mq001*", "*word_count (custom stage): 9*"])
    counts = {
        r["metadata"]["question_id"].rsplit(":", 1)[-1]: r["custom_fields"]["word_count"]
        for r in json.loads(export.read_text())["results"]
    }
    assert counts == {"mq001": 9, "mq002": 10, "mq003": 10, "mq004": 10}


def test_invalid_stage_list_errors_each_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    pytester.makeconftest(
        """
def pytest_karenina_modify_stages(item, stages):
    del stages[-1]  # FinalizeResult
"""
    )
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))
    result.assert_outcomes(errors=4, skipped=1)
    result.stdout.fnmatch_lines(["*pytest_karenina_modify_stages left an invalid stage list*"])
    assert openai_server.chat_requests == []


ADAPTER_CONFTEST = """
import json
from pytest_karenina.llm.ports import ModelReply, Usage

ANSWERS = {"boiling point": ("Water boils at 100 degrees.", {"temperature": 100}),
           "Romeo": ("Shakespeare wrote it.", {"author": "William Shakespeare"}),
           "primary colors": ("Red, green and blue.", {"colors": ["red", "green", "blue"]}),
           "gold": ("Gold is Au.", {"symbol": "Au"})}


class Scripted:
    replay_identity = {"adapter": "conftest", "model": "scripted"}

    def invoke(self, request):
        text = "\\n".join(m.content for m in request.messages)
        for key, (answer, parsed) in ANSWERS.items():
            if key in text:
                reply = json.dumps(parsed) if request.call_kind == "parsing" else answer
                return ModelReply(reply, Usage(3, 2), "scripted")
        raise AssertionError(text)


def pytest_karenina_make_adapter(config, model):
    return Scripted()
"""


def test_adapter_hook_replaces_the_model(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(ADAPTER_CONFTEST)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest(
        "--karenina", str(path), "--karenina-answering-model", "openai:not-called"
    )
    result.assert_outcomes(passed=4, skipped=1)
    result.stdout.fnmatch_lines(["tokens: 24 in, 16 out"])  # 2 calls per question


LOGGING_CONFTEST = """
import logging

import pytest
from pytest_karenina.pipeline import BaseVerificationStage


class LoudStage(BaseVerificationStage):
    name = "Loud"
    requires = []
    produces = []

    def should_run(self, context):
        return True

    def execute(self, context):
        logging.getLogger("bench").warning("pipeline of %s", context.question_id)


def pytest_karenina_modify_stages(item, stages):
    stages.insert(0, LoudStage())


CAPTURED = {}


def pytest_runtest_logreport(report):
    if report.when == "setup":
        CAPTURED[report.nodeid.rsplit("::", 1)[-1]] = report.caplog


def pytest_sessionfinish(session):
    for name, text in sorted(CAPTURED.items()):
        seen = [line.split("pipeline of ")[-1] for line in text.splitlines()]
        print(f"LOG {name}: {' | '.join(seen)}")
"""


def test_each_pipelines_log_records_land_under_its_own_item(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    scripted(openai_server)
    pytester.makeconftest(LOGGING_CONFTEST)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-s")

    result.assert_outcomes(passed=2, failed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [f"*LOG mq00{i}: urn:karenina:test:mq00{i}" for i in range(1, 5)] + ["LOG mq005: "]
    )


def test_a_conftest_written_against_kareninas_stage_api_runs_unchanged(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """Seed 002's import paths resolve while the run is configured, and leave with it."""
    import sys

    scripted(openai_server)
    karenina_paths = STAGES_CONFTEST.replace(
        "from pytest_karenina.pipeline import ArtifactKeys, BaseVerificationStage, "
        "VerificationContext",
        "from karenina.benchmark.verification.stages.core.base import (\n"
        "    ArtifactKeys, BaseVerificationStage, VerificationContext,\n)\n"
        "from karenina.benchmark.verification.stages.core.orchestrator import StageOrchestrator",
    )
    assert "core.base import" in karenina_paths
    pytester.makeconftest(karenina_paths)
    path = copy_checkpoint(pytester)
    result = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server), "-s")
    result.assert_outcomes(passed=1, failed=3, skipped=1)  # the stage ran, as above
    assert not any(name.startswith("karenina") for name in sys.modules)
