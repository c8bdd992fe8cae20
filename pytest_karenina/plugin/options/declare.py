"""Command-line options and their ini twins.

Imports only pytest, the standard library and the ``Literal`` value sets of
:mod:`pytest_karenina.config.choices`: every pytest run of the environment loads this.
Every option but ``--karenina`` is ``--karenina-<name>`` with ``dest`` and ini key
``karenina_<name>``; CLI defaults are None so that :mod:`pytest_karenina.plugin.options.settings`
can tell "not given" from a value and apply CLI > ini > preset > defaults. An option with
choices takes them from a ``Literal`` type, the one source of its values.
"""

from __future__ import annotations

from typing import Literal, get_args

import pytest

from pytest_karenina.config.choices import (
    DeepJudgmentMode,
    DeepJudgmentRubricMode,
    EvaluationMode,
    FlakyMode,
    GateOn,
    ReplayMode,
    RubricStrategy,
    RunReplayMode,
    SupportedInterface,
)
from pytest_karenina.plugin.options.ci_declare import CI_OPTIONS
from pytest_karenina.plugin.options.spec import BOOL_WORDS, Option, parse_bool
from pytest_karenina.plugin.options.workers import WORKERS

__all__ = ["BOOL_WORDS", "OPTIONS", "HtmlTrace", "Option", "add_options", "parse_bool"]

HtmlTrace = Literal["failed", "all", "none"]
"""Which items carry their trace in the pytest-html report."""


CORE_OPTIONS: tuple[Option, ...] = (
    Option("config", "Karenina preset JSON with the verification config", metavar="PRESET"),
    Option(
        "answering-model",
        "Answering model: provider:model as init_chat_model takes it, or a preset model id "
        "(repeatable)",
        "linelist",
        "MODEL",
    ),
    Option("parsing-model", "Judge (parsing) model, same forms (repeatable)", "linelist", "MODEL"),
    Option("interface", "Model interface", metavar="NAME", choices=get_args(SupportedInterface)),
    Option(
        "endpoint",
        "Base URL of an OpenAI-compatible server (implies openai_endpoint)",
        metavar="URL",
    ),
    Option("mode", "Evaluation mode", metavar="MODE", choices=get_args(EvaluationMode)),
    Option("replicates", "Runs per question and answering model", metavar="N"),
    Option(
        "replicate-policy",
        "How replicates make a verdict: each (an item per replicate, default), all, "
        "majority, at-least:K, pass@K",
        metavar="POLICY",
    ),
    Option(
        "judge-replicates",
        "Times each parsing model judges each answer (default 1); a majority of them decides "
        "the answer's verdict",
        metavar="K",
    ),
    Option(
        "shard",
        "Run only shard I of N of the questions (by question id hash), for a CI matrix",
        metavar="I/N",
    ),
    Option(
        "compare-to",
        "With several answering models: the reference model of the paired comparison",
        metavar="MODEL",
    ),
    Option(
        "flaky",
        "What an item whose replicates disagree counts as: policy (default), pass, fail",
        metavar="MODE",
        choices=get_args(FlakyMode),
    ),
    Option("abstention", "Detect refusals (abstention check)", "bool", "yes|no"),
    Option(
        "sufficiency", "Check that the response holds what the template needs", "bool", "yes|no"
    ),
    Option("embedding-check", "Rescue failed answers by embedding similarity", "bool", "yes|no"),
    Option(
        "embedding-check-model",
        "Sentence-transformers model of the embedding check",
        metavar="NAME",
    ),
    Option("embedding-check-threshold", "Similarity threshold of the embedding check", metavar="X"),
    Option("concurrency", "Pipelines run at once in each process (default 8)", metavar="N"),
    WORKERS,
    Option(
        "batch",
        "Send batchable LLM calls through the provider's batch API (half price, minutes to "
        "hours of latency; see docs/batch.md)",
        "bool",
        "yes|no",
    ),
    Option(
        "batch-wait",
        "Seconds a call waits for its batch (default: the provider's completion window)",
        metavar="SECONDS",
    ),
    Option("batch-poll", "Seconds between two polls of a batch (default 15)", metavar="SECONDS"),
    Option(
        "replay",
        "Record/replay of LLM calls (default off; strict when a model's API key is missing); "
        "answers: answering calls strictly from the store, judge calls live",
        metavar="MODE",
        choices=get_args(RunReplayMode),
    ),
    Option(
        "replay-store", "Replay store file (default: <checkpoint>.replay.jsonl)", metavar="PATH"
    ),
    Option(
        "judge-replay",
        "With --karenina-replay answers: record/replay of the judge calls in a store of their "
        "own (default off: live; replay when --karenina-judge-replay-store is given)",
        metavar="MODE",
        choices=get_args(ReplayMode),
    ),
    Option(
        "judge-replay-store",
        "The judge calls' store (default: <checkpoint>.judge.replay.jsonl)",
        metavar="PATH",
    ),
    Option(
        "replay-prune",
        "At the end of a complete run, drop replay entries the run did not use",
        "bool",
        "yes|no",
    ),
    Option(
        "workspace-root",
        "Agentic parsing: where question workspaces live (default: each checkpoint's directory)",
        metavar="PATH",
    ),
    Option(
        "results",
        "Stream results to PATH and finish it as a Karenina export (format 2.2)",
        metavar="PATH",
    ),
    Option(
        "html-trace",
        "Traces in the pytest-html report (default failed)",
        metavar="WHICH",
        choices=get_args(HtmlTrace),
    ),
    Option(
        "include-unfinished",
        "Run questions marked finished: false instead of skipping",
        "bool",
        "yes|no",
    ),
    Option("min-pass-rate", "Exit 0 when at least this share of items passed (0-1)", metavar="R"),
    Option(
        "gate-on",
        "What --karenina-min-pass-rate compares: the pass rate (point, default) or the lower "
        "bound of its 95 percent interval (lower)",
        metavar="WHAT",
        choices=get_args(GateOn),
    ),
    Option(
        "judge-check",
        "Run only the judge on the answers of a labels file (CSV or JSON: question id, "
        "answer, people's verdict, field values) and report its agreement with the people",
        metavar="LABELS",
    ),
    Option(
        "min-judge-kappa",
        "With --karenina-judge-check: exit 0 only when Cohen's kappa of every judge against "
        "the labels is at least X (-1 to 1)",
        metavar="X",
    ),
    Option(
        "llm-timeout",
        "Seconds one LLM call may take in all, retries and waits included (default 600)",
        metavar="S",
    ),
    Option(
        "request-timeout", "Seconds one LLM request (attempt) may take (default 120)", metavar="S"
    ),
    Option("max-retries", "Retries per error class at most, for every LLM call", metavar="N"),
    Option(
        "template-timeout",
        "Seconds template code may run per step: compile, ground truth, verify() (default 10)",
        metavar="S",
    ),
    Option(
        "max-concurrent-requests",
        "Requests in flight per model, shared by the threads and split across xdist workers",
        metavar="N",
    ),
    Option(
        "requests-per-minute",
        "Request starts per minute per model, split across xdist workers",
        metavar="R",
    ),
    Option(
        "deep-judgment",
        "Template deep judgment: full (quote every attribute), reasoning_only, disabled",
        metavar="MODE",
        choices=get_args(DeepJudgmentMode),
    ),
    Option(
        "deep-judgment-rubric",
        "Rubric deep judgment: enable_all (every boolean and score LLM trait), "
        "use_checkpoint (the traits' own settings), custom (the preset's), disabled",
        metavar="MODE",
        choices=get_args(DeepJudgmentRubricMode),
    ),
    Option(
        "rubric-strategy",
        "LLM rubric traits in one judge call or one call per trait (default batch)",
        metavar="NAME",
        choices=get_args(RubricStrategy),
    ),
    Option(
        "rubric-gate",
        "template_and_rubric: also fail items whose gated rubric traits fail",
        "bool",
        "yes|no",
    ),
    Option(
        "rubric-gates",
        "Rubric gate rules, e.g. 'Completeness>=4, extraction.f1>=0.8, Clarity off' (repeatable)",
        "linelist",
        "RULES",
    ),
    Option(
        "rubric-score-threshold",
        "Share of a score trait's range it must reach to pass by default (0-1, default 0.5)",
        metavar="X",
    ),
)

OPTIONS: tuple[Option, ...] = CORE_OPTIONS + CI_OPTIONS


def add_options(parser: pytest.Parser) -> None:
    """Declare ``--karenina``, every ``--karenina-*`` flag and their ini twins."""
    group = parser.getgroup("karenina", "LLM benchmark verification (pytest-karenina)")
    group.addoption(
        "--karenina",
        action="append",
        default=[],
        dest="karenina_checkpoints",
        metavar="CHECKPOINT",
        help="Collect the questions of CHECKPOINT as test items (repeatable)",
    )
    add_ini_keys(parser)
    for option in OPTIONS:
        choices = f" ({'|'.join(option.choices)})" if option.choices else ""
        if option.kind == "linelist":
            group.addoption(
                option.flag,
                action="append",
                dest=option.dest,
                default=None,
                metavar=option.metavar,
                help=option.help,
            )
        elif option.kind == "bool":
            group.addoption(
                option.flag,
                dest=option.dest,
                default=None,
                nargs="?",
                const="yes",
                metavar=option.metavar,
                help=option.help,
            )
        else:
            group.addoption(
                option.flag,
                dest=option.dest,
                default=None,
                metavar=option.metavar,
                help=option.help + choices,
            )


def add_ini_keys(parser: pytest.Parser) -> None:
    """Declare every ``karenina_*`` ini key (also where the plugin is disabled, so that a
    configuration holding them still passes ``--strict-config``)."""
    parser.addini(
        "karenina_checkpoints",
        type="paths",
        default=[],
        help="Checkpoints to collect when neither --karenina nor test paths are given",
    )
    for option in OPTIONS:
        if option.kind == "linelist":
            parser.addini(option.dest, type="linelist", default=[], help=option.help)
        else:
            parser.addini(option.dest, type="string", default=None, help=option.help)
