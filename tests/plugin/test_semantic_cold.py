"""SemanticMatch in a fresh process with a short template time limit (issue 23, item 2).

A cold ``import sentence_transformers`` takes seconds (minutes on a busy machine). Loaded
inside ``verify()``, under the template time limit, the first items timed out, the
interrupted import left torch half-initialised, later correct answers failed with
"partially initialized module 'torch'" and the process could die of SIGSEGV. A real
process is the point here: in-process the model would already be imported.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_karenina.checkpoint import Benchmark, Question, save_checkpoint
from tests.e2e.scripting import script
from tests.e2e.test_embedding import SEMANTIC_CASES, SEMANTIC_TEMPLATE, TEXTS
from tests.e2e.test_semantic_model_errors import offline_model  # noqa: F401 - fixture
from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

pytestmark = [pytest.mark.embedding, pytest.mark.subprocess]

UNNAMED_TEMPLATE = SEMANTIC_TEMPLATE.replace(
    "from karenina.schemas.primitives import SemanticMatch",
    "from karenina.schemas import primitives\n\n"
    "SIMILAR = getattr(primitives, 'Semantic' + 'Match')",
).replace("verify_with=SemanticMatch(", "verify_with=SIMILAR(")
"""The same check, built so that no text search finds it: the model loads inside verify()."""


def semantic_checkpoint(directory: Path, template: str = SEMANTIC_TEMPLATE) -> Path:
    """Two questions whose template checks ``capital`` with SemanticMatch: the scripted
    answer to the first is right ("paris"), to the second wrong ("Lyon")."""
    questions = [
        Question(id=case.question_id.replace(":", "_"), text=text, raw_answer="Paris",
                 template_code=template, finished=True)
        for case, text in zip(SEMANTIC_CASES, (TEXTS[0], TEXTS[2]), strict=True)
    ]  # fmt: skip
    path = directory / "semantic.jsonld"
    save_checkpoint(Benchmark(name="semantic-cold", questions=questions), path)
    return path


def run_cold(pytester: pytest.Pytester, server: OpenAIServer, path: Path) -> pytest.RunResult:
    """pytest in its own interpreter, template code limited to one second."""
    script(server, SEMANTIC_CASES)
    args = endpoint_args(server, "--karenina-template-timeout", "1")
    return pytester.runpytest_subprocess("--karenina", str(path), *args, timeout=900)


@pytest.mark.usefixtures("offline_model")
@pytest.mark.parametrize(
    "template", [SEMANTIC_TEMPLATE, UNNAMED_TEMPLATE], ids=["loaded-before", "loaded-in-verify"]
)
def test_semantic_match_in_a_cold_process_under_a_short_time_limit(
    pytester: pytest.Pytester, openai_server: OpenAIServer, template: str
) -> None:
    assert ("SemanticMatch" in template) is (template is SEMANTIC_TEMPLATE)
    result = run_cold(pytester, openai_server, semantic_checkpoint(pytester.path, template))
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, out  # one failure; a crash would be negative (SIGSEGV: -11)
    result.assert_outcomes(passed=1, failed=1)
    for symptom in ("partially initialized", "TemplateTimeout", "did not finish", "Fatal"):
        assert symptom not in out
    assert "Loading weights" not in out  # no progress bar, in an item's output or after the run


@pytest.mark.usefixtures("offline_model")
def test_the_embedding_check_loads_its_model_without_a_progress_bar(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """The embedding check loads the model in a pipeline thread while pytest captures some
    item's output: its "Loading weights" bar landed in the failing item's captured stderr."""
    for qid, (country, capital) in COUNTRIES.items():
        city = "Lyon" if qid == "q1" else capital
        openai_server.add_rule(f"It is {city}.", structured=False, contains=f"capital of {country}")
        openai_server.add_rule({"capital": city}, structured=True, contains=f"It is {city}.")
    path = capitals_checkpoint(pytester.path)
    args = endpoint_args(openai_server, "--karenina-embedding-check", "--karenina-results=r.json")
    result = pytester.runpytest_subprocess("--karenina", str(path), *args, timeout=900)

    out = result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2, failed=1)
    scores = re.findall(
        r'"embedding_similarity_score": ?([0-9.]+)', (pytester.path / "r.json").read_text()
    )
    assert len(scores) == 1  # the check ran on the failed answer: it loaded the model
    assert "Loading weights" not in out and "Captured stderr" not in out, out
