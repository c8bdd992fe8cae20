"""What a run needs is checked before its first pipeline starts: a missing API key or replay
store is one usage error naming it and how to give it, not an error on every question."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pytest_karenina.llm.providers import langchain_providers
from tests.e2e.scripting import API_KEY
from tests.plugin.plugin_helpers import capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer

MODEL = ["--karenina-answering-model", "openai:gpt-4.1-mini", "-p", "no:cacheprovider"]
LIVE = "  - openai:gpt-4.1-mini (answering, parsing) calls live ({why}) and has no API key: " \
    "set OPENAI_API_KEY"  # fmt: skip


def store_line(path: Path) -> None:
    """A store holding one (unrelated) recorded call."""
    path.write_text(json.dumps({"key": "0" * 64, "reply": {"text": "{}"}}) + "\n")


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def refused(result: pytest.RunResult) -> str:
    """The usage error of a run that never started a pipeline."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("ERROR: pytest-karenina: this run cannot start:") == 1
    assert "no recorded reply" not in result.stdout.str() + err
    assert "Missing credentials" not in result.stdout.str() + err
    return err


@pytest.mark.usefixtures("no_key")
@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["one-process", "n2"])
def test_no_key_and_no_store_is_one_usage_error(pytester: pytest.Pytester, dist: list[str]) -> None:
    """Under -n 2 too: the controller refuses the run before it starts a worker."""
    path = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(path), *MODEL, *dist)
    err = refused(result)
    assert (
        "  - openai:gpt-4.1-mini (answering, parsing) has no API key (set OPENAI_API_KEY), so "
        "replay is strict by default\n"
        "  - strict replay reads every call from capitals.replay.jsonl, which does not exist: "
        "record it with --karenina-replay record, or name another with "
        "--karenina-replay-store PATH"
    ) in err


@pytest.mark.usefixtures("no_key")
@pytest.mark.parametrize(
    ("mode", "why"),
    [("off", "--karenina-replay off"), ("record", "--karenina-replay record"),
     ("replay", "--karenina-replay replay, and no store to replay from")],
)  # fmt: skip
def test_live_calls_without_a_key_are_one_usage_error(
    pytester: pytest.Pytester, mode: str, why: str
) -> None:
    path = capitals_checkpoint(pytester.path)
    result = pytester.runpytest("--karenina", str(path), *MODEL, "--karenina-replay", mode)
    err = refused(result)
    assert LIVE.format(why=why) in err
    assert "  Or replay recorded calls instead of calling live: --karenina-replay strict" in err
    assert not (pytester.path / "capitals.replay.jsonl").exists()  # record wrote nothing


def test_only_key_names_are_shown(pytester: pytest.Pytester) -> None:
    """The canary key is set for OpenAI; the Google model lacks both of its variables."""
    path = capitals_checkpoint(pytester.path)
    google = ["--karenina-answering-model", "google_genai:gemini-2.5-flash"]
    result = pytester.runpytest(
        "--karenina", str(path), *google, "--karenina-parsing-model", "openai:gpt-4.1-mini",
        "--karenina-replay", "off", "-p", "no:cacheprovider",
    )  # fmt: skip
    err = refused(result)
    assert (
        "  - google_genai:gemini-2.5-flash (answering) calls live (--karenina-replay off) and "
        "has no API key: set GOOGLE_API_KEY or GEMINI_API_KEY"
    ) in err
    assert "gpt-4.1-mini" not in err  # its key is set
    assert API_KEY not in result.stdout.str() + err


def test_strict_replay_needs_a_store_with_calls(pytester: pytest.Pytester) -> None:
    path = capitals_checkpoint(pytester.path)
    args = ["--karenina", str(path), *MODEL, "--karenina-replay", "strict"]
    missing = refused(pytester.runpytest(*args))
    assert (
        "  - --karenina-replay strict reads every call from capitals.replay.jsonl, which does "
        "not exist: record it with --karenina-replay record, or name another with "
        "--karenina-replay-store PATH"
    ) in missing
    assert "API key" not in missing  # strict replay calls nothing live
    (pytester.path / "empty.jsonl").touch()
    empty = refused(pytester.runpytest(*args, "--karenina-replay-store=empty.jsonl"))
    assert "reads every call from empty.jsonl, which is empty" in empty


@pytest.mark.usefixtures("no_key")
def test_answers_mode_needs_the_answers_store_and_a_key_for_the_live_judge(
    pytester: pytest.Pytester,
) -> None:
    path = capitals_checkpoint(pytester.path)
    args = ["--karenina", str(path), *MODEL, "--karenina-replay", "answers"]
    err = refused(pytester.runpytest(*args))
    assert (
        "  - openai:gpt-4.1-mini (parsing) calls live (judge calls: --karenina-judge-replay off) "
        "and has no API key: set OPENAI_API_KEY\n"
        "  - --karenina-replay answers reads the answers from capitals.replay.jsonl, which does "
        "not exist: record it with --karenina-replay record, or name another with "
        "--karenina-replay-store PATH\n"
        "  Or replay the judge's recorded calls: --karenina-judge-replay strict"
    ) in err
    judged = refused(pytester.runpytest(*args, "--karenina-judge-replay", "strict"))
    assert "API key" not in judged
    assert (
        "  - --karenina-judge-replay strict reads the judge calls from "
        "capitals.judge.replay.jsonl, which does not exist: record it with "
        "--karenina-judge-replay record, or name another with --karenina-judge-replay-store PATH"
    ) in judged


@pytest.mark.usefixtures("no_key")
def test_runs_that_call_nothing_need_nothing(pytester: pytest.Pytester) -> None:
    """Collecting and estimating call no model: no key, and the estimate needs only a store."""
    path = capitals_checkpoint(pytester.path)
    listed = pytester.runpytest("--karenina", str(path), *MODEL, "--collect-only", "-q")
    assert listed.ret == pytest.ExitCode.OK
    assert "3 tests collected" in listed.stdout.str()
    store = pytester.path / "calls.jsonl"
    store_line(store)
    estimate = pytester.runpytest(
        "--karenina", str(path), *MODEL, "--karenina-estimate", f"--karenina-replay-store={store}"
    )
    assert estimate.ret == pytest.ExitCode.OK
    assert "cannot start" not in estimate.stderr.str()


@pytest.mark.usefixtures("no_key")
def test_endpoint_models_and_keys_in_a_preset_need_no_environment_key(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """An ``openai_endpoint`` model takes a key of its own or none; a LangChain model with
    ``extra_kwargs.api_key`` has its key, so its run is live, not strict by default."""
    openai_server.add_rule("It is Paris.", structured=False)
    openai_server.add_rule({"capital": "Paris"}, structured=True)
    path = capitals_checkpoint(pytester.path, {"q1": ("France", "Paris")})
    endpoint = pytester.runpytest("--karenina", str(path), *endpoint_args(openai_server))
    endpoint.assert_outcomes(passed=1)
    model = {"id": "keyed", "model_name": "test-model", "model_provider": "openai",
             "extra_kwargs": {"base_url": openai_server.base_url, "api_key": API_KEY}}  # fmt: skip
    preset = pytester.path / "preset.json"
    preset.write_text(json.dumps({"config": {"answering_models": [model],
                                             "parsing_models": [model]}}))  # fmt: skip
    keyed = pytester.runpytest(
        "--karenina", str(path), f"--karenina-config={preset}", "-p", "no:cacheprovider"
    )
    keyed.assert_outcomes(passed=1)
    keyed.stdout.fnmatch_lines(["karenina: *replay off*"])


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["one-process", "n2"])
def test_a_provider_typo_is_one_usage_error_with_a_suggestion(
    pytester: pytest.Pytester, dist: list[str]
) -> None:
    path = capitals_checkpoint(pytester.path)
    typo = ["--karenina-answering-model", "opnai:gpt-4.1-mini", "-p", "no:cacheprovider"]
    result = pytester.runpytest("--karenina", str(path), *typo, *dist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().splitlines()[0] == (
        "ERROR: pytest-karenina: model 'opnai:gpt-4.1-mini' (answering, parsing): unknown "
        "LangChain provider 'opnai'; did you mean 'openai' (openai:gpt-4.1-mini)?"
    )
    assert "\\n" not in result.stderr.str() and "Supported model providers" not in str(result)
    assert "cannot start" not in result.stderr.str()  # the typo, not a missing key


def test_every_model_is_resolved_before_the_run(pytester: pytest.Pytester) -> None:
    """Preset models too, in runs that only collect; an unknown name without a close one
    gets examples, not LangChain's whole list; a provider whose package is missing names it."""
    table = langchain_providers()
    assert table is not None
    absent = next((name for name, module in sorted(table.items())
                   if importlib.util.find_spec(module) is None and name != "ollama"),
                  None)  # fmt: skip
    if absent is None:
        pytest.skip("every LangChain provider package is installed")
    judge = {"id": "judge", "model_provider": "zzyzx", "model_name": "m"}
    answerer = {"id": "answerer", "model_provider": "openai", "model_name": "gpt-4.1-mini",
                "system_prompt": "Answer."}  # fmt: skip
    preset = pytester.path / "preset.json"
    preset.write_text(
        json.dumps({"config": {"answering_models": [answerer], "parsing_models": [judge]}})
    )
    path = capitals_checkpoint(pytester.path)
    result = pytester.runpytest(
        "--karenina", str(path), f"--karenina-config={preset}", "--collect-only",
        "--karenina-answering-model", f"{absent}:some-model", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    package = table[absent].replace("_", "-")
    assert result.stderr.lines[:3] == [
        "ERROR: pytest-karenina: models LangChain cannot build:",
        f"  - model '{absent}:some-model' (answering): provider '{absent}' needs the {package} "
        f"package (pip install {package})",
        "  - model 'judge' (parsing): unknown LangChain provider 'zzyzx' (providers are named as "
        "init_chat_model takes them, e.g. openai, anthropic, google_genai, mistralai, ollama: "
        "https://docs.langchain.com/oss/python/integrations/providers)",
    ]
