"""Secrets never reach an artifact: the replay store, the results export, JUnit, the HTML
report, the log file or the terminal, even when the provider quotes the key in an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.e2e.scripting import API_KEY
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted
from tests.support.openai_rules import Fault
from tests.support.openai_server import OpenAIServer

TOKEN = "tok-canary-7c41e9d02b5f"
SECRET = "sec-canary-31aa9f6e0d77"


def test_no_artifact_of_a_run_holds_a_secret(
    pytester: pytest.Pytester, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", TOKEN)
    monkeypatch.setenv("BILLING_SECRET", SECRET)
    # mq002 is refused the way OpenAI refuses a bad key: quoting it back.
    colors = next(c for c in CHECKPOINT_CASES[MULTI] if c.question_id.endswith("mq002"))
    openai_server.add_rule(
        Fault.http_error(401, f"Incorrect API key provided: {API_KEY}. Also {TOKEN} {SECRET}"),
        last_contains=colors.asks,
    )
    # mq001 is answered, echoing every secret in the answer the judge and reports see.
    boiling = next(c for c in CHECKPOINT_CASES[MULTI] if c.question_id.endswith("mq001"))
    openai_server.add_rule(
        f"{boiling.answer} (debug: {API_KEY} {TOKEN} {SECRET})", last_contains=boiling.asks,
        structured=False,
    )  # fmt: skip
    scripted(openai_server)
    path = copy_checkpoint(pytester)
    out = pytester.path / "out"
    result = pytester.runpytest(
        "--karenina", str(path), *endpoint_args(openai_server),
        "--karenina-replay", "record", f"--karenina-replay-store={out / 'store.jsonl'}",
        f"--karenina-results={out / 'results.json'}", f"--junitxml={out / 'junit.xml'}",
        f"--html={out / 'report.html'}", "--self-contained-html", "--karenina-html-trace=all",
        f"--log-file={out / 'run.log'}", "--log-file-level=DEBUG", "-rA",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*auth error, not retried*Incorrect API key provided: ****"])

    artifacts = sorted(p for p in out.rglob("*") if p.is_file())
    names = {p.name for p in artifacts}
    assert {"store.jsonl", "results.json", "junit.xml", "report.html", "run.log"} <= names
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in artifacts}
    texts[Path("stdout")] = result.stdout.str()
    texts[Path("stderr")] = result.stderr.str()
    for where, text in texts.items():
        for secret in (API_KEY, TOKEN, SECRET):
            assert secret not in text, f"{secret} leaked into {where}"
    # The artifacts are not empty of what they should hold: the refusal is reported.
    assert "Incorrect API key provided" in texts[out / "junit.xml"]
    assert "Incorrect API key provided" in texts[out / "results.json"]
