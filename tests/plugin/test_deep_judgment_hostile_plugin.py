"""Template deep judgment through pytest over real HTTP with a hostile judge (issue 24, items
10 and 16): an invented sentence containing the short answer does not ground it, and a reply
of 10,000 entries is read, resent and printed only up to the maximum."""

from __future__ import annotations

import json

import pytest

from tests.e2e.cases import CHECKPOINT_CASES
from tests.plugin.plugin_helpers import MULTI, copy_checkpoint, endpoint_args, scripted
from tests.plugin.test_deep_judgment_plugin import script_deep_judgment
from tests.support.openai_server import OpenAIServer

CASES = {case.question_id.rsplit(":", 1)[-1]: case for case in CHECKPOINT_CASES[MULTI]}


def test_a_hostile_judge_neither_grounds_an_invented_quote_nor_floods_the_run(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    water, shakespeare = CASES["mq001"], CASES["mq003"]
    invented = f"Napoleon measured that {water.answer} on Mars in 1802, the archives say."
    openai_server.add_rule(
        json.dumps({"temperature": [{"text": invented, "confidence": "high"}]}),
        contains=["<response_to_analyze>", water.answer], structured=False, name="invented",
    )  # fmt: skip
    flood = [{"text": f"Invented claim number {n}.", "confidence": "high"} for n in range(10_000)]
    openai_server.add_rule(
        json.dumps({"author": flood}),
        contains=["<response_to_analyze>", shakespeare.answer], structured=False, name="flood",
    )  # fmt: skip
    script_deep_judgment(openai_server)
    scripted(openai_server)

    result = pytester.runpytest(
        "--karenina", str(copy_checkpoint(pytester)), *endpoint_args(openai_server),
        "--karenina-deep-judgment=full", "--karenina-max-retries=0",
    )  # fmt: skip

    # mq001 passed before: its "quote" contains the whole answer, so it was accepted at 1.0.
    result.assert_outcomes(failed=4, skipped=1)
    result.stdout.fnmatch_lines([
        "*question mq001*",
        "*decided by DeepJudgmentAutoFail*",
        f'*deep judgment: no verbatim quote for temperature; rejected "{invented}" '
        "(similarity 0.* < 0.80)",
    ])  # fmt: skip
    (flooded,) = [line for line in result.outlines if "no verbatim quote for author;" in line]
    assert flooded.endswith("; 9,997 more entries of the reply not read")
    assert flooded.count("Invented claim number") == 3 and len(flooded) < 1_000
    asked = [r for r in openai_server.chat_requests if r.rule == "flood"]
    assert len(asked) == 3  # the first ask and two retries
    grown = len(asked[-1].text) - len(asked[0].text)
    assert grown < 5_000  # each reply was 490 KB; two went back, bounded
