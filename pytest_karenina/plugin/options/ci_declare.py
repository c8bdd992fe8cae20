"""The options of CI gating: baselines, cost, GitHub Actions output.

Imports only :mod:`.spec`: every pytest run of the environment loads this.
"""

from __future__ import annotations

from typing import Literal, get_args

from pytest_karenina.plugin.options.spec import Option

BaselineFailOn = Literal["regression", "likely"]
"""What fails the baseline gate besides errors and score drops: regressions, or likely
regressions too."""

GithubKnownFailures = Literal["notice", "error", "none"]
"""How GitHub output annotates a known failure (a failed question the baseline gate compared
and did not count against the run): a notice, an error, or not at all."""

CI_OPTIONS: tuple[Option, ...] = (
    Option(
        "baseline",
        "Baseline file of an accepted run: the gate then fails only on regressions",
        metavar="PATH",
    ),
    Option(
        "baseline-update",
        "Write the baseline from this run (refused after a partial run)",
        "bool",
        "yes|no",
    ),
    Option(
        "baseline-model",
        "Compare this run's model NEW with the baseline's model OLD (repeatable; the ini twin "
        "holds NEW=OLD lines); one model on each side pairs by itself",
        "linelist",
        "NEW=OLD",
    ),
    Option(
        "baseline-fail-on",
        "What fails the baseline gate besides errors and score drops: regression (default) "
        "or likely (likely regressions too)",
        metavar="WHAT",
        choices=get_args(BaselineFailOn),
    ),
    Option(
        "baseline-results",
        "The baseline run's results export (--karenina-results): each regression's row of "
        "the HTML report shows what changed since, side by side",
        metavar="PATH",
    ),
    Option(
        "score-tolerance",
        "How far a granular or rubric score may drop below the baseline (default 0)",
        metavar="X",
    ),
    Option(
        "changed-since",
        "Run only the questions changed since this git revision (and new ones)",
        metavar="REF",
    ),
    Option(
        "prices",
        "Price table file: model -> USD per million input and output tokens (repeatable; "
        "the ini twin holds MODEL = INPUT OUTPUT lines)",
        "linelist",
        "FILE",
    ),
    Option(
        "max-cost",
        "Stop starting questions once the spent and in-flight cost reaches USD (one at a "
        "time until a first cost is known)",
        metavar="USD",
    ),
    Option(
        "estimate",
        "Print the calls, tokens and cost a live run would make, from the replay store "
        "(calls it lacks: from their prompts and an assumed reply length); run nothing",
        "bool",
        "yes|no",
    ),
    Option(
        "estimate-answer-tokens",
        "With --karenina-estimate: the output tokens assumed for each answer the replay store "
        "has not recorded (default 300)",
        metavar="N",
    ),
    Option(
        "github",
        "GitHub Actions output: error annotations and a job summary (default: on when "
        "GITHUB_ACTIONS is true)",
        "bool",
        "yes|no",
    ),
    Option(
        "github-annotations",
        "At most this many error annotations (default 10)",
        metavar="N",
    ),
    Option(
        "github-known-failures",
        "How to annotate a failed question the baseline gate did not count against the run "
        "(it failed in the baseline too): notice (default), error or none",
        metavar="HOW",
        choices=get_args(GithubKnownFailures),
    ),
    Option(
        "history",
        "Append this run to a run-history file (JSON lines; the report and terminal show each "
        "question's last runs and each model's trends; pytest-karenina history prints it)",
        metavar="PATH",
    ),
    Option(
        "history-keep",
        "With --karenina-history: keep only the last N runs of this benchmark in the file",
        metavar="N",
    ),
)
