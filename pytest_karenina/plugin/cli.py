"""The ``pytest-karenina`` command: ``pytest-karenina merge OUT.json SHARD.json...`` and
``pytest-karenina history PATH``.

``merge`` combines the exports of shard runs into one export, prints the summary the plugin
prints (and a judge check's judge health), applies the same gates (pass rate, baseline, judge
kappa; by default with the settings the shards ran with) and exits with pytest's codes: 0
when everything passed or the gates passed, 1 otherwise (and for a merge missing shards), 4
for inputs or outputs it refuses, 5 when there is nothing.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, cast, get_args

import pytest

from pytest_karenina import __version__
from pytest_karenina.plugin.gates.baseline_gate import (
    BaselineGate,
    known_failures,
    partial_reason,
)
from pytest_karenina.plugin.gates.completeness import CostCapGate, IncompleteMergeGate
from pytest_karenina.plugin.gates.judge_kappa import JudgeKappaGate
from pytest_karenina.plugin.gates.pass_rate import PassRateGate
from pytest_karenina.plugin.gates.protocol import Gate, exit_status, run_lines
from pytest_karenina.plugin.options.ci_declare import BaselineFailOn, GithubKnownFailures
from pytest_karenina.plugin.options.ci_settings import (
    DEFAULT_ANNOTATIONS,
    CiSettings,
    parse_model_pairs,
)
from pytest_karenina.plugin.options.results_path import (
    BASELINE_MARKERS,
    EXPORT_MARKERS,
    OutputPathError,
    check_output_path,
)
from pytest_karenina.plugin.report.github import github_output
from pytest_karenina.plugin.report.history_command import (
    HistoryCommandError,
    append_merged,
    show_history,
)
from pytest_karenina.plugin.report.judge_health import JudgeHealth
from pytest_karenina.plugin.report.label_records import judge_health_of
from pytest_karenina.plugin.report.merge import Merged, MergeError, merge_shards, write_merged
from pytest_karenina.plugin.report.statements import plain_text
from pytest_karenina.plugin.report.summary import RunSummary

MODEL_GATES = (
    ("min_pass_rate", "--min-pass-rate"), ("gate_on", "--gate-on"), ("baseline", "--baseline"),
    ("baseline_model", "--baseline-model"), ("baseline_fail_on", "--baseline-fail-on"),
    ("score_tolerance", "--score-tolerance"),
)  # fmt: skip
"""The options of the gates that judge a model, by their argparse names: a judge check's
labels are no model's (its run does not apply them either)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(int(pytest.ExitCode.USAGE_ERROR), f"{self.prog}: error: {message}\n")


class _HelpFormatter(argparse.HelpFormatter):
    """Lists the commands one per line with their help, without argparse's extra line
    naming their metavar."""

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):
            return "".join(self._format_action(sub) for sub in action._get_subactions())
        return super()._format_action(action)


def _number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` to ``high`` (a NaN gate never fails)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            span = f"from {low:g} to {high:g}" if math.isfinite(high) else f"of at least {low:g}"
            raise argparse.ArgumentTypeError(f"expected a finite number {span}, got {text!r}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pytest-karenina",
        description="Commands around pytest-karenina runs. The benchmarks themselves run under "
        "pytest: pytest --karenina CHECKPOINT.jsonld (pytest --help lists the --karenina-* "
        "options).",
        epilog="pytest-karenina COMMAND --help shows a command's options.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help="print the version of pytest-karenina and exit",
    )
    # Not required: main names the commands when none is given.
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    merge = commands.add_parser(
        "merge", help="merge the results exports of shard runs into one export and gate it"
    )
    merge.add_argument("out", type=Path, metavar="OUT.json", help="the merged export")
    merge.add_argument("shards", type=Path, nargs="+", metavar="SHARD.json")
    merge.add_argument(
        "--min-pass-rate",
        type=_number(0.0, 1.0),
        metavar="R",
        help="pass-rate gate (default: the shards' setting)",
    )
    merge.add_argument(
        "--gate-on",
        choices=("point", "lower"),
        help="what the pass-rate gate compares (default: the shards' setting)",
    )
    merge.add_argument(
        "--baseline", type=Path, metavar="PATH", help="gate on regressions against this baseline"
    )
    merge.add_argument(
        "--baseline-update",
        action="store_true",
        help="write the baseline from the merged run (refused when partial)",
    )
    merge.add_argument(
        "--baseline-model",
        action="append",
        metavar="NEW=OLD",
        help="compare the run's model NEW with the baseline's model OLD (repeatable; default: "
        "the shards' setting)",
    )
    merge.add_argument(
        "--baseline-fail-on",
        choices=get_args(BaselineFailOn),
        help="whether likely regressions fail the baseline gate (default: the shards' setting)",
    )
    merge.add_argument(
        "--score-tolerance",
        type=_number(0.0, math.inf),
        metavar="X",
        help="how far a score may drop below the baseline",
    )
    merge.add_argument(
        "--min-judge-kappa",
        type=_number(-1.0, 1.0),
        metavar="X",
        help="the kappa gate of a judge check (default: the shards' setting)",
    )
    merge.add_argument(
        "--github",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="GitHub Actions annotations and job summary (default: on when GITHUB_ACTIONS is true)",
    )
    merge.add_argument(
        "--github-annotations",
        type=int,
        default=DEFAULT_ANNOTATIONS,
        metavar="N",
        help="at most this many error annotations",
    )
    merge.add_argument(
        "--github-known-failures",
        choices=get_args(GithubKnownFailures),
        default="notice",
        help="how to annotate a failed question the baseline gate did not count against the "
        "run: notice (default), error or none",
    )
    merge.add_argument(
        "--history", type=Path, metavar="PATH", help="append the merged run to this run history"
    )
    merge.add_argument(
        "--history-keep",
        type=_count,
        metavar="N",
        help="with --history: keep only the benchmark's last N runs",
    )
    history = commands.add_parser(
        "history", help="print a run history (--karenina-history): trends, failing and flaky items"
    )
    history.add_argument("path", type=Path, metavar="PATH", help="the history file")
    history.add_argument(
        "--checkpoint",
        metavar="NAME",
        help="the benchmark whose runs to show, by a checkpoint's file name (default: the "
        "benchmark of the last record)",
    )
    history.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def _count(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def _history(args: argparse.Namespace) -> int:
    try:
        show_history(args.path, args.checkpoint, args.json, sys.stdout)
    except HistoryCommandError as exc:
        sys.stderr.write(f"pytest-karenina history: {exc}\n")
        return int(pytest.ExitCode.USAGE_ERROR)
    return int(pytest.ExitCode.OK)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error(f"name a COMMAND: {', '.join(_commands(parser))} (see pytest-karenina --help)")
    if args.command == "history":
        return _history(args)
    if args.history_keep is not None and args.history is None:
        parser.error("--history-keep: name the file with --history")
    try:
        if args.baseline_update and args.baseline is None:
            raise MergeError("--baseline-update: name the file with --baseline")
        check_outputs(args.out, args.shards, args.baseline, args.baseline_update)
        merged = merge_shards(args.shards)
        health = judge_health_of(merged.run, merged.items)
        gates = _gates(args, merged, health)
    except (MergeError, OutputPathError, pytest.UsageError) as exc:
        sys.stderr.write(f"pytest-karenina merge: {exc}\n")
        return int(pytest.ExitCode.USAGE_ERROR)
    try:
        write_merged(merged, args.out)
    except OSError as exc:
        sys.stderr.write(f"pytest-karenina merge: cannot write {args.out}: {exc}\n")
        return int(pytest.ExitCode.INTERNAL_ERROR)
    summary, status = summarize(merged)
    selection = merged.run.get("selection") or {}
    partial = "; ".join(merged.incomplete) or partial_reason(summary, status, False, selection)
    if partial is None and selection.get("unchanged"):
        partial = "the shards ran only the changed questions (--karenina-changed-since)"
    status = exit_status(status, summary, partial, gates)
    out = sys.stdout
    out.write(
        f"pytest-karenina merge: {len(merged.inputs)} exports, {len(merged.items)} items, "
        f"{len(merged.results)} results -> {args.out}\n"
    )
    width = min(shutil.get_terminal_size((80, 24)).columns, 120)
    health_lines = health.lines() if health is not None else []
    for line in plain_text([*health_lines, *run_lines(summary, gates)], width):
        out.write(line + "\n")
    history: list[str] = []
    if args.history is not None:
        config = dict(merged.inputs[0].config or {})
        keeper = append_merged(
            args.history, args.history_keep, merged.run, config, merged.payloads, Path.cwd()
        )
        out.writelines(line.text + "\n" for line in keeper.lines())
        history = keeper.summary_lines()
    github = args.github if args.github is not None else os.environ.get("GITHUB_ACTIONS") == "true"
    if github:
        title = ", ".join(merged.run.get("checkpoints") or ()) or str(args.out.name)
        known = known_failures(gates, args.github_known_failures)
        limit = args.github_annotations
        for line in github_output(summary, title, status, limit, gates, known, history):
            out.write(line + "\n")
    return int(status)


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    """The names of the parser's commands."""
    return [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def _gates(args: argparse.Namespace, merged: Merged, health: JudgeHealth | None) -> list[Gate]:
    """The gates of the merged run, with the shards' settings unless the command overrides
    them, in the order the plugin asks them; a baseline that cannot be read, or a gate that
    does not apply to the shards (the kappa gate of a run that checked no judge, a model's
    gate of a judge check), is a usage error."""
    if health is None and args.min_judge_kappa is not None:
        raise MergeError(
            "--min-judge-kappa: the shards ran no judge check (--karenina-judge-check)"
        )
    given = [flag for name, flag in MODEL_GATES if getattr(args, name) is not None]
    if health is not None and given:
        raise MergeError(f"{given[0]}: the shards ran a judge check ({health.source}): the "
                         "pass-rate and baseline gates do not apply to labels")  # fmt: skip
    gates: list[Gate] = []
    threshold = (
        args.min_pass_rate if args.min_pass_rate is not None else merged.run.get("min_pass_rate")
    )
    if threshold is not None and health is None:
        on = args.gate_on or merged.run.get("gate_on") or "point"
        gates.append(PassRateGate(float(threshold), on))
    kappa = args.min_judge_kappa
    kappa = kappa if kappa is not None else merged.run.get("min_judge_kappa")
    if health is not None and kappa is not None:
        gates.append(JudgeKappaGate(float(kappa), health))
    if args.baseline is not None:
        models = sorted({p.answering_model or "?" for p in merged.payloads if p.question_id})
        settings = _ci_settings(args, merged)
        gates.append(BaselineGate(settings, run_models=models, where="--baseline-model"))
    return [*gates, CostCapGate(), IncompleteMergeGate(merged.incomplete)]


def check_outputs(out: Path, shards: Sequence[Path], baseline: Path | None, update: bool) -> None:
    """:class:`OutputPathError` when the merged export (or the baseline an update writes)
    would replace an input of the merge, the other output, a file of another kind, or
    something that is not a regular file."""
    inputs = [(shard, "an input of this merge") for shard in shards]
    others = [(baseline, "the --baseline file")] if baseline is not None else []
    check_output_path(out, "OUT.json", inputs + others, "results export", EXPORT_MARKERS)
    if update and baseline is not None:
        merged = [(out, "the merged export (OUT.json)")]
        check_output_path(baseline, "--baseline", inputs + merged, "baseline", BASELINE_MARKERS)


def _ci_settings(args: argparse.Namespace, merged: Merged) -> CiSettings:
    tolerance = args.score_tolerance
    if tolerance is None:
        tolerance = float(merged.run.get("score_tolerance") or 0.0)
    if args.baseline_model is not None:
        try:
            pairs = parse_model_pairs(args.baseline_model)
        except ValueError as exc:
            raise MergeError(f"--baseline-model: {exc}") from None
    else:
        pairs = tuple((new, old) for new, old in merged.run.get("baseline_models") or ())
    fail_on = args.baseline_fail_on or merged.run.get("baseline_fail_on") or "regression"
    return CiSettings(
        baseline=args.baseline,
        baseline_update=args.baseline_update,
        baseline_models=pairs,
        baseline_fail_on=cast("BaselineFailOn", fail_on),
        score_tolerance=tolerance,
        annotations=args.github_annotations,
    )


def summarize(merged: Merged) -> tuple[RunSummary, int]:
    """The run summary of the merged items, and pytest's exit status before any gate."""
    policy = merged.run.get("replicate_policy") or {}
    summary = RunSummary(
        pass_at=policy.get("k") if policy.get("kind") == "pass@" else None,
        compare_to=merged.run.get("compare_to"),
    )
    failed = False
    for record, payload in zip(merged.items, merged.payloads, strict=True):
        if record.get("reason") and payload.nodeid not in summary.payloads:
            summary.reasons[payload.nodeid] = str(record["reason"])
        summary.add(payload)
        failed = failed or record.get("outcome") == "failed"
    summary.skipped = set(merged.run.get("skipped") or ())
    summary.other_failures = int(merged.run.get("other_failures") or 0)
    summary.cost.capped = int(merged.run.get("cost_capped") or 0)
    if not merged.items and not summary.skipped:
        return summary, int(pytest.ExitCode.NO_TESTS_COLLECTED)
    failed = failed or summary.other_failures > 0
    return summary, int(pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
